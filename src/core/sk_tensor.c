/*
** sk_tensor.c — storage and tensor lifetime, shape helpers, element access
** Small storages keep their bytes in the same allocation as the header,
** so a 1-element tensor costs two blocks (tensor, storage+data). Both come
** from free lists: a loop of small ops frees a batch at each GC step, more
** than malloc's per-thread cache holds. Only the thread running Lua
** creates and releases tensors.
*/
#include "sk_tensor.h"
#include "sk_checked.h"
#include "sk_elem.h"
#include "sk_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SK_FREE_LIST 1024

/* {==== Free lists of fixed-size blocks ==== */
typedef struct FreeList { void *items[SK_FREE_LIST]; int n; size_t size; } FreeList;
static FreeList tensor_blocks = {{0}, 0, sizeof(SkTensor)};
static FreeList storage_blocks = {{0}, 0, sizeof(SkStorage) + SK_INLINE_BYTES};

static void *block_get(FreeList *fl) { return fl->n ? fl->items[--fl->n] : malloc(fl->size); }
static void block_put(FreeList *fl, void *p) {
  if (fl->n < SK_FREE_LIST) fl->items[fl->n++] = p;
  else free(p);
}

__attribute__((destructor)) static void free_lists_release(void) {
  while (tensor_blocks.n) free(tensor_blocks.items[--tensor_blocks.n]);
  while (storage_blocks.n) free(storage_blocks.items[--storage_blocks.n]);
}
/* }==== */

/* {==== Storage ==== */
static SkStorage *storage_new(size_t nbytes, SkDevice device) {
  const SkDeviceType *dt = sk_device_type(device.type);
  if (!dt) return sk_error("unknown device type %d", device.type), NULL;
  int inline_data = device.type == SK_DEVICE_CPU && nbytes <= SK_INLINE_BYTES;
  SkStorage *s = block_get(&storage_blocks);
  if (!s) return sk_error("out of memory"), NULL;
  s->refcount = 1;
  s->nbytes = nbytes;
  s->device = device;
  s->version = 0;
  s->resizable = 1;
  s->accounted = 0;
  s->lent = 0;
  s->release = NULL;
  s->release_ctx = NULL;
  s->data = NULL;
  if (inline_data) s->data = s + 1;
  else if (dt->has_data && nbytes > 0) {
    s->data = sk_device_alloc(device, nbytes);
    if (!s->data) { block_put(&storage_blocks, s); return NULL; }
  }
  return s;
}

static int storage_is_inline(const SkStorage *s) { return s->data == (const void *)(s + 1); }

static void storage_release(SkStorage *s) {
  if (--s->refcount > 0) return;
  if (s->release) s->release(s->release_ctx);
  else if (!storage_is_inline(s)) sk_device_free(s->device, s->data, s->nbytes);
  block_put(&storage_blocks, s);
}

/* Grows s to at least nbytes, keeping the old bytes. */
static int storage_grow(SkStorage *s, size_t nbytes) {
  if (nbytes <= s->nbytes) return 0;
  if (!s->resizable) return sk_error("trying to resize storage that is not resizable");
  const SkDeviceType *dt = sk_device_type(s->device.type);
  if (!dt->has_data || (storage_is_inline(s) && nbytes <= SK_INLINE_BYTES)) { s->nbytes = nbytes; return 0; }
  if (s->lent) /* a consumer holds a pointer into data: moving it would leave that dangling (NumPy refuses too) */
    return sk_error("cannot resize a storage whose memory is lent through DLPack (a capsule, or a tensor made from one, "
                    "still points into it)");
  void *p = sk_device_alloc(s->device, nbytes);
  if (!p) return -1;
  if (s->nbytes) {
    int rc = s->device.type == SK_DEVICE_CPU ? (memcpy(p, s->data, s->nbytes), 0)
           : dt->hooks.copy_same ? dt->hooks.copy_same(dt->hooks.ud, p, s->data, s->nbytes, s->device)
           : sk_error("device '%s' cannot copy within itself", dt->name);
    if (rc) { sk_device_free(s->device, p, nbytes); return -1; }
  }
  if (!storage_is_inline(s)) sk_device_free(s->device, s->data, s->nbytes);
  s->data = p;
  s->nbytes = nbytes;
  return 0;
}
/* }==== */

/* {==== Checked sizes ==== */
int64_t sk_numel(int ndim, const int64_t *sizes) {
  int64_t n = 1;
  int empty = 0;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] < 0) return sk_error("negative dimension %lld in size (dim %d)", (long long)sizes[i], i);
    if (sizes[i] == 0) empty = 1;
    else if (sk_mul_overflow(n, sizes[i], &n)) return sk_error("numel: integer multiplication overflow");
  }
  return empty ? 0 : n;
}

void sk_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
  int64_t st = 1;
  for (int i = ndim - 1; i >= 0; i--) { /* products of nonzero sizes: no overflow (sk_numel) */
    strides[i] = st;
    st *= sizes[i] > 1 ? sizes[i] : 1;
  }
}

int sk_span(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, int64_t *lo, int64_t *hi) {
  int64_t a = offset, b = offset;
  for (int i = 0; i < ndim; i++) {
    int64_t ext, *end = strides[i] < 0 ? &a : &b;
    if (sk_mul_overflow(sizes[i] - 1, strides[i], &ext) || sk_add_overflow(*end, ext, end))
      return sk_error("storage offset overflows: offset %lld + (size - 1) * stride over the dims does not fit in int64",
                      (long long)offset);
  }
  *lo = a, *hi = b;
  return 0;
}

int sk_nbytes(int64_t nelem, size_t itemsize, size_t *out) {
  int64_t n;
  int bad = sk_mul_overflow(nelem, (int64_t)itemsize, &n) || (uint64_t)n > SIZE_MAX;
  *out = bad ? 0 : (size_t)n;
  return bad ? sk_error("storage size calculation overflowed: %lld elements of %zu bytes", (long long)nelem, itemsize) : 0;
}

static int check_ndim(int ndim) {
  if (ndim < 0 || ndim > SK_MAX_DIMS) return sk_error("tensors have at most %d dimensions, got %d", SK_MAX_DIMS, ndim);
  return 0;
}
/* }==== */

/* {==== Tensor lifetime ==== */
/* A header over s with sizes checked by sk_numel; strides and offset are the caller's. */
static SkTensor *tensor_header(SkStorage *s, int ndim, const int64_t *sizes, int64_t numel, SkDType dtype) {
  SkTensor *t = block_get(&tensor_blocks);
  if (!t) return sk_error("out of memory"), NULL;
  t->refcount = 1;
  t->storage = s;
  t->offset = 0;
  t->dtype = dtype;
  t->device = s->device;
  t->ndim = ndim;
  t->flags = 0;
  t->autograd = NULL;
  t->base = NULL;
  if (ndim) memcpy(t->sizes, sizes, (size_t)ndim * sizeof *sizes);
  t->numel = numel;
  return t;
}

/* Invariant: every stride is a byte offset that fits in int64 once scaled by the
** element size, so kernels compute byte strides without overflow. A dim of size
** 2 or more satisfies it by the span invariant; one of size 0 or 1 is never
** stepped along, so a stride too large (a slice with a huge step) becomes 1. */
static void set_strides(SkTensor *t, const int64_t *strides) {
  int64_t lim = INT64_MAX >> sk_dtype_shift(t->dtype);
  for (int d = 0; d < t->ndim; d++)
    t->strides[d] = t->sizes[d] <= 1 && (strides[d] > lim || strides[d] < -lim) ? 1 : strides[d];
}

SkTensor *sk_tensor_empty(int ndim, const int64_t *sizes, SkDType dtype, SkDevice device) {
  return sk_tensor_empty_strided(ndim, sizes, NULL, dtype, device);
}

SkTensor *sk_tensor_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, SkDType dtype, SkDevice device) {
  if (check_ndim(ndim)) return NULL;
  int64_t n = sk_numel(ndim, sizes), span = n, lo = 0, hi = 0; /* span: elements the strides reach */
  size_t nbytes;
  if (n < 0) return NULL;
  if (strides && n) {
    for (int i = 0; i < ndim; i++)
      if (strides[i] < 0) return sk_error("negative stride %lld (dim %d)", (long long)strides[i], i), NULL;
    if (sk_span(ndim, sizes, strides, 0, &lo, &hi) || sk_add_overflow(hi, 1, &span)) return NULL;
  }
  if (sk_nbytes(span, sk_dtype_size(dtype), &nbytes)) return NULL;
  SkStorage *s = storage_new(nbytes, device);
  if (!s) return NULL;
  SkTensor *t = tensor_header(s, ndim, sizes, n, dtype);
  if (!t) { storage_release(s); return NULL; }
  if (strides) set_strides(t, strides);
  else sk_contiguous_strides(ndim, sizes, t->strides);
  return t;
}

/* The invariant: a non-empty view of n elements stays inside the storage's elements of dtype. */
static int check_view(const SkStorage *s, SkDType dtype, int ndim, const int64_t *sizes, const int64_t *strides,
                      int64_t offset, int64_t n) {
  int64_t lo = 0, hi = 0;
  if (n == 0) return 0;
  if (sk_span(ndim, sizes, strides, offset, &lo, &hi)) return -1;
  if (lo < 0 || (uint64_t)hi >= s->nbytes >> sk_dtype_shift(dtype))
    return sk_error("view reaches elements [%lld, %lld], outside its storage of %zu elements", (long long)lo,
                    (long long)hi, s->nbytes / sk_dtype_size(dtype));
  return 0;
}

SkTensor *sk_tensor_alias_as(const SkTensor *base, SkDType dtype, int ndim, const int64_t *sizes, const int64_t *strides,
                             int64_t offset) {
  if (check_ndim(ndim)) return NULL;
  int64_t n = sk_numel(ndim, sizes);
  if (n < 0 || check_view(base->storage, dtype, ndim, sizes, strides, offset, n)) return NULL;
  SkTensor *t = tensor_header(base->storage, ndim, sizes, n, dtype);
  if (!t) return NULL;
  base->storage->refcount++;
  t->base = sk_tensor_retain((SkTensor *)(base->base ? base->base : base));
  t->device = base->device;
  t->offset = offset;
  set_strides(t, strides);
  return t;
}

SkTensor *sk_tensor_alias(const SkTensor *base, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset) {
  return sk_tensor_alias_as(base, base->dtype, ndim, sizes, strides, offset);
}

SkTensor *sk_tensor_from_external(void *data, size_t nbytes, SkDevice device, SkDType dtype, int ndim,
                                  const int64_t *sizes, const int64_t *strides, int64_t offset,
                                  void (*release)(void *ctx), void *ctx) {
  int64_t cont[SK_MAX_DIMS];
  if (check_ndim(ndim)) return NULL;
  if (!strides) sk_contiguous_strides(ndim, sizes, cont);
  int64_t n = sk_numel(ndim, sizes);
  if (n < 0) return NULL;
  SkStorage *s = block_get(&storage_blocks);
  if (!s) return sk_error("out of memory"), NULL;
  *s = (SkStorage){.refcount = 1, .data = nbytes ? data : NULL, .nbytes = nbytes, .device = device,
                   .release = release, .release_ctx = ctx};
  SkTensor *t = check_view(s, dtype, ndim, sizes, strides ? strides : cont, offset, n) ? NULL
              : tensor_header(s, ndim, sizes, n, dtype);
  if (!t) { block_put(&storage_blocks, s); return NULL; }
  t->offset = offset;
  set_strides(t, strides ? strides : cont);
  return t;
}

SkTensor *sk_tensor_scalar(SkScalar v, SkDType dtype) {
  SkTensor *t = sk_tensor_empty(0, NULL, dtype, SK_CPU);
  if (!t) return NULL;
  if (v.kind == SK_SCALAR_FLOAT) sk_store_double(t->storage->data, dtype, v.v.f);
  else sk_store_int64(t->storage->data, dtype, v.v.i);
  return t;
}

SkTensor *sk_tensor_wrap_number(SkScalar v) {
  SkTensor *t = sk_tensor_scalar(v, sk_scalar_dtype(v));
  if (t) t->flags |= SK_TENSOR_WRAPPED_NUMBER;
  return t;
}

void (*sk_autograd_meta_free)(struct SkAutogradMeta *m);

void sk_tensor_free(SkTensor *t) {
  if (t->autograd) sk_autograd_meta_free(t->autograd);
  if (t->base) sk_tensor_release(t->base);
  storage_release(t->storage);
  block_put(&tensor_blocks, t);
}

void sk_tensor_assign(SkTensor **slot, SkTensor *t) {
  sk_tensor_retain(t);
  sk_tensor_release(*slot);
  *slot = t;
}
/* }==== */

/* {==== Queries ==== */
int sk_tensor_is_contiguous(const SkTensor *t) {
  if (t->numel < 2) return 1;
  int64_t st = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->sizes[i] == 1) continue;
    if (t->strides[i] != st) return 0;
    st *= t->sizes[i];
  }
  return 1;
}

int sk_tensor_same_shape(const SkTensor *a, const SkTensor *b) {
  return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof a->sizes[0]) == 0;
}

int sk_tensor_has_internal_overlap(const SkTensor *t) {
  for (int d = 0; d < t->ndim; d++)
    if (t->strides[d] == 0 && t->sizes[d] > 1) return 1;
  return 0;
}

int sk_tensor_same_view(const SkTensor *a, const SkTensor *b) {
  return a->storage == b->storage && a->offset == b->offset && a->dtype == b->dtype && sk_tensor_same_shape(a, b) &&
         memcmp(a->strides, b->strides, (size_t)a->ndim * sizeof a->strides[0]) == 0;
}

const char *const sk_layout_names[] = {"strided", NULL};
const char *const sk_memory_format_names[] = {"contiguous_format", "preserve_format", "channels_last", "channels_last_3d", NULL};

const char *sk_memory_format_name(int memory_format) {
  return memory_format == -1 ? "None"
       : memory_format >= 0 && memory_format < 4 ? sk_memory_format_names[memory_format] : "an unknown memory format";
}

const char *sk_shape_str(int ndim, const int64_t *sizes, char *buf, size_t n) {
  size_t len = 0;
  len += (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, i ? ", %lld" : "%lld", (long long)sizes[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
  return buf;
}

int sk_wrap_dim(int64_t dim, int ndim, const char *argname, int64_t *out) {
  int64_t n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    return sk_error("argument '%s': dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                    argname, (long long)-n, (long long)(n - 1), (long long)dim);
  *out = dim < 0 ? dim + n : dim;
  return 0;
}

/* Bytes [lo, hi) of a non-empty tensor; its span fits (the invariant), so sk_span cannot fail. */
static void byte_range(const SkTensor *t, int64_t *lo, int64_t *hi) {
  int64_t a = 0, b = 0, sz = (int64_t)sk_dtype_size(t->dtype);
  sk_span(t->ndim, t->sizes, t->strides, t->offset, &a, &b);
  *lo = a * sz;
  *hi = (b + 1) * sz;
}

int sk_tensor_may_overlap(const SkTensor *a, const SkTensor *b) {
  if (a->storage != b->storage || a->numel == 0 || b->numel == 0) return 0;
  int64_t alo, ahi, blo, bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}
/* }==== */

int sk_tensor_resize(SkTensor *t, int ndim, const int64_t *sizes) {
  if (check_ndim(ndim)) return -1;
  int64_t n = sk_numel(ndim, sizes), end;
  size_t need;
  if (n < 0 || sk_add_overflow(n, n ? t->offset : 0, &end) || sk_nbytes(end, sk_dtype_size(t->dtype), &need)) return -1;
  if (storage_grow(t->storage, need)) return -1;
  t->ndim = ndim;
  if (ndim) memcpy(t->sizes, sizes, (size_t)ndim * sizeof *sizes);
  sk_contiguous_strides(ndim, sizes, t->strides);
  t->numel = n;
  return 0;
}

/* {==== Element access ==== */
double sk_load_double(const void *p, SkDType t) { return sk_elem_load_double(p, t); }
int64_t sk_load_int64(const void *p, SkDType t) { return sk_elem_load_int64(p, t); }
void sk_store_double(void *p, SkDType t, double v) { sk_elem_store_double(p, t, v); }
void sk_store_int64(void *p, SkDType t, int64_t v) { sk_elem_store_int64(p, t, v); }

/* PyTorch's checked_convert: a float fits an integer dtype when it is a number in
** [lowest, max] (NaN and inf do not); a float dtype takes inf and NaN but no
** finite value past its largest; an unsigned dtype also takes negative integers
** down to -max (they wrap, as `a - b` needs); bool takes anything. */
int sk_scalar_check(SkScalar v, SkDType dt) {
  static const double lim[][2] = {
    [SK_DTYPE_UINT8] = {0, 255}, [SK_DTYPE_INT8] = {-128, 127}, [SK_DTYPE_INT16] = {-32768, 32767},
    [SK_DTYPE_INT32] = {-2147483648.0, 2147483647.0}, [SK_DTYPE_INT64] = {-9223372036854775808.0, 9223372036854775807.0},
    [SK_DTYPE_FLOAT16] = {-65504, 65504}, [SK_DTYPE_BFLOAT16] = {-3.3895313892515355e38, 3.3895313892515355e38},
    [SK_DTYPE_FLOAT32] = {-3.4028234663852886e38, 3.4028234663852886e38}};
  if (dt == SK_DTYPE_BOOL || dt == SK_DTYPE_FLOAT64 || v.kind == SK_SCALAR_BOOL || v.kind == SK_SCALAR_NONE) return 0;
  int ok;
  if (v.kind == SK_SCALAR_FLOAT) {
    double f = v.v.f;
    if (sk_dtype_is_floating(dt)) ok = f != f || f == 1.0 / 0.0 || f == -1.0 / 0.0 || (f >= lim[dt][0] && f <= lim[dt][1]);
    else ok = f >= lim[dt][0] && (dt == SK_DTYPE_INT64 ? f < 9223372036854775808.0 : f <= lim[dt][1]);
  } else {
    int64_t i = v.v.i;
    if (dt == SK_DTYPE_INT64 || sk_dtype_is_floating(dt)) ok = (double)i >= lim[dt][0] && (double)i <= lim[dt][1];
    else if (dt == SK_DTYPE_UINT8) ok = i >= -255 && i <= 255;
    else ok = i >= (int64_t)lim[dt][0] && i <= (int64_t)lim[dt][1];
  }
  return ok ? 0 : sk_error("value cannot be converted to type %s without overflow", sk_dtype_name(dt));
}

int sk_scalar_store(void *p, SkDType dt, SkScalar v) {
  if (sk_scalar_check(v, dt)) return -1;
  if (v.kind == SK_SCALAR_FLOAT) sk_store_double(p, dt, v.v.f);
  else sk_store_int64(p, dt, v.v.i);
  return 0;
}

void sk_convert_element(void *dst, SkDType dt, const void *src, SkDType st) {
  if (sk_dtype_is_floating(dt) || sk_dtype_is_floating(st)) {
    if (dt == SK_DTYPE_BOOL) *(uint8_t *)dst = sk_load_double(src, st) != 0;
    else sk_store_double(dst, dt, sk_load_double(src, st));
  } else sk_store_int64(dst, dt, sk_load_int64(src, st));
}
/* }==== */
