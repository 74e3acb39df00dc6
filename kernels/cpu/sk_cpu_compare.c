/*
** sk_cpu_compare.c — kernels with a bool result: eq, ne, lt, le, gt, ge (with a
** Tensor or a Scalar, which is a wrapped-number operand), logical_and/or/xor
** Inputs have the compute dtype, output 0 is bool (stored as 0/1 bytes);
** an out of another dtype sits behind an iterator temporary. Half types
** compare in float; NaN compares false except for ne, and is true as a
** logical value (it is not 0).
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"

/* out = (uint8_t)(EXPR) of a, b (type CT) with a flat, two scalar-broadcast and a strided path. */
#define BOOL_LOOP(name, T, CT, LD, EXPR)                                                   \
  SK_CLONES static void name(char **d, const int64_t *s, int64_t n, void *ctx) {                     \
    const int64_t z = (int64_t)sizeof(T);                                                  \
    uint8_t *o = (uint8_t *)d[0];                                                          \
    const T *x = (const T *)d[1], *y = (const T *)d[2];                                    \
    (void)ctx;                                                                             \
    if (s[0] == 1 && s[1] == z && s[2] == z)                                               \
      for (int64_t i = 0; i < n; i++) { CT a = LD(x[i]), b = LD(y[i]); o[i] = (uint8_t)(EXPR); } \
    else if (s[0] == 1 && s[1] == z && s[2] == 0) {                                        \
      const CT b = LD(*y);                                                                 \
      for (int64_t i = 0; i < n; i++) { CT a = LD(x[i]); o[i] = (uint8_t)(EXPR); }         \
    } else if (s[0] == 1 && s[1] == 0 && s[2] == z) {                                      \
      const CT a = LD(*x);                                                                 \
      for (int64_t i = 0; i < n; i++) { CT b = LD(y[i]); o[i] = (uint8_t)(EXPR); }         \
    } else                                                                                 \
      for (int64_t i = 0; i < n; i++) {                                                    \
        CT a = LD(*(const T *)(d[1] + i * s[1])), b = LD(*(const T *)(d[2] + i * s[2]));   \
        *(uint8_t *)(d[0] + i * s[0]) = (uint8_t)(EXPR);                                   \
      }                                                                                    \
  }
#define CMP_LOOP(name, T, CT, LD, OP) BOOL_LOOP(name, T, CT, LD, a OP b)

#define CMP_FLOAT(sfx, T, CT, LD, ST)                                                      \
  CMP_LOOP(eq_##sfx, T, CT, LD, ==) CMP_LOOP(ne_##sfx, T, CT, LD, !=)                      \
  CMP_LOOP(lt_##sfx, T, CT, LD, <) CMP_LOOP(le_##sfx, T, CT, LD, <=)                       \
  CMP_LOOP(gt_##sfx, T, CT, LD, >) CMP_LOOP(ge_##sfx, T, CT, LD, >=)
SK_FLOAT_TYPES(CMP_FLOAT)

#define CMP_INT(sfx, T, UT) CMP_FLOAT(sfx, T, T, SK_ID, SK_ID)
SK_INT_TYPES(CMP_INT)
CMP_INT(b, uint8_t, uint32_t)

/* logical_*: `a != 0` is the truth of a number (NaN is true, -0.0 false). */
#define LOGIC_FLOAT(sfx, T, CT, LD, ST)                                                    \
  BOOL_LOOP(land_##sfx, T, CT, LD, (a != 0) & (b != 0))                                    \
  BOOL_LOOP(lor_##sfx, T, CT, LD, (a != 0) | (b != 0))                                     \
  BOOL_LOOP(lxor_##sfx, T, CT, LD, (a != 0) ^ (b != 0))
SK_FLOAT_TYPES(LOGIC_FLOAT)
#define LOGIC_INT(sfx, T, UT) LOGIC_FLOAT(sfx, T, T, SK_ID, SK_ID)
SK_INT_TYPES(LOGIC_INT)
LOGIC_INT(b, uint8_t, uint32_t)

#define CMP_TABLE(op) {SK_FLOAT_TABLE(op), SK_INT_TABLE(op), [SK_DTYPE_BOOL] = op##_b}
static const SkLoopFn eq_loops[SK_DTYPE_COUNT] = CMP_TABLE(eq);
static const SkLoopFn ne_loops[SK_DTYPE_COUNT] = CMP_TABLE(ne);
static const SkLoopFn lt_loops[SK_DTYPE_COUNT] = CMP_TABLE(lt);
static const SkLoopFn le_loops[SK_DTYPE_COUNT] = CMP_TABLE(le);
static const SkLoopFn gt_loops[SK_DTYPE_COUNT] = CMP_TABLE(gt);
static const SkLoopFn ge_loops[SK_DTYPE_COUNT] = CMP_TABLE(ge);
static const SkLoopFn land_loops[SK_DTYPE_COUNT] = CMP_TABLE(land);
static const SkLoopFn lor_loops[SK_DTYPE_COUNT] = CMP_TABLE(lor);
static const SkLoopFn lxor_loops[SK_DTYPE_COUNT] = CMP_TABLE(lxor);

/* The Scalar overloads run the same loops: their `other` is operand 2, a wrapped number. */
#define CMP_KERNEL(op)                                                                           \
  int sk_cpu_##op##_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) { \
    (void)self; (void)other; (void)out;                                                          \
    return sk_cpu_run(m, op##_loops, NULL, #op "_cpu");                                         \
  }                                                                                              \
  int sk_cpu_##op##_Scalar_out(const SkMeta *m, const SkTensor *self, SkScalar other, SkTensor *out) { \
    (void)self; (void)other; (void)out;                                                          \
    return sk_cpu_run(m, op##_loops, NULL, #op "_cpu");                                         \
  }
CMP_KERNEL(eq)
CMP_KERNEL(ne)
CMP_KERNEL(lt)
CMP_KERNEL(le)
CMP_KERNEL(gt)
CMP_KERNEL(ge)

#define LOGIC_KERNEL(op, table)                                                                  \
  int sk_cpu_##op##_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) { \
    (void)self; (void)other; (void)out;                                                          \
    return sk_cpu_run(m, table, NULL, #op "_cpu");                                              \
  }
LOGIC_KERNEL(logical_and, land_loops)
LOGIC_KERNEL(logical_or, lor_loops)
LOGIC_KERNEL(logical_xor, lxor_loops)
