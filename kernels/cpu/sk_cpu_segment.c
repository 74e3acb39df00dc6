/*
** sk_cpu_segment.c — segment_reduce: reductions over consecutive segments along axis
** The segments of each row (the dims before axis) come from lengths (counts) or offsets
** (boundaries), whose leading dims are data's before axis. A reduction starts from initial
** when given (mean divides the total by the segment's length, PyTorch's rule), else from its
** identity; an empty segment gives initial, or 0 (sum), NaN (mean), -inf (max), +inf (min),
** 1 (prod). Values accumulate in double.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_cpu_segment.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sk_segment_check(const SkTensor *data, const char *reduce, const SkTensor *lengths, const SkTensor *indices,
                     const SkTensor *offsets, int64_t axis, int *op, int64_t *wrapped, int64_t *sizes, int64_t *nseg) {
  static const char *const names[] = {"sum", "mean", "max", "min", "prod"};
  *op = -1;
  for (int i = 0; i < 5; i++) if (reduce && !strcmp(reduce, names[i])) *op = i;
  if (*op < 0) return sk_error("unsupported reduction given! %s", reduce ? reduce : "None");
  if (!sk_dtype_is_floating(data->dtype))
    return sk_error("\"_segment_reduce_cpu\" not implemented for '%s'", sk_dtype_torch_name(data->dtype));
  if (sk_wrap_dim(axis, data->ndim, "axis", wrapped)) return -1;
  if (indices) return sk_error("segment_reduce(): indices based reduction is not supported yet.");
  const SkTensor *seg = offsets ? offsets : lengths;
  const char *what = offsets ? "offsets" : "lengths";
  if (!seg) return sk_error("segment_reduce(): Either lengths or offsets must be defined.");
  if (seg->dtype != SK_DTYPE_INT64 && seg->dtype != SK_DTYPE_INT32)
    return sk_error("segment_reduce(): Expected %s to be int32 or int64 but got %s", what, sk_dtype_name(seg->dtype));
  if (!sk_device_eq(seg->device, data->device))
    return sk_error("segment_reduce(): expected %s on data's device", what);
  if (data->ndim < seg->ndim) return sk_error("Expected data.dim() >= %s_value.dim() to be true, but got false.", what);
  if (*wrapped != seg->ndim - 1)
    return sk_error("segment_reduce(): Expected axis to be the last dimension of %s but got %lld.", what, (long long)*wrapped);
  for (int d = 0; d < *wrapped; d++)
    if (seg->sizes[d] != data->sizes[d])
      return sk_error("segment_reduce(): %s' size %lld at dimension %d does not match data's size %lld", what,
                      (long long)seg->sizes[d], d, (long long)data->sizes[d]);
  *nseg = seg->sizes[*wrapped] - (offsets ? 1 : 0);
  if (*nseg < 0) return sk_error("segment_reduce(): offsets must have at least one element along axis");
  memcpy(sizes, data->sizes, (size_t)data->ndim * sizeof *sizes);
  sizes[*wrapped] = *nseg;
  return 0;
}

static double seg_start(int op, SkScalar initial) {
  if (initial.kind != SK_SCALAR_NONE) return sk_scalar_to_double(initial);
  return op == SK_SEG_MAX ? -INFINITY : op == SK_SEG_MIN ? INFINITY : op == SK_SEG_PROD ? 1.0 : 0.0;
}

static double seg_step(int op, double a, double x) {
  switch (op) {
  case SK_SEG_MAX: return isnan(a) || isnan(x) ? NAN : a > x ? a : x;
  case SK_SEG_MIN: return isnan(a) || isnan(x) ? NAN : a < x ? a : x;
  case SK_SEG_PROD: return a * x;
  default: return a + x;
  }
}

int sk_cpu_segment_reduce(SkTensor **result, const SkTensor *data, const char *reduce, const SkTensor *lengths,
                          const SkTensor *indices, const SkTensor *offsets, int64_t axis, int unsafe, SkScalar initial) {
  int op;
  int64_t ax, sizes[SK_MAX_DIMS], nseg;
  if (sk_segment_check(data, reduce, lengths, indices, offsets, axis, &op, &ax, sizes, &nseg)) return -1;
  int rc = 0;
  SkTensor *k1 = NULL, *k2 = NULL;
  const SkTensor *x = sk_cpu_operand(data, SK_DTYPE_FLOAT64, &k1, &rc);
  const SkTensor *sg = sk_cpu_operand(offsets ? offsets : lengths, SK_DTYPE_INT64, &k2, &rc);
  int64_t rows = sk_numel((int)ax, data->sizes), n = data->sizes[ax];
  int64_t inner = sk_numel(data->ndim - (int)ax - 1, data->sizes + ax + 1);
  const int64_t *s = sg ? sk_tensor_data(sg) : NULL;
  /* boundaries: offsets as given (checked to lie in [0, n] and not decrease), or lengths' running sums */
  int64_t per = nseg + (offsets ? 1 : 0);
  for (int64_t r = 0; !rc && r < rows; r++) {
    const int64_t *q = s + r * per;
    int64_t total = 0;
    for (int64_t i = 0; !rc && i < per; i++) {
      if (!offsets && q[i] < 0) rc = sk_error("lengths contains negative value!");
      else if (!offsets && q[i] > n - total) total = n + 1; /* past the data: refused below, without overflow */
      else if (offsets && (q[i] < 0 || q[i] > n || (i && q[i] < q[i - 1])))
        rc = sk_error("segment_reduce(): offsets must not decrease and must lie in [0, %lld]", (long long)n);
      else if (!offsets && total <= n) total += q[i];
    }
    if (!rc && !offsets && total != n) {
      if (!unsafe)
        rc = sk_error("segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe.");
      else if (total > n) rc = sk_error("segment_reduce(): the lengths of a row sum past data's size %lld", (long long)n);
    }
  }
  SkTensor *out = rc ? NULL : sk_tensor_empty(data->ndim, sizes, SK_DTYPE_FLOAT64, SK_CPU);
  if (!rc && !out) rc = -1;
  if (!rc) {
    const double *xv = sk_tensor_data(x);
    double *ov = sk_tensor_data(out);
    double start = seg_start(op, initial);
    for (int64_t r = 0; r < rows; r++) {
      const int64_t *q = s + r * per;
      int64_t lo = 0;
      for (int64_t g = 0; g < nseg; g++) {
        int64_t b = offsets ? q[g] : lo, e = offsets ? q[g + 1] : lo + q[g];
        lo = e;
        for (int64_t j = 0; j < inner; j++) {
          double a = start;
          for (int64_t i = b; i < e; i++) a = seg_step(op, a, xv[(r * n + i) * inner + j]);
          if (op == SK_SEG_MEAN) a = e > b ? a / (double)(e - b) : initial.kind == SK_SCALAR_NONE ? NAN : a;
          ov[(r * nseg + g) * inner + j] = a;
        }
      }
    }
    if (data->dtype != SK_DTYPE_FLOAT64) {
      SkTensor *c = sk_tensor_empty(data->ndim, sizes, data->dtype, SK_CPU);
      rc = c && !sk_copy_cpu(c, out) ? 0 : -1;
      sk_tensor_release(out);
      out = c;
    }
  }
  sk_tensor_release(k1), sk_tensor_release(k2);
  if (rc) { sk_tensor_release(out); return -1; }
  *result = out;
  return 0;
}
