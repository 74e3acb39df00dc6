/*
** sk_meta_linalg.c — meta functions of mm, bmm, addmm, mv, dot, addmv and baddbmm
** All operands share one dtype (integers allowed); the result has that dtype
** and shape [n, p] (bmm: [b, n, p]). addmm's self broadcasts to [n, p].
*/
#include "sk_kernels.h"
#include "sk_error.h"

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
