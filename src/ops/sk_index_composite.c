/*
** sk_index_composite.c — indexing ops as composites
** tril_indices, triu_indices, argwhere, take_along_dim, take, put/put_, index_add,
** index_copy, index_fill (and in-place / out forms), masked_scatter, isin,
** repeat_interleave.
** The writers are index_put_ with one index tensor at `dim` (the indexed result of
** self[..., index, ...] has source's shape), the readers gather / index / index_select,
** so each runs on every backend and autograd records the pieces. PyTorch's checks come
** first, with its texts; index values are range-checked here, with the op's own text
** (device indices through a CPU copy; Meta has none). Functional
** forms clone self and run the in-place form on the clone.
*/
#include "sk_plan.h"
#include "sk_kernels.h"
#include "sk_composite_util.h"
#include "sk_checked.h"

#include <stdlib.h>
#include <string.h>

#define NONE_DEVICE ((SkDevice){-1, 0})

/* {==== Shared checks ==== */
/* The first value of integer tensor idx outside [-size, size) (neg_ok) or [0, size) in *bad;
** 1 when there is one. Device memory is read through a CPU copy (the sync PyTorch's device
** asserts avoid; the texts stay the op's); Meta has no values: 0. */
static int scan_range(const SkTensor *idx, int64_t size, int neg_ok, int64_t *bad) {
  const char *base = sk_tensor_data(idx);
  size_t z = sk_dtype_size(idx->dtype);
  int64_t at[SK_MAX_DIMS] = {0};
  for (int64_t i = 0; i < idx->numel; i++) {
    int64_t off = 0;
    for (int d = 0; d < idx->ndim; d++) off += at[d] * idx->strides[d];
    int64_t v = sk_load_int64(base + off * (int64_t)z, idx->dtype);
    if (v >= size || v < (neg_ok ? -size : 0)) { *bad = v; return 1; }
    for (int d = idx->ndim - 1; d >= 0 && ++at[d] == idx->sizes[d]; d--) at[d] = 0;
  }
  return 0;
}

static int first_out_of_range(const SkTensor *idx, int64_t size, int neg_ok, int64_t *bad) {
  if (idx->numel == 0) return 0;
  if (sk_values_absent(idx)) return 0;
  if (sk_device_host_addressable(idx->device)) return scan_range(idx, size, neg_ok, bad);
  SkTensor *c = NULL;
  if (sk_to_device(&c, idx, SK_CPU, -1, 0, 0, -1)) return 0; /* unreadable: index_put_ checks */
  int found = scan_range(c, size, neg_ok, bad);
  sk_tensor_release(c);
  return found;
}

static int is_index_dtype(SkDType dt) { return dt == SK_DTYPE_INT64 || dt == SK_DTYPE_INT32; }

/* self[..., index, ...] (index at dim, a vector) as the Tensor?[] list of index_put_ */
typedef struct { SkTensor *list[SK_MAX_DIMS]; int n; } AtDim;
static SkTensorList at_dim(AtDim *a, int64_t dim, const SkTensor *index) {
  for (int64_t i = 0; i < dim; i++) a->list[i] = NULL;
  a->list[dim] = (SkTensor *)index;
  a->n = (int)dim + 1;
  return (SkTensorList){a->list, a->n};
}

/* A 0-dim self/source is indexed as [1] (PyTorch treats a scalar as a 1-element vector). */
static int as_vector(SkTensor **r, const SkTensor *t) {
  int64_t one = 1;
  if (t->ndim) { *r = sk_tensor_retain((SkTensor *)t); return 0; }
  return sk_view(r, t, (SkIntList){&one, 1});
}

/* PyTorch's index_func_meta_impl checks of index_add_ / index_copy_ (op names the text's prefix) */
static int index_func_check(const char *op, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source,
                            int64_t *wrapped) {
  char buf[128];
  if (sk_wrap_dim(dim, self->ndim, "dim", wrapped)) return -1;
  if (index->ndim > 1)
    return sk_error("%s(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s", op, index->ndim,
                    sk_dtype_name(index->dtype), sk_shape_str(index->ndim, index->sizes, buf, sizeof buf));
  int64_t n = source->ndim ? (*wrapped < source->ndim ? source->sizes[*wrapped] : -1) : 1;
  if (n < 0)
    return sk_error("%s(): Indexing dim %lld is out of bounds of the source tensor with dim %d", op, (long long)*wrapped,
                    source->ndim);
  if (index->numel != n)
    return sk_error("%s(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for dim: %lld", op,
                    (long long)index->numel, (long long)n, (long long)*wrapped);
  return 0;
}

/* index_put_ of source into self along dim (0-dim tensors as [1]); accumulate adds. A half-type
** self accumulates in opmath: into a float32 copy, rounded once as it is copied back, so the
** elements an index names more than once are summed before rounding (put_, index_add). */
static int put_along(SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source, int accumulate) {
  if (accumulate && sk_dtype_is_half(self->dtype)) {
    if (sk_tensor_may_overlap(self, source)) /* index_put_'s check, which the copies would skip */
      return sk_error("unsupported operation: some elements of the input tensor 'values' and the written-to tensor "
                      "'self' refer to a single memory location; clone() the input first");
    SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
    SkTensor *s32 = sk_tape_opmath(tp, self, self->dtype);
    const SkTensor *v32 = sk_tape_opmath(tp, source, self->dtype);
    if (!tp->rc) sk_tape_keep(tp, put_along(s32, dim, index, v32, 1), NULL);
    if (!tp->rc) sk_tape_keep(tp, sk_copy_(self, s32, 0), NULL);
    return sk_tape_free(tp);
  }
  SkTensor *s = NULL, *v = NULL, *ix = NULL;
  AtDim a;
  int64_t all = -1;
  int rc = as_vector(&s, self);
  if (!rc) rc = as_vector(&v, source);
  if (!rc) rc = sk_reshape(&ix, index, (SkIntList){&all, 1});
  if (!rc) rc = sk_index_put_(s, at_dim(&a, dim, ix), v, accumulate);
  sk_tensor_release(s), sk_tensor_release(v), sk_tensor_release(ix);
  return rc;
}

/* The functional form of an in-place writer: a clone of self, written. */
#define FUNCTIONAL_OF(inplace_call)                          \
  do {                                                       \
    SkTensor *c = NULL;                                      \
    if (sk_clone(&c, self, -1)) return -1;                   \
    SkTensor *self_ = c;                                     \
    (void)self_;                                             \
    if (inplace_call) { sk_tensor_release(c); return -1; }   \
    *result = c;                                             \
    return 0;                                                \
  } while (0)
/* }==== */

/* {==== tril_indices, triu_indices ==== */
/* Σ over rows i < row of clamp(i + offset + 1, 0, col): the elements j <= i + offset of each row */
static __int128 tril_size(int64_t row, int64_t col, int64_t offset) {
  if (row == 0 || col == 0) return 0;
  __int128 a = offset < 0 ? -(__int128)offset : 0;   /* the first row with an element */
  __int128 f = (__int128)col - offset - 1;           /* the first full row */
  if (a > row) a = row;
  __int128 b = f < a ? a : f > row ? row : f;        /* rows [a, b) grow by one each */
  __int128 first = a + offset + 1, last = b - 1 + offset + 1;
  __int128 n = b > a ? (first + last) * (b - a) / 2 : 0;
  return n + (row - b) * col;                        /* rows [b, row) are full */
}

/* The [2, n] coordinates of the lower (upper) triangle, row by row, built on the CPU and
** moved to the requested device and dtype. */
static int triangle_indices(SkTensor **result, int64_t row, int64_t col, int64_t offset, int dtype, SkDevice device,
                            int lower, const char *op) {
  if (row < 0) return sk_error("row must be non-negative, got%lld", (long long)row);
  if (col < 0) return sk_error("col must be non-negative, got%lld", (long long)col);
  SkDType dt = dtype >= 0 ? (SkDType)dtype : SK_DTYPE_INT64;
  if (dt != SK_DTYPE_INT64 && dt != SK_DTYPE_INT32)
    return sk_error("\"%s\" not implemented for '%s'", op, sk_dtype_name(dt));
  /* offsets past ±the matrix select all or nothing: clamped, i + offset cannot overflow */
  if (offset > col) offset = col;
  if (offset < -row) offset = -row;
  /* the count in closed form (rows may number 2^62): the upper triangle at offset is
  ** everything but the lower one at offset - 1 */
  __int128 all = (__int128)row * col, tri = tril_size(row, col, lower ? offset : offset - 1);
  __int128 n128 = lower ? tri : all - tri;
  if (n128 > INT64_MAX / 2) return sk_error("%s: the result is too large", op);
  int64_t n = (int64_t)n128;
  int64_t sizes[2] = {2, n};
  if (device.type == SK_DEVICE_META) return (*result = sk_tensor_empty(2, sizes, dt, device)) ? 0 : -1;
  SkTensor *t = sk_tensor_empty(2, sizes, SK_DTYPE_INT64, SK_CPU);
  if (!t) return -1;
  int64_t *p = sk_tensor_data(t), k = 0;
  /* only the rows with elements, so the loop is bounded by n (row may be 2^63 - 1 with a few
  ** elements): lower from row -offset on, upper up to row col - 1 - offset, for any offset */
  int64_t i0 = lower && offset < 0 ? -offset : 0;
  __int128 ue = (__int128)col - offset; /* the upper triangle's rows end here */
  int64_t i1 = !lower && ue < row ? (ue > 0 ? (int64_t)ue : 0) : row;
  for (int64_t i = i0; i < i1; i++) {
    int64_t lo = lower ? 0 : i + offset, hi = lower ? i + offset : col - 1;
    if (lo < 0) lo = 0;
    if (hi > col - 1) hi = col - 1;
    for (int64_t j = lo; j <= hi; j++, k++) p[k] = i, p[n + k] = j;
  }
  int rc = sk_to_device(result, t, device.type >= 0 ? device : SK_CPU, (int)dt, 0, 0, -1);
  sk_tensor_release(t);
  return rc;
}

int sk_math_tril_indices(SkTensor **result, int64_t row, int64_t col, int64_t offset, int dtype, int layout, SkDevice device,
                         int pin_memory) {
  (void)layout, (void)pin_memory;
  return triangle_indices(result, row, col, offset, dtype, device, 1, "tril_indices");
}

int sk_math_triu_indices(SkTensor **result, int64_t row, int64_t col, int64_t offset, int dtype, int layout, SkDevice device,
                         int pin_memory) {
  (void)layout, (void)pin_memory;
  return triangle_indices(result, row, col, offset, dtype, device, 0, "triu_indices");
}
/* }==== */

/* {==== argwhere, take_along_dim, take ==== */
int sk_math_argwhere(SkTensor **result, const SkTensor *self) { return sk_nonzero(result, self); }

/* self and indices broadcast against each other in every dim but dim, then gather */
int sk_math_take_along_dim(SkTensor **result, const SkTensor *self, const SkTensor *indices, SkOptInt dim) {
  if (indices->dtype != SK_DTYPE_INT64)
    return sk_error("torch.take_along_dim(): dtype of indices should be int64 but got %s", sk_dtype_name(indices->dtype));
  SkTape t = {0}, *tp = &t;
  int64_t all = -1;
  if (!dim.has) {
    SkTensor *g = SK_TAPE_STEP(tp, sk_gather(&r, SK_TAPE_STEP(tp, sk_reshape(&r, self, (SkIntList){&all, 1})), 0,
                                             SK_TAPE_STEP(tp, sk_reshape(&r, indices, (SkIntList){&all, 1})), 0));
    if (g) *result = sk_tape_take(tp, g);
    return sk_tape_free(tp);
  }
  if (self->ndim != indices->ndim)
    return sk_error("torch.take_along_dim(): input and indices should have the same number of dimensions, but got %d "
                    "dimensions for input, and %d dimensions for indices", self->ndim, indices->ndim);
  int64_t d;
  if (sk_wrap_dim(dim.v, self->ndim, "dim", &d)) return -1;
  int nd = self->ndim;
  int64_t is[SK_MAX_DIMS], ss[SK_MAX_DIMS];
  for (int k = 0; k < nd; k++) {
    int64_t a = k == d ? indices->sizes[k] : self->sizes[k], b = indices->sizes[k];
    if (a != b && a != 1 && b != 1)
      return sk_error("The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                      (long long)a, (long long)b, k);
    is[k] = a == 1 ? b : a;
    ss[k] = k == d ? self->sizes[k] : is[k];
  }
  SkTensor *g = SK_TAPE_STEP(tp, sk_gather(&r, SK_TAPE_STEP(tp, sk_expand(&r, self, (SkIntList){ss, nd}, 0)), d,
                                           SK_TAPE_STEP(tp, sk_expand(&r, indices, (SkIntList){is, nd}, 0)), 0));
  if (g) *result = sk_tape_take(tp, g);
  return sk_tape_free(tp);
}

int sk_math_take_along_dim_out(const SkTensor *self, const SkTensor *indices, SkOptInt dim, SkTensor *out) {
  SK_OUT_FROM(sk_take_along_dim(&r, self, indices, dim), out, SK_READS(self, indices));
}

/* self as a flat vector indexed by index (negative entries count from the end); index's shape */
int sk_math_take(SkTensor **result, const SkTensor *self, const SkTensor *index) {
  if (index->dtype != SK_DTYPE_INT64)
    return sk_error("take(): Expected a long tensor for index, but got %s", sk_dtype_name(index->dtype));
  int64_t bad, all = -1;
  if (first_out_of_range(index, self->numel, 1, &bad))
    return sk_error("out of range: tried to access index %lld on a tensor of %lld elements.", (long long)bad,
                    (long long)self->numel);
  SkTensor *flat = NULL;
  if (sk_reshape(&flat, self, (SkIntList){&all, 1})) return -1;
  SkTensor *ix[1] = {(SkTensor *)index};
  int rc = sk_index(result, flat, (SkTensorList){ix, 1});
  sk_tensor_release(flat);
  return rc;
}

int sk_math_take_out(const SkTensor *self, const SkTensor *index, SkTensor *out) { SK_OUT_FROM(sk_take(&r, self, index), out, SK_READS(self, index)); }
/* }==== */

/* {==== put ==== */
/* self seen flat: a view when contiguous, else a contiguous copy written back */
int sk_math_put_(SkTensor *self, const SkTensor *index, const SkTensor *source, int accumulate) {
  if (index->dtype != SK_DTYPE_INT64)
    return sk_error("put_(): Expected a long tensor for index, but got %s", sk_dtype_name(index->dtype));
  if (self->dtype != source->dtype)
    return sk_error("put_(): self and source expected to have the same dtype, but got self.dtype = %s and source.dtype = %s",
                    sk_dtype_name(self->dtype), sk_dtype_name(source->dtype));
  if (index->numel != source->numel)
    return sk_error("put_(): Expected source and index to have the same number of elements, but got source.numel() = %lld, "
                    "index.numel() = %lld", (long long)source->numel, (long long)index->numel);
  int64_t bad, all = -1;
  if (first_out_of_range(index, self->numel, 1, &bad))
    return sk_error("out of range: tried to access index %lld on a tensor of %lld elements.", (long long)bad,
                    (long long)self->numel);
  int contiguous = sk_tensor_is_contiguous(self);
  SkTensor *c = NULL, *flat = NULL;
  int rc = contiguous ? 0 : sk_contiguous(&c, self, 0);
  if (!rc) rc = sk_view(&flat, contiguous ? self : c, (SkIntList){&all, 1});
  if (!rc) rc = put_along(flat, 0, index, source, accumulate);
  if (!rc && !contiguous) rc = sk_copy_(self, c, 0);
  sk_tensor_release(flat), sk_tensor_release(c);
  return rc;
}

int sk_math_put(SkTensor **result, const SkTensor *self, const SkTensor *index, const SkTensor *source, int accumulate) {
  FUNCTIONAL_OF(sk_put_(self_, index, source, accumulate));
}
/* }==== */

/* {==== index_add, index_copy, index_fill ==== */
int sk_math_index_add_(SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source, SkScalar alpha) {
  int64_t d, bad;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (!is_index_dtype(index->dtype))
    return sk_error("index_add_(): Expected dtype int32/int64 for index but got: %s", sk_dtype_name(index->dtype));
  if (self->dtype != source->dtype)
    return sk_error("index_add_(): self (%s) and source (%s) must have the same scalar type", sk_dtype_name(self->dtype),
                    sk_dtype_name(source->dtype));
  if (index_func_check("index_add_", self, dim, index, source, &d)) return -1;
  if (!sk_dtype_is_floating(self->dtype) && alpha.kind == SK_SCALAR_FLOAT)
    return sk_error("For integral input tensors, argument alpha must not be a floating point number.");
  if (first_out_of_range(index, self->ndim ? self->sizes[d] : 1, 0, &bad)) return sk_error("index out of range in self");
  if (sk_scalar_to_double(alpha) == 1.0) return put_along(self, d, index, source, 1);
  /* alpha·source in opmath (a half type's products stay float32 until put_along's one rounding) */
  SkDType ot = sk_opmath_dtype(self->dtype);
  SkTensor *scaled = NULL, *src = sk_dtype_is_half(source->dtype) ? NULL : (SkTensor *)source;
  int rc = src ? 0 : sk_to_dtype(&src, source, ot, 0, 0, -1);
  if (!rc) rc = sk_mul_Scalar(&scaled, src, alpha);
  if (src != source) sk_tensor_release(src);
  if (!rc && scaled->dtype != ot) { /* an integer alpha on an integer source keeps its dtype */
    SkTensor *c = NULL;
    rc = sk_to_dtype(&c, scaled, ot, 0, 0, -1);
    sk_tensor_release(scaled);
    scaled = c;
  }
  if (!rc) rc = put_along(self, d, index, scaled, 1);
  sk_tensor_release(scaled);
  return rc;
}

int sk_math_index_add(SkTensor **result, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source,
                      SkScalar alpha) {
  FUNCTIONAL_OF(sk_index_add_(self_, dim, index, source, alpha));
}

int sk_math_index_add_out(const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source, SkScalar alpha,
                          SkTensor *out) {
  SK_OUT_FROM(sk_index_add(&r, self, dim, index, source, alpha), out, SK_READS(self, index, source));
}

int sk_math_index_copy_(SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source) {
  int64_t d, bad;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (index->dtype != SK_DTYPE_INT64)
    return sk_error("index_copy_(): Expected a long tensor for index, but got %s", sk_dtype_name(index->dtype));
  if (self->dtype != source->dtype)
    return sk_error("index_copy_(): self and source expected to have the same dtype, but got (self) %s and (source) %s",
                    sk_dtype_name(self->dtype), sk_dtype_name(source->dtype));
  if (index_func_check("index_copy_", self, dim, index, source, &d)) return -1;
  int64_t size = self->ndim ? self->sizes[d] : 1;
  if (first_out_of_range(index, size, 0, &bad))
    return sk_error("index_copy_(): index %lld is out of bounds for dimension %lld with size %lld", (long long)bad,
                    (long long)d, (long long)size);
  return put_along(self, d, index, source, 0);
}

int sk_math_index_copy(SkTensor **result, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source) {
  FUNCTIONAL_OF(sk_index_copy_(self_, dim, index, source));
}

int sk_math_index_copy_out(const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source, SkTensor *out) {
  SK_OUT_FROM(sk_index_copy(&r, self, dim, index, source), out, SK_READS(self, index, source));
}

/* value: a 0-dim tensor of self's dtype on self's device, broadcast over the indexed slices */
static int index_fill_value(SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *value) {
  int64_t d, bad;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (index->dtype != SK_DTYPE_INT64) return sk_error("index_fill_(): Expected dtype int64 for index.");
  if (index->ndim > 1) return sk_error("index_fill_(): Index is supposed to be a vector");
  int64_t size = self->ndim ? self->sizes[d] : 1;
  if (first_out_of_range(index, size, 1, &bad))
    return sk_error("index %lld is out of bounds for dimension %lld with size %lld", (long long)bad, (long long)d,
                    (long long)size);
  SkTensor *v = NULL, *s = NULL, *ix = NULL;
  AtDim a;
  int64_t all = -1;
  int rc = sk_to_device(&v, value, self->device, (int)self->dtype, 0, 0, -1);
  if (!rc) rc = as_vector(&s, self);
  if (!rc) rc = sk_reshape(&ix, index, (SkIntList){&all, 1});
  if (!rc) rc = sk_index_put_(s, at_dim(&a, d, ix), v, 0);
  sk_tensor_release(v), sk_tensor_release(s), sk_tensor_release(ix);
  return rc;
}

int sk_math_index_fill__int_Tensor(SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *value) {
  if (value->ndim != 0)
    return sk_error("index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).", value->ndim);
  return index_fill_value(self, dim, index, value);
}

int sk_math_index_fill__int_Scalar(SkTensor *self, int64_t dim, const SkTensor *index, SkScalar value) {
  if (value.kind == SK_SCALAR_NONE) return sk_error("index_fill_: argument 'value' must be a number, got None");
  SkTensor *v = sk_tensor_scalar(value, self->dtype);
  if (!v) return -1;
  int rc = index_fill_value(self, dim, index, v);
  sk_tensor_release(v);
  return rc;
}

int sk_math_index_fill_int_Scalar(SkTensor **result, const SkTensor *self, int64_t dim, const SkTensor *index, SkScalar value) {
  FUNCTIONAL_OF(sk_index_fill__int_Scalar(self_, dim, index, value));
}

int sk_math_index_fill_int_Tensor(SkTensor **result, const SkTensor *self, int64_t dim, const SkTensor *index,
                                  const SkTensor *value) {
  FUNCTIONAL_OF(sk_index_fill__int_Tensor(self_, dim, index, value));
}
/* }==== */

/* {==== masked_scatter ==== */
/* The true elements of mask (broadcast to self), in order, take source's first elements.
** Their count is read from the data (a CPU copy of a device mask's sum): Meta cannot. */
int sk_math_masked_scatter_(SkTensor *self, const SkTensor *mask, const SkTensor *source) {
  if (mask->dtype != SK_DTYPE_BOOL && mask->dtype != SK_DTYPE_UINT8)
    return sk_error("masked_scatter_ only supports boolean masks, but got mask with dtype %s", sk_dtype_name(mask->dtype));
  if (self->dtype != source->dtype)
    return sk_error("masked_scatter: expected self and source to have same dtypes but got %s and %s",
                    sk_dtype_name(self->dtype), sk_dtype_name(source->dtype));
  if (mask->device.type == SK_DEVICE_META || self->device.type == SK_DEVICE_META)
    return sk_error("masked_scatter_: the elements taken depend on the values of 'mask', which Meta tensors do not have");
  SkTape t = {0}, *tp = &t;
  int64_t all = -1;
  SkTensor *m = SK_TAPE_STEP(tp, sk_expand(&r, mask, (SkIntList){self->sizes, self->ndim}, 0));
  if (m && m->dtype != SK_DTYPE_BOOL) m = SK_TAPE_STEP(tp, sk_to_dtype(&r, m, SK_DTYPE_BOOL, 0, 0, -1));
  SkTensor *count = SK_TAPE_STEP(tp, sk_to_device(&r, SK_TAPE_STEP(tp, sk_sum(&r, m, -1)), SK_CPU, -1, 0, 0, -1));
  if (tp->rc) return sk_tape_free(tp);
  int64_t n = sk_load_int64(sk_tensor_data(count), count->dtype);
  if (source->numel < n) {
    sk_tape_free(tp);
    return sk_error("Number of elements of source < number of ones in mask");
  }
  SkTensor *vals = SK_TAPE_STEP(tp, sk_narrow(&r, SK_TAPE_STEP(tp, sk_reshape(&r, source, (SkIntList){&all, 1})), 0, 0, n));
  SkTensor *ml[1] = {m};
  if (vals && sk_index_put_(self, (SkTensorList){ml, 1}, vals, 0)) sk_tape_keep(tp, -1, NULL);
  return sk_tape_free(tp);
}

/* self and mask broadcast together first (PyTorch's expand_outplace) */
int sk_math_masked_scatter(SkTensor **result, const SkTensor *self, const SkTensor *mask, const SkTensor *source) {
  const SkTensor *pair[2] = {self, mask};
  SkTensorList b = {NULL, 0};
  if (sk_broadcast_tensors(&b, (SkTensorList){(SkTensor *const *)pair, 2})) return -1;
  SkTensor *c = NULL;
  int rc = sk_clone(&c, b.data[0], 0);
  if (!rc) rc = sk_masked_scatter_(c, b.data[1], source);
  for (int i = 0; i < b.n; i++) sk_tensor_release(b.data[i]);
  free((void *)b.data);
  if (rc) { sk_tensor_release(c); return -1; }
  *result = c;
  return 0;
}
/* }==== */

/* {==== isin ==== */
/* test_elements sorted; each element's insertion point found by searchsorted, and the entry
** there compared: O((n + m) log m), NaN never in (== is false for it). */
int sk_math_isin_Tensor_Tensor(SkTensor **result, const SkTensor *elements, const SkTensor *test_elements, int assume_unique,
                               int invert) {
  (void)assume_unique;
  if (elements->dtype == SK_DTYPE_BOOL || test_elements->dtype == SK_DTYPE_BOOL)
    return sk_error("Unsupported input type encountered for isin(): bool");
  const SkTensor *pair[2] = {elements, test_elements};
  SkDType dt = sk_result_type(2, pair);
  SkTape t = {0}, *tp = &t;
  SkTensor *v = NULL, *ix = NULL;
  int64_t all = -1, m = test_elements->numel;
  SkTensor *e = elements->dtype == dt ? (SkTensor *)elements : SK_TAPE_STEP(tp, sk_to_dtype(&r, elements, dt, 0, 0, -1));
  if (m == 0) {
    SkTensor *z = SK_TAPE_STEP(tp, sk_full_like(&r, e, sk_scalar_bool(invert != 0), SK_DTYPE_BOOL, -1, NONE_DEVICE, -1, -1));
    if (z) *result = sk_tape_take(tp, z);
    return sk_tape_free(tp);
  }
  SkTensor *flat = SK_TAPE_STEP(tp, sk_reshape(&r, test_elements, (SkIntList){&all, 1}));
  if (flat && flat->dtype != dt) flat = SK_TAPE_STEP(tp, sk_to_dtype(&r, flat, dt, 0, 0, -1));
  if (!tp->rc) {
    int rc = sk_sort_stable(&v, &ix, flat, 0, 0, 0);
    sk_tape_keep(tp, rc, v);
    if (!rc) sk_tape_keep(tp, 0, ix);
  }
  SkTensor *e1 = SK_TAPE_STEP(tp, sk_reshape(&r, e, (SkIntList){&all, 1}));
  SkTensor *pos = SK_TAPE_STEP(tp, sk_searchsorted(&r, v, e1, 0, 0, NULL, NULL));
  pos = SK_TAPE_STEP(tp, sk_clamp_max(&r, pos, sk_scalar_int(m - 1)));
  SkTensor *hit = SK_TAPE_STEP(tp, sk_eq(&r, SK_TAPE_STEP(tp, sk_gather(&r, v, 0, pos, 0)), e1));
  if (invert) hit = SK_TAPE_STEP(tp, sk_logical_not(&r, hit));
  SkTensor *out = SK_TAPE_STEP(tp, sk_view(&r, hit, (SkIntList){elements->sizes, elements->ndim}));
  if (out) *result = sk_tape_take(tp, out);
  return sk_tape_free(tp);
}

int sk_math_isin_Tensor_Tensor_out(const SkTensor *elements, const SkTensor *test_elements, int assume_unique, int invert,
                                   SkTensor *out) {
  SK_OUT_FROM(sk_isin_Tensor_Tensor(&r, elements, test_elements, assume_unique, invert), out, SK_READS(elements, test_elements));
}

/* the scalar as a 0-dim tensor on `like`'s device, of the dtype its wrapped number would
** promote to with `like` (PyTorch's wrapped_scalar_tensor) */
static int scalar_like(SkTensor **r, SkScalar s, const SkTensor *like) {
  SkTensor *w = sk_tensor_wrap_number(s);
  if (!w) return -1;
  const SkTensor *pair[2] = {like, w};
  SkDType dt = like->dtype == SK_DTYPE_BOOL && s.kind != SK_SCALAR_BOOL ? w->dtype : sk_result_type(2, pair);
  sk_tensor_release(w);
  return sk_full(r, (SkIntList){NULL, 0}, s, (int)dt, -1, like->device, -1);
}

int sk_math_isin_Tensor_Scalar(SkTensor **result, const SkTensor *elements, SkScalar test_element, int assume_unique, int invert) {
  SkTensor *w = NULL;
  if (scalar_like(&w, test_element, elements)) return -1;
  int rc = sk_isin_Tensor_Tensor(result, elements, w, assume_unique, invert);
  sk_tensor_release(w);
  return rc;
}

int sk_math_isin_Scalar_Tensor(SkTensor **result, SkScalar element, const SkTensor *test_elements, int assume_unique, int invert) {
  SkTensor *w = NULL;
  if (scalar_like(&w, element, test_elements)) return -1;
  int rc = sk_isin_Tensor_Tensor(result, w, test_elements, assume_unique, invert);
  sk_tensor_release(w);
  return rc;
}
/* }==== */

/* {==== repeat_interleave ==== */
/* [0]*r0 ++ [1]*r1 ++ ...: computed on the CPU from repeats' values (a CPU copy of device
** ones), moved to repeats' device. Meta has no values to count. */
int sk_math_repeat_interleave_Tensor(SkTensor **result, const SkTensor *repeats, SkOptInt output_size) {
  if (repeats->ndim != 1) return sk_error("repeat_interleave only accept 1D vector as repeat");
  if (!is_index_dtype(repeats->dtype)) return sk_error("repeats has to be Long or Int tensor");
  if (repeats->device.type == SK_DEVICE_META)
    return sk_error("repeat_interleave: the result's size depends on the values of 'repeats', which Meta tensors do not have");
  SkTensor *c = NULL;
  if (sk_to_device(&c, repeats, SK_CPU, SK_DTYPE_INT64, 0, 0, -1)) return -1;
  const int64_t *p = sk_tensor_data(c);
  int64_t total = 0, n = c->numel, st = c->ndim ? c->strides[0] : 1;
  for (int64_t i = 0; i < n; i++) {
    if (p[i * st] < 0) { sk_tensor_release(c); return sk_error("repeats can not be negative"); }
    if (sk_add_overflow(total, p[i * st], &total)) { sk_tensor_release(c); return sk_error("repeat_interleave: the result is too large"); }
  }
  if (output_size.has && output_size.v != total) {
    sk_tensor_release(c);
    return sk_error("allocated size does not match required size");
  }
  SkTensor *idx = sk_tensor_empty(1, &total, SK_DTYPE_INT64, SK_CPU);
  if (!idx) { sk_tensor_release(c); return -1; }
  int64_t *q = sk_tensor_data(idx);
  for (int64_t i = 0, k = 0; i < n; i++)
    for (int64_t j = 0; j < p[i * st]; j++) q[k++] = i;
  sk_tensor_release(c);
  int rc = sk_to_device(result, idx, repeats->device, -1, 0, 0, -1);
  sk_tensor_release(idx);
  return rc;
}

/* index_select along dim (self flattened when dim is None) of repeat_interleave(repeats) */
int sk_math_repeat_interleave_self_Tensor(SkTensor **result, const SkTensor *self, const SkTensor *repeats, SkOptInt dim,
                                          SkOptInt output_size) {
  int64_t all = -1, d = 0;
  SkTape t = {0}, *tp = &t;
  const SkTensor *x = dim.has ? self : SK_TAPE_STEP(tp, sk_reshape(&r, self, (SkIntList){&all, 1}));
  if (!x) return sk_tape_free(tp);
  if (dim.has && sk_wrap_dim(dim.v, self->ndim, "dim", &d)) { sk_tape_free(tp); return -1; }
  int64_t size = x->ndim ? x->sizes[d] : 1;
  const SkTensor *rep = repeats;
  if (repeats->ndim == 0 || (repeats->ndim == 1 && repeats->sizes[0] == 1)) /* one count for every slice */
    rep = SK_TAPE_STEP(tp, sk_expand(&r, SK_TAPE_STEP(tp, sk_reshape(&r, repeats, (SkIntList){(int64_t[]){1}, 1})),
                                     (SkIntList){&size, 1}, 0));
  else if (repeats->ndim == 1 && repeats->sizes[0] != size) {
    sk_tape_free(tp);
    return sk_error("repeats must have the same size as input along dim");
  }
  SkTensor *idx = SK_TAPE_STEP(tp, sk_repeat_interleave(&r, rep, output_size));
  SkTensor *xd = (SkTensor *)x;
  if (idx && idx->device.type != x->device.type) idx = SK_TAPE_STEP(tp, sk_to_device(&r, idx, x->device, -1, 0, 0, -1));
  SkTensor *out = SK_TAPE_STEP(tp, sk_index_select(&r, xd, d, idx));
  if (out) *result = sk_tape_take(tp, out);
  return sk_tape_free(tp);
}

/* each slice along dim repeated `repeats` times: unsqueeze after dim, expand, merge the two */
int sk_math_repeat_interleave_self_int(SkTensor **result, const SkTensor *self, int64_t repeats, SkOptInt dim,
                                       SkOptInt output_size) {
  if (repeats < 0) return sk_error("repeats can not be negative");
  int64_t all = -1, d = 0;
  SkTape t = {0}, *tp = &t;
  const SkTensor *x = dim.has && self->ndim ? self : SK_TAPE_STEP(tp, sk_reshape(&r, self, (SkIntList){&all, 1}));
  if (!x) return sk_tape_free(tp);
  if (dim.has && sk_wrap_dim(dim.v, self->ndim, "dim", &d)) { sk_tape_free(tp); return -1; }
  int64_t total;
  if (sk_mul_overflow(x->sizes[d], repeats, &total)) { sk_tape_free(tp); return sk_error("repeat_interleave: the result is too large"); }
  if (output_size.has && output_size.v != total) { sk_tape_free(tp); return sk_error("allocated size does not match required size"); }
  int64_t es[SK_MAX_DIMS + 1];
  int n = 0;
  if (x->ndim + 1 > SK_MAX_DIMS) { sk_tape_free(tp); return sk_error("repeat_interleave: too many dimensions"); }
  for (int k = 0; k < x->ndim; k++) {
    es[n++] = x->sizes[k];
    if (k == d) es[n++] = repeats;
  }
  SkTensor *e = SK_TAPE_STEP(tp, sk_expand(&r, SK_TAPE_STEP(tp, sk_unsqueeze(&r, x, d + 1)), (SkIntList){es, n}, 0));
  SkTensor *out = SK_TAPE_STEP(tp, sk_flatten_using_ints(&r, e, d, d + 1));
  if (out && out->storage == x->storage) out = SK_TAPE_STEP(tp, sk_clone(&r, out, 0)); /* a result of its own (repeats 1) */
  if (out) *result = sk_tape_take(tp, out);
  return sk_tape_free(tp);
}
/* }==== */

/* {==== searchsorted.Scalar, bucketize ==== */
/* the scalar as a 0-dim tensor on the boundaries' device (PyTorch's scalar_to_tensor) */
static int scalar_on(SkTensor **r, SkScalar s, const SkTensor *like) {
  SkTensor *w = sk_tensor_scalar(s, s.kind == SK_SCALAR_FLOAT ? SK_DTYPE_FLOAT64 : s.kind == SK_SCALAR_BOOL ? SK_DTYPE_BOOL
                                                                                                          : SK_DTYPE_INT64);
  if (!w) return -1;
  int rc = sk_to_device(r, w, like->device, -1, 0, 0, -1);
  sk_tensor_release(w);
  return rc;
}

int sk_math_searchsorted_Scalar(SkTensor **result, const SkTensor *sorted_sequence, SkScalar self, int out_int32, int right,
                                const char *side, const SkTensor *sorter) {
  SkTensor *v = NULL;
  if (scalar_on(&v, self, sorted_sequence)) return -1;
  int rc = sk_searchsorted(result, sorted_sequence, v, out_int32, right, side, sorter);
  sk_tensor_release(v);
  return rc;
}

static int check_boundaries(const SkTensor *boundaries) {
  if (boundaries->ndim != 1)
    return sk_error("boundaries tensor must be 1 dimension, but got dim(%d)", boundaries->ndim);
  return 0;
}

int sk_math_bucketize_Tensor(SkTensor **result, const SkTensor *self, const SkTensor *boundaries, int out_int32, int right) {
  if (check_boundaries(boundaries)) return -1;
  return sk_searchsorted(result, boundaries, self, out_int32, right, NULL, NULL);
}

int sk_math_bucketize_Tensor_out(const SkTensor *self, const SkTensor *boundaries, int out_int32, int right, SkTensor *out) {
  if (check_boundaries(boundaries)) return -1;
  return sk_searchsorted_Tensor_out(boundaries, self, out_int32, right, NULL, NULL, out);
}

int sk_math_bucketize_Scalar(SkTensor **result, SkScalar self, const SkTensor *boundaries, int out_int32, int right) {
  if (check_boundaries(boundaries)) return -1;
  return sk_searchsorted_Scalar(result, boundaries, self, out_int32, right, NULL, NULL);
}
/* }==== */
