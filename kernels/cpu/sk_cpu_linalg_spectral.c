/*
** sk_cpu_linalg_spectral.c — sk.linalg's decompositions on LAPACK: QR, SVD, eigh, eig
** Same scheme as sk_cpu_linalg.c (sk_cpu_linalg.h): each matrix is copied column-major into
** scratch, the LAPACKE driver runs there, the factors are copied out. Non-finite input never
** reaches the iterative drivers (gesdd, syevd, geev can loop or fail on NaN): SVD reports it
** as PyTorch does, eigh and eig give NaN results. eig has real results only: a matrix with a
** complex eigenvalue is an error (sk has no complex dtypes).
*/
#include "sk_kernels.h"
#include "sk_cpu_linalg.h"

#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>




static int all_finite(const void *buf, int dbl, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(sk_cpu_lin_at(buf, dbl, i))) return 0;
  return 1;
}

static void fill_nan(void *buf, int dbl, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (dbl) ((double *)buf)[i] = NAN;
    else ((float *)buf)[i] = NAN;
  }
}

/* {==== QR ====
** geqrf, then R is the upper triangle of the first rows and orgqr makes Q from the
** reflectors: m x k (reduced) or m x m (complete, in a buffer of max(m, n) columns). */
static int run_qr(const SkLinJob *j, int64_t b, char *s) {
  int64_t r = j->r, c = j->c, k = r < c ? r : c, ld = r > 0 ? r : 1;
  int complete = j->flag1, r_only = j->flag2;
  int64_t qc = complete ? r : k, w = c > qc ? c : qc;
  char *tau = s + (size_t)(r * w) * (j->dbl ? 8 : 4);
  sk_cpu_lin_load(&j->a, b, r, c, s, ld);
  if (r > 0 && c > 0)
    j->dbl ? LAPACKE_dgeqrf(LAPACK_COL_MAJOR, (lapack_int)r, (lapack_int)c, (double *)s, (lapack_int)ld, (double *)tau)
           : LAPACKE_sgeqrf(LAPACK_COL_MAJOR, (lapack_int)r, (lapack_int)c, (float *)s, (lapack_int)ld, (float *)tau);
  sk_cpu_lin_store(&j->out2, b, complete ? r : k, c, s, ld, 1, 0);
  if (r_only) return 0;
  if (r > 0 && qc > 0) {
    if (k == 0) { /* no reflectors: Q is the identity */
      memset(s, 0, (size_t)(r * qc) * (j->dbl ? 8 : 4));
      for (int64_t i = 0; i < qc; i++) {
        if (j->dbl) ((double *)s)[i * ld + i] = 1.0;
        else ((float *)s)[i * ld + i] = 1.0f;
      }
    } else {
      j->dbl ? LAPACKE_dorgqr(LAPACK_COL_MAJOR, (lapack_int)r, (lapack_int)qc, (lapack_int)k, (double *)s, (lapack_int)ld, (const double *)tau)
             : LAPACKE_sorgqr(LAPACK_COL_MAJOR, (lapack_int)r, (lapack_int)qc, (lapack_int)k, (float *)s, (lapack_int)ld, (const float *)tau);
    }
  }
  sk_cpu_lin_store(&j->out, b, r, qc, s, ld, 0, 0);
  return 0;
}

int sk_cpu_linalg_qr_out(const SkMeta *m, const SkTensor *A, const char *mode, SkTensor *Q, SkTensor *R) {
  (void)m;
  const char *fn = "linalg.qr";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS] = {0};
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, A, bs, &nb);
  j.flag1 = mode && strcmp(mode, "complete") == 0;
  j.flag2 = mode && strcmp(mode, "r") == 0;
  int64_t k = j.r < j.c ? j.r : j.c, qc = j.flag1 ? j.r : k, w = j.c > qc ? j.c : qc;
  if (sk_cpu_lin_check_size(j.r, w, fn) || sk_cpu_lin_scratch(&j, j.r * w + k + 4, 0, fn)) return -1;
  j.run = run_qr;
  if (!j.flag2) sk_cpu_lin_mat_init(&j.out, Q, 2, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.out2, R, 2, bs, nb, 0);
  return sk_cpu_lin_go(&j, batch, fn);
}
/* }==== */

/* {==== SVD (gesdd) ====
** U is m x m (full) or m x k, Vh n x n or k x n, S descending. An empty matrix has no singular
** values; its full U and Vh are identities. gesdd decomposes Aᵀ = V·S·Uᵀ: for sk's row-major
** A, Aᵀ is column-major already (a straight copy into scratch), and the factors of Aᵀ are Vhᵀ
** and Uᵀ, which for row-major U and Vh are column-major views that gesdd writes in place. Any
** layout of A takes that one path, so the singular vectors' signs never depend on it. gesdd's
** workspace is queried once per call and lives in each thread's scratch:
** A (r·c) | S (k) | U (r·ucol) | Vt (vrow·c) | work (lwork) | iwork (8k ints). */
static void put_identity(const SkLinMat *M, int64_t b, int64_t n, char *s, int dbl) {
  memset(s, 0, (size_t)(n * n) * (dbl ? 8 : 4));
  for (int64_t i = 0; i < n; i++) {
    if (dbl) ((double *)s)[i * n + i] = 1.0;
    else ((float *)s)[i * n + i] = 1.0f;
  }
  sk_cpu_lin_store(M, b, n, n, s, n > 0 ? n : 1, 0, 0);
}

typedef struct { int64_t k, ucol, vrow, lwork, elems; } SvdDims;

static SvdDims svd_dims(const SkLinJob *j) {
  SvdDims d;
  d.k = j->r < j->c ? j->r : j->c;
  d.ucol = j->flag1 ? j->r : d.k;
  d.vrow = j->flag1 ? j->c : d.k;
  d.lwork = j->lwork;
  d.elems = j->r * j->c + d.k + j->r * d.ucol + d.vrow * j->c + d.lwork;
  return d;
}

static lapack_int gesdd(int dbl, char jobz, int64_t r, int64_t c, void *a, void *sv, void *u, lapack_int ldu, void *vt,
                        lapack_int ldvt, void *work, lapack_int lwork, lapack_int *iwork) {
  lapack_int m = (lapack_int)r, n = (lapack_int)c, lda = (lapack_int)(r > 0 ? r : 1);
  return dbl ? LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, sv, u, ldu, vt, ldvt, work, lwork, iwork)
             : LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, sv, u, ldu, vt, ldvt, work, lwork, iwork);
}

static char svd_jobz(const SkLinJob *j) {
  return j->flag2 ? (j->flag1 ? 'A' : 'S') : 'N';
}

/* j->out is the left factor (r x ucol), out2 the singular values, out3 the right factor
** (vrow x c) of the r x c matrix j->a: Vhᵀ, S and Uᵀ, the factors of Aᵀ. */
static int run_svd(const SkLinJob *j, int64_t b, char *s) {
  int64_t r = j->r, c = j->c, es = j->dbl ? 8 : 4;
  SvdDims d = svd_dims(j);
  if (d.k == 0) {
    if (j->flag2 && j->flag1) {
      put_identity(&j->out, b, r, s, j->dbl);
      put_identity(&j->out3, b, c, s, j->dbl);
    }
    return 0;
  }
  sk_cpu_lin_load(&j->a, b, r, c, s, r);
  if (!all_finite(s, j->dbl, r * c)) {
    j->infos[b] = SK_LIN_INFO_NONFINITE;
    return 0;
  }
  /* each result goes to its output where that is column-major already, else to scratch */
  char *sv = s + (size_t)(r * c) * es, *u = sv + (size_t)d.k * es, *vt = u + (size_t)(r * d.ucol) * es;
  char *work = vt + (size_t)(d.vrow * c) * es;
  lapack_int ldu = (lapack_int)r, ldvt = (lapack_int)(d.vrow > 0 ? d.vrow : 1), lds;
  char *dsv = sk_cpu_lin_direct(&j->out2, b, d.k, 1, &lds), *du = NULL, *dvt = NULL;
  if (j->flag2) {
    du = sk_cpu_lin_direct(&j->out, b, r, d.ucol, &ldu);
    dvt = sk_cpu_lin_direct(&j->out3, b, d.vrow, c, &ldvt);
    if (!du) ldu = (lapack_int)r;
    if (!dvt) ldvt = (lapack_int)(d.vrow > 0 ? d.vrow : 1);
  }
  lapack_int info = gesdd(j->dbl, svd_jobz(j), r, c, s, dsv ? dsv : sv, du ? du : u, ldu, dvt ? dvt : vt, ldvt, work,
                          (lapack_int)d.lwork, sk_cpu_lin_ints(j, s, d.elems));
  j->infos[b] = info;
  if (info) return 0;
  if (!dsv) sk_cpu_lin_store(&j->out2, b, d.k, 1, sv, d.k, 0, 0);
  if (j->flag2 && !du) sk_cpu_lin_store(&j->out, b, r, d.ucol, u, ldu, 0, 0);
  if (j->flag2 && !dvt) sk_cpu_lin_store(&j->out3, b, d.vrow, c, vt, ldvt, 0, 0);
  return 0;
}

int sk_cpu__linalg_svd_out(const SkMeta *m, const SkTensor *A, int full_matrices, int compute_uv, const char *driver,
                           SkTensor *U, SkTensor *S, SkTensor *Vh) {
  (void)m, (void)driver;
  const char *fn = "linalg.svd";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS] = {0};
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, A, bs, &nb);
  j.flag1 = full_matrices;
  j.flag2 = compute_uv;
  sk_cpu_lin_mat_init(&j.a, A, 2, bs, nb, 1); /* the problem is Aᵀ's */
  j.r = A->sizes[A->ndim - 1], j.c = A->sizes[A->ndim - 2];
  if (sk_cpu_lin_check_size(j.n, j.n, fn)) return -1;
  SvdDims d = svd_dims(&j);
  if (d.k > 0 && batch > 0) { /* workspace query: gesdd reads only the sizes */
    double q = 0;
    lapack_int ldu = (lapack_int)j.r, ldvt = (lapack_int)(d.vrow > 0 ? d.vrow : 1), info;
    if (j.dbl) info = gesdd(1, svd_jobz(&j), j.r, j.c, NULL, NULL, NULL, ldu, NULL, ldvt, &q, -1, NULL);
    else {
      float qf = 0;
      info = gesdd(0, svd_jobz(&j), j.r, j.c, NULL, NULL, NULL, ldu, NULL, ldvt, &qf, -1, NULL);
      q = (double)qf * (1 + 0x1p-20); /* a float count may have rounded down */
    }
    if (info || q >= INT_MAX) return sk_error("%s: a %lld x %lld matrix is too large for LAPACK", fn, (long long)j.r, (long long)j.c);
    j.lwork = (int64_t)q + 1;
    d = svd_dims(&j);
  }
  if (sk_cpu_lin_scratch(&j, d.elems, 8 * d.k, fn)) return -1;
  j.run = run_svd;
  if (compute_uv) {
    sk_cpu_lin_mat_init(&j.out, Vh, 2, bs, nb, 1);
    sk_cpu_lin_mat_init(&j.out3, U, 2, bs, nb, 1);
  }
  sk_cpu_lin_mat_init(&j.out2, S, 1, bs, nb, 0);
  return sk_cpu_lin_go_checked(&j, batch, fn, A->ndim == 2);
}
/* }==== */

/* {==== Symmetric eigenproblem (syevd) ====
** Eigenvalues ascending, eigenvectors in the columns; only the UPLO triangle is read. */
static int run_eigh(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, ld = n > 0 ? n : 1;
  char *w = s + (size_t)(n * n) * (j->dbl ? 8 : 4);
  sk_cpu_lin_load(&j->a, b, n, n, s, ld);
  if (!all_finite(s, j->dbl, n * n)) {
    fill_nan(s, j->dbl, n * n + n);
  } else if (n > 0) {
    char jobz = j->flag2 ? 'V' : 'N', uplo = j->flag1 ? 'U' : 'L';
    lapack_int info = j->dbl ? LAPACKE_dsyevd(LAPACK_COL_MAJOR, jobz, uplo, (lapack_int)n, (double *)s, (lapack_int)ld, (double *)w)
                             : LAPACKE_ssyevd(LAPACK_COL_MAJOR, jobz, uplo, (lapack_int)n, (float *)s, (lapack_int)ld, (float *)w);
    j->infos[b] = info;
    if (info) return 0;
  }
  sk_cpu_lin_store(&j->out, b, n, 1, w, ld, 0, 0);
  if (j->flag2) sk_cpu_lin_store(&j->out2, b, n, n, s, ld, 0, 0);
  return 0;
}

int sk_cpu__linalg_eigh_out(const SkMeta *m, const SkTensor *A, const char *UPLO, int compute_v, SkTensor *eigenvalues,
                            SkTensor *eigenvectors) {
  (void)m;
  const char *fn = "linalg.eigh";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS] = {0};
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, A, bs, &nb);
  j.flag1 = UPLO[0] == 'U' || UPLO[0] == 'u';
  j.flag2 = compute_v;
  if (sk_cpu_lin_check_size(j.n, j.n, fn) || sk_cpu_lin_scratch(&j, j.n * j.n + j.n + 4, 0, fn)) return -1;
  j.run = run_eigh;
  sk_cpu_lin_mat_init(&j.out, eigenvalues, 1, bs, nb, 0);
  if (compute_v) sk_cpu_lin_mat_init(&j.out2, eigenvectors, 2, bs, nb, 0);
  return sk_cpu_lin_go_checked(&j, batch, fn, A->ndim == 2);
}
/* }==== */

/* {==== General eigenproblem (geev), real results only ==== */
static int run_eig(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, ld = n > 0 ? n : 1, es = j->dbl ? 8 : 4;
  char *wr = s + (size_t)(n * n) * es, *wi = wr + (size_t)n * es, *vr = wi + (size_t)n * es;
  sk_cpu_lin_load(&j->a, b, n, n, s, ld);
  if (!all_finite(s, j->dbl, n * n)) {
    fill_nan(wr, j->dbl, n);
    fill_nan(vr, j->dbl, n * n);
  } else if (n > 0) {
    char jobvr = j->flag1 ? 'V' : 'N';
    lapack_int info = j->dbl ? LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', jobvr, (lapack_int)n, (double *)s, (lapack_int)ld,
                                             (double *)wr, (double *)wi, NULL, 1, (double *)vr, (lapack_int)ld)
                             : LAPACKE_sgeev(LAPACK_COL_MAJOR, 'N', jobvr, (lapack_int)n, (float *)s, (lapack_int)ld,
                                             (float *)wr, (float *)wi, NULL, 1, (float *)vr, (lapack_int)ld);
    j->infos[b] = info;
    if (info) return 0;
    for (int64_t i = 0; i < n; i++)
      if (sk_cpu_lin_at(wi, j->dbl, i) != 0) {
        j->infos[b] = SK_LIN_INFO_COMPLEX;
        return 0;
      }
  }
  sk_cpu_lin_store(&j->out, b, n, 1, wr, ld, 0, 0);
  if (j->flag1) sk_cpu_lin_store(&j->out2, b, n, n, vr, ld, 0, 0);
  return 0;
}

static int eig_job(const SkTensor *A, SkTensor *w, SkTensor *v, const char *fn) {
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS] = {0};
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, A, bs, &nb);
  j.flag1 = v != NULL;
  if (sk_cpu_lin_check_size(j.n, j.n, fn) || sk_cpu_lin_scratch(&j, 2 * j.n * j.n + 2 * j.n + 4, 0, fn)) return -1;
  j.run = run_eig;
  sk_cpu_lin_mat_init(&j.out, w, 1, bs, nb, 0);
  if (v) sk_cpu_lin_mat_init(&j.out2, v, 2, bs, nb, 0);
  return sk_cpu_lin_go_checked(&j, batch, fn, A->ndim == 2);
}

int sk_cpu_linalg_eig_out(const SkMeta *m, const SkTensor *self, SkTensor *eigenvalues, SkTensor *eigenvectors) {
  (void)m;
  return eig_job(self, eigenvalues, eigenvectors, "linalg.eig");
}

int sk_cpu_linalg_eigvals_out(const SkMeta *m, const SkTensor *self, SkTensor *out) {
  (void)m;
  return eig_job(self, out, NULL, "linalg.eigvals");
}
/* }==== */
