/*
** sk_meta_reduce.c — meta functions of the reductions (sum, mean, amax, argmax)
** A reduction keeps the dims not in its mask, and keeps reduced dims as size 1
** with keepdim. dim None or [] reduces every dim. A 0-dim tensor accepts dim
** 0 and -1 and reduces to a 0-dim result.
*/
#include "sk_kernels.h"
#include "sk_error.h"

#include <string.h>

static const char *torch_name(SkDType t) {
  static const char *const names[SK_DTYPE_COUNT] = {"Bool", "Byte", "Char", "Short", "Int", "Long",
                                                    "Half", "BFloat16", "Float", "Double"};
  return (unsigned)t < SK_DTYPE_COUNT ? names[t] : "?";
}

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

/* Declares output 0 with the reduced shape of self. */
static int set_reduced_output(SkMeta *m, const SkTensor *self, uint32_t mask, int keepdim, SkDType dtype) {
  int64_t sizes[SK_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < self->ndim; d++) {
    if (!(mask & (1u << d))) sizes[nd++] = self->sizes[d];
    else if (keepdim) sizes[nd++] = 1;
  }
  return sk_meta_set_output(m, 0, nd, sizes, NULL, dtype);
}

/* PyTorch's zero_numel_check_dims: max-like reductions need every reduced dim non-empty. */
static int nonempty_check(const SkTensor *self, uint32_t mask, const char *fn) {
  if (self->numel != 0) return 0;
  for (int d = 0; d < self->ndim; d++)
    if ((mask & (1u << d)) && self->sizes[d] == 0)
      return sk_error("%s: Expected reduction dim %d to have non-zero size.", fn, d);
  return 0;
}

/* The dtype of an out= the caller gave, else -1. */
static int given_out_dtype(const SkMeta *m) {
  const SkTensor *o = sk_meta_maybe_output(m, 0);
  return m->variant == SK_VARIANT_OUT && o ? (int)o->dtype : -1;
}

int sk_meta_sum_IntList(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int dtype,
                        sk_precompute_sum_IntList_out *precompute) {
  uint32_t mask;
  if (reduce_mask(self, dim, &mask)) return -1;
  precompute->dim_mask = mask;
  int out = dtype >= 0 ? dtype : given_out_dtype(m);
  if (out < 0) out = sk_dtype_is_floating(self->dtype) ? (int)self->dtype : SK_DTYPE_INT64;
  return set_reduced_output(m, self, mask, keepdim, (SkDType)out);
}

int sk_meta_mean(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int dtype, sk_precompute_mean_out *precompute) {
  SkDType in = dtype >= 0 ? (SkDType)dtype : self->dtype;
  if (!sk_dtype_is_floating(in))
    return sk_error("mean(): could not infer output dtype. %s dtype must be either a floating point or complex dtype. Got: %s",
                    dtype >= 0 ? "Optional" : "Input", torch_name(in));
  uint32_t mask;
  if (reduce_mask(self, dim, &mask)) return -1;
  precompute->dim_mask = mask;
  int out = dtype >= 0 ? dtype : given_out_dtype(m);
  return set_reduced_output(m, self, mask, keepdim, out >= 0 ? (SkDType)out : in);
}

int sk_meta_amax(SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, sk_precompute_amax_out *precompute) {
  uint32_t mask;
  if (reduce_mask(self, dim, &mask) || nonempty_check(self, mask, "amax()")) return -1;
  precompute->dim_mask = mask;
  return set_reduced_output(m, self, mask, keepdim, self->dtype);
}

int sk_meta_argmax(SkMeta *m, const SkTensor *self, SkOptInt dim, int keepdim, sk_precompute_argmax_out *precompute) {
  uint32_t mask;
  if (!dim.has) {
    if (self->numel == 0)
      return sk_error("argmax(): Expected reduction dim to be specified for input.numel() == 0.");
    SkIntList all = {NULL, 0};
    reduce_mask(self, all, &mask);
  } else {
    SkIntList one = {&dim.v, 1};
    if (reduce_mask(self, one, &mask) || nonempty_check(self, mask, "argmax()")) return -1;
  }
  precompute->dim_mask = mask;
  return set_reduced_output(m, self, mask, keepdim, SK_DTYPE_INT64);
}
