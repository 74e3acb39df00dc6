/*
** sk_cpu_softmax.c — softmax, log_softmax, their gradients, and nll_loss over their results
** softmax reads its input contiguous, as [outer, n, inner] with the softmax
** over n. Over the last dim (inner == 1) each row is one fused pass in cache:
** its max, y = x - max, exp in place, the sum, then the scale (or, for
** log_softmax, y = x - max - log(sum)). Over another dim a block of up to
** BLOCK columns does the same row by row. Rows and blocks run in parallel.
** The gradients read grad_output g and the forward's output y the same way:
** softmax gI = y·(g - Σ g·y), log_softmax gI = g - exp(y)·Σ g.
** float32 and float64 compute in their own type (sums in double; a float32 row over the
** last dim at AVX2 and up is one fused vector pass of exp and sum, in float lanes moved
** into a double every 64 vectors, sk_cpu_unary_simd.c); float16
** and bfloat16 compute in float32 through converted copies.
** NaN anywhere in a row makes the row NaN, as in PyTorch.
*/
#include "sk_kernels.h"
#include "sk_cpu_isa.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

#include <math.h>
#include <stdlib.h>

#define LANES 8
#define BLOCK 256 /* columns of one block over a dim that is not the last */

/* {==== Row and column-block loops ====
** exp_f32 / exp_f64 are where a vector exp plugs in: y[i] = exp(x[i]) over a contiguous run
** (y may be x). */
static void exp_f32(float *y, const float *x, int64_t n) {
  SkVecFn v = sk_cpu_vec_math() ? sk_cpu_vec_math()->f32[SK_VEC_exp] : NULL; /* SLEEF at AVX2/AVX-512 */
  if (v) { v(y, x, n); return; }
  for (int64_t i = 0; i < n; i++) y[i] = expf(x[i]);
}
static void exp_f64(double *y, const double *x, int64_t n) {
  SkVecFn v = sk_cpu_vec_math() ? sk_cpu_vec_math()->f64[SK_VEC_exp] : NULL;
  if (v) { v(y, x, n); return; }
  for (int64_t i = 0; i < n; i++) y[i] = exp(x[i]);
}

#define FMAX(m, x) ((x) > (m) || (x) != (x) ? (x) : (m))

#define SOFTMAX_LOOPS(sfx, T, EXP, LOG)                                                           \
  static inline __attribute__((always_inline)) double sum_##sfx(const T *y, int64_t n) {                                                \
    double s[LANES] = {0}, sum = 0;                                                               \
    int64_t i = 0;                                                                                \
    for (; i + LANES <= n; i += LANES)                                                            \
      for (int j = 0; j < LANES; j++) s[j] += (double)y[i + j];                                   \
    for (; i < n; i++) sum += (double)y[i];                                                       \
    for (int j = 0; j < LANES; j++) sum += s[j];                                                  \
    return sum;                                                                                   \
  }                                                                                               \
  /* Σ exp(x - shift), the exps written to y unless y is NULL: the scalar form of the vector   \
  ** table's expsum, block by block through EXP. */                                              \
  static double expsum_##sfx(T *y, const T *x, T shift, int64_t n) {                              \
    T e[BLOCK];                                                                                   \
    double sum = 0;                                                                               \
    for (int64_t i = 0; i < n; i += BLOCK) {                                                      \
      int64_t k = n - i < BLOCK ? n - i : BLOCK;                                                  \
      T *d = y ? y + i : e;                                                                       \
      for (int64_t j = 0; j < k; j++) d[j] = x[i + j] - shift;                                    \
      EXP(d, d, k);                                                                               \
      sum += sum_##sfx(d, k);                                                                     \
    }                                                                                             \
    return sum;                                                                                   \
  }                                                                                               \
  /* One row: y may equal x (x is read only until y = x - max is written). The max skips NaN   \
  ** (a plain vector max): a NaN still makes exp(x - max), the sum and so the row NaN. es is     \
  ** the level's fused float32 pass (NULL for float64 and below AVX2). */                         \
  SK_CLONES static void row_##sfx(const T *x, T *y, int64_t n, int log_sm, SkVecExpSum es) {      \
    T l[LANES], m = (T)-INFINITY;                                                                 \
    int64_t i = 0;                                                                                \
    for (int j = 0; j < LANES; j++) l[j] = (T)-INFINITY;                                          \
    for (; i + LANES <= n; i += LANES)                                                            \
      for (int j = 0; j < LANES; j++) l[j] = x[i + j] > l[j] ? x[i + j] : l[j];                   \
    for (; i < n; i++) m = x[i] > m ? x[i] : m;                                                   \
    for (int j = 0; j < LANES; j++) m = l[j] > m ? l[j] : m;                                      \
    T *ey = log_sm ? NULL : y; /* softmax keeps the exps; log_softmax only sums them */           \
    double sum = es ? es((float *)ey, (const float *)x, (float)m, n) : expsum_##sfx(ey, x, m, n);  \
    if (log_sm) {                                                                                 \
      const T lse = (T)LOG(sum);                                                                  \
      for (i = 0; i < n; i++) y[i] = (x[i] - m) - lse;                                            \
    } else {                                                                                      \
      const T scale = (T)(1 / sum);                                                               \
      for (i = 0; i < n; i++) y[i] *= scale;                                                      \
    }                                                                                             \
  }                                                                                               \
  /* k columns of an [n, inner] slab, x and y at the block's first column. */                     \
  SK_CLONES static void cols_##sfx(const T *x, T *y, int64_t n, int64_t inner, int64_t k, int log_sm) {     \
    T m[BLOCK];                                                                                   \
    double s[BLOCK];                                                                              \
    for (int64_t j = 0; j < k; j++) { m[j] = (T)-INFINITY; s[j] = 0; }                            \
    for (int64_t i = 0; i < n; i++)                                                               \
      for (int64_t j = 0; j < k; j++) m[j] = FMAX(m[j], x[i * inner + j]);                        \
    for (int64_t i = 0; i < n; i++) {                                                             \
      T *yi = y + i * inner;                                                                      \
      const T *xi = x + i * inner;                                                                \
      T e[BLOCK];                                                                                 \
      for (int64_t j = 0; j < k; j++) e[j] = xi[j] - m[j];                                        \
      EXP(e, e, k);                                                                               \
      for (int64_t j = 0; j < k; j++) s[j] += (double)e[j];                                       \
      if (!log_sm)                                                                                \
        for (int64_t j = 0; j < k; j++) yi[j] = e[j];                                             \
    }                                                                                             \
    T f[BLOCK];                                                                                   \
    for (int64_t j = 0; j < k; j++) f[j] = log_sm ? m[j] + (T)LOG(s[j]) : (T)(1 / s[j]);          \
    for (int64_t i = 0; i < n; i++) {                                                             \
      T *yi = y + i * inner;                                                                      \
      const T *xi = x + i * inner;                                                                \
      if (log_sm)                                                                                 \
        for (int64_t j = 0; j < k; j++) yi[j] = xi[j] - f[j];                                     \
      else                                                                                        \
        for (int64_t j = 0; j < k; j++) yi[j] *= f[j];                                            \
    }                                                                                             \
  }
SOFTMAX_LOOPS(f32, float, exp_f32, log)
SOFTMAX_LOOPS(f64, double, exp_f64, log)

/* The gradients: o may not overlap g or y. */
#define SOFTMAX_BACKWARD_LOOPS(sfx, T, EXP)                                                       \
  static inline __attribute__((always_inline)) double dot_##sfx(const T *a, const T *b, int64_t n) {                                    \
    double s[LANES] = {0}, sum = 0;                                                               \
    int64_t i = 0;                                                                                \
    for (; i + LANES <= n; i += LANES)                                                            \
      for (int j = 0; j < LANES; j++) s[j] += (double)a[i + j] * (double)b[i + j];                \
    for (; i < n; i++) sum += (double)a[i] * (double)b[i];                                        \
    for (int j = 0; j < LANES; j++) sum += s[j];                                                  \
    return sum;                                                                                   \
  }                                                                                               \
  SK_CLONES static void brow_##sfx(const T *g, const T *y, T *o, int64_t n, int log_sm) {                   \
    if (log_sm) {                                                                                 \
      const T s = (T)sum_##sfx(g, n);                                                             \
      T e[BLOCK];                                                                                 \
      for (int64_t i = 0; i < n; i += BLOCK) {                                                    \
        int64_t k = n - i < BLOCK ? n - i : BLOCK;                                                \
        EXP(e, y + i, k);                                                                         \
        for (int64_t j = 0; j < k; j++) o[i + j] = g[i + j] - e[j] * s;                           \
      }                                                                                           \
    } else {                                                                                      \
      const T s = (T)dot_##sfx(g, y, n);                                                          \
      for (int64_t i = 0; i < n; i++) o[i] = y[i] * (g[i] - s);                                   \
    }                                                                                             \
  }                                                                                               \
  SK_CLONES static void bcols_##sfx(const T *g, const T *y, T *o, int64_t n, int64_t inner, int64_t k, int log_sm) { \
    double s[BLOCK];                                                                              \
    T f[BLOCK], e[BLOCK];                                                                         \
    for (int64_t j = 0; j < k; j++) s[j] = 0;                                                     \
    for (int64_t i = 0; i < n; i++) {                                                             \
      const T *gi = g + i * inner, *yi = y + i * inner;                                           \
      if (log_sm)                                                                                 \
        for (int64_t j = 0; j < k; j++) s[j] += (double)gi[j];                                    \
      else                                                                                        \
        for (int64_t j = 0; j < k; j++) s[j] += (double)gi[j] * (double)yi[j];                    \
    }                                                                                             \
    for (int64_t j = 0; j < k; j++) f[j] = (T)s[j];                                               \
    for (int64_t i = 0; i < n; i++) {                                                             \
      const T *gi = g + i * inner, *yi = y + i * inner;                                           \
      T *oi = o + i * inner;                                                                      \
      if (log_sm) {                                                                               \
        EXP(e, yi, k);                                                                            \
        for (int64_t j = 0; j < k; j++) oi[j] = gi[j] - e[j] * f[j];                              \
      } else                                                                                      \
        for (int64_t j = 0; j < k; j++) oi[j] = yi[j] * (gi[j] - f[j]);                           \
    }                                                                                             \
  }
SOFTMAX_BACKWARD_LOOPS(f32, float, exp_f32)
SOFTMAX_BACKWARD_LOOPS(f64, double, exp_f64)
/* }==== */

/* {==== Driver ==== */
/* x: the forward's input, or the backward's y (the forward's output); g: grad_output (NULL
** in the forward); y: the destination. All contiguous, of the compute dtype. */
typedef struct SmCtx {
  const char *x, *g;
  char *y;
  int64_t n, inner, nblk;
  int f64, log_sm;
  SkVecExpSum es; /* the level's fused float32 Σ exp pass, looked up once a call; NULL for float64 */
} SmCtx;

static void sm_rows(void *ctx, int64_t b, int64_t e) {
  const SmCtx *c = ctx;
  for (int64_t r = b; r < e; r++) {
    int64_t off = r * c->n;
    if (c->f64) {
      const double *x = (const double *)c->x + off;
      double *y = (double *)c->y + off;
      if (c->g) brow_f64((const double *)c->g + off, x, y, c->n, c->log_sm);
      else row_f64(x, y, c->n, c->log_sm, NULL);
    } else {
      const float *x = (const float *)c->x + off;
      float *y = (float *)c->y + off;
      if (c->g) brow_f32((const float *)c->g + off, x, y, c->n, c->log_sm);
      else row_f32(x, y, c->n, c->log_sm, c->es);
    }
  }
}

static void sm_blocks(void *ctx, int64_t b, int64_t e) {
  const SmCtx *c = ctx;
  for (int64_t u = b; u < e; u++) {
    int64_t o = u / c->nblk, j0 = u % c->nblk * BLOCK;
    int64_t k = c->inner - j0 < BLOCK ? c->inner - j0 : BLOCK, off = o * c->n * c->inner + j0;
    if (c->f64) {
      const double *x = (const double *)c->x + off;
      double *y = (double *)c->y + off;
      if (c->g) bcols_f64((const double *)c->g + off, x, y, c->n, c->inner, k, c->log_sm);
      else cols_f64(x, y, c->n, c->inner, k, c->log_sm);
    } else {
      const float *x = (const float *)c->x + off;
      float *y = (float *)c->y + off;
      if (c->g) bcols_f32((const float *)c->g + off, x, y, c->n, c->inner, k, c->log_sm);
      else cols_f32(x, y, c->n, c->inner, k, c->log_sm);
    }
  }
}

/* t as a contiguous tensor of dtype ct: t itself, or a converted copy left in *conv. */
static const SkTensor *compute_view(const SkTensor *t, SkDType ct, SkTensor **conv) {
  if (t->dtype == ct && sk_tensor_is_contiguous(t)) return t;
  if (!(*conv = sk_tensor_empty(t->ndim, t->sizes, ct, t->device)) || sk_copy_cpu(*conv, t)) return NULL;
  return *conv;
}

/* The forward (g NULL: x is self) or the gradient (g grad_output, x the forward's output),
** over dim of x, into out. */
static int run(const SkTensor *x, const SkTensor *g, int64_t dim, SkTensor *out, int log_sm, const char *name) {
  int64_t d = 0;
  if (x->ndim > 0 && sk_wrap_dim(dim, x->ndim, "dim", &d)) return -1;
  int last = x->ndim == 0 || d == x->ndim - 1;
  if (!sk_dtype_is_floating(x->dtype))
    return sk_error("\"%s%s_kernel_impl\" not implemented for '%s'", name, last ? "_lastdim" : "",
                    sk_dtype_torch_name(x->dtype));
  if (out->numel == 0) return 0;
  /* float32 or float64 to compute in: half types go through float32 copies. */
  SkDType ct = x->dtype == SK_DTYPE_FLOAT64 ? SK_DTYPE_FLOAT64 : SK_DTYPE_FLOAT32;
  SkTensor *cx = NULL, *cg = NULL, *tmp = NULL;
  const SkTensor *in = compute_view(x, ct, &cx), *gin = g ? compute_view(g, ct, &cg) : NULL;
  int rc = !in || (g && !gin) ? -1 : 0;
  /* the forward reads each row before writing it, so out may be its input; nothing else may overlap */
  int same = !rc && !g && out->storage == in->storage && out->offset == in->offset;
  if (!rc && (out->dtype != ct || !sk_tensor_is_contiguous(out) || (!same && sk_tensor_may_overlap(out, in)) ||
              (gin && sk_tensor_may_overlap(out, gin))))
    if (!(tmp = sk_tensor_empty(out->ndim, out->sizes, ct, out->device))) rc = -1;
  if (!rc) {
    SmCtx c;
    c.x = sk_tensor_data(in);
    c.g = gin ? sk_tensor_data(gin) : NULL;
    c.y = sk_tensor_data(tmp ? tmp : out);
    c.n = x->ndim ? x->sizes[d] : 1;
    c.inner = x->ndim ? sk_numel(x->ndim - (int)d - 1, x->sizes + d + 1) : 1;
    c.nblk = (c.inner + BLOCK - 1) / BLOCK;
    c.f64 = ct == SK_DTYPE_FLOAT64;
    c.log_sm = log_sm;
    c.es = !c.f64 && sk_cpu_vec_math() ? sk_cpu_vec_math()->expsum_f32 : NULL;
    int64_t outer = x->ndim ? sk_numel((int)d, x->sizes) : 1;
    if (c.inner == 1) {
      int64_t grain = SK_GRAIN / c.n;
      sk_parallel_for(0, outer, grain < 1 ? 1 : grain, sm_rows, &c);
    } else {
      int64_t grain = SK_GRAIN / (c.n * (c.inner < BLOCK ? c.inner : BLOCK));
      sk_parallel_for(0, outer * c.nblk, grain < 1 ? 1 : grain, sm_blocks, &c);
    }
    if (tmp) rc = sk_copy_cpu(out, tmp);
  }
  sk_tensor_release(tmp);
  sk_tensor_release(cx);
  sk_tensor_release(cg);
  return rc;
}

static int softmax(const SkTensor *self, int64_t dim, int half_to_float, SkTensor *out, int log_sm) {
  const char *name = log_sm ? "log_softmax" : "softmax";
  if (half_to_float) return sk_error("%s with half to float conversion is not supported on CPU", name);
  return run(self, NULL, dim, out, log_sm, name);
}
/* }==== */

int sk_cpu_softmax_out(const SkMeta *m, const SkTensor *self, int64_t dim, int half_to_float, SkTensor *out) {
  (void)m;
  return softmax(self, dim, half_to_float, out, 0);
}

int sk_cpu_log_softmax_out(const SkMeta *m, const SkTensor *self, int64_t dim, int half_to_float, SkTensor *out) {
  (void)m;
  return softmax(self, dim, half_to_float, out, 1);
}

/* input_dtype is grad_output's (sk_meta__softmax_backward_data). */
int sk_cpu_softmax_backward_out(const SkMeta *m, const SkTensor *grad_output, const SkTensor *output, int64_t dim,
                                SkDType input_dtype, SkTensor *grad_input) {
  (void)m; (void)input_dtype;
  return run(output, grad_output, dim, grad_input, 0, "softmax_backward");
}

int sk_cpu_log_softmax_backward_out(const SkMeta *m, const SkTensor *grad_output, const SkTensor *output, int64_t dim,
                                    SkDType input_dtype, SkTensor *out) {
  (void)m; (void)input_dtype;
  return run(output, grad_output, dim, out, 1, "log_softmax_backward");
}

/* {==== nll_loss ====
** self [N, C] or [C] (log-probabilities), target [N] or [] (class indices, int64 or
** uint8), weight [C] or NULL. reduction: 0 none, 1 mean, 2 sum. Every target is checked
** before anything is written; sums are in double. */
int sk_cpu_nll_loss_forward_out(const SkMeta *m, const SkTensor *self, const SkTensor *target, const SkTensor *weight,
                                int64_t reduction, int64_t ignore_index, SkTensor *output, SkTensor *total_weight) {
  (void)m;
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("\"nll_loss_out_frame\" not implemented for '%s'", sk_dtype_torch_name(self->dtype));
  if (target->dtype != SK_DTYPE_INT64 && target->dtype != SK_DTYPE_UINT8)
    return sk_error("expected scalar type Long but found %s (argument 'target')", sk_dtype_torch_name(target->dtype));
  if (weight && weight->dtype != self->dtype)
    return sk_error("expected scalar type %s but found %s (argument 'weight')", sk_dtype_torch_name(self->dtype),
                    sk_dtype_torch_name(weight->dtype));
  int64_t batch = self->ndim == 2 ? self->sizes[0] : 1, nc = self->sizes[self->ndim - 1];
  int64_t xs0 = self->ndim == 2 ? self->strides[0] : 0, xs1 = self->strides[self->ndim - 1];
  int64_t ts = target->ndim ? target->strides[0] : 0;
  size_t xsz = sk_dtype_size(self->dtype), tsz = sk_dtype_size(target->dtype);
  const char *x = sk_tensor_data(self), *t = sk_tensor_data(target), *w = weight ? sk_tensor_data(weight) : NULL;
  int64_t ws = weight ? weight->strides[0] : 0;
  for (int64_t i = 0; i < batch; i++) {
    int64_t c = sk_load_int64(t + i * ts * (int64_t)tsz, target->dtype);
    if (c != ignore_index && (c < 0 || c >= nc)) return sk_error("Target %lld is out of bounds.", (long long)c);
  }
  int none = reduction == 0 && self->ndim == 2;
  char *o = sk_tensor_data(output);
  size_t osz = sk_dtype_size(output->dtype);
  double sum = 0, wsum = 0;
  for (int64_t i = 0; i < batch; i++) {
    int64_t c = sk_load_int64(t + i * ts * (int64_t)tsz, target->dtype);
    double loss = 0, wc = 0;
    if (c != ignore_index) {
      wc = w ? sk_load_double(w + c * ws * (int64_t)xsz, self->dtype) : 1;
      loss = -sk_load_double(x + (i * xs0 + c * xs1) * (int64_t)xsz, self->dtype) * wc;
    }
    if (none) sk_store_double(o + i * output->strides[0] * (int64_t)osz, output->dtype, loss);
    sum += loss;
    wsum += wc;
  }
  if (!none) sk_store_double(o, output->dtype, reduction == 1 ? sum / wsum : sum);
  sk_store_double(sk_tensor_data(total_weight), total_weight->dtype, none ? 0 : wsum);
  return 0;
}
/* }==== */
