/*
** sk_meta_pointwise.c — meta functions of the pointwise ops (TensorIteratorBase)
** Each builds the iterator the generated wrapper attached to m->iter, after
** PyTorch's argument checks; checks that depend on the computation dtype
** (alpha) run after the build, when m->iter->common_dtype is known.
*/
#include "sk_kernels.h"
#include "sk_error.h"

#include <string.h>

/* {==== Binary ==== */
/* PyTorch's alpha_check. */
static int alpha_check(SkDType dt, SkScalar alpha) {
  if (alpha.kind == SK_SCALAR_BOOL && dt != SK_DTYPE_BOOL)
    return sk_error("Boolean alpha only supported for Boolean results.");
  if (alpha.kind == SK_SCALAR_FLOAT && !sk_dtype_is_floating(dt))
    return sk_error("For integral input tensors, argument alpha must not be a floating point number.");
  return 0;
}

int sk_meta_add(SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha) {
  if (sk_iter_binary_op(m, self, other)) return -1;
  return alpha_check(m->iter->common_dtype, alpha);
}

int sk_meta_sub(SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha) {
  if (self->dtype == SK_DTYPE_BOOL && other->dtype == SK_DTYPE_BOOL)
    return sk_error("Subtraction, the `-` operator, with two bool tensors is not supported. "
                    "Use the `^` or `logical_xor()` operator instead.");
  if (self->dtype == SK_DTYPE_BOOL || other->dtype == SK_DTYPE_BOOL)
    return sk_error("Subtraction, the `-` operator, with a bool tensor is not supported. "
                    "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  if (sk_iter_binary_op(m, self, other)) return -1;
  return alpha_check(m->iter->common_dtype, alpha);
}

int sk_meta_mul(SkMeta *m, const SkTensor *self, const SkTensor *other) { return sk_iter_binary_op(m, self, other); }

int sk_meta_div(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return sk_iter_binary_float_op(m, self, other);
}

int sk_meta_div_mode(SkMeta *m, const SkTensor *self, const SkTensor *other, const char *rounding_mode) {
  if (!rounding_mode) return sk_iter_binary_float_op(m, self, other);
  if (strcmp(rounding_mode, "trunc") != 0 && strcmp(rounding_mode, "floor") != 0)
    return sk_error("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", rounding_mode);
  return sk_iter_binary_op(m, self, other);
}

int sk_meta_remainder_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return sk_iter_binary_op(m, self, other);
}

int sk_meta_pow_Tensor_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *exponent) {
  static const char *const names[] = {"self", "exponent"};
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, exponent};
  return sk_iter_build(m->iter, m, &c, 1, 2, in, names);
}
/* }==== */

/* {==== Comparison ==== */
int sk_meta_eq_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) { return sk_iter_comparison_op(m, self, other); }
int sk_meta_ne_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) { return sk_iter_comparison_op(m, self, other); }
int sk_meta_lt_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) { return sk_iter_comparison_op(m, self, other); }
int sk_meta_le_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) { return sk_iter_comparison_op(m, self, other); }
int sk_meta_gt_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) { return sk_iter_comparison_op(m, self, other); }
int sk_meta_ge_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) { return sk_iter_comparison_op(m, self, other); }
/* }==== */

/* {==== Unary ==== */
int sk_meta_neg(SkMeta *m, const SkTensor *self) {
  if (self->dtype == SK_DTYPE_BOOL)
    return sk_error("Negation, the `-` operator, on a bool tensor is not supported. "
                    "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return sk_iter_unary_op(m, self);
}

int sk_meta_abs(SkMeta *m, const SkTensor *self) { return sk_iter_unary_op(m, self); }
int sk_meta_exp(SkMeta *m, const SkTensor *self) { return sk_iter_unary_float_op(m, self); }
int sk_meta_log(SkMeta *m, const SkTensor *self) { return sk_iter_unary_float_op(m, self); }
int sk_meta_sqrt(SkMeta *m, const SkTensor *self) { return sk_iter_unary_float_op(m, self); }
int sk_meta_tanh(SkMeta *m, const SkTensor *self) { return sk_iter_unary_float_op(m, self); }
int sk_meta_sigmoid(SkMeta *m, const SkTensor *self) { return sk_iter_unary_float_op(m, self); }

/* The bounds join the iterator as wrapped numbers, so that they take part in type
** promotion as PyTorch's clamp does (int tensor, float bound -> float32); the kernel
** reads them back, cast to the compute dtype, from operands 2 and 3. */
int sk_meta_clamp(SkMeta *m, const SkTensor *self, SkScalar min, SkScalar max) {
  if (min.kind == SK_SCALAR_NONE && max.kind == SK_SCALAR_NONE)
    return sk_error("torch.clamp: At least one of 'min' or 'max' must not be None");
  const SkScalar bounds[2] = {min, max};
  static const char *const bound_names[2] = {"min", "max"};
  const SkTensor *in[3] = {self};
  const char *names[3] = {"self"};
  SkTensor *wrapped[2] = {NULL, NULL};
  int n = 1, rc = 0;
  for (int i = 0; i < 2; i++) {
    if (bounds[i].kind == SK_SCALAR_NONE) continue;
    if (!(wrapped[i] = sk_tensor_wrap_number(bounds[i]))) { rc = -1; break; }
    in[n] = wrapped[i];
    names[n++] = bound_names[i];
  }
  if (!rc) {
    SkIterConfig c = sk_iter_config();
    rc = sk_iter_build(m->iter, m, &c, 1, n, in, names);
  }
  for (int i = 0; i < 2 && !rc; i++) rc = sk_scalar_check(bounds[i], m->iter->common_dtype); /* stored in that dtype */
  sk_tensor_release(wrapped[0]);
  sk_tensor_release(wrapped[1]);
  return rc;
}
/* }==== */

/* where: self and other promote together; the condition stays bool. */
int sk_meta_where_self(SkMeta *m, const SkTensor *condition, const SkTensor *self, const SkTensor *other) {
  if (condition->dtype != SK_DTYPE_BOOL)
    return sk_error("where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                    sk_dtype_name(condition->dtype));
  SkIterConfig cfg = sk_iter_config();
  cfg.keep_dtype_mask = 1;
  const SkTensor *in[3] = {condition, self, other};
  static const char *const names[3] = {"condition", "self", "other"};
  return sk_iter_build(m->iter, m, &cfg, 1, 3, in, names);
}
