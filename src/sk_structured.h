/*
** sk_structured.h — structured ops defined at run time, as boxed kernels
** The same steps the generated wrappers take, driven by data: meta
** declares outputs through an SkMeta, the impl of the dispatch key fills
** them; functional allocates, in-place checks self, out resizes an empty
** out; versions are bumped and failures release what was made.
** DefaultBackend variants call the out op through the dispatcher, so a
** backend that implements only the out op gets the other two.
*/
#ifndef SK_STRUCTURED_H
#define SK_STRUCTURED_H

#include "sk_dispatch.h"
#include "sk_meta.h"

/* args: the op's non-out arguments. */
typedef int (*SkStructuredMetaFn)(SkMeta *m, const SkValue *args, int nargs, void *ud);
/* outs: the outputs meta declared, already allocated/checked. */
typedef int (*SkStructuredImplFn)(SkMeta *m, const SkValue *args, int nargs, SkTensor *const *outs, int nouts, void *ud);

/* Shared by the kernels of one structured family; refcounted by its kernels. */
typedef struct SkStructuredFamily {
  int refcount;
  SkOperator *out_op;
  int nouts;
  SkStructuredMetaFn meta;
  void *meta_ud;
  SkStructuredImplFn impl[SK_KEY_NUM_RUNTIME]; /* per backend key; NULL = none */
  void *impl_ud[SK_KEY_NUM_RUNTIME];
  void (*release)(struct SkStructuredFamily *f); /* frees the uds when the last kernel goes */
} SkStructuredFamily;

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

#endif
