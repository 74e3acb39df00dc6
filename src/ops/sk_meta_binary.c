/*
** sk_meta_binary.c — meta functions of the binary family (TensorIteratorBase):
** fmod, atan2, hypot, maximum, minimum, logical_*, bitwise_*, the shifts,
** the Scalar comparisons, lerp, addcmul, addcdiv and the clamps by tensors
** Each builds the iterator the generated wrapper attached to m->iter, after
** PyTorch's argument checks. A Scalar argument joins the iterator as a
** wrapped number, so it promotes as in PyTorch. Dtypes a kernel lacks are
** refused here, once the common dtype is known, with PyTorch's message and
** the argument that brought the dtype in: Meta tensors fail as CPU ones do
** (PyTorch's meta functions let them through).
*/
#include "sk_kernels.h"
#include "sk_error.h"

/* {==== Helpers ==== */
enum { ALLOW_BOOL = 1, ALLOW_INT = 2, ALLOW_FLOAT = 4, ALLOW_ALL = 7 };

static int allowed(SkDType t, int mask) {
  if (t == SK_DTYPE_BOOL) return mask & ALLOW_BOOL;
  return sk_dtype_is_floating(t) ? mask & ALLOW_FLOAT : mask & ALLOW_INT;
}

/* Refuses the iterator's common dtype unless `mask` allows it; the message
** names the first input of that dtype's category (the one that brought it in). */
static int check_common(const SkMeta *m, const char *kname, int mask, int n, const SkTensor *const *in,
                        const char *const *names) {
  SkDType dt = m->iter->common_dtype;
  if (allowed(dt, mask)) return 0;
  int who = 0;
  for (int i = n - 1; i >= 0; i--)
    if (in[i] && sk_dtype_category(in[i]->dtype) == sk_dtype_category(dt)) who = i;
  return sk_error("\"%s\" not implemented for '%s' (argument '%s' has dtype %s)", kname, sk_dtype_torch_name(dt), names[who],
                  sk_dtype_name(in[who]->dtype));
}

/* Builds over n inputs with the standard configuration, then checks the dtype. */
static int build(SkMeta *m, const SkIterConfig *c, int n, const SkTensor *const *in, const char *const *names,
                 const char *kname, int mask) {
  if (sk_iter_build(m->iter, m, c, 1, n, in, names)) return -1;
  return check_common(m, kname, mask, n, in, names);
}

static const char *const self_other[] = {"self", "other"};

static int binary(SkMeta *m, const SkTensor *self, const SkTensor *other, const char *kname, int mask) {
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, other};
  return build(m, &c, 2, in, self_other, kname, mask);
}

/* self op other, with other a Scalar as a wrapped number (PyTorch's wrapped_scalar_tensor). */
static int binary_scalar(SkMeta *m, const SkTensor *self, SkScalar other, const char *const *names, const char *kname,
                         int mask, int bool_output) {
  SkTensor *w = sk_tensor_wrap_number(other);
  if (!w) return -1;
  SkIterConfig c = sk_iter_config();
  c.bool_output = bool_output;
  const SkTensor *in[] = {self, w};
  int rc = build(m, &c, 2, in, names, kname, mask);
  sk_tensor_release(w);
  return rc;
}
/* }==== */

/* {==== Arithmetic ==== */
int sk_meta_fmod_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "fmod_cpu", ALLOW_INT | ALLOW_FLOAT);
}

int sk_meta_atan2(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return sk_iter_binary_float_op(m, self, other);
}

int sk_meta_hypot(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "hypot_cpu", ALLOW_FLOAT);
}

int sk_meta_maximum(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "maximum_cpu", ALLOW_ALL);
}

int sk_meta_minimum(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "minimum_cpu", ALLOW_ALL);
}
/* }==== */

/* {==== Logical and bitwise ==== */
/* Any input dtypes; the result is bool (or the dtype of a given out / self). */
int sk_meta_logical_and(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return sk_iter_comparison_op(m, self, other);
}
int sk_meta_logical_or(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return sk_iter_comparison_op(m, self, other);
}
int sk_meta_logical_xor(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return sk_iter_comparison_op(m, self, other);
}

int sk_meta_bitwise_and_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "bitwise_and_cpu", ALLOW_BOOL | ALLOW_INT);
}
int sk_meta_bitwise_or_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "bitwise_or_cpu", ALLOW_BOOL | ALLOW_INT);
}
int sk_meta_bitwise_xor_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "bitwise_xor_cpu", ALLOW_BOOL | ALLOW_INT);
}

/* Integers only, as PyTorch (bool shifts are refused). */
int sk_meta_bitwise_left_shift_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "lshift_cpu", ALLOW_INT);
}
int sk_meta_bitwise_right_shift_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *other) {
  return binary(m, self, other, "rshift_cpu", ALLOW_INT);
}
/* }==== */

/* {==== Comparisons with a Scalar ==== */
#define CMP_SCALAR_META(op)                                                      \
  int sk_meta_##op##_Scalar(SkMeta *m, const SkTensor *self, SkScalar other) {   \
    return binary_scalar(m, self, other, self_other, #op "_cpu", ALLOW_ALL, 1); \
  }
CMP_SCALAR_META(eq)
CMP_SCALAR_META(ne)
CMP_SCALAR_META(lt)
CMP_SCALAR_META(le)
CMP_SCALAR_META(gt)
CMP_SCALAR_META(ge)
#undef CMP_SCALAR_META
/* }==== */

/* {==== lerp, addcmul, addcdiv ==== */
static int same_dtype(const SkTensor *self, const SkTensor *t, const char *name) {
  if (self->dtype != t->dtype)
    return sk_error("expected dtype %s for `%s` but got dtype %s", sk_dtype_name(self->dtype), name, sk_dtype_name(t->dtype));
  return 0;
}

int sk_meta_lerp_Scalar(SkMeta *m, const SkTensor *self, const SkTensor *end, SkScalar weight) {
  (void)weight;
  static const char *const names[] = {"self", "end"};
  if (same_dtype(self, end, "end")) return -1;
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, end};
  return build(m, &c, 2, in, names, "lerp_kernel_scalar", ALLOW_FLOAT);
}

int sk_meta_lerp_Tensor(SkMeta *m, const SkTensor *self, const SkTensor *end, const SkTensor *weight) {
  static const char *const names[] = {"self", "end", "weight"};
  if (same_dtype(self, end, "end") || same_dtype(self, weight, "weight")) return -1;
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, end, weight};
  return build(m, &c, 3, in, names, "lerp_kernel_tensor", ALLOW_FLOAT);
}

static const char *const addc_names[] = {"self", "tensor1", "tensor2"};

int sk_meta_addcmul(SkMeta *m, const SkTensor *self, const SkTensor *tensor1, const SkTensor *tensor2,
                    SkScalar value) {
  (void)value;
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, tensor1, tensor2};
  return build(m, &c, 3, in, addc_names, "addcmul_cpu_out", ALLOW_INT | ALLOW_FLOAT);
}

int sk_meta_addcdiv(SkMeta *m, const SkTensor *self, const SkTensor *tensor1, const SkTensor *tensor2,
                    SkScalar value) {
  (void)value;
  if (!sk_dtype_is_floating(tensor1->dtype) && !sk_dtype_is_floating(tensor2->dtype))
    return sk_error("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                    "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior "
                    "is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, tensor1, tensor2};
  return build(m, &c, 3, in, addc_names, "addcdiv_cpu_out", ALLOW_FLOAT);
}
/* }==== */

/* {==== Clamps by tensors and clamp_min / clamp_max ==== */
/* The bounds present, in order, follow self among the inputs; the kernel
** tells which they are from the arguments. A Tensor bound allows bool when
** it is the only one (maximum / minimum, as PyTorch); Scalar bounds never do. */
int sk_meta_clamp_Tensor_bound(SkMeta *m, const SkTensor *self, const SkTensor *min, const SkTensor *max) {
  if (!min && !max) return sk_error("torch.clamp: At least one of 'min' or 'max' must not be None");
  const SkTensor *in[3] = {self};
  const char *names[3] = {"self"};
  int n = 1;
  if (min) in[n] = min, names[n++] = "min";
  if (max) in[n] = max, names[n++] = "max";
  SkIterConfig c = sk_iter_config();
  return build(m, &c, n, in, names, "clamp_cpu", ALLOW_INT | ALLOW_FLOAT | (n == 2 ? ALLOW_BOOL : 0));
}

static const char *const self_min[] = {"self", "min"}, *const self_max[] = {"self", "max"};

/* A scalar bound is stored in the compute dtype: it must fit, as in PyTorch. */
int sk_meta_clamp_min(SkMeta *m, const SkTensor *self, SkScalar min) {
  int rc = binary_scalar(m, self, min, self_min, "clamp_min_cpu", ALLOW_INT | ALLOW_FLOAT, 0); /* PyTorch's name */
  return rc ? rc : sk_scalar_check(min, m->iter->common_dtype);
}

int sk_meta_clamp_max(SkMeta *m, const SkTensor *self, SkScalar max) {
  int rc = binary_scalar(m, self, max, self_max, "clamp_max_scalar_cpu", ALLOW_INT | ALLOW_FLOAT, 0);
  return rc ? rc : sk_scalar_check(max, m->iter->common_dtype);
}

int sk_meta_clamp_min_Tensor_bound(SkMeta *m, const SkTensor *self, const SkTensor *min) {
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, min};
  return build(m, &c, 2, in, self_min, "clamp_min_cpu", ALLOW_ALL);
}

int sk_meta_clamp_max_Tensor_bound(SkMeta *m, const SkTensor *self, const SkTensor *max) {
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {self, max};
  return build(m, &c, 2, in, self_max, "clamp_max_cpu", ALLOW_ALL);
}
/* }==== */
