/*
** sk_composite.c — composite ops: Scalar overloads, where, full reductions,
** matmul, copy_, to, clone, contiguous, zero_, narrow.Tensor_start
** Everything here calls the dispatched public API (never a backend kernel),
** so each op works on any backend that provides the ops it is made of.
** copy_ is the exception that moves bytes itself: between two CPU tensors
** with sk_copy_cpu, between devices through contiguous CPU staging buffers
** and the device's copy hooks.
** Ownership: arguments are borrowed; every temporary is released on every
** path; a result is stored only on success.
*/
#include "sk_composite_util.h"
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

#include <string.h>

static const int64_t no_dims[1] = {0}; /* data of an empty (not None) int list */

/* memory_format: -1 None, 0 contiguous_format, 1 preserve_format. Like every argument check of
** the core, the message does not name the op: the binding does ("Tensor:to: argument ..."). */
static int check_memory_format(int memory_format, int allow_preserve) {
  if (memory_format == -1 || memory_format == 0 || (allow_preserve && memory_format == 1)) return 0;
  return sk_error("argument 'memory_format' (%s) is not supported; use contiguous_format", sk_memory_format_name(memory_format));
}

/* {==== Scalar overloads: wrap the number, call the Tensor overload ====
** One shape for all of them: `w` is the scalar as a wrapped-number tensor. */

SK_SCALAR_OVERLOAD(sk_default_add_Scalar(SkTensor **result, const SkTensor *self, SkScalar other, SkScalar alpha), other,
                sk_add(result, self, w, alpha))
SK_SCALAR_OVERLOAD(sk_default_add__Scalar(SkTensor *self, SkScalar other, SkScalar alpha), other, sk_add_(self, w, alpha))
SK_SCALAR_OVERLOAD(sk_default_sub_Scalar(SkTensor **result, const SkTensor *self, SkScalar other, SkScalar alpha), other,
                sk_sub(result, self, w, alpha))
SK_SCALAR_OVERLOAD(sk_default_mul_Scalar(SkTensor **result, const SkTensor *self, SkScalar other), other, sk_mul(result, self, w))
SK_SCALAR_OVERLOAD(sk_default_div_Scalar(SkTensor **result, const SkTensor *self, SkScalar other), other, sk_div(result, self, w))
SK_SCALAR_OVERLOAD(sk_default_remainder_Scalar(SkTensor **result, const SkTensor *self, SkScalar other), other,
                sk_remainder(result, self, w))
SK_SCALAR_OVERLOAD(sk_default_pow_Tensor_Scalar(SkTensor **result, const SkTensor *self, SkScalar exponent), exponent,
                sk_check_pow_scalar_exponent(self, exponent) ? -1 : sk_pow_Tensor_Tensor(result, self, w))
SK_SCALAR_OVERLOAD(sk_default_pow_Scalar(SkTensor **result, SkScalar self, const SkTensor *exponent), self,
                sk_pow_Tensor_Tensor(result, w, exponent))
/* }==== */

/* {==== sum, mean ==== */
int sk_default_sum(SkTensor **result, const SkTensor *self, int dtype) {
  return sk_sum_dim_IntList(result, self, (SkIntList){NULL, 0}, 0, dtype);
}

int sk_default_mean(SkTensor **result, const SkTensor *self, int dtype) {
  return sk_mean_dim(result, self, (SkIntList){NULL, 0}, 0, dtype);
}
/* }==== */

/* {==== matmul ====
** matmul checks its own arguments before calling mm or bmm, so that a bad call
** names the user's 'self' and 'other' (and their shapes), not mm's 'mat2' or an
** operand reshaped on the way; the inner kernels' checks then always pass. */
static int check_matmul(const SkTensor *a, const SkTensor *b) {
  int da = a->ndim, db = b->ndim;
  if (da == 0 || db == 0)
    return sk_error("both arguments to matmul need to be at least 1D, but they are %dD and %dD", da, db);
  if (a->dtype != b->dtype)
    return sk_error("expected self and other to have the same dtype, but got: %s != %s", sk_dtype_name(a->dtype),
                    sk_dtype_name(b->dtype));
  if (a->sizes[da - 1] == b->sizes[db > 1 ? db - 2 : 0]) return 0;
  char sa[128], sb[128];
  return sk_error("argument 'self' and 'other' shapes cannot be multiplied (%s and %s)",
                  sk_shape_str(da, a->sizes, sa, sizeof sa), sk_shape_str(db, b->sizes, sb, sizeof sb));
}

/* 1-D · 1-D: [1,k] x [k,1] -> [1,1] -> 0-dim. */
static int matmul_dot(SkTensor **result, const SkTensor *a, const SkTensor *b) {
  SkTensor *row = NULL, *col = NULL, *m = NULL;
  int rc = sk_unsqueeze(&row, a, 0);
  if (!rc) rc = sk_unsqueeze(&col, b, 1);
  if (!rc) rc = sk_mm(&m, row, col);
  if (!rc) rc = sk_reshape(result, m, (SkIntList){no_dims, 0});
  sk_tensor_release(row);
  sk_tensor_release(col);
  sk_tensor_release(m);
  return rc;
}

/* Both operands 1-D or 2-D, not both 1-D: mm, with a vector made a matrix and squeezed back. */
static int matmul_2d(SkTensor **result, const SkTensor *a, const SkTensor *b) {
  if (a->ndim == 2 && b->ndim == 2) return sk_mm(result, a, b);
  SkTensor *v = NULL, *m = NULL;
  int vec_dim = a->ndim == 1 ? 0 : 1; /* where the vector gets its dim of size 1 */
  int rc = sk_unsqueeze(&v, a->ndim == 1 ? a : b, vec_dim);
  if (!rc) rc = a->ndim == 1 ? sk_mm(&m, v, b) : sk_mm(&m, a, v);
  if (!rc) rc = sk_squeeze_dim(result, m, vec_dim);
  sk_tensor_release(v);
  sk_tensor_release(m);
  return rc;
}

/* a is >= 3-D, b 1-D or 2-D, and a's batch dims fold into its rows without a copy:
** one mm of [batch*n, k] by b, reshaped to a's batch dims. */
static int matmul_folded(SkTensor **result, const SkTensor *a, const SkTensor *b) {
  int64_t fold[2], out_shape[SK_MAX_DIMS];
  int out_nd = a->ndim - 1;
  fold[0] = sk_numel(a->ndim - 1, a->sizes);
  fold[1] = a->sizes[a->ndim - 1];
  memcpy(out_shape, a->sizes, (size_t)out_nd * sizeof *out_shape);
  if (b->ndim == 2) out_shape[out_nd++] = b->sizes[1];
  SkTensor *a2 = NULL, *v = NULL, *m = NULL;
  int rc = sk_view(&a2, a, (SkIntList){fold, 2}); /* can_fold(a): the view exists */
  if (!rc && b->ndim == 1) rc = sk_unsqueeze(&v, b, 1);
  if (!rc) rc = sk_mm(&m, a2, v ? v : b);
  SkIntList out = {out_shape, out_nd};
  if (!rc) rc = sk_tensor_is_contiguous(m) ? sk_view(result, m, out) : sk_reshape(result, m, out);
  sk_tensor_release(a2);
  sk_tensor_release(v);
  sk_tensor_release(m);
  return rc;
}

/* PyTorch's should_fold for a >= 3-D and b <= 2-D: a's leading dims are contiguous among themselves. */
static int can_fold(const SkTensor *a) {
  if (a->numel == 0) return 1;
  for (int i = 0; i < a->ndim - 2; i++)
    if (a->strides[i] != a->strides[i + 1] * a->sizes[i + 1]) return 0;
  return 1;
}

/* t expanded to shape[nd]; t itself (no dispatched call) when it has that shape already. */
static int expand_to(SkTensor **out, const SkTensor *t, const int64_t *shape, int nd) {
  if (t->ndim == nd && !memcmp(t->sizes, shape, (size_t)nd * sizeof *shape)) {
    *out = sk_tensor_retain((SkTensor *)t);
    return 0;
  }
  return sk_expand(out, t, (SkIntList){shape, nd}, 0);
}

/* General case: broadcast the batch dims, expand both to [batch..., rows, cols], flatten the batch, bmm. */
static int matmul_batched(SkTensor **result, const SkTensor *a, const SkTensor *b) {
  int da = a->ndim, db = b->ndim;
  int64_t n = da > 1 ? a->sizes[da - 2] : 1, m1 = a->sizes[da - 1];
  int64_t m2 = db > 1 ? b->sizes[db - 2] : b->sizes[0], p = db > 1 ? b->sizes[db - 1] : 1;
  int na = da > 2 ? da - 2 : 0, nb = db > 2 ? db - 2 : 0;
  int nbatch = na > nb ? na : nb;
  int64_t batch[SK_MAX_DIMS], shape[SK_MAX_DIMS];
  for (int i = 0; i < nbatch; i++) {
    int ia = i - (nbatch - na), ib = i - (nbatch - nb);
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return sk_error("The size of argument 'self' (%lld) must match the size of argument 'other' (%lld) at "
                      "non-singleton batch dimension %d", (long long)sa, (long long)sb, i);
    batch[i] = sa == 1 ? sb : sa;
  }
  int64_t nb_total = sk_numel(nbatch, batch);
  if (nb_total < 0) return sk_error_context("matmul: the broadcast batch shape");
  int64_t flat[3];
  SkTensor *ae = NULL, *a3 = NULL, *be = NULL, *b3 = NULL, *r = NULL;

  memcpy(shape, batch, (size_t)nbatch * sizeof *shape);
  shape[nbatch] = n, shape[nbatch + 1] = m1;
  flat[0] = nb_total, flat[1] = n, flat[2] = m1;
  int rc = expand_to(&ae, a, shape, nbatch + 2);
  if (!rc) rc = sk_reshape(&a3, ae, (SkIntList){flat, 3});

  shape[nbatch] = m2, shape[nbatch + 1] = p;
  flat[1] = m2, flat[2] = p;
  if (!rc) rc = expand_to(&be, b, shape, nbatch + (db > 1 ? 2 : 1));
  if (!rc) rc = sk_reshape(&b3, be, (SkIntList){flat, 3});

  if (!rc) rc = sk_bmm(&r, a3, b3);
  int out_nd = nbatch;
  memcpy(shape, batch, (size_t)nbatch * sizeof *shape);
  if (da > 1) shape[out_nd++] = n;
  if (db > 1) shape[out_nd++] = p;
  if (!rc) rc = sk_reshape(result, r, (SkIntList){out_nd ? shape : no_dims, out_nd});
  sk_tensor_release(ae);
  sk_tensor_release(a3);
  sk_tensor_release(be);
  sk_tensor_release(b3);
  sk_tensor_release(r);
  return rc;
}

int sk_math_matmul(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  if (check_matmul(self, other)) return -1;
  int da = self->ndim, db = other->ndim;
  if (da == 1 && db == 1) return matmul_dot(result, self, other);
  if (da <= 2 && db <= 2) return matmul_2d(result, self, other);
  if (db <= 2 && can_fold(self)) return matmul_folded(result, self, other);
  return matmul_batched(result, self, other);
}
/* }==== */

/* {==== copy_ ==== */
static int check_src_broadcasts(const SkTensor *self, const SkTensor *src) {
  int ok = src->ndim <= self->ndim;
  for (int i = 1; ok && i <= src->ndim; i++) {
    int64_t s = src->sizes[src->ndim - i];
    ok = s == 1 || s == self->sizes[self->ndim - i];
  }
  if (ok) return 0;
  char a[256], b[256];
  return sk_error("argument 'src' (shape %s) is not broadcastable to shape %s",
                  sk_shape_str(src->ndim, src->sizes, a, sizeof a), sk_shape_str(self->ndim, self->sizes, b, sizeof b));
}

/* PyTorch's is_non_overlapping_and_dense: some permutation of the dims is contiguous. */
static int is_dense(const SkTensor *t) {
  int perm[SK_MAX_DIMS], n = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (t->sizes[d] == 0) return 1;
    if (t->sizes[d] < 2) continue;
    int j = n++;
    while (j > 0 && t->strides[perm[j - 1]] > t->strides[d]) perm[j] = perm[j - 1], j--;
    perm[j] = d;
  }
  int64_t want = 1;
  for (int i = 0; i < n; i++) {
    if (t->strides[perm[i]] != want) return 0;
    want *= t->sizes[perm[i]];
  }
  return 1;
}

/* The memory-overlap checks of PyTorch's TensorIterator, for self written from src: internal
** overlap as every written tensor (sk_check_written), partial overlap only between dense tensors
** (PyTorch calls the rest too hard to decide), so x[:, 0]:copy_(x[:, 1]) works as in PyTorch. */
static int check_overlap(const SkTensor *self, const SkTensor *src) {
  if (sk_check_written(self, "self", 0, 0, NULL, NULL, 1)) return -1;
  if (self->storage != src->storage || !is_dense(self) || !is_dense(src)) return 0;
  int64_t sb = self->offset * (int64_t)sk_tensor_itemsize(self), se = sb + self->numel * (int64_t)sk_tensor_itemsize(self);
  int64_t rb = src->offset * (int64_t)sk_tensor_itemsize(src), re = rb + src->numel * (int64_t)sk_tensor_itemsize(src);
  int full = sb == rb && se == re && self->ndim == src->ndim &&
             memcmp(self->strides, src->strides, (size_t)self->ndim * sizeof self->strides[0]) == 0;
  if (!full && sb < re && rb < se)
    return sk_error("unsupported operation: some elements of the input tensor 'src' and the written-to tensor 'self' "
                    "refer to a single memory location; clone() the input first");
  return 0;
}

/* The hooks of d's type, or NULL with an error when it lacks the one copy named. */
static const SkDeviceHooks *hooks_of(SkDevice d, int to_cpu) {
  const SkDeviceType *dt = sk_device_type(d.type);
  if (!dt) return sk_error("copy_: unknown device type %d", d.type), NULL;
  if (to_cpu ? !dt->hooks.copy_to_cpu : !dt->hooks.copy_from_cpu)
    return sk_error("copy_: device '%s' has no %s hook", dt->name, to_cpu ? "copy_to_cpu" : "copy_from_cpu"), NULL;
  return &dt->hooks;
}

/* Elements [lo, lo + n) of the storage that t (non-empty) reaches; sk_span cannot fail on a tensor. */
static void span_of(const SkTensor *t, int64_t *lo, int64_t *n) {
  int64_t hi;
  sk_span(t->ndim, t->sizes, t->strides, t->offset, lo, &hi);
  *n = hi - *lo + 1;
}

/* A CPU tensor with t's layout over a staging copy of the elements t reaches
** (read from the device only if `read`). t must not be empty. */
static SkTensor *stage_on_cpu(const SkTensor *t, int read) {
  int64_t lo, n;
  span_of(t, &lo, &n);
  size_t isz = sk_tensor_itemsize(t);
  SkTensor *buf = sk_tensor_empty(1, &n, t->dtype, SK_CPU);
  if (!buf) return NULL;
  if (read) {
    const SkDeviceHooks *h = hooks_of(t->device, 1);
    int rc = !h ? -1
           : h->copy_to_cpu(h->ud, buf->storage->data, (const char *)t->storage->data + lo * (int64_t)isz,
                            (size_t)n * isz, t->device);
    if (rc) { sk_tensor_release(buf); return NULL; }
  }
  SkTensor *view = sk_tensor_alias(buf, t->ndim, t->sizes, t->strides, t->offset - lo);
  sk_tensor_release(buf);
  return view;
}

/* self (not on the CPU) <- cpu_src, converted and broadcast on the CPU, then written in one transfer. */
static int write_from_cpu(SkTensor *self, const SkTensor *cpu_src) {
  int64_t lo, n;
  span_of(self, &lo, &n);
  const SkDeviceHooks *h = hooks_of(self->device, 0);
  if (!h) return -1;
  /* A self with gaps keeps the bytes between its elements: read them first. */
  SkTensor *stage = stage_on_cpu(self, n != self->numel);
  if (!stage) return -1;
  size_t isz = sk_tensor_itemsize(self);
  int rc = sk_copy_cpu(stage, cpu_src);
  if (!rc) rc = h->copy_from_cpu(h->ud, (char *)self->storage->data + lo * (int64_t)isz, stage->storage->data,
                                 (size_t)n * isz, self->device);
  sk_tensor_release(stage);
  return rc;
}

static int copy_across_devices(SkTensor *self, const SkTensor *src) {
  int dense = self->dtype == src->dtype && sk_tensor_same_shape(self, src) && sk_tensor_is_contiguous(self) &&
              sk_tensor_is_contiguous(src);
  size_t bytes = (size_t)self->numel * sk_tensor_itemsize(self);
  if (sk_device_eq(self->device, src->device)) {
    const SkDeviceType *dt = sk_device_type(self->device.type);
    const SkDeviceHooks *h = dt ? &dt->hooks : NULL;
    if (dense && h && h->copy_same) return h->copy_same(h->ud, sk_tensor_data(self), sk_tensor_data(src), bytes, self->device);
    if (h && h->copy_tensor) return h->copy_tensor(h->ud, self, src); /* strided or converting, on the device */
  }
  /* dense, same dtype, one side on the CPU: one transfer, no staging buffer */
  if (dense && self->device.type == SK_DEVICE_CPU) {
    const SkDeviceHooks *h = hooks_of(src->device, 1);
    return h ? h->copy_to_cpu(h->ud, sk_tensor_data(self), sk_tensor_data(src), bytes, src->device) : -1;
  }
  if (dense && src->device.type == SK_DEVICE_CPU) {
    const SkDeviceHooks *h = hooks_of(self->device, 0);
    return h ? h->copy_from_cpu(h->ud, sk_tensor_data(self), sk_tensor_data(src), bytes, self->device) : -1;
  }
  SkTensor *s = src->device.type == SK_DEVICE_CPU ? sk_tensor_retain((SkTensor *)src) : stage_on_cpu(src, 1);
  if (!s) return -1;
  int rc = self->device.type == SK_DEVICE_CPU ? sk_copy_cpu(self, s) : write_from_cpu(self, s);
  sk_tensor_release(s);
  return rc;
}

int sk_default_copy_(SkTensor *self, const SkTensor *src, int non_blocking) {
  (void)non_blocking;
  if (check_src_broadcasts(self, src)) return -1;
  int meta = self->device.type == SK_DEVICE_META;
  if (!meta && src->device.type == SK_DEVICE_META) return sk_error("Cannot copy out of meta tensor; no data! (argument 'src')");
  if (!sk_tensor_same_view(self, src) && self->numel > 0) {
    if (check_overlap(self, src)) return -1; /* on Meta too: the checks never depend on data */
    int rc = meta ? 0 : self->device.type == SK_DEVICE_CPU && src->device.type == SK_DEVICE_CPU ? sk_copy_cpu(self, src)
                                                                                                : copy_across_devices(self, src);
    if (rc) return -1;
  }
  sk_tensor_bump_version(self);
  return 0;
}
/* }==== */

/* {==== to, clone, contiguous, zero_ ==== */
/* A new contiguous tensor like self on `device` with `dtype`, holding self's values. */
static int copy_to_new(SkTensor **result, const SkTensor *self, SkDType dtype, SkDevice device, int non_blocking) {
  SkTensor *t = NULL;
  SkIntList size = {self->ndim ? self->sizes : no_dims, self->ndim};
  if (sk_empty_memory_format(&t, size, (int)dtype, -1, device, -1, -1)) return -1;
  if (sk_copy_(t, self, non_blocking)) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}

int sk_math_to_dtype(SkTensor **result, const SkTensor *self, SkDType dtype, int non_blocking, int copy,
                     int memory_format) {
  if (check_memory_format(memory_format, 1)) return -1;
  if ((unsigned)dtype >= SK_DTYPE_COUNT) return sk_error("argument 'dtype': invalid dtype %d", (int)dtype);
  if (self->dtype == dtype && !copy) { *result = sk_tensor_retain((SkTensor *)self); return 0; }
  return copy_to_new(result, self, dtype, self->device, non_blocking);
}

int sk_math_to_device(SkTensor **result, const SkTensor *self, SkDevice device, int dtype, int non_blocking, int copy,
                      int memory_format) {
  if (check_memory_format(memory_format, 1)) return -1;
  if (dtype >= SK_DTYPE_COUNT) return sk_error("argument 'dtype': invalid dtype %d", dtype);
  SkDType dt = dtype < 0 ? self->dtype : (SkDType)dtype;
  SkDevice dev = device.type >= 0 ? device : self->device;
  if (sk_device_eq(dev, self->device) && dt == self->dtype && !copy) {
    *result = sk_tensor_retain((SkTensor *)self);
    return 0;
  }
  return copy_to_new(result, self, dt, dev, non_blocking);
}

/* dtype and device of other (PyTorch's to.other); other's data is never read. */
int sk_math_to_other(SkTensor **result, const SkTensor *self, const SkTensor *other, int non_blocking, int copy,
                     int memory_format) {
  return sk_math_to_device(result, self, other->device, (int)other->dtype, non_blocking, copy, memory_format);
}

int sk_default_clone(SkTensor **result, const SkTensor *self, int memory_format) {
  if (check_memory_format(memory_format, 1)) return -1;
  return copy_to_new(result, self, self->dtype, self->device, 0);
}

int sk_math_contiguous(SkTensor **result, const SkTensor *self, int memory_format) {
  if (memory_format == 1) return sk_error("contiguous: preserve memory format is unsupported by the contiguous operator");
  if (check_memory_format(memory_format, 0)) return -1;
  if (sk_tensor_is_contiguous(self)) { *result = sk_tensor_retain((SkTensor *)self); return 0; }
  return sk_clone(result, self, 0);
}

int sk_default_zero_(SkTensor *self) { return sk_fill__Scalar(self, sk_scalar_int(0)); }
/* }==== */

/* {==== narrow.Tensor_start: the int overload with start read from a 0-dim integer tensor ====
** PyTorch's narrow.Tensor, renamed: sk's C API gives a `.Tensor` overload the plain name sk_narrow. */
int sk_math_narrow_Tensor_start(SkTensor **result, const SkTensor *self, int64_t dim, const SkTensor *start, int64_t length) {
  if (start->ndim != 0 || !sk_dtype_is_integral(start->dtype))
    return sk_error("start must be an 0-dim integral Tensor. (argument 'start' has dtype %s and %d dims)",
                    sk_dtype_name(start->dtype), start->ndim);
  int64_t st;
  if (sk_host_int(start, "narrow", "start", &st)) return -1;
  return sk_narrow(result, self, dim, st, length);
}
/* }==== */

/* {==== Division aliases: true_divide is div; floor_divide is div with rounding_mode "floor" ==== */
int sk_math_true_divide(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  return sk_div(result, self, other);
}

int sk_math_true_divide_Scalar(SkTensor **result, const SkTensor *self, SkScalar other) {
  return sk_div_Scalar(result, self, other);
}

int sk_math_floor_divide(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  return sk_div_Tensor_mode(result, self, other, "floor");
}

SK_SCALAR_OVERLOAD(sk_math_floor_divide_Scalar(SkTensor **result, const SkTensor *self, SkScalar other), other,
                   sk_div_Tensor_mode(result, self, w, "floor"))
/* }==== */
