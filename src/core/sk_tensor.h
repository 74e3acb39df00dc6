/*
** sk_tensor.h — storages and tensors
** A storage is a refcounted buffer on one device with the version counter
** that all its views share. A tensor is (storage, offset, sizes[], strides[]),
** offset and strides in elements. Invariants: sizes are >= 0 and the
** product of the nonzero sizes fits in int64 (so every partial product and
** every contiguous stride does too); the storage's bytes fit in int64 and
** size_t; for a non-empty tensor, offset + Σ (sizes[i]-1)·strides[i] lies
** inside the storage. sk_numel, sk_span and sk_nbytes are the one place
** these are checked (with sk_checked.h for the arithmetic of the ops).
** Tensors are refcounted too; a function returning SkTensor* hands over one
** reference, and "borrowed" arguments are never released by the callee.
*/
#ifndef SK_TENSOR_H
#define SK_TENSOR_H

#include "sk_device.h"
#include "sk_dtype.h"

#include <stdint.h>

#define SK_MAX_DIMS 16
/* A CPU storage of at most this many bytes lives in its header's block: no allocator call. */
#define SK_INLINE_BYTES 64

typedef struct SkStorage {
  int64_t refcount;
  void *data;          /* NULL for meta and for empty storages */
  size_t nbytes;
  SkDevice device;
  uint64_t version;    /* bumped by every in-place write through any view */
  int resizable;
  int accounted;       /* nbytes is on a host's memory account (the Lua binding's box that charged it) */
  int lent;            /* DLPack exports holding a pointer to data (sk_dlpack.c): while > 0, data never moves */
  /* External memory (a file mapping, a DLPack producer's buffer): release(release_ctx) runs
  ** once, when the last view goes, in place of the device's free; NULL for sk's own memory. */
  void (*release)(void *ctx);
  void *release_ctx;
} SkStorage;

enum {
  SK_TENSOR_WRAPPED_NUMBER = 1, /* a Lua number turned into a 0-dim tensor */
  SK_TENSOR_REQUIRES_GRAD = 2   /* autograd records calls on it: a leaf that requires grad, or a grad_fn (sk_autograd.h) */
};

/* The autograd layer's data of a tensor (src/autograd), NULL for most tensors.
** The core only frees it, through the hook that layer installs. */
struct SkAutogradMeta;
extern void (*sk_autograd_meta_free)(struct SkAutogradMeta *m);

typedef struct SkTensor {
  int64_t refcount;
  SkStorage *storage;
  int64_t offset;
  int64_t numel;
  SkDType dtype;
  SkDevice device;
  int ndim;
  unsigned flags;
  struct SkTensor *base;     /* a view's root tensor (sk_tensor_alias; strong), else NULL */
  struct SkAutogradMeta *autograd;
  int64_t sizes[SK_MAX_DIMS];
  int64_t strides[SK_MAX_DIMS];
} SkTensor;

/* {==== Lifetime ==== */
SkTensor *sk_tensor_empty(int ndim, const int64_t *sizes, SkDType dtype, SkDevice device);
SkTensor *sk_tensor_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, SkDType dtype, SkDevice device);
/* A new tensor object over t's storage (a view); shares the version counter.
** Its base is t's base, or t: autograd finds a view's root through it. */
SkTensor *sk_tensor_alias(const SkTensor *t, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset);
/* The same view of base's storage as dtype (view.dtype): the bounds are checked in its elements. */
SkTensor *sk_tensor_alias_as(const SkTensor *base, SkDType dtype, int ndim, const int64_t *sizes, const int64_t *strides,
                             int64_t offset);
/* A tensor over nbytes of memory at data that sk did not allocate, not resizable; the
** storage calls release(ctx) when its last view goes. strides NULL: contiguous. On failure
** (NULL, the error set) nothing is released: the caller still owns data. */
SkTensor *sk_tensor_from_external(void *data, size_t nbytes, SkDevice device, SkDType dtype, int ndim,
                                  const int64_t *sizes, const int64_t *strides, int64_t offset,
                                  void (*release)(void *ctx), void *ctx);
SkTensor *sk_tensor_scalar(SkScalar s, SkDType dtype); /* 0-dim CPU tensor */
SkTensor *sk_tensor_wrap_number(SkScalar s);          /* 0-dim, flagged wrapped number */
static inline SkTensor *sk_tensor_retain(SkTensor *t) { if (t) t->refcount++; return t; }
void sk_tensor_free(SkTensor *t); /* the last reference went: free the header, release the storage */
static inline void sk_tensor_release(SkTensor *t) { if (t && --t->refcount == 0) sk_tensor_free(t); }
/* A view that requires grad when its root does (a view made before its root
** was given a history: autograd makes its grad_fn when it is used). */
static inline unsigned sk_tensor_grad_flag(const SkTensor *t) {
  return (t->flags | (t->base ? t->base->flags : 0)) & SK_TENSOR_REQUIRES_GRAD;
}
/* Replace *slot with t (retained), releasing the old one. */
void sk_tensor_assign(SkTensor **slot, SkTensor *t);
/* }==== */

/* {==== Queries ==== */
static inline size_t sk_tensor_itemsize(const SkTensor *t) { return sk_dtype_size(t->dtype); }
static inline void *sk_tensor_data(const SkTensor *t) {
  return t->storage->data ? (char *)t->storage->data + t->offset * (int64_t)sk_dtype_size(t->dtype) : NULL;
}
int sk_tensor_is_contiguous(const SkTensor *t);
int sk_tensor_same_shape(const SkTensor *a, const SkTensor *b);
/* The element count of sizes; -1 with an error for a negative size or when the
** product of the nonzero sizes overflows ("numel: integer multiplication overflow"). */
int64_t sk_numel(int ndim, const int64_t *sizes);
/* The lowest and highest element offsets [lo, hi] a non-empty view reaches; -1 with an error on overflow. */
int sk_span(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, int64_t *lo, int64_t *hi);
/* nelem * itemsize as a byte count; -1 with an error when it exceeds int64 or size_t. */
int sk_nbytes(int64_t nelem, size_t itemsize, size_t *out);
void sk_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
static inline void sk_tensor_bump_version(SkTensor *t) { t->storage->version++; }
/* Formats "[2, 3]" into buf. */
const char *sk_shape_str(int ndim, const int64_t *sizes, char *buf, size_t n);
/* Schemas carry a Layout or MemoryFormat as an int, PyTorch's enum order: the names,
** NULL-terminated (the binding reads and prints them), and the name of one for messages. */
extern const char *const sk_layout_names[];
extern const char *const sk_memory_format_names[];
const char *sk_memory_format_name(int memory_format);
/* Wraps a possibly negative dim into [0, ndim) (ndim 0 accepts -1 and 0). */
int sk_wrap_dim(int64_t dim, int ndim, const char *argname, int64_t *out);
/* 1 when a and b may share memory: same storage, overlapping byte ranges. */
int sk_tensor_may_overlap(const SkTensor *a, const SkTensor *b);
/* 1 when a stride 0 makes elements of t share memory (what PyTorch's assert_no_internal_overlap decides). */
int sk_tensor_has_internal_overlap(const SkTensor *t);
/* 1 when a and b are views of the same elements: storage, offset, dtype, sizes and strides. */
int sk_tensor_same_view(const SkTensor *a, const SkTensor *b);
/* }==== */

/* {==== Mutation of the tensor object (not of data) ==== */
/* Resizes to contiguous sizes, growing the storage if needed (old bytes kept). */
int sk_tensor_resize(SkTensor *t, int ndim, const int64_t *sizes);
/* }==== */

/* {==== Element access for the slow generic paths (printing, casts) ==== */
double sk_load_double(const void *p, SkDType t);
int64_t sk_load_int64(const void *p, SkDType t);
void sk_store_double(void *p, SkDType t, double v);
void sk_store_int64(void *p, SkDType t, int64_t v);
/* A Lua number becoming an element of dtype dt: an error ("value cannot be
** converted to type int8 without overflow") when it does not fit, as in PyTorch. */
int sk_scalar_check(SkScalar v, SkDType dt);
int sk_scalar_store(void *p, SkDType dt, SkScalar v); /* checks, then stores */
/* Converts one element between dtypes with C cast semantics (float->int truncates). */
void sk_convert_element(void *dst, SkDType dt, const void *src, SkDType st);
/* }==== */

#endif
