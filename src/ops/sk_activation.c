/*
** sk_activation.c — activations as composites: leaky_relu, elu, selu, celu, hardtanh, relu6,
** hardswish, hardsigmoid, softplus, softsign, softshrink, hardshrink, tanhshrink, threshold,
** log_sigmoid, mish, rrelu, glu, prelu, softmin
** Each is PyTorch's formula over dispatched ops (so it runs on every backend and records for
** autograd), with PyTorch's NaN behaviour: a NaN input gives NaN except where PyTorch's own
** comparison sends it to a constant (softshrink, threshold). A branch that where() discards
** is clamped first so it stays finite: its gradient is multiplied by 0, and 0·inf is NaN.
** In-place forms compute from a clone of self (so what the pieces save is never overwritten),
** then copy into self.
*/
#include "sk_kernels.h"
#include "sk_composite_util.h"

#include <math.h>

#define T(call) SK_TAPE_STEP(tp, call)
#define NUM(v) sk_tape_number(tp, sk_scalar_float(v))
#define S1 sk_scalar_int(1)
#define UNPAREN(...) __VA_ARGS__

static double dbl(SkScalar s) { return sk_scalar_to_double(s); }

/* {==== The formulas: x a tensor, results on the tape ==== */
static SkTensor *leaky_relu(SkTape *tp, const SkTensor *x, double slope) {
  SkTensor *neg = T(sk_mul_Scalar(&r, x, sk_scalar_float(slope)));
  return T(sk_where_self(&r, T(sk_gt_Scalar(&r, x, sk_scalar_int(0))), x, neg));
}

/* x > 0 ? scale·x : scale·alpha·(exp(input_scale·x) - 1); exp of min(x, 0) only */
static SkTensor *elu(SkTape *tp, const SkTensor *x, double alpha, double scale, double input_scale) {
  SkTensor *neg = T(sk_expm1(&r, T(sk_mul_Scalar(&r, T(sk_clamp_max(&r, x, sk_scalar_int(0))), sk_scalar_float(input_scale)))));
  neg = T(sk_mul_Scalar(&r, neg, sk_scalar_float(alpha * scale)));
  return T(sk_where_self(&r, T(sk_le_Scalar(&r, x, sk_scalar_int(0))), neg, T(sk_mul_Scalar(&r, x, sk_scalar_float(scale)))));
}

/* min(max(x, lo), hi), PyTorch's clamp: hi wins when lo > hi. y = x <= lo ? lo : x, then
** y >= hi ? hi : y — constants at the bounds, so the gradient there is 0 (PyTorch's
** hardtanh_backward), and NaN stays NaN. The result keeps x's dtype (an integer x: the bounds
** truncate, as PyTorch's clamp into an integer tensor); bool, and uint8 with a negative bound,
** are refused as PyTorch refuses them. */
static SkTensor *hardtanh(SkTape *tp, const SkTensor *x, SkScalar lo, SkScalar hi) {
  if (tp->rc) return NULL;
  if (x->dtype == SK_DTYPE_BOOL) return sk_tape_keep(tp, sk_error("Bool inputs not supported for hardtanh"), NULL);
  if (x->dtype == SK_DTYPE_UINT8 && (dbl(lo) < 0 || dbl(hi) < 0))
    return sk_tape_keep(tp, sk_error("cannot do hardtanh on an unsigned type with negative limits"), NULL);
  SkTensor *lower = T(sk_where_self(&r, T(sk_le_Scalar(&r, x, lo)), sk_tape_number(tp, lo), x));
  SkTensor *y = T(sk_where_self(&r, T(sk_ge_Scalar(&r, lower, hi)), sk_tape_number(tp, hi), lower));
  return y && y->dtype != x->dtype ? T(sk_to_dtype(&r, y, x->dtype, 0, 0, -1)) : y;
}

/* relu6(x + 3) / 6 */
static SkTensor *hardsigmoid(SkTape *tp, const SkTensor *x) {
  SkTensor *c = T(sk_clamp(&r, T(sk_add_Scalar(&r, x, sk_scalar_int(3), S1)), sk_scalar_int(0), sk_scalar_int(6)));
  return T(sk_div_Scalar(&r, c, sk_scalar_int(6)));
}

/* beta·x > threshold ? x : log1p(exp(beta·x)) / beta, the exp of min(beta·x, threshold) */
static SkTensor *softplus(SkTape *tp, const SkTensor *x, double beta, double threshold) {
  SkTensor *bx = T(sk_mul_Scalar(&r, x, sk_scalar_float(beta)));
  SkTensor *soft = T(sk_div_Scalar(&r, T(sk_log1p(&r, T(sk_exp(&r, T(sk_clamp_max(&r, bx, sk_scalar_float(threshold))))))),
                                    sk_scalar_float(beta)));
  return T(sk_where_self(&r, T(sk_gt_Scalar(&r, bx, sk_scalar_float(threshold))), x, soft));
}

/* x > l ? x - l : x < -l ? x + l : 0 (NaN: 0, as PyTorch's); l >= 0 (a NaN l is refused too) */
static SkTensor *softshrink(SkTape *tp, const SkTensor *x, double l) {
  if (!(l >= 0)) /* a NaN prints as PyTorch's "nan", whatever its sign bit */
    return sk_tape_keep(tp, sk_error("lambda must be greater or equal to 0, but found to be %g.", isnan(l) ? NAN : l), NULL);
  SkTensor *zero = NUM(0);
  SkTensor *lower = T(sk_where_self(&r, T(sk_lt_Scalar(&r, x, sk_scalar_float(-l))),
                                    T(sk_add_Scalar(&r, x, sk_scalar_float(l), S1)), zero));
  return T(sk_where_self(&r, T(sk_gt_Scalar(&r, x, sk_scalar_float(l))), T(sk_sub_Scalar(&r, x, sk_scalar_float(l), S1)), lower));
}

/* -l <= x <= l ? 0 : x (NaN stays NaN) */
static SkTensor *hardshrink(SkTape *tp, const SkTensor *x, double l) {
  SkTensor *in = T(sk_logical_and(&r, T(sk_ge_Scalar(&r, x, sk_scalar_float(-l))), T(sk_le_Scalar(&r, x, sk_scalar_float(l)))));
  return T(sk_where_self(&r, in, NUM(0), x));
}

/* x <= threshold ? value : x */
static SkTensor *threshold_of(SkTape *tp, const SkTensor *x, SkScalar th, SkScalar value) {
  return T(sk_where_self(&r, T(sk_le_Scalar(&r, x, th)), sk_tape_number(tp, value), x));
}

/* log(1 + exp(x)) without overflow and with the right slope at 0: x < 0 ? log1p(exp(x)) :
** x + log1p(exp(-x)), each branch clamped to its side */
static SkTensor *softplus1(SkTape *tp, const SkTensor *x) {
  SkTensor *lo = T(sk_log1p(&r, T(sk_exp(&r, T(sk_clamp_max(&r, x, sk_scalar_int(0)))))));
  SkTensor *xp = T(sk_clamp_min(&r, x, sk_scalar_int(0)));
  SkTensor *hi = T(sk_add(&r, xp, T(sk_log1p(&r, T(sk_exp(&r, T(sk_neg(&r, xp)))))), S1));
  return T(sk_where_self(&r, T(sk_lt_Scalar(&r, x, sk_scalar_int(0))), lo, hi));
}

/* log(sigmoid(x)) = -softplus(-x) */
static SkTensor *log_sigmoid(SkTape *tp, const SkTensor *x) { return T(sk_neg(&r, softplus1(tp, T(sk_neg(&r, x))))); }

/* x·tanh(softplus(x)) */
static SkTensor *mish(SkTape *tp, const SkTensor *x) { return T(sk_mul(&r, x, T(sk_tanh(&r, softplus1(tp, x))))); }

/* training: a slope drawn uniformly in [lower, upper] for each element (sk's generator);
** eval: the mean slope. lower <= upper in both (PyTorch's check; a NaN bound is refused too). */
static SkTensor *rrelu(SkTape *tp, const SkTensor *x, double lower, double upper, int training) {
  if (!(lower <= upper)) return sk_tape_keep(tp, sk_error("Lower bound should be less than or equal to the upper bound"), NULL);
  if (!training) return leaky_relu(tp, x, (lower + upper) / 2);
  SkTensor *slope = T(sk_empty_like(&r, x, -1, -1, sk_device(-1, 0), -1, -1));
  if (slope && sk_uniform_(slope, lower, upper, NULL)) sk_tape_keep(tp, -1, NULL);
  return T(sk_where_self(&r, T(sk_ge_Scalar(&r, x, sk_scalar_int(0))), x, T(sk_mul(&r, x, slope))));
}
/* }==== */

/* {==== Functional and in-place entry points ==== */
#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946

/* *result = EXPR (over x = self); the in-place form writes EXPR over a copy into self. A formula of
** several steps computes in opmath (sk_tape_opmath: a half-type x as float32, rounded once at the end);
** one that only selects among x and constants (SELECT) computes in x's dtype, where it is exact. */
#define ACTIVATION_AS(name, params, EXPR, OM)                                               \
  int sk_math_##name(SkTensor **result, const SkTensor *self UNPAREN params) {              \
    SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;                                         \
    const SkTensor *x = OM ? sk_tape_opmath(tp, self, self->dtype) : self;                 \
    SkTensor *y = x ? EXPR : NULL;                                                          \
    y = sk_tape_round(tp, y, self->dtype);                                                  \
    if (!tp->rc) *result = sk_tape_take(tp, y);                                             \
    return sk_tape_free(tp);                                                                \
  }
/* the copy is the opmath one for a half-type self */
#define ACTIVATION_AS_(name, params, EXPR, OM)                                              \
  int sk_math_##name##_(SkTensor *self UNPAREN params) {                                    \
    SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;                                         \
    const SkTensor *x = OM && sk_dtype_is_half(self->dtype) ? sk_tape_opmath(tp, self, self->dtype) \
                                                             : T(sk_clone(&r, self, -1));   \
    SkTensor *y = x ? EXPR : NULL;                                                          \
    if (!tp->rc && sk_copy_(self, y, 0)) sk_tape_keep(tp, -1, NULL);                        \
    return sk_tape_free(tp);                                                                \
  }
#define ACTIVATION(name, params, EXPR) ACTIVATION_AS(name, params, EXPR, 1)
#define BOTH(name, params, EXPR) ACTIVATION(name, params, EXPR) ACTIVATION_AS_(name, params, EXPR, 1)
#define SELECT(name, params, EXPR) ACTIVATION_AS(name, params, EXPR, 0)
#define SELECT_BOTH(name, params, EXPR) SELECT(name, params, EXPR) ACTIVATION_AS_(name, params, EXPR, 0)

BOTH(leaky_relu, (, SkScalar negative_slope), leaky_relu(tp, x, dbl(negative_slope)))
BOTH(elu, (, SkScalar alpha, SkScalar scale, SkScalar input_scale),
     elu(tp, x, dbl(alpha), dbl(scale), dbl(input_scale)))
BOTH(selu, (), elu(tp, x, SELU_ALPHA, SELU_SCALE, 1))
BOTH(celu, (, SkScalar alpha), elu(tp, x, dbl(alpha), 1, 1 / dbl(alpha)))
SELECT_BOTH(hardtanh, (, SkScalar min_val, SkScalar max_val), hardtanh(tp, x, min_val, max_val))
SELECT_BOTH(relu6, (), hardtanh(tp, x, sk_scalar_int(0), sk_scalar_int(6)))
BOTH(hardswish, (), T(sk_mul(&r, x, hardsigmoid(tp, x))))
BOTH(hardsigmoid, (), hardsigmoid(tp, x))
ACTIVATION(softplus, (, SkScalar beta, SkScalar threshold), softplus(tp, x, dbl(beta), dbl(threshold)))
ACTIVATION(softsign, (), T(sk_div(&r, x, T(sk_add_Scalar(&r, T(sk_abs(&r, x)), sk_scalar_int(1), S1)))))
ACTIVATION(softshrink, (, SkScalar lambd), softshrink(tp, x, dbl(lambd)))
SELECT(hardshrink, (, SkScalar lambd), hardshrink(tp, x, dbl(lambd)))
ACTIVATION(tanhshrink, (), T(sk_sub(&r, x, T(sk_tanh(&r, x)), S1)))
SELECT_BOTH(threshold, (, SkScalar threshold, SkScalar value), threshold_of(tp, x, threshold, value))
ACTIVATION(log_sigmoid, (), log_sigmoid(tp, x))
BOTH(mish, (), mish(tp, x))
BOTH(rrelu, (, SkScalar lower, SkScalar upper, int training, void *generator),
     ((void)generator, rrelu(tp, x, dbl(lower), dbl(upper), training)))
/* }==== */

/* {==== glu, prelu, softmin ==== */
/* a·sigmoid(b), a and b the halves of dim; in opmath */
int sk_math_glu(SkTensor **result, const SkTensor *self, int64_t dim) {
  if (self->ndim == 0) return sk_error("glu does not support scalars because halving size must be even");
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (self->sizes[d] % 2)
    return sk_error("Halving dimension must be even, but dimension %lld is size %lld", (long long)d, (long long)self->sizes[d]);
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  int64_t h = self->sizes[d] / 2;
  SkTensor *x = sk_tape_opmath(tp, self, self->dtype);
  SkTensor *a = T(sk_narrow(&r, x, d, 0, h)), *b = T(sk_narrow(&r, x, d, h, h));
  SkTensor *y = sk_tape_round(tp, T(sk_mul(&r, a, T(sk_sigmoid(&r, b)))), self->dtype);
  if (!tp->rc) *result = sk_tape_take(tp, y);
  return sk_tape_free(tp);
}

/* x > 0 ? x : w·x, w one slope or one per channel (dim 1): a scalar or 1-d weight, PyTorch's checks
** in PyTorch's order */
int sk_math_prelu(SkTensor **result, const SkTensor *self, const SkTensor *weight) {
  int64_t c = self->ndim >= 2 ? self->sizes[1] : 1;
  if (weight->numel != 1 && self->ndim == 0) return sk_error("Not allow zero-dim input tensor.");
  if (weight->numel != 1 && weight->numel != c)
    return sk_error("Mismatch of parameter numbers and input channel size. Found parameter numbers = %lld and channel "
                    "size = %lld.", (long long)weight->numel, (long long)c);
  if (weight->ndim > 1)
    return sk_error("prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = %d", weight->ndim);
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  int64_t shape[SK_MAX_DIMS];
  for (int i = 0; i < self->ndim; i++) shape[i] = i == 1 ? weight->numel : 1;
  SkTensor *w = weight->numel == 1 || self->ndim < 2 ? T(sk_reshape(&r, weight, (SkIntList){shape, 0}))
                                                     : T(sk_reshape(&r, weight, (SkIntList){shape, self->ndim}));
  SkTensor *y = T(sk_where_self(&r, T(sk_gt_Scalar(&r, self, sk_scalar_int(0))), self, T(sk_mul(&r, self, w))));
  if (!tp->rc) *result = sk_tape_take(tp, y);
  return sk_tape_free(tp);
}

int sk_math_softmin(SkTensor **result, const SkTensor *self, int64_t dim, int dtype) {
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  SkTensor *y = T(sk_softmax_int(&r, T(sk_neg(&r, self)), dim, dtype));
  if (!tp->rc) *result = sk_tape_take(tp, y);
  return sk_tape_free(tp);
}
/* }==== */
