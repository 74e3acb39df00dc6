/*
** sk_linalg_composite.c — sk.linalg's composites over the LAPACK ops (Math, every backend)
** matrix_power (squaring over matmul), multi_dot (left to right), vecdot, vector_norm (over
** norm), pinv and matrix_rank (over the SVD), pinverse, cholesky_solve and cholesky_inverse
** (two triangular solves), triangular_solve (over solve_triangular), tensorinv, tensorsolve
** (reshapes around inv and solve). Each releases what it made on every path.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"
#include "sk_checked.h"
#include "sk_composite_util.h"

#include <float.h>
#include <math.h>
#include <string.h>

static void drop(SkTensor **a, SkTensor **b, SkTensor **c) {
  SkTensor **all[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (all[i] && *all[i]) {
      sk_tensor_release(*all[i]);
      *all[i] = NULL;
    }
}

static int square_check(const SkTensor *A, const char *fn) {
  if (A->ndim < 2) return sk_error("%s: The input tensor A must have at least 2 dimensions.", fn);
  if (A->sizes[A->ndim - 1] != A->sizes[A->ndim - 2])
    return sk_error("%s: A must be batches of square matrices, but they are %lld by %lld matrices", fn,
                    (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
  return 0;
}

/* {==== matrix_power, multi_dot, vecdot, vector_norm ==== */
/* A^n by squaring; n < 0 inverts first; A^0 is the identity of A's shape. */
int sk_math_linalg_matrix_power(SkTensor **result, const SkTensor *self, int64_t n) {
  if (square_check(self, "linalg.matrix_power")) return -1;
  if (n == 0) {
    SkTensor *e = NULL, *x = NULL;
    int64_t k = self->sizes[self->ndim - 1];
    int rc = sk_eye(&e, k, (int)self->dtype, 0, self->device, -1);
    if (!rc) rc = sk_expand(&x, e, (SkIntList){self->sizes, self->ndim}, 0);
    if (!rc) rc = sk_clone(result, x, 0);
    drop(&e, &x, NULL);
    return rc;
  }
  SkTensor *base = NULL, *acc = NULL, *t = NULL;
  int rc = n < 0 ? sk_linalg_inv(&base, self) : sk_clone(&base, self, 0);
  uint64_t e = n < 0 ? (uint64_t)(-(n + 1)) + 1 : (uint64_t)n;
  while (!rc) {
    if (e & 1) {
      if (!acc) acc = sk_tensor_retain(base);
      else if (!(rc = sk_matmul(&t, acc, base))) {
        sk_tensor_release(acc);
        acc = t;
        t = NULL;
      }
    }
    e >>= 1;
    if (!e || rc) break;
    if (!(rc = sk_matmul(&t, base, base))) {
      sk_tensor_release(base);
      base = t;
      t = NULL;
    }
  }
  drop(&base, &t, NULL);
  if (rc) drop(&acc, NULL, NULL);
  *result = rc ? NULL : acc;
  return rc;
}

/* A 1-d first operand is a row, a 1-d last one a column; both are squeezed off the result. */
int sk_math_linalg_multi_dot(SkTensor **result, SkTensorList tensors) {
  int n = tensors.n;
  if (n < 2) return sk_error("multi_dot(): expected at least 2 tensors but got %d", n);
  for (int i = 0; i < n; i++) {
    int nd = tensors.data[i]->ndim, edge = i == 0 || i == n - 1;
    if (!(nd == 2 || (edge && nd == 1))) {
      if (i == 0) return sk_error("multi_dot(): the first tensor must be 1D or 2D but got %dD", nd);
      if (i == n - 1) return sk_error("multi_dot(): the last tensor must be 1D or 2D but got %dD", nd);
      return sk_error("multi_dot(): tensor %d must be 2D but got %dD", i, nd);
    }
    if (tensors.data[i]->dtype != tensors.data[0]->dtype)
      return sk_error("multi_dot(): all tensors must have be the same dtype but tensor 0 is %s and tensor %d %s",
                      sk_dtype_torch_name(tensors.data[0]->dtype), i, sk_dtype_torch_name(tensors.data[i]->dtype));
  }
  SkDType dt = tensors.data[0]->dtype;
  if (sk_dtype_is_half(dt)) { /* in opmath: the chain of products on float32 copies, rounded once */
    SkTensor **f = sk_list_new(n, "multi_dot"), *y = NULL;
    if (!f) return -1;
    int rc = 0; /* the copies in a list, not on a tape: n is unbounded */
    for (int i = 0; !rc && i < n; i++) rc = sk_to_dtype(&f[i], tensors.data[i], sk_opmath_dtype(dt), 0, 0, -1);
    if (!rc) rc = sk_math_linalg_multi_dot(&y, (SkTensorList){f, n});
    if (!rc) rc = sk_to_dtype(result, y, dt, 0, 0, -1);
    sk_tensor_release(y);
    sk_list_free(f, n);
    return rc;
  }
  int first1 = tensors.data[0]->ndim == 1, last1 = tensors.data[n - 1]->ndim == 1;
  SkTensor *acc = NULL, *t = NULL, *last = NULL;
  int rc = first1 ? sk_unsqueeze(&acc, tensors.data[0], 0) : (acc = sk_tensor_retain((SkTensor *)tensors.data[0]), 0);
  for (int i = 1; !rc && i < n; i++) {
    const SkTensor *b = tensors.data[i];
    if (i == n - 1 && last1) {
      if ((rc = sk_unsqueeze(&last, b, 1))) break;
      b = last;
    }
    if ((rc = sk_matmul(&t, acc, b))) break;
    sk_tensor_release(acc);
    acc = t;
    t = NULL;
  }
  if (!rc && last1) {
    rc = sk_squeeze_dim(&t, acc, 1);
    sk_tensor_release(acc);
    acc = t;
    t = NULL;
  }
  if (!rc && first1) {
    rc = sk_squeeze_dim(&t, acc, 0);
    sk_tensor_release(acc);
    acc = t;
    t = NULL;
  }
  drop(&last, &t, NULL);
  if (rc) drop(&acc, NULL, NULL);
  *result = rc ? NULL : acc;
  return rc;
}

/* Σ x·y over dim (real dtypes: no conjugate). */
/* Σ x·y over dim, in opmath: half-type products are summed unrounded, and the sum rounds once */
int sk_math_linalg_vecdot(SkTensor **result, const SkTensor *x, const SkTensor *y, int64_t dim) {
  const SkTensor *ts[2] = {x, y};
  SkDType dt = sk_result_type(2, ts);
  SkTape t = {{NULL}, 0, 0, {0}}, *tp = &t;
  SkTensor *p = SK_TAPE_STEP(tp, sk_mul(&r, sk_tape_opmath(tp, x, dt), sk_tape_opmath(tp, y, dt)));
  SkTensor *s = SK_TAPE_STEP(tp, sk_sum_dim_IntList(&r, p, (SkIntList){&dim, 1}, 0, -1));
  return sk_tape_result(tp, sk_tape_round(tp, s, dt), result);
}

/* norm over dim, or over every dim (dim None), after the cast to dtype. */
int sk_math_linalg_vector_norm(SkTensor **result, const SkTensor *self, SkScalar ord, SkIntList dim, int keepdim,
                               int dtype) {
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                    sk_dtype_torch_name(self->dtype));
  SkTensor *x = NULL;
  int rc = dtype >= 0 && dtype != (int)self->dtype ? sk_to_dtype(&x, self, (SkDType)dtype, 0, 0, 0) : (x = sk_tensor_retain((SkTensor *)self), 0);
  int64_t all[SK_MAX_DIMS];
  SkIntList dims = dim;
  if (!dim.data) {
    for (int d = 0; d < self->ndim; d++) all[d] = d;
    dims = (SkIntList){all, self->ndim};
  }
  if (!rc) rc = sk_norm_ScalarOpt_dim(result, x, ord, dims, keepdim); /* a 0-d x too: ord 0 counts, not |x| */
  sk_tensor_release(x);
  return rc;
}
/* }==== */

/* {==== pinv, matrix_rank, pinverse (over the SVD, or eigh for hermitian) ====
** PyTorch's tolerance (get_atol_rtol): max(atol, rtol·σ_max) per matrix, atol and rtol float64
** tensors broadcast against the batch; atol absent is 0; rtol absent is eps·max(m, n), or 0 where
** atol > 0 when atol is given. The float overloads, rcond (rtol, atol 0) and tol (atol, rtol 0)
** are 0-d tensors of these. hermitian = true reads the lower triangle only, as PyTorch: the
** eigendecomposition A = V·diag(w)·Vᵀ (eigh, UPLO 'L'), whose |w| are the singular values. */
static int tol_of(SkTape *tp, const SkTensor *S, const SkTensor *A, const SkTensor *atol, const SkTensor *rtol,
                  SkTensor **tol) {
  double eps = A->dtype == SK_DTYPE_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], last = -1;
  SkIntList scalar = {NULL, 0};
#define T_(call) SK_TAPE_STEP(tp, call)
  SkTensor *zero = T_(sk_full(&r, scalar, sk_scalar_float(0), SK_DTYPE_FLOAT64, 0, S->device, -1));
  if (!rtol) {
    SkTensor *dflt = T_(sk_full(&r, scalar, sk_scalar_float(eps * (double)(m > n ? m : n)), SK_DTYPE_FLOAT64, 0, S->device, -1));
    rtol = atol ? T_(sk_where_self(&r, T_(sk_gt_Scalar(&r, atol, sk_scalar_int(0))), zero, dflt)) : dflt;
  }
  if (!atol) atol = zero;
  /* σ_max per matrix, [..., 1]; 0 for an empty matrix (amax refuses the empty dim, a sum gives 0) */
  SkTensor *smax = S->sizes[S->ndim - 1] == 0 ? T_(sk_sum_dim_IntList(&r, S, (SkIntList){&last, 1}, 1, -1))
                                              : T_(sk_amax(&r, S, (SkIntList){&last, 1}, 1));
  SkTensor *rs = T_(sk_mul(&r, T_(sk_unsqueeze(&r, rtol, -1)), smax));
  *tol = T_(sk_maximum(&r, T_(sk_unsqueeze(&r, atol, -1)), rs));
#undef T_
  return tp->rc;
}

/* V·diag(1/w where |w| > tol, else 0)·Vᵀ, PyTorch's hermitian pinv */
static int pinv_hermitian(SkTensor **result, const SkTensor *self, const SkTensor *atol, const SkTensor *rtol) {
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  SkTensor *w = NULL, *V = NULL, *tol = NULL;
#define T_(call) SK_TAPE_STEP(tp, call)
  if (sk_linalg_eigh(&w, &V, self, "L")) return -1;
  sk_tape_keep(tp, 0, w), sk_tape_keep(tp, 0, V);
  SkTensor *S = T_(sk_abs(&r, w));
  if (!S || tol_of(tp, S, self, atol, rtol, &tol)) return sk_tape_free(tp);
  SkTensor *zero = T_(sk_zeros_like(&r, w, -1, 0, w->device, -1, 0));
  SkTensor *winv = T_(sk_where_self(&r, T_(sk_gt(&r, S, tol)), T_(sk_reciprocal(&r, w)), zero));
  SkTensor *scaled = T_(sk_mul(&r, V, T_(sk_unsqueeze(&r, winv, -2))));
  SkTensor *out = T_(sk_matmul(&r, scaled, T_(sk_transpose_int(&r, V, -2, -1))));
#undef T_
  return sk_tape_result(tp, out, result);
}

static int pinv_core(SkTensor **result, const SkTensor *self, const SkTensor *atol, const SkTensor *rtol, int hermitian) {
  if (self->ndim < 2) return sk_error("linalg.pinv: The input tensor A must have at least 2 dimensions.");
  if (hermitian) return pinv_hermitian(result, self, atol, rtol);
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  SkTensor *U = NULL, *S = NULL, *Vh = NULL, *tol = NULL;
#define T_(call) SK_TAPE_STEP(tp, call)
  if (sk_linalg_svd(&U, &S, &Vh, self, 0, NULL)) return -1;
  sk_tape_keep(tp, 0, U), sk_tape_keep(tp, 0, S), sk_tape_keep(tp, 0, Vh);
  if (tol_of(tp, S, self, atol, rtol, &tol)) return sk_tape_free(tp);
  /* V·diag(1/σ where σ > tol, else 0)·Uᵀ */
  SkTensor *zero = T_(sk_zeros_like(&r, S, -1, 0, S->device, -1, 0));
  SkTensor *sinv = T_(sk_where_self(&r, T_(sk_gt(&r, S, tol)), T_(sk_reciprocal(&r, S)), zero));
  SkTensor *scaled = T_(sk_mul(&r, T_(sk_unsqueeze(&r, sinv, -1)), T_(sk_transpose_int(&r, U, -2, -1))));
  SkTensor *out = T_(sk_matmul(&r, T_(sk_transpose_int(&r, Vh, -2, -1)), scaled));
#undef T_
  return sk_tape_result(tp, out, result);
}

/* The count of σ > tol, int64 (hermitian: σ = |eigvalsh of the lower triangle|). */
static int rank_core(SkTensor **result, const SkTensor *self, const SkTensor *atol, const SkTensor *rtol, int hermitian) {
  if (self->ndim < 2) return sk_error("linalg.matrix_rank: The input tensor A must have at least 2 dimensions.");
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  SkTensor *S = NULL, *tol = NULL;
  int64_t last = -1;
  if (hermitian ? sk_linalg_eigvalsh(&S, self, "L") : sk_linalg_svdvals(&S, self, NULL)) return -1;
  sk_tape_keep(tp, 0, S);
  if (hermitian) S = SK_TAPE_STEP(tp, sk_abs(&r, S));
  if (!S) return sk_tape_free(tp);
  if (tol_of(tp, S, self, atol, rtol, &tol)) return sk_tape_free(tp);
  SkTensor *keep = SK_TAPE_STEP(tp, sk_gt(&r, S, tol));
  return sk_tape_result(tp, SK_TAPE_STEP(tp, sk_count_nonzero_dim_IntList(&r, keep, (SkIntList){&last, 1})), result);
}

/* The float tolerances as the 0-d float64 tensors of the Tensor overloads (NULL: absent). */
typedef int (*TolCore)(SkTensor **, const SkTensor *, const SkTensor *, const SkTensor *, int);
static int with_float_tols(TolCore core, SkTensor **result, const SkTensor *self, SkOptDouble atol, SkOptDouble rtol,
                           int hermitian) {
  SkTensor *a = NULL, *rt = NULL;
  SkIntList scalar = {NULL, 0};
  int rc = 0;
  if (atol.has) rc = sk_full(&a, scalar, sk_scalar_float(atol.v), SK_DTYPE_FLOAT64, 0, self->device, -1);
  if (!rc && rtol.has) rc = sk_full(&rt, scalar, sk_scalar_float(rtol.v), SK_DTYPE_FLOAT64, 0, self->device, -1);
  if (!rc) rc = core(result, self, a, rt, hermitian);
  drop(&a, &rt, NULL);
  return rc;
}
static const SkOptDouble ZERO = {1, 0.0};
/* One Tensor tolerance t (atol when t_is_atol, else rtol), the other 0. */
static int with_zero_other(TolCore core, SkTensor **result, const SkTensor *self, const SkTensor *t, int t_is_atol,
                           int hermitian) {
  SkTensor *zero = NULL;
  int rc = sk_zeros_like(&zero, t, SK_DTYPE_FLOAT64, 0, t->device, -1, 0);
  if (!rc) rc = t_is_atol ? core(result, self, t, zero, hermitian) : core(result, self, zero, t, hermitian);
  sk_tensor_release(zero);
  return rc;
}

int sk_math_linalg_pinv_atol_rtol_float(SkTensor **result, const SkTensor *self, SkOptDouble atol, SkOptDouble rtol,
                                        int hermitian) {
  return with_float_tols(pinv_core, result, self, atol, rtol, hermitian);
}
int sk_math_linalg_pinv_atol_rtol_tensor(SkTensor **result, const SkTensor *self, const SkTensor *atol,
                                         const SkTensor *rtol, int hermitian) {
  return pinv_core(result, self, atol, rtol, hermitian);
}
/* rcond (NumPy's name) is rtol, with atol 0 */
int sk_math_linalg_pinv(SkTensor **result, const SkTensor *self, double rcond, int hermitian) {
  return with_float_tols(pinv_core, result, self, ZERO, (SkOptDouble){1, rcond}, hermitian);
}
int sk_math_linalg_pinv_rcond_tensor(SkTensor **result, const SkTensor *self, const SkTensor *rcond, int hermitian) {
  return with_zero_other(pinv_core, result, self, rcond, 0, hermitian);
}
int sk_math_pinverse(SkTensor **result, const SkTensor *self, double rcond) {
  return sk_math_linalg_pinv(result, self, rcond, 0);
}

int sk_math_linalg_matrix_rank_atol_rtol_float(SkTensor **result, const SkTensor *self, SkOptDouble atol,
                                               SkOptDouble rtol, int hermitian) {
  return with_float_tols(rank_core, result, self, atol, rtol, hermitian);
}
int sk_math_linalg_matrix_rank_atol_rtol_tensor(SkTensor **result, const SkTensor *input, const SkTensor *atol,
                                                const SkTensor *rtol, int hermitian) {
  return rank_core(result, input, atol, rtol, hermitian);
}
/* tol is atol, with rtol 0 */
int sk_math_linalg_matrix_rank(SkTensor **result, const SkTensor *self, double tol, int hermitian) {
  return with_float_tols(rank_core, result, self, (SkOptDouble){1, tol}, ZERO, hermitian);
}
int sk_math_linalg_matrix_rank_tol_tensor(SkTensor **result, const SkTensor *input, const SkTensor *tol, int hermitian) {
  return with_zero_other(rank_core, result, input, tol, 1, hermitian);
}
/* }==== */

/* {==== Triangular and Cholesky solves ==== */
/* A = L·Lᵀ (or Uᵀ·U): X = A⁻¹·B by a lower then an upper triangular solve. */
int sk_math_cholesky_solve(SkTensor **result, const SkTensor *self, const SkTensor *input2, int upper) {
  if (self->ndim < 2 || input2->ndim < 2)
    return sk_error("b should have at least 2 dimensions, but has %d dimensions instead", self->ndim);
  SkTensor *ft = NULL, *y = NULL;
  int rc = sk_transpose_int(&ft, input2, -2, -1);
  const SkTensor *lower = upper ? ft : input2, *upperf = upper ? input2 : ft;
  if (!rc) rc = sk_linalg_solve_triangular(&y, lower, self, 0, 1, 0);
  if (!rc) rc = sk_linalg_solve_triangular(result, upperf, y, 1, 1, 0);
  drop(&ft, &y, NULL);
  return rc;
}

int sk_math_cholesky_inverse(SkTensor **result, const SkTensor *self, int upper) {
  if (square_check(self, "cholesky_inverse")) return -1;
  SkTensor *e = NULL, *x = NULL;
  int rc = sk_eye(&e, self->sizes[self->ndim - 1], (int)self->dtype, 0, self->device, -1);
  if (!rc) rc = sk_expand(&x, e, (SkIntList){self->sizes, self->ndim}, 0);
  if (!rc) rc = sk_math_cholesky_solve(result, x, self, upper);
  drop(&e, &x, NULL);
  return rc;
}

/* The deprecated torch.triangular_solve: (A⁻¹B or A⁻ᵀB, a copy of A). */
int sk_math_triangular_solve(SkTensor **solution, SkTensor **cloned_coefficient, const SkTensor *self,
                             const SkTensor *A, int upper, int transpose, int unitriangular) {
  SkTensor *at = NULL;
  int rc = transpose ? sk_transpose_int(&at, A, -2, -1) : 0;
  if (!rc) rc = sk_linalg_solve_triangular(solution, transpose ? at : A, self, transpose ? !upper : upper, 1, unitriangular);
  if (!rc && (rc = sk_clone(cloned_coefficient, A, 0))) drop(solution, NULL, NULL);
  drop(&at, NULL, NULL);
  return rc;
}
/* }==== */

/* {==== tensorinv, tensorsolve ==== */
static int prod_of(const int64_t *s, int n, int64_t *out, const char *fn) {
  int64_t p = 1;
  for (int i = 0; i < n; i++)
    if (sk_mul_overflow(p, s[i], &p)) return sk_error("%s: shape product overflows", fn);
  *out = p;
  return 0;
}

/* self reshaped to (Π sizes[:ind]) x (Π sizes[ind:]), inverted, reshaped to sizes[ind:] + sizes[:ind]. */
int sk_math_linalg_tensorinv(SkTensor **result, const SkTensor *self, int64_t ind) {
  const char *fn = "linalg.tensorinv";
  if (ind <= 0) return sk_error("%s: Expected a strictly positive integer for 'ind', but got %lld", fn, (long long)ind);
  if (ind > self->ndim) return sk_error("%s: 'ind' is %lld, larger than the tensor's %d dims", fn, (long long)ind, self->ndim);
  int64_t p1 = 0, p2 = 0;
  if (prod_of(self->sizes, (int)ind, &p1, fn) || prod_of(self->sizes + ind, self->ndim - (int)ind, &p2, fn)) return -1;
  if (p1 != p2)
    return sk_error("%s: Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but "
                    "got %lld != %lld", fn, (long long)p2, (long long)p1);
  int64_t shape2[2] = {p1, p2}, out[SK_MAX_DIMS];
  int k = 0;
  for (int d = (int)ind; d < self->ndim; d++) out[k++] = self->sizes[d];
  for (int d = 0; d < (int)ind; d++) out[k++] = self->sizes[d];
  SkTensor *m = NULL, *inv = NULL;
  int rc = sk_reshape(&m, self, (SkIntList){shape2, 2});
  if (!rc) rc = sk_linalg_inv(&inv, m);
  if (!rc) rc = sk_reshape(result, inv, (SkIntList){out, k});
  drop(&m, &inv, NULL);
  return rc;
}

/* Solves tensordot(self, x, other.ndim) = other: x has shape self.shape[other.ndim:]; dims
** first moves those dims of self to the end. */
int sk_math_linalg_tensorsolve(SkTensor **result, const SkTensor *self, const SkTensor *other, SkIntList dims) {
  const char *fn = "linalg.tensorsolve";
  SkTensor *a = NULL, *m = NULL, *b = NULL, *x = NULL;
  int rc = 0;
  if (dims.data && dims.n > 0) {
    int64_t perm[SK_MAX_DIMS], used[SK_MAX_DIMS] = {0};
    int k = 0;
    if (dims.n > self->ndim) return sk_error("%s: argument 'dims' has %d dims, self only %d", fn, dims.n, self->ndim);
    for (int i = 0; i < dims.n; i++) {
      int64_t d;
      if (sk_wrap_dim(dims.data[i], self->ndim, "dims", &d)) return -1;
      if (used[d]) return sk_error("%s: argument 'dims' repeats dim %lld", fn, (long long)d);
      used[d] = 1;
    }
    for (int d = 0; d < self->ndim; d++)
      if (!used[d]) perm[k++] = d;
    for (int i = 0; i < dims.n; i++) {
      int64_t d;
      sk_wrap_dim(dims.data[i], self->ndim, "dims", &d);
      perm[k++] = d;
    }
    rc = sk_permute(&a, self, (SkIntList){perm, k});
  } else {
    a = sk_tensor_retain((SkTensor *)self);
  }
  int nb = other->ndim, nx = a ? a->ndim - nb : 0;
  if (!rc && nx < 0) rc = sk_error("%s: self has fewer dims (%d) than other (%d)", fn, a->ndim, nb);
  /* PyTorch's rule: the leading dims of self (as many as other has) and its trailing ones hold
  ** as many elements each, and other as many as the leading ones. */
  int64_t pb = 1, px = 1, pl = 1;
  if (!rc) rc = prod_of(other->sizes, nb, &pb, fn) || prod_of(a->sizes + nb, nx, &px, fn) || prod_of(a->sizes, nb, &pl, fn) ? -1 : 0;
  if (!rc && px != pl)
    rc = sk_error("%s: Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                  "prod(self.shape[:other.ndim]), but got %lld != %lld", fn, (long long)px, (long long)pl);
  if (!rc && pb != pl)
    rc = sk_error("%s: other has %lld elements, self's leading dims %lld", fn, (long long)pb, (long long)pl);
  int64_t s2[2] = {pb, px}, s1[1] = {pb};
  if (!rc) rc = sk_reshape(&m, a, (SkIntList){s2, 2});
  if (!rc) rc = sk_reshape(&b, other, (SkIntList){s1, 1});
  if (!rc) rc = sk_linalg_solve(&x, m, b, 1);
  if (!rc) rc = sk_reshape(result, x, (SkIntList){a->sizes + nb, nx});
  drop(&a, &m, &b);
  drop(&x, NULL, NULL);
  return rc;
}
/* }==== */
