/*
** sk_cpu_binary.c — pointwise binary and ternary kernels: add, sub, mul, div,
** remainder, pow, fmod, atan2, hypot, maximum, minimum, bitwise_*, the shifts,
** lerp, addcmul, addcdiv, and the clamps by tensors and clamp_min / clamp_max
** One loop per (op, dtype), stamped out from sk_cpu_util.h's templates (and
** TERNARY_LOOP below) and chosen by the compute dtype through a table; the
** meta functions have refused the dtypes a table lacks. Integers compute in
** unsigned arithmetic (wrapping, never C UB) or through int64 helpers that
** handle INT_MIN / -1; shifts mask their count before shifting; integer
** division by zero is an error found by scanning the divisor before anything
** is written (a negative integer exponent is not: PyTorch's powi). NaN propagates through
** maximum, minimum and every clamp, from the input and from a bound.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"

#include <tgmath.h>

/* {==== Scalar helpers ==== */
#define DEF_FLOAT_HELPERS(CT, sfx)                                       \
  static inline CT floordiv_##sfx(CT a, CT b) {                          \
    if (b == 0) return a / b;                                            \
    CT mod = fmod(a, b), div = (a - mod) / b;                            \
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                      \
    if (div == 0) return copysign((CT)0, a / b);                         \
    CT fl = floor(div);                                                  \
    return div - fl > (CT)0.5 ? fl + 1 : fl;                             \
  }                                                                      \
  static inline CT pymod_##sfx(CT a, CT b) {                             \
    CT mod = fmod(a, b);                                                 \
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;                      \
    return mod;                                                          \
  }
DEF_FLOAT_HELPERS(float, f)
DEF_FLOAT_HELPERS(double, d)
#define FLOORDIV(a, b) _Generic((a), float: floordiv_f, default: floordiv_d)(a, b)
#define PYMOD(a, b) _Generic((a), float: pymod_f, default: pymod_d)(a, b)

/* b != 0 (checked by the caller); b == -1 wraps instead of trapping. */
static inline int64_t int_div_trunc(int64_t a, int64_t b) { return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; }

static inline int64_t int_div_floor(int64_t a, int64_t b) {
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b, r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? q - 1 : q;
}

static inline int64_t int_rem(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

/* C's fmod on integers: the sign of the dividend. b != 0 (checked by the caller); b == -1 gives 0, never traps. */
static inline int64_t int_fmod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

/* PyTorch's lerp: the form that is exact at the nearer end. */
#define DEF_LERP(CT, sfx)                                                            \
  static inline CT lerp_##sfx(CT a, CT b, CT w) {                                    \
    return fabs(w) < (CT)0.5 ? a + w * (b - a) : b - (b - a) * ((CT)1 - w);          \
  }
DEF_LERP(float, f)
DEF_LERP(double, d)
#define LERP(a, b, w) _Generic((a), float: lerp_f, default: lerp_d)(a, b, w)

/* Shifts as PyTorch's: a count outside [0, bits) gives 0 to the left and the sign
** fill to the right (0 for unsigned). The count is masked first, so no C UB. */
#define SHIFT_BITS(T) (8 * (int64_t)sizeof(T))
#define SHIFT_COUNT(b) ((uint64_t)(int64_t)(b))
#define LSHIFT(T, UT, a, b)                                                          \
  (SHIFT_COUNT(b) >= (uint64_t)SHIFT_BITS(T) ? (T)0                                 \
                                             : (T)((UT)(a) << (SHIFT_COUNT(b) & (uint64_t)(SHIFT_BITS(T) - 1))))
/* The largest useful right shift: bits - 1 for signed types (sign fill), bits for unsigned (0). */
#define RSHIFT_MAX(T) (SHIFT_BITS(T) - ((T)-1 < (T)0))
#define RSHIFT(T, a, b)                                                              \
  ((T)((a) >> (SHIFT_COUNT(b) < (uint64_t)RSHIFT_MAX(T) ? SHIFT_COUNT(b) : (uint64_t)RSHIFT_MAX(T))))

/* Clamps to a lower / upper bound. The float ones keep NaN from a (it fails both
** tests) and take it from a bound (lo != lo, hi != hi); min > max gives max. */
#define FCLAMP_LO(a, lo) ((a) < (lo) || (lo) != (lo) ? (lo) : (a))
#define FCLAMP_HI(a, hi) ((a) > (hi) || (hi) != (hi) ? (hi) : (a))
#define ICLAMP_LO(a, lo) ((a) < (lo) ? (lo) : (a))
#define ICLAMP_HI(a, hi) ((a) > (hi) ? (hi) : (a))

/* Wraps like repeated multiplication. A negative exponent (a Tensor exponent; the
** Scalar overloads refuse one) gives PyTorch's powi: 1 / base^-e truncated toward
** zero, i.e. 1 for base 1, -1 or 1 by parity for base -1, else 0. */
static inline int64_t int_pow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = (uint64_t)base;
  for (uint64_t k = (uint64_t)e; k; k >>= 1, b *= b)
    if (k & 1) r *= b;
  return (int64_t)r;
}
/* }==== */

/* {==== Loops ==== */
#define FLOAT_OPS(sfx, T, CT, LD, ST)                                                        \
  SK_BINARY_LOOP(add_##sfx, T, CT, LD, ST, c->f, a + p * b)                                  \
  SK_BINARY_LOOP(sub_##sfx, T, CT, LD, ST, c->f, a - p * b)                                  \
  SK_BINARY_LOOP(mul_##sfx, T, CT, LD, ST, 0, a * b)                                         \
  SK_BINARY_LOOP(div_##sfx, T, CT, LD, ST, 0, a / b)                                         \
  SK_BINARY_LOOP(divtrunc_##sfx, T, CT, LD, ST, 0, trunc(a / b))                             \
  SK_BINARY_LOOP(divfloor_##sfx, T, CT, LD, ST, 0, FLOORDIV(a, b))                           \
  SK_BINARY_LOOP(rem_##sfx, T, CT, LD, ST, 0, PYMOD(a, b))                                   \
  SK_BINARY_LOOP(pow_##sfx, T, CT, LD, ST, 0, pow(a, b))
SK_FLOAT_TYPES(FLOAT_OPS)

#define INT_OPS(sfx, T, UT)                                                                  \
  SK_BINARY_LOOP(add_##sfx, T, T, SK_ID, SK_ID, c->i, (T)((UT)a + (UT)p * (UT)b))            \
  SK_BINARY_LOOP(sub_##sfx, T, T, SK_ID, SK_ID, c->i, (T)((UT)a - (UT)p * (UT)b))            \
  SK_BINARY_LOOP(mul_##sfx, T, T, SK_ID, SK_ID, 0, (T)((UT)a * (UT)b))                       \
  SK_BINARY_LOOP(divtrunc_##sfx, T, T, SK_ID, SK_ID, 0, (T)int_div_trunc(a, b))              \
  SK_BINARY_LOOP(divfloor_##sfx, T, T, SK_ID, SK_ID, 0, (T)int_div_floor(a, b))              \
  SK_BINARY_LOOP(rem_##sfx, T, T, SK_ID, SK_ID, 0, (T)int_rem(a, b))                         \
  SK_BINARY_LOOP(pow_##sfx, T, T, SK_ID, SK_ID, 0, (T)int_pow(a, b))
SK_INT_TYPES(INT_OPS)

/* Bool: add is `or` (alpha as a bool), mul is `and`. */
SK_BINARY_LOOP(add_b, uint8_t, uint8_t, SK_ID, SK_ID, c->i != 0, (uint8_t)(a | (p & b)))
SK_BINARY_LOOP(mul_b, uint8_t, uint8_t, SK_ID, SK_ID, 0, (uint8_t)(a & b))

static const SkLoopFn add_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(add), SK_INT_TABLE(add), [SK_DTYPE_BOOL] = add_b};
static const SkLoopFn sub_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(sub), SK_INT_TABLE(sub)};
static const SkLoopFn mul_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(mul), SK_INT_TABLE(mul), [SK_DTYPE_BOOL] = mul_b};
static const SkLoopFn div_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(div)};
static const SkLoopFn divtrunc_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(divtrunc), SK_INT_TABLE(divtrunc)};
static const SkLoopFn divfloor_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(divfloor), SK_INT_TABLE(divfloor)};
static const SkLoopFn rem_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(rem), SK_INT_TABLE(rem)};
static const SkLoopFn pow_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(pow), SK_INT_TABLE(pow)};

/* A float power by one number that PyTorch computes without pow (and so gets its
** values: sqrt(-0) is -0, sqrt(-inf) NaN): the loop ignores the exponent operand.
** 1 is pow_backward's for a square. */
#define POW_SPECIAL(sfx, T, CT, LD, ST)                                                      \
  SK_BINARY_LOOP(pow1_##sfx, T, CT, LD, ST, 0, ((void)b, a))                                 \
  SK_BINARY_LOOP(pow2_##sfx, T, CT, LD, ST, 0, ((void)b, a * a))                             \
  SK_BINARY_LOOP(pow3_##sfx, T, CT, LD, ST, 0, ((void)b, a * a * a))                         \
  SK_BINARY_LOOP(powhalf_##sfx, T, CT, LD, ST, 0, ((void)b, sqrt(a)))                        \
  SK_BINARY_LOOP(powmhalf_##sfx, T, CT, LD, ST, 0, ((void)b, (CT)1 / sqrt(a)))               \
  SK_BINARY_LOOP(powm1_##sfx, T, CT, LD, ST, 0, ((void)b, (CT)1 / a))                        \
  SK_BINARY_LOOP(powm2_##sfx, T, CT, LD, ST, 0, ((void)b, (CT)1 / (a * a)))
SK_FLOAT_TYPES(POW_SPECIAL)
static const struct { double e; SkLoopFn loops[SK_DTYPE_COUNT]; } pow_special[] = {
  {1, {SK_FLOAT_TABLE(pow1)}},      {2, {SK_FLOAT_TABLE(pow2)}},     {3, {SK_FLOAT_TABLE(pow3)}},
  {0.5, {SK_FLOAT_TABLE(powhalf)}}, {-0.5, {SK_FLOAT_TABLE(powmhalf)}},
  {-1, {SK_FLOAT_TABLE(powm1)}},    {-2, {SK_FLOAT_TABLE(powm2)}},
};
/* }==== */

/* {==== Loops: fmod, atan2, hypot, maximum, minimum, bitwise, shifts, lerp.Scalar, clamp_min/max ====
** maximum and minimum keep a NaN operand (a != a). */
#define FLOAT_OPS2(sfx, T, CT, LD, ST)                                                       \
  SK_BINARY_LOOP(fmod_##sfx, T, CT, LD, ST, 0, fmod(a, b))                                   \
  SK_BINARY_LOOP(atan2_##sfx, T, CT, LD, ST, 0, atan2(a, b))                                 \
  SK_BINARY_LOOP(hypot_##sfx, T, CT, LD, ST, 0, hypot(a, b))                                 \
  SK_BINARY_LOOP(max_##sfx, T, CT, LD, ST, 0, a > b || a != a ? a : b)                       \
  SK_BINARY_LOOP(min_##sfx, T, CT, LD, ST, 0, a < b || a != a ? a : b)                       \
  SK_BINARY_LOOP(lerps_##sfx, T, CT, LD, ST, c->f, LERP(a, b, p))                            \
  SK_BINARY_LOOP(clampmin_##sfx, T, CT, LD, ST, 0, FCLAMP_LO(a, b))                          \
  SK_BINARY_LOOP(clampmax_##sfx, T, CT, LD, ST, 0, FCLAMP_HI(a, b))
SK_FLOAT_TYPES(FLOAT_OPS2)

#define INT_OPS2(sfx, T, UT)                                                                 \
  SK_BINARY_LOOP(fmod_##sfx, T, T, SK_ID, SK_ID, 0, (T)int_fmod(a, b))                       \
  SK_BINARY_LOOP(max_##sfx, T, T, SK_ID, SK_ID, 0, a > b ? a : b)                            \
  SK_BINARY_LOOP(min_##sfx, T, T, SK_ID, SK_ID, 0, a < b ? a : b)                            \
  SK_BINARY_LOOP(and_##sfx, T, T, SK_ID, SK_ID, 0, (T)(a & b))                               \
  SK_BINARY_LOOP(or_##sfx, T, T, SK_ID, SK_ID, 0, (T)(a | b))                                \
  SK_BINARY_LOOP(xor_##sfx, T, T, SK_ID, SK_ID, 0, (T)(a ^ b))                               \
  SK_BINARY_LOOP(lshift_##sfx, T, T, SK_ID, SK_ID, 0, LSHIFT(T, UT, a, b))                   \
  SK_BINARY_LOOP(rshift_##sfx, T, T, SK_ID, SK_ID, 0, RSHIFT(T, a, b))                       \
  SK_BINARY_LOOP(clampmin_##sfx, T, T, SK_ID, SK_ID, 0, ICLAMP_LO(a, b))                     \
  SK_BINARY_LOOP(clampmax_##sfx, T, T, SK_ID, SK_ID, 0, ICLAMP_HI(a, b))
SK_INT_TYPES(INT_OPS2)

/* Bool (0/1 bytes): the bitwise ops; maximum is also `or`, minimum `and`. */
SK_BINARY_LOOP(and_b, uint8_t, uint8_t, SK_ID, SK_ID, 0, (uint8_t)(a & b))
SK_BINARY_LOOP(or_b, uint8_t, uint8_t, SK_ID, SK_ID, 0, (uint8_t)(a | b))
SK_BINARY_LOOP(xor_b, uint8_t, uint8_t, SK_ID, SK_ID, 0, (uint8_t)(a ^ b))

static const SkLoopFn fmod_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(fmod), SK_INT_TABLE(fmod)};
static const SkLoopFn atan2_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(atan2)};
static const SkLoopFn hypot_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(hypot)};
static const SkLoopFn max_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(max), SK_INT_TABLE(max), [SK_DTYPE_BOOL] = or_b};
static const SkLoopFn min_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(min), SK_INT_TABLE(min), [SK_DTYPE_BOOL] = and_b};
static const SkLoopFn and_loops[SK_DTYPE_COUNT] = {SK_INT_TABLE(and), [SK_DTYPE_BOOL] = and_b};
static const SkLoopFn or_loops[SK_DTYPE_COUNT] = {SK_INT_TABLE(or), [SK_DTYPE_BOOL] = or_b};
static const SkLoopFn xor_loops[SK_DTYPE_COUNT] = {SK_INT_TABLE(xor), [SK_DTYPE_BOOL] = xor_b};
static const SkLoopFn lshift_loops[SK_DTYPE_COUNT] = {SK_INT_TABLE(lshift)};
static const SkLoopFn rshift_loops[SK_DTYPE_COUNT] = {SK_INT_TABLE(rshift)};
static const SkLoopFn lerps_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(lerps)};
/* Bool clamps by one tensor bound are maximum / minimum (PyTorch); Scalar bounds refuse bool in the meta. */
static const SkLoopFn clampmin_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(clampmin), SK_INT_TABLE(clampmin),
                                                        [SK_DTYPE_BOOL] = or_b};
static const SkLoopFn clampmax_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(clampmax), SK_INT_TABLE(clampmax),
                                                        [SK_DTYPE_BOOL] = and_b};
/* }==== */

/* {==== Ternary loops: lerp.Tensor, addcmul, addcdiv, clamp by two tensors ==== */
/* out = EXPR(a, b, c, p) over operands out, a, b, c; p = (CT)(PARAM) from SkOpParams *cx.
** Paths: all flat; c a broadcast scalar; b and c broadcast scalars; strided. */
#define TERNARY_LOOP(name, T, CT, LD, ST, PARAM, EXPR)                                      \
  SK_CLONES static void name(char **d, const int64_t *s, int64_t n, void *ctx) {                      \
    const SkOpParams *cx = ctx;                                                             \
    const CT p = (CT)(PARAM);                                                               \
    const int64_t z = (int64_t)sizeof(T);                                                   \
    T *o = (T *)d[0];                                                                       \
    const T *x = (const T *)d[1], *y = (const T *)d[2], *v = (const T *)d[3];               \
    (void)cx; (void)p;                                                                      \
    if (s[0] == z && s[1] == z && s[2] == z && s[3] == z)                                   \
      for (int64_t i = 0; i < n; i++) {                                                     \
        CT a = LD(x[i]), b = LD(y[i]), c = LD(v[i]);                                        \
        o[i] = ST(EXPR);                                                                    \
      }                                                                                     \
    else if (s[0] == z && s[1] == z && s[2] == z && s[3] == 0) {                            \
      const CT c = LD(*v);                                                                  \
      for (int64_t i = 0; i < n; i++) { CT a = LD(x[i]), b = LD(y[i]); o[i] = ST(EXPR); }   \
    } else if (s[0] == z && s[1] == z && s[2] == 0 && s[3] == 0) {                          \
      const CT b = LD(*y), c = LD(*v);                                                      \
      for (int64_t i = 0; i < n; i++) { CT a = LD(x[i]); o[i] = ST(EXPR); }                 \
    } else                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                     \
        CT a = LD(*(const T *)(d[1] + i * s[1])), b = LD(*(const T *)(d[2] + i * s[2]));    \
        CT c = LD(*(const T *)(d[3] + i * s[3]));                                           \
        *(T *)(d[0] + i * s[0]) = ST(EXPR);                                                 \
      }                                                                                     \
  }

#define FLOAT_OPS3(sfx, T, CT, LD, ST)                                                       \
  TERNARY_LOOP(lerpt_##sfx, T, CT, LD, ST, 0, LERP(a, b, c))                                 \
  TERNARY_LOOP(addcmul_##sfx, T, CT, LD, ST, cx->f, a + p * b * c)                           \
  TERNARY_LOOP(addcdiv_##sfx, T, CT, LD, ST, cx->f, a + p * b / c)                           \
  TERNARY_LOOP(clamp3_##sfx, T, CT, LD, ST, 0, FCLAMP_HI(FCLAMP_LO(a, b), c))
SK_FLOAT_TYPES(FLOAT_OPS3)

#define INT_OPS3(sfx, T, UT)                                                                 \
  TERNARY_LOOP(addcmul_##sfx, T, T, SK_ID, SK_ID, cx->i, (T)((UT)a + (UT)p * (UT)b * (UT)c)) \
  TERNARY_LOOP(clamp3_##sfx, T, T, SK_ID, SK_ID, 0, ICLAMP_HI(ICLAMP_LO(a, b), c))
SK_INT_TYPES(INT_OPS3)

static const SkLoopFn lerpt_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(lerpt)};
static const SkLoopFn addcmul_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(addcmul), SK_INT_TABLE(addcmul)};
static const SkLoopFn addcdiv_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(addcdiv)};
static const SkLoopFn clamp3_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(clamp3), SK_INT_TABLE(clamp3)};
/* }==== */

/* {==== Checks before writing ==== */
/* Integer division (and remainder, fmod) by zero is an error, as PyTorch's ZeroDivisionError. */
static int check_divisor(const SkMeta *m, const char *msg) {
  SkDType dt = m->iter->common_dtype;
  if (sk_dtype_is_integral(dt) && m->iter->numel > 0 && sk_cpu_any_zero(m->iter->ops[2])) return sk_error("%s", msg);
  return 0;
}
/* }==== */

/* {==== Kernels ==== */
static SkOpParams alpha_params(SkScalar alpha) {
  SkOpParams p = {sk_scalar_to_double(alpha), 0, sk_scalar_to_int(alpha), 0};
  return p;
}

int sk_cpu_add_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha, SkTensor *out) {
  (void)self; (void)other; (void)out;
  SkOpParams p = alpha_params(alpha);
  return sk_cpu_run(m, add_loops, &p, "add_cpu");
}

int sk_cpu_sub_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha, SkTensor *out) {
  (void)self; (void)other; (void)out;
  SkOpParams p = alpha_params(alpha);
  return sk_cpu_run(m, sub_loops, &p, "sub_cpu");
}

int sk_cpu_mul_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) {
  (void)self; (void)other; (void)out;
  return sk_cpu_run(m, mul_loops, NULL, "mul_cpu");
}

int sk_cpu_div_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) {
  (void)self; (void)other; (void)out;
  return sk_cpu_run(m, div_loops, NULL, "div_true_cpu");
}

int sk_cpu_div_out_mode(const SkMeta *m, const SkTensor *self, const SkTensor *other, const char *rounding_mode,
                        SkTensor *out) {
  (void)self; (void)other; (void)out;
  if (!rounding_mode) return sk_cpu_run(m, div_loops, NULL, "div_true_cpu");
  int floor_mode = strcmp(rounding_mode, "floor") == 0;
  if (check_divisor(m, floor_mode ? "ZeroDivisionError (integer floor division // by zero in argument 'other')"
                                  : "ZeroDivisionError (integer division by zero in argument 'other')"))
    return -1;
  return floor_mode ? sk_cpu_run(m, divfloor_loops, NULL, "div_floor_cpu")
                    : sk_cpu_run(m, divtrunc_loops, NULL, "div_trunc_cpu");
}

int sk_cpu_remainder_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) {
  (void)self; (void)other; (void)out;
  if (check_divisor(m, "ZeroDivisionError (integer remainder % by zero in argument 'other')")) return -1;
  return sk_cpu_run(m, rem_loops, NULL, "remainder_cpu");
}

int sk_cpu_pow_out(const SkMeta *m, const SkTensor *self, const SkTensor *exponent, SkTensor *out) {
  (void)self; (void)out;
  if (exponent->numel == 1 && sk_dtype_is_floating(m->iter->common_dtype)) {
    double e = sk_load_double(sk_tensor_data(exponent), exponent->dtype);
    for (size_t i = 0; i < sizeof pow_special / sizeof pow_special[0]; i++)
      if (pow_special[i].e == e) return sk_cpu_run(m, pow_special[i].loops, NULL, "pow");
  }
  return sk_cpu_run(m, pow_loops, NULL, "pow");
}

int sk_cpu_fmod_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) {
  (void)self; (void)other; (void)out;
  if (check_divisor(m, "ZeroDivisionError (integer fmod by zero in argument 'other')")) return -1;
  return sk_cpu_run(m, fmod_loops, NULL, "fmod_cpu");
}

/* Kernels that only pick a table: the meta function has checked everything. */
#define TABLE_KERNEL(name, table, kname)                                                          \
  int sk_cpu_##name(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) { \
    (void)self; (void)other; (void)out;                                                           \
    return sk_cpu_run(m, table, NULL, kname);                                                     \
  }
TABLE_KERNEL(atan2_out, atan2_loops, "atan2_cpu")
TABLE_KERNEL(hypot_out, hypot_loops, "hypot_cpu")
TABLE_KERNEL(maximum_out, max_loops, "maximum_cpu")
TABLE_KERNEL(minimum_out, min_loops, "minimum_cpu")
TABLE_KERNEL(bitwise_and_out, and_loops, "bitwise_and_cpu")
TABLE_KERNEL(bitwise_or_out, or_loops, "bitwise_or_cpu")
TABLE_KERNEL(bitwise_xor_out, xor_loops, "bitwise_xor_cpu")
TABLE_KERNEL(bitwise_left_shift_out, lshift_loops, "lshift_cpu")
TABLE_KERNEL(bitwise_right_shift_out, rshift_loops, "rshift_cpu")
TABLE_KERNEL(clamp_min_Tensor_bound_out, clampmin_loops, "clamp_min_cpu")
TABLE_KERNEL(clamp_max_Tensor_bound_out, clampmax_loops, "clamp_max_cpu")
#undef TABLE_KERNEL

/* The Scalar bound is iterator operand 2, a wrapped number (see sk_meta_clamp_min). */
int sk_cpu_clamp_min_out(const SkMeta *m, const SkTensor *self, SkScalar min, SkTensor *out) {
  (void)self; (void)min; (void)out;
  return sk_cpu_run(m, clampmin_loops, NULL, "clamp_min_cpu");
}

int sk_cpu_clamp_max_out(const SkMeta *m, const SkTensor *self, SkScalar max, SkTensor *out) {
  (void)self; (void)max; (void)out;
  return sk_cpu_run(m, clampmax_loops, NULL, "clamp_max_scalar_cpu");
}

/* The bounds present follow self among the inputs (see sk_meta_clamp_Tensor_bound). */
int sk_cpu_clamp_Tensor_bound_out(const SkMeta *m, const SkTensor *self, const SkTensor *min, const SkTensor *max,
                                  SkTensor *out) {
  (void)self; (void)out;
  if (min && max) return sk_cpu_run(m, clamp3_loops, NULL, "clamp_cpu");
  return sk_cpu_run(m, min ? clampmin_loops : clampmax_loops, NULL, min ? "clamp_min_cpu" : "clamp_max_cpu");
}

int sk_cpu_lerp_Scalar(const SkMeta *m, const SkTensor *self, const SkTensor *end, SkScalar weight, SkTensor *out) {
  (void)self; (void)end; (void)out;
  SkOpParams p = {sk_scalar_to_double(weight), 0, 0, 0};
  return sk_cpu_run(m, lerps_loops, &p, "lerp_kernel_scalar");
}

int sk_cpu_lerp_Tensor(const SkMeta *m, const SkTensor *self, const SkTensor *end, const SkTensor *weight,
                       SkTensor *out) {
  (void)self; (void)end; (void)weight; (void)out;
  return sk_cpu_run(m, lerpt_loops, NULL, "lerp_kernel_tensor");
}

int sk_cpu_addcmul_out(const SkMeta *m, const SkTensor *self, const SkTensor *tensor1, const SkTensor *tensor2,
                       SkScalar value, SkTensor *out) {
  (void)self; (void)tensor1; (void)tensor2; (void)out;
  SkOpParams p = alpha_params(value);
  return sk_cpu_run(m, addcmul_loops, &p, "addcmul_cpu_out");
}

int sk_cpu_addcdiv_out(const SkMeta *m, const SkTensor *self, const SkTensor *tensor1, const SkTensor *tensor2,
                       SkScalar value, SkTensor *out) {
  (void)self; (void)tensor1; (void)tensor2; (void)out;
  SkOpParams p = alpha_params(value);
  return sk_cpu_run(m, addcdiv_loops, &p, "addcdiv_cpu_out");
}
/* }==== */
