/*
** sk_meta_select.c — meta functions of the scans and selections along one dim:
** logcumsumexp, cummax/cummin (self's shape; values and int64 indices), median,
** nanmedian, kthvalue, mode (self's shape reduced over dim, or kept as size 1).
** A 0-dim self counts as one element along dim 0 / -1. The kernels are in sk_cpu_select.c.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

/* The shape of self with dim d reduced (kept as 1 with keepdim); outputs 0 (self's dtype)
** and 1 (int64). */
static int reduced_pair(SkMeta *m, const SkTensor *self, int64_t d, int keepdim) {
  int64_t sizes[SK_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < self->ndim; i++)
    if (i != d) sizes[nd++] = self->sizes[i];
    else if (keepdim) sizes[nd++] = 1;
  if (sk_meta_set_output(m, 0, nd, sizes, NULL, self->dtype)) return -1;
  return sk_meta_set_output(m, 1, nd, sizes, NULL, SK_DTYPE_INT64);
}

/* dim wrapped into *d; the reduced dim must be non-empty (PyTorch's zero_numel_check_dims). */
static int select_checks(const SkTensor *self, int64_t dim, int64_t *d, const char *fn, int bool_ok) {
  if (!bool_ok && self->dtype == SK_DTYPE_BOOL) return sk_error("\"%s\" not implemented for 'Bool'", fn);
  if (sk_wrap_dim(dim, self->ndim, "dim", d)) return -1;
  if (self->ndim && self->sizes[*d] == 0)
    return sk_error("%s(): Expected reduction dim %lld to have non-zero size.", fn, (long long)*d);
  return 0;
}

int sk_meta_logcumsumexp(SkMeta *m, const SkTensor *self, int64_t dim, sk_precompute_logcumsumexp_out *precompute) {
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("\"logcumsumexp\" not implemented for '%s'", sk_dtype_torch_name(self->dtype));
  if (sk_wrap_dim(dim, self->ndim, "dim", &precompute->dim)) return -1;
  return sk_meta_set_output(m, 0, self->ndim, self->sizes, NULL, self->dtype);
}

static int cum_meta(SkMeta *m, const SkTensor *self, int64_t dim, int64_t *d) {
  if (sk_wrap_dim(dim, self->ndim, "dim", d)) return -1;
  if (sk_meta_set_output(m, 0, self->ndim, self->sizes, NULL, self->dtype)) return -1;
  return sk_meta_set_output(m, 1, self->ndim, self->sizes, NULL, SK_DTYPE_INT64);
}

int sk_meta_cummax(SkMeta *m, const SkTensor *self, int64_t dim, sk_precompute_cummax_out *precompute) {
  return cum_meta(m, self, dim, &precompute->dim);
}

int sk_meta_cummin(SkMeta *m, const SkTensor *self, int64_t dim, sk_precompute_cummin_out *precompute) {
  return cum_meta(m, self, dim, &precompute->dim);
}

int sk_meta_median_dim_values(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim,
                              sk_precompute_median_dim_values *precompute) {
  if (select_checks(self, dim, &precompute->dim, "median", 0)) return -1;
  return reduced_pair(m, self, precompute->dim, keepdim);
}

int sk_meta_nanmedian_dim_values(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim,
                                 sk_precompute_nanmedian_dim_values *precompute) {
  if (select_checks(self, dim, &precompute->dim, "nanmedian", 0)) return -1;
  return reduced_pair(m, self, precompute->dim, keepdim);
}

int sk_meta_kthvalue_values(SkMeta *m, const SkTensor *self, int64_t k, int64_t dim, int keepdim,
                            sk_precompute_kthvalue_values *precompute) {
  if (select_checks(self, dim, &precompute->dim, "kthvalue", 0)) return -1;
  int64_t n = self->ndim ? self->sizes[precompute->dim] : 1;
  if (k < 1 || k > n)
    return sk_error("kthvalue(): selected number k out of range for dimension %lld", (long long)precompute->dim);
  return reduced_pair(m, self, precompute->dim, keepdim);
}

int sk_meta_mode_values(SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, sk_precompute_mode_values *precompute) {
  if (select_checks(self, dim, &precompute->dim, "mode", 1)) return -1;
  return reduced_pair(m, self, precompute->dim, keepdim);
}
