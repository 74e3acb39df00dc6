/*
** sk_meta_unary.c — meta functions of the unary pointwise ops added after
** the first seven (those stay in sk_meta_pointwise.c)
** Float-valued functions promote integer and bool inputs to float32
** (PyTorch's unary_float_op); sign, rounding, gelu (and gelu_backward), silu, frac, nan_to_num
** and bitwise_not keep the input's dtype (unary_op), and their kernels
** refuse the dtypes PyTorch's do. square types like pow(self, 2): bool
** becomes int64. logical_not writes bool from an input it never casts.
** sk's unary_op casts into an out of another dtype where the cast is safe,
** where PyTorch's UNARY_OP_CONFIG wants the out's dtype to be the input's.
*/
#include "sk_kernels.h"
#include "sk_error.h"

#include <string.h>

/* {==== Float-valued functions ==== */
#define UNARY_FLOAT_META(op) \
  int sk_meta_##op(SkMeta *m, const SkTensor *self) { return sk_iter_unary_float_op(m, self); }
UNARY_FLOAT_META(exp2)
UNARY_FLOAT_META(expm1)
UNARY_FLOAT_META(log2)
UNARY_FLOAT_META(log10)
UNARY_FLOAT_META(log1p)
UNARY_FLOAT_META(rsqrt)
UNARY_FLOAT_META(reciprocal)
UNARY_FLOAT_META(sin)
UNARY_FLOAT_META(cos)
UNARY_FLOAT_META(tan)
UNARY_FLOAT_META(asin)
UNARY_FLOAT_META(acos)
UNARY_FLOAT_META(atan)
UNARY_FLOAT_META(sinh)
UNARY_FLOAT_META(cosh)
UNARY_FLOAT_META(asinh)
UNARY_FLOAT_META(acosh)
UNARY_FLOAT_META(atanh)
UNARY_FLOAT_META(erf)
UNARY_FLOAT_META(erfc)
/* }==== */

/* {==== Dtype-keeping functions ==== */
#define UNARY_META(op) \
  int sk_meta_##op(SkMeta *m, const SkTensor *self) { return sk_iter_unary_op(m, self); }
UNARY_META(sign)
UNARY_META(silu)
UNARY_META(floor)
UNARY_META(ceil)
UNARY_META(trunc)
UNARY_META(round)
UNARY_META(frac)
UNARY_META(bitwise_not)

int sk_meta_round_decimals(SkMeta *m, const SkTensor *self, int64_t decimals) {
  (void)decimals;
  return sk_iter_unary_op(m, self);
}

/* Checked here rather than in the kernel (as PyTorch does), so Meta tensors get the error too. */
static int check_gelu_approximate(const char *approximate) {
  if (!approximate || (strcmp(approximate, "none") != 0 && strcmp(approximate, "tanh") != 0))
    return sk_error("approximate argument must be either none or tanh.");
  return 0;
}

int sk_meta_gelu(SkMeta *m, const SkTensor *self, const char *approximate) {
  return check_gelu_approximate(approximate) ? -1 : sk_iter_unary_op(m, self);
}

/* PyTorch's gelu_backward meta: a binary op over (grad_output, self). */
int sk_meta_gelu_backward_grad_input(SkMeta *m, const SkTensor *grad_output, const SkTensor *self,
                                     const char *approximate) {
  static const char *const names[] = {"grad_output", "self"};
  const SkTensor *in[] = {grad_output, self};
  SkIterConfig c = sk_iter_config();
  return check_gelu_approximate(approximate) ? -1 : sk_iter_build(m->iter, m, &c, 1, 2, in, names);
}

/* PyTorch's nan_to_num_out: the out must have self's dtype; integers are copied. */
int sk_meta_nan_to_num(SkMeta *m, const SkTensor *self, SkOptDouble nan, SkOptDouble posinf, SkOptDouble neginf) {
  (void)nan; (void)posinf; (void)neginf;
  const SkTensor *out = sk_meta_maybe_output(m, 0);
  if (out && out->dtype != self->dtype)
    return sk_error("dtype of out: %s should be same as input: %s", sk_dtype_name(out->dtype),
                    sk_dtype_name(self->dtype));
  return sk_iter_unary_op(m, self);
}

/* pow(self, 2)'s typing: self with a wrapped int 2 (bool -> int64); the kernel reads operands 0 and 1. */
int sk_meta_square(SkMeta *m, const SkTensor *self) {
  static const char *const names[] = {"self", "exponent"};
  SkTensor *two = sk_tensor_wrap_number(sk_scalar_int(2));
  if (!two) return -1;
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, two};
  int rc = sk_iter_build(m->iter, m, &c, 1, 2, in, names);
  sk_tensor_release(two);
  return rc;
}
/* }==== */

/* Any input dtype, read as it is; a bool result, cast into an out of another dtype. */
int sk_meta_logical_not(SkMeta *m, const SkTensor *self) {
  static const char *const names[] = {"self"};
  SkIterConfig c = sk_iter_config();
  c.bool_output = 1;
  c.keep_dtype_mask = 1;
  return sk_iter_build(m->iter, m, &c, 1, 1, &self, names);
}
