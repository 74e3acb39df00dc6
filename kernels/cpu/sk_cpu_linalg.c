/*
** sk_cpu_linalg.c — sk.linalg's LAPACK kernels: LU, inverse, Cholesky, solves, determinants
** Per matrix, through the jobs of sk_cpu_linalg.h: getrf (lu_factor, lu, det, slogdet),
** getrf + getrs on the identity or getri (inv), potrf (cholesky), getrf + getrs (solve), getrs (lu_solve) and trsm
** (solve_triangular, BLAS: no singularity check, as in PyTorch).
*/
#include "sk_kernels.h"
#include "sk_cpu_linalg.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* {==== LAPACK by dtype ==== */
static lapack_int lp_getrf(int dbl, lapack_int m, lapack_int n, void *a, lapack_int lda, lapack_int *ipiv) {
  if (m == 0 || n == 0) return 0;
  return dbl ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv)
             : LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
}
static lapack_int lp_getrs(int dbl, char trans, lapack_int n, lapack_int k, const void *a, lapack_int lda,
                           const lapack_int *ipiv, void *b, lapack_int ldb) {
  if (n == 0 || k == 0) return 0;
  return dbl ? LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, n, k, a, lda, ipiv, b, ldb)
             : LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, trans, n, k, a, lda, ipiv, b, ldb);
}
static lapack_int lp_potrf(int dbl, char uplo, lapack_int n, void *a, lapack_int lda) {
  if (n == 0) return 0;
  return dbl ? LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda)
             : LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
}
/* }==== */

/* {==== LU: lu_factor_ex, lu, det, slogdet ==== */
static int run_lu_factor(const SkLinJob *j, int64_t b, char *s) {
  int64_t r = j->r, c = j->c, k = r < c ? r : c;
  lapack_int *piv = sk_cpu_lin_ints(j, s, r * c);
  sk_cpu_lin_load(&j->a, b, r, c, s, r > 0 ? r : 1);
  lapack_int info = lp_getrf(j->dbl, (lapack_int)r, (lapack_int)c, s, (lapack_int)(r > 0 ? r : 1), piv);
  sk_cpu_lin_store(&j->out, b, r, c, s, r > 0 ? r : 1, 0, 0);
  int32_t *pp = (int32_t *)sk_tensor_data(j->t_v1) + sk_cpu_lin_offset(&j->out2, b);
  for (int64_t i = 0; i < k; i++) pp[i * j->out2.rs] = (int32_t)piv[i];
  sk_cpu_lin_put(j->t_info, &j->out3, b, info);
  return 0;
}

int sk_cpu_linalg_lu_factor_ex_out(const SkMeta *m, const SkTensor *A, int pivot, int check_errors, SkTensor *LU,
                                   SkTensor *pivots, SkTensor *info) {
  (void)m;
  const char *fn = "linalg.lu_factor_ex";
  if (!pivot) return sk_error("linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, A, bs, &nb);
  if (sk_cpu_lin_check_size(j.r, j.c, fn) || sk_cpu_lin_scratch(&j, j.r * j.c, j.n, fn)) return -1;
  j.run = run_lu_factor;
  sk_cpu_lin_mat_init(&j.out, LU, 2, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.out2, pivots, 1, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.out3, info, 0, bs, nb, 0);
  j.t_v1 = pivots;
  j.t_info = info;
  if (sk_cpu_lin_go(&j, batch, fn)) return -1;
  return check_errors ? sk_cpu_lin_check_info(info, fn, A->ndim == 2) : 0;
}

/* P (r x r), L (r x k, unit lower), U (k x c, upper) from getrf's LU and pivots: the swaps
** applied to 0..r-1 give perm, row i of LU being row perm[i] of A, so P[perm[i], i] = 1. */
static int run_lu(const SkLinJob *j, int64_t b, char *s) {
  int64_t r = j->r, c = j->c, k = r < c ? r : c, ld = r > 0 ? r : 1;
  lapack_int *piv = sk_cpu_lin_ints(j, s, r * c + r * r);
  lapack_int *perm = piv + k;
  char *p = s + (size_t)(r * c) * (j->dbl ? 8 : 4);
  sk_cpu_lin_load(&j->a, b, r, c, s, ld);
  lp_getrf(j->dbl, (lapack_int)r, (lapack_int)c, s, (lapack_int)ld, piv);
  for (int64_t i = 0; i < r; i++) perm[i] = (lapack_int)i;
  for (int64_t i = 0; i < k; i++) {
    lapack_int t = perm[i];
    perm[i] = perm[piv[i] - 1];
    perm[piv[i] - 1] = t;
  }
  memset(p, 0, (size_t)(r * r) * (j->dbl ? 8 : 4));
  for (int64_t i = 0; i < r; i++) {
    if (j->dbl) ((double *)p)[i * r + perm[i]] = 1.0;
    else ((float *)p)[i * r + perm[i]] = 1.0f;
  }
  sk_cpu_lin_store(&j->out, b, r, r, p, ld, 0, 0);
  sk_cpu_lin_store(&j->out2, b, r, k, s, ld, -1, 1);
  sk_cpu_lin_store(&j->out3, b, k, c, s, ld, 1, 0);
  return 0;
}

int sk_cpu_linalg_lu_out(const SkMeta *m, const SkTensor *A, int pivot, SkTensor *P, SkTensor *L, SkTensor *U) {
  (void)m;
  const char *fn = "linalg.lu";
  if (!pivot) return sk_error("linalg.lu: LU without pivoting is not implemented on the CPU");
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, A, bs, &nb);
  if (sk_cpu_lin_check_size(j.r, j.n, fn) || sk_cpu_lin_scratch(&j, j.r * j.c + j.r * j.r, j.n + j.r, fn)) return -1;
  j.run = run_lu;
  sk_cpu_lin_mat_init(&j.out, P, 2, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.out2, L, 2, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.out3, U, 2, bs, nb, 0);
  return sk_cpu_lin_go(&j, batch, fn);
}

/* det = ±Π diag(U), the sign from the pivots' swaps; slogdet: (sign, Σ log|u_ii|). A singular
** matrix has det 0, sign 0 and logabsdet -inf. */
static int run_det(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, ld = n > 0 ? n : 1;
  lapack_int *piv = sk_cpu_lin_ints(j, s, n * n);
  sk_cpu_lin_load(&j->a, b, n, n, s, ld);
  lp_getrf(j->dbl, (lapack_int)n, (lapack_int)n, s, (lapack_int)ld, piv);
  double psign = 1.0, det = 1.0, sign = 1.0, logabs = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double u = sk_cpu_lin_at(s, j->dbl, i * ld + i);
    if (piv[i] != i + 1) psign = -psign;
    det *= u;
    sign *= u > 0 ? 1.0 : u < 0 ? -1.0 : u == 0 ? 0.0 : NAN;
    logabs += log(fabs(u));
  }
  if (j->flag1) { /* slogdet */
    sk_cpu_lin_put(j->t_v1, &j->out, b, sign * psign);
    sk_cpu_lin_put(j->t_v2, &j->out2, b, logabs);
  } else {
    sk_cpu_lin_put(j->t_v1, &j->out, b, det * psign);
  }
  return 0;
}

static int det_job(const SkTensor *A, SkTensor *v1, SkTensor *v2, const char *fn) {
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, A, bs, &nb);
  if (sk_cpu_lin_check_size(j.n, j.n, fn) || sk_cpu_lin_scratch(&j, j.n * j.n, j.n, fn)) return -1;
  j.run = run_det;
  sk_cpu_lin_mat_init(&j.a, A, 2, bs, nb, sk_cpu_lin_row_major(A)); /* det Aᵀ = det A: the straight copy */
  j.flag1 = v2 != NULL;
  j.t_v1 = v1;
  j.t_v2 = v2;
  sk_cpu_lin_mat_init(&j.out, v1, 0, bs, nb, 0);
  if (v2) sk_cpu_lin_mat_init(&j.out2, v2, 0, bs, nb, 0);
  return sk_cpu_lin_go(&j, batch, fn);
}

int sk_cpu_linalg_det_out(const SkMeta *m, const SkTensor *A, SkTensor *out) {
  (void)m;
  return det_job(A, out, NULL, "linalg.det");
}

int sk_cpu_linalg_slogdet_out(const SkMeta *m, const SkTensor *A, SkTensor *sign, SkTensor *logabsdet) {
  (void)m;
  return det_job(A, sign, logabsdet, "linalg.slogdet");
}
/* }==== */

/* {==== Inverse and Cholesky ==== */
/* getrf, then for small matrices getrs on the identity (getri would allocate its workspace per
** matrix), for large ones getri (2n³ flops against getrs' 8/3 n³). The scratch holds A, then
** the identity that becomes A⁻¹. */
#define INV_GETRI 64
static lapack_int lp_getri(int dbl, lapack_int n, void *a, lapack_int lda, const lapack_int *ipiv) {
  return dbl ? LAPACKE_dgetri(LAPACK_COL_MAJOR, n, a, lda, ipiv) : LAPACKE_sgetri(LAPACK_COL_MAJOR, n, a, lda, ipiv);
}
static int run_inv(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, ld = n > 0 ? n : 1;
  char *x = s + (size_t)(n * n) * (j->dbl ? 8 : 4);
  lapack_int *piv = sk_cpu_lin_ints(j, s, 2 * n * n);
  sk_cpu_lin_load(&j->a, b, n, n, s, ld);
  memset(x, 0, (size_t)(n * n) * (j->dbl ? 8 : 4));
  for (int64_t i = 0; i < n; i++) {
    if (j->dbl) ((double *)x)[i * ld + i] = 1.0;
    else ((float *)x)[i * ld + i] = 1.0f;
  }
  lapack_int info = lp_getrf(j->dbl, (lapack_int)n, (lapack_int)n, s, (lapack_int)ld, piv);
  if (info == 0 && n >= INV_GETRI) info = lp_getri(j->dbl, (lapack_int)n, s, (lapack_int)ld, piv);
  else if (info == 0) lp_getrs(j->dbl, 'N', (lapack_int)n, (lapack_int)n, s, (lapack_int)ld, piv, x, (lapack_int)ld);
  sk_cpu_lin_store(&j->out, b, n, n, info == 0 && n < INV_GETRI ? x : s, ld, 0, 0);
  sk_cpu_lin_put(j->t_info, &j->out2, b, info);
  return 0;
}

int sk_cpu_linalg_inv_ex_out(const SkMeta *m, const SkTensor *A, int check_errors, SkTensor *inverse, SkTensor *info) {
  (void)m;
  const char *fn = "linalg.inv_ex";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, A, bs, &nb);
  if (sk_cpu_lin_check_size(j.n, j.n, fn) || sk_cpu_lin_scratch(&j, 2 * j.n * j.n, j.n, fn)) return -1;
  j.run = run_inv;
  j.t_info = info;
  sk_cpu_lin_mat_init(&j.out, inverse, 2, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.out2, info, 0, bs, nb, 0);
  if (sk_cpu_lin_go(&j, batch, fn)) return -1;
  return check_errors ? sk_cpu_lin_check_info(info, fn, A->ndim == 2) : 0;
}

/* potrf on the lower (or upper) triangle; the other one is written as zeros. */
static int run_cholesky(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, ld = n > 0 ? n : 1;
  int upper = j->flag1;
  sk_cpu_lin_load(&j->a, b, n, n, s, ld);
  lapack_int info = lp_potrf(j->dbl, upper ? 'U' : 'L', (lapack_int)n, s, (lapack_int)ld);
  sk_cpu_lin_store(&j->out, b, n, n, s, ld, upper ? 1 : -1, 0);
  sk_cpu_lin_put(j->t_info, &j->out2, b, info);
  return 0;
}

int sk_cpu_linalg_cholesky_ex_out(const SkMeta *m, const SkTensor *self, int upper, int check_errors, SkTensor *L,
                                  SkTensor *info) {
  (void)m;
  const char *fn = "linalg.cholesky_ex";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, self, bs, &nb);
  if (sk_cpu_lin_check_size(j.n, j.n, fn) || sk_cpu_lin_scratch(&j, j.n * j.n, 0, fn)) return -1;
  j.run = run_cholesky;
  j.flag1 = upper;
  j.t_info = info;
  sk_cpu_lin_mat_init(&j.out, L, 2, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.out2, info, 0, bs, nb, 0);
  if (sk_cpu_lin_go(&j, batch, fn)) return -1;
  return check_errors ? sk_cpu_lin_check_info(info, fn, self->ndim == 2) : 0;
}
/* }==== */

/* {==== Solves: solve_ex (gesv), lu_solve (getrs), solve_triangular (trsm) ====
** B (and the result) is n x k, loaded transposed for the right-hand forms (XA = B is
** Aᵀ Xᵀ = Bᵀ). A vector right-hand side is an n x 1 matrix. */
static int run_solve(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, k = j->c, ld = n > 0 ? n : 1;
  char *x = s + (size_t)(n * n) * (j->dbl ? 8 : 4);
  lapack_int *piv = sk_cpu_lin_ints(j, s, n * n + n * k);
  sk_cpu_lin_load(&j->a, b, n, n, s, ld);
  sk_cpu_lin_load(&j->b, b, n, k, x, ld);
  lapack_int info = lp_getrf(j->dbl, (lapack_int)n, (lapack_int)n, s, (lapack_int)ld, piv);
  char trans = j->flag1 ? 'T' : 'N'; /* flag1: the scratch holds Aᵀ */
  if (info == 0) lp_getrs(j->dbl, trans, (lapack_int)n, (lapack_int)k, s, (lapack_int)ld, piv, x, (lapack_int)ld);
  sk_cpu_lin_store(&j->out, b, n, k, x, ld, 0, 0);
  sk_cpu_lin_put(j->t_info, &j->out2, b, info);
  return 0;
}

/* The shared set-up of the A·X = B kernels (solve, lu_solve, solve_triangular): the batch is
** `shape_of`'s dims but its last `inner`; X has c columns (1 for a vector B); the scratch holds
** A and X, then `ints` LAPACK ints. Returns the matrix count, -1 with the error set. */
static int64_t ab_job(SkLinJob *j, const SkTensor *A, const SkTensor *B, const SkTensor *shape_of, int inner,
                      int vector, int left, int64_t ints, const char *fn, int64_t *bs, int *nb) {
  memset(j, 0, sizeof *j);
  int64_t batch = sk_cpu_lin_batch(shape_of, inner, bs, nb);
  j->dbl = A->dtype == SK_DTYPE_FLOAT64;
  j->n = A->sizes[A->ndim - 1];
  j->c = vector ? 1 : left ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2];
  if (sk_cpu_lin_check_size(j->n, j->c, fn) || sk_cpu_lin_check_size(j->n, j->n, fn) ||
      sk_cpu_lin_scratch(j, j->n * j->n + j->n * j->c, ints ? j->n : 0, fn))
    return -1;
  return batch;
}

int sk_cpu_linalg_solve_ex_out(const SkMeta *m, const SkTensor *A, const SkTensor *B, int left, int check_errors,
                               SkTensor *result, SkTensor *info) {
  (void)m;
  const char *fn = "linalg.solve_ex";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int vector = result->ndim == info->ndim + 1;
  int64_t batch = ab_job(&j, A, B, info, 0, vector, left, 1, fn, bs, &nb);
  if (batch < 0) return -1;
  j.run = run_solve;
  j.t_info = info;
  /* AX = B with a row-major A factors Aᵀ (a straight copy) and solves with trans 'T', as
  ** PyTorch does; XA = B is AᵀXᵀ = Bᵀ, Aᵀ again */
  j.flag1 = left && sk_cpu_lin_row_major(A);
  sk_cpu_lin_mat_init(&j.a, A, 2, bs, nb, !left || j.flag1);
  sk_cpu_lin_mat_init(&j.b, B, vector ? 1 : 2, bs, nb, !left);
  sk_cpu_lin_mat_init(&j.out, result, vector ? 1 : 2, bs, nb, !left);
  sk_cpu_lin_mat_init(&j.out2, info, 0, bs, nb, 0);
  if (sk_cpu_lin_go(&j, batch, fn)) return -1;
  return check_errors ? sk_cpu_lin_check_info(info, fn, A->ndim == 2 && B->ndim <= 2) : 0;
}

/* getrs with LU's factor: trans 'T' solves with Aᵀ. flag1: transposed B (right-hand form). */
static int run_lu_solve(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, k = j->c, ld = n > 0 ? n : 1;
  char *x = s + (size_t)(n * n) * (j->dbl ? 8 : 4);
  lapack_int *piv = sk_cpu_lin_ints(j, s, n * n + n * k);
  sk_cpu_lin_load(&j->a, b, n, n, s, ld);
  sk_cpu_lin_load(&j->b, b, n, k, x, ld);
  const int32_t *pp = (const int32_t *)sk_tensor_data(j->t_v1) + sk_cpu_lin_offset(&j->out2, b);
  for (int64_t i = 0; i < n; i++) {
    int32_t v = pp[i * j->out2.rs];
    if (v < 1 || v > n) { /* LAPACK would swap out of bounds */
      __atomic_store_n((int *)&j->flag4, 1, __ATOMIC_RELAXED);
      return 0;
    }
    piv[i] = v;
  }
  lp_getrs(j->dbl, j->flag1 ? 'T' : 'N', (lapack_int)n, (lapack_int)k, s, (lapack_int)ld, piv, x, (lapack_int)ld);
  sk_cpu_lin_store(&j->out, b, n, k, x, ld, 0, 0);
  return 0;
}

int sk_cpu_linalg_lu_solve_out(const SkMeta *m, const SkTensor *LU, const SkTensor *pivots, const SkTensor *B, int left,
                               int adjoint, SkTensor *out) {
  (void)m;
  const char *fn = "linalg.lu_solve";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = ab_job(&j, LU, B, out, 2, 0, left, 1, fn, bs, &nb);
  if (batch < 0) return -1;
  j.run = run_lu_solve;
  j.flag1 = left ? adjoint : !adjoint; /* AX = B: N; AᵀX = B: T; XA = B (Aᵀ Xᵀ = Bᵀ): T; XAᵀ = B: N */
  j.t_v1 = pivots;
  sk_cpu_lin_mat_init(&j.a, LU, 2, bs, nb, 0);
  sk_cpu_lin_mat_init(&j.b, B, 2, bs, nb, !left);
  sk_cpu_lin_mat_init(&j.out, out, 2, bs, nb, !left);
  sk_cpu_lin_mat_init(&j.out2, pivots, 1, bs, nb, 0);
  if (sk_cpu_lin_go(&j, batch, fn)) return -1;
  if (j.flag4) return sk_error("%s: pivots must lie in [1, %lld] (LAPACK's 1-based row indices)", fn, (long long)j.n);
  return 0;
}

/* trsm: A's triangle only (the other is never read); singular A gives inf/nan, as in PyTorch. */
static int run_trsm(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, k = j->c, ld = n > 0 ? n : 1;
  char *x = s + (size_t)(n * n) * (j->dbl ? 8 : 4);
  sk_cpu_lin_load(&j->a, b, n, n, s, ld);
  sk_cpu_lin_load(&j->b, b, n, k, x, ld);
  if (n > 0 && k > 0) {
    /* A was loaded transposed for the right-hand form: its triangle flips */
    CBLAS_UPLO uplo = (j->flag1 != j->flag2) ? CblasUpper : CblasLower;
    CBLAS_DIAG diag = j->flag3 ? CblasUnit : CblasNonUnit;
    if (j->dbl)
      cblas_dtrsm(CblasColMajor, CblasLeft, uplo, CblasNoTrans, diag, (int)n, (int)k, 1.0, (const double *)s, (int)ld,
                  (double *)x, (int)ld);
    else
      cblas_strsm(CblasColMajor, CblasLeft, uplo, CblasNoTrans, diag, (int)n, (int)k, 1.0f, (const float *)s, (int)ld,
                  (float *)x, (int)ld);
  }
  sk_cpu_lin_store(&j->out, b, n, k, x, ld, 0, 0);
  return 0;
}

int sk_cpu_linalg_solve_triangular_out(const SkMeta *m, const SkTensor *self, const SkTensor *B, int upper, int left,
                                       int unitriangular, SkTensor *out) {
  (void)m;
  const char *fn = "linalg.solve_triangular";
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = ab_job(&j, self, B, out, 2, 0, left, 0, fn, bs, &nb);
  if (batch < 0) return -1;
  j.run = run_trsm;
  j.flag1 = upper;
  j.flag2 = !left;
  j.flag3 = unitriangular;
  sk_cpu_lin_mat_init(&j.a, self, 2, bs, nb, !left);
  sk_cpu_lin_mat_init(&j.b, B, 2, bs, nb, !left);
  sk_cpu_lin_mat_init(&j.out, out, 2, bs, nb, !left);
  return sk_cpu_lin_go(&j, batch, fn);
}
/* }==== */
