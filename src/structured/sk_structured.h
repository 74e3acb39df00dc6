/*
** sk_structured.h — the structured runtime: one set of steps for every structured op
** A structured call is: begin (device choice and check, outputs, inputs,
** device guard), the meta function, the kernel (or, for DefaultBackend, the
** out op through the dispatcher), end (write-back, version bumps, guard exit,
** cleanup). Generated wrappers and ops defined with lib:structured run these
** same two functions over the same descriptor, built from the op's schema by
** sk_structured_desc_init; only how meta and kernel are called differs (typed
** C calls, or boxed functions over the argument values).
*/
#ifndef SK_STRUCTURED_H
#define SK_STRUCTURED_H

#include "sk_dispatch.h"
#include "sk_error.h"
#include "sk_iter.h"
#include "sk_meta.h"

#define SK_ALWAYS_INLINE __attribute__((always_inline))
#define SK_STRUCTURED_MAX_TENSORS (SK_META_MAX_INPUTS + SK_MAX_OUTPUTS)

/* What the steps need to know of one op (one variant of a family). */
typedef struct SkStructuredDesc {
  const char *name;                     /* op name, for messages */
  SkVariant variant;
  int nouts;                            /* outputs the meta function declares */
  int nargs, nin;                       /* all arguments; those before the outs */
  int device_check;                     /* 0: the op's device_check is NoCheck */
  int ntensors, nlists;                 /* Tensor and Tensor? arguments; Tensor[] arguments (schema order) */
  short tensor_arg[SK_STRUCTURED_MAX_TENSORS], list_arg[SK_META_MAX_LISTS];
  const char *tensor_names[SK_STRUCTURED_MAX_TENSORS], *list_names[SK_META_MAX_LISTS];
  short out_tensor[SK_MAX_OUTPUTS];     /* index in the tensors of each written tensor (out: the outs; in-place: self) */
  int nreads;                           /* the tensors it does not write, for the write checks */
  short in_tensor[SK_STRUCTURED_MAX_TENSORS];
} SkStructuredDesc;

/* Fills d from the schema of a structured op; an error names the op and the limit. */
int sk_structured_desc_init(SkStructuredDesc *d, const SkSchema *s, int device_check);

typedef struct SkStructuredCall {
  SkMeta m;
  SkDeviceGuard guard;
  int key;
} SkStructuredCall;

/* ts: the tensor arguments (NULL for an absent Tensor?), ls: the list arguments,
** both in desc order; it: an iterator for ops built on TensorIterator, else NULL.
** On failure the call still needs sk_structured_end (it releases nothing yet).
** Inline: in a generated wrapper the key is a constant, so its branches fold. */
static inline SK_ALWAYS_INLINE int sk_structured_begin(SkStructuredCall *c, const SkStructuredDesc *d, int key, const SkTensor *const *ts,
                                      const SkTensorList *ls, struct SkTensorIter *it) {
  /* the device: Meta's, the CPU's, else the first tensor's (a CPU scalar only when nothing else decides) */
  SkDevice dev = key == SK_KEY_META ? SK_META : SK_CPU;
  if (key != SK_KEY_META && key != SK_KEY_CPU) {
    for (int i = d->nlists - 1; i >= 0; i--) dev = sk_meta_device_of_list(ls[i], dev);
    dev = sk_meta_device_of(d->ntensors, ts, dev);
  }
  c->key = key;
  c->guard.active = 0;
  SkMeta *m = &c->m;
  sk_meta_init(m, d->name, d->variant, dev, sk_key_is_backend(key) && key != SK_KEY_META, d->nouts);
  if (it) sk_meta_use_iter(m, it);
  if (d->variant != SK_VARIANT_FUNCTIONAL) {
    /* what the variant writes is a tensor the caller gave (an optional out left None is not one) */
    for (int k = 0; k < d->nouts; k++) {
      int i = d->out_tensor[k];
      if (!ts[i]) return sk_error("argument '%s' must be a tensor to write into", d->tensor_names[i]);
      m->outputs[k] = (SkTensor *)ts[i]; /* written: the caller passed it as Tensor(a!) */
      m->out_names[k] = d->tensor_names[i];
    }
    /* what it reads, for the checks on what it writes (DefaultBackend's out op makes its own) */
    if (key != SK_KEY_DEFAULT_BACKEND) {
      for (int k = 0; k < d->nreads; k++) sk_meta_set_inputs(m, 1, &ts[d->in_tensor[k]], &d->tensor_names[d->in_tensor[k]]);
      for (int i = 0; i < d->nlists; i++) sk_meta_add_input_list(m, ls[i], d->list_names[i]);
    }
  }
  if (d->device_check) {
    if (sk_meta_check_same_device(d->name, dev, d->ntensors, ts, d->tensor_names)) return -1;
    for (int i = 0; i < d->nlists; i++)
      if (sk_meta_check_list_device(d->name, dev, ls[i], d->list_names[i])) return -1;
  }
  return dev.type == SK_DEVICE_CPU ? 0 : sk_device_guard_enter(&c->guard, dev);
}

/* rc: the result of meta and kernel. Finishes a successful compute (not for
** DefaultBackend, whose out op finished), exits the guard, cleans up. */
static inline SK_ALWAYS_INLINE int sk_structured_end(SkStructuredCall *c, int rc) {
  if (!rc && c->key != SK_KEY_DEFAULT_BACKEND) rc = sk_meta_finish(&c->m);
  sk_device_guard_exit(&c->guard);
  sk_meta_cleanup(&c->m, rc != 0);
  return rc;
}

/* {==== Families defined at run time (lib:structured), run as boxed kernels ==== */
/* args: the op's non-out arguments. */
typedef int (*SkStructuredMetaFn)(SkMeta *m, const SkValue *args, int nargs, void *ud);
/* outs: the outputs meta declared, already allocated/checked. */
typedef int (*SkStructuredImplFn)(SkMeta *m, const SkValue *args, int nargs, SkTensor *const *outs, int nouts, void *ud);

/* Shared by the kernels of one structured family; refcounted by its kernels. */
typedef struct SkStructuredFamily {
  int refcount;
  SkOperator *out_op;
  SkStructuredDesc desc[3];                    /* per SkVariant */
  int iter;                                    /* meta builds a TensorIterator (built-in meta functions) */
  size_t pre_size;                             /* bytes of the meta function's precomputed fields */
  SkStructuredMetaFn meta;
  void *meta_ud;
  SkStructuredImplFn impl[SK_KEY_NUM_RUNTIME]; /* per backend key; NULL = none */
  void *impl_ud[SK_KEY_NUM_RUNTIME];
  void (*release)(struct SkStructuredFamily *f); /* frees the uds when the last kernel goes */
} SkStructuredFamily;

/* Largest precomputed struct a boxed built-in meta function may fill (checked by codegen). */
#define SK_STRUCTURED_PRE_MAX 256

/* The kernel of one (variant, key): ctx of sk_structured_boxed. */
typedef struct SkStructuredKernel {
  SkStructuredFamily *family;
  int key;          /* a backend key, SK_KEY_META, or SK_KEY_DEFAULT_BACKEND */
  SkVariant variant;
} SkStructuredKernel;

int sk_structured_boxed(SkOperator *op, SkStack *s, void *ctx);
/* Makes the ctx for (family, key, variant); freed by sk_structured_kernel_free. */
SkStructuredKernel *sk_structured_kernel_new(SkStructuredFamily *f, int key, SkVariant v);
void sk_structured_kernel_free(void *ctx);

/* Runs a meta function alone for op on the Meta device: the Meta kernel of
** an op that has a meta function but no structured family. */
int sk_structured_run_meta(SkOperator *op, SkStack *s, SkStructuredMetaFn meta, void *ud);

/* The built-in meta function and CPU kernel of a generated structured out op,
** as boxed functions, for re-declaring it at run time (sk_structured_builtin() in the generated sk_kernels.h). */
typedef struct SkStructuredBuiltin {
  const char *qualname;                 /* "aten::add.out" */
  SkStructuredMetaFn meta;
  SkStructuredImplFn cpu;
  size_t pre_size;
  int iter;
} SkStructuredBuiltin;
/* }==== */

#endif
