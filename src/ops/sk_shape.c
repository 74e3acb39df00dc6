/*
** sk_shape.c — composite shape and indexing ops
** stack, split, split_with_sizes, chunk, unbind, flatten, unflatten,
** repeat, tile, the functional index_put and masked_fill, masked_fill_ with
** a tensor value, sort / argsort over sort.stable, and embedding.
** Everything here calls the dispatched API only, so each op works on any
** backend that provides the ops it is made of (Meta included). split,
** chunk and unbind return views (narrow / select); repeat and tile copy.
** Ownership: arguments are borrowed; a Tensor[] result is a malloc'ed array
** of owned references, handed over only on success.
*/
#include "sk_plan.h"
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_checked.h"
#include "sk_error.h"
#include "sk_composite_util.h"

#include <stdlib.h>
#include <string.h>

static const int64_t no_dims[1] = {0}; /* data of an empty (not None) int list */

/* {==== stack ==== */
/* tensors each unsqueezed at dim (wrapped over ndim + 1), after PyTorch's checks. */
static int stack_views(SkTensorList tensors, int64_t dim, SkTensor ***views, int64_t *wrapped) {
  char a[128], b[128];
  if (tensors.n == 0) return sk_error("stack expects a non-empty TensorList");
  for (int i = 0; i < tensors.n; i++)
    if (!tensors.data[i]) return sk_error("stack: argument 'tensors' has no tensor at position %d", i);
  const SkTensor *t0 = tensors.data[0];
  for (int i = 1; i < tensors.n; i++)
    if (!sk_tensor_same_shape(t0, tensors.data[i]))
      return sk_error("stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d",
                      sk_shape_str(t0->ndim, t0->sizes, a, sizeof a),
                      sk_shape_str(tensors.data[i]->ndim, tensors.data[i]->sizes, b, sizeof b), i);
  if (sk_wrap_dim(dim, t0->ndim + 1, "dim", wrapped)) return -1;
  SkTensor **v = sk_list_new(tensors.n, "stack");
  if (!v) return -1;
  for (int i = 0; i < tensors.n; i++)
    if (sk_unsqueeze(&v[i], tensors.data[i], *wrapped)) { sk_list_free(v, tensors.n); return -1; }
  *views = v;
  return 0;
}

int sk_default_stack(SkTensor **result, SkTensorList tensors, int64_t dim) {
  SkTensor **v;
  int64_t d;
  if (stack_views(tensors, dim, &v, &d)) return -1;
  int rc = sk_cat(result, (SkTensorList){v, tensors.n}, d);
  sk_list_free(v, tensors.n);
  return rc;
}

int sk_default_stack_out(SkTensorList tensors, int64_t dim, SkTensor *out) {
  SkTensor **v;
  int64_t d;
  if (stack_views(tensors, dim, &v, &d)) return -1;
  int rc = sk_cat_out((SkTensorList){v, tensors.n}, d, out);
  sk_list_free(v, tensors.n);
  return rc;
}
/* }==== */

/* {==== split, chunk, unbind ==== */
int sk_default_split(SkTensorList *result, const SkTensor *self, int64_t split_size, int64_t dim) {
  int64_t d;
  if (self->ndim == 0) return sk_error("split expects at least a 1-dimensional tensor");
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (split_size < 0)
    return sk_error("split expects split_size be non-negative, but got split_size=%lld", (long long)split_size);
  int64_t size = self->sizes[d];
  if (split_size == 0 && size != 0)
    return sk_error("split_size can only be 0 if dimension size is 0, but got dimension size of %lld", (long long)size);
  int64_t n = split_size ? sk_ceil_div(size, split_size) : 1;
  if (n < 1) n = 1;
  SkTensor **a = sk_list_new(n, "split");
  if (!a) return -1;
  int rc = 0;
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t start = i * split_size, len = size - start < split_size ? size - start : split_size;
    rc = sk_narrow(&a[i], self, d, start, len);
  }
  return sk_list_done(result, a, (int)n, rc);
}

int sk_default_split_with_sizes(SkTensorList *result, const SkTensor *self, SkIntList split_sizes, int64_t dim) {
  char buf[256];
  int64_t d, sum = 0;
  if (self->ndim == 0) return sk_error("split expects at least a 1-dimensional tensor");
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  const char *shown = sk_shape_str(split_sizes.n, split_sizes.data ? split_sizes.data : no_dims, buf, sizeof buf);
  int overflow = 0;
  for (int i = 0; i < split_sizes.n; i++) {
    if (split_sizes.data[i] < 0)
      return sk_error("split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=%s", shown);
    overflow |= sk_add_overflow(sum, split_sizes.data[i], &sum);
  }
  if (overflow || sum != self->sizes[d])
    return sk_error("split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at dimension "
                    "%lld), but got split_sizes=%s", (long long)self->sizes[d], (long long)d, shown);
  SkTensor **a = sk_list_new(split_sizes.n, "split_with_sizes");
  if (!a) return -1;
  int rc = 0;
  int64_t start = 0;
  for (int i = 0; i < split_sizes.n && !rc; start += split_sizes.data[i], i++)
    rc = sk_narrow(&a[i], self, d, start, split_sizes.data[i]);
  return sk_list_done(result, a, split_sizes.n, rc);
}

int sk_math_split_sizes(SkTensorList *result, const SkTensor *self, SkIntList split_size, int64_t dim) {
  return sk_split_with_sizes(result, self, split_size, dim);
}

/* chunks of ceil(size / chunks); fewer when they run out, and `chunks` empty ones from an empty dim. */
int sk_math_chunk(SkTensorList *result, const SkTensor *self, int64_t chunks, int64_t dim) {
  int64_t d;
  if (self->ndim == 0) return sk_error("chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) return sk_error("chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  int64_t size = self->sizes[d], split_size = sk_ceil_div(size, chunks);
  if (split_size == 0 && size == 0) {
    if (chunks > 1 << 20) return sk_error("chunk: %lld chunks are too many", (long long)chunks);
    int64_t *zeros = calloc((size_t)chunks, sizeof *zeros);
    if (!zeros) return sk_error("out of memory");
    int rc = sk_split_with_sizes(result, self, (SkIntList){zeros, (int)chunks}, d);
    free(zeros);
    return rc;
  }
  return sk_split(result, self, split_size, d);
}

int sk_default_unbind(SkTensorList *result, const SkTensor *self, int64_t dim) {
  int64_t d;
  if (self->ndim == 0) return sk_error("Dimension specified as %lld but tensor has no dimensions", (long long)dim);
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  int64_t n = self->sizes[d];
  SkTensor **a = sk_list_new(n, "unbind");
  if (!a) return -1;
  int rc = 0;
  for (int64_t i = 0; i < n && !rc; i++) rc = sk_select_int(&a[i], self, d, i);
  return sk_list_done(result, a, (int)n, rc);
}
/* }==== */

/* {==== flatten, unflatten ==== */
int sk_math_flatten(SkTensor **result, const SkTensor *self, int64_t start_dim, int64_t end_dim) {
  int64_t s, e, one = 1, sizes[SK_MAX_DIMS];
  if (self->ndim == 0) return sk_reshape(result, self, (SkIntList){&one, 1});
  if (sk_wrap_dim(start_dim, self->ndim, "start_dim", &s) || sk_wrap_dim(end_dim, self->ndim, "end_dim", &e)) return -1;
  if (s > e) return sk_error("flatten() has invalid args: start_dim cannot come after end_dim");
  if (s == e) { *result = sk_tensor_retain((SkTensor *)self); return 0; }
  int n = 0;
  for (int d = 0; d < s; d++) sizes[n++] = self->sizes[d];
  sizes[n] = 1;
  for (int64_t d = s; d <= e; d++) sizes[n] *= self->sizes[d]; /* a partial numel of self: fits */
  n++;
  for (int64_t d = e + 1; d < self->ndim; d++) sizes[n++] = self->sizes[d];
  return sk_reshape(result, self, (SkIntList){sizes, n});
}

int sk_math_unflatten(SkTensor **result, const SkTensor *self, int64_t dim, SkIntList sizes) {
  char buf[256];
  int64_t d, shape[SK_MAX_DIMS];
  if (self->ndim == 0) return sk_error("unflatten: argument 'self' must have at least one dimension");
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (sizes.n == 0) return sk_error("unflatten: sizes must be non-empty");
  if (self->ndim - 1 + sizes.n > SK_MAX_DIMS)
    return sk_error("unflatten: the result would have %d dimensions, at most %d are supported", self->ndim - 1 + sizes.n,
                    SK_MAX_DIMS);
  int infer = -1, n = 0;
  for (int k = 0; k < d; k++) shape[n++] = self->sizes[k];
  for (int i = 0; i < sizes.n; i++) {
    if (sizes.data[i] == -1) {
      if (infer >= 0) return sk_error("unflatten: can only specify one unknown dimension size with -1 (argument 'sizes')");
      infer = i;
    } else if (sizes.data[i] < 0) {
      return sk_error("unflatten: invalid size %lld in argument 'sizes'", (long long)sizes.data[i]);
    }
    shape[n++] = sizes.data[i] == -1 ? 1 : sizes.data[i];
  }
  for (int64_t k = d + 1; k < self->ndim; k++) shape[n++] = self->sizes[k];
  int64_t size = self->sizes[d], prod = sk_numel(sizes.n, shape + d);
  if (prod < 0)
    return sk_error_context("unflatten: argument 'sizes' %s", sk_shape_str(sizes.n, sizes.data, buf, sizeof buf));
  if (infer >= 0 && prod > 0 && size % prod == 0) shape[d + infer] = size / prod;
  else if (infer >= 0 || prod != size)
    return sk_error("unflatten: Provided sizes %s don't multiply up to the size of dim %lld (%lld) in the input tensor",
                    sk_shape_str(sizes.n, sizes.data, buf, sizeof buf), (long long)d, (long long)size);
  return sk_view(result, self, (SkIntList){shape, n});
}
/* }==== */

/* {==== repeat, tile ==== */
/* One repeat whose interleaved view fits in SK_MAX_DIMS: self (padded to n dims) is seen as
** [r0, s0, r1, s1, ...] (a pair only where both exceed 1), expanded, cloned and viewed back. */
static int repeat_once(SkTensor **result, const SkTensor *self, const int64_t *rep, int n) {
  int64_t padded[SK_MAX_DIMS], ushape[SK_MAX_DIMS], eshape[SK_MAX_DIMS], out[SK_MAX_DIMS];
  int lead = n - self->ndim, nu = 0;
  for (int i = 0; i < n; i++) {
    padded[i] = i < lead ? 1 : self->sizes[i - lead];
    out[i] = padded[i] * rep[i];
    if (rep[i] != 1 && padded[i] != 1) { ushape[nu] = 1; eshape[nu++] = rep[i]; }
    ushape[nu] = padded[i];
    eshape[nu++] = padded[i] == 1 ? rep[i] : padded[i];
  }
  SkTensor *u = NULL, *e = NULL, *c = NULL;
  int rc = sk_reshape(&u, self, (SkIntList){nu ? ushape : no_dims, nu});
  if (!rc) rc = sk_expand(&e, u, (SkIntList){nu ? eshape : no_dims, nu}, 0);
  if (!rc) rc = sk_clone(&c, e, -1);
  if (!rc) rc = sk_view(result, c, (SkIntList){n ? out : no_dims, n});
  sk_tensor_release(u);
  sk_tensor_release(e);
  sk_tensor_release(c);
  return rc;
}

static int repeat_dims(SkTensor **result, const SkTensor *self, const int64_t *rep, int n) {
  int extra = 0, lead = n - self->ndim;
  for (int i = 0; i < n; i++) extra += rep[i] != 1 && (i < lead ? 1 : self->sizes[i - lead]) != 1;
  if (n + extra <= SK_MAX_DIMS) return repeat_once(result, self, rep, n);
  if (extra == 1)
    return sk_error("repeat: a %d-dimensional repeat needs %d dimensions internally, at most %d are supported", n,
                    n + extra, SK_MAX_DIMS);
  /* two passes: the first half of the dims, then the rest */
  int64_t first[SK_MAX_DIMS], second[SK_MAX_DIMS];
  for (int i = 0; i < n; i++) first[i] = i < n / 2 ? rep[i] : 1, second[i] = i < n / 2 ? 1 : rep[i];
  SkTensor *mid = NULL;
  if (repeat_dims(&mid, self, first, n)) return -1;
  int rc = repeat_dims(result, mid, second, n);
  sk_tensor_release(mid);
  return rc;
}

int sk_default_repeat(SkTensor **result, const SkTensor *self, SkIntList repeats) {
  char buf[256];
  if (repeats.n < self->ndim)
    return sk_error("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  if (repeats.n > SK_MAX_DIMS)
    return sk_error("argument 'repeats' has %d dimensions, but tensors have at most %d", repeats.n, SK_MAX_DIMS);
  int64_t out[SK_MAX_DIMS];
  int lead = repeats.n - self->ndim;
  for (int i = 0; i < repeats.n; i++) {
    if (repeats.data[i] < 0)
      return sk_error("Trying to create tensor with negative dimension %lld: %s (argument 'repeats')",
                      (long long)repeats.data[i], sk_shape_str(repeats.n, repeats.data, buf, sizeof buf));
    if (sk_mul_overflow(i < lead ? 1 : self->sizes[i - lead], repeats.data[i], &out[i]))
      return sk_error("repeat: size %lld at dim %d times %lld repeats overflows (argument 'repeats')",
                      (long long)self->sizes[i - lead], i, (long long)repeats.data[i]);
  }
  if (sk_numel(repeats.n, out) < 0)
    return sk_error_context("repeat: the result size %s (argument 'repeats')", sk_shape_str(repeats.n, out, buf, sizeof buf));
  /* every intermediate shape below has the result's numel, so none overflows */
  return repeat_dims(result, self, repeats.data ? repeats.data : no_dims, repeats.n);
}

int sk_math_tile(SkTensor **result, const SkTensor *self, SkIntList dims) {
  int64_t rep[SK_MAX_DIMS];
  if (dims.n >= self->ndim) return sk_repeat(result, self, dims);
  int lead = self->ndim - dims.n;
  for (int i = 0; i < self->ndim; i++) rep[i] = i < lead ? 1 : dims.data[i - lead];
  return sk_repeat(result, self, (SkIntList){rep, self->ndim});
}
/* }==== */

/* {==== Functional index_put and masked_fill ==== */
int sk_default_index_put(SkTensor **result, const SkTensor *self, SkTensorList indices, const SkTensor *values,
                         int accumulate) {
  SkTensor *c = NULL;
  if (sk_clone(&c, self, -1)) return -1;
  if (sk_index_put_(c, indices, values, accumulate)) { sk_tensor_release(c); return -1; }
  *result = c;
  return 0;
}

/* A contiguous copy of self broadcast with mask (PyTorch's expand_outplace, then clone). */
static int broadcast_clone(SkTensor **result, const SkTensor *self, const SkTensor *mask) {
  char a[128], b[128];
  int nd = self->ndim > mask->ndim ? self->ndim : mask->ndim;
  int64_t sizes[SK_MAX_DIMS];
  for (int i = 1; i <= nd; i++) {
    int64_t s = i <= self->ndim ? self->sizes[self->ndim - i] : 1, m = i <= mask->ndim ? mask->sizes[mask->ndim - i] : 1;
    if (s != m && s != 1 && m != 1)
      return sk_error("argument 'mask' (shape %s) is not broadcastable to shape %s",
                      sk_shape_str(mask->ndim, mask->sizes, a, sizeof a), sk_shape_str(self->ndim, self->sizes, b, sizeof b));
    sizes[nd - i] = s == 1 ? m : s;
  }
  SkTensor *e = NULL;
  if (sk_expand(&e, self, (SkIntList){nd ? sizes : no_dims, nd}, 0)) return -1;
  int rc = sk_clone(result, e, -1);
  sk_tensor_release(e);
  return rc;
}

int sk_default_masked_fill_Scalar(SkTensor **result, const SkTensor *self, const SkTensor *mask, SkScalar value) {
  SkTensor *c = NULL;
  if (broadcast_clone(&c, self, mask)) return -1;
  if (sk_masked_fill__Scalar(c, mask, value)) { sk_tensor_release(c); return -1; }
  *result = c;
  return 0;
}

/* The value of a 0-dim tensor as a Scalar (read on the CPU); a Meta value reads as 0. */
static int scalar_of(const SkTensor *value, SkScalar *s) {
  if (value->ndim != 0)
    return sk_error("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                    value->ndim);
  if (sk_values_absent(value)) {
    *s = sk_scalar_int(0);
    return 0;
  }
  SkTensor *c = NULL;
  if (sk_to_device(&c, value, SK_CPU, -1, 0, 0, -1)) return -1;
  const void *p = sk_tensor_data(c);
  *s = sk_dtype_is_floating(c->dtype) ? sk_scalar_float(sk_load_double(p, c->dtype))
     : c->dtype == SK_DTYPE_BOOL      ? sk_scalar_bool((int)sk_load_int64(p, c->dtype))
                                      : sk_scalar_int(sk_load_int64(p, c->dtype));
  sk_tensor_release(c);
  return 0;
}

int sk_default_masked_fill__Tensor(SkTensor *self, const SkTensor *mask, const SkTensor *value) {
  SkScalar s;
  if (scalar_of(value, &s)) return -1;
  return sk_masked_fill__Scalar(self, mask, s);
}

int sk_default_masked_fill_Tensor(SkTensor **result, const SkTensor *self, const SkTensor *mask, const SkTensor *value) {
  SkScalar s;
  if (scalar_of(value, &s)) return -1;
  return sk_default_masked_fill_Scalar(result, self, mask, s);
}
/* }==== */

/* {==== sort, argsort ==== */
int sk_default_sort(SkTensor **values, SkTensor **indices, const SkTensor *self, int64_t dim, int descending) {
  return sk_sort_stable(values, indices, self, 0, dim, descending);
}

int sk_default_sort_values(const SkTensor *self, int64_t dim, int descending, SkTensor *values, SkTensor *indices) {
  return sk_sort_values_stable(self, 0, dim, descending, values, indices);
}

int sk_math_argsort_stable(SkTensor **result, const SkTensor *self, int stable, int64_t dim, int descending) {
  SkTensor *v = NULL;
  int rc = sk_sort_stable(&v, result, self, stable, dim, descending);
  sk_tensor_release(v);
  return rc;
}

int sk_math_argsort(SkTensor **result, const SkTensor *self, int64_t dim, int descending) {
  return sk_math_argsort_stable(result, self, 0, dim, descending);
}
/* }==== */

/* {==== embedding ==== */
/* padding_idx, scale_grad_by_freq and sparse shape only the gradient, which sk does not compute. */
int sk_default_embedding(SkTensor **result, const SkTensor *weight, const SkTensor *indices, int64_t padding_idx,
                         int scale_grad_by_freq, int sparse) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;
  if (weight->ndim != 2) return sk_error("'weight' must be 2-D (argument 'weight' is %dD)", weight->ndim);
  if (indices->dtype != SK_DTYPE_INT64 && indices->dtype != SK_DTYPE_INT32)
    return sk_error("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
                    "but got %s instead (while checking arguments for embedding)", sk_dtype_name(indices->dtype));
  int64_t flat = -1, shape[SK_MAX_DIMS];
  if (indices->ndim + 1 > SK_MAX_DIMS)
    return sk_error("embedding: argument 'indices' has %d dimensions, at most %d are supported", indices->ndim, SK_MAX_DIMS - 1);
  memcpy(shape, indices->sizes, (size_t)indices->ndim * sizeof shape[0]);
  shape[indices->ndim] = weight->sizes[1];
  SkTensor *f = NULL, *rows = NULL;
  int rc = sk_reshape(&f, indices, (SkIntList){&flat, 1});
  if (!rc) rc = sk_index_select(&rows, weight, 0, f);
  if (!rc) rc = sk_view(result, rows, (SkIntList){shape, indices->ndim + 1});
  sk_tensor_release(f);
  sk_tensor_release(rows);
  return rc;
}
/* }==== */
