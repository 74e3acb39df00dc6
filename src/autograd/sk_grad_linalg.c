/*
** sk_grad_linalg.c — the backward formulas of sk.linalg (helpers of derivatives.yaml), for real
** input: PyTorch 1.13's formulas (FunctionsManual.cpp), written with the dispatched ops so that
** they record under create_graph. Xᵀ is the transpose of the last two dims. A gradient of an
** output that did not reach the loss arrives as zeros (the engine fills it), so each formula
** reads every gradient it takes.
*/
#include "sk_grad_helpers.h"
#include "sk_grad_tape.h"
#include "sk_linalg.h"

#include <string.h>

#define T_(call) SK_TAPE_STEP(tp, call)
#define NONE_DEVICE sk_device(-1, 0)

/* {==== Steps on the tape ==== */
static SkTensor *mT(SkTape *tp, const SkTensor *a) { return T_(sk_transpose_int(&r, a, -2, -1)); }
static SkTensor *mm(SkTape *tp, const SkTensor *a, const SkTensor *b) { return T_(sk_matmul(&r, a, b)); }
static SkTensor *tril(SkTape *tp, const SkTensor *a, int64_t k) { return T_(sk_tril(&r, a, k)); }
static SkTensor *triu(SkTape *tp, const SkTensor *a, int64_t k) { return T_(sk_triu(&r, a, k)); }
static SkTensor *row(SkTape *tp, const SkTensor *v) { return T_(sk_unsqueeze(&r, v, -2)); } /* v[..., None, :] */
static SkTensor *col(SkTape *tp, const SkTensor *v) { return T_(sk_unsqueeze(&r, v, -1)); } /* v[..., :, None] */
static SkTensor *diag(SkTape *tp, const SkTensor *a) { return T_(sk_diagonal(&r, a, 0, -2, -1)); }
static SkTensor *diag_embed(SkTape *tp, const SkTensor *v) { return T_(sk_diag_embed(&r, v, 0, -2, -1)); }
static SkTensor *narrow(SkTape *tp, const SkTensor *a, int64_t dim, int64_t start, int64_t len) {
  return T_(sk_narrow(&r, a, dim, start, len));
}
/* The solution of op(A)·X = B (left) or X·op(A) = B with A triangular. */
static SkTensor *trsolve(SkTape *tp, const SkTensor *A, const SkTensor *B, int upper, int left, int unit) {
  return T_(sk_linalg_solve_triangular(&r, A, B, upper, left, unit));
}
/* a with its diagonal replaced by v */
static SkTensor *set_diag(SkTape *tp, const SkTensor *a, const SkTensor *v) {
  return t_add(tp, t_sub(tp, a, diag_embed(tp, diag(tp, a))), diag_embed(tp, v));
}
/* E[i][j] = v[j] - v[i], with ones on the diagonal (the divisor of the spectral formulas) */
static SkTensor *gaps(SkTape *tp, const SkTensor *v) {
  SkTensor *e = t_sub(tp, row(tp, v), col(tp, v));
  return t_add(tp, e, diag_embed(tp, T_(sk_ones_like(&r, v, -1, -1, NONE_DEVICE, -1, -1))));
}
static SkTensor *cat2(SkTape *tp, const SkTensor *a, const SkTensor *b, int64_t dim) {
  SkTensor *ab[2] = {(SkTensor *)a, (SkTensor *)b};
  return a && b ? T_(sk_cat(&r, (SkTensorList){ab, 2}, dim)) : NULL;
}
static SkTensor *zeros_like(SkTape *tp, const SkTensor *a) {
  return T_(sk_zeros_like(&r, a, -1, -1, NONE_DEVICE, -1, -1));
}
#define TAPE_INIT {{NULL}, 0, 0, {0}}
/* }==== */

/* {==== Solves ==== */
/* X = A⁻¹B (left) or B·A⁻¹: gB = A⁻ᵀ·gX (gX·A⁻ᵀ), gA = -gB·Xᵀ (-Xᵀ·gB); a vector B is a column. */
int sk_grad_linalg_solve_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *A, const SkTensor *result,
                                  SkIntList B_sizes, int left, SkIntList mask) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  int vector = sk_linalg_solve_is_vector(A, B_sizes.n, B_sizes.data);
  const SkTensor *gX = vector ? col(tp, grad) : grad, *X = vector ? col(tp, result) : result;
  SkTensor *gB = T_(sk_linalg_solve(&r, mT(tp, A), gX, left)), *gA = NULL;
  if (mask.data[0]) gA = t_neg(tp, left ? mm(tp, gB, mT(tp, X)) : mm(tp, mT(tp, X), gB));
  if (vector) gB = T_(sk_squeeze_dim(&r, gB, -1));
  return sk_grad_tape_list(tp, out, 2, gA, mask.data[1] ? gB : NULL, NULL);
}

/* The same with A triangular; gA keeps A's triangle (without the diagonal when unitriangular). */
int sk_grad_linalg_solve_triangular_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *self,
                                             const SkTensor *result, int upper, int left, int unitriangular,
                                             SkIntList mask) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  SkTensor *gB = trsolve(tp, mT(tp, self), grad, !upper, left, unitriangular), *gA = NULL;
  if (mask.data[0]) {
    gA = t_neg(tp, left ? mm(tp, gB, mT(tp, result)) : mm(tp, mT(tp, result), gB));
    gA = upper ? triu(tp, gA, unitriangular) : tril(tp, gA, -unitriangular);
  }
  return sk_grad_tape_list(tp, out, 2, gA, mask.data[1] ? gB : NULL, NULL);
}

/* lstsq through the pseudo-inverse P = A⁺ (X = P·B; PyTorch's linalg_lstsq_backward): gB = Pᵀ·gX,
** gA from gP = gX·Bᵀ by the differential of A⁺ (Golub & Pereyra):
** gA = -Pᵀ·gP·Pᵀ + (I - A·P)·gPᵀ·P·Pᵀ + Pᵀ·P·gPᵀ·(I - P·A). A vector b is a column. */
int sk_grad_linalg_lstsq_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *self, const SkTensor *b,
                                  SkIntList mask) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  int vector = b->ndim == self->ndim - 1;
  const SkTensor *gX = vector ? col(tp, grad) : grad, *B = vector ? col(tp, b) : b, *A = self;
  SkOptDouble none = {0, 0};
  SkTensor *P = T_(sk_linalg_pinv_atol_rtol_float(&r, A, none, none, 0)), *Pt = mT(tp, P), *gA = NULL, *gB = NULL;
  if (mask.data[0]) {
    SkTensor *gPt = mm(tp, B, mT(tp, gX));                   /* gPᵀ = B·gXᵀ */
    SkTensor *t1 = t_neg(tp, mm(tp, Pt, mm(tp, mT(tp, gPt), Pt)));
    SkTensor *W = mm(tp, gPt, mm(tp, P, Pt));                /* gPᵀ·P·Pᵀ */
    SkTensor *t2 = t_sub(tp, W, mm(tp, A, mm(tp, P, W)));
    SkTensor *Z = mm(tp, mm(tp, Pt, P), gPt);                /* Pᵀ·P·gPᵀ */
    SkTensor *t3 = t_sub(tp, Z, mm(tp, mm(tp, Z, P), A));
    gA = t_add(tp, t_add(tp, t1, t2), t3);
  }
  if (mask.data[1]) {
    gB = mm(tp, Pt, gX);
    if (vector) gB = T_(sk_squeeze_dim(&r, gB, -1));
  }
  return sk_grad_tape_list(tp, out, 2, gA, gB, NULL);
}
/* }==== */

/* {==== Factorizations ==== */
/* Cholesky (Murray 2016): gA = L⁻ᵀ·Φ(Lᵀ·gL)·L⁻¹, Φ the lower triangle with the diagonal halved,
** symmetrized; upper: L = Uᵀ. */
int sk_grad_cholesky_backward(SkTensor **out, const SkTensor *grad, int upper, const SkTensor *L) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  const SkTensor *gL = upper ? mT(tp, grad) : grad;
  if (upper) L = mT(tp, L);
  SkTensor *phi = tril(tp, mm(tp, mT(tp, L), gL), 0);
  phi = t_sub(tp, phi, t_scale(tp, diag_embed(tp, diag(tp, phi)), 0.5));
  SkTensor *gA = trsolve(tp, L, trsolve(tp, mT(tp, L), phi, 1, 1, 0), 0, 0, 0);
  return sk_tape_result(tp, t_scale(tp, t_add(tp, gA, mT(tp, gA)), 0.5), out);
}

/* A = P·L·U (PyTorch's linalg_lu_backward). Square: gA = P·L⁻ᵀ·[tril₋₁(Lᵀ·gL) + triu(gU·Uᵀ)]·U⁻ᵀ;
** wide (m < n, U = [U1 U2]) and tall (m > n, L = [L1; L2]) as PyTorch: the square formula on
** U1 (L1) with the other block's terms. */
int sk_grad_linalg_lu_backward(SkTensor **out, const SkTensor *gL, const SkTensor *gU, const SkTensor *P,
                               const SkTensor *L, const SkTensor *U, int pivot) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  int64_t m = L->sizes[L->ndim - 2], n = U->sizes[U->ndim - 1], k = m < n ? m : n;
  SkTensor *gA;
  if (m == n) {
    gA = t_add(tp, tril(tp, mm(tp, mT(tp, L), gL), -1), triu(tp, mm(tp, gU, mT(tp, U)), 0));
    gA = trsolve(tp, mT(tp, U), gA, 0, 0, 0);
    gA = trsolve(tp, mT(tp, L), gA, 1, 1, 1);
  } else if (m < n) {
    SkTensor *U1 = narrow(tp, U, -1, 0, k), *gUt = triu(tp, gU, 0);
    gA = t_sub(tp, mm(tp, mT(tp, L), gL), mm(tp, gUt, mT(tp, U)));
    gA = trsolve(tp, mT(tp, U1), tril(tp, gA, -1), 0, 0, 0);
    gA = cat2(tp, t_add(tp, gA, narrow(tp, gUt, -1, 0, k)), narrow(tp, gU, -1, k, n - k), -1);
    gA = trsolve(tp, mT(tp, L), gA, 1, 1, 1);
  } else {
    SkTensor *L1 = narrow(tp, L, -2, 0, k), *gLt = tril(tp, gL, -1);
    gA = t_sub(tp, mm(tp, gU, mT(tp, U)), mm(tp, mT(tp, L), gLt));
    gA = trsolve(tp, mT(tp, L1), triu(tp, gA, 0), 1, 1, 1);
    gA = cat2(tp, t_add(tp, gA, narrow(tp, gLt, -2, 0, k)), narrow(tp, gL, -2, k, m - k), -2);
    gA = trsolve(tp, mT(tp, U), gA, 0, 0, 0);
  }
  if (pivot) gA = mm(tp, P, gA);
  return sk_tape_result(tp, gA, out);
}

/* lu_factor's packed LU: the factorization again (linalg.lu gives P, L, U; sk has no lu_unpack),
** the gradient of LU split into L's strict lower part and U's upper part. */
int sk_grad_lu_factor_ex_backward(SkTensor **out, const SkTensor *grad, const SkTensor *A, int pivot) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  SkTensor *P = NULL, *L = NULL, *U = NULL;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
  if (sk_linalg_lu(&P, &L, &U, A, pivot)) return -1;
  sk_tape_keep(tp, 0, P), sk_tape_keep(tp, 0, L), sk_tape_keep(tp, 0, U);
  SkTensor *gL = tril(tp, narrow(tp, grad, -1, 0, k), -1), *gU = triu(tp, narrow(tp, grad, -2, 0, k), 0);
  SkTensor *gA = NULL;
  if (!tp->rc && sk_grad_linalg_lu_backward(&gA, gL, gU, P, L, U, pivot)) sk_tape_keep(tp, -1, NULL);
  else sk_tape_keep(tp, 0, gA);
  return sk_tape_result(tp, gA, out);
}

/* lu_solve: B's gradient solves with the adjoint; LU's (PyTorch's linalg_lu_solve_LU), with
** left = False read as the transposed system (X·A = B is Aᵀ·Xᵀ = Bᵀ):
** AX = B:  gR = -U⁻ᵀ·gX·Xᵀ, gU = triu(gR), gL = tril₋₁(L⁻ᵀ·gR·Uᵀ);
** AᵀX = B: gR = -Pᵀ·X·gXᵀ·P·L⁻ᵀ, gU = triu(Lᵀ·gR·U⁻ᵀ), gL = tril₋₁(gR).
** Pᵀ·Y is lu_solve of Y over identity factors with the pivots (exact: only the row swaps). */
int sk_grad_linalg_lu_solve_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *LU,
                                     const SkTensor *pivots, const SkTensor *result, int left, int adjoint,
                                     SkIntList mask) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  SkTensor *gB = mask.data[1] ? T_(sk_linalg_lu_solve(&r, LU, pivots, grad, left, !adjoint)) : NULL, *gLU = NULL;
  if (mask.data[0]) {
    const SkTensor *X = left ? result : mT(tp, result), *gX = left ? grad : mT(tp, grad);
    int adj = left ? adjoint : !adjoint;
    SkTensor *L = T_(sk_tril(&r, LU, -1)), *U = triu(tp, LU, 0), *gU, *gL;
    int64_t n = LU->sizes[LU->ndim - 1];
    L = t_add(tp, L, T_(sk_eye(&r, n, LU->dtype, 0, LU->device, -1)));
    if (!adj) {
      SkTensor *gR = t_neg(tp, trsolve(tp, mT(tp, U), mm(tp, gX, mT(tp, X)), 0, 1, 0));
      gU = triu(tp, gR, 0);
      gL = tril(tp, trsolve(tp, mT(tp, L), mm(tp, gR, mT(tp, U)), 1, 1, 1), -1);
    } else {
      SkTensor *I = T_(sk_expand(&r, T_(sk_eye(&r, n, LU->dtype, 0, LU->device, -1)), (SkIntList){LU->sizes, LU->ndim}, 0));
      SkTensor *PtX = T_(sk_linalg_lu_solve(&r, I, pivots, X, 1, 0));   /* Pᵀ·X */
      SkTensor *PtgX = T_(sk_linalg_lu_solve(&r, I, pivots, gX, 1, 0)); /* Pᵀ·gX */
      SkTensor *gR = t_neg(tp, trsolve(tp, mT(tp, L), mm(tp, PtX, mT(tp, PtgX)), 1, 0, 1)); /* ·L⁻ᵀ */
      gU = triu(tp, trsolve(tp, mT(tp, U), mm(tp, mT(tp, L), gR), 0, 0, 0), 0);          /* ·U⁻ᵀ */
      gL = tril(tp, gR, -1);
    }
    gLU = t_add(tp, gL, gU);
  }
  return sk_grad_tape_list(tp, out, 2, gLU, gB, NULL);
}

/* QR (m ≥ n, or the complete or reduced QR of a wide matrix): with M = gR·Rᵀ - Qᵀ·gQ and
** b = tril₋₁(Mᵀ - M), gA = (gQ + Q·(M + b))·R⁻ᵀ when m ≥ n; else gA = Q·gR + [Q·b·R1⁻ᵀ, 0]
** with R1 the first m columns of R. */
int sk_grad_linalg_qr_backward(SkTensor **out, const SkTensor *gQ, const SkTensor *gR, const SkTensor *Q,
                               const SkTensor *R, const char *mode) {
  if (!strcmp(mode, "r"))
    return sk_error("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                    "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  int64_t m = Q->sizes[Q->ndim - 2], n = R->sizes[R->ndim - 1];
  if (!strcmp(mode, "complete") && m > n)
    return sk_error("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  SkTape tape = TAPE_INIT, *tp = &tape;
  SkTensor *M = t_sub(tp, mm(tp, gR, mT(tp, R)), mm(tp, mT(tp, Q), gQ));
  SkTensor *b = tril(tp, t_sub(tp, mT(tp, M), M), -1), *gA;
  if (m >= n) {
    gA = trsolve(tp, mT(tp, R), t_add(tp, gQ, mm(tp, Q, t_add(tp, M, b))), 0, 0, 0);
  } else {
    SkTensor *g1 = trsolve(tp, mT(tp, narrow(tp, R, -1, 0, m)), mm(tp, Q, b), 0, 0, 0);
    SkTensor *z = zeros_like(tp, narrow(tp, R, -1, m, n - m));
    gA = t_add(tp, mm(tp, Q, gR), cat2(tp, g1, z, -1));
  }
  return sk_tape_result(tp, gA, out);
}

/* householder_product: Q = H1·…·Hk (first n columns), Hi = I - τi·vi·viᵀ, vi = (0.., 1, input[i+1:, i]).
** With Mi = (H1…Hi-1)ᵀ·G·Qᵀ-padded·(Hi+1…Hk)ᵀ: gτi = -viᵀ·Mi·vi and g(vi) = -τi·(Mi + Miᵀ)·vi on the
** rows below i. M1 = G·Qᵀ·H1⁻¹ and Mi+1 = Hi·Mi·Hi+1⁻¹, where H⁻¹ = I + τ/(1 - τ·vᵀv)·v·vᵀ
** (Sherman–Morrison; a reflector with τ·vᵀv = 1 is singular, and so is the derivative): O(k·m²). */
static SkTensor *times_inv_reflector(SkTape *tp, const SkTensor *M, const SkTensor *v, const SkTensor *t) {
  SkTensor *vtv = mm(tp, mT(tp, v), v);
  SkTensor *c = t_div(tp, t, T_(sk_rsub_Scalar(&r, t_mul(tp, t, vtv), sk_scalar_int(1), sk_scalar_int(1))));
  return t_add(tp, M, t_mul(tp, c, mm(tp, mm(tp, M, v), mT(tp, v))));
}
int sk_grad_householder_product_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *result,
                                         const SkTensor *input, const SkTensor *tau, SkIntList mask) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  int64_t m = input->sizes[input->ndim - 2], n = input->sizes[input->ndim - 1], k = tau->sizes[tau->ndim - 1];
  SkTensor *eye = T_(sk_eye_m(&r, m, k, input->dtype, 0, input->device, -1));
  SkTensor *V = t_add(tp, tril(tp, narrow(tp, input, -1, 0, k), -1), eye);
  SkTensor *taus = col(tp, col(tp, tau)); /* [..., k, 1, 1] */
  /* the reflectors' gradients and the running M are owned here, not by the tape: k is unbounded */
  SkTensor **gv = calloc((size_t)k + 1, sizeof *gv), **gt = calloc((size_t)k + 1, sizeof *gt), *M = NULL;
  if (!gv || !gt) sk_tape_keep(tp, sk_error("out of memory"), NULL);
  if (k > 0 && !tp->rc) {
    SkTensor *M1 = times_inv_reflector(tp, mm(tp, grad, mT(tp, result)), narrow(tp, V, -1, 0, 1),
                                       T_(sk_select_int(&r, taus, -3, 0)));
    if (M1) M = sk_tape_take(tp, M1);
  }
  for (int64_t i = 0; i < k && !tp->rc; i++) {
    SkTape step = TAPE_INIT, *sp = &step; /* each reflector's temporaries, freed before the next */
    SkTensor *v = narrow(sp, V, -1, i, 1), *t = SK_TAPE_STEP(sp, sk_select_int(&r, taus, -3, i));
    SkTensor *Mv = mm(sp, M, v), *Mtv = mm(sp, mT(sp, M), v);
    SkTensor *gti = t_neg(sp, mm(sp, mT(sp, v), Mv)), *gvi = t_neg(sp, t_mul(sp, t, t_add(sp, Mv, Mtv))), *next = NULL;
    if (i + 1 < k) {
      next = t_sub(sp, M, t_mul(sp, t, mm(sp, v, mT(sp, Mtv))));
      next = times_inv_reflector(sp, next, narrow(sp, V, -1, i + 1, 1), SK_TAPE_STEP(sp, sk_select_int(&r, taus, -3, i + 1)));
    }
    if (sp->rc) {
      sk_tape_keep(tp, sk_tape_free(sp), NULL);
      break;
    }
    gt[i] = sk_tape_take(sp, gti), gv[i] = sk_tape_take(sp, gvi);
    if (next) {
      SkTensor *nm = sk_tape_take(sp, next);
      sk_tensor_release(M);
      M = nm;
    }
    sk_tape_free(sp);
  }
  sk_tensor_release(M);
  SkTensor *gA = NULL, *gT = NULL;
  if (!tp->rc && mask.data[0]) {
    gA = k > 0 ? tril(tp, T_(sk_cat(&r, (SkTensorList){gv, (int)k}, -1)), -1) : NULL;
    SkTensor *rest = zeros_like(tp, narrow(tp, input, -1, k, n - k));
    gA = gA ? cat2(tp, gA, rest, -1) : rest;
  }
  if (!tp->rc && mask.data[1])
    gT = k > 0 ? T_(sk_squeeze_dim(&r, T_(sk_cat(&r, (SkTensorList){gt, (int)k}, -1)), -2)) : zeros_like(tp, tau);
  for (int64_t i = 0; gv && gt && i < k; i++) sk_tensor_release(gv[i]), sk_tensor_release(gt[i]);
  free(gv), free(gt);
  return sk_grad_tape_list(tp, out, 2, gA, gT, NULL);
}
/* }==== */

/* {==== Spectral ==== */
/* eig / eigh (PyTorch's linalg_eig_backward, real eigenvalues): with E[i][j] = λj - λi,
** gA = V⁻ᵀ·(diag(gλ) + offdiag(Vᵀ·gV - Vᵀ·V·diag(Vᵀ·gV)) / E)·Vᵀ; V⁻ᵀ = V for eigh, where
** Vᵀ·gV is projected onto the skew-symmetric matrices instead, (M - Mᵀ)/2 (the tangent space
** of the orthogonal group): divided by the antisymmetric E it is symmetric, so gA is too. */
int sk_grad_linalg_eig_backward(SkTensor **out, const SkTensor *gL, const SkTensor *gV, const SkTensor *L,
                                const SkTensor *V, int is_hermitian) {
  if (V->ndim < 2 || V->sizes[V->ndim - 1] != L->sizes[L->ndim - 1])
    return sk_error("linalg.eigh: the derivative of the eigenvalues needs the eigenvectors, which were not computed");
  SkTape tape = TAPE_INIT, *tp = &tape;
  SkTensor *Vt = mT(tp, V), *VhgV = mm(tp, Vt, gV);
  if (is_hermitian) VhgV = t_scale(tp, t_sub(tp, VhgV, mT(tp, VhgV)), 0.5);
  else VhgV = t_sub(tp, VhgV, mm(tp, Vt, t_mul(tp, V, row(tp, diag(tp, VhgV)))));
  SkTensor *ret = set_diag(tp, t_div(tp, VhgV, gaps(tp, L)), gL);
  SkTensor *gA = is_hermitian ? mm(tp, V, mm(tp, ret, Vt)) : T_(sk_linalg_solve(&r, Vt, mm(tp, ret, Vt), 1));
  return sk_tape_result(tp, gA, out);
}

/* eigvals: eig's formula with no gradient for the eigenvectors, after eig again (PyTorch's
** eigvals computes the eigenvectors when its input requires grad). */
int sk_grad_linalg_eigvals_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self) {
  SkTensor *L = NULL, *V = NULL, *gV = NULL;
  int rc = sk_linalg_eig(&L, &V, self);
  if (!rc) rc = sk_zeros_like(&gV, V, -1, -1, NONE_DEVICE, -1, -1);
  if (!rc) rc = sk_grad_linalg_eig_backward(out, grad, gV, L, V, 0);
  sk_tensor_release(L), sk_tensor_release(V), sk_tensor_release(gV);
  return rc;
}

/* SVD (PyTorch's svd_backward, real): with E[i][j] = σj² - σi², skew(X) = X - Xᵀ,
** G = (skew(Uᵀ·gU)·diag(σ) + diag(σ)·skew(Vh·gVhᵀ)) / E + diag(gσ), gA = U·G·Vh plus, for a tall
** A, (I - U·Uᵀ)·gU·σ⁻¹·Vh, for a wide one U·σ⁻¹·gVh·(I - Vhᵀ·Vh). full_matrices: U and Vh cut to
** min(m, n) vectors (the others do not depend on A smoothly). */
int sk_grad_svd_backward(SkTensor **out, const SkTensor *gU, const SkTensor *gS, const SkTensor *gVh, const SkTensor *U,
                         const SkTensor *S, const SkTensor *Vh, int full_matrices, int compute_uv) {
  if (!compute_uv)
    return sk_error("linalg.svd: the derivative needs the singular vectors, which compute_uv=False does not compute");
  SkTape tape = TAPE_INIT, *tp = &tape;
  int64_t k = S->sizes[S->ndim - 1];
  if (full_matrices) {
    U = narrow(tp, U, -1, 0, k), gU = narrow(tp, gU, -1, 0, k);
    Vh = narrow(tp, Vh, -2, 0, k), gVh = narrow(tp, gVh, -2, 0, k);
  }
  if (tp->rc) return sk_tape_free(tp);
  int64_t m = U->sizes[U->ndim - 2], n = Vh->sizes[Vh->ndim - 1];
  SkTensor *Ut = mT(tp, U), *UhgU = mm(tp, Ut, gU), *VhgV = mm(tp, Vh, mT(tp, gVh));
  UhgU = t_sub(tp, UhgU, mT(tp, UhgU));
  VhgV = t_sub(tp, VhgV, mT(tp, VhgV));
  SkTensor *G = t_add(tp, t_mul(tp, UhgU, row(tp, S)), t_mul(tp, col(tp, S), VhgV));
  G = t_add(tp, t_div(tp, G, gaps(tp, t_mul(tp, S, S))), diag_embed(tp, gS));
  SkTensor *gA;
  if (m > n) {
    SkTensor *gUSinv = t_div(tp, gU, row(tp, S));
    gA = t_add(tp, mm(tp, U, G), t_sub(tp, gUSinv, mm(tp, U, mm(tp, Ut, gUSinv))));
    gA = mm(tp, gA, Vh);
  } else if (m < n) {
    SkTensor *SinvgVh = t_div(tp, gVh, col(tp, S));
    gA = t_add(tp, mm(tp, G, Vh), t_sub(tp, SinvgVh, mm(tp, mm(tp, SinvgVh, mT(tp, Vh)), Vh)));
    gA = mm(tp, U, gA);
  } else {
    gA = mm(tp, U, mm(tp, G, Vh));
  }
  return sk_tape_result(tp, gA, out);
}
/* }==== */

/* {==== matrix_exp ==== */
/* The Fréchet derivative of exp at A in the direction G is the upper-right block of
** exp([[A, G], [0, A]]) (Mathias 1996); the adjoint one (the backward) uses Aᵀ. */
int sk_grad_linalg_matrix_exp_differential(SkTensor **out, const SkTensor *self, const SkTensor *grad, int adjoint) {
  SkTape tape = TAPE_INIT, *tp = &tape;
  int64_t n = self->sizes[self->ndim - 1];
  const SkTensor *A = adjoint ? mT(tp, self) : self;
  SkTensor *top = cat2(tp, A, grad, -1), *bot = cat2(tp, zeros_like(tp, A), A, -1);
  SkTensor *E = T_(sk_linalg_matrix_exp(&r, cat2(tp, top, bot, -2)));
  return sk_tape_result(tp, narrow(tp, narrow(tp, E, -2, 0, n), -1, n, n), out);
}
/* }==== */
