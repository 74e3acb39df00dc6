/*
** sk_meta_index.c — meta functions of the shape and indexing ops
** cat, flip, roll, tril/triu, diag, gather, scatter, scatter_add,
** index_select, index.Tensor, sort, topk (structured), and the Meta kernels
** of index_put_, masked_fill_, masked_select and nonzero (unstructured).
** Each checks everything PyTorch checks, then declares its outputs; the CPU
** impls assume the checks passed. Written-to tensors (out, or self of an
** in-place variant) may not overlap what the op reads, nor themselves.
** Two shapes depend on data: a boolean mask index needs its count of true
** elements (read here when the mask lives on the CPU), and masked_select /
** nonzero cannot run on Meta at all: their Meta kernels say so.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_checked.h"
#include "sk_error.h"

#include <stdio.h>
#include <string.h>

/* {==== Shared checks ==== */
/* The size and stride of dim d of t, a 0-dim tensor counting as [1] (PyTorch's ensure_nonempty). */
static int64_t size_at(const SkTensor *t, int d) { return t->ndim ? t->sizes[d] : 1; }
static int nonempty_ndim(const SkTensor *t) { return t->ndim ? t->ndim : 1; }

/* The tensor the caller asked to be written (out / in-place self), or NULL. */
static const SkTensor *written(const SkMeta *m) {
  return m->variant == SK_VARIANT_FUNCTIONAL ? NULL : sk_meta_maybe_output(m, 0);
}

/* PyTorch's assert_no_internal_overlap and assert_no_overlap for the written tensor w
** against the inputs read (NULL entries skipped; callers leave out an in-place self). */
static int check_written(const SkMeta *m, int n, const SkTensor *const *in, const char *const *names) {
  const SkTensor *w = written(m);
  return w ? sk_check_written(w, m->out_names[0], 0, n, in, names, 0) : 0;
}

/* out= must not share memory with self either (in-place self is the output itself) */
static int check_out_not_self(const SkMeta *m, const SkTensor *self) {
  if (m->variant != SK_VARIANT_OUT) return 0;
  const SkTensor *s[] = {self};
  static const char *const sn[] = {"self"};
  return check_written(m, 1, s, sn);
}

static int check_same_device(SkDevice d, const SkTensor *t, const char *op, const char *name) {
  if (sk_device_eq(t->device, d)) return 0;
  char a[32], b[32];
  sk_device_format(d, a, sizeof a);
  sk_device_format(t->device, b, sizeof b);
  return sk_error("expected all tensors to be on the same device, but found at least two devices, %s and %s "
                  "(argument '%s' of %s)", a, b, name, op);
}

/* Output i with t's shape and dtype dt. */
static int set_like(SkMeta *m, int i, const SkTensor *t, SkDType dt) {
  return sk_meta_set_output(m, i, t->ndim, t->sizes, NULL, dt);
}
/* }==== */

/* {==== cat ==== */
/* PyTorch skips legacy empty tensors (1-D, size 0) in every shape check. */
static int cat_skipped(const SkTensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

int sk_meta_cat(SkMeta *m, SkTensorList tensors, int64_t dim, sk_precompute_cat_out *precompute) {
  if (tensors.n == 0) return sk_error("torch.cat(): expected a non-empty list of Tensors");
  for (int i = 0; i < tensors.n; i++)
    if (!tensors.data[i]) return sk_error("torch.cat(): argument 'tensors' has no tensor at position %d", i);
  /* devices: the generated wrapper takes the list's first device and checks the others */
  int ref = -1;
  for (int i = 0; i < tensors.n; i++) {
    const SkTensor *t = tensors.data[i];
    if (t->ndim == 0) return sk_error("zero-dimensional tensor (at position %d) cannot be concatenated", i);
    if (ref < 0 && !cat_skipped(t)) ref = i;
  }
  SkDType dt = sk_result_type(tensors.n, (const SkTensor *const *)tensors.data);
  const SkTensor *given = written(m);
  if (given) {
    if (sk_check_cast(dt, given->dtype, "out")) return -1;
    dt = given->dtype;
  }
  if (ref < 0) { /* only legacy empty tensors: an empty result */
    precompute->dim = 0;
    int64_t zero = 0;
    return sk_meta_set_output(m, 0, 1, &zero, NULL, dt);
  }
  const SkTensor *r = tensors.data[ref];
  int64_t d;
  if (sk_wrap_dim(dim, r->ndim, "dim", &d)) return -1;
  int64_t sizes[SK_MAX_DIMS];
  memcpy(sizes, r->sizes, sizeof sizes);
  sizes[d] = 0;
  for (int i = 0; i < tensors.n; i++) {
    const SkTensor *t = tensors.data[i];
    if (cat_skipped(t)) continue;
    if (t->ndim != r->ndim) return sk_error("Tensors must have same number of dimensions: got %d and %d", r->ndim, t->ndim);
    for (int k = 0; k < r->ndim; k++)
      if (k != d && t->sizes[k] != r->sizes[k])
        return sk_error("Sizes of tensors must match except in dimension %lld. Expected size %lld but got size %lld "
                        "for tensor number %d in the list.", (long long)d, (long long)r->sizes[k],
                        (long long)t->sizes[k], i);
    if (sk_add_overflow(sizes[d], t->sizes[d], &sizes[d]))
      return sk_error("torch.cat(): the result's size at dimension %lld overflows at tensor number %d in the list",
                      (long long)d, i);
  }
  if (given) {
    if (sk_tensor_has_internal_overlap(given))
      return sk_error("unsupported operation: more than one element of the written-to tensor 'out' refers to a single "
                      "memory location; clone() it first");
    for (int i = 0; i < tensors.n; i++)
      if (tensors.data[i]->numel > 0 && given->numel > 0 && sk_tensor_may_overlap(given, tensors.data[i]))
        return sk_error("unsupported operation: the input tensors cannot refer to any of the output memory locations. "
                        "Found overlap in input tensor %d", i);
  }
  precompute->dim = d;
  return sk_meta_set_output(m, 0, r->ndim, sizes, NULL, dt);
}
/* }==== */

/* {==== flip, roll, tril, triu, diag ==== */
int sk_meta_flip(SkMeta *m, const SkTensor *self, SkIntList dims, sk_precompute_flip_out *precompute) {
  int64_t mask = 0;
  for (int i = 0; i < dims.n; i++) {
    int64_t d;
    if (sk_wrap_dim(dims.data[i], self->ndim, "dims", &d)) return -1;
    if (mask & (1ll << d)) return sk_error("dim %lld appears multiple times in the list of dims", (long long)d);
    mask |= 1ll << d;
  }
  precompute->dim_mask = self->ndim ? mask : 0;
  const SkTensor *in[] = {self};
  static const char *const names[] = {"self"};
  if (check_written(m, 1, in, names)) return -1;
  return set_like(m, 0, self, self->dtype);
}

int sk_meta_roll(SkMeta *m, const SkTensor *self, SkIntList shifts, SkIntList dims) {
  if (shifts.n == 0) return sk_error("`shifts` required");
  if (!(dims.n == 0 && shifts.n == 1) && shifts.n != dims.n)
    return sk_error("shifts and dimensions must align. shifts: %d, dims:%d", shifts.n, dims.n);
  for (int i = 0; i < dims.n; i++) { /* a dim named twice rolls twice, as in PyTorch */
    int64_t d;
    if (sk_wrap_dim(dims.data[i], self->ndim, "dims", &d)) return -1;
  }
  const SkTensor *in[] = {self};
  static const char *const names[] = {"self"};
  if (check_written(m, 1, in, names)) return -1;
  return set_like(m, 0, self, self->dtype);
}

/* tril and triu write each element from the same position of self, so out may be self itself. */
static int meta_triangle(SkMeta *m, const SkTensor *self, const char *op) {
  if (self->ndim < 2) return sk_error("%s: input tensor must have at least 2 dimensions", op);
  const SkTensor *w = written(m);
  int same = w && w->storage == self->storage && w->offset == self->offset && sk_tensor_same_shape(w, self) &&
             memcmp(w->strides, self->strides, (size_t)self->ndim * sizeof self->strides[0]) == 0;
  const SkTensor *in[] = {same ? NULL : self};
  static const char *const names[] = {"self"};
  if (check_written(m, 1, in, names)) return -1;
  return set_like(m, 0, self, self->dtype);
}

int sk_meta_tril(SkMeta *m, const SkTensor *self, int64_t diagonal) {
  (void)diagonal;
  return meta_triangle(m, self, "tril");
}

int sk_meta_triu(SkMeta *m, const SkTensor *self, int64_t diagonal) {
  (void)diagonal;
  return meta_triangle(m, self, "triu");
}

int sk_meta_diag(SkMeta *m, const SkTensor *self, int64_t diagonal) {
  if (self->ndim != 1 && self->ndim != 2) return sk_error("diag(): Supports 1D or 2D tensors. Got %dD", self->ndim);
  const SkTensor *in[] = {self};
  static const char *const names[] = {"self"};
  if (check_written(m, 1, in, names)) return -1;
  if (self->ndim == 1) { /* n + |diagonal| squared, as sk_numel checks it */
    int64_t n, sizes[2];
    if (diagonal < 0 ? sk_sub_overflow(self->sizes[0], diagonal, &n) : sk_add_overflow(self->sizes[0], diagonal, &n))
      return sk_error("diag(): the result size %lld + |%lld| overflows (argument 'diagonal')", (long long)self->sizes[0],
                      (long long)diagonal);
    sizes[0] = sizes[1] = n;
    return sk_meta_set_output(m, 0, 2, sizes, NULL, self->dtype);
  }
  /* a size minus a non-negative diagonal, or plus a negative one: no overflow */
  int64_t rows = self->sizes[0], cols = self->sizes[1], len;
  if (diagonal >= 0) len = rows < cols - diagonal ? rows : cols - diagonal;
  else len = rows + diagonal < cols ? rows + diagonal : cols;
  if (len < 0) len = 0;
  return sk_meta_set_output(m, 0, 1, &len, NULL, self->dtype);
}
/* }==== */

/* {==== gather, scatter, scatter_add, index_select ==== */
/* PyTorch's scatter_gather_dtype_check: an index with elements is int64; an empty one
** selects nothing, so gather and the scatters take it in any dtype, as PyTorch does. */
static int check_index_dtype(const char *op, const SkTensor *index) {
  if (index->numel == 0 || index->dtype == SK_DTYPE_INT64) return 0;
  return sk_error("%s(): Expected dtype int64 for index (argument 'index' has dtype %s)", op, sk_dtype_name(index->dtype));
}

/* PyTorch's gather_shape_check: index has self's number of dims and is no larger apart from dim. */
static int gather_shape_check(const SkTensor *self, int64_t dim, const SkTensor *index) {
  char a[128], b[128];
  if (nonempty_ndim(self) != nonempty_ndim(index))
    return sk_error("Index tensor must have the same number of dimensions as input tensor");
  for (int d = 0; d < nonempty_ndim(self); d++)
    if (d != dim && size_at(index, d) > size_at(self, d))
      return sk_error("Size does not match at dimension %d expected index %s to be smaller than self %s apart from "
                      "dimension %lld", d, sk_shape_str(index->ndim, index->sizes, a, sizeof a),
                      sk_shape_str(self->ndim, self->sizes, b, sizeof b), (long long)dim);
  return 0;
}

int sk_meta_gather(SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, int sparse_grad,
                   sk_precompute_gather_out *precompute) {
  (void)sparse_grad;
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  precompute->dim = d;
  if (check_index_dtype("gather", index)) return -1;
  if (index->numel > 0 && gather_shape_check(self, d, index)) return -1;
  const SkTensor *in[] = {self, index};
  static const char *const names[] = {"self", "index"};
  if (check_written(m, 2, in, names)) return -1;
  return set_like(m, 0, index, self->dtype);
}

/* PyTorch's scatter_shape_check; src NULL for the value overload. */
static int scatter_shape_check(const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *src) {
  char a[128], b[128], c[128];
  if (nonempty_ndim(self) != nonempty_ndim(index))
    return sk_error("Index tensor must have the same number of dimensions as self tensor");
  if (src && nonempty_ndim(src) != nonempty_ndim(index))
    return sk_error("Index tensor must have the same number of dimensions as src tensor");
  for (int d = 0; d < nonempty_ndim(self); d++) {
    int64_t is = size_at(index, d);
    if ((d != dim && is > size_at(self, d)) || (src && is > size_at(src, d))) {
      sk_shape_str(index->ndim, index->sizes, a, sizeof a);
      sk_shape_str(self->ndim, self->sizes, b, sizeof b);
      if (src)
        return sk_error("Expected index %s to be smaller than self %s apart from dimension %lld and to be smaller size "
                        "than src %s", a, b, (long long)dim, sk_shape_str(src->ndim, src->sizes, c, sizeof c));
      return sk_error("Expected index %s to be smaller than self %s apart from dimension %lld", a, b, (long long)dim);
    }
  }
  return 0;
}

static int meta_scatter(SkMeta *m, const char *op, const SkTensor *self, int64_t dim, const SkTensor *index,
                        const SkTensor *src, int64_t *wrapped) {
  if (sk_wrap_dim(dim, self->ndim, "dim", wrapped)) return -1;
  if (check_index_dtype(op, index)) return -1;
  if (src && src->dtype != self->dtype)
    return sk_error("%s(): Expected self.dtype to be equal to src.dtype (argument 'src' has dtype %s, 'self' has %s)",
                    op, sk_dtype_name(src->dtype), sk_dtype_name(self->dtype));
  if (src && check_same_device(self->device, src, op, "src")) return -1;
  if (index->numel > 0 && scatter_shape_check(self, *wrapped, index, src)) return -1;
  const SkTensor *in[] = {index, src};
  static const char *const names[] = {"index", "src"};
  if (check_written(m, 2, in, names)) return -1;
  if (check_out_not_self(m, self)) return -1;
  return set_like(m, 0, self, self->dtype);
}

int sk_meta_scatter_src(SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *src,
                        sk_precompute_scatter_src_out *precompute) {
  return meta_scatter(m, "scatter", self, dim, index, src, &precompute->dim);
}

int sk_meta_scatter_value(SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, SkScalar value,
                          sk_precompute_scatter_value_out *precompute) {
  if (value.kind == SK_SCALAR_NONE) return sk_error("scatter(): argument 'value' must be a number, got None");
  return meta_scatter(m, "scatter", self, dim, index, NULL, &precompute->dim);
}

int sk_meta_scatter_add(SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *src,
                        sk_precompute_scatter_add_out *precompute) {
  return meta_scatter(m, "scatter_add", self, dim, index, src, &precompute->dim);
}

int sk_meta_scatter_reduce_two(SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *src,
                               const char *reduce, int include_self, sk_precompute_scatter_reduce_two_out *precompute) {
  (void)include_self;
  static const char *const ok[] = {"sum", "prod", "mean", "amax", "amin"};
  int known = 0;
  for (int i = 0; i < 5; i++) known |= reduce && !strcmp(reduce, ok[i]);
  if (!known)
    return sk_error("reduce argument must be either sum, prod, mean, amax or amin. (argument 'reduce' is %s)", reduce ? reduce : "None");
  return meta_scatter(m, "scatter_reduce", self, dim, index, src, &precompute->dim);
}

int sk_meta_index_select(SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index,
                         sk_precompute_index_select_out *precompute) {
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  precompute->dim = d;
  if (index->ndim > 1) return sk_error("index_select(): Index is supposed to be a vector (argument 'index' is %dD)", index->ndim);
  if (index->dtype != SK_DTYPE_INT64 && index->dtype != SK_DTYPE_INT32)
    return sk_error("index_select(): Expected dtype int32 or int64 for index (argument 'index' has dtype %s)",
                    sk_dtype_name(index->dtype));
  if (!sk_device_eq(index->device, self->device) && index->device.type != SK_DEVICE_CPU &&
      check_same_device(self->device, index, "index_select", "index"))
    return -1;
  const SkTensor *in[] = {self, index};
  static const char *const names[] = {"self", "index"};
  if (check_written(m, 2, in, names)) return -1;
  if (self->ndim == 0) {
    if (index->numel != 1)
      return sk_error("index_select(): Index to scalar can have only 1 value, got %lld value(s)", (long long)index->numel);
    return sk_meta_set_output(m, 0, 0, self->sizes, NULL, self->dtype);
  }
  int64_t sizes[SK_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof sizes);
  sizes[d] = index->numel;
  return sk_meta_set_output(m, 0, self->ndim, sizes, NULL, self->dtype);
}
/* }==== */

/* {==== Advanced indexing: index.Tensor and index_put_ ==== */
/* The shape-level plan of self[indices]: which dims are indexed and the result shape. */
typedef struct {
  int nidx;                          /* index tensors after expanding masks */
  int64_t bshape[SK_MAX_DIMS];       /* their broadcast shape */
  int bnd;
  int rnd;                           /* the result */
  int64_t rshape[SK_MAX_DIMS];
  int unknown;                       /* a mask's count was unknown (Meta: no data): shapes not computed */
} IndexShape;

/* Number of nonzero bytes of a bool/uint8 tensor on the CPU. */
static int64_t count_true(const SkTensor *t) {
  const uint8_t *base = sk_tensor_data(t);
  int64_t n = 0, idx[SK_MAX_DIMS] = {0};
  if (t->numel == 0) return 0;
  if (sk_tensor_is_contiguous(t)) {
    for (int64_t i = 0; i < t->numel; i++) n += base[i] != 0;
    return n;
  }
  for (int64_t i = 0; i < t->numel; i++) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
    n += base[off] != 0;
    for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->sizes[d]; d--) idx[d] = 0;
  }
  return n;
}

static int index_shape(const SkTensor *self, SkTensorList indices, const char *op, IndexShape *p) {
  char a[128], b[128];
  int64_t shapes[SK_MAX_DIMS][SK_MAX_DIMS];
  int nds[SK_MAX_DIMS], dims[SK_MAX_DIMS];
  int d = 0;
  p->nidx = 0;
  p->unknown = 0;
  for (int i = 0; i < indices.n; i++) {
    const SkTensor *t = indices.data[i];
    if (!t) { d++; continue; }
    if (t->dtype == SK_DTYPE_BOOL || t->dtype == SK_DTYPE_UINT8) {
      if (t->ndim == 0) return sk_error("%s: a 0-dim boolean index is not supported (argument 'indices', position %d)", op, i);
      if (d + t->ndim > self->ndim)
        return sk_error("too many indices for tensor of dimension %d (got %d)", self->ndim, d + t->ndim);
      for (int k = 0; k < t->ndim; k++)
        if (t->sizes[k] != self->sizes[d + k])
          return sk_error("The shape of the mask %s at index %d does not match the shape of the indexed tensor %s at "
                          "index %d", sk_shape_str(t->ndim, t->sizes, a, sizeof a), k,
                          sk_shape_str(self->ndim, self->sizes, b, sizeof b), d + k);
      int64_t count = 0;
      if (sk_device_host_addressable(t->device)) count = count_true(t); /* host memory: its data is readable */
      else if (t->device.type == SK_DEVICE_META) p->unknown = 1;
      else { /* device memory (CUDA): read the mask through a CPU copy, as PyTorch syncs on one */
        SkTensor *c = NULL;
        if (sk_to_device(&c, t, SK_CPU, -1, 0, 0, -1)) return -1;
        count = count_true(c);
        sk_tensor_release(c);
      }
      for (int k = 0; k < t->ndim; k++) {
        nds[p->nidx] = 1;
        shapes[p->nidx][0] = count;
        dims[p->nidx++] = d++;
      }
      continue;
    }
    if (t->dtype != SK_DTYPE_INT64 && t->dtype != SK_DTYPE_INT32)
      return sk_error("tensors used as indices must be long, int, byte or bool tensors (argument 'indices' has a %s "
                      "tensor at position %d)", sk_dtype_name(t->dtype), i);
    if (!sk_device_eq(t->device, self->device) && t->device.type != SK_DEVICE_CPU &&
        check_same_device(self->device, t, op, "indices"))
      return -1;
    if (d >= self->ndim) return sk_error("too many indices for tensor of dimension %d (got %d)", self->ndim, d + 1);
    nds[p->nidx] = t->ndim;
    memcpy(shapes[p->nidx], t->sizes, (size_t)t->ndim * sizeof t->sizes[0]);
    dims[p->nidx++] = d++;
  }
  /* broadcast the index shapes */
  p->bnd = 0;
  for (int j = 0; j < p->nidx; j++) {
    if (nds[j] > p->bnd) {
      int shift = nds[j] - p->bnd;
      memmove(p->bshape + shift, p->bshape, (size_t)p->bnd * sizeof p->bshape[0]);
      for (int k = 0; k < shift; k++) p->bshape[k] = 1;
      p->bnd = nds[j];
    }
    for (int k = 0; k < nds[j]; k++) {
      int64_t *s = &p->bshape[p->bnd - nds[j] + k], v = shapes[j][k];
      if (*s == v || v == 1) continue;
      if (*s != 1) {
        /* PyTorch lists every index shape */
        char all[512] = "";
        size_t used = 0;
        for (int q = 0; q < p->nidx; q++)
          used += (size_t)snprintf(all + used, used < sizeof all ? sizeof all - used : 0, "%s%s", q ? ", " : "",
                                   sk_shape_str(nds[q], shapes[q], a, sizeof a));
        return sk_error("shape mismatch: indexing tensors could not be broadcast together with shapes %s", all);
      }
      *s = v;
    }
  }
  /* result: adjacent indexed dims keep their place, else the broadcast dims go first */
  int adjacent = 1;
  for (int j = 1; j < p->nidx; j++) adjacent &= dims[j] == dims[j - 1] + 1;
  int first = p->nidx ? dims[0] : 0, last = p->nidx ? dims[p->nidx - 1] : -1;
  int rnd = 0;
  if (p->nidx == 0) {
    memcpy(p->rshape, self->sizes, (size_t)self->ndim * sizeof self->sizes[0]);
    rnd = self->ndim;
  } else if (adjacent) {
    for (int k = 0; k < first; k++) p->rshape[rnd++] = self->sizes[k];
    for (int k = 0; k < p->bnd; k++) p->rshape[rnd++] = p->bshape[k];
    for (int k = last + 1; k < self->ndim; k++) p->rshape[rnd++] = self->sizes[k];
  } else {
    for (int k = 0; k < p->bnd; k++) p->rshape[rnd++] = p->bshape[k];
    for (int k = 0, j = 0; k < self->ndim; k++) {
      if (j < p->nidx && dims[j] == k) { j++; continue; }
      p->rshape[rnd++] = self->sizes[k];
    }
  }
  if (rnd > SK_MAX_DIMS) return sk_error("%s: the result would have %d dimensions, at most %d are supported", op, rnd, SK_MAX_DIMS);
  p->rnd = rnd;
  return 0;
}

int sk_meta_index_Tensor(SkMeta *m, const SkTensor *self, SkTensorList indices) {
  IndexShape p;
  if (index_shape(self, indices, "index", &p)) return -1;
  if (p.unknown)
    return sk_error("index: a boolean mask index on meta has a data-dependent result shape, which cannot be computed "
                    "without reading the mask (argument 'indices')");
  const SkTensor *in[SK_MAX_DIMS + 1];
  const char *names[SK_MAX_DIMS + 1];
  int n = 0;
  in[n] = self, names[n++] = "self";
  for (int i = 0; i < indices.n && n < SK_MAX_DIMS + 1; i++) in[n] = indices.data[i], names[n++] = "indices";
  if (check_written(m, n, in, names)) return -1;
  return sk_meta_set_output(m, 0, p.rnd, p.rshape, NULL, self->dtype);
}

int sk_meta_kernel_index_put_(SkTensor *self, SkTensorList indices, const SkTensor *values, int accumulate) {
  (void)accumulate;
  char a[128], b[128];
  IndexShape p;
  if (index_shape(self, indices, "index_put_", &p)) return -1;
  if (values->dtype != self->dtype)
    return sk_error("Index put requires the source and destination dtypes match, got %s for the destination and %s "
                    "for the source.", sk_dtype_name(self->dtype), sk_dtype_name(values->dtype));
  if (p.unknown) return 0;
  for (int i = 1; i <= values->ndim; i++) {
    int64_t v = values->sizes[values->ndim - i];
    if (i > p.rnd ? v != 1 : (v != 1 && v != p.rshape[p.rnd - i]))
      return sk_error("shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                      sk_shape_str(values->ndim, values->sizes, a, sizeof a), sk_shape_str(p.rnd, p.rshape, b, sizeof b));
  }
  return 0;
}
/* }==== */

/* {==== masked_fill_, masked_select, nonzero on Meta ==== */
int sk_meta_kernel_masked_fill__Scalar(SkTensor *self, const SkTensor *mask, SkScalar value) {
  char a[128], b[128];
  if (mask->dtype != SK_DTYPE_BOOL)
    return sk_error("masked_fill_ only supports boolean masks, but got mask with dtype %s", sk_dtype_name(mask->dtype));
  if (value.kind == SK_SCALAR_NONE) return sk_error("masked_fill_: argument 'value' must be a number, got None");
  for (int i = 1; i <= mask->ndim; i++) {
    int64_t s = mask->sizes[mask->ndim - i];
    if (i > self->ndim ? s != 1 : (s != 1 && s != self->sizes[self->ndim - i]))
      return sk_error("argument 'mask' (shape %s) is not broadcastable to shape %s",
                      sk_shape_str(mask->ndim, mask->sizes, a, sizeof a), sk_shape_str(self->ndim, self->sizes, b, sizeof b));
  }
  return 0;
}

static int data_dependent(const char *op, const char *arg) {
  return sk_error("%s: the shape of the result depends on the values of '%s', which Meta tensors do not have", op, arg);
}

int sk_meta_kernel_masked_select(SkTensor **result, const SkTensor *self, const SkTensor *mask) {
  (void)result, (void)self, (void)mask;
  return data_dependent("masked_select", "mask");
}

int sk_meta_kernel_masked_select_out(const SkTensor *self, const SkTensor *mask, SkTensor *out) {
  (void)self, (void)mask, (void)out;
  return data_dependent("masked_select", "mask");
}

int sk_meta_kernel_nonzero(SkTensor **result, const SkTensor *self) {
  (void)result, (void)self;
  return data_dependent("nonzero", "self");
}

int sk_meta_kernel_nonzero_out(const SkTensor *self, SkTensor *out) {
  (void)self, (void)out;
  return data_dependent("nonzero", "self");
}
/* }==== */

/* {==== sort, topk ==== */
int sk_meta_sort_values_stable(SkMeta *m, const SkTensor *self, int stable, int64_t dim, int descending,
                               sk_precompute_sort_values_stable *precompute) {
  (void)stable, (void)descending;
  if (sk_wrap_dim(dim, self->ndim, "dim", &precompute->dim)) return -1;
  const SkTensor *in[] = {self};
  static const char *const names[] = {"self"};
  if (check_written(m, 1, in, names)) return -1;
  const SkTensor *indices = m->variant == SK_VARIANT_OUT ? sk_meta_maybe_output(m, 1) : NULL;
  if (indices && sk_check_written(indices, "indices", 0, 0, NULL, NULL, 1)) return -1;
  if (set_like(m, 0, self, self->dtype)) return -1;
  return set_like(m, 1, self, SK_DTYPE_INT64);
}

int sk_meta_topk_values(SkMeta *m, const SkTensor *self, int64_t k, int64_t dim, int largest, int sorted,
                        sk_precompute_topk_values *precompute) {
  (void)largest, (void)sorted;
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  precompute->dim = d;
  int64_t n = self->ndim ? self->sizes[d] : 1;
  if (k < 0 || k > n) return sk_error("selected index k out of range (argument 'k' is %lld, the size of dim %lld is %lld)",
                                      (long long)k, (long long)d, (long long)n);
  const SkTensor *in[] = {self};
  static const char *const names[] = {"self"};
  if (check_written(m, 1, in, names)) return -1;
  int64_t sizes[SK_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof sizes);
  if (self->ndim) sizes[d] = k;
  if (sk_meta_set_output(m, 0, self->ndim, sizes, NULL, self->dtype)) return -1;
  return sk_meta_set_output(m, 1, self->ndim, sizes, NULL, SK_DTYPE_INT64);
}
/* }==== */

/* {==== searchsorted ==== */
/* PyTorch's searchsorted_pre_check: boundaries 1-d, or matching input in every dim but the
** last; the result has input's shape, int64 or (out_int32) int32. */
int sk_meta_searchsorted_Tensor(SkMeta *m, const SkTensor *sorted_sequence, const SkTensor *self, int out_int32, int right,
                                const char *side, const SkTensor *sorter) {
  char a[128], b[128], da[32], db[32];
  const SkTensor *bd = sorted_sequence;
  if (side) {
    if (strcmp(side, "left") && strcmp(side, "right"))
      return sk_error("torch.searchsorted(): side can only be 'left' or 'right' but got %s", side);
    if (right && strcmp(side, "right"))
      return sk_error("torch.searchsorted(): side and right can't be set to opposites, got side of %s while right was True", side);
  }
  if (!sk_device_eq(bd->device, self->device)) {
    sk_device_format(bd->device, da, sizeof da);
    sk_device_format(self->device, db, sizeof db);
    return sk_error("torch.searchsorted(): boundaries and input value tensors should have same device type, but got "
                    "boundaries tensor device type %s and input value tensor device type %s", da, db);
  }
  if (sorter) {
    if (!sk_device_eq(sorter->device, bd->device)) {
      sk_device_format(sorter->device, da, sizeof da);
      sk_device_format(bd->device, db, sizeof db);
      return sk_error("torch.searchsorted(): sorter and boundary tensors should have same device type, but got sorter "
                      "tensor device type %s and input value tensor device type %s", da, db);
    }
    if (!sk_tensor_same_shape(sorter, bd))
      return sk_error("torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor %sand got "
                      "sorter tensor %s", sk_shape_str(bd->ndim, bd->sizes, a, sizeof a),
                      sk_shape_str(sorter->ndim, sorter->sizes, b, sizeof b));
    if (sorter->dtype != SK_DTYPE_INT64)
      return sk_error("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype %s", sk_dtype_name(sorter->dtype));
  }
  if (!(self->ndim > 0 || bd->ndim == 1))
    return sk_error("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we "
                    "got boundaries tensor dim(%d) and input value's dim(%d) numel(%lld)", bd->ndim, self->ndim,
                    (long long)self->numel);
  if (bd->ndim == 0)
    return sk_error("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  int matched = bd->ndim == self->ndim;
  for (int d = 0; matched && d + 1 < bd->ndim; d++) matched = bd->sizes[d] == self->sizes[d];
  if (bd->ndim != 1 && !matched)
    return sk_error("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                    "tensor and input value tensor must match, but we got boundaries tensor %s and input value tensor %s",
                    sk_shape_str(bd->ndim, bd->sizes, a, sizeof a), sk_shape_str(self->ndim, self->sizes, b, sizeof b));
  SkDType dt = out_int32 ? SK_DTYPE_INT32 : SK_DTYPE_INT64;
  const SkTensor *given = written(m);
  if (given && given->dtype != dt)
    return sk_error("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) depending "
                    "on whether out_int32 flag is True, but we got output tensor's dtype %s and out_int32 flag is %s",
                    sk_dtype_name(given->dtype), out_int32 ? "True" : "False");
  if (out_int32 && bd->sizes[bd->ndim - 1] >= INT32_MAX)
    return sk_error("torch.searchsorted(): the size of boundaries' last dimension should be less than %d, but we got %lld",
                    INT32_MAX, (long long)bd->sizes[bd->ndim - 1]);
  const SkTensor *in[] = {bd, self, sorter};
  static const char *const names[] = {"sorted_sequence", "self", "sorter"};
  if (check_written(m, 3, in, names)) return -1;
  return set_like(m, 0, self, dt);
}
/* }==== */

/* {==== index_reduce ==== */
/* PyTorch's index_func_meta_impl checks (prefix index_reduce_), the reduction named, and
** source shaped like self but along dim (sk's text: PyTorch's comes from its kernel's
** broadcast). The result has self's shape. */
int sk_meta_index_reduce(SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source,
                         const char *reduce, int include_self, sk_precompute_index_reduce_out *precompute) {
  (void)include_self;
  char buf[128];
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  precompute->dim = d;
  if (!reduce || (strcmp(reduce, "prod") && strcmp(reduce, "mean") && strcmp(reduce, "amax") && strcmp(reduce, "amin")))
    return sk_error("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got %s.", reduce ? reduce : "None");
  if (index->ndim > 1)
    return sk_error("index_reduce_(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s", index->ndim,
                    sk_dtype_name(index->dtype), sk_shape_str(index->ndim, index->sizes, buf, sizeof buf));
  if (index->dtype != SK_DTYPE_INT64 && index->dtype != SK_DTYPE_INT32)
    return sk_error("index_reduce_(): Expected dtype int32/int64 for index but got: %s", sk_dtype_name(index->dtype));
  if (self->dtype != source->dtype)
    return sk_error("index_reduce_(): self (%s) and source (%s) must have the same scalar type", sk_dtype_name(self->dtype),
                    sk_dtype_name(source->dtype));
  if (check_same_device(self->device, source, "index_reduce", "source") || check_same_device(self->device, index, "index_reduce", "index"))
    return -1;
  if (nonempty_ndim(source) != nonempty_ndim(self))
    return sk_error("index_reduce_(): source has %d dimensions, self %d: they must have the same number", source->ndim, self->ndim);
  for (int k = 0; k < nonempty_ndim(self); k++)
    if (k != d && size_at(source, k) != size_at(self, k))
      return sk_error("index_reduce_(): source's size %lld at dimension %d does not match self's size %lld",
                      (long long)size_at(source, k), k, (long long)size_at(self, k));
  if (index->numel != size_at(source, (int)d))
    return sk_error("index_reduce_(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for dim: %lld",
                    (long long)index->numel, (long long)size_at(source, (int)d), (long long)d);
  const SkTensor *in[] = {index, source};
  static const char *const names[] = {"index", "source"};
  if (check_written(m, 2, in, names)) return -1;
  if (check_out_not_self(m, self)) return -1;
  return set_like(m, 0, self, self->dtype);
}
/* }==== */
