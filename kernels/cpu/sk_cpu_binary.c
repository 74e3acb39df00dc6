/*
** sk_cpu_binary.c — pointwise binary kernels: add, sub, mul, div, remainder, pow
** One loop per (op, dtype), stamped out from sk_cpu_util.h's templates and
** chosen by the compute dtype through a table. Integers compute in unsigned
** arithmetic (wrapping, never C UB) or through int64 helpers that handle
** INT_MIN / -1; integer division by zero and negative integer exponents are
** errors found by scanning the operand before anything is written.
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

/* e >= 0 (checked by the caller); wraps like repeated multiplication. */
static inline int64_t int_pow(int64_t base, int64_t e) {
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
/* }==== */

/* {==== Checks before writing ==== */
/* Integer division (and remainder) by zero is an error, as PyTorch's ZeroDivisionError. */
static int check_divisor(const SkMeta *m) {
  SkDType dt = m->iter->common_dtype;
  if (sk_dtype_is_integral(dt) && sk_cpu_any_zero(m->iter->ops[2])) return sk_error("division by zero");
  return 0;
}

typedef struct { SkDType dt; int found; } NegScan;

static void negative_row(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  NegScan *ns = ctx;
  (void)first;
  for (int64_t i = 0; i < n && !ns->found; i++, p += st) ns->found = sk_load_int64(p, ns->dt) < 0;
}

/* Integer pow needs exponents >= 0. */
static int check_exponent(const SkMeta *m) {
  const SkTensor *e = m->iter->ops[2];
  NegScan ns = {e->dtype, 0};
  if (!sk_dtype_is_integral(e->dtype) || e->dtype == SK_DTYPE_UINT8 || e->numel == 0) return 0;
  SkWalk w;
  sk_walk_init(&w, e, 1);
  sk_walk_range(&w, w.data, 0, w.numel, negative_row, &ns);
  return ns.found ? sk_error("Integers to negative integer powers are not allowed.") : 0;
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
  if (check_divisor(m)) return -1;
  return floor_mode ? sk_cpu_run(m, divfloor_loops, NULL, "div_floor_cpu")
                    : sk_cpu_run(m, divtrunc_loops, NULL, "div_trunc_cpu");
}

int sk_cpu_remainder_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) {
  (void)self; (void)other; (void)out;
  if (check_divisor(m)) return -1;
  return sk_cpu_run(m, rem_loops, NULL, "remainder_cpu");
}

int sk_cpu_pow_out(const SkMeta *m, const SkTensor *self, const SkTensor *exponent, SkTensor *out) {
  (void)self; (void)exponent; (void)out;
  if (check_exponent(m)) return -1;
  return sk_cpu_run(m, pow_loops, NULL, "pow");
}
/* }==== */
