/*
** sk_views.c — view ops: new tensor objects over the same storage
** Each op computes (sizes, strides, offset) and hands back a tensor from
** sk_tensor_alias(); no element is read or written, so one kernel serves
** every backend, Meta included. reshape (Math) is the one op here that may
** copy: it views when the strides allow it, else clones and views that.
** Invariant: a view never reaches outside the elements of its base
** (sk_tensor_alias checks it); sizes, strides and offsets are computed with
** checked arithmetic, an overflow is an error naming the argument.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_checked.h"
#include "sk_error.h"

#include <stdint.h>
#include <string.h>

static int make_view(SkTensor **result, const SkTensor *self, int ndim, const int64_t *sizes,
                     const int64_t *strides, int64_t offset) {
  *result = sk_tensor_alias(self, ndim, sizes, strides, offset);
  return *result ? 0 : -1;
}

/* {==== view and reshape ==== */
/* PyTorch's infer_size: checks `shape` against numel, resolving one -1. The
** known sizes must have a representable numel (sk_numel), even when one is 0. */
static int infer_size(SkIntList shape, int64_t numel, const char *arg, int64_t *out) {
  char buf[256];
  if (shape.n > SK_MAX_DIMS)
    return sk_error("argument '%s' has %d dimensions, but tensors have at most %d", arg, shape.n, SK_MAX_DIMS);
  int infer = -1;
  for (int d = 0; d < shape.n; d++) {
    int64_t s = shape.data[d];
    out[d] = s;
    if (s == -1) {
      if (infer >= 0) return sk_error("only one dimension can be inferred (argument '%s')", arg);
      infer = d;
      out[d] = 1;
    } else if (s < 0) return sk_error("invalid shape dimension %lld (argument '%s')", (long long)s, arg);
  }
  int64_t newsize = sk_numel(shape.n, out);
  if (newsize < 0) return sk_error_context("argument '%s' %s", arg, sk_shape_str(shape.n, shape.data, buf, sizeof buf));
  if (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0)) {
    if (infer >= 0) {
      if (newsize == 0)
        return sk_error("cannot reshape tensor of 0 elements into shape %s because the unspecified dimension size "
                        "-1 can be any value and is ambiguous", sk_shape_str(shape.n, shape.data, buf, sizeof buf));
      out[infer] = numel / newsize;
    }
    return 0;
  }
  return sk_error("shape '%s' is invalid for input of size %lld", sk_shape_str(shape.n, shape.data, buf, sizeof buf),
                  (long long)numel);
}

/* PyTorch's computeStride: strides that view t as newshape without a copy.
** Dims of t are cut into chunks that are contiguous among themselves; every
** chunk must be covered by whole dims of the new shape. Returns 0 if impossible. */
static int compute_stride(const SkTensor *t, int nd, const int64_t *newshape, int64_t *newstride) {
  if (t->ndim == 0) {
    for (int d = 0; d < nd; d++) newstride[d] = 1;
    return 1;
  }
  if (t->numel == 0) {
    if (nd == t->ndim && memcmp(newshape, t->sizes, (size_t)nd * sizeof *newshape) == 0) {
      memcpy(newstride, t->strides, (size_t)nd * sizeof *newstride);
      return 1;
    }
    for (int d = nd - 1; d >= 0; d--)
      newstride[d] = d == nd - 1 ? 1 : (newshape[d + 1] > 1 ? newshape[d + 1] : 1) * newstride[d + 1];
    return 1;
  }
  /* the products of sizes are partial numels (no overflow); a size times a stride may
  ** overflow only on a huge meta storage: no such stride exists, so the chunk ends */
  int view_d = nd - 1;
  int64_t chunk_base_stride = t->strides[t->ndim - 1], tensor_numel = 1, view_numel = 1, st;
  for (int td = t->ndim - 1; td >= 0; td--) {
    tensor_numel *= t->sizes[td];
    if (td == 0 || (t->sizes[td - 1] != 1 && (sk_mul_overflow(tensor_numel, chunk_base_stride, &st) ||
                                               t->strides[td - 1] != st))) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        if (sk_mul_overflow(view_numel, chunk_base_stride, &newstride[view_d])) return 0;
        view_numel *= newshape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return 0;
      if (td > 0) {
        chunk_base_stride = t->strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

int sk_default_view(SkTensor **result, const SkTensor *self, SkIntList size) {
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  if (infer_size(size, self->numel, "size", sizes)) return -1;
  if (!compute_stride(self, size.n, sizes, strides))
    return sk_error("view size is not compatible with input tensor's size and stride (at least one dimension spans "
                    "across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(result, self, size.n, sizes, strides, self->offset);
}

int sk_default_view_dtype(SkTensor **result, const SkTensor *self, SkDType dtype) {
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS], offset = self->offset, from = (int64_t)sk_dtype_size(self->dtype),
          to = (int64_t)sk_dtype_size(dtype);
  const char *a = sk_dtype_torch_name(self->dtype), *b = sk_dtype_torch_name(dtype);
  int last = self->ndim - 1;
  memcpy(sizes, self->sizes, sizeof sizes);
  memcpy(strides, self->strides, sizeof strides);
  if (from != to) {
    if (self->ndim == 0)
      return sk_error("self.dim() cannot be 0 to view %s as %s (different element sizes)", a, b);
    if (self->strides[last] != 1)
      return sk_error("self.stride(-1) must be 1 to view %s as %s (different element sizes), but got %lld", a, b,
                      (long long)self->strides[last]);
  }
  if (from > to) { /* each element becomes `ratio` narrower ones; the products stay in the storage's byte range */
    int64_t ratio = from / to;
    for (int d = 0; d < last; d++) strides[d] *= ratio;
    sizes[last] *= ratio;
    offset *= ratio;
  } else if (from < to) {
    int64_t ratio = to / from;
    if (sizes[last] % ratio)
      return sk_error("self.size(-1) must be divisible by %lld to view %s as %s (different element sizes), but got %lld",
                      (long long)ratio, a, b, (long long)sizes[last]);
    if (offset % ratio)
      return sk_error("self.storage_offset() must be divisible by %lld to view %s as %s (different element sizes), "
                      "but got %lld", (long long)ratio, a, b, (long long)offset);
    for (int d = 0; d < last; d++) {
      if (strides[d] % ratio)
        return sk_error("self.stride(%d) must be divisible by %lld to view %s as %s (different element sizes), "
                        "but got %lld", d, (long long)ratio, a, b, (long long)strides[d]);
      strides[d] /= ratio;
    }
    sizes[last] /= ratio;
    offset /= ratio;
  }
  *result = sk_tensor_alias_as(self, dtype, self->ndim, sizes, strides, offset);
  return *result ? 0 : -1;
}

/* A composite (Math): through the dispatched view and clone only, so autograd records
** them (ViewBackward0, CloneBackward0) as it records any op. */
int sk_math_reshape(SkTensor **result, const SkTensor *self, SkIntList shape) {
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  if (infer_size(shape, self->numel, "shape", sizes)) return -1;
  SkIntList sl = {sizes, shape.n};
  if (compute_stride(self, shape.n, sizes, strides)) return sk_view(result, self, sl);
  SkTensor *c = NULL;
  if (sk_clone(&c, self, 0)) return -1;
  int rc = sk_view(result, c, sl);
  sk_tensor_release(c);
  return rc;
}
/* }==== */

/* {==== Permutations ==== */
int sk_default_transpose(SkTensor **result, const SkTensor *self, int64_t dim0, int64_t dim1) {
  int64_t d0, d1, sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  if (sk_wrap_dim(dim0, self->ndim, "dim0", &d0) || sk_wrap_dim(dim1, self->ndim, "dim1", &d1)) return -1;
  memcpy(sizes, self->sizes, sizeof sizes);
  memcpy(strides, self->strides, sizeof strides);
  if (self->ndim > 0) {
    sizes[d0] = self->sizes[d1], sizes[d1] = self->sizes[d0];
    strides[d0] = self->strides[d1], strides[d1] = self->strides[d0];
  }
  return make_view(result, self, self->ndim, sizes, strides, self->offset);
}

int sk_default_t(SkTensor **result, const SkTensor *self) {
  if (self->ndim > 2) return sk_error("t() expects a tensor with <= 2 dimensions, but self is %dD", self->ndim);
  if (self->ndim < 2) return make_view(result, self, self->ndim, self->sizes, self->strides, self->offset);
  return sk_default_transpose(result, self, 0, 1);
}

int sk_default_permute(SkTensor **result, const SkTensor *self, SkIntList dims) {
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  int seen[SK_MAX_DIMS] = {0};
  if (dims.n != self->ndim)
    return sk_error("permute(): number of dimensions in the tensor input does not match the length of the desired "
                    "ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d", self->ndim, dims.n);
  for (int i = 0; i < dims.n; i++) {
    int64_t d;
    if (sk_wrap_dim(dims.data[i], self->ndim, "dims", &d)) return -1;
    if (seen[d]) return sk_error("permute(): duplicate dims are not allowed (argument 'dims' repeats dim %lld)", (long long)d);
    seen[d] = 1;
    sizes[i] = self->sizes[d];
    strides[i] = self->strides[d];
  }
  return make_view(result, self, self->ndim, sizes, strides, self->offset);
}
/* }==== */

/* {==== Adding and removing dims of size 1 ==== */
int sk_default_squeeze(SkTensor **result, const SkTensor *self) {
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < self->ndim; d++)
    if (self->sizes[d] != 1) sizes[n] = self->sizes[d], strides[n++] = self->strides[d];
  return make_view(result, self, n, sizes, strides, self->offset);
}

int sk_default_squeeze_dim(SkTensor **result, const SkTensor *self, int64_t dim) {
  int64_t d, sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (self->ndim == 0 || self->sizes[d] != 1)
    return make_view(result, self, self->ndim, self->sizes, self->strides, self->offset);
  int n = 0;
  for (int i = 0; i < self->ndim; i++)
    if (i != d) sizes[n] = self->sizes[i], strides[n++] = self->strides[i];
  return make_view(result, self, n, sizes, strides, self->offset);
}

int sk_default_unsqueeze(SkTensor **result, const SkTensor *self, int64_t dim) {
  int64_t d, sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  if (sk_wrap_dim(dim, self->ndim + 1, "dim", &d)) return -1;
  if (self->ndim + 1 > SK_MAX_DIMS)
    return sk_error("unsqueeze: tensors have at most %d dimensions (argument 'self' has %d)", SK_MAX_DIMS, self->ndim);
  for (int i = 0, j = 0; i <= self->ndim; i++) {
    if (i == d) {
      sizes[i] = 1;
      strides[i] = 1;
      if (d < self->ndim && sk_mul_overflow(self->sizes[d], self->strides[d], &strides[i]))
        return sk_error("unsqueeze: the stride of the new dimension %lld (size %lld * stride %lld) overflows",
                        (long long)d, (long long)self->sizes[d], (long long)self->strides[d]);
    } else sizes[i] = self->sizes[j], strides[i] = self->strides[j], j++;
  }
  return make_view(result, self, self->ndim + 1, sizes, strides, self->offset);
}
/* }==== */

/* {==== expand ==== */
int sk_default_expand(SkTensor **result, const SkTensor *self, SkIntList size, int implicit) {
  char a[256], b[256];
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  int nd = size.n, td = self->ndim;
  (void)implicit;
  if (nd < td)
    return sk_error("expand(tensor of shape %s, size=%s): the number of sizes provided (%d) must be greater or equal "
                    "to the number of dimensions in the tensor (%d)", sk_shape_str(td, self->sizes, a, sizeof a),
                    sk_shape_str(nd, size.data, b, sizeof b), nd, td);
  if (nd > SK_MAX_DIMS)
    return sk_error("argument 'size' has %d dimensions, but tensors have at most %d", nd, SK_MAX_DIMS);
  for (int i = nd - 1; i >= 0; i--) {
    int dim = td - (nd - i);
    int64_t sz = dim >= 0 ? self->sizes[dim] : 1;
    int64_t st = dim >= 0 ? self->strides[dim] : 1;
    if (dim < 0 && i + 1 < nd && sk_mul_overflow(sizes[i + 1], strides[i + 1], &st))
      return sk_error("expand: the stride of the new dimension %d (size %lld * stride %lld) overflows", i,
                      (long long)sizes[i + 1], (long long)strides[i + 1]);
    int64_t target = size.data[i];
    if (target == -1) {
      if (dim < 0)
        return sk_error("The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension %d", i);
      target = sz;
    } else if (target < 0)
      return sk_error("expand: negative size %lld in argument 'size' at dimension %d", (long long)target, i);
    if (sz != target) {
      if (sz != 1)
        return sk_error("The expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton "
                        "dimension %d.  Target sizes: %s.  Tensor sizes: %s", (long long)target, (long long)sz, i,
                        sk_shape_str(nd, size.data, a, sizeof a), sk_shape_str(td, self->sizes, b, sizeof b));
      sz = target;
      st = 0;
    }
    sizes[i] = sz;
    strides[i] = st;
  }
  return make_view(result, self, nd, sizes, strides, self->offset);
}
/* }==== */

/* {==== Indexing along one dim ==== */
/* self's offset moved index steps along dim d. Inside the storage for a non-empty
** result (the invariant); for an empty one the product may still overflow. */
static int offset_at(const SkTensor *self, int64_t d, int64_t index, const char *op, int64_t *out) {
  int64_t step;
  if (sk_mul_overflow(index, self->strides[d], &step) | sk_add_overflow(self->offset, step, out))
    return sk_error("%s(): storage offset %lld + %lld * stride %lld overflows", op, (long long)self->offset,
                    (long long)index, (long long)self->strides[d]);
  return 0;
}

int sk_default_narrow(SkTensor **result, const SkTensor *self, int64_t dim, int64_t start, int64_t length) {
  int64_t d, sizes[SK_MAX_DIMS];
  if (self->ndim == 0) return sk_error("narrow() cannot be applied to a 0-dim tensor.");
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (length < 0) return sk_error("narrow(): length must be non-negative (argument 'length' is %lld).", (long long)length);
  int64_t cur = self->sizes[d];
  if (start < -cur || start > cur)
    return sk_error("start out of range (expected to be in range of [%lld, %lld], but got %lld)", (long long)-cur,
                    (long long)cur, (long long)start);
  if (start < 0) start += cur;
  if (start > cur - length)
    return sk_error("start (%lld) + length (%lld) exceeds dimension size (%lld).", (long long)start, (long long)length,
                    (long long)cur);
  int64_t offset;
  if (offset_at(self, d, start, "narrow", &offset)) return -1;
  memcpy(sizes, self->sizes, sizeof sizes);
  sizes[d] = length;
  return make_view(result, self, self->ndim, sizes, self->strides, offset);
}

int sk_default_select(SkTensor **result, const SkTensor *self, int64_t dim, int64_t index) {
  char buf[256];
  int64_t d, sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  if (self->ndim == 0) return sk_error("select() cannot be applied to a 0-dim tensor.");
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  int64_t size = self->sizes[d];
  if (index < -size || index >= size)
    return sk_error("select(): index %lld out of range for tensor of size %s at dimension %lld", (long long)index,
                    sk_shape_str(self->ndim, self->sizes, buf, sizeof buf), (long long)d);
  if (index < 0) index += size;
  int64_t offset;
  if (offset_at(self, d, index, "select", &offset)) return -1;
  int n = 0;
  for (int i = 0; i < self->ndim; i++)
    if (i != d) sizes[n] = self->sizes[i], strides[n++] = self->strides[i];
  return make_view(result, self, n, sizes, strides, offset);
}

int sk_default_slice(SkTensor **result, const SkTensor *self, int64_t dim, SkOptInt start, SkOptInt end, int64_t step) {
  int64_t d, sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  if (self->ndim == 0) return sk_error("slice() cannot be applied to a 0-dim tensor.");
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (step <= 0) return sk_error("slice step must be positive");
  int64_t n = self->sizes[d];
  int64_t lo = start.has ? start.v : 0;
  int64_t hi = end.has ? end.v : INT64_MAX;
  if (lo < 0) lo += n;
  if (hi < 0) hi += n;
  if (lo < 0) lo = 0;
  else if (lo >= n) lo = n;
  if (hi < lo) hi = lo;
  else if (hi >= n) hi = n;
  int64_t offset;
  if (offset_at(self, d, lo, "slice", &offset)) return -1;
  memcpy(sizes, self->sizes, sizeof sizes);
  memcpy(strides, self->strides, sizeof strides);
  sizes[d] = sk_ceil_div(hi - lo, step);
  /* stride * step fits when the result has 2+ entries along d (the invariant); with
  ** fewer the stride is never used, and self's stands in when the product overflows */
  if (sk_mul_overflow(self->strides[d], step, &strides[d])) strides[d] = self->strides[d];
  return make_view(result, self, self->ndim, sizes, strides, offset);
}
/* }==== */

/* {==== as_strided and unfold: any geometry over self's storage ==== */
/* sizes/strides/offset as given; sk_tensor_alias refuses what reaches outside the storage
** (PyTorch's setStorage check). Negative strides are refused, as PyTorch's. */
int sk_default_as_strided(SkTensor **result, const SkTensor *self, SkIntList size, SkIntList stride,
                          SkOptInt storage_offset) {
  char buf[256];
  if (size.n != stride.n)
    return sk_error("as_strided: mismatch in length of strides and shape (size has %d entries, stride %d)", size.n,
                    stride.n);
  if (size.n > SK_MAX_DIMS) return sk_error("as_strided: argument 'size' has %d dimensions, but tensors have at most %d", size.n, SK_MAX_DIMS);
  for (int d = 0; d < size.n; d++) {
    if (size.data[d] < 0) return sk_error("as_strided: negative size %lld at dimension %d (argument 'size')", (long long)size.data[d], d);
    if (stride.data[d] < 0)
      return sk_error("as_strided: Negative strides are not supported at the moment, got strides: %s",
                      sk_shape_str(stride.n, stride.data, buf, sizeof buf));
  }
  int64_t offset = storage_offset.has ? storage_offset.v : self->offset;
  if (offset < 0) return sk_error("as_strided: Tensor: invalid storage offset %lld", (long long)offset);
  return make_view(result, self, size.n, size.data, stride.data, offset);
}

/* Tensor.unfold: dim d becomes the count of windows of `size` elements `step` apart, and a
** last dim of `size` walks one window (a 0-dim self is one dim of size 1). */
int sk_default_unfold(SkTensor **result, const SkTensor *self, int64_t dimension, int64_t size, int64_t step) {
  int64_t d = 0, sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  int nd = self->ndim;
  if (nd && sk_wrap_dim(dimension, nd, "dimension", &d)) return -1;
  if (!nd && dimension != 0 && dimension != -1)
    return sk_error("Dimension out of range (expected to be in range of [-1, 0], but got %lld)", (long long)dimension);
  if (nd >= SK_MAX_DIMS) return sk_error("unfold: the result would have %d dimensions, at most %d are supported", nd + 1, SK_MAX_DIMS);
  int64_t n = nd ? self->sizes[d] : 1, st = nd ? self->strides[d] : 1;
  if (size > n) return sk_error("maximum size for tensor at dimension %lld is %lld but size is %lld", (long long)d, (long long)n, (long long)size);
  if (size < 0) return sk_error("size is %lld but must be >= 0", (long long)size);
  if (step <= 0) return sk_error("step is %lld but must be > 0", (long long)step);
  memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)nd);
  memcpy(strides, self->strides, sizeof(int64_t) * (size_t)nd);
  sizes[nd] = size;
  strides[nd] = st;
  if (nd) {
    sizes[d] = (n - size) / step + 1;
    /* step·stride fits when there are 2+ windows (inside the storage); else it is never used */
    if (sk_mul_overflow(st, step, &strides[d])) strides[d] = st;
  }
  return make_view(result, self, nd + 1, sizes, strides, self->offset);
}
/* }==== */

/* {==== diagonal ==== */
/* dims dim1 and dim2 leave, a last dim of the diagonal's length comes in with stride
** stride1 + stride2; offset > 0 starts above the main diagonal (along dim2). An empty
** diagonal keeps self's offset (PyTorch's). */
int sk_default_diagonal(SkTensor **result, const SkTensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t d1, d2, sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  if (sk_wrap_dim(dim1, self->ndim, "dim1", &d1) || sk_wrap_dim(dim2, self->ndim, "dim2", &d2)) return -1;
  if (d1 == d2) return sk_error("diagonal dimensions cannot be identical %lld, %lld", (long long)dim1, (long long)dim2);
  int64_t n1 = self->sizes[d1], n2 = self->sizes[d2], len, at = self->offset;
  if (offset >= 0) len = offset >= n2 ? 0 : (n1 < n2 - offset ? n1 : n2 - offset);
  else len = offset <= -n1 ? 0 : (n1 + offset < n2 ? n1 + offset : n2); /* no -offset: it may be INT64_MIN */
  if (len > 0 && offset_at(self, offset >= 0 ? d2 : d1, offset >= 0 ? offset : -offset, "diagonal", &at)) return -1;
  int n = 0;
  for (int i = 0; i < self->ndim; i++)
    if (i != d1 && i != d2) sizes[n] = self->sizes[i], strides[n++] = self->strides[i];
  sizes[n] = len;
  /* the sum fits when the diagonal has 2+ entries (both steps stay inside the base) */
  if (sk_add_overflow(self->strides[d1], self->strides[d2], &strides[n])) strides[n] = 1;
  return make_view(result, self, n + 1, sizes, strides, at);
}
/* }==== */
