/*
** sk_cpu_norm.c — normalization kernels: native_layer_norm, native_group_norm, native_batch_norm
** and the backwards of layer and batch norm
** The input is read as M rows of N (the normalized dims), contiguous, in a compute type:
** float32 (float16 and bfloat16 through float32 copies) or float64. A row's mean and
** variance are two passes over it in cache, summed in 16 lanes of its own type (as PyTorch's
** float kernels; the column sums of the backward are in double); rstd = 1/sqrt(var + eps)
** (a row of 0 elements: mean 0, rstd NaN, as PyTorch). Rows run in parallel.
** The backward's input gradient is per row, rstd·(g - mean(g) - x̂·mean(g·x̂)) with
** g = grad·weight and x̂ = (x - mean)·rstd; the weight and bias gradients are sums over rows,
** in parallel over blocks of columns (each block one pass down the rows, summed in double).
** Results written into a non-contiguous or other-dtype out go through a temporary. The loops
** are built per instruction set (SK_CLONES).
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"
#include "sk_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LANES 16
#define COLS 64 /* columns of one block of the weight and bias gradients */

typedef struct Norm {
  int64_t m, n;
  int64_t groups, cpg, hw;   /* group norm: row r is group r % groups, cpg channels of hw each */
  double eps;
  const void *x, *g, *w, *b, *mean, *rstd;
  void *y, *ymean, *yrstd;   /* forward outputs; backward: y is the input gradient */
  void *gw, *gb;             /* backward: weight and bias gradients (may be NULL) */
} Norm;

#define NORM_LOOPS(sfx, T, AT)                                                                         \
  static inline __attribute__((always_inline)) double sum_##sfx(const T *x, int64_t n) {                                              \
    AT l[LANES] = {0}, s = 0;                                                                       \
    int64_t i = 0;                                                                                  \
    for (; i + LANES <= n; i += LANES)                                                              \
      for (int j = 0; j < LANES; j++) l[j] += (AT)x[i + j];                                         \
    for (; i < n; i++) s += (AT)x[i];                                                               \
    for (int j = 0; j < LANES; j++) s += l[j];                                                      \
    return (double)s;                                                                               \
  }                                                                                                 \
  static inline __attribute__((always_inline)) double sumsq_##sfx(const T *x, int64_t n, double mean) {                                \
    AT l[LANES] = {0}, s = 0, m = (AT)mean;                                                         \
    int64_t i = 0;                                                                                  \
    for (; i + LANES <= n; i += LANES)                                                              \
      for (int j = 0; j < LANES; j++) { AT d = (AT)x[i + j] - m; l[j] += d * d; }                   \
    for (; i < n; i++) { AT d = (AT)x[i] - m; s += d * d; }                                         \
    for (int j = 0; j < LANES; j++) s += l[j];                                                      \
    return (double)s;                                                                               \
  }                                                                                                 \
  /* row r's mean and rstd, stored in the forward's mean and rstd outputs */                      \
  static inline __attribute__((always_inline)) void stats_##sfx(const Norm *c, int64_t r, const T *x, double *mean, double *rs) { \
    *mean = c->n ? sum_##sfx(x, c->n) / (double)c->n : 0;                                           \
    double var = c->n ? sumsq_##sfx(x, c->n, *mean) / (double)c->n : NAN;                           \
    *rs = 1 / sqrt(var + c->eps);                                                                   \
    ((T *)c->ymean)[r] = (T)*mean;                                                                  \
    ((T *)c->yrstd)[r] = (T)*rs;                                                                    \
  }                                                                                                 \
  SK_CLONES static void fwd_rows_##sfx(void *ctx, int64_t lo, int64_t hi) {                                  \
    const Norm *c = ctx;                                                                            \
    const T *w = c->w, *b = c->b;                                                                   \
    for (int64_t r = lo; r < hi; r++) {                                                             \
      const T *x = (const T *)c->x + r * c->n;                                                      \
      T *y = (T *)c->y + r * c->n;                                                                  \
      double mean, rs;                                                                              \
      stats_##sfx(c, r, x, &mean, &rs);                                                             \
      const T scale = (T)rs, shift = (T)(-mean * rs);                                               \
      if (w && b) for (int64_t i = 0; i < c->n; i++) y[i] = (x[i] * scale + shift) * w[i] + b[i];   \
      else if (w) for (int64_t i = 0; i < c->n; i++) y[i] = (x[i] * scale + shift) * w[i];          \
      else if (b) for (int64_t i = 0; i < c->n; i++) y[i] = x[i] * scale + shift + b[i];            \
      else for (int64_t i = 0; i < c->n; i++) y[i] = x[i] * scale + shift;                          \
    }                                                                                               \
  }                                                                                                 \
  /* group norm: w and b per channel; y = x·a + s with a = rstd·w[c], s = b[c] - mean·a */       \
  SK_CLONES static void fwd_groups_##sfx(void *ctx, int64_t lo, int64_t hi) {                       \
    const Norm *c = ctx;                                                                            \
    const T *w = c->w, *b = c->b;                                                                   \
    for (int64_t r = lo; r < hi; r++) {                                                             \
      const T *x = (const T *)c->x + r * c->n;                                                      \
      T *y = (T *)c->y + r * c->n;                                                                  \
      double mean, rs;                                                                              \
      stats_##sfx(c, r, x, &mean, &rs);                                                             \
      int64_t c0 = (r % c->groups) * c->cpg;                                                        \
      for (int64_t k = 0; k < c->cpg; k++) {                                                        \
        double a = rs * (w ? (double)w[c0 + k] : 1.0);                                              \
        const T av = (T)a, sv = (T)((b ? (double)b[c0 + k] : 0.0) - mean * a);                      \
        const T *xk = x + k * c->hw;                                                                \
        T *yk = y + k * c->hw;                                                                      \
        for (int64_t i = 0; i < c->hw; i++) yk[i] = xk[i] * av + sv;                                \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
  /* one row's input gradient; GI(i) is grad·weight at i (restrict and no branch: vectorized) */  \
  static inline __attribute__((always_inline)) void bwd_row_##sfx(const T *restrict x, const T *restrict g,   \
      const T *restrict w, T *restrict dx, int64_t n, T mean, T rs, int weighted) {                 \
    AT lg[LANES] = {0}, lgx[LANES] = {0}, sg = 0, sgx = 0;                                          \
    int64_t i = 0;                                                                                  \
    for (; i + LANES <= n; i += LANES)                                                              \
      for (int j = 0; j < LANES; j++) {                                                             \
        T gi = weighted ? g[i + j] * w[i + j] : g[i + j];                                           \
        lg[j] += (AT)gi;                                                                            \
        lgx[j] += (AT)(gi * ((x[i + j] - mean) * rs));                                              \
      }                                                                                             \
    for (; i < n; i++) {                                                                            \
      T gi = weighted ? g[i] * w[i] : g[i];                                                         \
      sg += (AT)gi;                                                                                 \
      sgx += (AT)(gi * ((x[i] - mean) * rs));                                                       \
    }                                                                                               \
    for (int j = 0; j < LANES; j++) sg += lg[j], sgx += lgx[j];                                     \
    const T mg = (T)(sg / (double)n), mgx = (T)(sgx / (double)n);                                   \
    for (i = 0; i < n; i++) {                                                                       \
      T gi = weighted ? g[i] * w[i] : g[i];                                                         \
      dx[i] = rs * (gi - mg - (x[i] - mean) * rs * mgx);                                            \
    }                                                                                               \
  }                                                                                                 \
  SK_CLONES static void bwd_rows_##sfx(void *ctx, int64_t lo, int64_t hi) {                         \
    const Norm *c = ctx;                                                                            \
    const T *w = c->w;                                                                              \
    for (int64_t r = lo; r < hi; r++) {                                                             \
      const T *x = (const T *)c->x + r * c->n, *g = (const T *)c->g + r * c->n;                     \
      T *dx = (T *)c->y + r * c->n;                                                                 \
      const T mean = ((const T *)c->mean)[r], rs = ((const T *)c->rstd)[r];                         \
      if (w) bwd_row_##sfx(x, g, w, dx, c->n, mean, rs, 1);                                         \
      else bwd_row_##sfx(x, g, NULL, dx, c->n, mean, rs, 0);                                        \
    }                                                                                               \
  }                                                                                                 \
  /* blocks of COLS columns: gw[j] = Σ_r g[r, j]·x̂[r, j], gb[j] = Σ_r g[r, j] */                  \
  SK_CLONES static void bwd_cols_##sfx(void *ctx, int64_t lo, int64_t hi) {                                  \
    const Norm *c = ctx;                                                                            \
    for (int64_t blk = lo; blk < hi; blk++) {                                                       \
      int64_t j0 = blk * COLS, nj = c->n - j0 < COLS ? c->n - j0 : COLS;                            \
      double aw[COLS] = {0}, ab[COLS] = {0};                                                        \
      for (int64_t r = 0; r < c->m; r++) {                                                          \
        const T *x = (const T *)c->x + r * c->n + j0, *g = (const T *)c->g + r * c->n + j0;         \
        const T mean = ((const T *)c->mean)[r], rs = ((const T *)c->rstd)[r];                       \
        for (int64_t j = 0; j < nj; j++) {                                                          \
          aw[j] += (double)(g[j] * ((x[j] - mean) * rs));                                           \
          ab[j] += (double)g[j];                                                                    \
        }                                                                                           \
      }                                                                                             \
      for (int64_t j = 0; j < nj; j++) {                                                            \
        if (c->gw) ((T *)c->gw)[j0 + j] = (T)aw[j];                                                 \
        if (c->gb) ((T *)c->gb)[j0 + j] = (T)ab[j];                                                 \
      }                                                                                             \
    }                                                                                               \
  }

NORM_LOOPS(f32, float, float)
NORM_LOOPS(f64, double, double)

/* {==== Operands ==== */
static int write_back(int rc, SkTensor *out, SkTensor *tmp) { return !rc && tmp ? sk_copy_cpu(out, tmp) : rc; }
static void release(SkTensor **ts, int n) { for (int i = 0; i < n; i++) sk_tensor_release(ts[i]); }
/* }==== */

int sk_cpu_native_layer_norm_out(const SkMeta *m, const SkTensor *input, SkIntList normalized_shape,
                                 const SkTensor *weight, const SkTensor *bias, double eps, SkTensor *out0,
                                 SkTensor *out1, SkTensor *out2) {
  (void)m;
  SkDType ct = input->dtype == SK_DTYPE_FLOAT64 ? SK_DTYPE_FLOAT64 : SK_DTYPE_FLOAT32;
  SkTensor *k[7] = {NULL};
  int rc = 0;
  Norm c = {0};
  c.n = sk_numel(normalized_shape.n, normalized_shape.data);
  c.m = sk_numel(input->ndim - normalized_shape.n, input->sizes);
  c.eps = eps;
  const SkTensor *x = sk_cpu_operand(input, ct, &k[0], &rc), *w = sk_cpu_operand(weight, ct, &k[1], &rc), *b = sk_cpu_operand(bias, ct, &k[2], &rc);
  SkTensor *y = sk_cpu_target(out0, ct, &k[3], &rc), *mean = sk_cpu_target(out1, ct, &k[4], &rc), *rstd = sk_cpu_target(out2, ct, &k[5], &rc);
  if (!rc && c.m > 0) {
    c.x = sk_tensor_data(x), c.w = w ? sk_tensor_data(w) : NULL, c.b = b ? sk_tensor_data(b) : NULL;
    c.y = sk_tensor_data(y), c.ymean = sk_tensor_data(mean), c.yrstd = sk_tensor_data(rstd);
    int64_t grain = c.n ? SK_GRAIN / c.n : c.m;
    sk_parallel_for(0, c.m, grain < 1 ? 1 : grain, ct == SK_DTYPE_FLOAT64 ? fwd_rows_f64 : fwd_rows_f32, &c);
  }
  rc = write_back(rc, out0, k[3]);
  rc = write_back(rc, out1, k[4]);
  rc = write_back(rc, out2, k[5]);
  release(k, 7);
  return rc;
}

/* group norm: the input as N·group rows of C/group·HxW; mean and rstd [N, group] */
int sk_cpu_native_group_norm(SkTensor **result1, SkTensor **result2, SkTensor **result3, const SkTensor *input,
                             const SkTensor *weight, const SkTensor *bias, int64_t N, int64_t C, int64_t HxW, int64_t group,
                             double eps) {
  SkTensor *r[3] = {NULL, NULL, NULL};
  if (sk_meta_kernel_native_group_norm(&r[0], &r[1], &r[2], input, weight, bias, N, C, HxW, group, eps)) return -1;
  int rc = sk_cpu_from_meta(r, 3);
  SkDType ct = input->dtype == SK_DTYPE_FLOAT64 ? SK_DTYPE_FLOAT64 : SK_DTYPE_FLOAT32;
  SkTensor *k[6] = {NULL};
  Norm c = {0};
  c.m = N * group, c.n = C / group * HxW, c.groups = group, c.cpg = C / group, c.hw = HxW, c.eps = eps;
  const SkTensor *x = sk_cpu_operand(input, ct, &k[0], &rc), *w = sk_cpu_operand(weight, ct, &k[1], &rc), *b = sk_cpu_operand(bias, ct, &k[2], &rc);
  SkTensor *y = sk_cpu_target(r[0], ct, &k[3], &rc), *mean = sk_cpu_target(r[1], ct, &k[4], &rc), *rstd = sk_cpu_target(r[2], ct, &k[5], &rc);
  if (!rc && c.m > 0) {
    c.x = sk_tensor_data(x), c.w = w ? sk_tensor_data(w) : NULL, c.b = b ? sk_tensor_data(b) : NULL;
    c.y = sk_tensor_data(y), c.ymean = sk_tensor_data(mean), c.yrstd = sk_tensor_data(rstd);
    int64_t grain = c.n ? SK_GRAIN / c.n : c.m;
    sk_parallel_for(0, c.m, grain < 1 ? 1 : grain, ct == SK_DTYPE_FLOAT64 ? fwd_groups_f64 : fwd_groups_f32, &c);
  }
  for (int i = 0; i < 3; i++) rc = write_back(rc, r[i], k[3 + i]);
  release(k, 6);
  if (rc) { release(r, 3); return -1; }
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
}

int sk_cpu_native_layer_norm_backward(SkTensor **result1, SkTensor **result2, SkTensor **result3,
                                      const SkTensor *grad_out, const SkTensor *input, SkIntList normalized_shape,
                                      const SkTensor *mean, const SkTensor *rstd, const SkTensor *weight,
                                      const SkTensor *bias, SkIntList output_mask) {
  SkTensor *r[3] = {NULL, NULL, NULL};
  if (sk_meta_kernel_native_layer_norm_backward(&r[0], &r[1], &r[2], grad_out, input, normalized_shape, mean, rstd,
                                                weight, bias, output_mask))
    return -1;
  int rc = sk_cpu_from_meta(r, 3);
  SkDType ct = input->dtype == SK_DTYPE_FLOAT64 ? SK_DTYPE_FLOAT64 : SK_DTYPE_FLOAT32;
  SkTensor *k[10] = {NULL};
  Norm c = {0};
  c.n = sk_numel(normalized_shape.n, normalized_shape.data);
  c.m = sk_numel(input->ndim - normalized_shape.n, input->sizes);
  const SkTensor *x = sk_cpu_operand(input, ct, &k[0], &rc), *g = sk_cpu_operand(grad_out, ct, &k[1], &rc);
  const SkTensor *mu = sk_cpu_operand(mean, ct, &k[2], &rc), *rs = sk_cpu_operand(rstd, ct, &k[3], &rc), *w = sk_cpu_operand(weight, ct, &k[4], &rc);
  SkTensor *gi = sk_cpu_target(r[0], ct, &k[5], &rc), *gw = sk_cpu_target(r[1], ct, &k[6], &rc), *gb = sk_cpu_target(r[2], ct, &k[7], &rc);
  if (!rc) {
    c.x = sk_tensor_data(x), c.g = sk_tensor_data(g), c.mean = sk_tensor_data(mu), c.rstd = sk_tensor_data(rs);
    c.w = w ? sk_tensor_data(w) : NULL;
    int f64 = ct == SK_DTYPE_FLOAT64;
    if (gi && c.m > 0 && c.n > 0) {
      c.y = sk_tensor_data(gi);
      int64_t grain = SK_GRAIN / c.n;
      sk_parallel_for(0, c.m, grain < 1 ? 1 : grain, f64 ? bwd_rows_f64 : bwd_rows_f32, &c);
    }
    if ((gw || gb) && c.n > 0) {
      c.gw = gw ? sk_tensor_data(gw) : NULL, c.gb = gb ? sk_tensor_data(gb) : NULL;
      int64_t blocks = (c.n + COLS - 1) / COLS, per = c.m * COLS;
      int64_t grain = per ? SK_GRAIN / per : blocks;
      sk_parallel_for(0, blocks, grain < 1 ? 1 : grain, f64 ? bwd_cols_f64 : bwd_cols_f32, &c);
    }
  }
  for (int i = 0; i < 3; i++) rc = write_back(rc, r[i], k[5 + i]);
  release(k, 10);
  if (rc) { release(r, 3); return -1; }
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
}

/* {==== batch_norm ====
** The input as [N, C, S] (S the product of the dims after 1), contiguous in the compute
** type; channels run in parallel, each reading its N runs of S. Training: the batch's mean
** and biased variance (two passes, summed in double), invstd = 1/sqrt(var + eps), and the
** running statistics moved by momentum (the variance unbiased, n/(n-1)); eval: the running
** ones. The backward per channel: Σg and Σg·(x - mean), then
** train: gI = (g - Σg/n - (x - mean)·invstd²·Σg(x - mean)/n)·invstd·w;  eval: gI = g·invstd·w;
** gW = Σg(x - mean)·invstd, gB = Σg. */
typedef struct Bn {
  int64_t n, c, s;
  const void *x, *g, *w, *b;
  void *y;
  double *mean, *invstd; /* per channel, computed or given */
  double *sum_g, *sum_gx; /* backward */
  int train, want_gi;
} Bn;

#define BN_LOOPS(sfx, T)                                                                              \
  SK_CLONES static void bn_stats_##sfx(void *ctx, int64_t lo, int64_t hi) {                          \
    const Bn *c = ctx;                                                                                 \
    for (int64_t ch = lo; ch < hi; ch++) {                                                             \
      double s = 0, q = 0;                                                                             \
      for (int64_t i = 0; i < c->n; i++) s += sum_##sfx((const T *)c->x + (i * c->c + ch) * c->s, c->s); \
      double mean = (c->n * c->s) != 0 ? s / (double)(c->n * c->s) : 0;                                      \
      for (int64_t i = 0; i < c->n; i++) q += sumsq_##sfx((const T *)c->x + (i * c->c + ch) * c->s, c->s, mean); \
      c->mean[ch] = mean;                                                                              \
      c->invstd[ch] = q / (double)(c->n * c->s); /* the variance, until bn_forward */                 \
    }                                                                                                  \
  }                                                                                                    \
  /* rows [n, ch] in memory order: one sequential sweep of x and y */                               \
  SK_CLONES static void bn_apply_##sfx(void *ctx, int64_t lo, int64_t hi) {                          \
    const Bn *c = ctx;                                                                                 \
    for (int64_t row = lo; row < hi; row++) {                                                          \
      int64_t ch = row % c->c;                                                                         \
      double w = c->w ? (double)((const T *)c->w)[ch] : 1, b = c->b ? (double)((const T *)c->b)[ch] : 0; \
      const T scale = (T)(c->invstd[ch] * w), shift = (T)(b - c->mean[ch] * c->invstd[ch] * w);        \
      const T *x = (const T *)c->x + row * c->s;                                                       \
      T *y = (T *)c->y + row * c->s;                                                                   \
      for (int64_t j = 0; j < c->s; j++) y[j] = x[j] * scale + shift;                                  \
    }                                                                                                  \
  }                                                                                                    \
  SK_CLONES static void bn_grad_##sfx(void *ctx, int64_t lo, int64_t hi) {                           \
    const Bn *c = ctx;                                                                                 \
    for (int64_t ch = lo; ch < hi; ch++) {                                                             \
      const T mean = (T)c->mean[ch];                                                                   \
      double sg = 0, sgx = 0;                                                                          \
      for (int64_t i = 0; i < c->n; i++) {                                                             \
        const T *x = (const T *)c->x + (i * c->c + ch) * c->s, *g = (const T *)c->g + (i * c->c + ch) * c->s; \
        T lg[LANES] = {0}, lgx[LANES] = {0}, a = 0, ax = 0;                                            \
        int64_t j = 0;                                                                                 \
        for (; j + LANES <= c->s; j += LANES)                                                          \
          for (int k = 0; k < LANES; k++) lg[k] += g[j + k], lgx[k] += g[j + k] * (x[j + k] - mean);   \
        for (; j < c->s; j++) a += g[j], ax += g[j] * (x[j] - mean);                                   \
        for (int k = 0; k < LANES; k++) a += lg[k], ax += lgx[k];                                      \
        sg += (double)a, sgx += (double)ax;                                                            \
      }                                                                                                \
      c->sum_g[ch] = sg, c->sum_gx[ch] = sgx;                                                          \
      if (!c->want_gi) continue;                                                                       \
      double inv = c->invstd[ch], w = c->w ? (double)((const T *)c->w)[ch] : 1, cnt = (double)(c->n * c->s); \
      const T k1 = (T)(inv * w), k2 = c->train ? (T)(inv * inv * sgx / cnt) : (T)0;                    \
      const T mg = c->train ? (T)(sg / cnt) : (T)0;                                                    \
      for (int64_t i = 0; i < c->n; i++) {                                                             \
        const T *x = (const T *)c->x + (i * c->c + ch) * c->s, *g = (const T *)c->g + (i * c->c + ch) * c->s; \
        T *gi = (T *)c->y + (i * c->c + ch) * c->s;                                                    \
        for (int64_t j = 0; j < c->s; j++) gi[j] = (g[j] - mg - (x[j] - mean) * k2) * k1;              \
      }                                                                                                \
    }                                                                                                  \
  }
BN_LOOPS(f32, float)
BN_LOOPS(f64, double)

static int floats_only(const SkTensor *t, const char *name) {
  if (sk_dtype_is_floating(t->dtype)) return 0;
  return sk_error("\"%s\" not implemented for '%s'", name, sk_dtype_torch_name(t->dtype));
}

/* Element i of a 1-d tensor (any dtype and stride), as a double. */
static double elem(const SkTensor *t, int64_t i) {
  return sk_load_double((const char *)sk_tensor_data(t) + i * t->strides[0] * (int64_t)sk_dtype_size(t->dtype), t->dtype);
}
static void set_elem(SkTensor *t, int64_t i, double v) {
  sk_store_double((char *)sk_tensor_data(t) + i * t->strides[0] * (int64_t)sk_dtype_size(t->dtype), t->dtype, v);
}

static void bn_geometry(Bn *c, const SkTensor *input) {
  c->n = input->sizes[0], c->c = input->sizes[1];
  c->s = sk_numel(input->ndim - 2, input->sizes + 2);
}

int sk_cpu_native_batch_norm(SkTensor **result1, SkTensor **result2, SkTensor **result3, const SkTensor *input,
                             const SkTensor *weight, const SkTensor *bias, SkTensor *running_mean, SkTensor *running_var,
                             int training, double momentum, double eps) {
  SkTensor *r[3] = {NULL, NULL, NULL};
  if (sk_meta_kernel_native_batch_norm(&r[0], &r[1], &r[2], input, weight, bias, running_mean, running_var, training,
                                       momentum, eps))
    return -1;
  if (floats_only(input, "batch_norm")) { release(r, 3); return -1; }
  int rc = sk_cpu_from_meta(r, 3);
  SkDType ct = input->dtype == SK_DTYPE_FLOAT64 ? SK_DTYPE_FLOAT64 : SK_DTYPE_FLOAT32;
  SkTensor *k[5] = {NULL};
  Bn c = {0};
  bn_geometry(&c, input);
  double *stats = rc ? NULL : calloc((size_t)(2 * c.c + 1), sizeof *stats);
  if (!rc && !stats) rc = sk_error("out of memory");
  const SkTensor *x = sk_cpu_operand(input, ct, &k[0], &rc), *w = sk_cpu_operand(weight, ct, &k[1], &rc), *b = sk_cpu_operand(bias, ct, &k[2], &rc);
  SkTensor *y = sk_cpu_target(r[0], ct, &k[3], &rc);
  if (!rc) {
    c.x = sk_tensor_data(x), c.w = w ? sk_tensor_data(w) : NULL, c.b = b ? sk_tensor_data(b) : NULL, c.y = sk_tensor_data(y);
    c.mean = stats, c.invstd = stats + c.c;
    int64_t per = c.n * c.s, grain = per ? SK_GRAIN / per : c.c;
    int64_t count = c.n * c.s;
    if (training) {
      sk_parallel_for(0, c.c, grain < 1 ? 1 : grain, ct == SK_DTYPE_FLOAT64 ? bn_stats_f64 : bn_stats_f32, &c);
      for (int64_t ch = 0; ch < c.c; ch++) {
        double var = c.invstd[ch];
        c.invstd[ch] = count ? 1 / sqrt(var + eps) : NAN;
        set_elem(r[1], ch, c.mean[ch]);
        set_elem(r[2], ch, c.invstd[ch]);
        if (running_mean && count) { /* an empty batch observes nothing */
          set_elem(running_mean, ch, (1 - momentum) * elem(running_mean, ch) + momentum * c.mean[ch]);
          double unbiased = count > 1 ? var * (double)count / (double)(count - 1) : INFINITY;
          set_elem(running_var, ch, (1 - momentum) * elem(running_var, ch) + momentum * unbiased);
        }
      }
    } else
      for (int64_t ch = 0; ch < c.c; ch++)
        c.mean[ch] = elem(running_mean, ch), c.invstd[ch] = 1 / sqrt(elem(running_var, ch) + eps);
    int64_t rgrain = c.s ? SK_GRAIN / c.s : c.n * c.c;
    if (count) sk_parallel_for(0, c.n * c.c, rgrain < 1 ? 1 : rgrain, ct == SK_DTYPE_FLOAT64 ? bn_apply_f64 : bn_apply_f32, &c);
  }
  rc = write_back(rc, r[0], k[3]);
  free(stats);
  release(k, 5);
  if (rc) { release(r, 3); return -1; }
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
}

int sk_cpu_native_batch_norm_backward(SkTensor **result1, SkTensor **result2, SkTensor **result3,
                                      const SkTensor *grad_out, const SkTensor *input, const SkTensor *weight,
                                      const SkTensor *running_mean, const SkTensor *running_var,
                                      const SkTensor *save_mean, const SkTensor *save_invstd, int train, double eps,
                                      SkIntList output_mask) {
  SkTensor *r[3] = {NULL, NULL, NULL};
  if (sk_meta_kernel_native_batch_norm_backward(&r[0], &r[1], &r[2], grad_out, input, weight, running_mean, running_var,
                                                save_mean, save_invstd, train, eps, output_mask))
    return -1;
  if (floats_only(input, "batch_norm_backward")) { release(r, 3); return -1; }
  int rc = sk_cpu_from_meta(r, 3);
  SkDType ct = input->dtype == SK_DTYPE_FLOAT64 ? SK_DTYPE_FLOAT64 : SK_DTYPE_FLOAT32;
  SkTensor *k[4] = {NULL};
  Bn c = {0};
  bn_geometry(&c, input);
  double *stats = rc ? NULL : calloc((size_t)(4 * c.c + 1), sizeof *stats);
  if (!rc && !stats) rc = sk_error("out of memory");
  const SkTensor *x = sk_cpu_operand(input, ct, &k[0], &rc), *g = sk_cpu_operand(grad_out, ct, &k[1], &rc), *w = sk_cpu_operand(weight, ct, &k[2], &rc);
  SkTensor *gi = sk_cpu_target(r[0], ct, &k[3], &rc);
  if (!rc) {
    c.x = sk_tensor_data(x), c.g = sk_tensor_data(g), c.w = w ? sk_tensor_data(w) : NULL;
    c.y = gi ? sk_tensor_data(gi) : NULL;
    c.mean = stats, c.invstd = stats + c.c, c.sum_g = stats + 2 * c.c, c.sum_gx = stats + 3 * c.c;
    c.train = train, c.want_gi = gi != NULL;
    for (int64_t ch = 0; ch < c.c; ch++) {
      if (train) c.mean[ch] = elem(save_mean, ch), c.invstd[ch] = elem(save_invstd, ch);
      else c.mean[ch] = elem(running_mean, ch), c.invstd[ch] = 1 / sqrt(elem(running_var, ch) + eps);
    }
    int64_t per = c.n * c.s, grain = per ? SK_GRAIN / per : c.c;
    sk_parallel_for(0, c.c, grain < 1 ? 1 : grain, ct == SK_DTYPE_FLOAT64 ? bn_grad_f64 : bn_grad_f32, &c);
    for (int64_t ch = 0; ch < c.c; ch++) {
      if (r[1]) set_elem(r[1], ch, c.sum_gx[ch] * c.invstd[ch]);
      if (r[2]) set_elem(r[2], ch, c.sum_g[ch]);
    }
  }
  rc = write_back(rc, r[0], k[3]);
  free(stats);
  release(k, 4);
  if (rc) { release(r, 3); return -1; }
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
}
/* }==== */
