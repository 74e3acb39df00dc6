/*
** sk_meta_reduce.c — meta functions of the reductions and scans
** A reduction keeps the dims not in its mask, and keeps reduced dims as size 1
** with keepdim. dim None or [] reduces every dim. A 0-dim tensor accepts dim
** 0 and -1 and reduces to a 0-dim result. A scan (cumsum, cumprod) keeps the
** shape. The reductions' composite forms are in sk_reduce.c.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

#include <math.h>
#include <string.h>

/* {==== Shared checks ==== */
/* Bit d of *mask set when dim d is reduced; dims None (data NULL) or [] reduce all. */
static int reduce_mask(const SkTensor *self, SkIntList dim, uint32_t *mask) {
  *mask = 0;
  if (!dim.data || dim.n == 0) {
    *mask = self->ndim ? (uint32_t)((1ull << self->ndim) - 1) : 1u;
    return 0;
  }
  for (int i = 0; i < dim.n; i++) {
    int64_t d;
    if (sk_wrap_dim(dim.data[i], self->ndim, "dim", &d)) return -1;
    if (*mask & (1u << d)) return sk_error("dim %lld appears multiple times in the list of dims", (long long)d);
    *mask |= 1u << d;
  }
  return 0;
}

static int one_dim_mask(const SkTensor *self, int64_t dim, uint32_t *mask) {
  SkIntList one = {&dim, 1};
  return reduce_mask(self, one, mask);
}

/* Declares output i with the reduced shape of self. */
static int set_reduced_output(SkMeta *m, int i, const SkTensor *self, uint32_t mask, int keepdim, SkDType dtype) {
  int64_t sizes[SK_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < self->ndim; d++) {
    if (!(mask & (1u << d))) sizes[nd++] = self->sizes[d];
    else if (keepdim) sizes[nd++] = 1;
  }
  return sk_meta_set_output(m, i, nd, sizes, NULL, dtype);
}

/* PyTorch's zero_numel_check_dims: max-like reductions need every reduced dim non-empty. */
static int nonempty_check(const SkTensor *self, uint32_t mask, const char *fn) {
  if (self->numel != 0) return 0;
  for (int d = 0; d < self->ndim; d++)
    if ((mask & (1u << d)) && self->sizes[d] == 0)
      return sk_error("%s: Expected reduction dim %d to have non-zero size.", fn, d);
  return 0;
}

/* The dtype of an out= (or in-place self) the caller gave, else -1. */
static int given_out_dtype(const SkMeta *m) {
  const SkTensor *o = sk_meta_maybe_output(m, 0);
  return m->variant != SK_VARIANT_FUNCTIONAL && o ? (int)o->dtype : -1;
}

/* sum and prod: dtype, else the out's dtype, else int64 for integers and bool, else self's. */
static SkDType sum_like_dtype(const SkMeta *m, const SkTensor *self, int dtype) {
  int out = dtype >= 0 ? dtype : given_out_dtype(m);
  if (out < 0) out = sk_dtype_is_floating(self->dtype) ? (int)self->dtype : SK_DTYPE_INT64;
  return (SkDType)out;
}

static int floating_check(const SkTensor *self, const char *msg) {
  return sk_dtype_is_floating(self->dtype) ? 0 : sk_error("%s", msg);
}
/* }==== */

/* {==== sum, mean, prod ==== */
int sk_meta_sum_IntList(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int dtype,
                        sk_precompute_sum_IntList_out *precompute) {
  uint32_t mask;
  if (reduce_mask(self, dim, &mask)) return -1;
  precompute->dim_mask = mask;
  return set_reduced_output(m, 0, self, mask, keepdim, sum_like_dtype(m, self, dtype));
}

int sk_meta_mean(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int dtype, sk_precompute_mean_out *precompute) {
  SkDType in = dtype >= 0 ? (SkDType)dtype : self->dtype;
  if (!sk_dtype_is_floating(in))
    return sk_error("mean(): could not infer output dtype. %s dtype must be either a floating point or complex dtype. Got: %s",
                    dtype >= 0 ? "Optional" : "Input", sk_dtype_torch_name(in));
  uint32_t mask;
  if (reduce_mask(self, dim, &mask)) return -1;
  precompute->dim_mask = mask;
  int out = dtype >= 0 ? dtype : given_out_dtype(m);
  return set_reduced_output(m, 0, self, mask, keepdim, out >= 0 ? (SkDType)out : in);
}

int sk_meta_prod_int(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, int dtype,
                     sk_precompute_prod_int_out *precompute) {
  uint32_t mask;
  if (one_dim_mask(self, dim, &mask)) return -1;
  precompute->dim_mask = mask;
  return set_reduced_output(m, 0, self, mask, keepdim, sum_like_dtype(m, self, dtype));
}
/* }==== */

/* {==== amax, amin, argmax, argmin, max.dim, min.dim ==== */
int sk_meta_amax(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, sk_precompute_amax_out *precompute) {
  uint32_t mask;
  if (reduce_mask(self, dim, &mask) || nonempty_check(self, mask, "amax()")) return -1;
  precompute->dim_mask = mask;
  return set_reduced_output(m, 0, self, mask, keepdim, self->dtype);
}

int sk_meta_amin(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, sk_precompute_amin_out *precompute) {
  uint32_t mask;
  if (reduce_mask(self, dim, &mask) || nonempty_check(self, mask, "amin()")) return -1;
  precompute->dim_mask = mask;
  return set_reduced_output(m, 0, self, mask, keepdim, self->dtype);
}

static int arg_meta(SkMeta *m, const SkTensor *self, SkOptInt dim, int keepdim, int64_t *dim_mask, const char *fn) {
  uint32_t mask;
  if (!dim.has) {
    if (self->numel == 0)
      return sk_error("%s: Expected reduction dim to be specified for input.numel() == 0.", fn);
    SkIntList all = {NULL, 0};
    reduce_mask(self, all, &mask);
  } else if (one_dim_mask(self, dim.v, &mask) || nonempty_check(self, mask, fn))
    return -1;
  *dim_mask = mask;
  return set_reduced_output(m, 0, self, mask, keepdim, SK_DTYPE_INT64);
}

int sk_meta_argmax(SkMeta *m, const SkTensor *self, SkOptInt dim, int keepdim, sk_precompute_argmax_out *precompute) {
  return arg_meta(m, self, dim, keepdim, &precompute->dim_mask, "argmax()");
}

int sk_meta_argmin(SkMeta *m, const SkTensor *self, SkOptInt dim, int keepdim, sk_precompute_argmin_out *precompute) {
  return arg_meta(m, self, dim, keepdim, &precompute->dim_mask, "argmin()");
}

/* Output 0: the values (self's dtype), output 1: their indices (int64). */
static int value_index_meta(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, int64_t *dim_mask, const char *fn) {
  uint32_t mask;
  if (one_dim_mask(self, dim, &mask) || nonempty_check(self, mask, fn)) return -1;
  *dim_mask = mask;
  if (set_reduced_output(m, 0, self, mask, keepdim, self->dtype)) return -1;
  return set_reduced_output(m, 1, self, mask, keepdim, SK_DTYPE_INT64);
}

int sk_meta_max_dim_max(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, sk_precompute_max_dim_max *precompute) {
  return value_index_meta(m, self, dim, keepdim, &precompute->dim_mask, "max()");
}

int sk_meta_min_dim_min(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, sk_precompute_min_dim_min *precompute) {
  return value_index_meta(m, self, dim, keepdim, &precompute->dim_mask, "min()");
}
/* }==== */

/* {==== var, std, norm, logsumexp ==== */
static int var_meta(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int64_t *dim_mask) {
  uint32_t mask;
  if (floating_check(self, "std and var only support floating point and complex dtypes") || reduce_mask(self, dim, &mask))
    return -1;
  *dim_mask = mask;
  return set_reduced_output(m, 0, self, mask, keepdim, self->dtype);
}

int sk_meta_var_correction(SkMeta *m, const SkTensor *self, SkIntList dim, SkScalar correction, int keepdim,
                           sk_precompute_var_correction_out *precompute) {
  (void)correction;
  return var_meta(m, self, dim, keepdim, &precompute->dim_mask);
}

int sk_meta_std_correction(SkMeta *m, const SkTensor *self, SkIntList dim, SkScalar correction, int keepdim,
                           sk_precompute_std_correction_out *precompute) {
  (void)correction;
  return var_meta(m, self, dim, keepdim, &precompute->dim_mask);
}

/* PyTorch's checks of linalg.vector_norm, which norm calls: an empty tensor has no inf or
** negative-order norm over everything, nor over an empty dim. */
int sk_meta_norm(SkMeta *m, const SkTensor *self, SkScalar p, SkIntList dim, int keepdim, sk_precompute_norm_out *precompute) {
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("norm(): input dtype should be either floating point or complex. Got %s instead.",
                    sk_dtype_torch_name(self->dtype));
  uint32_t mask;
  if (reduce_mask(self, dim, &mask)) return -1;
  double ord = p.kind == SK_SCALAR_NONE ? 2 : sk_scalar_to_double(p);
  if (self->numel == 0 && (ord < 0 || ord == INFINITY)) {
    if (!dim.data || dim.n == 0)
      return sk_error("linalg.vector_norm cannot compute the %g norm on an empty tensor because the operation "
                      "does not have an identity", ord);
    for (int d = 0; d < self->ndim; d++)
      if ((mask & (1u << d)) && self->sizes[d] == 0)
        return sk_error("linalg.vector_norm cannot compute the %g norm on the dimension %d because this dimension "
                        "is empty and the operation does not have an identity", ord, d);
  }
  precompute->dim_mask = mask;
  int out = given_out_dtype(m);
  return set_reduced_output(m, 0, self, mask, keepdim, out >= 0 ? (SkDType)out : self->dtype);
}

/* Integers reduce to float32 (PyTorch's default dtype); an out must be floating. */
int sk_meta_logsumexp(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, sk_precompute_logsumexp_out *precompute) {
  int out = given_out_dtype(m);
  if (out >= 0 && !sk_dtype_is_floating((SkDType)out))
    return sk_error("logsumexp(): Expected floating point type for result tensor, but got: %s", sk_dtype_torch_name((SkDType)out));
  uint32_t mask;
  if (reduce_mask(self, dim, &mask)) return -1;
  precompute->dim_mask = mask;
  if (out < 0) out = sk_dtype_is_floating(self->dtype) ? (int)self->dtype : SK_DTYPE_FLOAT32;
  return set_reduced_output(m, 0, self, mask, keepdim, (SkDType)out);
}
/* }==== */

/* {==== all, any ==== */
/* bool results, uint8 for uint8 inputs; an out must be bool or uint8. */
static int allany_meta(SkMeta *m, const SkTensor *self, uint32_t mask, int keepdim, const char *fn) {
  int out = given_out_dtype(m);
  if (out >= 0 && out != SK_DTYPE_BOOL && out != SK_DTYPE_UINT8)
    return sk_error("%s only supports bool tensor for result, got: %s", fn, sk_dtype_torch_name((SkDType)out));
  if (out < 0) out = self->dtype == SK_DTYPE_UINT8 ? SK_DTYPE_UINT8 : SK_DTYPE_BOOL;
  return set_reduced_output(m, 0, self, mask, keepdim, (SkDType)out);
}

int sk_meta_all(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, sk_precompute_all_out *precompute) {
  uint32_t mask;
  if (one_dim_mask(self, dim, &mask)) return -1;
  precompute->dim_mask = mask;
  return allany_meta(m, self, mask, keepdim, "all");
}

int sk_meta_all_all(SkMeta *m, const SkTensor *self) {
  uint32_t mask;
  reduce_mask(self, (SkIntList){NULL, 0}, &mask);
  return allany_meta(m, self, mask, 0, "all");
}

int sk_meta_any(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, sk_precompute_any_out *precompute) {
  uint32_t mask;
  if (one_dim_mask(self, dim, &mask)) return -1;
  precompute->dim_mask = mask;
  return allany_meta(m, self, mask, keepdim, "any");
}

int sk_meta_any_all(SkMeta *m, const SkTensor *self) {
  uint32_t mask;
  reduce_mask(self, (SkIntList){NULL, 0}, &mask);
  return allany_meta(m, self, mask, 0, "any");
}
/* }==== */

/* {==== cumsum, cumprod ==== */
/* The shape of self; dtype, else the out's (or in-place self's) dtype, else int64 for
** integers and bool, else self's. */
static int scan_meta(SkMeta *m, const SkTensor *self, int64_t dim, int dtype) {
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  SkDType out = sum_like_dtype(m, self, dtype);
  return sk_meta_set_output(m, 0, self->ndim, self->sizes, NULL, out);
}

int sk_meta_cumsum(SkMeta *m, const SkTensor *self, int64_t dim, int dtype) { return scan_meta(m, self, dim, dtype); }
int sk_meta_cumprod(SkMeta *m, const SkTensor *self, int64_t dim, int dtype) { return scan_meta(m, self, dim, dtype); }
/* }==== */
