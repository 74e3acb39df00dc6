/*
** sk_binary_composite.c — composites of the binary family: the Scalar
** overloads of fmod, pow, bitwise_* and the shifts, outer / ger, isclose, allclose, equal
** Everything here calls the dispatched public API (never a backend kernel),
** so each op works on any backend that provides the ops it is made of.
** Ownership: arguments are borrowed; every temporary is released on every
** path; a result is stored only on success.
*/
#include "sk_composite_util.h"
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

/* {==== Scalar overloads: wrap the number, call the Tensor overload ====
** One shape for all of them (as in sk_composite.c): `w` is the scalar as a
** wrapped-number tensor, so it takes part in type promotion as PyTorch's does. */

SK_SCALAR_OVERLOAD(sk_default_fmod_Scalar(SkTensor **result, const SkTensor *self, SkScalar other), other,
                sk_fmod(result, self, w))
SK_SCALAR_OVERLOAD(sk_default_fmod__Scalar(SkTensor *self, SkScalar other), other, sk_fmod_(self, w))
SK_SCALAR_OVERLOAD(sk_default_fmod_Scalar_out(const SkTensor *self, SkScalar other, SkTensor *out), other,
                sk_fmod_Tensor_out(self, w, out))

SK_SCALAR_OVERLOAD(sk_default_pow__Scalar(SkTensor *self, SkScalar exponent), exponent,
                   sk_check_pow_scalar_exponent(self, exponent) ? -1 : sk_pow_(self, w))
SK_SCALAR_OVERLOAD(sk_default_pow_Tensor_Scalar_out(const SkTensor *self, SkScalar exponent, SkTensor *out), exponent,
                sk_check_pow_scalar_exponent(self, exponent) ? -1 : sk_pow_Tensor_Tensor_out(self, w, out))
SK_SCALAR_OVERLOAD(sk_default_pow_Scalar_out(SkScalar self, const SkTensor *exponent, SkTensor *out), self,
                sk_pow_Tensor_Tensor_out(w, exponent, out))

/* The Scalar overloads of a bitwise op: op.<ts>, op_.<ts>, op.<ts>_out and
** op.Scalar_Tensor, where <ts> is Scalar (and, or, xor) or Tensor_Scalar (the shifts). */
#define BITWISE_SCALARS(op, ts)                                                                                  \
  SK_SCALAR_OVERLOAD(sk_default_##op##_##ts(SkTensor **result, const SkTensor *self, SkScalar other), other,       \
                  sk_##op(result, self, w))                                                                      \
  SK_SCALAR_OVERLOAD(sk_default_##op##__##ts(SkTensor *self, SkScalar other), other, sk_##op##_(self, w))          \
  SK_SCALAR_OVERLOAD(sk_default_##op##_##ts##_out(const SkTensor *self, SkScalar other, SkTensor *out), other,     \
                  sk_##op##_Tensor_out(self, w, out))                                                            \
  SK_SCALAR_OVERLOAD(sk_default_##op##_Scalar_Tensor(SkTensor **result, SkScalar self, const SkTensor *other),      \
                  self, sk_##op(result, w, other))
BITWISE_SCALARS(bitwise_and, Scalar)
BITWISE_SCALARS(bitwise_or, Scalar)
BITWISE_SCALARS(bitwise_xor, Scalar)
BITWISE_SCALARS(bitwise_left_shift, Tensor_Scalar)
BITWISE_SCALARS(bitwise_right_shift, Tensor_Scalar)
#undef BITWISE_SCALARS
/* }==== */

/* {==== outer, ger: self as a column times vec2, a broadcast mul (PyTorch's composite) ==== */
static int check_1d(const SkTensor *t, const char *name) {
  if (t->ndim != 1) return sk_error("Expected 1-D argument %s, but got %d-D", name, t->ndim);
  return 0;
}

/* *col = self viewed (or copied, by reshape) as [n, 1]. */
static int as_column(SkTensor **col, const SkTensor *self, const SkTensor *vec2) {
  if (check_1d(self, "self") || check_1d(vec2, "vec2")) return -1;
  const int64_t shape[2] = {self->sizes[0], 1};
  return sk_reshape(col, self, (SkIntList){shape, 2});
}

int sk_math_outer(SkTensor **result, const SkTensor *self, const SkTensor *vec2) {
  SkTensor *col = NULL;
  int rc = as_column(&col, self, vec2);
  if (!rc) rc = sk_mul(result, col, vec2);
  sk_tensor_release(col);
  return rc;
}

int sk_math_outer_out(const SkTensor *self, const SkTensor *vec2, SkTensor *out) {
  SkTensor *col = NULL;
  int rc = as_column(&col, self, vec2);
  if (!rc) rc = sk_mul_out(col, vec2, out);
  sk_tensor_release(col);
  return rc;
}

int sk_math_ger(SkTensor **result, const SkTensor *self, const SkTensor *vec2) { return sk_outer(result, self, vec2); }

int sk_math_ger_out(const SkTensor *self, const SkTensor *vec2, SkTensor *out) { return sk_outer_out(self, vec2, out); }
/* }==== */

/* {==== isclose ====
** PyTorch's: |self - other| <= atol + |rtol · other|, or equal (infinities of one sign), or
** both NaN with equal_nan. Integers and bool compute in float32 (PyTorch 1.13's default
** dtype: uint8 2 and 3 are close at rtol 0.5, no wrapping). Zero tolerances are the
** equality alone. */
int sk_math_isclose(SkTensor **result, const SkTensor *self, const SkTensor *other, double rtol, double atol,
                    int equal_nan) {
  if (self->dtype != other->dtype)
    return sk_error("isclose: argument 'other' (%s) did not match 'self' (%s)", sk_dtype_name(other->dtype),
                    sk_dtype_name(self->dtype));
  if (!(rtol >= 0)) return sk_error("rtol must be greater than or equal to zero, but got %g", rtol);
  if (!(atol >= 0)) return sk_error("atol must be greater than or equal to zero, but got %g", atol);
  enum { CLOSE, NAN_A, NAN_B, BOTH_NAN, CLOSE_NAN, FA, FB, SCALED, ABS_SCALED, ALLOWED, DIFF, ACTUAL, WITHIN, FINITE,
         OK, CLOSE_ALL, NT };
  SkTensor *t[NT] = {NULL};
  int rc = sk_eq(&t[CLOSE], self, other);
  const SkTensor *close = t[CLOSE];
  if (!rc && equal_nan && sk_dtype_is_floating(self->dtype)) {
    rc = sk_isnan(&t[NAN_A], self) || sk_isnan(&t[NAN_B], other) || sk_logical_and(&t[BOTH_NAN], t[NAN_A], t[NAN_B]) ||
         sk_logical_or(&t[CLOSE_NAN], close, t[BOTH_NAN]);
    close = t[CLOSE_NAN];
  }
  if (!rc && (rtol != 0 || atol != 0)) {
    const SkTensor *a = self, *b = other;
    if (!sk_dtype_is_floating(self->dtype)) {
      rc = sk_to_dtype(&t[FA], self, SK_DTYPE_FLOAT32, 0, 0, -1) || sk_to_dtype(&t[FB], other, SK_DTYPE_FLOAT32, 0, 0, -1);
      a = t[FA], b = t[FB];
    }
    rc = rc || sk_mul_Scalar(&t[SCALED], b, sk_scalar_float(rtol)) || sk_abs(&t[ABS_SCALED], t[SCALED]) ||
         sk_add_Scalar(&t[ALLOWED], t[ABS_SCALED], sk_scalar_float(atol), sk_scalar_int(1)) ||
         sk_sub(&t[DIFF], a, b, sk_scalar_int(1)) || sk_abs(&t[ACTUAL], t[DIFF]) ||
         sk_le(&t[WITHIN], t[ACTUAL], t[ALLOWED]) || sk_isfinite(&t[FINITE], t[ACTUAL]) ||
         sk_logical_and(&t[OK], t[WITHIN], t[FINITE]) || sk_logical_or(&t[CLOSE_ALL], close, t[OK]);
    close = t[CLOSE_ALL];
  }
  if (!rc) *result = sk_tensor_retain((SkTensor *)close);
  for (int i = 0; i < NT; i++) sk_tensor_release(t[i]);
  return rc ? -1 : 0;
}
/* }==== */

/* {==== allclose, equal: one bool ==== */
/* *result = whether every element of the bool tensor t is true (read on the CPU). */
static int all_true(int *result, const SkTensor *t) {
  SkTensor *a = NULL, *c = NULL;
  int rc = sk_all(&a, t) || sk_to_device(&c, a, sk_device(SK_DEVICE_CPU, 0), -1, 0, 0, -1);
  if (!rc) *result = *(const uint8_t *)sk_tensor_data(c) != 0;
  sk_tensor_release(a);
  sk_tensor_release(c);
  return rc ? -1 : 0;
}

int sk_math_allclose(int *result, const SkTensor *self, const SkTensor *other, double rtol, double atol, int equal_nan) {
  SkTensor *close = NULL;
  int rc = sk_isclose(&close, self, other, rtol, atol, equal_nan) || all_true(result, close);
  sk_tensor_release(close);
  return rc ? -1 : 0;
}

/* PyTorch 1.13's equal: the same sizes (no broadcasting) and the same values, compared after
** type promotion (float 1 equals int 1; NaN is not equal to itself). */
int sk_math_equal(int *result, const SkTensor *self, const SkTensor *other) {
  int same = self->ndim == other->ndim;
  for (int i = 0; same && i < self->ndim; i++) same = self->sizes[i] == other->sizes[i];
  if (!same) { *result = 0; return 0; }
  SkTensor *eq = NULL;
  int rc = sk_eq(&eq, self, other) || all_true(result, eq);
  sk_tensor_release(eq);
  return rc ? -1 : 0;
}
/* }==== */
