/*
** sk_cpu_reduce.c — reductions: sum, mean, prod, amax, amin, argmax, argmin,
** max/min with indices, var, std, norm, logsumexp, all, any
** The input splits into kept dims (one per output element) and reduced dims,
** each coalesced and walked in logical order, so that arg indices are flat
** logical indices and ties keep the first. A Reducer folds elements into
** accumulators: in double for floating inputs, in wrapping uint64 for integer
** sums and products, in int64 for integer extrema, (value, index) for the
** arg reductions, (count, mean, M2) for var/std (blocks of two passes merged
** with Chan's formula; Welford along columns), (max, Σexp(x - max)) for
** logsumexp. NaN wins every extremum; ties keep the first index.
** Strategies: rows (the reduced run is contiguous, or nothing better: one
** accumulator per output, LANES partial accumulators over a contiguous run so
** that the loop vectorizes), columns (the kept run is contiguous: a block of up
** to COLS accumulators advanced row by row, so a reduction over an outer dim
** reads whole rows in memory order), and split (few outputs, long reductions:
** fixed chunks reduced in parallel and combined in order — the same result for
** any thread count). Results go to the outputs, or to contiguous temporaries
** copied in.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

#include <math.h>
#include <stdlib.h>

#define LANES 8                  /* partial accumulators over a contiguous run */
#define COLS 2048                /* accumulators of one column block */
#define VAR_BLOCK 4096           /* elements of one two-pass block of var/std */
#define SPLIT_CHUNK 32768        /* elements of one chunk in split mode */
#define SPLIT_MAX_OUT 8          /* split only when there are at most this many outputs */

/* Where finish writes: output 0 (values, or the only result), output 1 (max/min's indices). */
typedef struct RedOut {
  char *data[2];
  SkDType dtype;                 /* of data[0] */
  size_t size;                   /* its element size */
  double prm;                    /* mean's divisor, var's correction, norm's p */
} RedOut;

typedef struct Reducer {
  void (*init)(void *acc, int64_t k);
  void (*row)(void *acc, const char *p, int64_t n, int64_t st, int64_t first, double prm);   /* n elements into acc[0] */
  void (*cols)(void *acc, const char *p, int64_t k, int64_t st, int64_t index, double prm);  /* element j into acc[j] */
  void (*combine)(void *acc, const void *later);                                            /* acc[0] (+)= later[0] */
  void (*finish)(const void *acc, int64_t k, const RedOut *o, int64_t pos);                 /* outputs pos.. pos+k */
  size_t acc_size;
} Reducer;

typedef struct { union { double f; int64_t i; } v; int64_t idx; } ArgAcc;
typedef struct { double n, mean, m2; } VarAcc;
typedef struct { double m, s; } LseAcc;

/* {==== Folds ==== */
/* x replaces m as the maximum (minimum): NaN wins; TAKE also keeps the first of equal or NaN values. */
#define FMAX(m, x) ((x) > (m) || (x) != (x) ? (x) : (m))
#define FMIN(m, x) ((x) < (m) || (x) != (x) ? (x) : (m))
#define IMAX(m, x) ((x) > (m) ? (x) : (m))
#define IMIN(m, x) ((x) < (m) ? (x) : (m))
#define FTAKE_MAX(x, m) ((m) == (m) && ((x) > (m) || (x) != (x)))
#define FTAKE_MIN(x, m) ((m) == (m) && ((x) < (m) || (x) != (x)))
#define ITAKE_MAX(x, m) ((x) > (m))
#define ITAKE_MIN(x, m) ((x) < (m))

#define ADD(a, v) ((a) + (v))
#define MUL(a, v) ((a) * (v))
#define AND(a, v) ((a) & (int64_t)((v) != 0))
#define OR(a, v) ((a) | (int64_t)((v) != 0))
#define ABS_ADD(a, v) ((a) + fabs(v))
#define SQ_ADD(a, v) ((a) + (v) * (v))
#define NZ_ADD(a, v) ((a) + (double)((v) != 0))
#define POW_ADD(a, v) ((a) + pow(fabs(v), prm))
#define ABS_MAX(a, v) FMAX(a, fabs(v))
#define ABS_MIN(a, v) FMIN(a, fabs(v))

/* acc (type A) = STEP(acc, v) over a row, v = (V)LD(element); a contiguous run folds into LANES
** partial accumulators started at INIT and merged with MERGE. */
#define FOLD_ROW(name, T, LD, V, A, INIT, STEP, MERGE)                                           \
  SK_CLONES static void name(void *acc, const char *p, int64_t n, int64_t st, int64_t first, double prm) { \
    A r = *(A *)acc;                                                                             \
    int64_t i = 0;                                                                               \
    (void)first; (void)prm;                                                                      \
    if (st == (int64_t)sizeof(T) && n >= 2 * LANES) {                                            \
      const T *x = (const T *)p;                                                                 \
      A l[LANES];                                                                                \
      for (int j = 0; j < LANES; j++) l[j] = (INIT);                                             \
      for (; i + LANES <= n; i += LANES)                                                         \
        for (int j = 0; j < LANES; j++) { V v = (V)LD(x[i + j]); l[j] = STEP(l[j], v); }         \
      for (int j = 0; j < LANES; j++) r = MERGE(r, l[j]);                                        \
    }                                                                                            \
    for (; i < n; i++) { V v = (V)LD(*(const T *)(p + i * st)); r = STEP(r, v); }                \
    *(A *)acc = r;                                                                               \
  }

/* acc[j] = STEP(acc[j], element j) for the k outputs of a column block. */
#define FOLD_COLS(name, T, LD, V, A, STEP)                                                       \
  SK_CLONES static void name(void *acc, const char *p, int64_t k, int64_t st, int64_t index, double prm) { \
    A *a = acc;                                                                                  \
    (void)index; (void)prm;                                                                      \
    if (st == (int64_t)sizeof(T)) {                                                              \
      const T *x = (const T *)p;                                                                 \
      for (int64_t j = 0; j < k; j++) { V v = (V)LD(x[j]); a[j] = STEP(a[j], v); }               \
    } else                                                                                       \
      for (int64_t j = 0; j < k; j++, p += st) { V v = (V)LD(*(const T *)p); a[j] = STEP(a[j], v); } \
  }

/* max/min of floats: the contiguous run keeps NaN out of the lanes (so they vectorize as plain
** max/min) and remembers whether it saw one; the result is NaN if it did, as PyTorch's. */
#define FOLD_EXT_ROW(name, T, LD, CT, INIT, CMP, TAKE)                                           \
  SK_CLONES static void name(void *acc, const char *p, int64_t n, int64_t st, int64_t first, double prm) { \
    double r = *(double *)acc;                                                                   \
    int64_t i = 0;                                                                               \
    (void)first; (void)prm;                                                                      \
    if (st == (int64_t)sizeof(T) && n >= 2 * LANES) {                                            \
      const T *x = (const T *)p;                                                                 \
      CT l[LANES]; /* max/min are exact in the compute type: no need to widen */               \
      int nan[LANES];                                                                            \
      for (int j = 0; j < LANES; j++) { l[j] = (CT)(INIT); nan[j] = 0; }                         \
      for (; i + LANES <= n; i += LANES)                                                         \
        for (int j = 0; j < LANES; j++) {                                                        \
          CT v = (CT)LD(x[i + j]);                                                               \
          l[j] = v CMP l[j] ? v : l[j];                                                          \
          nan[j] |= v != v;                                                                      \
        }                                                                                        \
      int any = 0;                                                                               \
      for (int j = 0; j < LANES; j++) { r = TAKE(r, (double)l[j]); any |= nan[j]; }              \
      if (any) r = NAN;                                                                          \
    }                                                                                            \
    for (; i < n; i++) { double v = (double)LD(*(const T *)(p + i * st)); r = TAKE(r, v); }      \
    *(double *)acc = r;                                                                          \
  }

#define FOLD(op, sfx, T, LD, V, A, INIT, STEP, MERGE)         \
  FOLD_ROW(op##_row_##sfx, T, LD, V, A, INIT, STEP, MERGE)    \
  FOLD_COLS(op##_cols_##sfx, T, LD, V, A, STEP)

/* (value, index) folds: the first index of the winning value. */
#define ARG_LOOPS(op, sfx, T, LD, F, V, TAKE)                                                      \
  static void op##_row_##sfx(void *acc, const char *p, int64_t n, int64_t st, int64_t first, double prm) { \
    ArgAcc *a = acc;                                                                               \
    (void)prm;                                                                                     \
    for (int64_t i = 0; i < n; i++, p += st) {                                                     \
      V x = (V)LD(*(const T *)p);                                                                  \
      if (a->idx < 0 || TAKE(x, a->v.F)) { a->v.F = x; a->idx = first + i; }                      \
    }                                                                                              \
  }                                                                                                \
  static void op##_cols_##sfx(void *acc, const char *p, int64_t k, int64_t st, int64_t index, double prm) { \
    ArgAcc *a = acc;                                                                               \
    (void)prm;                                                                                     \
    for (int64_t j = 0; j < k; j++, p += st) {                                                     \
      V x = (V)LD(*(const T *)p);                                                                  \
      if (a[j].idx < 0 || TAKE(x, a[j].v.F)) { a[j].v.F = x; a[j].idx = index; }                   \
    }                                                                                              \
  }
/* }==== */

/* {==== var/std and logsumexp accumulators ==== */
/* Chan's merge of (nb, mb, m2b) into a. */
static void var_merge(VarAcc *a, double nb, double mb, double m2b) {
  if (nb == 0) return;
  if (a->n == 0) { a->n = nb; a->mean = mb; a->m2 = m2b; return; }
  double n = a->n + nb, d = mb - a->mean;
  a->mean += d * (nb / n);
  a->m2 += m2b + d * d * (a->n * nb / n);
  a->n = n;
}

/* Merges a partial (m, s) — s = Σ exp(x - m) — into a; NaN sticks, ±inf maxima need no exp. */
static void lse_merge(LseAcc *a, double m, double s) {
  if (a->m != a->m || m == -INFINITY) return;
  if (m != m || a->m == -INFINITY) { a->m = m; a->s = s; return; }
  if (m == a->m) a->s += s;
  else if (m > a->m) { a->s = a->s * exp(a->m - m) + s; a->m = m; }
  else a->s += s * exp(m - a->m);
}

/* Blocks of VAR_BLOCK elements: mean, then Σ (x - mean)², merged into the accumulator. */
#define VAR_LOOPS(sfx, T, LD)                                                                      \
  static void var_row_##sfx(void *acc, const char *p, int64_t n, int64_t st, int64_t first, double prm) { \
    (void)first; (void)prm;                                                                        \
    for (int64_t b = 0; b < n; b += VAR_BLOCK) {                                                   \
      int64_t m = n - b < VAR_BLOCK ? n - b : VAR_BLOCK, i = 0;                                    \
      const char *q = p + b * st;                                                                  \
      double l[LANES] = {0}, s = 0, m2 = 0;                                                        \
      if (st == (int64_t)sizeof(T))                                                                \
        for (; i + LANES <= m; i += LANES)                                                         \
          for (int j = 0; j < LANES; j++) l[j] += (double)LD(((const T *)q)[i + j]);               \
      for (; i < m; i++) s += (double)LD(*(const T *)(q + i * st));                                \
      for (int j = 0; j < LANES; j++) s += l[j];                                                   \
      double mean = s / (double)m;                                                                 \
      for (int j = 0; j < LANES; j++) l[j] = 0;                                                    \
      i = 0;                                                                                       \
      if (st == (int64_t)sizeof(T))                                                                \
        for (; i + LANES <= m; i += LANES)                                                         \
          for (int j = 0; j < LANES; j++) {                                                        \
            double d = (double)LD(((const T *)q)[i + j]) - mean;                                   \
            l[j] += d * d;                                                                         \
          }                                                                                        \
      for (; i < m; i++) {                                                                         \
        double d = (double)LD(*(const T *)(q + i * st)) - mean;                                    \
        m2 += d * d;                                                                               \
      }                                                                                            \
      for (int j = 0; j < LANES; j++) m2 += l[j];                                                  \
      var_merge(acc, (double)m, mean, m2);                                                         \
    }                                                                                              \
  }                                                                                                \
  static void var_cols_##sfx(void *acc, const char *p, int64_t k, int64_t st, int64_t index, double prm) { \
    VarAcc *a = acc; /* the columns of a block have seen the same number of elements */           \
    double n = a[0].n + 1, inv = 1 / n;                                                            \
    (void)index; (void)prm;                                                                        \
    for (int64_t j = 0; j < k; j++, p += st) {                                                     \
      double x = (double)LD(*(const T *)p), d = x - a[j].mean;                                     \
      a[j].mean += d * inv;                                                                        \
      a[j].m2 += d * (x - a[j].mean);                                                              \
      a[j].n = n;                                                                                  \
    }                                                                                              \
  }

/* A row: its maximum, then Σ exp(x - max) (an infinite or NaN maximum needs no sum). */
#define LSE_LOOPS(sfx, T, LD)                                                                      \
  static void lse_row_##sfx(void *acc, const char *p, int64_t n, int64_t st, int64_t first, double prm) { \
    double m = -INFINITY, s = 0;                                                                   \
    (void)first; (void)prm;                                                                        \
    for (int64_t i = 0; i < n; i++) { double x = (double)LD(*(const T *)(p + i * st)); m = FMAX(m, x); } \
    if (m == INFINITY || m != m) s = 1;                                                            \
    else if (m != -INFINITY)                                                                       \
      for (int64_t i = 0; i < n; i++) s += exp((double)LD(*(const T *)(p + i * st)) - m);          \
    lse_merge(acc, m, s);                                                                          \
  }                                                                                                \
  static void lse_cols_##sfx(void *acc, const char *p, int64_t k, int64_t st, int64_t index, double prm) { \
    LseAcc *a = acc;                                                                               \
    (void)index; (void)prm;                                                                        \
    for (int64_t j = 0; j < k; j++, p += st) lse_merge(&a[j], (double)LD(*(const T *)p), 1);       \
  }
/* }==== */

/* {==== Typed loops ==== */
#define RED_FLOAT(sfx, T, CT, LD, ST)                                                      \
  FOLD(sum, sfx, T, LD, double, double, 0, ADD, ADD)                                      \
  FOLD(prod, sfx, T, LD, double, double, 1, MUL, MUL)                                     \
  FOLD_EXT_ROW(max_row_##sfx, T, LD, CT, -INFINITY, >, FMAX)                              \
  FOLD_COLS(max_cols_##sfx, T, LD, double, double, FMAX)                                  \
  FOLD_EXT_ROW(min_row_##sfx, T, LD, CT, INFINITY, <, FMIN)                               \
  FOLD_COLS(min_cols_##sfx, T, LD, double, double, FMIN)                                  \
  FOLD(all, sfx, T, LD, double, int64_t, 1, AND, IMIN)                                    \
  FOLD(any, sfx, T, LD, double, int64_t, 0, OR, IMAX)                                     \
  FOLD(norm0, sfx, T, LD, double, double, 0, NZ_ADD, ADD)                                 \
  FOLD(norm1, sfx, T, LD, double, double, 0, ABS_ADD, ADD)                                \
  FOLD(norm2, sfx, T, LD, double, double, 0, SQ_ADD, ADD)                                 \
  FOLD(normp, sfx, T, LD, double, double, 0, POW_ADD, ADD)                                \
  FOLD(norminf, sfx, T, LD, double, double, 0, ABS_MAX, FMAX)                             \
  FOLD(normninf, sfx, T, LD, double, double, INFINITY, ABS_MIN, FMIN)                     \
  ARG_LOOPS(argmax, sfx, T, LD, f, double, FTAKE_MAX)                                     \
  ARG_LOOPS(argmin, sfx, T, LD, f, double, FTAKE_MIN)                                     \
  VAR_LOOPS(sfx, T, LD)                                                                   \
  LSE_LOOPS(sfx, T, LD)
#define RED_INT(sfx, T, UT)                                                                \
  FOLD(sum, sfx, T, SK_ID, T, uint64_t, 0, ADD, ADD)                                      \
  FOLD(prod, sfx, T, SK_ID, T, uint64_t, 1, MUL, MUL)                                     \
  FOLD(max, sfx, T, SK_ID, T, int64_t, INT64_MIN, IMAX, IMAX)                             \
  FOLD(min, sfx, T, SK_ID, T, int64_t, INT64_MAX, IMIN, IMIN)                             \
  FOLD(all, sfx, T, SK_ID, T, int64_t, 1, AND, IMIN)                                      \
  FOLD(any, sfx, T, SK_ID, T, int64_t, 0, OR, IMAX)                                       \
  ARG_LOOPS(argmax, sfx, T, SK_ID, i, int64_t, ITAKE_MAX)                                 \
  ARG_LOOPS(argmin, sfx, T, SK_ID, i, int64_t, ITAKE_MIN)
SK_FLOAT_TYPES(RED_FLOAT)
SK_INT_TYPES(RED_INT)
RED_INT(b, uint8_t, uint32_t)
/* }==== */

/* {==== Init, combine, finish ==== */
static void zero_init(void *acc, int64_t k) { memset(acc, 0, (size_t)k * 8); }
static void onef_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((double *)acc)[j] = 1; }
static void onei_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((int64_t *)acc)[j] = 1; }
static void maxf_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((double *)acc)[j] = -INFINITY; }
static void minf_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((double *)acc)[j] = INFINITY; }
static void maxi_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((int64_t *)acc)[j] = INT64_MIN; }
static void mini_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((int64_t *)acc)[j] = INT64_MAX; }
static void arg_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((ArgAcc *)acc)[j].idx = -1; }
static void var_init(void *acc, int64_t k) { memset(acc, 0, (size_t)k * sizeof(VarAcc)); }
static void lse_init(void *acc, int64_t k) {
  for (int64_t j = 0; j < k; j++) ((LseAcc *)acc)[j] = (LseAcc){-INFINITY, 0};
}

#define COMBINE(name, A, EXPR)                               \
  static void name(void *acc, const void *later) {           \
    A a = *(A *)acc, b = *(const A *)later;                  \
    *(A *)acc = EXPR;                                        \
  }
COMBINE(sumf_combine, double, a + b)
COMBINE(sumi_combine, uint64_t, a + b)
COMBINE(prodf_combine, double, a * b)
COMBINE(prodi_combine, uint64_t, a * b)
COMBINE(maxf_combine, double, FMAX(a, b))
COMBINE(minf_combine, double, FMIN(a, b))
COMBINE(maxi_combine, int64_t, IMAX(a, b))
COMBINE(mini_combine, int64_t, IMIN(a, b))

#define ARG_COMBINE(name, F, TAKE)                                                \
  static void name(void *acc, const void *later) {                                \
    ArgAcc *x = acc;                                                              \
    const ArgAcc *y = later;                                                      \
    if (y->idx >= 0 && (x->idx < 0 || TAKE(y->v.F, x->v.F))) *x = *y;             \
  }
ARG_COMBINE(argmaxf_combine, f, FTAKE_MAX)
ARG_COMBINE(argminf_combine, f, FTAKE_MIN)
ARG_COMBINE(argmaxi_combine, i, ITAKE_MAX)
ARG_COMBINE(argmini_combine, i, ITAKE_MIN)

static void var_combine(void *acc, const void *later) {
  const VarAcc *b = later;
  var_merge(acc, b->n, b->mean, b->m2);
}
static void lse_combine(void *acc, const void *later) {
  const LseAcc *b = later;
  lse_merge(acc, b->m, b->s);
}

#define OUT0(o, pos) ((o)->data[0] + (pos) * (int64_t)(o)->size)
#define FINISH(name, A, EXPR)                                                        \
  static void name(const void *acc, int64_t k, const RedOut *o, int64_t pos) {        \
    const double prm = o->prm;                                                       \
    (void)prm;                                                                       \
    for (int64_t j = 0; j < k; j++) {                                                \
      const A a = ((const A *)acc)[j];                                               \
      sk_store_double(OUT0(o, pos + j), o->dtype, EXPR);                             \
    }                                                                                \
  }
FINISH(f_finish, double, a)
FINISH(mean_finish, double, a / prm)
FINISH(sqrt_finish, double, sqrt(a))
FINISH(root_finish, double, pow(a, 1 / prm))
FINISH(var_finish, VarAcc, a.m2 / fmax(0, a.n - prm))
FINISH(std_finish, VarAcc, sqrt(a.m2 / fmax(0, a.n - prm)))
FINISH(lse_finish, LseAcc, a.m + log(a.s))

static void i_finish(const void *acc, int64_t k, const RedOut *o, int64_t pos) {
  for (int64_t j = 0; j < k; j++) sk_store_int64(OUT0(o, pos + j), o->dtype, ((const int64_t *)acc)[j]);
}
static void arg_finish(const void *acc, int64_t k, const RedOut *o, int64_t pos) {
  for (int64_t j = 0; j < k; j++) ((int64_t *)o->data[0])[pos + j] = ((const ArgAcc *)acc)[j].idx;
}
/* max/min with indices: the value (exact: it is one of the inputs) and its index. */
static void argvalf_finish(const void *acc, int64_t k, const RedOut *o, int64_t pos) {
  for (int64_t j = 0; j < k; j++) {
    const ArgAcc *a = &((const ArgAcc *)acc)[j];
    sk_store_double(OUT0(o, pos + j), o->dtype, a->v.f);
    ((int64_t *)o->data[1])[pos + j] = a->idx;
  }
}
static void argvali_finish(const void *acc, int64_t k, const RedOut *o, int64_t pos) {
  for (int64_t j = 0; j < k; j++) {
    const ArgAcc *a = &((const ArgAcc *)acc)[j];
    sk_store_int64(OUT0(o, pos + j), o->dtype, a->v.i);
    ((int64_t *)o->data[1])[pos + j] = a->idx;
  }
}
/* }==== */

/* {==== Reducer tables ==== */
enum {
  KIND_SUM, KIND_MEAN, KIND_PROD, KIND_AMAX, KIND_AMIN, KIND_ARGMAX, KIND_ARGMIN, KIND_MAX, KIND_MIN,
  KIND_ALL, KIND_ANY, KIND_VAR, KIND_STD, KIND_LSE,
  KIND_NORM0, KIND_NORM1, KIND_NORM2, KIND_NORMP, KIND_NORMINF, KIND_NORMNINF, KIND_COUNT
};

#define R(op, s, init, comb, fin, sz) {init, op##_row_##s, op##_cols_##s, comb, fin, sz}
#define R_SUMF(s) R(sum, s, zero_init, sumf_combine, f_finish, 8)
#define R_SUMI(s) R(sum, s, zero_init, sumi_combine, i_finish, 8)
#define R_MEANF(s) R(sum, s, zero_init, sumf_combine, mean_finish, 8)
#define R_PRODF(s) R(prod, s, onef_init, prodf_combine, f_finish, 8)
#define R_PRODI(s) R(prod, s, onei_init, prodi_combine, i_finish, 8)
#define R_AMAXF(s) R(max, s, maxf_init, maxf_combine, f_finish, 8)
#define R_AMAXI(s) R(max, s, maxi_init, maxi_combine, i_finish, 8)
#define R_AMINF(s) R(min, s, minf_init, minf_combine, f_finish, 8)
#define R_AMINI(s) R(min, s, mini_init, mini_combine, i_finish, 8)
#define R_ARGMAXF(s) R(argmax, s, arg_init, argmaxf_combine, arg_finish, sizeof(ArgAcc))
#define R_ARGMAXI(s) R(argmax, s, arg_init, argmaxi_combine, arg_finish, sizeof(ArgAcc))
#define R_ARGMINF(s) R(argmin, s, arg_init, argminf_combine, arg_finish, sizeof(ArgAcc))
#define R_ARGMINI(s) R(argmin, s, arg_init, argmini_combine, arg_finish, sizeof(ArgAcc))
#define R_MAXF(s) R(argmax, s, arg_init, argmaxf_combine, argvalf_finish, sizeof(ArgAcc))
#define R_MAXI(s) R(argmax, s, arg_init, argmaxi_combine, argvali_finish, sizeof(ArgAcc))
#define R_MINF(s) R(argmin, s, arg_init, argminf_combine, argvalf_finish, sizeof(ArgAcc))
#define R_MINI(s) R(argmin, s, arg_init, argmini_combine, argvali_finish, sizeof(ArgAcc))
#define R_ALL(s) R(all, s, onei_init, mini_combine, i_finish, 8)
#define R_ANY(s) R(any, s, zero_init, maxi_combine, i_finish, 8)
#define R_VAR(s) R(var, s, var_init, var_combine, var_finish, sizeof(VarAcc))
#define R_STD(s) R(var, s, var_init, var_combine, std_finish, sizeof(VarAcc))
#define R_LSE(s) R(lse, s, lse_init, lse_combine, lse_finish, sizeof(LseAcc))
#define R_NORM0(s) R(norm0, s, zero_init, sumf_combine, f_finish, 8)
#define R_NORM1(s) R(norm1, s, zero_init, sumf_combine, f_finish, 8)
#define R_NORM2(s) R(norm2, s, zero_init, sumf_combine, sqrt_finish, 8)
#define R_NORMP(s) R(normp, s, zero_init, sumf_combine, root_finish, 8)
#define R_NORMINF(s) R(norminf, s, zero_init, maxf_combine, f_finish, 8)
#define R_NORMNINF(s) R(normninf, s, minf_init, minf_combine, f_finish, 8)

#define FLOATS(F) [SK_DTYPE_FLOAT32] = F(f32), [SK_DTYPE_FLOAT64] = F(f64), [SK_DTYPE_FLOAT16] = F(f16), \
  [SK_DTYPE_BFLOAT16] = F(bf16)
#define INTS(I) [SK_DTYPE_BOOL] = I(b), [SK_DTYPE_UINT8] = I(u8), [SK_DTYPE_INT8] = I(i8),  \
  [SK_DTYPE_INT16] = I(i16), [SK_DTYPE_INT32] = I(i32), [SK_DTYPE_INT64] = I(i64)

/* Indexed by kind, then by the dtype of the (possibly converted) input; empty rows: not supported. */
static const Reducer reducers[KIND_COUNT][SK_DTYPE_COUNT] = {
  [KIND_SUM] = {FLOATS(R_SUMF), INTS(R_SUMI)},     [KIND_MEAN] = {FLOATS(R_MEANF)},
  [KIND_PROD] = {FLOATS(R_PRODF), INTS(R_PRODI)},  [KIND_AMAX] = {FLOATS(R_AMAXF), INTS(R_AMAXI)},
  [KIND_AMIN] = {FLOATS(R_AMINF), INTS(R_AMINI)},  [KIND_ARGMAX] = {FLOATS(R_ARGMAXF), INTS(R_ARGMAXI)},
  [KIND_ARGMIN] = {FLOATS(R_ARGMINF), INTS(R_ARGMINI)}, [KIND_MAX] = {FLOATS(R_MAXF), INTS(R_MAXI)},
  [KIND_MIN] = {FLOATS(R_MINF), INTS(R_MINI)},     [KIND_ALL] = {FLOATS(R_ALL), INTS(R_ALL)},
  [KIND_ANY] = {FLOATS(R_ANY), INTS(R_ANY)},       [KIND_VAR] = {FLOATS(R_VAR)},
  [KIND_STD] = {FLOATS(R_STD)},                    [KIND_LSE] = {FLOATS(R_LSE)},
  [KIND_NORM0] = {FLOATS(R_NORM0)},                [KIND_NORM1] = {FLOATS(R_NORM1)},
  [KIND_NORM2] = {FLOATS(R_NORM2)},                [KIND_NORMP] = {FLOATS(R_NORMP)},
  [KIND_NORMINF] = {FLOATS(R_NORMINF)},            [KIND_NORMNINF] = {FLOATS(R_NORMNINF)},
};

/* Room for one or for COLS accumulators of any reducer. */
typedef union { double f; int64_t i; uint64_t u; ArgAcc a; VarAcc v; LseAcc l; } Acc1;
typedef union { Acc1 one[COLS]; } AccBlock;
/* }==== */

/* {==== Driver ==== */
typedef struct RedCtx {
  const Reducer *r;
  SkWalk kw, rw;          /* kept and reduced dims of the input */
  char *in;
  RedOut o;
  char *partials;         /* split mode: one accumulator per chunk */
  int64_t nchunks;
  const char *base;       /* split mode: the input of the current output */
} RedCtx;

/* Splits t's dims by mask into two coalesced walks (size-1 dims dropped). */
static void split_dims(const SkTensor *t, uint32_t mask, SkWalk *kw, SkWalk *rw) {
  int64_t sz = (int64_t)sk_dtype_size(t->dtype);
  kw->ndim = rw->ndim = 0;
  for (int d = 0; d < t->ndim; d++) {
    int64_t n = t->sizes[d];
    if (n != 1) sk_walk_push(mask & (1u << d) ? rw : kw, n, t->strides[d] * sz);
  }
  SkWalk *both[2] = {kw, rw};
  for (int i = 0; i < 2; i++) {
    SkWalk *w = both[i];
    if (!w->ndim) { w->sizes[0] = 1; w->strides[0] = sz; w->ndim = 1; }
    w->numel = sk_numel(w->ndim, w->sizes);
    w->data = sk_tensor_data(t);
  }
}

typedef struct { const Reducer *r; void *acc; int64_t k, kst; double prm; } Fold;

static void fold_rows(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const Fold *f = ctx;
  f->r->row(f->acc, p, n, st, first, f->prm);
}

static void fold_cols(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const Fold *f = ctx;
  for (int64_t i = 0; i < n; i++) f->r->cols(f->acc, p + i * st, f->k, f->kst, first + i, f->prm);
}

/* Rows: one accumulator per output of a kept run. */
static void kept_run_rows(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const RedCtx *c = ctx;
  Acc1 acc;
  Fold f = {c->r, &acc, 1, 0, c->o.prm};
  for (int64_t i = 0; i < n; i++) {
    c->r->init(&acc, 1);
    sk_walk_range(&c->rw, p + i * st, 0, c->rw.numel, fold_rows, &f);
    c->r->finish(&acc, 1, &c->o, first + i);
  }
}

/* Columns: blocks of COLS outputs of a kept run advance together over the reduced elements. */
static void kept_run_cols(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const RedCtx *c = ctx;
  AccBlock acc;
  for (int64_t j = 0; j < n; j += COLS) {
    int64_t k = n - j < COLS ? n - j : COLS;
    Fold f = {c->r, &acc, k, st, c->o.prm};
    c->r->init(&acc, k);
    sk_walk_range(&c->rw, p + j * st, 0, c->rw.numel, fold_cols, &f);
    c->r->finish(&acc, k, &c->o, first + j);
  }
}

static void outputs_rows(void *ctx, int64_t b, int64_t e) {
  const RedCtx *c = ctx;
  sk_walk_range(&c->kw, c->in, b, e, kept_run_rows, ctx);
}

static void outputs_cols(void *ctx, int64_t b, int64_t e) {
  const RedCtx *c = ctx;
  sk_walk_range(&c->kw, c->in, b, e, kept_run_cols, ctx);
}

static void chunks_split(void *ctx, int64_t b, int64_t e) {
  const RedCtx *c = ctx;
  int64_t nred = c->rw.numel;
  for (int64_t ch = b; ch < e; ch++) {
    Fold f = {c->r, c->partials + ch * (int64_t)c->r->acc_size, 1, 0, c->o.prm};
    int64_t r0 = ch * SPLIT_CHUNK, r1 = r0 + SPLIT_CHUNK < nred ? r0 + SPLIT_CHUNK : nred;
    c->r->init(f.acc, 1);
    sk_walk_range(&c->rw, (char *)c->base, r0, r1, fold_rows, &f);
  }
}

/* Exact widenings need no converted copy: elements load as double or int64 anyway. */
static int needs_convert(SkDType in, SkDType out) {
  if (in == out) return 0;
  if (!sk_dtype_is_floating(in)) return out != SK_DTYPE_INT64;
  return in == SK_DTYPE_FLOAT64 || (out != SK_DTYPE_FLOAT32 && out != SK_DTYPE_FLOAT64);
}

/* The input the reducer reads: sums and products read self converted to the output dtype
** (as PyTorch casts to the result type), logsumexp reads integers as its float output. */
static const SkTensor *reduce_input(const SkTensor *self, const SkTensor *out, int kind, SkTensor **conv) {
  int cast = kind == KIND_SUM || kind == KIND_MEAN || kind == KIND_PROD ? needs_convert(self->dtype, out->dtype)
           : kind == KIND_LSE && !sk_dtype_is_floating(self->dtype);
  if (!cast) return self;
  if (!(*conv = sk_tensor_empty(self->ndim, self->sizes, out->dtype, self->device))) return NULL;
  return sk_copy_cpu(*conv, self) ? NULL : *conv;
}

/* A contiguous stand-in for an output that is strided or overlaps the input (NULL: write directly). */
static int stand_in(SkTensor *out, const SkTensor *self, SkTensor **tmp) {
  *tmp = NULL;
  if (!out || out->numel == 0 || (sk_tensor_is_contiguous(out) && !sk_tensor_may_overlap(out, self))) return 0;
  return (*tmp = sk_tensor_empty(out->ndim, out->sizes, out->dtype, out->device)) ? 0 : -1;
}

static int run(RedCtx *c, SkDType in_dtype) {
  int64_t nout = c->kw.numel, nred = c->rw.numel;
  if (nout <= SPLIT_MAX_OUT && nred >= 2 * SPLIT_CHUNK) {
    c->nchunks = (nred + SPLIT_CHUNK - 1) / SPLIT_CHUNK;
    if (!(c->partials = malloc((size_t)c->nchunks * c->r->acc_size))) return sk_error("out of memory");
    Acc1 acc;
    for (int64_t o = 0; o < nout; o++) {
      c->base = c->in + sk_walk_offset(&c->kw, o);
      sk_parallel_for(0, c->nchunks, 1, chunks_split, c);
      memcpy(&acc, c->partials, c->r->acc_size);
      for (int64_t ch = 1; ch < c->nchunks; ch++) c->r->combine(&acc, c->partials + ch * (int64_t)c->r->acc_size);
      c->r->finish(&acc, 1, &c->o, o);
    }
    free(c->partials);
    return 0;
  }
  int64_t isz = (int64_t)sk_dtype_size(in_dtype);
  int last_r = c->rw.ndim - 1, last_k = c->kw.ndim - 1;
  int cols = c->rw.strides[last_r] != isz && c->kw.sizes[last_k] > 1 && c->kw.strides[last_k] == isz;
  int64_t grain = nred > 0 ? SK_GRAIN / nred : SK_GRAIN;
  sk_parallel_for(0, nout, grain < 1 ? 1 : grain, cols ? outputs_cols : outputs_rows, c);
  return 0;
}

/* Reduces self over the dims in mask into out (and idx, max/min's indices). */
static int reduce(const SkTensor *self, uint32_t mask, int kind, double prm, SkTensor *out, SkTensor *idx) {
  SkTensor *conv = NULL, *tmp[2] = {NULL, NULL};
  SkTensor *outs[2] = {out, idx};
  const SkTensor *in = reduce_input(self, out, kind, &conv);
  int rc = in ? 0 : -1;
  for (int i = 0; i < 2 && !rc; i++) rc = stand_in(outs[i], self, &tmp[i]);
  RedCtx c;
  if (!rc) {
    c.r = &reducers[kind][in->dtype];
    if (!c.r->row) rc = sk_error("reduction not implemented for '%s'", sk_dtype_torch_name(in->dtype));
  }
  if (!rc && out->numel > 0) {
    split_dims(in, mask, &c.kw, &c.rw);
    c.in = sk_tensor_data(in);
    c.partials = NULL;
    c.o.dtype = out->dtype;
    c.o.size = sk_dtype_size(out->dtype);
    c.o.prm = kind == KIND_MEAN ? (double)c.rw.numel : prm;
    for (int i = 0; i < 2; i++) c.o.data[i] = outs[i] ? sk_tensor_data(tmp[i] ? tmp[i] : outs[i]) : NULL;
    rc = run(&c, in->dtype);
    for (int i = 0; i < 2 && !rc; i++)
      if (tmp[i]) rc = sk_copy_cpu(outs[i], tmp[i]);
  }
  sk_tensor_release(tmp[0]);
  sk_tensor_release(tmp[1]);
  sk_tensor_release(conv);
  return rc;
}

static uint32_t all_dims(const SkTensor *t) { return t->ndim ? (uint32_t)((1ull << t->ndim) - 1) : 1u; }
/* }==== */

/* {==== Kernels ====
** dim_mask is precomputed by the meta function: bit d set when dim d is reduced. */
int sk_cpu_sum_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, int dtype, SkTensor *out) {
  (void)m; (void)keepdim; (void)dtype;
  return reduce(self, (uint32_t)dim_mask, KIND_SUM, 0, out, NULL);
}

int sk_cpu_mean_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, int dtype, SkTensor *out) {
  (void)m; (void)keepdim; (void)dtype;
  return reduce(self, (uint32_t)dim_mask, KIND_MEAN, 0, out, NULL);
}

int sk_cpu_prod_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, int dtype, SkTensor *out) {
  (void)m; (void)keepdim; (void)dtype;
  return reduce(self, (uint32_t)dim_mask, KIND_PROD, 0, out, NULL);
}

int sk_cpu_amax_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_AMAX, 0, out, NULL);
}

int sk_cpu_amin_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_AMIN, 0, out, NULL);
}

int sk_cpu_argmax_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_ARGMAX, 0, out, NULL);
}

int sk_cpu_argmin_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_ARGMIN, 0, out, NULL);
}

int sk_cpu_max_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *max,
                   SkTensor *max_values) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_MAX, 0, max, max_values);
}

int sk_cpu_min_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *min,
                   SkTensor *min_indices) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_MIN, 0, min, min_indices);
}

/* correction None means 1 (Bessel's correction). */
static double correction_of(SkScalar c) { return c.kind == SK_SCALAR_NONE ? 1 : sk_scalar_to_double(c); }

int sk_cpu_var_correction_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, SkScalar correction, int keepdim,
                              SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_VAR, correction_of(correction), out, NULL);
}

int sk_cpu_std_correction_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, SkScalar correction, int keepdim,
                              SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_STD, correction_of(correction), out, NULL);
}

/* p None means 2; p = 0, 1, 2, ±inf have their own folds. */
int sk_cpu_norm_out(const SkMeta *m, const SkTensor *self, SkScalar p, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  double q = p.kind == SK_SCALAR_NONE ? 2 : sk_scalar_to_double(p);
  int kind = q == 0 ? KIND_NORM0 : q == 1 ? KIND_NORM1 : q == 2 ? KIND_NORM2 : q == INFINITY ? KIND_NORMINF
           : q == -INFINITY ? KIND_NORMNINF : KIND_NORMP;
  return reduce(self, (uint32_t)dim_mask, kind, q, out, NULL);
}

int sk_cpu_logsumexp_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_LSE, 0, out, NULL);
}

int sk_cpu_all_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_ALL, 0, out, NULL);
}

int sk_cpu_all_all_out(const SkMeta *m, const SkTensor *self, SkTensor *out) {
  (void)m;
  return reduce(self, all_dims(self), KIND_ALL, 0, out, NULL);
}

int sk_cpu_any_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, KIND_ANY, 0, out, NULL);
}

int sk_cpu_any_all_out(const SkMeta *m, const SkTensor *self, SkTensor *out) {
  (void)m;
  return reduce(self, all_dims(self), KIND_ANY, 0, out, NULL);
}
/* }==== */
