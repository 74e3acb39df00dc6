/*
** sk_linalg_out.c — the out= variants of sk.linalg's composites (and of the top-level aliases):
** each calls its functional op and writes the results into the outs (sk_composite_util.h: every
** out checked before any is written, resized when its shape differs).
*/
#include "sk_composite_util.h"
#include "sk_kernels.h"

/* the n results of call into the outs named names[], which may share no memory with `in` */
#define OUTS(n, in, call, ...)                                                                  \
  do {                                                                                          \
    SkTensor *r[n] = {NULL}, *outs[n] = {__VA_ARGS__};                                          \
    return sk_composite_write_outs(call, n, r, outs, names, in);                                \
  } while (0)

/* {==== One result ==== */
int sk_math_linalg_inv_out(const SkTensor *A, SkTensor *out) { SK_OUT_FROM(sk_linalg_inv(&r, A), out, SK_READS(A)); }
int sk_math_inverse_out(const SkTensor *self, SkTensor *out) { SK_OUT_FROM(sk_linalg_inv(&r, self), out, SK_READS(self)); }
int sk_math_linalg_cholesky_out(const SkTensor *self, int upper, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_cholesky(&r, self, upper), out, SK_READS(self));
}
int sk_math_cholesky_out(const SkTensor *self, int upper, SkTensor *out) { SK_OUT_FROM(sk_cholesky(&r, self, upper), out, SK_READS(self)); }
int sk_math_linalg_solve_out(const SkTensor *A, const SkTensor *B, int left, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_solve(&r, A, B, left), out, SK_READS(A, B));
}
int sk_math_linalg_svdvals_out(const SkTensor *A, const char *driver, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_svdvals(&r, A, driver), out, SK_READS(A));
}
int sk_math_linalg_eigvalsh_out(const SkTensor *self, const char *UPLO, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_eigvalsh(&r, self, UPLO), out, SK_READS(self));
}
int sk_math_linalg_matrix_power_out(const SkTensor *self, int64_t n, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_matrix_power(&r, self, n), out, SK_READS(self));
}
int sk_math_linalg_multi_dot_out(SkTensorList tensors, SkTensor *out) { SK_OUT_FROM(sk_linalg_multi_dot(&r, tensors), out, SK_READS_LIST(tensors, "tensors")); }
int sk_math_linalg_vecdot_out(const SkTensor *x, const SkTensor *y, int64_t dim, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_vecdot(&r, x, y, dim), out, SK_READS(x, y));
}
int sk_math_linalg_vector_norm_out(const SkTensor *self, SkScalar ord, SkIntList dim, int keepdim, int dtype, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_vector_norm(&r, self, ord, dim, keepdim, dtype), out, SK_READS(self));
}
int sk_math_linalg_matrix_norm_out(const SkTensor *self, SkScalar ord, SkIntList dim, int keepdim, int dtype, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_matrix_norm(&r, self, ord, dim, keepdim, dtype), out, SK_READS(self));
}
int sk_math_linalg_matrix_norm_str_ord_out(const SkTensor *self, const char *ord, SkIntList dim, int keepdim, int dtype,
                                           SkTensor *out) {
  SK_OUT_FROM(sk_linalg_matrix_norm_str_ord(&r, self, ord, dim, keepdim, dtype), out, SK_READS(self));
}
int sk_math_linalg_norm_out(const SkTensor *self, SkScalar ord, SkIntList dim, int keepdim, int dtype, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_norm(&r, self, ord, dim, keepdim, dtype), out, SK_READS(self));
}
int sk_math_linalg_norm_ord_str_out(const SkTensor *self, const char *ord, SkIntList dim, int keepdim, int dtype,
                                    SkTensor *out) {
  SK_OUT_FROM(sk_linalg_norm_ord_str(&r, self, ord, dim, keepdim, dtype), out, SK_READS(self));
}
int sk_math_linalg_cond_out(const SkTensor *self, SkScalar p, SkTensor *out) { SK_OUT_FROM(sk_linalg_cond(&r, self, p), out, SK_READS(self)); }
int sk_math_linalg_cond_p_str_out(const SkTensor *self, const char *p, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_cond_p_str(&r, self, p), out, SK_READS(self));
}
int sk_math_linalg_pinv_atol_rtol_float_out(const SkTensor *self, SkOptDouble atol, SkOptDouble rtol, int hermitian,
                                            SkTensor *out) {
  SK_OUT_FROM(sk_linalg_pinv_atol_rtol_float(&r, self, atol, rtol, hermitian), out, SK_READS(self));
}
int sk_math_linalg_matrix_rank_atol_rtol_float_out(const SkTensor *self, SkOptDouble atol, SkOptDouble rtol, int hermitian,
                                                   SkTensor *out) {
  SK_OUT_FROM(sk_linalg_matrix_rank_atol_rtol_float(&r, self, atol, rtol, hermitian), out, SK_READS(self));
}
int sk_math_linalg_pinv_atol_rtol_tensor_out(const SkTensor *self, const SkTensor *atol, const SkTensor *rtol, int hermitian,
                                             SkTensor *out) {
  SK_OUT_FROM(sk_linalg_pinv_atol_rtol_tensor(&r, self, atol, rtol, hermitian), out, SK_READS(self, atol, rtol));
}
int sk_math_linalg_pinv_out(const SkTensor *self, double rcond, int hermitian, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_pinv(&r, self, rcond, hermitian), out, SK_READS(self));
}
int sk_math_linalg_pinv_out_rcond_tensor(const SkTensor *self, const SkTensor *rcond, int hermitian, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_pinv_rcond_tensor(&r, self, rcond, hermitian), out, SK_READS(self, rcond));
}
int sk_math_linalg_matrix_rank_atol_rtol_tensor_out(const SkTensor *input, const SkTensor *atol, const SkTensor *rtol,
                                                    int hermitian, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_matrix_rank_atol_rtol_tensor(&r, input, atol, rtol, hermitian), out, SK_READS(input, atol, rtol));
}
int sk_math_linalg_matrix_rank_out(const SkTensor *self, double tol, int hermitian, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_matrix_rank(&r, self, tol, hermitian), out, SK_READS(self));
}
int sk_math_linalg_matrix_rank_out_tol_tensor(const SkTensor *input, const SkTensor *tol, int hermitian, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_matrix_rank_tol_tensor(&r, input, tol, hermitian), out, SK_READS(input, tol));
}
int sk_math_linalg_tensorinv_out(const SkTensor *self, int64_t ind, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_tensorinv(&r, self, ind), out, SK_READS(self));
}
int sk_math_linalg_tensorsolve_out(const SkTensor *self, const SkTensor *other, SkIntList dims, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_tensorsolve(&r, self, other, dims), out, SK_READS(self, other));
}
int sk_math_cholesky_solve_out(const SkTensor *self, const SkTensor *input2, int upper, SkTensor *out) {
  SK_OUT_FROM(sk_cholesky_solve(&r, self, input2, upper), out, SK_READS(self, input2));
}
int sk_math_cholesky_inverse_out(const SkTensor *self, int upper, SkTensor *out) {
  SK_OUT_FROM(sk_cholesky_inverse(&r, self, upper), out, SK_READS(self));
}
int sk_math_orgqr_out(const SkTensor *self, const SkTensor *input2, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_householder_product(&r, self, input2), out, SK_READS(self, input2));
}
/* }==== */

/* {==== Several results ==== */
int sk_math_linalg_lu_factor_out(const SkTensor *A, int pivot, SkTensor *LU, SkTensor *pivots) {
  static const char *const names[] = {"LU", "pivots"};
  OUTS(2, SK_READS(A), sk_linalg_lu_factor(&r[0], &r[1], A, pivot), LU, pivots);
}
int sk_math_linalg_svd_U(const SkTensor *A, int full_matrices, const char *driver, SkTensor *U, SkTensor *S, SkTensor *Vh) {
  static const char *const names[] = {"U", "S", "Vh"};
  OUTS(3, SK_READS(A), sk_linalg_svd(&r[0], &r[1], &r[2], A, full_matrices, driver), U, S, Vh);
}
int sk_math_svd_U(const SkTensor *self, int some, int compute_uv, SkTensor *U, SkTensor *S, SkTensor *V) {
  static const char *const names[] = {"U", "S", "V"};
  OUTS(3, SK_READS(self), sk_svd(&r[0], &r[1], &r[2], self, some, compute_uv), U, S, V);
}
int sk_math_linalg_eigh_eigvals(const SkTensor *self, const char *UPLO, SkTensor *eigvals, SkTensor *eigvecs) {
  static const char *const names[] = {"eigvals", "eigvecs"};
  OUTS(2, SK_READS(self), sk_linalg_eigh(&r[0], &r[1], self, UPLO), eigvals, eigvecs);
}
int sk_math_qr_Q(const SkTensor *self, int some, SkTensor *Q, SkTensor *R) {
  static const char *const names[] = {"Q", "R"};
  OUTS(2, SK_READS(self), sk_qr(&r[0], &r[1], self, some), Q, R);
}
int sk_math_slogdet_out(const SkTensor *self, SkTensor *sign, SkTensor *logabsdet) {
  static const char *const names[] = {"sign", "logabsdet"};
  OUTS(2, SK_READS(self), sk_slogdet(&r[0], &r[1], self), sign, logabsdet);
}
int sk_math_linalg_lstsq_out(const SkTensor *self, const SkTensor *b, SkOptDouble rcond, const char *driver,
                             SkTensor *solution, SkTensor *residuals, SkTensor *rank, SkTensor *singular_values) {
  static const char *const names[] = {"solution", "residuals", "rank", "singular_values"};
  OUTS(4, SK_READS(self, b), sk_linalg_lstsq(&r[0], &r[1], &r[2], &r[3], self, b, rcond, driver), solution, residuals, rank, singular_values);
}
int sk_math_triangular_solve_X(const SkTensor *self, const SkTensor *A, int upper, int transpose, int unitriangular,
                               SkTensor *X, SkTensor *M) {
  static const char *const names[] = {"X", "M"};
  OUTS(2, SK_READS(self, A), sk_triangular_solve(&r[0], &r[1], self, A, upper, transpose, unitriangular), X, M);
}
/* }==== */
