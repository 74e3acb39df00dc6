/*
** sk_meta.h — the structured-kernel runtime: the meta context
** A meta function checks arguments and declares each output with
** sk_meta_set_output(). What that does depends on the variant:
** functional allocates, in-place checks the output matches self, out
** checks dtype and device and resizes an out with 0 elements.
** With `compute` off (Meta and DefaultBackend wrappers) nothing beyond
** shapes and dtypes is prepared; no impl follows.
*/
#ifndef SK_META_H
#define SK_META_H

#include "sk_value.h"

#define SK_MAX_OUTPUTS 4
#define SK_META_MAX_INPUTS 8
#define SK_META_MAX_LISTS 2

typedef enum { SK_VARIANT_FUNCTIONAL, SK_VARIANT_INPLACE, SK_VARIANT_OUT } SkVariant;

struct SkTensorIter;

typedef struct SkMeta {
  const char *op;                      /* for messages */
  SkVariant variant;
  int compute;
  SkDevice device;                     /* where functional outputs live */
  int noutputs;
  SkTensor *outputs[SK_MAX_OUTPUTS];   /* functional: owned; in-place/out: the caller's */
  const char *out_names[SK_MAX_OUTPUTS];
  struct SkTensorIter *iter;           /* for ops built on TensorIterator */
  void *pre;                           /* boxed built-in meta functions: their precomputed fields */
  /* What the op reads, for the checks on what it writes (sk_meta_set_inputs). */
  int ninputs, nlists;
  int alias_ok;                        /* an output may be the very view of an input (elementwise ops) */
  const SkTensor *inputs[SK_META_MAX_INPUTS];
  const char *in_names[SK_META_MAX_INPUTS];
  SkTensorList lists[SK_META_MAX_LISTS];
  const char *list_names[SK_META_MAX_LISTS];
  /* Geometry of outs resized by set_output, put back if the call fails. */
  unsigned resized;
  struct { int ndim; int64_t numel, sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS]; } saved[SK_MAX_OUTPUTS];
} SkMeta;

void sk_meta_init(SkMeta *m, const char *op, SkVariant v, SkDevice device, int compute, int noutputs);
/* The caller's output i for in-place/out, or the output set so far, or NULL. */
static inline SkTensor *sk_meta_maybe_output(const SkMeta *m, int i) { return m->outputs[i]; }
/* The tensors the op reads (an in-place self left out), and up to two tensor lists. */
static inline void sk_meta_set_inputs(SkMeta *m, int n, const SkTensor *const *ts, const char *const *names) {
  for (int i = 0; i < n && m->ninputs < SK_META_MAX_INPUTS; i++)
    if (ts[i]) { m->inputs[m->ninputs] = ts[i]; m->in_names[m->ninputs++] = names[i]; }
}
static inline void sk_meta_add_input_list(SkMeta *m, SkTensorList l, const char *name) {
  if (m->nlists < SK_META_MAX_LISTS) { m->lists[m->nlists] = l; m->list_names[m->nlists++] = name; }
}
/* PyTorch's rules for a tensor an op writes, in one place: no internal overlap
** (an expanded dim); no memory shared with an input, except the very same view
** when alias_ok (elementwise ops); and an out to be resized shares no storage
** with an input (resizing would move the input's data under the kernel). */
int sk_check_written(const SkTensor *w, const char *wname, int resizing, int n, const SkTensor *const *in,
                     const char *const *names, int alias_ok);
int sk_check_written_list(const SkTensor *w, const char *wname, int resizing, SkTensorList l, const char *name, int alias_ok);
/* strides may be NULL (contiguous). For in-place and out, the written checks run here. */
int sk_meta_set_output(SkMeta *m, int i, int ndim, const int64_t *sizes, const int64_t *strides, SkDType dtype);
/* After the impl: write back iterator temporaries, bump versions of what was written. */
int sk_meta_finish(SkMeta *m);
/* Always last: releases temporaries, and on failure what a functional call allocated. */
void sk_meta_cleanup(SkMeta *m, int failed);
/* Takes the functional outputs (the context no longer owns them). */
SkTensor *sk_meta_take_output(SkMeta *m, int i);
/* The device of the first defined tensor among ts, else fallback. */
SkDevice sk_meta_device_of(int n, const SkTensor *const *ts, SkDevice fallback);
/* The same over a list of tensors (cat's `tensors`): the first device, and the check. */
SkDevice sk_meta_device_of_list(SkTensorList l, SkDevice fallback);
int sk_meta_check_list_device(const char *op, SkDevice d, SkTensorList l, const char *name);
/* Checks that every defined tensor in ts is on device d. */
int sk_meta_check_same_device(const char *op, SkDevice d, int n, const SkTensor *const *ts, const char *const *names);

#endif
