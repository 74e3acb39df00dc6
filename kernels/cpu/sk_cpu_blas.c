/*
** sk_cpu_blas.c — matrix products: mm, bmm, addmm, baddbmm, mv, addmv, dot
** Every dtype computes in one of three work dtypes: float32 (also for the half
** types: float accumulation, one rounding at the end), float64, or int64
** (integers and bool, wrapping). float32 GEMM calls oneDNN's sgemm (its JIT
** kernels use the CPU's widest vectors: 5x Debian's OpenBLAS on an AVX-512 Xeon,
** where OpenBLAS 0.3.21 falls back to its Prescott kernels); float64 GEMM, GEMV
** and dot call OpenBLAS. Both read the operands as they lie when a matrix has
** unit stride in one dim (transposed for column-major ones) and a vector a
** positive stride; other layouts and dtypes are copied first. The product accumulates into
** C = beta·self (or zeros when beta is 0, so that NaN in self is ignored, as
** in PyTorch; BLAS applies beta itself, and with beta 0 never reads C), which
** is `out` itself when it is contiguous, of the work dtype and not
** overlapping an input; else a temporary copied in.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

#include "sk_cpu_dnnl.h"
#include "sk_cpu_isa.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

/* sk's threads are the only ones: products are cut into pieces that each run one BLAS
** call on the calling thread, and OpenBLAS's own pool stays at one thread. Two pools on
** the same cores fight: libgomp's waiting threads spin while OpenBLAS's want the core
** (the 2-thread MLP step of bench_autograd took 13 ms instead of 3.5). oneDNN shares
** sk's OpenMP pool (inside a piece it runs on the piece's thread). Its instruction set
** follows sk.cpu_isa() (SK_CPU_ISA lowers both), set once before its first kernel. */
static void blas_setup(void) {
  sk_cpu_dnnl_setup();
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}
#define SK_GEMM_GRAIN ((int64_t)1 << 18) /* multiply-adds per piece: ~20 µs, against 3-5 µs a fork */
#include <limits.h>

/* {==== Operands ==== */
static SkDType work_dtype(SkDType t) {
  if (t == SK_DTYPE_FLOAT64) return SK_DTYPE_FLOAT64;
  return sk_dtype_is_floating(t) ? SK_DTYPE_FLOAT32 : SK_DTYPE_INT64;
}

/* A matrix (or a batch of them) in the work dtype; strides in elements.
** BLAS reads (ld, trans); the integer loop reads (rs, cs). */
typedef struct Mat {
  const char *data;
  int64_t batch_stride, rs, cs, ld;
  int trans;
} Mat;

/* How BLAS can read the last two dims of t as they lie; 0 when it cannot. */
static int blas_layout(const SkTensor *t, int *trans, int64_t *ld) {
  int nd = t->ndim;
  int64_t r = t->sizes[nd - 2], c = t->sizes[nd - 1], s0 = t->strides[nd - 2], s1 = t->strides[nd - 1];
  int64_t cmin = c > 1 ? c : 1, rmin = r > 1 ? r : 1;
  if ((c == 1 || s1 == 1) && (r == 1 || s0 >= cmin)) {
    *trans = 0;
    *ld = r == 1 ? cmin : s0;
  } else if ((r == 1 || s0 == 1) && (c == 1 || s1 >= rmin)) {
    *trans = 1;
    *ld = c == 1 ? rmin : s1;
  } else return 0;
  return *ld <= INT_MAX;
}

/* Sets *m to read t in the work dtype w, through a converted copy (*copy) when needed. */
static int prepare(const SkTensor *t, SkDType w, Mat *m, SkTensor **copy) {
  int64_t ld = 0;
  int trans = 0;
  *copy = NULL;
  int ok = t->dtype == w && (w == SK_DTYPE_INT64 || blas_layout(t, &trans, &ld));
  if (!ok) {
    if (!(*copy = sk_tensor_empty(t->ndim, t->sizes, w, t->device))) return -1;
    if (sk_copy_cpu(*copy, t)) return -1;
    t = *copy;
    trans = 0;
    ld = t->sizes[t->ndim - 1] > 1 ? t->sizes[t->ndim - 1] : 1;
  }
  m->data = sk_tensor_data(t);
  m->batch_stride = t->ndim == 3 ? t->strides[0] : 0;
  m->rs = t->strides[t->ndim - 2];
  m->cs = t->strides[t->ndim - 1];
  m->ld = ld;
  m->trans = trans;
  return 0;
}
/* A vector in the work dtype: BLAS reads (data, inc), inc in elements, >= 1. */
typedef struct Vec {
  const char *data;
  int64_t inc;
} Vec;

/* Sets *v to read the 1-D t in the work dtype w, through a contiguous copy (*copy) when needed. */
static int prepare_vec(const SkTensor *t, SkDType w, Vec *v, SkTensor **copy) {
  int64_t inc = t->sizes[0] > 1 ? t->strides[0] : 1;
  *copy = NULL;
  if (t->dtype != w || inc < 1 || inc > INT_MAX) {
    if (!(*copy = sk_tensor_empty(1, t->sizes, w, t->device))) return -1;
    if (sk_copy_cpu(*copy, t)) return -1;
    t = *copy;
    inc = 1;
  }
  v->data = sk_tensor_data(t);
  v->inc = inc;
  return 0;
}
/* }==== */

/* {==== Integer product ==== */
typedef struct IntGemm {
  const int64_t *a, *b;
  int64_t *c;
  int64_t n, k, p, alpha;
  int64_t as0, as1, asb, bs0, bs1, bsb; /* element strides: rows, cols, batch */
} IntGemm;

/* Rows [b, e) of all batches flattened: C[i, :] += alpha · A[i, kk] · B[kk, :], wrapping. */
static void int_gemm_rows(void *ctx, int64_t b, int64_t e) {
  const IntGemm *g = ctx;
  for (int64_t row = b; row < e; row++) {
    int64_t bi = row / g->n, i = row % g->n;
    const int64_t *a = g->a + bi * g->asb + i * g->as0, *bm = g->b + bi * g->bsb;
    uint64_t *c = (uint64_t *)(g->c + row * g->p);
    for (int64_t kk = 0; kk < g->k; kk++) {
      uint64_t av = (uint64_t)g->alpha * (uint64_t)a[kk * g->as1];
      const int64_t *brow = bm + kk * g->bs0;
      if (g->bs1 == 1)
        for (int64_t j = 0; j < g->p; j++) c[j] += av * (uint64_t)brow[j];
      else
        for (int64_t j = 0; j < g->p; j++) c[j] += av * (uint64_t)brow[j * g->bs1];
    }
  }
}
/* }==== */

typedef struct IntGemv {
  const int64_t *a, *x;
  int64_t *y;
  int64_t k, alpha, as0, as1, xs; /* element strides: rows, cols, vector */
} IntGemv;

/* Rows [b, e): y[i] += alpha · Σ A[i, kk] · x[kk], wrapping. */
static void int_gemv_rows(void *ctx, int64_t b, int64_t e) {
  const IntGemv *g = ctx;
  for (int64_t i = b; i < e; i++) {
    const int64_t *row = g->a + i * g->as0;
    uint64_t acc = 0;
    if (g->as1 == 1 && g->xs == 1)
      for (int64_t kk = 0; kk < g->k; kk++) acc += (uint64_t)row[kk] * (uint64_t)g->x[kk];
    else
      for (int64_t kk = 0; kk < g->k; kk++) acc += (uint64_t)row[kk * g->as1] * (uint64_t)g->x[kk * g->xs];
    g->y[i] = (int64_t)((uint64_t)g->y[i] + (uint64_t)g->alpha * acc);
  }
}
/* }==== */

/* {==== Float product ==== */
/* A unit is one row (split_rows) or one column of one matrix of C; a range of units is a
** few BLAS calls on blocks of C. */
typedef struct FloatGemm {
  const Mat *a, *b;
  char *c;
  int64_t n, k, p;
  double alpha, beta; /* beta 0: C is only written */
  int f32, split_rows;
  int *status;        /* a failing oneDNN call's status (any piece's) */
} FloatGemm;

/* A block of C: rows [r0, r0 + nr), columns [c0, c0 + nc) of matrix bi. */
static void gemm_block(const FloatGemm *g, int64_t bi, int64_t r0, int64_t nr, int64_t c0, int64_t nc) {
  const Mat *a = g->a, *b = g->b;
  enum CBLAS_TRANSPOSE ta = a->trans ? CblasTrans : CblasNoTrans, tb = b->trans ? CblasTrans : CblasNoTrans;
  int64_t ao = bi * a->batch_stride + r0 * (a->trans ? 1 : a->ld), bo = bi * b->batch_stride + c0 * (b->trans ? b->ld : 1);
  int64_t co = bi * g->n * g->p + r0 * g->p + c0, ldc = g->p > 1 ? g->p : 1;
  if (g->f32) {
    dnnl_status_t st = dnnl_sgemm(a->trans ? 'T' : 'N', b->trans ? 'T' : 'N', nr, nc, g->k, (float)g->alpha,
                                  (const float *)a->data + ao, a->ld, (const float *)b->data + bo, b->ld,
                                  (float)g->beta, (float *)g->c + co, ldc);
    if (st != dnnl_success) __atomic_store_n(g->status, (int)st, __ATOMIC_RELAXED);
  } else
    cblas_dgemm(CblasRowMajor, ta, tb, (int)nr, (int)nc, (int)g->k, g->alpha, (const double *)a->data + ao,
                (int)a->ld, (const double *)b->data + bo, (int)b->ld, g->beta, (double *)g->c + co, (int)ldc);
}

static void float_gemm_units(void *ctx, int64_t u, int64_t e) {
  const FloatGemm *g = ctx;
  int64_t per = g->split_rows ? g->n : g->p;
  while (u < e) {
    int64_t bi = u / per, i = u % per, m = per - i < e - u ? per - i : e - u;
    if (g->split_rows) gemm_block(g, bi, i, m, 0, g->p);
    else gemm_block(g, bi, 0, g->n, i, m);
    u += m;
  }
}
/* }==== */

typedef struct FloatGemv {
  const Mat *a;
  const Vec *x;
  void *y;
  int64_t k;
  double alpha, beta; /* beta 0: y is only written */
  int f32;
} FloatGemv;

/* y[i0, i1) += alpha · A[i0:i1, :] @ x, one BLAS call. */
static void float_gemv_rows(void *ctx, int64_t i0, int64_t i1) {
  const FloatGemv *g = ctx;
  const Mat *a = g->a;
  enum CBLAS_TRANSPOSE ta = a->trans ? CblasTrans : CblasNoTrans;
  int64_t ao = i0 * (a->trans ? 1 : a->ld), m = i1 - i0;
  int rows = (int)(a->trans ? g->k : m), cols = (int)(a->trans ? m : g->k); /* of the matrix as BLAS reads it */
  if (g->f32)
    cblas_sgemv(CblasRowMajor, ta, rows, cols, (float)g->alpha, (const float *)a->data + ao, (int)a->ld,
                (const float *)g->x->data, (int)g->x->inc, (float)g->beta, (float *)g->y + i0, 1);
  else
    cblas_dgemv(CblasRowMajor, ta, rows, cols, g->alpha, (const double *)a->data + ao, (int)a->ld,
                (const double *)g->x->data, (int)g->x->inc, g->beta, (double *)g->y + i0, 1);
}
/* }==== */

/* {==== Accumulator C ==== */
/* C (contiguous, work dtype) *= beta. */
static void scale(SkTensor *c, SkScalar beta) {
  int64_t n = c->numel;
  void *p = sk_tensor_data(c);
  if (c->dtype == SK_DTYPE_FLOAT32) {
    float bf = (float)sk_scalar_to_double(beta), *x = p;
    for (int64_t i = 0; i < n; i++) x[i] *= bf;
  } else if (c->dtype == SK_DTYPE_FLOAT64) {
    double bd = sk_scalar_to_double(beta), *x = p;
    for (int64_t i = 0; i < n; i++) x[i] *= bd;
  } else {
    uint64_t bi = (uint64_t)sk_scalar_to_int(beta), *x = p;
    for (int64_t i = 0; i < n; i++) x[i] *= bi;
  }
}

static int is_zero(SkScalar s) { return s.kind == SK_SCALAR_FLOAT ? s.v.f == 0 : s.v.i == 0; }
static int is_one(SkScalar s) { return s.kind == SK_SCALAR_FLOAT ? s.v.f == 1 : s.v.i == 1; }

/* out = beta·self + alpha·(a @ b); self may be NULL (beta ignored); a, b are [n,k], [k,p] or batched. */
static int matmul(const SkTensor *self, const SkTensor *a, const SkTensor *b, SkScalar beta, SkScalar alpha,
                  SkTensor *out) {
  if (out->numel == 0) return 0;
  int nd = a->ndim;
  int64_t batch = nd == 3 ? a->sizes[0] : 1, n = a->sizes[nd - 2], k = a->sizes[nd - 1], p = b->sizes[nd - 1];
  SkDType w = work_dtype(out->dtype);
  if (w != SK_DTYPE_INT64 && (n > INT_MAX || k > INT_MAX || p > INT_MAX))
    return sk_error("matrix dimensions larger than %d are not supported by BLAS", INT_MAX);
  int use_self = self && !is_zero(beta);
  int direct = out->dtype == w && sk_tensor_is_contiguous(out) && !sk_tensor_may_overlap(out, a) &&
               !sk_tensor_may_overlap(out, b) && (!use_self || !sk_tensor_may_overlap(out, self) || sk_tensor_same_view(out, self));
  SkTensor *ca = NULL, *cb = NULL, *tmp = NULL;
  Mat ma, mb;
  int rc = prepare(a, w, &ma, &ca) || prepare(b, w, &mb, &cb) ? -1 : 0;
  if (!rc && !direct && !(tmp = sk_tensor_empty(out->ndim, out->sizes, w, out->device))) rc = -1;
  SkTensor *c = tmp ? tmp : out;
  if (!rc && use_self && !sk_tensor_same_view(c, self)) rc = sk_copy_cpu(c, self);
  if (rc) goto done;
  if (w == SK_DTYPE_INT64 || k == 0) { /* else BLAS applies beta itself */
    if (!use_self) memset(sk_tensor_data(c), 0, (size_t)c->numel * sk_dtype_size(w));
    else if (!is_one(beta)) scale(c, beta);
  }
  if (k > 0) {
    char *cd = sk_tensor_data(c);
    if (w == SK_DTYPE_INT64) {
      IntGemm g = {(const int64_t *)ma.data, (const int64_t *)mb.data, (int64_t *)cd, n, k, p, sk_scalar_to_int(alpha),
                   ma.rs, ma.cs, ma.batch_stride, mb.rs, mb.cs, mb.batch_stride};
      int64_t grain = SK_GRAIN / (k * p) > 0 ? SK_GRAIN / (k * p) : 1;
      sk_parallel_for(0, batch * n, grain, int_gemm_rows, &g);
    } else {
      /* Split the larger of C's dims: the smaller operand is the one each piece packs whole. */
      int status = 0;
      FloatGemm g = {&ma, &mb, cd, n, k, p, sk_scalar_to_double(alpha), use_self ? sk_scalar_to_double(beta) : 0,
                     w == SK_DTYPE_FLOAT32, n >= p, &status};
      int64_t split = g.split_rows ? n : p, other = g.split_rows ? p : n;
      int64_t grain = SK_GEMM_GRAIN / (other * k) > 0 ? SK_GEMM_GRAIN / (other * k) : 1;
      blas_setup();
      sk_parallel_for(0, batch * split, grain, float_gemm_units, &g);
      if (status) rc = sk_error("oneDNN sgemm failed (status %d)", status);
    }
  }
  if (!rc && tmp) rc = sk_copy_cpu(out, tmp);
done:
  sk_tensor_release(ca);
  sk_tensor_release(cb);
  sk_tensor_release(tmp);
  return rc;
}

int sk_cpu_mm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat2, SkTensor *out) {
  (void)m;
  return matmul(NULL, self, mat2, sk_scalar_int(0), sk_scalar_int(1), out);
}

int sk_cpu_bmm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat2, SkTensor *out) {
  (void)m;
  return matmul(NULL, self, mat2, sk_scalar_int(0), sk_scalar_int(1), out);
}

int sk_cpu_addmm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat1, const SkTensor *mat2, SkScalar beta,
                     SkScalar alpha, SkTensor *out) {
  (void)m;
  return matmul(self, mat1, mat2, beta, alpha, out);
}

int sk_cpu_baddbmm_out(const SkMeta *m, const SkTensor *self, const SkTensor *batch1, const SkTensor *batch2,
                       SkScalar beta, SkScalar alpha, SkTensor *out) {
  (void)m;
  return matmul(self, batch1, batch2, beta, alpha, out);
}

/* {==== mv, addmv ==== */
/* out[n] = beta·self + alpha·(a[n,k] @ x[k]); self may be NULL (beta ignored). */
static int matvec(const SkTensor *self, const SkTensor *a, const SkTensor *x, SkScalar beta, SkScalar alpha,
                  SkTensor *out) {
  if (out->numel == 0) return 0;
  int64_t n = a->sizes[0], k = a->sizes[1];
  SkDType w = work_dtype(out->dtype);
  if (w != SK_DTYPE_INT64 && (n > INT_MAX || k > INT_MAX))
    return sk_error("matrix dimensions larger than %d are not supported by BLAS", INT_MAX);
  int use_self = self && !is_zero(beta);
  int direct = out->dtype == w && sk_tensor_is_contiguous(out) && !sk_tensor_may_overlap(out, a) &&
               !sk_tensor_may_overlap(out, x) && (!use_self || !sk_tensor_may_overlap(out, self) || sk_tensor_same_view(out, self));
  SkTensor *ca = NULL, *cx = NULL, *tmp = NULL;
  Mat ma;
  Vec vx;
  int rc = prepare(a, w, &ma, &ca) || prepare_vec(x, w, &vx, &cx) ? -1 : 0;
  if (!rc && !direct && !(tmp = sk_tensor_empty(1, &n, w, out->device))) rc = -1;
  SkTensor *y = tmp ? tmp : out;
  if (!rc && use_self && !sk_tensor_same_view(y, self)) rc = sk_copy_cpu(y, self);
  if (rc) goto done;
  if (w == SK_DTYPE_INT64 || k == 0) { /* else BLAS applies beta itself */
    if (!use_self) memset(sk_tensor_data(y), 0, (size_t)n * sk_dtype_size(w));
    else if (!is_one(beta)) scale(y, beta);
  }
  if (k > 0) {
    void *yd = sk_tensor_data(y);
    if (w == SK_DTYPE_INT64) {
      IntGemv g = {(const int64_t *)ma.data, (const int64_t *)vx.data, yd, k, sk_scalar_to_int(alpha),
                   ma.rs, ma.cs, vx.inc};
      sk_parallel_for(0, n, SK_GRAIN / k > 0 ? SK_GRAIN / k : 1, int_gemv_rows, &g);
    } else {
      FloatGemv g = {&ma, &vx, yd, k, sk_scalar_to_double(alpha), use_self ? sk_scalar_to_double(beta) : 0,
                     w == SK_DTYPE_FLOAT32};
      blas_setup();
      sk_parallel_for(0, n, SK_GEMM_GRAIN / k > 0 ? SK_GEMM_GRAIN / k : 1, float_gemv_rows, &g);
    }
  }
  if (tmp) rc = sk_copy_cpu(out, tmp);
done:
  sk_tensor_release(ca);
  sk_tensor_release(cx);
  sk_tensor_release(tmp);
  return rc;
}

int sk_cpu_mv_out(const SkMeta *m, const SkTensor *self, const SkTensor *vec, SkTensor *out) {
  (void)m;
  return matvec(NULL, self, vec, sk_scalar_int(0), sk_scalar_int(1), out);
}

int sk_cpu_addmv_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat, const SkTensor *vec, SkScalar beta,
                     SkScalar alpha, SkTensor *out) {
  (void)m;
  return matvec(self, mat, vec, beta, alpha, out);
}
/* }==== */

/* {==== dot ==== */
/* *out = Σ x[i]·y[i] over n elements, strides in elements; floats accumulate in CT, integers in
** wrapping uint64, bool is `or` of `and`s. */
typedef void (*DotFn)(const char *x, int64_t sx, const char *y, int64_t sy, int64_t n, void *out);

#define DOT_FLOAT(sfx, T, CT, LD, ST)                                                        \
  static void dot_##sfx(const char *xp, int64_t sx, const char *yp, int64_t sy, int64_t n, void *out) { \
    const T *x = (const T *)xp, *y = (const T *)yp;                                          \
    CT acc = 0;                                                                              \
    for (int64_t i = 0; i < n; i++) acc += LD(x[i * sx]) * LD(y[i * sy]);                    \
    *(T *)out = ST(acc);                                                                     \
  }
SK_FLOAT_TYPES(DOT_FLOAT)

#define DOT_INT(sfx, T, UT)                                                                  \
  static void dot_##sfx(const char *xp, int64_t sx, const char *yp, int64_t sy, int64_t n, void *out) { \
    const T *x = (const T *)xp, *y = (const T *)yp;                                          \
    uint64_t acc = 0;                                                                        \
    for (int64_t i = 0; i < n; i++) acc += (uint64_t)(int64_t)x[i * sx] * (uint64_t)(int64_t)y[i * sy]; \
    *(T *)out = (T)acc;                                                                      \
  }
SK_INT_TYPES(DOT_INT)

static void dot_b(const char *xp, int64_t sx, const char *yp, int64_t sy, int64_t n, void *out) {
  const uint8_t *x = (const uint8_t *)xp, *y = (const uint8_t *)yp;
  uint8_t acc = 0;
  for (int64_t i = 0; i < n; i++) acc |= x[i * sx] & y[i * sy];
  *(uint8_t *)out = acc;
}

static const DotFn dot_loops[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(dot), SK_INT_TABLE(dot), [SK_DTYPE_BOOL] = dot_b};

static int blas_inc(int64_t n, int64_t stride) { return n <= 1 || (stride >= 1 && stride <= INT_MAX); }

int sk_cpu_dot_out(const SkMeta *m, const SkTensor *self, const SkTensor *tensor, SkTensor *out) {
  (void)m;
  int64_t n = self->sizes[0], sx = n > 1 ? self->strides[0] : 1, sy = n > 1 ? tensor->strides[0] : 1;
  const char *x = sk_tensor_data(self), *y = sk_tensor_data(tensor);
  void *o = sk_tensor_data(out);
  SkDType dt = self->dtype;
  int blas = n <= INT_MAX && blas_inc(n, sx) && blas_inc(n, sy);
  if (dt == SK_DTYPE_FLOAT32 && blas)
    *(float *)o = cblas_sdot((int)n, (const float *)x, (int)sx, (const float *)y, (int)sy);
  else if (dt == SK_DTYPE_FLOAT64 && blas)
    *(double *)o = cblas_ddot((int)n, (const double *)x, (int)sx, (const double *)y, (int)sy);
  else dot_loops[dt](x, sx, y, sy, n, o);
  return 0;
}
/* }==== */
