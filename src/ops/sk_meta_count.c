/*
** sk_meta_count.c — meta functions of the counting ops: histc and histogram (a result of
** bins elements, edges of bins + 1, self's dtype), and the Meta kernels of unique and
** bincount, which refuse: their result shapes depend on the values. CPU kernels: sk_cpu_count.c.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

#include <math.h>

static int data_dependent(const char *op) {
  return sk_error("%s: the shape of the result depends on the values of 'self', which Meta tensors do not have", op);
}

int sk_meta_kernel__unique2(SkTensor **r1, SkTensor **r2, SkTensor **r3, const SkTensor *self, int sorted, int return_inverse,
                            int return_counts) {
  (void)r1, (void)r2, (void)r3, (void)self, (void)sorted, (void)return_inverse, (void)return_counts;
  return data_dependent("unique");
}

int sk_meta_kernel_unique_dim(SkTensor **r1, SkTensor **r2, SkTensor **r3, const SkTensor *self, int64_t dim, int sorted,
                              int return_inverse, int return_counts) {
  (void)r1, (void)r2, (void)r3, (void)self, (void)dim, (void)sorted, (void)return_inverse, (void)return_counts;
  return data_dependent("unique_dim");
}

int sk_meta_kernel_unique_consecutive(SkTensor **r1, SkTensor **r2, SkTensor **r3, const SkTensor *self, int return_inverse,
                                      int return_counts, SkOptInt dim) {
  (void)r1, (void)r2, (void)r3, (void)self, (void)return_inverse, (void)return_counts, (void)dim;
  return data_dependent("unique_consecutive");
}

int sk_meta_kernel_bincount(SkTensor **result, const SkTensor *self, const SkTensor *weights, int64_t minlength) {
  (void)result, (void)self, (void)weights, (void)minlength;
  return data_dependent("bincount");
}

/* {==== histc, histogram ==== */
static int floating_input(const SkTensor *self, const char *kname) {
  if (sk_dtype_is_floating(self->dtype)) return 0;
  return sk_error("\"%s\" not implemented for '%s'", kname, sk_dtype_torch_name(self->dtype));
}

static int bins_check(int64_t bins) {
  if (bins <= 0) return sk_error("torch.histogram(): bins must be > 0, but got %lld for dimension 0", (long long)bins);
  if (bins > INT64_MAX - 1) return sk_error("torch.histogram(): bins must be at most %lld", (long long)(INT64_MAX - 1));
  return 0;
}

/* hist [bins] and bin_edges [bins + 1], both of self's dtype. */
static int hist_outputs(SkMeta *m, const SkTensor *self, int64_t bins) {
  int64_t nb = bins, ne = bins + 1;
  if (sk_meta_set_output(m, 0, 1, &nb, NULL, self->dtype)) return -1;
  return sk_meta_set_output(m, 1, 1, &ne, NULL, self->dtype);
}

/* PyTorch's histogramdd_check_inputs for one dimension: weight of self's shape and dtype. */
static int weight_check(const SkTensor *self, const SkTensor *weight) {
  if (!weight) return 0;
  if (weight->dtype != self->dtype)
    return sk_error("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same dtype");
  if (!sk_tensor_same_shape(weight, self))
    return sk_error("torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
                    "excluding its innermost dimension");
  return 0;
}

int sk_meta_histc(SkMeta *m, const SkTensor *self, int64_t bins, SkScalar min, SkScalar max) {
  if (floating_input(self, "histogram_cpu") || bins_check(bins)) return -1;
  double lo = sk_scalar_to_double(min), hi = sk_scalar_to_double(max);
  if (lo > hi) return sk_error("torch.histc: max must be larger than min");
  if (!isfinite(lo) || !isfinite(hi)) return sk_error("torch.histc: range of [%g, %g] is not finite", lo, hi);
  return sk_meta_set_output(m, 0, 1, &bins, NULL, self->dtype);
}

int sk_meta_histogram_bin_ct(SkMeta *m, const SkTensor *self, int64_t bins, SkDoubleList range, const SkTensor *weight,
                             int density) {
  (void)density;
  if (floating_input(self, "histogramdd") || bins_check(bins) || weight_check(self, weight)) return -1;
  if (range.data) {
    if (range.n != 2) return sk_error("torch.histogramdd: for 1 dimensions, range should have 2 elements, but got %d", range.n);
    if (range.data[0] > range.data[1])
      return sk_error("torch.histogramdd: min should not exceed max, but got min %g max %g for dimension 0", range.data[0],
                      range.data[1]);
    if (!isfinite(range.data[0]) || !isfinite(range.data[1]))
      return sk_error("torch.histogramdd: dimension 0's range [%g, %g] is not finite", range.data[0], range.data[1]);
  }
  return hist_outputs(m, self, bins);
}

int sk_meta_histogram_bins_tensor(SkMeta *m, const SkTensor *self, const SkTensor *bins, const SkTensor *weight, int density) {
  (void)density;
  if (floating_input(self, "histogramdd") || weight_check(self, weight)) return -1;
  if (bins->dtype != self->dtype)
    return sk_error("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input %s and bins %s",
                    sk_dtype_torch_name(self->dtype), sk_dtype_torch_name(bins->dtype));
  if (bins->ndim != 1) return sk_error("torch.histogramdd: bins tensor should have one dimension, but got %d dimensions", bins->ndim);
  if (bins->numel < 1) return sk_error("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements");
  return hist_outputs(m, self, bins->numel - 1);
}
/* }==== */
