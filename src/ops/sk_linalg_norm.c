/*
** sk_linalg_norm.c — linalg.matrix_norm, linalg.norm and linalg.cond (Math, every backend)
** matrix_norm: 'fro' is the vector 2-norm over the two dims; ±1 and ±inf the max/min of the
** absolute column and row sums; ±2 and 'nuc' come from the singular values (the two dims moved
** last). norm picks the vector or the matrix norm as PyTorch does; cond is σ_max/σ_min for
** p = None or ±2, else ‖A‖·‖A⁻¹‖ (inf where A is singular).
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void drop3(SkTensor *a, SkTensor *b, SkTensor *c) {
  sk_tensor_release(a);
  sk_tensor_release(b);
  sk_tensor_release(c);
}

static double scalar_value(SkScalar s) { return s.kind == SK_SCALAR_FLOAT ? s.v.f : (double)s.v.i; }

/* The checks every matrix norm shares; the two dims wrapped into d[0], d[1]; x is self in dtype. */
static int matrix_setup(const SkTensor *self, SkIntList dim, int dtype, const char *fn, int64_t d[2], SkTensor **x) {
  if (self->ndim < 2) return sk_error("%s: The input tensor A must have at least 2 dimensions.", fn);
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("%s: Expected a floating point or complex tensor as input. Got %s", fn, sk_dtype_torch_name(self->dtype));
  if (dim.n != 2) return sk_error("%s: dim must be a 2-tuple. Got %d dims", fn, dim.n);
  if (sk_wrap_dim(dim.data[0], self->ndim, "dim", &d[0]) || sk_wrap_dim(dim.data[1], self->ndim, "dim", &d[1])) return -1;
  if (d[0] == d[1]) return sk_error("%s: dims must be different. Got (%lld, %lld)", fn, (long long)d[0], (long long)d[1]);
  if (dtype >= 0 && dtype != (int)self->dtype) return sk_to_dtype(x, self, (SkDType)dtype, 0, 0, 0);
  *x = sk_tensor_retain((SkTensor *)self);
  return 0;
}

/* The singular values of x over dims d (moved last): [..batch, k]. */
static int svals(SkTensor **s, const SkTensor *x, const int64_t d[2]) {
  int64_t perm[SK_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < x->ndim; i++)
    if (i != d[0] && i != d[1]) perm[k++] = i;
  perm[k++] = d[0];
  perm[k++] = d[1];
  SkTensor *p = NULL;
  int rc = sk_permute(&p, x, (SkIntList){perm, k});
  if (!rc) rc = sk_linalg_svdvals(s, p, NULL);
  sk_tensor_release(p);
  return rc;
}

/* r (the batch shape) with the two dims put back as size 1 when keepdim. */
static int keep_dims(SkTensor **result, SkTensor *r, const int64_t d[2], int keepdim) {
  if (!keepdim) {
    *result = r;
    return 0;
  }
  int64_t lo = d[0] < d[1] ? d[0] : d[1], hi = d[0] < d[1] ? d[1] : d[0];
  SkTensor *a = NULL;
  int rc = sk_unsqueeze(&a, r, lo);
  if (!rc) rc = sk_unsqueeze(result, a, hi);
  drop3(r, a, NULL);
  return rc;
}

int sk_math_linalg_matrix_norm(SkTensor **result, const SkTensor *self, SkScalar ord, SkIntList dim, int keepdim, int dtype) {
  const char *fn = "linalg.matrix_norm";
  double o = scalar_value(ord);
  if (!(o == 1 || o == -1 || o == 2 || o == -2 || isinf(o)))
    return sk_error("%s: Order %g not supported.", fn, o);
  int64_t d[2];
  SkTensor *x = NULL, *s = NULL, *r = NULL;
  if (matrix_setup(self, dim, dtype, fn, d, &x)) return -1;
  int rc = 0;
  if (o == 2 || o == -2) {
    int64_t last = -1;
    rc = svals(&s, x, d);
    if (!rc) rc = o > 0 ? sk_amax(&r, s, (SkIntList){&last, 1}, 0) : sk_amin(&r, s, (SkIntList){&last, 1}, 0);
    if (!rc) rc = keep_dims(result, r, d, keepdim);
    drop3(x, s, NULL);
    return rc;
  }
  /* ±1: column sums (over d0) then the extreme over d1; ±inf: row sums (over d1), extreme over d0 */
  int64_t sum_dim = isinf(o) ? d[1] : d[0], ext_dim = isinf(o) ? d[0] : d[1];
  SkTensor *a = NULL;
  rc = sk_abs(&a, x);
  if (!rc) rc = sk_sum_dim_IntList(&s, a, (SkIntList){&sum_dim, 1}, 1, -1);
  if (!rc) rc = o > 0 ? sk_amax(&r, s, (SkIntList){&ext_dim, 1}, 1) : sk_amin(&r, s, (SkIntList){&ext_dim, 1}, 1);
  drop3(x, a, s);
  if (rc || keepdim) {
    *result = rc ? NULL : r;
    if (rc) sk_tensor_release(r);
    return rc;
  }
  int64_t hi = d[0] > d[1] ? d[0] : d[1], lo = d[0] > d[1] ? d[1] : d[0];
  SkTensor *t = NULL;
  rc = sk_squeeze_dim(&t, r, hi);
  if (!rc) rc = sk_squeeze_dim(result, t, lo);
  drop3(r, t, NULL);
  return rc;
}

int sk_math_linalg_matrix_norm_str_ord(SkTensor **result, const SkTensor *self, const char *ord, SkIntList dim,
                                       int keepdim, int dtype) {
  const char *fn = "linalg.matrix_norm";
  int fro = ord && strcmp(ord, "fro") == 0, nuc = ord && strcmp(ord, "nuc") == 0;
  if (!fro && !nuc) return sk_error("%s: Order %s not supported.", fn, ord ? ord : "None");
  int64_t d[2];
  SkTensor *x = NULL, *s = NULL, *r = NULL;
  if (matrix_setup(self, dim, dtype, fn, d, &x)) return -1;
  int rc;
  if (fro) {
    rc = sk_linalg_vector_norm(result, x, sk_scalar_int(2), (SkIntList){d, 2}, keepdim, -1);
  } else {
    int64_t last = -1;
    rc = svals(&s, x, d);
    if (!rc) rc = sk_sum_dim_IntList(&r, s, (SkIntList){&last, 1}, 0, -1);
    if (!rc) rc = keep_dims(result, r, d, keepdim);
  }
  drop3(x, s, NULL);
  return rc;
}

/* PyTorch's dispatch: a 2-long dim (or a 2-d input with ord and no dim) is a matrix norm. */
int sk_math_linalg_norm(SkTensor **result, const SkTensor *self, SkScalar ord, SkIntList dim, int keepdim, int dtype) {
  int has_ord = ord.kind != SK_SCALAR_NONE;
  if (dim.data) {
    if (dim.n == 2)
      return has_ord ? sk_linalg_matrix_norm(result, self, ord, dim, keepdim, dtype)
                     : sk_linalg_matrix_norm_str_ord(result, self, "fro", dim, keepdim, dtype);
    return sk_linalg_vector_norm(result, self, has_ord ? ord : sk_scalar_int(2), dim, keepdim, dtype);
  }
  if (!has_ord) return sk_linalg_vector_norm(result, self, sk_scalar_int(2), dim, keepdim, dtype);
  if (self->ndim == 1) return sk_linalg_vector_norm(result, self, ord, dim, keepdim, dtype);
  if (self->ndim == 2) {
    int64_t dd[2] = {-2, -1};
    return sk_linalg_matrix_norm(result, self, ord, (SkIntList){dd, 2}, keepdim, dtype);
  }
  return sk_error("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.", self->ndim);
}

int sk_math_linalg_norm_ord_str(SkTensor **result, const SkTensor *self, const char *ord, SkIntList dim, int keepdim,
                                int dtype) {
  int64_t dd[2] = {-2, -1};
  if (!dim.data) {
    if (self->ndim != 2)
      return sk_error("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.", self->ndim);
    dim = (SkIntList){dd, 2};
  }
  return sk_linalg_matrix_norm_str_ord(result, self, ord, dim, keepdim, dtype);
}

/* ‖A‖·‖A⁻¹‖ in the norm `norm_of`; inf where inv_ex reports a singular A. */
static int cond_by_inverse(SkTensor **result, const SkTensor *self, SkScalar p, const char *ps) {
  char fn[48];
  snprintf(fn, sizeof fn, "linalg.cond(ord=%s)", ps);
  if (self->ndim < 2) return sk_error("linalg.cond: The input tensor A must have at least 2 dimensions.");
  if (self->sizes[self->ndim - 1] != self->sizes[self->ndim - 2])
    return sk_error("%s: A must be batches of square matrices, but they are %lld by %lld matrices", fn,
                    (long long)self->sizes[self->ndim - 2], (long long)self->sizes[self->ndim - 1]);
  int64_t dd[2] = {-2, -1};
  SkIntList dims = {dd, 2};
  SkTensor *inv = NULL, *info = NULL, *na = NULL, *ni = NULL, *prod = NULL, *bad = NULL, *inf = NULL;
  int rc = sk_linalg_inv_ex(&inv, &info, self, 0);
  if (!rc) rc = ps[0] == 'f' || ps[0] == 'n' ? sk_linalg_matrix_norm_str_ord(&na, self, ps, dims, 0, -1)
                                             : sk_linalg_matrix_norm(&na, self, p, dims, 0, -1);
  if (!rc) rc = ps[0] == 'f' || ps[0] == 'n' ? sk_linalg_matrix_norm_str_ord(&ni, inv, ps, dims, 0, -1)
                                             : sk_linalg_matrix_norm(&ni, inv, p, dims, 0, -1);
  if (!rc) rc = sk_mul(&prod, na, ni);
  if (!rc) rc = sk_gt_Scalar(&bad, info, sk_scalar_int(0));
  if (!rc) rc = sk_full_like(&inf, prod, sk_scalar_float(INFINITY), -1, 0, prod->device, -1, 0);
  if (!rc) rc = sk_where_self(result, bad, inf, prod);
  drop3(inv, info, na);
  drop3(ni, prod, bad);
  sk_tensor_release(inf);
  return rc;
}

int sk_math_linalg_cond(SkTensor **result, const SkTensor *self, SkScalar p) {
  double o = p.kind == SK_SCALAR_NONE ? 2 : scalar_value(p);
  if (o == 2 || o == -2) {
    if (self->ndim < 2) return sk_error("linalg.cond: The input tensor A must have at least 2 dimensions.");
    SkTensor *s = NULL, *mx = NULL, *mn = NULL;
    int64_t last = -1;
    int rc = sk_linalg_svdvals(&s, self, NULL);
    if (!rc) rc = sk_amax(&mx, s, (SkIntList){&last, 1}, 0);
    if (!rc) rc = sk_amin(&mn, s, (SkIntList){&last, 1}, 0);
    if (!rc) rc = o > 0 ? sk_div(result, mx, mn) : sk_div(result, mn, mx);
    drop3(s, mx, mn);
    return rc;
  }
  if (!(o == 1 || o == -1 || isinf(o))) return sk_error("linalg.cond got an invalid norm type: %g", o);
  char ps[16];
  snprintf(ps, sizeof ps, "%s%s", o < 0 ? "-" : "", isinf(o) ? "inf" : "1");
  return cond_by_inverse(result, self, p, ps);
}

int sk_math_linalg_cond_p_str(SkTensor **result, const SkTensor *self, const char *p) {
  if (!p || (strcmp(p, "fro") != 0 && strcmp(p, "nuc") != 0))
    return sk_error("linalg.cond got an invalid norm type: %s", p ? p : "None");
  return cond_by_inverse(result, self, sk_scalar_int(0), p);
}
