/*
** sk_linalg.c — sk.linalg's composites (Math): the plain ops over their _ex ops, and aliases
** A plain op runs its _ex op with check_errors off, then _linalg_check_errors on the info
** under the plain op's Python name (PyTorch's structure: the texts name what the user
** called, and a backend that has the _ex kernel gets the plain op for free). The results
** are released on every error path.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

/* Checks info under api's name; on an error releases *r (and r2) and returns -1. */
static int checked(const SkTensor *info, const char *api, int is_matrix, SkTensor **r, SkTensor **r2) {
  if (!sk__linalg_check_errors(info, api, is_matrix)) return 0;
  sk_tensor_release(*r);
  *r = NULL;
  if (r2) {
    sk_tensor_release(*r2);
    *r2 = NULL;
  }
  return -1;
}

int sk_math_linalg_inv(SkTensor **result, const SkTensor *A) {
  SkTensor *info = NULL;
  if (sk_linalg_inv_ex(result, &info, A, 0)) return -1;
  int rc = checked(info, "linalg.inv", A->ndim == 2, result, NULL);
  sk_tensor_release(info);
  return rc;
}

int sk_math_inverse(SkTensor **result, const SkTensor *self) { return sk_math_linalg_inv(result, self); }

static int cholesky_as(SkTensor **result, const SkTensor *self, int upper, const char *api) {
  SkTensor *info = NULL;
  if (sk_linalg_cholesky_ex(result, &info, self, upper, 0)) return -1;
  int rc = checked(info, api, self->ndim == 2, result, NULL);
  sk_tensor_release(info);
  return rc;
}

int sk_math_linalg_cholesky(SkTensor **result, const SkTensor *self, int upper) {
  return cholesky_as(result, self, upper, "linalg.cholesky");
}

/* torch.cholesky (deprecated in PyTorch for linalg.cholesky, kept for its name). */
int sk_math_cholesky(SkTensor **result, const SkTensor *self, int upper) {
  return cholesky_as(result, self, upper, "cholesky");
}

int sk_math_linalg_solve(SkTensor **result, const SkTensor *A, const SkTensor *B, int left) {
  SkTensor *info = NULL;
  if (sk_linalg_solve_ex(result, &info, A, B, left, 0)) return -1;
  int rc = checked(info, "torch.linalg.solve", A->ndim == 2, result, NULL);
  sk_tensor_release(info);
  return rc;
}

int sk_math_linalg_lu_factor(SkTensor **LU, SkTensor **pivots, const SkTensor *A, int pivot) {
  SkTensor *info = NULL;
  if (sk_linalg_lu_factor_ex(LU, pivots, &info, A, pivot, 0)) return -1;
  int rc = checked(info, "torch.linalg.lu_factor", A->ndim == 2, LU, pivots);
  sk_tensor_release(info);
  return rc;
}

int sk_math_det(SkTensor **result, const SkTensor *self) { return sk_linalg_det(result, self); }

int sk_math_slogdet(SkTensor **sign, SkTensor **logabsdet, const SkTensor *self) {
  return sk_linalg_slogdet(sign, logabsdet, self);
}

/* PyTorch's logdet: logabsdet where det > 0, nan where det < 0, -inf where det = 0;
** that is logabsdet + log(sign). */
int sk_math_logdet(SkTensor **result, const SkTensor *self) {
  SkTensor *sign = NULL, *logabs = NULL, *lsign = NULL;
  int rc = sk_linalg_slogdet(&sign, &logabs, self);
  if (!rc) rc = sk_log(&lsign, sign);
  if (!rc) rc = sk_add(result, logabs, lsign, sk_scalar_int(1));
  sk_tensor_release(sign);
  sk_tensor_release(logabs);
  sk_tensor_release(lsign);
  return rc;
}

/* {==== Decompositions over their structured ops ==== */
/* torch.qr: some=True is mode 'reduced', False 'complete'. */
int sk_math_qr(SkTensor **Q, SkTensor **R, const SkTensor *self, int some) {
  return sk_linalg_qr(Q, R, self, some ? "reduced" : "complete");
}

int sk_math_linalg_svd(SkTensor **U, SkTensor **S, SkTensor **Vh, const SkTensor *A, int full_matrices,
                       const char *driver) {
  return sk__linalg_svd(U, S, Vh, A, full_matrices, 1, driver);
}

/* svdvals and eigvalsh compute the vectors when the input requires grad: their derivatives read
** them (PyTorch's _may_require_fw_or_bw_grad). */
int sk_math_linalg_svdvals(SkTensor **result, const SkTensor *A, const char *driver) {
  SkTensor *U = NULL, *Vh = NULL;
  int rc = sk__linalg_svd(&U, result, &Vh, A, 0, sk_tensor_grad_flag(A) != 0, driver);
  sk_tensor_release(U);
  sk_tensor_release(Vh);
  return rc;
}

/* torch.svd: V (not Vh), reduced unless some=False; without compute_uv, U and V are zeros of
** the full shapes, as in PyTorch. */
int sk_math_svd(SkTensor **U, SkTensor **S, SkTensor **V, const SkTensor *self, int some, int compute_uv) {
  SkTensor *Vh = NULL;
  if (sk__linalg_svd(U, S, &Vh, self, !some, compute_uv, NULL)) return -1;
  int rc = 0;
  if (compute_uv) {
    rc = sk_transpose_int(V, Vh, -2, -1);
  } else {
    int nd = self->ndim;
    int64_t su[SK_MAX_DIMS], sv[SK_MAX_DIMS];
    for (int d = 0; d < nd - 2; d++) su[d] = sv[d] = self->sizes[d];
    su[nd - 2] = su[nd - 1] = self->sizes[nd - 2];
    sv[nd - 2] = sv[nd - 1] = self->sizes[nd - 1];
    SkTensor *u = NULL;
    rc = sk_zeros(&u, (SkIntList){su, nd}, self->dtype, 0, self->device, -1);
    if (!rc) rc = sk_zeros(V, (SkIntList){sv, nd}, self->dtype, 0, self->device, -1);
    sk_tensor_release(*U);
    *U = u;
  }
  sk_tensor_release(Vh);
  if (rc) {
    sk_tensor_release(*U);
    sk_tensor_release(*S);
    *U = *S = NULL;
  }
  return rc;
}

int sk_math_linalg_eigh(SkTensor **eigenvalues, SkTensor **eigenvectors, const SkTensor *self, const char *UPLO) {
  return sk__linalg_eigh(eigenvalues, eigenvectors, self, UPLO, 1);
}

int sk_math_linalg_eigvalsh(SkTensor **result, const SkTensor *self, const char *UPLO) {
  SkTensor *v = NULL;
  int rc = sk__linalg_eigh(result, &v, self, UPLO, sk_tensor_grad_flag(self) != 0);
  sk_tensor_release(v);
  return rc;
}
/* }==== */

/* {==== Aliases of the Householder product and the matrix exponential ==== */
int sk_math_orgqr(SkTensor **result, const SkTensor *self, const SkTensor *input2) {
  return sk_linalg_householder_product(result, self, input2);
}

int sk_math_matrix_exp(SkTensor **result, const SkTensor *self) { return sk_linalg_matrix_exp(result, self); }
/* }==== */
