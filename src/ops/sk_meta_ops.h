/*
** sk_meta_ops.h — meta (shape and dtype) functions of the structured ops
** Prototypes follow the codegen convention: sk_meta_<name>[_<overload>](SkMeta *m,
** <non-out arguments in schema order>). A meta function validates, then
** declares each output through sk_meta_set_output() or, for ops that inherit
** TensorIteratorBase, builds the iterator the wrapper attached to m->iter.
** It never touches data: it also serves the Meta backend (m->compute off).
*/
#ifndef SK_META_OPS_H
#define SK_META_OPS_H

#include "sk_iter.h"
#include "sk_meta.h"
#include "sk_value.h"

/* {==== Pointwise (sk_meta_pointwise.c) ==== */
int sk_meta_add(SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha);
int sk_meta_sub(SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha);
int sk_meta_mul(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_div(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_div_mode(SkMeta *m, const SkTensor *self, const SkTensor *other, const char *rounding_mode);
int sk_meta_remainder_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_pow_Tensor_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *exponent);
int sk_meta_eq_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_ne_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_lt_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_le_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_gt_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_ge_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other);
int sk_meta_neg(SkMeta *m, const SkTensor *self);
int sk_meta_abs(SkMeta *m, const SkTensor *self);
int sk_meta_exp(SkMeta *m, const SkTensor *self);
int sk_meta_log(SkMeta *m, const SkTensor *self);
int sk_meta_sqrt(SkMeta *m, const SkTensor *self);
int sk_meta_tanh(SkMeta *m, const SkTensor *self);
int sk_meta_sigmoid(SkMeta *m, const SkTensor *self);
int sk_meta_clamp(SkMeta *m, const SkTensor *self, SkScalar min, SkScalar max);
/* }==== */

/* {==== Reductions (sk_meta_reduce.c) ==== */
int sk_meta_sum_IntList(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int dtype);
int sk_meta_mean(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int dtype);
int sk_meta_amax(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim);
int sk_meta_argmax(SkMeta *m, const SkTensor *self, SkOptInt dim, int keepdim);
/* }==== */

/* {==== Linear algebra (sk_meta_linalg.c) ==== */
int sk_meta_mm(SkMeta *m, const SkTensor *self, const SkTensor *mat2);
int sk_meta_bmm(SkMeta *m, const SkTensor *self, const SkTensor *mat2);
int sk_meta_addmm(SkMeta *m, const SkTensor *self, const SkTensor *mat1, const SkTensor *mat2, SkScalar beta, SkScalar alpha);
/* }==== */

#endif
