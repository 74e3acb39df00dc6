/*
** sk_cpu_unary_simd.c — vector loops of the unary math ops, per instruction set, chosen at load
** Each loop is compiled for its instruction set with a target attribute, so
** the module itself needs nothing beyond baseline x86-64; a loop runs only
** after the CPU said it can (sk_cpu_vec_math() hands out the table of the
** level chosen at load). The formulas are those of the scalar loops in
** sk_cpu_unary.c, which are PyTorch's: transcendental functions are SLEEF's
** 1-ULP versions (erfc: 1.5 ULP), sqrt and rounding are exact instructions.
** Arithmetic on vectors uses GCC's vector operators (__m512 & co. are GCC
** vectors), a scalar operand standing for a vector of copies.
** A tail shorter than a vector goes through a zero-padded buffer, so every
** element of a tensor takes the same path.
*/
#include "sk_cpu_isa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>
/* sleef.h declares its AVX2 and AVX-512 functions only where the compiler
** targets them: declare them all, compile nothing with them here but the
** target-attributed functions below. */
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512dq")
#include <sleef.h>
#pragma GCC pop_options
#ifndef __FP_FAST_FMA /* sleef.h claims a fast fma for the whole file; only the AVX2 loops have one */
#undef FP_FAST_FMA
#undef FP_FAST_FMAF
#endif

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f,avx512dq")))

/* Immediates of the rounding instructions: mode | _MM_FROUND_NO_EXC. */
#define RND_NEAREST 8 /* to nearest, ties to even: nearbyint */
#define RND_FLOOR 9
#define RND_CEIL 10
#define RND_TRUNC 11

/* {==== One op on one vector ====
** F: flavor (dtype and instruction set); V, S: vector and scalar types;
** SLEEF(op, ulp): the SLEEF function of the flavor; SQRT, ROUND(x, mode): instructions. */
#define SLEEF_f32_512(op, u) Sleef_##op##f16_##u##avx512f
#define SLEEF_f64_512(op, u) Sleef_##op##d8_##u##avx512f
#define SLEEF_f32_256(op, u) Sleef_##op##f8_##u##avx2
#define SLEEF_f64_256(op, u) Sleef_##op##d4_##u##avx2

#define VEC_BODIES(F, V, S, ATTR, SLEEF, SQRT, ROUND)                                                 \
  ATTR static inline V F##_exp(V x) { return SLEEF(exp, u10)(x); }                                  \
  ATTR static inline V F##_exp2(V x) { return SLEEF(exp2, u10)(x); }                                \
  ATTR static inline V F##_expm1(V x) { return SLEEF(expm1, u10)(x); }                              \
  ATTR static inline V F##_log(V x) { return SLEEF(log, u10)(x); }                                  \
  ATTR static inline V F##_log2(V x) { return SLEEF(log2, u10)(x); }                                \
  ATTR static inline V F##_log10(V x) { return SLEEF(log10, u10)(x); }                              \
  ATTR static inline V F##_log1p(V x) { return SLEEF(log1p, u10)(x); }                              \
  ATTR static inline V F##_sin(V x) { return SLEEF(sin, u10)(x); }                                  \
  ATTR static inline V F##_cos(V x) { return SLEEF(cos, u10)(x); }                                  \
  ATTR static inline V F##_tan(V x) { return SLEEF(tan, u10)(x); }                                  \
  ATTR static inline V F##_asin(V x) { return SLEEF(asin, u10)(x); }                                \
  ATTR static inline V F##_acos(V x) { return SLEEF(acos, u10)(x); }                                \
  ATTR static inline V F##_atan(V x) { return SLEEF(atan, u10)(x); }                                \
  ATTR static inline V F##_sinh(V x) { return SLEEF(sinh, u10)(x); }                                \
  ATTR static inline V F##_cosh(V x) { return SLEEF(cosh, u10)(x); }                                \
  ATTR static inline V F##_tanh(V x) { return SLEEF(tanh, u10)(x); }                                \
  ATTR static inline V F##_asinh(V x) { return SLEEF(asinh, u10)(x); }                              \
  ATTR static inline V F##_acosh(V x) { return SLEEF(acosh, u10)(x); }                              \
  ATTR static inline V F##_atanh(V x) { return SLEEF(atanh, u10)(x); }                              \
  ATTR static inline V F##_erf(V x) { return SLEEF(erf, u10)(x); }                                  \
  ATTR static inline V F##_erfc(V x) { return SLEEF(erfc, u15)(x); }                                \
  ATTR static inline V F##_sigmoid(V x) { return (S)1 / ((S)1 + SLEEF(exp, u10)(-x)); }             \
  ATTR static inline V F##_silu(V x) { return x / ((S)1 + SLEEF(exp, u10)(-x)); }                   \
  ATTR static inline V F##_gelu(V x) {                                                               \
    return x * (S)0.5 * ((S)1 + SLEEF(erf, u10)(x * (S)M_SQRT1_2));                                  \
  }                                                                                                  \
  ATTR static inline V F##_gelu_tanh(V x) {                                                          \
    return (S)0.5 * x * ((S)1 + SLEEF(tanh, u10)((S)SK_GELU_BETA * (x + (S)SK_GELU_KAPPA * (x * x * x)))); \
  }                                                                                                  \
  ATTR static inline V F##_sqrt(V x) { return SQRT(x); }                                            \
  ATTR static inline V F##_rsqrt(V x) { return (S)1 / SQRT(x); }                                    \
  ATTR static inline V F##_floor(V x) { return ROUND(x, RND_FLOOR); }                               \
  ATTR static inline V F##_ceil(V x) { return ROUND(x, RND_CEIL); }                                 \
  ATTR static inline V F##_trunc(V x) { return ROUND(x, RND_TRUNC); }                               \
  ATTR static inline V F##_round(V x) { return ROUND(x, RND_NEAREST); }                             \
  ATTR static inline V F##_frac(V x) { return x - ROUND(x, RND_TRUNC); }

VEC_BODIES(f32_512, __m512, float, AVX512, SLEEF_f32_512, _mm512_sqrt_ps, _mm512_roundscale_ps)
VEC_BODIES(f64_512, __m512d, double, AVX512, SLEEF_f64_512, _mm512_sqrt_pd, _mm512_roundscale_pd)
VEC_BODIES(f32_256, __m256, float, AVX2, SLEEF_f32_256, _mm256_sqrt_ps, _mm256_round_ps)
VEC_BODIES(f64_256, __m256d, double, AVX2, SLEEF_f64_256, _mm256_sqrt_pd, _mm256_round_pd)
/* }==== */

/* {==== Loops over n elements ==== */
#define VEC_LOOP(F, op, V, S, ATTR)                                          \
  ATTR static void F##_##op##_loop(void *out, const void *in, int64_t n) {  \
    enum { W = sizeof(V) / sizeof(S) };                                      \
    S *o = out;                                                              \
    const S *x = in;                                                         \
    V v;                                                                     \
    int64_t i = 0;                                                           \
    for (; i + W <= n; i += W) {                                             \
      memcpy(&v, x + i, sizeof v);                                           \
      v = F##_##op(v);                                                       \
      memcpy(o + i, &v, sizeof v);                                           \
    }                                                                        \
    if (i < n) {                                                             \
      S buf[W] = {0};                                                        \
      size_t rest = (size_t)(n - i) * sizeof(S);                             \
      memcpy(buf, x + i, rest);                                              \
      memcpy(&v, buf, sizeof v);                                             \
      v = F##_##op(v);                                                       \
      memcpy(buf, &v, sizeof v);                                             \
      memcpy(o + i, buf, rest);                                              \
    }                                                                        \
  }
#define LOOP_f32_512(op) VEC_LOOP(f32_512, op, __m512, float, AVX512)
#define LOOP_f64_512(op) VEC_LOOP(f64_512, op, __m512d, double, AVX512)
#define LOOP_f32_256(op) VEC_LOOP(f32_256, op, __m256, float, AVX2)
#define LOOP_f64_256(op) VEC_LOOP(f64_256, op, __m256d, double, AVX2)
SK_VEC_OPS(LOOP_f32_512)
SK_VEC_OPS(LOOP_f64_512)
SK_VEC_OPS(LOOP_f32_256)
SK_VEC_OPS(LOOP_f64_256)
/* }==== */

/* {==== Choosing the level ==== */
#define ENTRY_f32_512(op) [SK_VEC_##op] = f32_512_##op##_loop,
#define ENTRY_f64_512(op) [SK_VEC_##op] = f64_512_##op##_loop,
#define ENTRY_f32_256(op) [SK_VEC_##op] = f32_256_##op##_loop,
#define ENTRY_f64_256(op) [SK_VEC_##op] = f64_256_##op##_loop,
static const SkVecMath tables[] = {
  [SK_CPU_ISA_BASELINE] = {{NULL}, {NULL}},
  [SK_CPU_ISA_AVX2] = {{SK_VEC_OPS(ENTRY_f32_256)}, {SK_VEC_OPS(ENTRY_f64_256)}},
  [SK_CPU_ISA_AVX512] = {{SK_VEC_OPS(ENTRY_f32_512)}, {SK_VEC_OPS(ENTRY_f64_512)}},
};
static const char *const names[] = {"baseline", "avx2", "avx512"};

static SkCpuIsa level = SK_CPU_ISA_BASELINE;

static SkCpuIsa detect(void) {
  __builtin_cpu_init(); /* we may run before libgcc's own constructor */
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return SK_CPU_ISA_AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SK_CPU_ISA_AVX2;
  return SK_CPU_ISA_BASELINE;
}

/* Once, when the module loads, before any kernel can run; an unknown SK_CPU_ISA is ignored. */
__attribute__((constructor)) static void choose_level(void) {
  SkCpuIsa best = detect();
  const char *want = getenv("SK_CPU_ISA");
  level = best;
  for (int l = 0; want && l < (int)best; l++)
    if (strcmp(want, names[l]) == 0) level = (SkCpuIsa)l;
}

const char *sk_cpu_isa(void) { return names[level]; }
SkCpuIsa sk_cpu_isa_level(void) { return level; }
const SkVecMath *sk_cpu_vec_math(void) { return &tables[level]; }
/* }==== */
