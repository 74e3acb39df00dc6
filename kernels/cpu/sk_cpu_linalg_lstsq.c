/*
** sk_cpu_linalg_lstsq.c — sk.linalg's Householder-based kernels: lstsq, householder_product
** Same scheme as sk_cpu_linalg.c (sk_cpu_linalg.h). lstsq runs one of LAPACK's four drivers per
** matrix: gelsy (complete orthogonal factorization, the default), gels (QR, full rank only),
** gelsd and gelss (SVD). B is loaded into a max(m, n) x nrhs buffer; the solution is its first
** n rows, the residuals the column sums of squares of rows n..m-1 (m > n). householder_product
** is orgqr over the reflectors below the diagonal of input and tau.
*/
#include "sk_kernels.h"
#include "sk_cpu_linalg.h"
#include "sk_cpu_util.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

/* {==== lstsq ==== */
enum { GELSY, GELS, GELSD, GELSS };

static int driver_code(const char *d) {
  return !d || strcmp(d, "gelsy") == 0 ? GELSY : strcmp(d, "gels") == 0 ? GELS : strcmp(d, "gelsd") == 0 ? GELSD : GELSS;
}

/* Scratch: A (m x n), B (ldb x nrhs), singular values (k), residuals (nrhs), then n pivots. */
typedef struct Lstsq {
  SkLinJob j;
  int64_t m, n, nrhs, ldb;
  int drv;
  double rcond;
  SkLinMat sv, res;
  const SkTensor *t_rank;
  SkLinMat rank;
  int deficient; /* a matrix of rank < n (gelsd, gelss: no residuals) */
} Lstsq;

static void fill(void *buf, int dbl, int64_t n, double v) {
  for (int64_t i = 0; i < n; i++) {
    if (dbl) ((double *)buf)[i] = v;
    else ((float *)buf)[i] = (float)v;
  }
}

static int run_lstsq(const SkLinJob *job, int64_t b, char *s) {
  const Lstsq *L = (const Lstsq *)job;
  int dbl = job->dbl;
  int64_t m = L->m, n = L->n, nrhs = L->nrhs, ldb = L->ldb, k = m < n ? m : n, lda = m > 0 ? m : 1, es = dbl ? 8 : 4;
  char *x = s + (size_t)(m * n) * es, *sv = x + (size_t)(ldb * nrhs) * es, *res = sv + (size_t)k * es;
  lapack_int *jpvt = sk_cpu_lin_ints(job, s, m * n + ldb * nrhs + k + nrhs);
  lapack_int rank = 0, info = 0;
  sk_cpu_lin_load(&job->a, b, m, n, s, lda);
  fill(x, dbl, ldb * nrhs, 0.0);
  sk_cpu_lin_load(&job->b, b, m, nrhs, x, ldb);
  lapack_int m_ = (lapack_int)m, n_ = (lapack_int)n, r_ = (lapack_int)nrhs, la = (lapack_int)lda, lb = (lapack_int)ldb;
  int finite = 1;
  for (int64_t i = 0; i < m * n && finite; i++) finite = isfinite(sk_cpu_lin_at(s, dbl, i));
  if (L->drv >= GELSD && !finite) { /* the SVD drivers never see NaN or inf: NaN results, rank 0 */
    fill(x, dbl, ldb * nrhs, NAN);
    fill(sv, dbl, k, NAN);
  } else if (L->drv == GELSY) {
    memset(jpvt, 0, (size_t)(n > 0 ? n : 1) * sizeof *jpvt);
    info = dbl ? LAPACKE_dgelsy(LAPACK_COL_MAJOR, m_, n_, r_, (double *)s, la, (double *)x, lb, jpvt, L->rcond, &rank)
               : LAPACKE_sgelsy(LAPACK_COL_MAJOR, m_, n_, r_, (float *)s, la, (float *)x, lb, jpvt, (float)L->rcond, &rank);
  } else if (L->drv == GELS) {
    info = dbl ? LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', m_, n_, r_, (double *)s, la, (double *)x, lb)
               : LAPACKE_sgels(LAPACK_COL_MAJOR, 'N', m_, n_, r_, (float *)s, la, (float *)x, lb);
  } else if (L->drv == GELSD) {
    info = dbl ? LAPACKE_dgelsd(LAPACK_COL_MAJOR, m_, n_, r_, (double *)s, la, (double *)x, lb, (double *)sv, L->rcond, &rank)
               : LAPACKE_sgelsd(LAPACK_COL_MAJOR, m_, n_, r_, (float *)s, la, (float *)x, lb, (float *)sv, (float)L->rcond, &rank);
  } else {
    info = dbl ? LAPACKE_dgelss(LAPACK_COL_MAJOR, m_, n_, r_, (double *)s, la, (double *)x, lb, (double *)sv, L->rcond, &rank)
               : LAPACKE_sgelss(LAPACK_COL_MAJOR, m_, n_, r_, (float *)s, la, (float *)x, lb, (float *)sv, (float)L->rcond, &rank);
  }
  job->infos[b] = info;
  if (info) return 0;
  if (m == 0) fill(x, dbl, ldb * nrhs, 0.0); /* PyTorch's: no equations, a zero solution */
  sk_cpu_lin_store(&job->out, b, n, nrhs, x, ldb, 0, 0);
  if (L->drv != GELS) sk_cpu_lin_put(L->t_rank, &L->rank, b, rank);
  if (L->drv >= GELSD) sk_cpu_lin_store(&L->sv, b, k, 1, sv, k > 0 ? k : 1, 0, 0);
  if (L->drv != GELS && rank < n) __atomic_store_n((int *)&L->deficient, 1, __ATOMIC_RELAXED);
  if (m > n && L->drv != GELSY) {
    for (int64_t c = 0; c < nrhs; c++) {
      double acc = 0;
      for (int64_t i = n; i < m; i++) {
        double v = sk_cpu_lin_at(x, dbl, c * ldb + i);
        acc += v * v;
      }
      if (dbl) ((double *)res)[c] = acc;
      else ((float *)res)[c] = (float)acc;
    }
    sk_cpu_lin_store(&L->res, b, 1, nrhs, res, 1, 0, 0);
  }
  return 0;
}

int sk_cpu_linalg_lstsq(SkTensor **solution, SkTensor **residuals, SkTensor **rank, SkTensor **singular_values,
                        const SkTensor *self, const SkTensor *B, SkOptDouble rcond, const char *driver) {
  const char *fn = "torch.linalg.lstsq";
  SkTensor *r[4] = {NULL, NULL, NULL, NULL};
  if (sk_meta_kernel_linalg_lstsq(&r[0], &r[1], &r[2], &r[3], self, B, rcond, driver)) return -1;
  int rc = sk_cpu_from_meta(r, 4);
  Lstsq L;
  memset(&L, 0, sizeof L);
  SkLinJob *j = &L.j;
  int vector = self->ndim - B->ndim == 1;
  int64_t bs[SK_MAX_DIMS];
  int nb = 0;
  int64_t batch = rc ? 0 : sk_cpu_lin_batch(r[0], vector ? 1 : 2, bs, &nb);
  L.drv = driver_code(driver);
  L.m = self->sizes[self->ndim - 2], L.n = self->sizes[self->ndim - 1];
  L.nrhs = vector ? 1 : B->sizes[B->ndim - 1];
  L.ldb = L.m > L.n ? L.m : L.n > 0 ? L.n : 1;
  int64_t k = L.m < L.n ? L.m : L.n;
  j->dbl = self->dtype == SK_DTYPE_FLOAT64;
  j->n = L.ldb;
  L.rcond = rcond.has ? rcond.v : (j->dbl ? DBL_EPSILON : FLT_EPSILON) * (double)L.ldb;
  if (!rc) rc = sk_cpu_lin_check_size(L.ldb, L.n > L.nrhs ? L.n : L.nrhs, fn);
  if (!rc) rc = sk_cpu_lin_scratch(j, L.m * L.n + L.ldb * L.nrhs + k + L.nrhs, L.n + 1, fn);
  if (!rc) {
    j->run = run_lstsq;
    sk_cpu_lin_mat_init(&j->a, self, 2, bs, nb, 0);
    sk_cpu_lin_mat_init(&j->b, B, vector ? 1 : 2, bs, nb, 0);
    sk_cpu_lin_mat_init(&j->out, r[0], vector ? 1 : 2, bs, nb, 0);
    if (L.m > L.n && L.drv != GELSY) sk_cpu_lin_mat_init(&L.res, r[1], 1, bs, nb, 1);
    L.t_rank = r[2];
    if (L.drv != GELS) sk_cpu_lin_mat_init(&L.rank, r[2], 0, bs, nb, 0);
    if (L.drv >= GELSD) sk_cpu_lin_mat_init(&L.sv, r[3], 1, bs, nb, 0);
    rc = sk_cpu_lin_go_checked(j, batch, fn, batch <= 1);
  }
  if (!rc && L.deficient && L.m > L.n && L.drv >= GELSD) { /* PyTorch: residuals only when every rank is n */
    int64_t zero = 0;
    SkTensor *e = sk_tensor_empty(1, &zero, self->dtype, sk_device(SK_DEVICE_CPU, 0));
    if (!e) rc = -1;
    sk_tensor_release(r[1]);
    r[1] = e;
  }
  if (rc) {
    for (int i = 0; i < 4; i++) sk_tensor_release(r[i]);
    return -1;
  }
  *solution = r[0], *residuals = r[1], *rank = r[2], *singular_values = r[3];
  return 0;
}
/* }==== */

/* {==== householder_product (orgqr) ====
** Q = H_1 ... H_k, H_i = I - tau_i v_i v_iᵀ, v_i the i-th column below the diagonal of input
** with a unit on it; the m x n result is Q's first n columns. */
static int run_orgqr(const SkLinJob *j, int64_t b, char *s) {
  int64_t m = j->r, n = j->c, k = j->flag1, ld = m > 0 ? m : 1;
  char *tau = s + (size_t)(m * n) * (j->dbl ? 8 : 4);
  if (n == 0) return 0;
  sk_cpu_lin_load(&j->a, b, m, n, s, ld);
  sk_cpu_lin_load(&j->b, b, k, 1, tau, k > 0 ? k : 1);
  lapack_int info = j->dbl ? LAPACKE_dorgqr(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, (lapack_int)k, (double *)s,
                                            (lapack_int)ld, (const double *)tau)
                           : LAPACKE_sorgqr(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, (lapack_int)k, (float *)s,
                                            (lapack_int)ld, (const float *)tau);
  j->infos[b] = info;
  sk_cpu_lin_store(&j->out, b, m, n, s, ld, 0, 0);
  return 0;
}

int sk_cpu_linalg_householder_product_out(const SkMeta *m, const SkTensor *input, const SkTensor *tau, SkTensor *out) {
  (void)m;
  const char *fn = "torch.linalg.householder_product";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, input, bs, &nb);
  j.flag1 = (int)tau->sizes[tau->ndim - 1];
  if (sk_cpu_lin_check_size(j.r, j.c, fn) || sk_cpu_lin_scratch(&j, j.r * j.c + j.flag1 + 1, 0, fn)) return -1;
  j.run = run_orgqr;
  sk_cpu_lin_mat_init(&j.b, tau, 1, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.out, out, 2, bs, nb, 0);
  return sk_cpu_lin_go_checked(&j, batch, fn, input->ndim == 2);
}
/* }==== */
