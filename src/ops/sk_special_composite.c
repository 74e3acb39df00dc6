/*
** sk_special_composite.c — composites of the pointwise block of issue 13: the Scalar
** overloads (xlogy, copysign, special_xlog1py, special_zeta, the polynomials), ldexp,
** float_power, rsub, mvlgamma, deg2rad, rad2deg, positive, isreal, the in-place
** polygamma_ and mvlgamma_, and the special_* aliases of existing ops.
** Everything here calls the dispatched public API (never a backend kernel), so each
** op works on every backend and records for autograd through its pieces (Math).
** Ownership: arguments are borrowed; every temporary is released on every path; a
** result is stored only on success.
*/
#include "sk_composite_util.h"
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

#include <math.h>

#define NO_DEVICE sk_device(-1, 0)

/* {==== Scalar overloads: wrap the number, call the Tensor overload ==== */
SK_SCALAR_OVERLOAD(sk_math_xlogy_Scalar_Self(SkTensor **result, SkScalar self, const SkTensor *other), self,
                   sk_xlogy(result, w, other))
SK_SCALAR_OVERLOAD(sk_math_xlogy_Scalar_Other(SkTensor **result, const SkTensor *self, SkScalar other), other,
                   sk_xlogy(result, self, w))
SK_SCALAR_OVERLOAD(sk_math_xlogy__Scalar_Other(SkTensor *self, SkScalar other), other, sk_xlogy_(self, w))
SK_SCALAR_OVERLOAD(sk_math_xlogy_OutScalar_Self(SkScalar self, const SkTensor *other, SkTensor *out), self,
                   sk_xlogy_OutTensor(w, other, out))
SK_SCALAR_OVERLOAD(sk_math_xlogy_OutScalar_Other(const SkTensor *self, SkScalar other, SkTensor *out), other,
                   sk_xlogy_OutTensor(self, w, out))

SK_SCALAR_OVERLOAD(sk_math_copysign_Scalar(SkTensor **result, const SkTensor *self, SkScalar other), other,
                   sk_copysign(result, self, w))
SK_SCALAR_OVERLOAD(sk_math_copysign__Scalar(SkTensor *self, SkScalar other), other, sk_copysign_(self, w))
SK_SCALAR_OVERLOAD(sk_math_copysign_Scalar_out(const SkTensor *self, SkScalar other, SkTensor *out), other,
                   sk_copysign_out(self, w, out))

/* The four Scalar overloads of a binary special op `op` named <a>_scalar / <b>_scalar (self/other or x/n). */
#define SPECIAL_SCALARS(op, a, b)                                                                                   \
  SK_SCALAR_OVERLOAD(sk_math_##op##_##a##_scalar(SkTensor **result, SkScalar x, const SkTensor *y), x,               \
                     sk_##op(result, w, y))                                                                         \
  SK_SCALAR_OVERLOAD(sk_math_##op##_##b##_scalar(SkTensor **result, const SkTensor *x, SkScalar y), y,               \
                     sk_##op(result, x, w))                                                                         \
  SK_SCALAR_OVERLOAD(sk_math_##op##_##a##_scalar_out(SkScalar x, const SkTensor *y, SkTensor *out), x,               \
                     sk_##op##_out(w, y, out))                                                                      \
  SK_SCALAR_OVERLOAD(sk_math_##op##_##b##_scalar_out(const SkTensor *x, SkScalar y, SkTensor *out), y,               \
                     sk_##op##_out(x, w, out))
SPECIAL_SCALARS(special_xlog1py, self, other)
SPECIAL_SCALARS(special_zeta, self, other)
SPECIAL_SCALARS(special_chebyshev_polynomial_t, x, n)
SPECIAL_SCALARS(special_chebyshev_polynomial_u, x, n)
SPECIAL_SCALARS(special_chebyshev_polynomial_v, x, n)
SPECIAL_SCALARS(special_chebyshev_polynomial_w, x, n)
SPECIAL_SCALARS(special_shifted_chebyshev_polynomial_t, x, n)
SPECIAL_SCALARS(special_shifted_chebyshev_polynomial_u, x, n)
SPECIAL_SCALARS(special_shifted_chebyshev_polynomial_v, x, n)
SPECIAL_SCALARS(special_shifted_chebyshev_polynomial_w, x, n)
SPECIAL_SCALARS(special_hermite_polynomial_h, x, n)
SPECIAL_SCALARS(special_hermite_polynomial_he, x, n)
SPECIAL_SCALARS(special_laguerre_polynomial_l, x, n)
SPECIAL_SCALARS(special_legendre_polynomial_p, x, n)
/* }==== */

/* {==== ldexp, float_power, rsub ==== */
/* ldexp: self * 2^other (PyTorch's composite; 2.0 ** an integer tensor is of the default float dtype). */
static int two_pow(SkTensor **r, const SkTensor *other) { return sk_pow_Scalar(r, sk_scalar_float(2.0), other); }

int sk_math_ldexp_Tensor(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  SkTensor *p = NULL;
  if (two_pow(&p, other)) return -1;
  int rc = sk_mul(result, self, p);
  sk_tensor_release(p);
  return rc;
}

int sk_math_ldexp_out(const SkTensor *self, const SkTensor *other, SkTensor *out) {
  SkTensor *p = NULL;
  if (two_pow(&p, other)) return -1;
  int rc = sk_mul_out(self, p, out);
  sk_tensor_release(p);
  return rc;
}

int sk_math_ldexp_(SkTensor *self, const SkTensor *other) {
  SkTensor *p = NULL;
  if (two_pow(&p, other)) return -1;
  int rc = sk_mul_(self, p);
  sk_tensor_release(p);
  return rc;
}

/* float_power computes in float64: both operands are converted, then pow. */
static int to_double(SkTensor **r, const SkTensor *t) { return sk_to_dtype(r, t, SK_DTYPE_FLOAT64, 0, 0, -1); }

static int check_double(const SkTensor *t, const char *what) {
  if (t->dtype == SK_DTYPE_FLOAT64) return 0;
  return sk_error("the %s given to float_power%s has dtype %s but the operation's result requires dtype Double",
                  what[0] == 'b' ? "base" : "output", what[0] == 'b' ? "_" : "", sk_dtype_torch_name(t->dtype));
}

/* pow over float64 copies of the given tensors (NULL: a Scalar in that place); into out when out is given. */
static int float_power(SkTensor **result, const SkTensor *base, SkScalar sbase, const SkTensor *ex, SkScalar sex,
                       SkTensor *out) {
  if (out && check_double(out, "output")) return -1;
  SkTensor *b = NULL, *e = NULL;
  int rc = base ? to_double(&b, base) : 0;
  if (!rc && ex) rc = to_double(&e, ex);
  if (!rc) {
    SkTensor *wb = b ? NULL : sk_tensor_wrap_number(sk_scalar_float(sk_scalar_to_double(sbase)));
    SkTensor *we = e ? NULL : sk_tensor_wrap_number(sk_scalar_float(sk_scalar_to_double(sex)));
    const SkTensor *x = b ? b : wb, *y = e ? e : we;
    rc = !x || !y ? -1 : out ? sk_pow_Tensor_Tensor_out(x, y, out) : sk_pow_Tensor_Tensor(result, x, y);
    sk_tensor_release(wb);
    sk_tensor_release(we);
  }
  sk_tensor_release(b);
  sk_tensor_release(e);
  return rc;
}
static const SkScalar no_scalar = {0};

int sk_math_float_power_Tensor_Tensor(SkTensor **result, const SkTensor *self, const SkTensor *exponent) {
  return float_power(result, self, no_scalar, exponent, no_scalar, NULL);
}
int sk_math_float_power_Tensor_Tensor_out(const SkTensor *self, const SkTensor *exponent, SkTensor *out) {
  return float_power(NULL, self, no_scalar, exponent, no_scalar, out);
}
int sk_math_float_power_Scalar(SkTensor **result, SkScalar self, const SkTensor *exponent) {
  return float_power(result, NULL, self, exponent, no_scalar, NULL);
}
int sk_math_float_power_Scalar_out(SkScalar self, const SkTensor *exponent, SkTensor *out) {
  return float_power(NULL, NULL, self, exponent, no_scalar, out);
}
int sk_math_float_power_Tensor_Scalar(SkTensor **result, const SkTensor *self, SkScalar exponent) {
  return float_power(result, self, no_scalar, NULL, exponent, NULL);
}
int sk_math_float_power_Tensor_Scalar_out(const SkTensor *self, SkScalar exponent, SkTensor *out) {
  return float_power(NULL, self, no_scalar, NULL, exponent, out);
}
int sk_math_float_power__Tensor(SkTensor *self, const SkTensor *exponent) {
  return check_double(self, "base") ? -1 : float_power(NULL, self, no_scalar, exponent, no_scalar, self);
}
int sk_math_float_power__Scalar(SkTensor *self, SkScalar exponent) {
  return check_double(self, "base") ? -1 : float_power(NULL, self, no_scalar, NULL, exponent, self);
}

/* rsub: other - alpha * self. */
int sk_math_rsub_Tensor(SkTensor **result, const SkTensor *self, const SkTensor *other, SkScalar alpha) {
  return sk_sub(result, other, self, alpha);
}
SK_SCALAR_OVERLOAD(sk_math_rsub_Scalar(SkTensor **result, const SkTensor *self, SkScalar other, SkScalar alpha), other,
                   sk_sub(result, w, self, alpha))
/* }==== */

/* {==== mvlgamma, polygamma_, deg2rad, rad2deg, positive, isreal ==== */
#define MVLGAMMA_MAX_TERMS ((int64_t)1 << 26)
/* PyTorch's mvlgamma: sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi), integers taken as float32. */
int sk_math_mvlgamma(SkTensor **result, const SkTensor *self, int64_t p) {
  if (p < 1) return sk_error("p has to be greater than or equal to 1");
  /* the composite materializes p terms per element: sk bounds them (PyTorch would try to allocate them) */
  int64_t n = self->numel > 1 ? self->numel : 1;
  if (p > MVLGAMMA_MAX_TERMS / n)
    return sk_error("mvlgamma: p = %lld terms for each of %lld elements is more than sk's limit of 2^26 terms",
                    (long long)p, (long long)n);
  SkTape tp = {0};
  /* in opmath: a half type's p terms sum in float32, rounded once; lgamma's dtype check first,
  ** on no elements of self's dtype (float16 has none, as PyTorch's), which the copy would skip */
  const int64_t none[1] = {0};
  if (sk_dtype_is_half(self->dtype))
    SK_TAPE_STEP(&tp, sk_lgamma(&r, SK_TAPE_STEP(&tp, sk_new_zeros(&r, self, (SkIntList){none, 1}, -1, -1, sk_device(-1, 0), -1))));
  SkTensor *x = sk_dtype_is_floating(self->dtype) ? NULL : SK_TAPE_STEP(&tp, sk_to_dtype(&r, self, SK_DTYPE_FLOAT32, 0, 0, -1));
  const SkTensor *xs = x ? x : sk_tape_opmath(&tp, self, self->dtype);
  SkTensor *args = SK_TAPE_STEP(&tp, sk_arange_start_step(&r, sk_scalar_float(-(double)p * 0.5 + 0.5), sk_scalar_float(0.5),
                                                          sk_scalar_float(0.5), (int)xs->dtype, -1, xs->device, -1));
  SkTensor *col = SK_TAPE_STEP(&tp, sk_unsqueeze(&r, xs, -1));
  SkTensor *sum = SK_TAPE_STEP(&tp, sk_add(&r, args, col, sk_scalar_int(1)));
  SkTensor *lg = SK_TAPE_STEP(&tp, sk_lgamma(&r, sum));
  const int64_t last[1] = {-1};
  SkTensor *s = SK_TAPE_STEP(&tp, sk_sum_dim_IntList(&r, lg, (SkIntList){last, 1}, 0, -1));
  SkTensor *res = SK_TAPE_STEP(&tp, sk_add_Scalar(&r, s, sk_scalar_float((double)p * ((double)p - 1) * log(M_PI) / 4),
                                                  sk_scalar_int(1)));
  return sk_tape_result(&tp, sk_tape_round(&tp, res, self->dtype), result);
}

int sk_math_mvlgamma_out(const SkTensor *self, int64_t p, SkTensor *out) { SK_OUT_FROM(sk_math_mvlgamma(&r, self, p), out, SK_READS_POINTWISE(self)); }
int sk_math_mvlgamma_(SkTensor *self, int64_t p) { SK_INPLACE_FROM(sk_mvlgamma(&r, self, p), self); }
int sk_math_polygamma_(SkTensor *self, int64_t n) { SK_INPLACE_FROM(sk_polygamma(&r, n, self), self); }

/* self * (pi / 180) or (180 / pi): an integer or bool self gives the default float dtype. */
#define ANGLE_OPS(op, factor)                                                                                     \
  SK_SCALAR_OVERLOAD(sk_math_##op(SkTensor **result, const SkTensor *self), sk_scalar_float(factor),               \
                     sk_mul(result, self, w))                                                                     \
  SK_SCALAR_OVERLOAD(sk_math_##op##_(SkTensor *self), sk_scalar_float(factor), sk_mul_(self, w))                   \
  SK_SCALAR_OVERLOAD(sk_math_##op##_out(const SkTensor *self, SkTensor *out), sk_scalar_float(factor),             \
                     sk_mul_out(self, w, out))
ANGLE_OPS(deg2rad, M_PI / 180)
ANGLE_OPS(rad2deg, 180 / M_PI)

/* positive returns self itself (PyTorch's), refusing bool as its `+` does. */
int sk_math_positive(SkTensor **result, const SkTensor *self) {
  if (self->dtype == SK_DTYPE_BOOL) return sk_error("The `+` operator, on a bool tensor is not supported.");
  *result = sk_tensor_retain((SkTensor *)self);
  return 0;
}

/* Every real tensor is real: all true (sk has no complex dtypes). */
int sk_math_isreal(SkTensor **result, const SkTensor *self) {
  return sk_ones_like(result, self, SK_DTYPE_BOOL, -1, NO_DEVICE, -1, -1);
}
/* }==== */

/* {==== special.* aliases: each calls the op PyTorch's does ==== */
#define ALIAS1(alias, op)                                                                                       \
  int sk_math_special_##alias(SkTensor **result, const SkTensor *self) { return sk_##op(result, self); }       \
  int sk_math_special_##alias##_out(const SkTensor *self, SkTensor *out) { return sk_##op##_out(self, out); }
ALIAS1(expm1, expm1)
ALIAS1(exp2, exp2)
ALIAS1(psi, digamma)
ALIAS1(digamma, digamma)
ALIAS1(gammaln, lgamma)
ALIAS1(erf, erf)
ALIAS1(erfc, erfc)
ALIAS1(erfinv, erfinv)
ALIAS1(i0, i0)
ALIAS1(expit, sigmoid)
ALIAS1(sinc, sinc)
ALIAS1(log1p, log1p)

#define ALIAS2(alias, op)                                                                                          \
  int sk_math_special_##alias(SkTensor **result, const SkTensor *self, const SkTensor *other) {                   \
    return sk_##op(result, self, other);                                                                          \
  }                                                                                                               \
  int sk_math_special_##alias##_out(const SkTensor *self, const SkTensor *other, SkTensor *out) {                 \
    return sk_##op##_out(self, other, out);                                                                       \
  }
ALIAS2(gammainc, igamma)
ALIAS2(gammaincc, igammac)

int sk_math_special_xlogy(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  return sk_xlogy(result, self, other);
}
int sk_math_special_xlogy_out(const SkTensor *self, const SkTensor *other, SkTensor *out) {
  return sk_xlogy_OutTensor(self, other, out);
}
int sk_math_special_xlogy_self_scalar(SkTensor **result, SkScalar self, const SkTensor *other) {
  return sk_xlogy_Scalar_Self(result, self, other);
}
int sk_math_special_xlogy_other_scalar(SkTensor **result, const SkTensor *self, SkScalar other) {
  return sk_xlogy_Scalar_Other(result, self, other);
}
int sk_math_special_xlogy_self_scalar_out(SkScalar self, const SkTensor *other, SkTensor *out) {
  return sk_xlogy_OutScalar_Self(self, other, out);
}
int sk_math_special_xlogy_other_scalar_out(const SkTensor *self, SkScalar other, SkTensor *out) {
  return sk_xlogy_OutScalar_Other(self, other, out);
}

int sk_math_special_logit(SkTensor **result, const SkTensor *self, SkOptDouble eps) { return sk_logit(result, self, eps); }
int sk_math_special_logit_out(const SkTensor *self, SkOptDouble eps, SkTensor *out) { return sk_logit_out(self, eps, out); }
int sk_math_special_polygamma(SkTensor **result, int64_t n, const SkTensor *self) { return sk_polygamma(result, n, self); }
int sk_math_special_polygamma_out(int64_t n, const SkTensor *self, SkTensor *out) { return sk_polygamma_out(n, self, out); }
int sk_math_special_multigammaln(SkTensor **result, const SkTensor *self, int64_t p) { return sk_mvlgamma(result, self, p); }
int sk_math_special_multigammaln_out(const SkTensor *self, int64_t p, SkTensor *out) { return sk_mvlgamma_out(self, p, out); }
int sk_math_special_round(SkTensor **result, const SkTensor *self, int64_t decimals) {
  return sk_round_decimals(result, self, decimals);
}
int sk_math_special_round_out(const SkTensor *self, int64_t decimals, SkTensor *out) {
  return sk_round_decimals_out(self, decimals, out);
}
int sk_math_special_logsumexp(SkTensor **result, const SkTensor *self, SkIntList dim, int keepdim) {
  return sk_logsumexp(result, self, dim, keepdim);
}
int sk_math_special_logsumexp_out(const SkTensor *self, SkIntList dim, int keepdim, SkTensor *out) {
  return sk_logsumexp_out(self, dim, keepdim, out);
}
int sk_math_special_softmax(SkTensor **result, const SkTensor *self, int64_t dim, int dtype) {
  return sk_softmax_int(result, self, dim, dtype);
}
int sk_math_special_log_softmax(SkTensor **result, const SkTensor *self, int64_t dim, int dtype) {
  return sk_log_softmax_int(result, self, dim, dtype);
}

/* ndtr(x) = erfc(-x / sqrt 2) / 2: no cancellation for negative x, where 1 + erf(x / sqrt 2) loses
** every digit (PyTorch's calc_ndtr takes erfc there too); in opmath, so a half type rounds once. */
int sk_math_special_ndtr(SkTensor **result, const SkTensor *self) {
  SkTape tp = {0};
  SkTensor *x = sk_tape_opmath(&tp, self, self->dtype);
  SkTensor *a = SK_TAPE_STEP(&tp, sk_mul_Scalar(&r, x, sk_scalar_float(-M_SQRT1_2)));
  SkTensor *h = SK_TAPE_STEP(&tp, sk_mul_Scalar(&r, SK_TAPE_STEP(&tp, sk_erfc(&r, a)), sk_scalar_float(0.5)));
  return sk_tape_result(&tp, sk_tape_round(&tp, h, self->dtype), result);
}
int sk_math_special_ndtr_out(const SkTensor *self, SkTensor *out) { SK_OUT_FROM(sk_math_special_ndtr(&r, self), out, SK_READS_POINTWISE(self)); }
/* }==== */
