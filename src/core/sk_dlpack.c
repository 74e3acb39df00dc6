/*
** sk_dlpack.c — DLPack 0.6 export and import (see sk_dlpack.h)
** One table maps sk's dtypes to DLPack's (code, bits); a row code -1 has no DLPack type.
*/
#include "sk_dlpack.h"
#include "sk_error.h"

#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DL_BOOL 6 /* kDLBool, DLPack 0.8: accepted on import as 1-byte bool */
static const struct { int code, bits; } dl_types[SK_DTYPE_COUNT] = {
  [SK_DTYPE_BOOL] = {-1, 8}, [SK_DTYPE_UINT8] = {kDLUInt, 8}, [SK_DTYPE_INT8] = {kDLInt, 8},
  [SK_DTYPE_INT16] = {kDLInt, 16}, [SK_DTYPE_INT32] = {kDLInt, 32}, [SK_DTYPE_INT64] = {kDLInt, 64},
  [SK_DTYPE_FLOAT16] = {kDLFloat, 16}, [SK_DTYPE_BFLOAT16] = {kDLBfloat, 16}, [SK_DTYPE_FLOAT32] = {kDLFloat, 32},
  [SK_DTYPE_FLOAT64] = {kDLFloat, 64}};

/* {==== Export ==== */
/* The capsule's view shares t's storage (not t itself, whose storage a plan may swap) and
** pins it: storage->lent keeps resize_ from moving the data that dl_tensor.data points into. */
typedef struct Exported {
  DLManagedTensor m;
  SkTensor *view;
  int64_t shape[SK_MAX_DIMS], strides[SK_MAX_DIMS];
} Exported;

static void exported_delete(DLManagedTensor *m) {
  Exported *e = m->manager_ctx;
  e->view->storage->lent--;
  sk_tensor_release(e->view);
  free(e);
}

int sk_to_dlpack(SkTensor *t, DLManagedTensor **out) {
  DLDevice dev = {kDLCPU, 0};
  if (t->device.type == SK_DEVICE_CUDA) dev.device_type = kDLCUDA, dev.device_id = t->device.index;
  else if (t->device.type != SK_DEVICE_CPU) {
    char name[40];
    sk_device_format(t->device, name, sizeof name);
    return sk_error("DLPack has no device type for sk's device '%s'", name);
  }
  if (dl_types[t->dtype].code < 0) return sk_error("Bool type is not supported by dlpack");
  if (sk_tensor_grad_flag(t)) return sk_error("Can't export tensors that require gradient, use tensor.detach()");
  Exported *e = calloc(1, sizeof *e);
  if (!e) return sk_error("out of memory");
  if (!(e->view = sk_tensor_alias(t, t->ndim, t->sizes, t->strides, t->offset))) { free(e); return -1; }
  e->view->storage->lent++;
  memcpy(e->shape, t->sizes, sizeof e->shape);
  memcpy(e->strides, t->strides, sizeof e->strides);
  e->m.dl_tensor = (DLTensor){.data = sk_tensor_data(t), .device = dev, .ndim = t->ndim,
                              .dtype = {(uint8_t)dl_types[t->dtype].code, (uint8_t)dl_types[t->dtype].bits, 1},
                              .shape = e->shape, .strides = e->strides, .byte_offset = 0};
  e->m.manager_ctx = e;
  e->m.deleter = exported_delete;
  *out = &e->m;
  return 0;
}
/* }==== */

/* {==== Import ==== */
static void imported_release(void *ctx) {
  DLManagedTensor *m = ctx;
  if (m->deleter) m->deleter(m);
}

int sk_from_dlpack(DLManagedTensor *m, SkTensor **out) {
  const DLTensor *d = &m->dl_tensor;
  SkDevice dev;
  switch ((int)d->device.device_type) {
  case kDLCPU: case kDLCUDAHost: case kDLCUDAManaged: dev = SK_CPU; break;
  case kDLCUDA:
    if (d->device.device_id < 0 || d->device.device_id > INT16_MAX) return sk_error("invalid CUDA device id %d", d->device.device_id);
    dev = sk_device(SK_DEVICE_CUDA, d->device.device_id);
    if (!sk_device_type(SK_DEVICE_CUDA)) return sk_error("a CUDA tensor needs sk's CUDA module, which is not loaded");
    break;
  default: return sk_error("unsupported DLPack device type %d", (int)d->device.device_type);
  }
  if (d->dtype.lanes != 1) return sk_error("sk does not support lanes != 1 (got %d)", d->dtype.lanes);
  int dt = -1;
  for (int i = 0; i < SK_DTYPE_COUNT; i++)
    if (dl_types[i].code == d->dtype.code && dl_types[i].bits == d->dtype.bits) dt = i;
  if (d->dtype.code == DL_BOOL && d->dtype.bits == 8) dt = SK_DTYPE_BOOL;
  if (dt < 0) return sk_error("unsupported DLPack dtype (code %d, %d bits)", d->dtype.code, d->dtype.bits);
  if (d->ndim < 0 || d->ndim > SK_MAX_DIMS) return sk_error("tensors have at most %d dimensions, got %d", SK_MAX_DIMS, d->ndim);
  if (d->ndim && !d->shape) return sk_error("DLTensor has no shape");
  int64_t strides[SK_MAX_DIMS], lo = 0, hi = -1, n, size = (int64_t)sk_dtype_size((SkDType)dt);
  if (d->strides) memcpy(strides, d->strides, (size_t)d->ndim * sizeof *strides);
  else sk_contiguous_strides(d->ndim, d->shape, strides);
  if ((n = sk_numel(d->ndim, d->shape)) < 0) return -1;
  if (n && sk_span(d->ndim, d->shape, strides, 0, &lo, &hi)) return -1;
  /* the storage spans the elements reached, from the lowest: negative strides stay inside */
  char *first = (char *)d->data + d->byte_offset;
  int64_t elems = hi - lo + 1, bytes;
  if (__builtin_mul_overflow(elems, size, &bytes) || __builtin_mul_overflow(lo, size, &lo))
    return sk_error("DLTensor's shape and strides overflow");
  SkTensor *t = sk_tensor_from_external(first + lo, (size_t)bytes, dev, (SkDType)dt, d->ndim, d->shape, strides,
                                        -lo / size, imported_release, m);
  if (!t) return -1;
  *out = t;
  return 0;
}
/* }==== */
