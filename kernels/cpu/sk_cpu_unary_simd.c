/*
** sk_cpu_unary_simd.c — vector loops of the unary math ops, per instruction set, chosen at load
** Each loop is compiled for its instruction set with a target attribute, so
** the module itself needs nothing beyond baseline x86-64; a loop runs only
** after the CPU said it can (sk_cpu_vec_math() hands out the table of the
** level chosen at load). The formulas are those of the scalar loops in
** sk_cpu_unary.c, which are PyTorch's: transcendental functions are SLEEF's
** 1-ULP versions (erfc: 1.5 ULP), sqrt and rounding are exact instructions.
** float32 erf is sk's own (below): SLEEF's costs six exps here, and GELU is
** erf. The binary loops are gelu's gradients, (grad, self).
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
  ATTR static inline V F##_erfc(V x) { return SLEEF(erfc, u15)(x); }                                \
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

/* {==== erf and GELU ====
** float64 erf is SLEEF's. float32 erf is within 1.7 ULP over every float (1.698
** at 0.9674, from an exhaustive run against float64 erf; spec/unary_spec.lua sweeps a
** dense sample at every level), from two fits made for sk in double
** precision (Lawson-weighted least squares on Chebyshev points):
**   |x| < 1:      erf(x) = x + x·P(x²), P of degree 5, relative error 4e-8;
**   1 <= |x| < 4: erfc(|x|) = exp(Q(u) - x²), u = (|x| - 2.5)/1.5, Q of degree 8
**                 fitting log erfc(t) + t² to 1.2e-8; past 4, erf(x) rounds to ±1.
** NaN stays NaN. GELU's 1 + erf(z) has its own single formula (below). */
static const float erf_p[] = {1.283791214e-01f, -3.761232495e-01f, 1.128018126e-01f,
                              -2.671133541e-02f, 4.917575046e-03f, -5.631506792e-04f};
static const float erf_q[] = {-1.556815267e+00f, -5.290210247e-01f, 1.262393743e-01f,
                              -3.664739430e-02f, 1.096072514e-02f, -3.190689720e-03f,
                              8.822600357e-04f, -2.272721613e-04f, 4.100156002e-05f};
/* GELU's Φ(x) = (1 + erf(x/√2))/2 = e for x < 0 and 1 - e for x >= 0, e = erfc(t)/2 with
** t = |x|/√2; 0 below x = -4√2. One formula serves every lane (erf's two would cost GELU both
** per vector), and its two halves are independent, which shortens the chain the loop waits on:
** erfc(t) = exp(-t²)·R(t) over t in [0, 4], R(t) = erfc(t)·exp(t²) of degree 6 in
** w = 1/(1 + 0.4t) - 0.6923 (fitted for sk, Lawson-weighted least squares: relative error 2e-7
** with float32 coefficients, each refitted after the rounding of the ones before; gelu_rh
** holds them halved, exactly, for the /2). Everything is taken from x, not from a rounded t:
** 0.4t = (0.4/√2)|x|, and t² = x²/2 with x² = sq + sqlo split exactly; exp(-t²) is reduced over the doubled argument,
** so that no product halves it, the -sqlo taken in, then gelu_e's polynomial, and its 2^n
** goes into the exponent bits by an integer add (e stays above 2^-28). Low degrees and few
** products (19 a vector on the multiply pipes) keep the vector short: on a core that splits
** 256-bit ops (Zen 1) it is bound by how many fit in flight.
** Near x = 0 only the absolute error of e counts, since Φ is near 1/2 there.
** A NaN x gives a finite Φ, not NaN: GELU and its gradient multiply by x, which makes them NaN. */
static const float gelu_rh[] = {1.995146424e-01f, 6.302233338e-01f, 8.653898835e-01f, 7.551954985e-01f,
                                3.232283592e-01f, -5.950312689e-02f, -1.088783070e-01f};
/* exp(v/2) for v in [-ln2, ln2], degree 5 (fitted for sk like R: relative error 9.5e-8) */
static const float gelu_e[] = {1.0f, 4.999998510e-01f, 1.249978766e-01f, 2.083454654e-02f, 2.618623432e-03f,
                               2.590720542e-04f};
#define BC(V, c) ((V){} + (c)) /* a vector of copies of c (not for -0.0: 0 + -0 is +0) */

/* Primitives per float32 flavor: fma, |x|, min, a < b ? x : y, |r| with x's sign, NaN x kept,
** whether any lane of a < b. */
AVX512 static inline __m512 f32_512_fma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
AVX512 static inline __m512 f32_512_abs(__m512 x) { return _mm512_abs_ps(x); }
AVX512 static inline __m512 f32_512_min(__m512 a, __m512 b) { return _mm512_min_ps(a, b); }
AVX512 static inline __m512 f32_512_lt(__m512 a, __m512 b, __m512 x, __m512 y) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), y, x);
}
AVX512 static inline __m512 f32_512_copysign(__m512 r, __m512 x) {
  return _mm512_or_ps(r, _mm512_and_ps(x, _mm512_set1_ps(-0.0f)));
}
AVX512 static inline __m512 f32_512_keep_nan(__m512 x, __m512 r) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), r, x);
}
AVX512 static inline int f32_512_any_lt(__m512 a, __m512 b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ) != 0; }
AVX2 static inline int f32_256_any_lt(__m256 a, __m256 b) { return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ)) != 0; }
AVX2 static inline __m256 f32_256_fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
AVX2 static inline __m256 f32_256_abs(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
AVX2 static inline __m256 f32_256_min(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
AVX2 static inline __m256 f32_256_lt(__m256 a, __m256 b, __m256 x, __m256 y) {
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
}
AVX2 static inline __m256 f32_256_copysign(__m256 r, __m256 x) {
  return _mm256_or_ps(r, _mm256_and_ps(x, _mm256_set1_ps(-0.0f)));
}
AVX512 static inline __m512d f64_512_abs(__m512d x) { return _mm512_abs_pd(x); }
AVX512 static inline __m512d f64_512_lt(__m512d a, __m512d b, __m512d x, __m512d y) {
  return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_LT_OQ), y, x);
}
AVX2 static inline __m256d f64_256_abs(__m256d x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
AVX2 static inline __m256d f64_256_lt(__m256d a, __m256d b, __m256d x, __m256d y) {
  return _mm256_blendv_pd(y, x, _mm256_cmp_pd(a, b, _CMP_LT_OQ));
}
AVX2 static inline __m256 f32_256_keep_nan(__m256 x, __m256 r) {
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* exp(a) for a in [-87.3, 0] (erfc's argument here, softmax's), inline: a = n·ln2 + r with
** |r| <= ln2/2 (ln2 in two parts), exp(r) by a polynomial of degree 6 (fitted for sk: relative
** error 3.1e-9, float32 coefficients), and 2^n put into the exponent bits (n >= -126). */
static const float exp_c[] = {1.0f, 1.0f, 4.999999404e-01f, 1.666652113e-01f, 4.166826233e-02f, 8.368669078e-03f,
                              1.382102375e-03f};
AVX512 static inline __m512 f32_512_pow2i(__m512 n) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
}
AVX2 static inline __m256 f32_256_pow2i(__m256 n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
/* e·2^n for a whole n, by an add to e's exponent bits: e·2^n must be a normal float */
AVX512 static inline __m512 f32_512_scale2n(__m512 e, __m512 n) {
  return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(e), _mm512_slli_epi32(_mm512_cvtps_epi32(n), 23)));
}
AVX2 static inline __m256 f32_256_scale2n(__m256 e, __m256 n) {
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(e), _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23)));
}
#define EXP_NEG_F32(F, V, ATTR)                                                                     \
  ATTR static inline V F##_exp_red(V a, V *n) { /* exp(a) = result·2^n */                           \
    *n = F##_round(a * (float)M_LOG2E);                                                             \
    V r = F##_fma(*n, BC(V, -0.693145751953125f), a);                                               \
    r = F##_fma(*n, BC(V, -1.428606765330187e-06f), r);                                             \
    V r2 = r * r, r4 = r2 * r2; /* Estrin's scheme: half the dependent steps of Horner's */      \
    V p01 = F##_fma(r, BC(V, 1.0f), BC(V, 1.0f)), p23 = F##_fma(r, BC(V, exp_c[3]), BC(V, exp_c[2])); \
    V p45 = F##_fma(r, BC(V, exp_c[5]), BC(V, exp_c[4]));                                           \
    return F##_fma(F##_fma(BC(V, exp_c[6]), r2, p45), r4, F##_fma(p23, r2, p01));                   \
  }                                                                                                 \
  ATTR static inline V F##_exp_neg(V a) {                                                           \
    V n, p = F##_exp_red(a, &n);                                                                    \
    return p * F##_pow2i(n);                                                                        \
  }                                                                                                 \
  /* over the whole of a <= 0: subnormal results too (2^n for n < -126 as 2^(n + 25)·2^-25), 0     \
  ** below -104, NaN kept; the slow lanes only when a vector has one */                           \
  ATTR static inline V F##_exp_le0(V a) {                                                           \
    if (!F##_any_lt(a, BC(V, -87.33654f))) return F##_exp_neg(a); /* (NaN: p is NaN) */            \
    V n, p = F##_exp_red(F##_lt(a, BC(V, -104.0f), BC(V, -104.0f), a), &n);                         \
    V tiny = F##_lt(n, BC(V, -126.0f), BC(V, 2.98023224e-08f), BC(V, 1.0f));                        \
    V r = p * F##_pow2i(F##_lt(n, BC(V, -126.0f), n + 25.0f, n)) * tiny;                            \
    return F##_keep_nan(a, F##_lt(a, BC(V, -104.0f), BC(V, 0.0f), r));                              \
  }
EXP_NEG_F32(f32_512, __m512, AVX512)
EXP_NEG_F32(f32_256, __m256, AVX2)

#define ERF_F32(F, V, ATTR, SLEEF)                                                                  \
  ATTR static inline V F##_erf_small(V x) { /* |x| < 1; the polynomials by Estrin's scheme */      \
    V s = x * x, s2 = s * s;                                                                        \
    V p01 = F##_fma(s, BC(V, erf_p[1]), BC(V, erf_p[0])), p23 = F##_fma(s, BC(V, erf_p[3]), BC(V, erf_p[2])); \
    V p45 = F##_fma(s, BC(V, erf_p[5]), BC(V, erf_p[4]));                                           \
    return F##_fma(x, F##_fma(F##_fma(p45, s2, p23), s2, p01), x);                                  \
  }                                                                                                 \
  ATTR static inline V F##_erfc_mid(V t) { /* 1 <= t <= 4 */                                        \
    V u = F##_fma(t, BC(V, 1.0f / 1.5f), BC(V, -2.5f / 1.5f)), u2 = u * u, u4 = u2 * u2;            \
    V q01 = F##_fma(u, BC(V, erf_q[1]), BC(V, erf_q[0])), q23 = F##_fma(u, BC(V, erf_q[3]), BC(V, erf_q[2])); \
    V q45 = F##_fma(u, BC(V, erf_q[5]), BC(V, erf_q[4])), q67 = F##_fma(u, BC(V, erf_q[7]), BC(V, erf_q[6])); \
    V hi = F##_fma(u4, BC(V, erf_q[8]), F##_fma(q67, u2, q45));                                     \
    return F##_exp_neg(F##_fma(-t, t, F##_fma(hi, u4, F##_fma(q23, u2, q01))));                     \
  }                                                                                                 \
  ATTR static inline V F##_erf(V x) {                                                               \
    V t = F##_abs(x), big = F##_copysign(1.0f - F##_erfc_mid(F##_min(t, BC(V, 4.0f))), x);          \
    return F##_keep_nan(x, F##_lt(t, BC(V, 1.0f), F##_erf_small(x), big));                          \
  }                                                                                                 \
  ATTR static inline V F##_ncdf(V x) { /* Φ(x), one formula for every lane */                    \
    V xabs = F##_abs(x), xa = F##_min(xabs, BC(V, 5.656854153f)); /* t <= 4 (NaN: 4) */           \
    V w = BC(V, 1.0f) / F##_fma(xa, BC(V, 2.828427255e-01f), BC(V, 1.0f)) - BC(V, 0.692307711f);   \
    V w2 = w * w; /* R by second-order Horner: its even and odd halves in w² side by side */       \
    V re = F##_fma(F##_fma(F##_fma(BC(V, gelu_rh[6]), w2, BC(V, gelu_rh[4])), w2, BC(V, gelu_rh[2])), \
                   w2, BC(V, gelu_rh[0]));                                                           \
    V ro = F##_fma(F##_fma(BC(V, gelu_rh[5]), w2, BC(V, gelu_rh[3])), w2, BC(V, gelu_rh[1]));       \
    V r = F##_fma(ro, w, re);                                                                       \
    /* exp(-t²) = exp(v/2)·2^n with v = -sq - 2n·ln2 - sqlo: 2·ln2 in one float (3.8e-9 off, n <= 23: \
    ** 4.4e-8 of exp), n·2ln2 - sq rounded once by the fma */                                      \
    V sq = xa * xa, sqlo = F##_fma(xa, xa, -sq);                                                    \
    V n = F##_round(sq * BC(V, -0.721347511f));                                                     \
    V v = F##_fma(n, BC(V, -1.386294365f), -sq) - sqlo;                                             \
    /* Horner's scheme: with it this half's chain is as long as R's, which waits on the division */ \
    V p = F##_fma(F##_fma(F##_fma(F##_fma(F##_fma(BC(V, gelu_e[5]), v, BC(V, gelu_e[4])), v, BC(V, gelu_e[3])), \
                                  v, BC(V, gelu_e[2])), v, BC(V, gelu_e[1])), v, BC(V, gelu_e[0]));   \
    V e = F##_scale2n(p * r, n);                                                                    \
    return F##_lt(x, BC(V, 0.0f), F##_lt(xabs, BC(V, 5.656854153f), e, BC(V, 0.0f)), 1.0f - e);    \
  }
/* GELU tanh's 0.5·(1 + tanh(y)) is the logistic function of z = 2y: s = 1/(1 + e) for z >= 0 and
** e/(1 + e) below, e = exp(-|z|) <= 1, and s·(1 - s) = e/(1 + e)² (in *q), so nothing cancels
** (1 + tanh does for negative y, 1 - s for large z). */
#define LOGISTIC_F32(F, V, ATTR)                                                                    \
  ATTR static inline V F##_logistic(V z, V *q) {                                                    \
    V e = F##_exp_le0(-F##_abs(z)), d = 1.0f / (1.0f + e);                                          \
    if (q) *q = e * d * d;                                                                          \
    return F##_lt(z, BC(V, 0.0f), e, BC(V, 1.0f)) * d;                                              \
  }
LOGISTIC_F32(f32_512, __m512, AVX512)
LOGISTIC_F32(f32_256, __m256, AVX2)
ERF_F32(f32_512, __m512, AVX512, SLEEF_f32_512)
ERF_F32(f32_256, __m256, AVX2, SLEEF_f32_256)

#define ERF_F64(F, V, ATTR, SLEEF)                                                                  \
  ATTR static inline V F##_erf(V x) { return SLEEF(erf, u10)(x); }                                  \
  ATTR static inline V F##_ncdf(V x) { return 0.5 * SLEEF(erfc, u15)(x * -M_SQRT1_2); }              \
  ATTR static inline V F##_logistic(V z, V *q) {                                                    \
    V e = SLEEF(exp, u10)(-F##_abs(z)), d = 1.0 / (1.0 + e);                                        \
    if (q) *q = e * d * d;                                                                          \
    return F##_lt(z, (V){}, e, (V){} + 1.0) * d;                                                    \
  }
ERF_F64(f64_512, __m512d, AVX512, SLEEF_f64_512)
ERF_F64(f64_256, __m256d, AVX2, SLEEF_f64_256)

/* sigmoid, SiLU, and GELU and its gradients on Φ and the logistic function (above). */
#define GELU_BODIES(F, V, S, ATTR, SLEEF)                                                           \
  ATTR static inline V F##_sigmoid(V x) { return F##_logistic(x, NULL); }                          \
  ATTR static inline V F##_silu(V x) { return x * F##_logistic(x, NULL); }                         \
  ATTR static inline V F##_gelu(V x) { return x * F##_ncdf(x); }                                   \
  ATTR static inline V F##_gelu_tanh(V x) { /* x·logistic(2y), y = beta·(x + kappa·x³) */            \
    return x * F##_logistic(x * ((S)(2 * SK_GELU_BETA) + (S)(2 * SK_GELU_BETA * SK_GELU_KAPPA) * (x * x)), NULL); \
  }                                                                                                 \
  ATTR static inline V F##_gelu_backward(V g, V x) {                                                \
    V cdf = F##_ncdf(x);                                                                            \
    V pdf = (S)(M_2_SQRTPI * M_SQRT1_2 * 0.5) * SLEEF(exp, u10)((S)-0.5 * x * x);                   \
    return g * (cdf + x * pdf);                                                                     \
  }                                                                                                 \
  ATTR static inline V F##_gelu_tanh_backward(V g, V x) { /* 1 - tanh² = 4·s·(1 - s) */              \
    V x2 = x * x, q, s = F##_logistic(x * ((S)(2 * SK_GELU_BETA) + (S)(2 * SK_GELU_BETA * SK_GELU_KAPPA) * x2), &q); \
    V right = (S)(2 * SK_GELU_BETA) * x * q * ((S)1 + (S)(3 * SK_GELU_KAPPA) * x2);                 \
    return g * (s + right);                                                                         \
  }
GELU_BODIES(f32_512, __m512, float, AVX512, SLEEF_f32_512)
GELU_BODIES(f64_512, __m512d, double, AVX512, SLEEF_f64_512)
GELU_BODIES(f32_256, __m256, float, AVX2, SLEEF_f32_256)
GELU_BODIES(f64_256, __m256d, double, AVX2, SLEEF_f64_256)
/* }==== */

/* {==== Σ exp(x - shift), softmax's core ====
** y[i] = exp(x[i] - shift) (y NULL: only the sum; y may be x), the sum returned in double.
** The exponent is the inline exp_le0, over the whole of a <= 0. The sum runs in one vector of float
** lanes, moved into a double every 64 vectors, so a long row loses no more than a short one. */
#define EXPSUM_F32(F, V, ATTR)                                                                      \
  ATTR static double F##_expsum(float *y, const float *x, float shift, int64_t n) {                 \
    enum { W = sizeof(V) / sizeof(float) };                                                         \
    V acc = {0}, v;                                                                                 \
    double sum = 0;                                                                                 \
    int64_t i = 0;                                                                                  \
    for (int k = 1; i + W <= n; i += W, k++) {                                                      \
      memcpy(&v, x + i, sizeof v);                                                                  \
      v = F##_exp_le0(v - shift);                                                                   \
      if (y) memcpy(y + i, &v, sizeof v);                                                           \
      acc += v;                                                                                     \
      if (k % 64 == 0) {                                                                            \
        for (int j = 0; j < W; j++) sum += acc[j];                                                  \
        acc = (V){0};                                                                               \
      }                                                                                             \
    }                                                                                               \
    if (i < n) { /* the tail padded with -inf, whose exp is 0 */                                   \
      float buf[W];                                                                                 \
      for (int j = 0; j < W; j++) buf[j] = i + j < n ? x[i + j] : -INFINITY;                        \
      memcpy(&v, buf, sizeof v);                                                                    \
      v = F##_exp_le0(v - shift);                                                                   \
      memcpy(buf, &v, sizeof v);                                                                    \
      if (y) memcpy(y + i, buf, (size_t)(n - i) * sizeof(float));                                   \
      acc += v;                                                                                     \
    }                                                                                               \
    for (int j = 0; j < W; j++) sum += acc[j];                                                      \
    return sum;                                                                                     \
  }
EXPSUM_F32(f32_512, __m512, AVX512)
EXPSUM_F32(f32_256, __m256, AVX2)
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
/* The same with two inputs. */
#define VEC_LOOP2(F, op, V, S, ATTR)                                                  \
  ATTR static void F##_##op##_loop2(void *out, const void *in1, const void *in2, int64_t n) { \
    enum { W = sizeof(V) / sizeof(S) };                                               \
    S *o = out;                                                                       \
    const S *a = in1, *b = in2;                                                       \
    V u, v;                                                                           \
    int64_t i = 0;                                                                    \
    for (; i + W <= n; i += W) {                                                      \
      memcpy(&u, a + i, sizeof u);                                                    \
      memcpy(&v, b + i, sizeof v);                                                    \
      u = F##_##op(u, v);                                                             \
      memcpy(o + i, &u, sizeof u);                                                    \
    }                                                                                 \
    if (i < n) {                                                                      \
      S ba[W] = {0}, bb[W] = {0};                                                     \
      size_t rest = (size_t)(n - i) * sizeof(S);                                      \
      memcpy(ba, a + i, rest);                                                        \
      memcpy(bb, b + i, rest);                                                        \
      memcpy(&u, ba, sizeof u);                                                       \
      memcpy(&v, bb, sizeof v);                                                       \
      u = F##_##op(u, v);                                                             \
      memcpy(ba, &u, sizeof u);                                                       \
      memcpy(o + i, ba, rest);                                                        \
    }                                                                                 \
  }
#define LOOP_f32_512(op) VEC_LOOP(f32_512, op, __m512, float, AVX512)
#define LOOP_f64_512(op) VEC_LOOP(f64_512, op, __m512d, double, AVX512)
#define LOOP_f32_256(op) VEC_LOOP(f32_256, op, __m256, float, AVX2)
#define LOOP_f64_256(op) VEC_LOOP(f64_256, op, __m256d, double, AVX2)
SK_VEC_OPS(LOOP_f32_512)
SK_VEC_OPS(LOOP_f64_512)
SK_VEC_OPS(LOOP_f32_256)
SK_VEC_OPS(LOOP_f64_256)
#define LOOP2_f32_512(op) VEC_LOOP2(f32_512, op, __m512, float, AVX512)
#define LOOP2_f64_512(op) VEC_LOOP2(f64_512, op, __m512d, double, AVX512)
#define LOOP2_f32_256(op) VEC_LOOP2(f32_256, op, __m256, float, AVX2)
#define LOOP2_f64_256(op) VEC_LOOP2(f64_256, op, __m256d, double, AVX2)
SK_VEC_OPS2(LOOP2_f32_512)
SK_VEC_OPS2(LOOP2_f64_512)
SK_VEC_OPS2(LOOP2_f32_256)
SK_VEC_OPS2(LOOP2_f64_256)
/* }==== */

/* {==== Choosing the level ==== */
#define ENTRY_f32_512(op) [SK_VEC_##op] = f32_512_##op##_loop,
#define ENTRY_f64_512(op) [SK_VEC_##op] = f64_512_##op##_loop,
#define ENTRY_f32_256(op) [SK_VEC_##op] = f32_256_##op##_loop,
#define ENTRY_f64_256(op) [SK_VEC_##op] = f64_256_##op##_loop,
#define ENTRY2_f32_512(op) [SK_VEC2_##op] = f32_512_##op##_loop2,
#define ENTRY2_f64_512(op) [SK_VEC2_##op] = f64_512_##op##_loop2,
#define ENTRY2_f32_256(op) [SK_VEC2_##op] = f32_256_##op##_loop2,
#define ENTRY2_f64_256(op) [SK_VEC2_##op] = f64_256_##op##_loop2,
static const SkVecMath tables[] = {
  [SK_CPU_ISA_BASELINE] = {{NULL}, {NULL}, {NULL}, {NULL}, NULL},
  [SK_CPU_ISA_AVX2] = {{SK_VEC_OPS(ENTRY_f32_256)}, {SK_VEC_OPS(ENTRY_f64_256)},
                       {SK_VEC_OPS2(ENTRY2_f32_256)}, {SK_VEC_OPS2(ENTRY2_f64_256)}, f32_256_expsum},
  [SK_CPU_ISA_AVX512] = {{SK_VEC_OPS(ENTRY_f32_512)}, {SK_VEC_OPS(ENTRY_f64_512)},
                         {SK_VEC_OPS2(ENTRY2_f32_512)}, {SK_VEC_OPS2(ENTRY2_f64_512)}, f32_512_expsum},
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
