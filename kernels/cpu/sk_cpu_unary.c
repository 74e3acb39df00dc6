/*
** sk_cpu_unary.c — pointwise unary kernels: neg, abs, exp, log, sqrt, tanh, sigmoid, clamp
** exp..sigmoid run on floating compute dtypes only (their meta promotes
** integers to float32). Integer neg/abs wrap (abs(INT_MIN) == INT_MIN).
** clamp reads its bounds, already cast to the compute dtype, from iterator
** operands 2 and 3 (see sk_meta_clamp); NaN propagates from the input and
** from a bound, and min > max gives max.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"

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

static inline uint64_t int_abs(int64_t a) { return a < 0 ? 0 - (uint64_t)a : (uint64_t)a; }

static inline int64_t int_clamp(int64_t a, int64_t lo, int64_t hi) {
  int64_t x = a < lo ? lo : a;
  return x > hi ? hi : x;
}
/* }==== */

/* {==== Loops ==== */
#define FLOAT_OPS(sfx, T, CT, LD, ST)                                                      \
  SK_UNARY_LOOP(neg_##sfx, T, CT, LD, ST, 0, 0, -a)                                        \
  SK_UNARY_LOOP(abs_##sfx, T, CT, LD, ST, 0, 0, fabs(a))                                   \
  SK_UNARY_LOOP(exp_##sfx, T, CT, LD, ST, 0, 0, exp(a))                                    \
  SK_UNARY_LOOP(log_##sfx, T, CT, LD, ST, 0, 0, log(a))                                    \
  SK_UNARY_LOOP(sqrt_##sfx, T, CT, LD, ST, 0, 0, sqrt(a))                                  \
  SK_UNARY_LOOP(tanh_##sfx, T, CT, LD, ST, 0, 0, tanh(a))                                  \
  SK_UNARY_LOOP(sigmoid_##sfx, T, CT, LD, ST, 0, 0, (CT)1 / ((CT)1 + exp(-a)))             \
  SK_UNARY_LOOP(clamp_##sfx, T, CT, LD, ST, c->f, c->f2, FCLAMP(a, p, q))
SK_FLOAT_TYPES(FLOAT_OPS)

#define INT_OPS(sfx, T, UT)                                                                \
  SK_UNARY_LOOP(neg_##sfx, T, T, SK_ID, SK_ID, 0, 0, (T)(0 - (UT)a))                        \
  SK_UNARY_LOOP(abs_##sfx, T, T, SK_ID, SK_ID, 0, 0, (T)int_abs(a))                           \
  SK_UNARY_LOOP(clamp_##sfx, T, T, SK_ID, SK_ID, c->i, c->i2, (T)int_clamp(a, p, q))
SK_INT_TYPES(INT_OPS)

static const SkLoopFn neg_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(neg), SK_INT_TABLE(neg)};
static const SkLoopFn abs_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(abs), SK_INT_TABLE(abs)};
static const SkLoopFn exp_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(exp)};
static const SkLoopFn log_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(log)};
static const SkLoopFn sqrt_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(sqrt)};
static const SkLoopFn tanh_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(tanh)};
static const SkLoopFn sigmoid_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(sigmoid)};
static const SkLoopFn clamp_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(clamp), SK_INT_TABLE(clamp)};
/* }==== */

/* {==== Kernels ==== */
#define UNARY_KERNEL(op)                                                           \
  int sk_cpu_##op##_out(const SkMeta *m, const SkTensor *self, SkTensor *out) {    \
    (void)self; (void)out;                                                         \
    return sk_cpu_run(m, op##_loops, NULL, #op "_cpu");                            \
  }
UNARY_KERNEL(neg)
UNARY_KERNEL(abs)
UNARY_KERNEL(exp)
UNARY_KERNEL(log)
UNARY_KERNEL(sqrt)
UNARY_KERNEL(tanh)
UNARY_KERNEL(sigmoid)

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
