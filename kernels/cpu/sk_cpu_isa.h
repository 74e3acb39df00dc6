/*
** sk_cpu_isa.h — the instruction set the CPU kernels use, and the vector math loops
** The level is chosen once, when the module loads: the best of baseline
** x86-64, AVX2+FMA and AVX-512 (F, DQ) that the CPU and OS support, lowered
** (never raised) by the environment variable SK_CPU_ISA=baseline|avx2|avx512.
** At each level above baseline, every SK_VEC_OPS op has a loop over n
** contiguous float32 or float64 elements (SLEEF's 1-ULP functions, or exact
** vector instructions; float32 erf is sk's own, within 2 ULP); out may equal in. At baseline there is none (NULL)
** and the kernels run their scalar libm loops.
*/
#ifndef SK_CPU_ISA_H
#define SK_CPU_ISA_H

#include <stdint.h>

typedef enum SkCpuIsa { SK_CPU_ISA_BASELINE, SK_CPU_ISA_AVX2, SK_CPU_ISA_AVX512 } SkCpuIsa;

/* "baseline", "avx2" or "avx512": the level in use. */
const char *sk_cpu_isa(void);
SkCpuIsa sk_cpu_isa_level(void);

/* The ops that have vector loops, as the names of their scalar formulas in sk_cpu_unary.c. */
#define SK_VEC_OPS(X)                                                                           \
  X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p)                                      \
  X(sin) X(cos) X(tan) X(asin) X(acos) X(atan)                                                  \
  X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh)                                            \
  X(erf) X(erfc) X(sigmoid) X(silu) X(gelu) X(gelu_tanh) X(sqrt) X(rsqrt)                       \
  X(floor) X(ceil) X(trunc) X(round) X(frac)

typedef enum SkVecOp {
#define SK_VEC_ENUM(op) SK_VEC_##op,
  SK_VEC_OPS(SK_VEC_ENUM)
#undef SK_VEC_ENUM
  SK_VEC_COUNT
} SkVecOp;

/* The binary ones, out = op(a, b): the gradients of gelu, (grad, self). */
#define SK_VEC_OPS2(X) X(gelu_backward) X(gelu_tanh_backward)

typedef enum SkVecOp2 {
#define SK_VEC_ENUM(op) SK_VEC2_##op,
  SK_VEC_OPS2(SK_VEC_ENUM)
#undef SK_VEC_ENUM
  SK_VEC2_COUNT
} SkVecOp2;

/* gelu's constants, PyTorch's kBeta = sqrt(2/pi) and kKappa, for the scalar and vector formulas. */
#define SK_GELU_BETA (M_SQRT2 * M_2_SQRTPI * 0.5)
#define SK_GELU_KAPPA 0.044715

/* out[i] = op(in[i]) for i < n, in one dtype. */
typedef void (*SkVecFn)(void *out, const void *in, int64_t n);
/* out[i] = op(a[i], b[i]) for i < n, in one dtype. */
typedef void (*SkVecFn2)(void *out, const void *a, const void *b, int64_t n);

/* y[i] = exp(x[i] - shift) for i < n (y NULL: none stored; y may be x), returning Σ y[i]:
** softmax's core, for shift >= every x[i]. */
typedef double (*SkVecExpSum)(float *y, const float *x, float shift, int64_t n);

typedef struct SkVecMath {
  SkVecFn f32[SK_VEC_COUNT], f64[SK_VEC_COUNT];
  SkVecFn2 f32_2[SK_VEC2_COUNT], f64_2[SK_VEC2_COUNT];
  SkVecExpSum expsum_f32;
} SkVecMath;

/* The loops of the level in use (all NULL at baseline). */
const SkVecMath *sk_cpu_vec_math(void);

#endif
