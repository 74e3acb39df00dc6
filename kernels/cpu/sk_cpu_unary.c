/*
** sk_cpu_unary.c — pointwise unary kernels: arithmetic (neg, abs, sign,
** reciprocal, square, clamp), math (exp ... erfc, sigmoid, silu, gelu, sqrt,
** rsqrt), rounding (floor, ceil, trunc, round, frac), nan_to_num, logical_not
** and bitwise_not.
** The math and rounding ops have vector loops (sk_cpu_unary_simd.c) for
** contiguous float32/float64 at the instruction-set level chosen at load;
** the scalar loops here, libm's functions on the same formulas, serve every
** other case (baseline CPUs, strided operands, the half types computed in
** float). Ops whose meta promotes integers to float32 have float loops only;
** floor/ceil/trunc/round are the identity on integers; integer neg/abs/square
** wrap (abs(INT_MIN) == INT_MIN).
** clamp reads its bounds, already cast to the compute dtype, from iterator
** operands 2 and 3 (see sk_meta_clamp); NaN propagates from the input and
** from a bound, and min > max gives max.
** logical_not reads its input in its own dtype (the iterator does not cast
** it) and writes bool.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_cpu_isa.h"

#include <float.h>
#include <math.h>
#include <tgmath.h>

/* {==== Scalar helpers ==== */
#define DEF_CLAMP(CT, sfx)                                      \
  static inline CT clamp_##sfx(CT a, CT lo, CT hi) {            \
    CT x = a < lo || lo != lo ? lo : a;                         \
    return x > hi || hi != hi ? hi : x;                         \
  }
DEF_CLAMP(float, f)
DEF_CLAMP(double, d)
#define FCLAMP(a, lo, hi) _Generic((a), float: clamp_f, default: clamp_d)(a, lo, hi)

/* The logistic function 1/(1 + exp(-z)) as 1/(1 + e) for z >= 0 and e/(1 + e) below, e = exp(-|z|)
** <= 1 (no overflow: tiny results stay, subnormal ones too), with s·(1 - s) = e/(1 + e)² in *q
** (no cancellation). sigmoid, SiLU and GELU tanh take it: 0.5·(1 + tanh y) is the logistic
** function of 2y (1 + tanh cancels for negative y), and 1 - tanh² y = 4·s·(1 - s). */
#define DEF_LOGISTIC(CT, sfx)                                                                      \
  static inline CT logistic_##sfx(CT z, CT *q) {                                                   \
    CT e = exp(-fabs(z)), d = (CT)1 / ((CT)1 + e);                                                 \
    if (q) *q = e * d * d;                                                                         \
    return (z < 0 ? e : (CT)1) * d;                                                                \
  }                                                                                                \
  static inline CT gelu_tanh_##sfx(CT x) {                                                         \
    return x * logistic_##sfx((CT)(2 * SK_GELU_BETA) * (x + (CT)SK_GELU_KAPPA * (x * x * x)), NULL); \
  }                                                                                                \
  static inline CT gelu_tanh_grad_##sfx(CT g, CT x) {                                              \
    CT q, s = logistic_##sfx((CT)(2 * SK_GELU_BETA) * (x + (CT)SK_GELU_KAPPA * (x * x * x)), &q);   \
    return g * (s + (CT)(2 * SK_GELU_BETA) * x * q * ((CT)1 + (CT)(3 * SK_GELU_KAPPA) * x * x));    \
  }
DEF_LOGISTIC(float, f)
DEF_LOGISTIC(double, d)
#define LOGISTIC(a) _Generic((a), float: logistic_f, default: logistic_d)(a, NULL)
#define GELU_TANH(a) _Generic((a), float: gelu_tanh_f, default: gelu_tanh_d)(a)
#define GELU_TANH_GRAD(g, x) _Generic((x), float: gelu_tanh_grad_f, default: gelu_tanh_grad_d)(g, x)

static inline uint64_t int_abs(int64_t a) { return a < 0 ? 0 - (uint64_t)a : (uint64_t)a; }
static inline int64_t int_sign(int64_t a) { return (a > 0) - (a < 0); }

static inline int64_t int_clamp(int64_t a, int64_t lo, int64_t hi) {
  int64_t x = a < lo ? lo : a;
  return x > hi ? hi : x;
}
/* }==== */

/* {==== Loops ==== */
/* The vector loop of the level in use for a contiguous float32/float64 row, if any. */
#define VEC_f32(op) sk_cpu_vec_math()->f32[SK_VEC_##op]
#define VEC_f64(op) sk_cpu_vec_math()->f64[SK_VEC_##op]
#define VEC_f16(op) NULL
#define VEC_bf16(op) NULL

/* An op of SK_VEC_OPS: the vector loop where there is one, else out = EXPR(a) element by element. */
#define MATH_LOOP(op, sfx, T, CT, LD, ST, EXPR)                                  \
  SK_UNARY_LOOP(op##_##sfx##_scalar, T, CT, LD, ST, 0, 0, EXPR)                  \
  static void op##_##sfx(char **d, const int64_t *s, int64_t n, void *ctx) {     \
    const int64_t z = (int64_t)sizeof(T);                                        \
    SkVecFn vec = s[0] == z && s[1] == z ? VEC_##sfx(op) : NULL;                 \
    if (vec) vec(d[0], d[1], n);                                                 \
    else op##_##sfx##_scalar(d, s, n, ctx);                                      \
  }

/* The scalar formulas are PyTorch's (gelu: its kBeta/kKappa form; sign(NaN) == 0). */
#define FLOAT_OPS(sfx, T, CT, LD, ST)                                                               \
  SK_UNARY_LOOP(neg_##sfx, T, CT, LD, ST, 0, 0, -a)                                                 \
  SK_UNARY_LOOP(abs_##sfx, T, CT, LD, ST, 0, 0, fabs(a))                                            \
  SK_UNARY_LOOP(sign_##sfx, T, CT, LD, ST, 0, 0, (CT)((0 < a) - (a < 0)))                           \
  SK_UNARY_LOOP(reciprocal_##sfx, T, CT, LD, ST, 0, 0, (CT)1 / a)                                   \
  SK_UNARY_LOOP(square_##sfx, T, CT, LD, ST, 0, 0, a * a)                                           \
  SK_UNARY_LOOP(clamp_##sfx, T, CT, LD, ST, c->f, c->f2, FCLAMP(a, p, q))                           \
  SK_UNARY_LOOP(round_dec_##sfx, T, CT, LD, ST, c->f, 0, c->i ? nearbyint(a / p) * p : nearbyint(a * p) / p) \
  MATH_LOOP(exp, sfx, T, CT, LD, ST, exp(a))                                                        \
  MATH_LOOP(exp2, sfx, T, CT, LD, ST, exp2(a))                                                      \
  MATH_LOOP(expm1, sfx, T, CT, LD, ST, expm1(a))                                                    \
  MATH_LOOP(log, sfx, T, CT, LD, ST, log(a))                                                        \
  MATH_LOOP(log2, sfx, T, CT, LD, ST, log2(a))                                                      \
  MATH_LOOP(log10, sfx, T, CT, LD, ST, log10(a))                                                    \
  MATH_LOOP(log1p, sfx, T, CT, LD, ST, log1p(a))                                                    \
  MATH_LOOP(sin, sfx, T, CT, LD, ST, sin(a))                                                        \
  MATH_LOOP(cos, sfx, T, CT, LD, ST, cos(a))                                                        \
  MATH_LOOP(tan, sfx, T, CT, LD, ST, tan(a))                                                        \
  MATH_LOOP(asin, sfx, T, CT, LD, ST, asin(a))                                                      \
  MATH_LOOP(acos, sfx, T, CT, LD, ST, acos(a))                                                      \
  MATH_LOOP(atan, sfx, T, CT, LD, ST, atan(a))                                                      \
  MATH_LOOP(sinh, sfx, T, CT, LD, ST, sinh(a))                                                      \
  MATH_LOOP(cosh, sfx, T, CT, LD, ST, cosh(a))                                                      \
  MATH_LOOP(tanh, sfx, T, CT, LD, ST, tanh(a))                                                      \
  MATH_LOOP(asinh, sfx, T, CT, LD, ST, asinh(a))                                                    \
  MATH_LOOP(acosh, sfx, T, CT, LD, ST, acosh(a))                                                    \
  MATH_LOOP(atanh, sfx, T, CT, LD, ST, atanh(a))                                                    \
  MATH_LOOP(erf, sfx, T, CT, LD, ST, erf(a))                                                        \
  MATH_LOOP(erfc, sfx, T, CT, LD, ST, erfc(a))                                                      \
  MATH_LOOP(sigmoid, sfx, T, CT, LD, ST, LOGISTIC(a))                                               \
  MATH_LOOP(silu, sfx, T, CT, LD, ST, a * LOGISTIC(a))                                              \
  MATH_LOOP(gelu, sfx, T, CT, LD, ST, a * (CT)0.5 * erfc(a * (CT)-M_SQRT1_2)) /* 1 + erf(z) = erfc(-z) */ \
  MATH_LOOP(gelu_tanh, sfx, T, CT, LD, ST, GELU_TANH(a))                                           \
  MATH_LOOP(sqrt, sfx, T, CT, LD, ST, sqrt(a))                                                      \
  MATH_LOOP(rsqrt, sfx, T, CT, LD, ST, (CT)1 / sqrt(a))                                             \
  MATH_LOOP(floor, sfx, T, CT, LD, ST, floor(a))                                                    \
  MATH_LOOP(ceil, sfx, T, CT, LD, ST, ceil(a))                                                      \
  MATH_LOOP(trunc, sfx, T, CT, LD, ST, trunc(a))                                                    \
  MATH_LOOP(round, sfx, T, CT, LD, ST, nearbyint(a))                                                \
  MATH_LOOP(frac, sfx, T, CT, LD, ST, a - trunc(a))
SK_FLOAT_TYPES(FLOAT_OPS)

#define INT_OPS(sfx, T, UT)                                                                  \
  SK_UNARY_LOOP(neg_##sfx, T, T, SK_ID, SK_ID, 0, 0, (T)(0 - (UT)a))                          \
  SK_UNARY_LOOP(abs_##sfx, T, T, SK_ID, SK_ID, 0, 0, (T)int_abs(a))                           \
  SK_UNARY_LOOP(sign_##sfx, T, T, SK_ID, SK_ID, 0, 0, (T)int_sign(a))                         \
  SK_UNARY_LOOP(square_##sfx, T, T, SK_ID, SK_ID, 0, 0, (T)((UT)a * (UT)a))                   \
  SK_UNARY_LOOP(clamp_##sfx, T, T, SK_ID, SK_ID, c->i, c->i2, (T)int_clamp(a, p, q))          \
  SK_UNARY_LOOP(copy_##sfx, T, T, SK_ID, SK_ID, 0, 0, a)                                      \
  SK_UNARY_LOOP(bitwise_not_##sfx, T, T, SK_ID, SK_ID, 0, 0, (T)~a)
SK_INT_TYPES(INT_OPS)

SK_UNARY_LOOP(copy_b, uint8_t, uint8_t, SK_ID, SK_ID, 0, 0, a)
SK_UNARY_LOOP(bitwise_not_b, uint8_t, uint8_t, SK_ID, SK_ID, 0, 0, (uint8_t)!a)

/* nan_to_num: the replacements, cast to T as PyTorch's static_cast<scalar_t>, default
** to 0 and T's largest and lowest finite values; other elements are copied as they are. */
typedef struct NanToNum { SkOptDouble nan, posinf, neginf; } NanToNum;
#define MAX_f32 FLT_MAX
#define MAX_f64 DBL_MAX
#define MAX_f16 65504.0f
#define MAX_bf16 0x1.fep127f
#define NAN_TO_NUM_LOOP(sfx, T, CT, LD, ST)                                                     \
  static void nan_to_num_##sfx(char **d, const int64_t *s, int64_t n, void *ctx) {              \
    const NanToNum *c = ctx;                                                                    \
    const T nv = ST((CT)(c->nan.has ? c->nan.v : 0));                                           \
    const T pv = ST(c->posinf.has ? (CT)c->posinf.v : MAX_##sfx);                               \
    const T mv = ST(c->neginf.has ? (CT)c->neginf.v : -MAX_##sfx);                              \
    const int64_t z = (int64_t)sizeof(T);                                                       \
    if (s[0] == z && s[1] == z) {                                                               \
      T *o = (T *)d[0];                                                                         \
      const T *x = (const T *)d[1];                                                             \
      for (int64_t i = 0; i < n; i++) {                                                         \
        CT a = LD(x[i]);                                                                        \
        o[i] = a != a ? nv : a == (CT)INFINITY ? pv : a == -(CT)INFINITY ? mv : x[i];           \
      }                                                                                         \
    } else                                                                                      \
      for (int64_t i = 0; i < n; i++) {                                                         \
        T t = *(const T *)(d[1] + i * s[1]);                                                    \
        CT a = LD(t);                                                                           \
        *(T *)(d[0] + i * s[0]) = a != a ? nv : a == (CT)INFINITY ? pv : a == -(CT)INFINITY ? mv : t; \
      }                                                                                         \
  }
SK_FLOAT_TYPES(NAN_TO_NUM_LOOP)

/* logical_not: bool out[i] = !in[i], in of type T. */
#define NOT_LOOP(sfx, T, LD)                                                                    \
  static void logical_not_##sfx(char **d, const int64_t *s, int64_t n, void *ctx) {             \
    (void)ctx;                                                                                  \
    if (s[0] == 1 && s[1] == (int64_t)sizeof(T)) {                                              \
      uint8_t *o = (uint8_t *)d[0];                                                             \
      const T *x = (const T *)d[1];                                                             \
      for (int64_t i = 0; i < n; i++) o[i] = LD(x[i]) == 0;                                     \
    } else                                                                                      \
      for (int64_t i = 0; i < n; i++) *(uint8_t *)(d[0] + i * s[0]) = LD(*(const T *)(d[1] + i * s[1])) == 0; \
  }
#define NOT_FLOAT(sfx, T, CT, LD, ST) NOT_LOOP(sfx, T, LD)
#define NOT_INT(sfx, T, UT) NOT_LOOP(sfx, T, SK_ID)
SK_FLOAT_TYPES(NOT_FLOAT)
SK_INT_TYPES(NOT_INT)
NOT_LOOP(b, uint8_t, SK_ID)
/* }==== */

/* {==== Tables ==== */
#define ALL_TABLE(p) SK_FLOAT_TABLE(p), SK_INT_TABLE(p), [SK_DTYPE_BOOL] = p##_b
static const SkLoopFn neg_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(neg), SK_INT_TABLE(neg)};
static const SkLoopFn abs_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(abs), SK_INT_TABLE(abs)};
static const SkLoopFn sign_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(sign), SK_INT_TABLE(sign), [SK_DTYPE_BOOL] = copy_b};
static const SkLoopFn square_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(square), SK_INT_TABLE(square)};
static const SkLoopFn clamp_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(clamp), SK_INT_TABLE(clamp)};
static const SkLoopFn round_dec_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(round_dec)};
static const SkLoopFn nan_to_num_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(nan_to_num), SK_INT_TABLE(copy),
                                                          [SK_DTYPE_BOOL] = copy_b};
static const SkLoopFn bitwise_not_loops[SK_DTYPE_COUNT] = {SK_INT_TABLE(bitwise_not), [SK_DTYPE_BOOL] = bitwise_not_b};
static const SkLoopFn logical_not_loops[SK_DTYPE_COUNT] = {ALL_TABLE(logical_not)};

/* Integers pass floor, ceil, trunc and round unchanged (bool does not: PyTorch's kernels refuse it). */
#define ROUNDING_TABLE(op) \
  static const SkLoopFn op##_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(op), SK_INT_TABLE(copy)};
ROUNDING_TABLE(floor)
ROUNDING_TABLE(ceil)
ROUNDING_TABLE(trunc)
ROUNDING_TABLE(round)
static const SkLoopFn round_float_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(round)};

#define FLOAT_TABLE(op) static const SkLoopFn op##_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(op)};
FLOAT_TABLE(reciprocal)
FLOAT_TABLE(exp) FLOAT_TABLE(exp2) FLOAT_TABLE(expm1)
FLOAT_TABLE(log) FLOAT_TABLE(log2) FLOAT_TABLE(log10) FLOAT_TABLE(log1p)
FLOAT_TABLE(sin) FLOAT_TABLE(cos) FLOAT_TABLE(tan) FLOAT_TABLE(asin) FLOAT_TABLE(acos) FLOAT_TABLE(atan)
FLOAT_TABLE(sinh) FLOAT_TABLE(cosh) FLOAT_TABLE(tanh) FLOAT_TABLE(asinh) FLOAT_TABLE(acosh) FLOAT_TABLE(atanh)
FLOAT_TABLE(erf) FLOAT_TABLE(erfc) FLOAT_TABLE(sigmoid) FLOAT_TABLE(silu) FLOAT_TABLE(gelu) FLOAT_TABLE(gelu_tanh)
FLOAT_TABLE(sqrt) FLOAT_TABLE(rsqrt) FLOAT_TABLE(frac)
/* }==== */

/* {==== Kernels ==== */
/* kname: PyTorch's kernel name, for "... not implemented for 'Bool'". */
#define UNARY_KERNEL(op, kname)                                                    \
  int sk_cpu_##op##_out(const SkMeta *m, const SkTensor *self, SkTensor *out) {    \
    (void)self; (void)out;                                                         \
    return sk_cpu_run(m, op##_loops, NULL, kname);                                 \
  }
UNARY_KERNEL(neg, "neg_cpu")
UNARY_KERNEL(abs, "abs_cpu")
UNARY_KERNEL(sign, "sign_cpu")
UNARY_KERNEL(square, "pow")
UNARY_KERNEL(reciprocal, "reciprocal_cpu")
UNARY_KERNEL(exp, "exp_vml_cpu")
UNARY_KERNEL(exp2, "exp2_cpu")
UNARY_KERNEL(expm1, "expm1_vml_cpu")
UNARY_KERNEL(log, "log_vml_cpu")
UNARY_KERNEL(log2, "log2_vml_cpu")
UNARY_KERNEL(log10, "log10_vml_cpu")
UNARY_KERNEL(log1p, "log1p_vml_cpu")
UNARY_KERNEL(sin, "sin_vml_cpu")
UNARY_KERNEL(cos, "cos_vml_cpu")
UNARY_KERNEL(tan, "tan_vml_cpu")
UNARY_KERNEL(asin, "asin_vml_cpu")
UNARY_KERNEL(acos, "acos_vml_cpu")
UNARY_KERNEL(atan, "atan_vml_cpu")
UNARY_KERNEL(sinh, "sinh_cpu")
UNARY_KERNEL(cosh, "cosh_cpu")
UNARY_KERNEL(tanh, "tanh_vml_cpu")
UNARY_KERNEL(asinh, "asinh_cpu")
UNARY_KERNEL(acosh, "acosh_cpu")
UNARY_KERNEL(atanh, "atanh_cpu")
UNARY_KERNEL(erf, "erf_vml_cpu")
UNARY_KERNEL(erfc, "erfc_vml_cpu")
UNARY_KERNEL(sigmoid, "sigmoid_cpu")
UNARY_KERNEL(silu, "silu_cpu")
UNARY_KERNEL(sqrt, "sqrt_vml_cpu")
UNARY_KERNEL(rsqrt, "rsqrt_cpu")
UNARY_KERNEL(floor, "floor_vml_cpu")
UNARY_KERNEL(ceil, "ceil_vml_cpu")
UNARY_KERNEL(trunc, "trunc_vml_cpu")
UNARY_KERNEL(round, "round_vml_cpu")
UNARY_KERNEL(frac, "frac_cpu")
UNARY_KERNEL(bitwise_not, "bitwise_not_cpu")

/* {==== gelu_backward: (grad_output, self) -> grad_input, PyTorch's GeluBackwardKernelImpl ====
** A contiguous float32/float64 run takes the vector loop, anything else the scalar formula. */
#define VEC2_f32(op) sk_cpu_vec_math()->f32_2[SK_VEC2_##op]
#define VEC2_f64(op) sk_cpu_vec_math()->f64_2[SK_VEC2_##op]
#define VEC2_f16(op) NULL
#define VEC2_bf16(op) NULL
#define MATH_LOOP2(op, sfx, T, CT, LD, ST, EXPR)                                  \
  SK_BINARY_LOOP(op##_##sfx##_scalar, T, CT, LD, ST, 0, EXPR)                     \
  static void op##_##sfx(char **d, const int64_t *s, int64_t n, void *ctx) {      \
    const int64_t z = (int64_t)sizeof(T);                                         \
    SkVecFn2 vec = s[0] == z && s[1] == z && s[2] == z ? VEC2_##sfx(op) : NULL;   \
    if (vec) vec(d[0], d[1], d[2], n);                                            \
    else op##_##sfx##_scalar(d, s, n, ctx);                                       \
  }
#define GELU_BACKWARD_OPS(sfx, T, CT, LD, ST)                                                      \
  MATH_LOOP2(gelu_backward, sfx, T, CT, LD, ST,                                                    \
             a * ((CT)0.5 * erfc(b * (CT)-M_SQRT1_2) +                                                \
                  b * (CT)(M_2_SQRTPI * M_SQRT1_2 * 0.5) * exp((CT)-0.5 * b * b)))                 \
  MATH_LOOP2(gelu_tanh_backward, sfx, T, CT, LD, ST, GELU_TANH_GRAD(a, b))
SK_FLOAT_TYPES(GELU_BACKWARD_OPS)
FLOAT_TABLE(gelu_backward) FLOAT_TABLE(gelu_tanh_backward)

int sk_cpu_gelu_backward_out(const SkMeta *m, const SkTensor *grad_output, const SkTensor *self, const char *approximate,
                             SkTensor *grad_input) {
  (void)grad_output; (void)self; (void)grad_input;
  int tanh_form = approximate && strcmp(approximate, "tanh") == 0;
  return sk_cpu_run(m, tanh_form ? gelu_tanh_backward_loops : gelu_backward_loops, NULL, "GeluBackwardKernelImpl");
}
/* }==== */

/* approximate is "none" or "tanh" (checked by sk_meta_gelu). */
int sk_cpu_gelu_out(const SkMeta *m, const SkTensor *self, const char *approximate, SkTensor *out) {
  (void)self; (void)out;
  int tanh_form = approximate && strcmp(approximate, "tanh") == 0;
  return sk_cpu_run(m, tanh_form ? gelu_tanh_loops : gelu_loops, NULL, "GeluKernelImpl");
}

/* PyTorch's round_decimals_kernel: x * 10^d rounded half to even, then / 10^d, in the compute
** type (a negative d divides first); d == 0 is round itself. Integers have no kernel for it. */
int sk_cpu_round_decimals_out(const SkMeta *m, const SkTensor *self, int64_t decimals, SkTensor *out) {
  (void)self; (void)out;
  if (decimals == 0) return sk_cpu_run(m, round_float_loops, NULL, "round_vml_cpu");
  /* 10^|d| in floating point: |d| taken as a double, so INT64_MIN is not negated; a huge |d|
  ** gives inf and the values nan, as in PyTorch */
  SkOpParams p = {pow(10.0, fabs((double)decimals)), 0, decimals < 0, 0};
  return sk_cpu_run(m, round_dec_loops, &p, "round_cpu");
}

int sk_cpu_nan_to_num_out(const SkMeta *m, const SkTensor *self, SkOptDouble nan, SkOptDouble posinf,
                          SkOptDouble neginf, SkTensor *out) {
  (void)self; (void)out;
  NanToNum p = {nan, posinf, neginf}; /* every dtype has a loop */
  sk_iter_for_each(m->iter, nan_to_num_loops[m->iter->common_dtype], &p);
  return 0;
}

int sk_cpu_logical_not_out(const SkMeta *m, const SkTensor *self, SkTensor *out) {
  (void)self; (void)out;
  sk_iter_for_each(m->iter, logical_not_loops[m->iter->ops[1]->dtype], NULL);
  return 0;
}

/* The range of each integer dtype: the bound an absent min or max stands for. */
static const int64_t int_lo[SK_DTYPE_COUNT] = {0, 0, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
static const int64_t int_hi[SK_DTYPE_COUNT] = {1, UINT8_MAX, INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};

int sk_cpu_clamp_out(const SkMeta *m, const SkTensor *self, SkScalar min, SkScalar max, SkTensor *out) {
  (void)self; (void)out;
  const SkTensorIter *it = m->iter;
  SkDType dt = it->common_dtype;
  SkOpParams p = {-INFINITY, INFINITY, int_lo[dt], int_hi[dt]};
  int k = 2; /* bounds follow self among the inputs */
  if (min.kind != SK_SCALAR_NONE) {
    const void *v = sk_tensor_data(it->ops[k++]);
    p.f = sk_load_double(v, dt);
    p.i = sk_load_int64(v, dt);
  }
  if (max.kind != SK_SCALAR_NONE) {
    const void *v = sk_tensor_data(it->ops[k]);
    p.f2 = sk_load_double(v, dt);
    p.i2 = sk_load_int64(v, dt);
  }
  return sk_cpu_run(m, clamp_loops, &p, "clamp_scalar_cpu");
}
/* }==== */
