/*
** sk_cpu_compare.c — comparison kernels: eq, ne, lt, le, gt, ge
** Inputs have the compute dtype, output 0 is bool (stored as 0/1 bytes);
** an out of another dtype sits behind an iterator temporary. Half types
** compare in float; NaN compares false except for ne.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"

/* out = (uint8_t)(a OP b) with a flat, two scalar-broadcast and a strided path. */
#define CMP_LOOP(name, T, CT, LD, OP)                                                      \
  static void name(char **d, const int64_t *s, int64_t n, void *ctx) {                     \
    const int64_t z = (int64_t)sizeof(T);                                                  \
    uint8_t *o = (uint8_t *)d[0];                                                          \
    const T *x = (const T *)d[1], *y = (const T *)d[2];                                    \
    (void)ctx;                                                                             \
    if (s[0] == 1 && s[1] == z && s[2] == z)                                               \
      for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)(LD(x[i]) OP LD(y[i]));              \
    else if (s[0] == 1 && s[1] == z && s[2] == 0) {                                        \
      const CT b = LD(*y);                                                                 \
      for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)(LD(x[i]) OP b);                     \
    } else if (s[0] == 1 && s[1] == 0 && s[2] == z) {                                      \
      const CT a = LD(*x);                                                                 \
      for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)(a OP LD(y[i]));                     \
    } else                                                                                 \
      for (int64_t i = 0; i < n; i++)                                                      \
        *(uint8_t *)(d[0] + i * s[0]) =                                                    \
            (uint8_t)(LD(*(const T *)(d[1] + i * s[1])) OP LD(*(const T *)(d[2] + i * s[2]))); \
  }

#define CMP_FLOAT(sfx, T, CT, LD, ST)                                                      \
  CMP_LOOP(eq_##sfx, T, CT, LD, ==) CMP_LOOP(ne_##sfx, T, CT, LD, !=)                      \
  CMP_LOOP(lt_##sfx, T, CT, LD, <) CMP_LOOP(le_##sfx, T, CT, LD, <=)                       \
  CMP_LOOP(gt_##sfx, T, CT, LD, >) CMP_LOOP(ge_##sfx, T, CT, LD, >=)
SK_FLOAT_TYPES(CMP_FLOAT)

#define CMP_INT(sfx, T, UT) CMP_FLOAT(sfx, T, T, SK_ID, SK_ID)
SK_INT_TYPES(CMP_INT)
CMP_INT(b, uint8_t, uint32_t)

#define CMP_TABLE(op) {SK_FLOAT_TABLE(op), SK_INT_TABLE(op), [SK_DTYPE_BOOL] = op##_b}
static const SkLoopFn eq_loops[SK_DTYPE_COUNT] = CMP_TABLE(eq);
static const SkLoopFn ne_loops[SK_DTYPE_COUNT] = CMP_TABLE(ne);
static const SkLoopFn lt_loops[SK_DTYPE_COUNT] = CMP_TABLE(lt);
static const SkLoopFn le_loops[SK_DTYPE_COUNT] = CMP_TABLE(le);
static const SkLoopFn gt_loops[SK_DTYPE_COUNT] = CMP_TABLE(gt);
static const SkLoopFn ge_loops[SK_DTYPE_COUNT] = CMP_TABLE(ge);

#define CMP_KERNEL(op)                                                                           \
  int sk_cpu_##op##_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) { \
    (void)self; (void)other; (void)out;                                                          \
    return sk_cpu_run(m, op##_loops, NULL, #op "_cpu");                                         \
  }
CMP_KERNEL(eq)
CMP_KERNEL(ne)
CMP_KERNEL(lt)
CMP_KERNEL(le)
CMP_KERNEL(gt)
CMP_KERNEL(ge)
