/*
** sk_factories.c — tensor factories: empty, zeros/ones/full, arange, rand/randn
** empty is the one backend kernel (CPU and Meta); every other factory is a
** Math composite over the dispatched empty, fill_, uniform_, normal_ and
** copy_, so it works on any device whose backend provides those.
** The Meta kernels of fill_, uniform_ and normal_ live here too: they only
** check their arguments, as the CPU kernels would, and touch no data.
*/
#include "sk_ops.h"
#include "sk_error.h"

#include <math.h>
#include <stdint.h>

/* {==== Argument checks ==== */
/* dtype -1 (None) resolves to fallback. */
static int resolve_dtype(int dtype, SkDType fallback, SkDType *out) {
  *out = dtype < 0 ? fallback : (SkDType)dtype;
  if (dtype >= SK_DTYPE_COUNT) { sk_error("argument 'dtype': invalid dtype %d", dtype); return -1; }
  return 0;
}

static SkDevice resolve_device(SkDevice device) { return device.type >= 0 ? device : SK_CPU; }

static int check_size(SkIntList size) {
  if (size.n > SK_MAX_DIMS)
    return sk_error("argument 'size' has %d dimensions, but tensors have at most %d", size.n, SK_MAX_DIMS);
  for (int i = 0; i < size.n; i++)
    if (size.data[i] < 0) return sk_error("negative dimension %lld in argument 'size'", (long long)size.data[i]);
  return 0;
}
/* }==== */

/* {==== empty ==== */
/* memory_format: -1 None, 0 contiguous_format; layout and pin_memory are accepted and ignored. */
static int empty_on(SkTensor **result, SkIntList size, int dtype, SkDevice device, int memory_format) {
  SkDType dt;
  if (memory_format != -1 && memory_format != 0)
    return sk_error("empty: argument 'memory_format' must be contiguous_format (got memory format %d)", memory_format);
  if (check_size(size) || resolve_dtype(dtype, SK_DTYPE_FLOAT32, &dt)) return -1;
  *result = sk_tensor_empty(size.n, size.data, dt, device);
  return *result ? 0 : -1;
}

int sk_cpu_empty(SkTensor **result, SkIntList size, int dtype, int layout, SkDevice device, int pin_memory,
                 int memory_format) {
  (void)layout, (void)pin_memory;
  return empty_on(result, size, dtype, resolve_device(device), memory_format);
}

int sk_meta_kernel_empty(SkTensor **result, SkIntList size, int dtype, int layout, SkDevice device, int pin_memory,
                         int memory_format) {
  (void)layout, (void)pin_memory;
  return empty_on(result, size, dtype, device.type == SK_DEVICE_META ? device : SK_META, memory_format);
}
/* }==== */

/* {==== zeros, ones, full ==== */
static int filled(SkTensor **result, SkIntList size, SkScalar value, int dtype, int layout, SkDevice device,
                  int pin_memory) {
  SkTensor *t = NULL;
  if (sk_empty_memory_format(&t, size, dtype, layout, device, pin_memory, -1)) return -1;
  if (sk_fill__Scalar(t, value)) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}

int sk_math_zeros(SkTensor **result, SkIntList size, int dtype, int layout, SkDevice device, int pin_memory) {
  return filled(result, size, sk_scalar_int(0), dtype, layout, device, pin_memory);
}

int sk_math_ones(SkTensor **result, SkIntList size, int dtype, int layout, SkDevice device, int pin_memory) {
  return filled(result, size, sk_scalar_int(1), dtype, layout, device, pin_memory);
}

/* Without a dtype, full takes the fill value's: bool, int64, or the default float32. */
int sk_math_full(SkTensor **result, SkIntList size, SkScalar fill_value, int dtype, int layout, SkDevice device,
                 int pin_memory) {
  if (fill_value.kind == SK_SCALAR_NONE) return sk_error("full: argument 'fill_value' must be a number, got None");
  if (dtype < 0)
    dtype = fill_value.kind == SK_SCALAR_BOOL ? SK_DTYPE_BOOL
          : fill_value.kind == SK_SCALAR_INT ? SK_DTYPE_INT64 : SK_DTYPE_FLOAT32;
  return filled(result, size, fill_value, dtype, layout, device, pin_memory);
}
/* }==== */

/* {==== arange ==== */
/* PyTorch computes in the dtype's accumulate type: int64 for integers,
** float for the half types, double for float32 and float64. */
typedef struct ArangeRange {
  int64_t n;
  int64_t istart, istep;  /* integer dtypes */
  double fstart, fstep;   /* floating dtypes (already rounded to float for half types) */
} ArangeRange;

static int arange_range(SkScalar start, SkScalar end, SkScalar step, SkDType dt, ArangeRange *r) {
  if (sk_dtype_is_integral(dt)) {
    int64_t a = sk_scalar_to_int(start), b = sk_scalar_to_int(end), s = sk_scalar_to_int(step);
    if (s == 0) return sk_error("step must be nonzero");
    if (!((s > 0 && b >= a) || (s < 0 && b <= a)))
      return sk_error("upper bound and larger bound inconsistent with step sign");
    if (dt == SK_DTYPE_INT64) { /* exact: ceil((b - a) / s), b - a and s of the same sign */
      if (fabs((double)b - (double)a) >= 9.0e18) return sk_error("invalid size, possible overflow?");
      int64_t d = b - a;
      r->n = d / s + (d % s != 0);
    } else {
      double nd = ceil((sk_scalar_to_double(end) - sk_scalar_to_double(start)) / sk_scalar_to_double(step));
      if (!(nd >= 0 && nd <= 9.2e18)) return sk_error("invalid size, possible overflow?");
      r->n = (int64_t)nd;
    }
    r->istart = a, r->istep = s;
    return 0;
  }
  int half = dt == SK_DTYPE_FLOAT16 || dt == SK_DTYPE_BFLOAT16;
  double a = sk_scalar_to_double(start), b = sk_scalar_to_double(end), s = sk_scalar_to_double(step);
  double xa = half ? (float)a : a, xb = half ? (float)b : b, xs = half ? (float)s : s;
  if (!(xs > 0 || xs < 0)) return sk_error("step must be nonzero");
  if (!isfinite(xa) || !isfinite(xb)) return sk_error("unsupported range: %g -> %g", xa, xb);
  if (!((xs > 0 && xb >= xa) || (xs < 0 && xb <= xa)))
    return sk_error("upper bound and larger bound inconsistent with step sign");
  double nd = ceil((b - a) / s);
  if (!(nd >= 0 && nd <= 9.2e18)) return sk_error("invalid size, possible overflow?");
  r->n = (int64_t)nd;
  r->fstart = xa, r->fstep = xs;
  return 0;
}

/* Writes start + i*step into a contiguous CPU tensor. */
static void arange_write(SkTensor *t, const ArangeRange *r) {
  void *p = sk_tensor_data(t);
  int64_t n = t->numel;
  switch (t->dtype) {
  case SK_DTYPE_INT64: for (int64_t i = 0; i < n; i++) ((int64_t *)p)[i] = r->istart + r->istep * i; break;
  case SK_DTYPE_INT32: for (int64_t i = 0; i < n; i++) ((int32_t *)p)[i] = (int32_t)(r->istart + r->istep * i); break;
  case SK_DTYPE_FLOAT32: for (int64_t i = 0; i < n; i++) ((float *)p)[i] = (float)(r->fstart + r->fstep * (double)i); break;
  case SK_DTYPE_FLOAT64: for (int64_t i = 0; i < n; i++) ((double *)p)[i] = r->fstart + r->fstep * (double)i; break;
  case SK_DTYPE_FLOAT16:
    for (int64_t i = 0; i < n; i++) ((uint16_t *)p)[i] = sk_float_to_half((float)r->fstart + (float)r->fstep * (float)i);
    break;
  case SK_DTYPE_BFLOAT16:
    for (int64_t i = 0; i < n; i++) ((uint16_t *)p)[i] = sk_float_to_bf16((float)r->fstart + (float)r->fstep * (float)i);
    break;
  default: { /* the small integer types */
    size_t sz = sk_dtype_size(t->dtype);
    for (int64_t i = 0; i < n; i++) sk_store_int64((char *)p + (size_t)i * sz, t->dtype, r->istart + r->istep * i);
  }
  }
}

int sk_math_arange(SkTensor **result, SkScalar start, SkScalar end, SkScalar step, int dtype, int layout,
                   SkDevice device, int pin_memory) {
  int all_int = start.kind != SK_SCALAR_FLOAT && end.kind != SK_SCALAR_FLOAT && step.kind != SK_SCALAR_FLOAT;
  SkDType dt;
  ArangeRange r;
  if (resolve_dtype(dtype, all_int ? SK_DTYPE_INT64 : SK_DTYPE_FLOAT32, &dt)) return -1;
  if (dt == SK_DTYPE_BOOL) return sk_error("arange: argument 'dtype' must not be bool");
  if (arange_range(start, end, step, dt, &r)) return -1;
  SkDevice dev = resolve_device(device);
  SkIntList size = {&r.n, 1};
  if (dev.type == SK_DEVICE_META) return sk_empty_memory_format(result, size, (int)dt, layout, dev, pin_memory, -1);

  SkTensor *cpu = NULL, *out = NULL;
  if (sk_empty_memory_format(&cpu, size, (int)dt, layout, SK_CPU, pin_memory, -1)) return -1;
  arange_write(cpu, &r);
  if (dev.type == SK_DEVICE_CPU) { *result = cpu; return 0; }
  int rc = sk_empty_memory_format(&out, size, (int)dt, layout, dev, pin_memory, -1);
  if (!rc) rc = sk_copy_(out, cpu, 0);
  sk_tensor_release(cpu);
  if (rc) { sk_tensor_release(out); return -1; }
  *result = out;
  return 0;
}

int sk_math_arange_end(SkTensor **result, SkScalar end, int dtype, int layout, SkDevice device, int pin_memory) {
  return sk_math_arange(result, sk_scalar_int(0), end, sk_scalar_int(1), dtype, layout, device, pin_memory);
}
/* }==== */

/* {==== rand, randn ==== */
static int random_tensor(SkTensor **result, const char *op, int normal, SkIntList size, int dtype, int layout,
                         SkDevice device, int pin_memory) {
  SkDType dt;
  SkTensor *t = NULL;
  if (resolve_dtype(dtype, SK_DTYPE_FLOAT32, &dt)) return -1;
  if (!sk_dtype_is_floating(dt)) return sk_error("%s expects a floating point dtype, got %s", op, sk_dtype_name(dt));
  if (sk_empty_memory_format(&t, size, (int)dt, layout, device, pin_memory, -1)) return -1;
  if (normal ? sk_normal_(t, 0, 1, NULL) : sk_uniform_(t, 0, 1, NULL)) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}

int sk_math_rand(SkTensor **result, SkIntList size, int dtype, int layout, SkDevice device, int pin_memory) {
  return random_tensor(result, "rand", 0, size, dtype, layout, device, pin_memory);
}

int sk_math_randn(SkTensor **result, SkIntList size, int dtype, int layout, SkDevice device, int pin_memory) {
  return random_tensor(result, "randn", 1, size, dtype, layout, device, pin_memory);
}
/* }==== */

/* {==== Meta kernels of the in-place fills ==== */
int sk_meta_kernel_fill_(SkTensor *self, SkScalar value) {
  (void)self;
  if (value.kind == SK_SCALAR_NONE) return sk_error("fill_: argument 'value' must be a number, got None");
  return 0;
}

int sk_meta_kernel_uniform_(SkTensor *self, double from, double to, void *generator) {
  (void)generator;
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("uniform_ expects a floating point dtype for argument 'self', got %s", sk_dtype_name(self->dtype));
  if (!(from <= to)) return sk_error("uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
  return 0;
}

int sk_meta_kernel_normal_(SkTensor *self, double mean, double std, void *generator) {
  (void)mean, (void)generator;
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("normal_ expects a floating point dtype for argument 'self', got %s", sk_dtype_name(self->dtype));
  if (!(std >= 0.0)) return sk_error("normal expects std >= 0.0, but found std %g", std);
  return 0;
}
/* }==== */
