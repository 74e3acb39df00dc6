/*
** sk_meta_linalg.c — meta functions of the matrix products and of sk.linalg
** Products (mm, bmm, addmm, mv, dot, addmv, baddbmm): all operands share one
** dtype (integers allowed); the result has that dtype and shape [n, p] (bmm:
** [b, n, p]). addmm's self broadcasts to [n, p]. sk.linalg: see its section.
*/
#include "sk_kernels.h"
#include "sk_error.h"
#include "sk_linalg.h"

#include <string.h>

static int check_ndim(const SkTensor *t, const char *name, int nd) {
  if (t->ndim != nd) return sk_error("argument '%s' must be a %d-D tensor, got %d-D", name, nd, t->ndim);
  return 0;
}

static int check_dtype(const SkTensor *a, const SkTensor *b, const char *an, const char *bn) {
  if (a->dtype != b->dtype)
    return sk_error("expected %s and %s to have the same dtype, but got: %s != %s", an, bn,
                    sk_dtype_name(a->dtype), sk_dtype_name(b->dtype));
  return 0;
}

/* Checks a [.., n, k] x [.., k, p] product; names as in the schema. */
static int check_product(const SkTensor *a, const SkTensor *b, const char *an, const char *bn, int nd) {
  if (check_ndim(a, an, nd) || check_ndim(b, bn, nd) || check_dtype(a, b, an, bn)) return -1;
  if (nd == 3 && a->sizes[0] != b->sizes[0])
    return sk_error("argument '%s' and '%s' must have the same batch size, got %lld and %lld", an, bn,
                    (long long)a->sizes[0], (long long)b->sizes[0]);
  if (a->sizes[nd - 1] != b->sizes[nd - 2]) {
    if (nd == 2)
      return sk_error("argument '%s' and '%s' shapes cannot be multiplied (%lldx%lld and %lldx%lld)", an, bn,
                      (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0], (long long)b->sizes[1]);
    return sk_error("argument '%s' and '%s' shapes cannot be multiplied (%lldx%lldx%lld and %lldx%lldx%lld)", an, bn,
                    (long long)a->sizes[0], (long long)a->sizes[1], (long long)a->sizes[2],
                    (long long)b->sizes[0], (long long)b->sizes[1], (long long)b->sizes[2]);
  }
  return 0;
}

int sk_meta_mm(SkMeta *m, const SkTensor *self, const SkTensor *mat2) {
  if (check_product(self, mat2, "self", "mat2", 2)) return -1;
  int64_t sizes[2] = {self->sizes[0], mat2->sizes[1]};
  return sk_meta_set_output(m, 0, 2, sizes, NULL, self->dtype);
}

int sk_meta_bmm(SkMeta *m, const SkTensor *self, const SkTensor *mat2) {
  if (check_product(self, mat2, "self", "mat2", 3)) return -1;
  int64_t sizes[3] = {self->sizes[0], self->sizes[1], mat2->sizes[2]};
  return sk_meta_set_output(m, 0, 3, sizes, NULL, self->dtype);
}

int sk_meta_addmm(SkMeta *m, const SkTensor *self, const SkTensor *mat1, const SkTensor *mat2, SkScalar beta,
                  SkScalar alpha) {
  (void)beta;
  (void)alpha;
  if (check_product(mat1, mat2, "mat1", "mat2", 2) || check_dtype(self, mat2, "self", "mat2")) return -1;
  int64_t sizes[2] = {mat1->sizes[0], mat2->sizes[1]};
  int ok = self->ndim <= 2;
  for (int d = 0; d < self->ndim && ok; d++) {
    int64_t s = self->sizes[d], target = sizes[2 - self->ndim + d];
    ok = s == target || s == 1;
  }
  if (!ok) {
    char a[128], b[128];
    return sk_error("argument 'self' (shape %s) is not broadcastable to shape %s",
                    sk_shape_str(self->ndim, self->sizes, a, sizeof a), sk_shape_str(2, sizes, b, sizeof b));
  }
  return sk_meta_set_output(m, 0, 2, sizes, NULL, self->dtype);
}

/* {==== mv, dot, addmv, baddbmm ====
** Same rules: one dtype for all operands. addmv's self broadcasts to [n]
** (PyTorch: 0-dim, [1] or [n]), baddbmm's to [b, n, p]. */
/* self (at most nd dims) broadcasts to sizes[nd]. */
static int check_self_broadcasts(const SkTensor *self, int nd, const int64_t *sizes) {
  int ok = self->ndim <= nd;
  for (int d = 0; d < self->ndim && ok; d++) {
    int64_t s = self->sizes[d], target = sizes[nd - self->ndim + d];
    ok = s == target || s == 1;
  }
  if (ok) return 0;
  char a[128], b[128];
  return sk_error("argument 'self' (shape %s) is not broadcastable to shape %s",
                  sk_shape_str(self->ndim, self->sizes, a, sizeof a), sk_shape_str(nd, sizes, b, sizeof b));
}

/* [n, k] @ [k]; names as in the schema. */
static int check_matvec(const SkTensor *mat, const SkTensor *vec, const char *mn, const char *vn) {
  if (check_ndim(mat, mn, 2) || check_ndim(vec, vn, 1) || check_dtype(mat, vec, mn, vn)) return -1;
  if (mat->sizes[1] != vec->sizes[0])
    return sk_error("size mismatch, got %s (%lldx%lld), %s (%lld)", mn, (long long)mat->sizes[0],
                    (long long)mat->sizes[1], vn, (long long)vec->sizes[0]);
  return 0;
}

int sk_meta_mv(SkMeta *m, const SkTensor *self, const SkTensor *vec) {
  if (check_matvec(self, vec, "self", "vec")) return -1;
  return sk_meta_set_output(m, 0, 1, self->sizes, NULL, self->dtype);
}

int sk_meta_addmv(SkMeta *m, const SkTensor *self, const SkTensor *mat, const SkTensor *vec, SkScalar beta,
                  SkScalar alpha) {
  (void)beta;
  (void)alpha;
  if (check_matvec(mat, vec, "mat", "vec") || check_dtype(self, mat, "self", "mat") ||
      check_self_broadcasts(self, 1, mat->sizes))
    return -1;
  return sk_meta_set_output(m, 0, 1, mat->sizes, NULL, mat->dtype);
}

/* PyTorch's dot_check, with its messages. */
int sk_meta_dot(SkMeta *m, const SkTensor *self, const SkTensor *tensor) {
  if (self->ndim != 1 || tensor->ndim != 1)
    return sk_error("1D tensors expected, but got %dD and %dD tensors", self->ndim, tensor->ndim);
  if (self->dtype != tensor->dtype)
    return sk_error("dot : expected both vectors to have same dtype, but found %s and %s", sk_dtype_torch_name(self->dtype),
                    sk_dtype_torch_name(tensor->dtype));
  if (self->numel != tensor->numel)
    return sk_error("inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                    "elements, but got %lld and %lld elements respectively", (long long)self->numel,
                    (long long)tensor->numel, (long long)self->numel, (long long)tensor->numel);
  static const int64_t no_sizes[1] = {0};
  return sk_meta_set_output(m, 0, 0, no_sizes, NULL, self->dtype);
}

int sk_meta_baddbmm(SkMeta *m, const SkTensor *self, const SkTensor *batch1, const SkTensor *batch2, SkScalar beta,
                    SkScalar alpha) {
  (void)beta;
  (void)alpha;
  if (check_ndim(batch1, "batch1", 3) || check_ndim(batch2, "batch2", 3) ||
      check_dtype(batch1, batch2, "batch1", "batch2") || check_dtype(self, batch1, "self", "batch1") ||
      check_product(batch1, batch2, "batch1", "batch2", 3))
    return -1;
  int64_t sizes[3] = {batch1->sizes[0], batch1->sizes[1], batch2->sizes[2]};
  if (check_self_broadcasts(self, 3, sizes)) return -1;
  return sk_meta_set_output(m, 0, 3, sizes, NULL, self->dtype);
}
/* }==== */

/* {==== sk.linalg: LAPACK-backed ops ====
** PyTorch's checks and texts (checkIsMatrix, squareCheckInputs, checkFloatingOrComplex,
** linearSolveCheckInputs), each prefixed with the op's Python name. Matrices are the last two
** dims; the leading ones are a batch, broadcast between two operands. info and pivots are
** int32 (LAPACK's integers), as in PyTorch. */
static int lin_matrix(const SkTensor *A, const char *fn, const char *arg) {
  if (A->ndim < 2) return sk_error("%s: The input tensor %s must have at least 2 dimensions.", fn, arg);
  return 0;
}

static int lin_square(const SkTensor *A, const char *fn, const char *arg) {
  if (lin_matrix(A, fn, arg)) return -1;
  int64_t r = A->sizes[A->ndim - 2], c = A->sizes[A->ndim - 1];
  if (r != c)
    return sk_error("%s: %s must be batches of square matrices, but they are %lld by %lld matrices", fn, arg,
                    (long long)r, (long long)c);
  return 0;
}

static int lin_float(const SkTensor *A, const char *fn) {
  if (A->dtype == SK_DTYPE_FLOAT32 || A->dtype == SK_DTYPE_FLOAT64) return 0;
  if (sk_dtype_is_floating(A->dtype))
    return sk_error("%s: Low precision dtypes not supported. Got %s", fn, sk_dtype_torch_name(A->dtype));
  return sk_error("%s: Expected a floating point or complex tensor as input. Got %s", fn,
                  sk_dtype_torch_name(A->dtype));
}

static int lin_same_dtype(const SkTensor *A, const SkTensor *B, const char *fn, const char *an, const char *bn) {
  if (A->dtype == B->dtype) return 0;
  return sk_error("%s: Expected %s and %s to have the same dtype, but found %s of type %s and %s of type %s instead.", fn,
                  an, bn, an, sk_dtype_torch_name(A->dtype), bn, sk_dtype_torch_name(B->dtype));
}

/* The batch of A (its dims but the last `inner`) broadcast with B's (dims but B's last
** `binner`), into out[*nd]; PyTorch's broadcasting message. */
static int lin_batch(const SkTensor *A, int inner, const SkTensor *B, int binner, int64_t *out, int *nd) {
  int na = A->ndim - inner, nb = B ? B->ndim - binner : 0, n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t a = ia >= 0 ? A->sizes[ia] : 1, b = ib >= 0 ? B->sizes[ib] : 1;
    if (a != b && a != 1 && b != 1)
      return sk_error("The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                      (long long)a, (long long)b, i);
    out[i] = a == 1 ? b : a;
  }
  *nd = n;
  return 0;
}

/* The batch of A with extra trailing sizes appended: sizes of a per-matrix result. */
static int lin_set(SkMeta *m, int i, const int64_t *batch, int nb, int extra, int64_t e0, int64_t e1, SkDType dt) {
  int64_t sizes[SK_MAX_DIMS];
  memcpy(sizes, batch, (size_t)nb * sizeof *batch);
  if (extra > 0) sizes[nb] = e0;
  if (extra > 1) sizes[nb + 1] = e1;
  return sk_meta_set_output(m, i, nb + extra, sizes, NULL, dt);
}

/* A square float matrix batch: its batch sizes in batch[], the order in *n. */
static int lin_square_float(const SkTensor *A, const char *fn, const char *arg, int64_t *n) {
  if (lin_square(A, fn, arg) || lin_float(A, fn)) return -1;
  *n = A->sizes[A->ndim - 1];
  return 0;
}

int sk_meta_kernel__linalg_check_errors(const SkTensor *info, const char *api_name, int is_matrix) {
  (void)api_name, (void)is_matrix;
  if (info->dtype != SK_DTYPE_INT32)
    return sk_error("_linalg_check_errors: info must be an int32 tensor, got %s", sk_dtype_name(info->dtype));
  return 0;
}

int sk_meta_linalg_lu_factor_ex(SkMeta *m, const SkTensor *A, int pivot, int check_errors) {
  (void)pivot, (void)check_errors;
  const char *fn = "linalg.lu_factor_ex";
  if (lin_matrix(A, fn, "A") || lin_float(A, fn)) return -1;
  int nb = A->ndim - 2;
  int64_t r = A->sizes[nb], c = A->sizes[nb + 1];
  if (sk_meta_set_output(m, 0, A->ndim, A->sizes, NULL, A->dtype)) return -1;
  if (lin_set(m, 1, A->sizes, nb, 1, r < c ? r : c, 0, SK_DTYPE_INT32)) return -1;
  return lin_set(m, 2, A->sizes, nb, 0, 0, 0, SK_DTYPE_INT32);
}

int sk_meta_linalg_lu(SkMeta *m, const SkTensor *A, int pivot) {
  (void)pivot;
  const char *fn = "linalg.lu";
  if (lin_matrix(A, fn, "A") || lin_float(A, fn)) return -1;
  int nb = A->ndim - 2;
  int64_t r = A->sizes[nb], c = A->sizes[nb + 1], k = r < c ? r : c;
  if (lin_set(m, 0, A->sizes, nb, 2, r, r, A->dtype)) return -1;
  if (lin_set(m, 1, A->sizes, nb, 2, r, k, A->dtype)) return -1;
  return lin_set(m, 2, A->sizes, nb, 2, k, c, A->dtype);
}

/* The solves' rule for B against the n x n A: AX = B (left) or XA = B. */
static int lin_solve_shapes(const SkTensor *A, const SkTensor *B, int left, int vector, const char *fn) {
  int64_t n = A->sizes[A->ndim - 1];
  int64_t br = vector ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2], bc = vector ? 1 : B->sizes[B->ndim - 1];
  if ((left ? br : bc) != n)
    return sk_error("%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)", fn,
                    left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)br, (long long)bc);
  return 0;
}

int sk_meta_linalg_lu_solve(SkMeta *m, const SkTensor *LU, const SkTensor *pivots, const SkTensor *B, int left,
                            int adjoint) {
  (void)adjoint;
  const char *fn = "linalg.lu_solve";
  int64_t n;
  if (lin_square_float(LU, fn, "LU", &n) || lin_matrix(B, fn, "B") || lin_same_dtype(LU, B, fn, "LU", "B")) return -1;
  if (pivots->dtype != SK_DTYPE_INT32)
    return sk_error("%s: pivots should be a Tensor of scalar type Int", fn);
  if (pivots->ndim != LU->ndim - 1 || pivots->sizes[pivots->ndim - 1] != n)
    return sk_error("%s: Number of pivots per batch should be same as the dimension of the matrix", fn);
  for (int d = 0; d < LU->ndim - 2; d++)
    if (pivots->sizes[d] != LU->sizes[d])
      return sk_error("%s: Expected LU and pivots to have the same batch dimensions", fn);
  if (lin_solve_shapes(LU, B, left, 0, fn)) return -1;
  int64_t batch[SK_MAX_DIMS];
  int nb;
  if (lin_batch(LU, 2, B, 2, batch, &nb)) return -1;
  return lin_set(m, 0, batch, nb, 2, B->sizes[B->ndim - 2], B->sizes[B->ndim - 1], B->dtype);
}

int sk_meta_linalg_inv_ex_inverse(SkMeta *m, const SkTensor *A, int check_errors) {
  (void)check_errors;
  int64_t n;
  if (lin_square_float(A, "linalg.inv", "A", &n)) return -1;
  if (sk_meta_set_output(m, 0, A->ndim, A->sizes, NULL, A->dtype)) return -1;
  return lin_set(m, 1, A->sizes, A->ndim - 2, 0, 0, 0, SK_DTYPE_INT32);
}

int sk_meta_linalg_cholesky_ex_L(SkMeta *m, const SkTensor *self, int upper, int check_errors) {
  (void)upper, (void)check_errors;
  int64_t n;
  if (lin_square_float(self, "linalg.cholesky", "A", &n)) return -1;
  if (sk_meta_set_output(m, 0, self->ndim, self->sizes, NULL, self->dtype)) return -1;
  return lin_set(m, 1, self->sizes, self->ndim - 2, 0, 0, 0, SK_DTYPE_INT32);
}

int sk_linalg_solve_is_vector(const SkTensor *A, int b_ndim, const int64_t *b_sizes) {
  if (b_ndim == 1) return 1;
  if (b_ndim != A->ndim - 1) return 0;
  for (int d = 0; d < b_ndim; d++)
    if (b_sizes[d] != A->sizes[d]) return 0;
  return 1;
}

int sk_meta_linalg_solve_ex(SkMeta *m, const SkTensor *A, const SkTensor *B, int left, int check_errors) {
  (void)check_errors;
  const char *fn = "linalg.solve";
  int64_t n;
  if (lin_square_float(A, fn, "A", &n) || lin_same_dtype(A, B, fn, "A", "B")) return -1;
  if (B->ndim < 1) return sk_error("%s: The input tensor B must have at least 1 dimensions.", fn);
  int vector = sk_linalg_solve_is_vector(A, B->ndim, B->sizes);
  if (vector && !left)
    return sk_error("%s: Vector broadcasting of the left hand side is not supported for left=False. In this case "
                    "linalg.solve is equivalent to B / A.squeeze(-1)", fn);
  if (lin_solve_shapes(A, B, left, vector, fn)) return -1;
  int64_t batch[SK_MAX_DIMS];
  int nb;
  if (lin_batch(A, 2, B, vector ? 1 : 2, batch, &nb)) return -1;
  if (vector ? lin_set(m, 0, batch, nb, 1, n, 0, A->dtype)
             : lin_set(m, 0, batch, nb, 2, B->sizes[B->ndim - 2], B->sizes[B->ndim - 1], A->dtype))
    return -1;
  return lin_set(m, 1, batch, nb, 0, 0, 0, SK_DTYPE_INT32);
}

int sk_meta_linalg_solve_triangular(SkMeta *m, const SkTensor *self, const SkTensor *B, int upper, int left,
                                    int unitriangular) {
  (void)upper, (void)unitriangular;
  const char *fn = "linalg.solve_triangular";
  int64_t n;
  if (lin_square_float(self, fn, "A", &n) || lin_matrix(B, fn, "B") || lin_same_dtype(self, B, fn, "A", "B"))
    return -1;
  if (lin_solve_shapes(self, B, left, 0, fn)) return -1;
  int64_t batch[SK_MAX_DIMS];
  int nb;
  if (lin_batch(self, 2, B, 2, batch, &nb)) return -1;
  return lin_set(m, 0, batch, nb, 2, B->sizes[B->ndim - 2], B->sizes[B->ndim - 1], B->dtype);
}

int sk_meta_linalg_det(SkMeta *m, const SkTensor *A) {
  int64_t n;
  if (lin_square_float(A, "linalg.det", "A", &n)) return -1;
  return lin_set(m, 0, A->sizes, A->ndim - 2, 0, 0, 0, A->dtype);
}

int sk_meta_linalg_slogdet(SkMeta *m, const SkTensor *A) {
  int64_t n;
  if (lin_square_float(A, "linalg.slogdet", "A", &n)) return -1;
  if (lin_set(m, 0, A->sizes, A->ndim - 2, 0, 0, 0, A->dtype)) return -1;
  return lin_set(m, 1, A->sizes, A->ndim - 2, 0, 0, 0, A->dtype);
}
/* }==== */

/* {==== sk.linalg: decompositions (QR, SVD, symmetric and general eigenproblems) ==== */
int sk_meta_linalg_qr(SkMeta *m, const SkTensor *A, const char *mode) {
  const char *fn = "linalg.qr";
  int complete = 0, r_only = 0;
  if (!mode || strcmp(mode, "reduced") == 0) {
  } else if (strcmp(mode, "complete") == 0) complete = 1;
  else if (strcmp(mode, "r") == 0) r_only = 1;
  else
    return sk_error("qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', or 'complete'", mode);
  if (lin_matrix(A, fn, "A") || lin_float(A, fn)) return -1;
  int nb = A->ndim - 2;
  int64_t r = A->sizes[nb], c = A->sizes[nb + 1], k = r < c ? r : c;
  static const int64_t zero[1] = {0};
  if (r_only ? sk_meta_set_output(m, 0, 1, zero, NULL, A->dtype) : lin_set(m, 0, A->sizes, nb, 2, r, complete ? r : k, A->dtype))
    return -1;
  return lin_set(m, 1, A->sizes, nb, 2, complete ? r : k, c, A->dtype);
}

int sk_meta__linalg_svd_U(SkMeta *m, const SkTensor *A, int full_matrices, int compute_uv, const char *driver) {
  const char *fn = "linalg.svd";
  if (driver)
    return sk_error("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  if (lin_matrix(A, fn, "A") || lin_float(A, fn)) return -1;
  int nb = A->ndim - 2;
  int64_t r = A->sizes[nb], c = A->sizes[nb + 1], k = r < c ? r : c;
  static const int64_t zero[1] = {0};
  if (compute_uv ? lin_set(m, 0, A->sizes, nb, 2, r, full_matrices ? r : k, A->dtype)
                 : sk_meta_set_output(m, 0, 1, zero, NULL, A->dtype))
    return -1;
  if (lin_set(m, 1, A->sizes, nb, 1, k, 0, A->dtype)) return -1;
  return compute_uv ? lin_set(m, 2, A->sizes, nb, 2, full_matrices ? c : k, c, A->dtype)
                    : sk_meta_set_output(m, 2, 1, zero, NULL, A->dtype);
}

int sk_meta__linalg_eigh_eigenvalues(SkMeta *m, const SkTensor *A, const char *UPLO, int compute_v) {
  int64_t n;
  if (!UPLO || !((UPLO[0] == 'L' || UPLO[0] == 'U' || UPLO[0] == 'l' || UPLO[0] == 'u') && UPLO[1] == 0))
    return sk_error("Expected UPLO argument to be 'L' or 'U', but got %s", UPLO ? UPLO : "None");
  if (lin_square_float(A, "linalg.eigh", "A", &n)) return -1;
  static const int64_t zero[1] = {0};
  if (lin_set(m, 0, A->sizes, A->ndim - 2, 1, n, 0, A->dtype)) return -1;
  return compute_v ? sk_meta_set_output(m, 1, A->ndim, A->sizes, NULL, A->dtype)
                   : sk_meta_set_output(m, 1, 1, zero, NULL, A->dtype);
}

int sk_meta_linalg_eig(SkMeta *m, const SkTensor *self) {
  int64_t n;
  if (lin_square_float(self, "linalg.eig", "A", &n)) return -1;
  if (lin_set(m, 0, self->sizes, self->ndim - 2, 1, n, 0, self->dtype)) return -1;
  return sk_meta_set_output(m, 1, self->ndim, self->sizes, NULL, self->dtype);
}

int sk_meta_linalg_eigvals(SkMeta *m, const SkTensor *self) {
  int64_t n;
  if (lin_square_float(self, "linalg.eigvals", "A", &n)) return -1;
  return lin_set(m, 0, self->sizes, self->ndim - 2, 1, n, 0, self->dtype);
}
/* }==== */

/* {==== sk.linalg: least squares, Householder product, matrix exponential ==== */
/* lstsq's drivers, PyTorch's names; the CPU default is gelsy. */
enum { SK_LSTSQ_GELSY, SK_LSTSQ_GELS, SK_LSTSQ_GELSD, SK_LSTSQ_GELSS };
static int lstsq_driver(const char *driver) {
  static const char *const names[] = {"gelsy", "gels", "gelsd", "gelss"};
  if (!driver) return SK_LSTSQ_GELSY;
  for (int i = 0; i < 4; i++)
    if (strcmp(driver, names[i]) == 0) return i;
  return sk_error("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
}

/* PyTorch 1.13's linalg_lstsq checks and result shapes. b is a vector (of the batch) when it
** has one dim less than self: then it must be self's shape without the last dim (1-D b with a
** 2-D self). The batch is self's broadcast with b's. residuals (batch + [nrhs]) exist when
** m > n and the driver is not gelsy; gelsd and gelss have them only when every matrix has
** full rank, which the CPU kernel finds out (Meta assumes it). rank (int64, per matrix) is
** empty for gels, singular_values (batch + [min(m, n)]) for gels and gelsy. */
int sk_meta_kernel_linalg_lstsq(SkTensor **solution, SkTensor **residuals, SkTensor **rank, SkTensor **singular_values,
                                const SkTensor *self, const SkTensor *b, SkOptDouble rcond, const char *driver) {
  (void)rcond;
  const char *fn = "torch.linalg.lstsq";
  if (self->ndim < 2) return sk_error("%s: input must have at least 2 dimensions.", fn);
  if (b->ndim < 1) return sk_error("%s: other must have at least 1 dimension.", fn);
  if (self->dtype != b->dtype)
    return sk_error("%s: Expected input and other to have the same dtype, but got input's dtype %s and other's dtype %s",
                    fn, sk_dtype_torch_name(self->dtype), sk_dtype_torch_name(b->dtype));
  int diff = self->ndim - b->ndim;
  if (diff < 0 || diff > 1)
    return sk_error("%s: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1", fn);
  int64_t m = self->sizes[self->ndim - 2], n = self->sizes[self->ndim - 1];
  int vector = diff == 1;
  if (vector ? b->sizes[b->ndim - 1] != m : b->sizes[b->ndim - 2] != m)
    return sk_error("%s: input.size(-2) should match other.size(%d)", fn, vector ? -1 : -2);
  if (vector)
    for (int d = 0; d < b->ndim - 1; d++)
      if (b->sizes[d] != self->sizes[d]) {
        char a1[128], a2[128];
        return sk_error("%s: a vector other (one dim less than input) must have input's batch dimensions %s, but got %s",
                        fn, sk_shape_str(self->ndim - 2, self->sizes, a1, sizeof a1),
                        sk_shape_str(b->ndim - 1, b->sizes, a2, sizeof a2));
      }
  int drv = lstsq_driver(driver);
  if (drv < 0) return -1;
  if (self->dtype != SK_DTYPE_FLOAT32 && self->dtype != SK_DTYPE_FLOAT64)
    return sk_error("%s: This function doesn't handle types other than float and double", fn);
  int64_t batch[SK_MAX_DIMS], sizes[SK_MAX_DIMS];
  int nb;
  if (lin_batch(self, 2, b, vector ? 1 : 2, batch, &nb)) return -1;
  int64_t nrhs = vector ? 1 : b->sizes[b->ndim - 1], k = m < n ? m : n, zero = 0;
  memcpy(sizes, batch, (size_t)nb * sizeof *batch);
  SkTensor *r[4];
  sizes[nb] = n, sizes[nb + 1] = nrhs;
  r[0] = sk_tensor_empty(nb + (vector ? 1 : 2), sizes, self->dtype, SK_META);
  sizes[nb] = nrhs;
  r[1] = m > n && drv != SK_LSTSQ_GELSY ? sk_tensor_empty(nb + 1, sizes, self->dtype, SK_META)
                                        : sk_tensor_empty(1, &zero, self->dtype, SK_META);
  r[2] = drv != SK_LSTSQ_GELS ? sk_tensor_empty(nb, sizes, SK_DTYPE_INT64, SK_META)
                              : sk_tensor_empty(1, &zero, SK_DTYPE_INT64, SK_META);
  sizes[nb] = k;
  r[3] = drv >= SK_LSTSQ_GELSD ? sk_tensor_empty(nb + 1, sizes, self->dtype, SK_META)
                               : sk_tensor_empty(1, &zero, self->dtype, SK_META);
  if (!r[0] || !r[1] || !r[2] || !r[3]) {
    for (int i = 0; i < 4; i++) sk_tensor_release(r[i]);
    return -1;
  }
  *solution = r[0], *residuals = r[1], *rank = r[2], *singular_values = r[3];
  return 0;
}

/* PyTorch's householder_product checks: input m x n with m >= n >= k, tau [batch.., k]. */
int sk_meta_linalg_householder_product(SkMeta *m, const SkTensor *input, const SkTensor *tau) {
  const char *fn = "torch.linalg.householder_product";
  if (input->ndim < 2) return sk_error("%s: input must have at least 2 dimensions.", fn);
  if (tau->ndim < 1) return sk_error("Dimension specified as -1 but tensor has no dimensions");
  int64_t r = input->sizes[input->ndim - 2], c = input->sizes[input->ndim - 1];
  if (r < c) return sk_error("%s: input.shape[-2] must be greater than or equal to input.shape[-1]", fn);
  if (c < tau->sizes[tau->ndim - 1])
    return sk_error("%s: input.shape[-1] must be greater than or equal to tau.shape[-1]", fn);
  if (input->ndim - tau->ndim != 1)
    return sk_error("%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d and input.ndim "
                    "is equal to %d", fn, tau->ndim, input->ndim);
  for (int d = 0; d < input->ndim - 2; d++)
    if (tau->sizes[d] != input->sizes[d]) {
      char a[128];
      return sk_error("%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but got %s", fn,
                      sk_shape_str(tau->ndim - 1, tau->sizes, a, sizeof a));
    }
  if (tau->dtype != input->dtype)
    return sk_error("%s: tau dtype %s does not match input dtype %s", fn, sk_dtype_torch_name(tau->dtype),
                    sk_dtype_torch_name(input->dtype));
  if (input->dtype != SK_DTYPE_FLOAT32 && input->dtype != SK_DTYPE_FLOAT64)
    return sk_error("\"orgqr_cpu\" not implemented for '%s'", sk_dtype_torch_name(input->dtype));
  return sk_meta_set_output(m, 0, input->ndim, input->sizes, NULL, input->dtype);
}

int sk_meta_kernel_linalg_matrix_exp(SkTensor **result, const SkTensor *self) {
  if (lin_square(self, "linalg.matrix_exp", "A") || lin_float(self, "matrix_exp")) return -1;
  return (*result = sk_tensor_empty(self->ndim, self->sizes, self->dtype, SK_META)) ? 0 : -1;
}
/* }==== */
