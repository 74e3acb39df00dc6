/*
** sk_factories.c — tensor factories: empty, zeros/ones/full, arange, rand/randn, new_*
** empty is the one backend kernel (CPU and Meta); every other factory is a
** Math composite over the dispatched empty, fill_, uniform_, normal_ and
** copy_, so it works on any device whose backend provides those.
** The Meta kernels of fill_, uniform_ and normal_ live here too: they only
** check their arguments, as the CPU kernels would, and touch no data.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_cpu_random.h"
#include "sk_error.h"
#include "sk_random.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* {==== Argument checks ==== */
/* Hands over cpu (a finished CPU tensor) as *result on dev: itself, or a copy on dev. */
static int move_to(SkTensor **result, SkTensor *cpu, SkDevice dev) {
  if (dev.type == SK_DEVICE_CPU) { *result = cpu; return 0; }
  SkTensor *out = NULL;
  SkIntList size = {cpu->sizes, cpu->ndim};
  int rc = sk_empty_memory_format(&out, size, (int)cpu->dtype, -1, dev, -1, -1);
  if (!rc) rc = sk_copy_(out, cpu, 0);
  sk_tensor_release(cpu);
  if (rc) { sk_tensor_release(out); return -1; }
  *result = out;
  return 0;
}

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
    return sk_error("argument 'memory_format' must be contiguous_format (got %s)", sk_memory_format_name(memory_format));
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
/* PyTorch computes the elements in the dtype's accumulate type: int64 for integers,
** float for the half types, double for float32 and float64. A float range is checked
** and counted in double for every float dtype, so start == end is empty in each. */
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
    if (dt == SK_DTYPE_INT64) { /* exact: ceil(|b - a| / |s|) in unsigned, b - a and s of the same sign */
      uint64_t d = s > 0 ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
      uint64_t m = s > 0 ? (uint64_t)s : -(uint64_t)s, n = d / m + (d % m != 0);
      if (n > INT64_MAX) return sk_error("invalid size, possible overflow?");
      r->n = (int64_t)n;
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
  double xs = half ? (double)(float)s : s; /* the step the elements use: nonzero after rounding */
  if (!(xs > 0 || xs < 0)) return sk_error("step must be nonzero");
  if (!isfinite(a) || !isfinite(b)) return sk_error("unsupported range: %g -> %g", a, b);
  if (!((s > 0 && b >= a) || (s < 0 && b <= a)))
    return sk_error("upper bound and larger bound inconsistent with step sign");
  double nd = ceil((b - a) / s);
  if (!(nd >= 0 && nd <= 9.2e18)) return sk_error("invalid size, possible overflow?");
  r->n = (int64_t)nd;
  r->fstart = half ? (double)(float)a : a, r->fstep = xs;
  return 0;
}

/* start + i*step in unsigned arithmetic: i*step alone may pass INT64_MAX where the sum does not
** (int64); for the smaller integer types the value wraps, as the cast to them does anyway. */
static inline int64_t arange_int(const ArangeRange *r, int64_t i) {
  return (int64_t)((uint64_t)r->istart + (uint64_t)r->istep * (uint64_t)i);
}

/* Writes start + i*step into a contiguous CPU tensor. */
static void arange_write(SkTensor *t, const ArangeRange *r) {
  void *p = sk_tensor_data(t);
  int64_t n = t->numel;
  switch (t->dtype) {
  case SK_DTYPE_INT64: for (int64_t i = 0; i < n; i++) ((int64_t *)p)[i] = arange_int(r, i); break;
  case SK_DTYPE_INT32: for (int64_t i = 0; i < n; i++) ((int32_t *)p)[i] = (int32_t)arange_int(r, i); break;
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
    for (int64_t i = 0; i < n; i++) sk_store_int64((char *)p + (size_t)i * sz, t->dtype, arange_int(r, i));
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

  SkTensor *cpu = NULL;
  if (sk_empty_memory_format(&cpu, size, (int)dt, layout, SK_CPU, pin_memory, -1)) return -1;
  arange_write(cpu, &r);
  return move_to(result, cpu, dev);
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

/* {==== Like a tensor ==== */
/* An empty tensor shaped like self; dtype and device default to self's. */
static int empty_like_of(SkTensor **result, const SkTensor *self, int dtype, int layout, SkDevice device, int pin_memory,
                         int memory_format) {
  if (memory_format > 1)
    return sk_error("argument 'memory_format' (%s): only contiguous_format and preserve_format are supported",
                    sk_memory_format_name(memory_format));
  SkIntList size = {self->sizes, self->ndim};
  return sk_empty_memory_format(result, size, dtype >= 0 ? dtype : (int)self->dtype, layout,
                                device.type >= 0 ? device : self->device, pin_memory, -1);
}

int sk_default_empty_like(SkTensor **result, const SkTensor *self, int dtype, int layout, SkDevice device,
                          int pin_memory, int memory_format) {
  return empty_like_of(result, self, dtype, layout, device, pin_memory, memory_format);
}

/* empty_like then an in-place fill; the result is released if the fill fails. */
#define FILLED_LIKE(name, extra_params, fill)                                                            \
  int sk_default_##name(SkTensor **result, const SkTensor *self extra_params, int dtype, int layout,       \
                        SkDevice device, int pin_memory, int memory_format) {                            \
    SkTensor *t = NULL;                                                                                  \
    if (empty_like_of(&t, self, dtype, layout, device, pin_memory, memory_format)) return -1;            \
    if (fill) { sk_tensor_release(t); return -1; }                                                       \
    *result = t;                                                                                         \
    return 0;                                                                                            \
  }
#define NO_PARAMS
#define COMMA_SCALAR , SkScalar fill_value
FILLED_LIKE(zeros_like, NO_PARAMS, sk_fill__Scalar(t, sk_scalar_int(0)))
FILLED_LIKE(ones_like, NO_PARAMS, sk_fill__Scalar(t, sk_scalar_int(1)))
FILLED_LIKE(full_like, COMMA_SCALAR, sk_fill__Scalar(t, fill_value))
FILLED_LIKE(rand_like, NO_PARAMS, sk_uniform_(t, 0, 1, NULL))
FILLED_LIKE(randn_like, NO_PARAMS, sk_normal_(t, 0, 1, NULL))
#undef FILLED_LIKE

/* PyTorch's new_*: a factory of the given size whose dtype and device default to self's. */
#define NEW_OF(name, extra_params, make)                                                                 \
  int sk_math_new_##name(SkTensor **result, const SkTensor *self, SkIntList size extra_params, int dtype, \
                         int layout, SkDevice device, int pin_memory) {                                   \
    int dt = dtype >= 0 ? dtype : (int)self->dtype;                                                      \
    SkDevice dev = device.type >= 0 ? device : self->device;                                              \
    return make;                                                                                         \
  }
NEW_OF(empty, NO_PARAMS, sk_empty_memory_format(result, size, dt, layout, dev, pin_memory, -1))
NEW_OF(zeros, NO_PARAMS, sk_zeros(result, size, dt, layout, dev, pin_memory))
NEW_OF(ones, NO_PARAMS, sk_ones(result, size, dt, layout, dev, pin_memory))
NEW_OF(full, COMMA_SCALAR, sk_full(result, size, fill_value, dt, layout, dev, pin_memory))
#undef NEW_OF
#undef NO_PARAMS
#undef COMMA_SCALAR
/* }==== */

/* {==== linspace, logspace, eye ==== */
/* steps values from start to end, computed in double from both ends (as PyTorch), optionally base ** v.
** Integer dtypes first truncate start and end (PyTorch's Scalar::to<scalar_t>), and each value
** truncates when stored: PyTorch's scalar formula. (Its vectorized path truncates each vector's
** first value before adding steps, so PyTorch's own values vary with its CPU capability.) */
static int spaced(SkTensor **result, const char *op, SkScalar start, SkScalar end, int64_t steps, double base, int log,
                  int dtype, int layout, SkDevice device, int pin_memory) {
  if (steps < 0) return sk_error("%s: number of steps must be non-negative", op);
  SkDType dt;
  if (resolve_dtype(dtype, SK_DTYPE_FLOAT32, &dt)) return -1;
  if (dt == SK_DTYPE_BOOL) return sk_error("%s: argument 'dtype' must not be bool", op);
  /* linspace's ends become elements of dt and must fit it (PyTorch's Scalar::to); logspace's are exponents */
  if (!log && (sk_scalar_check(start, dt) || sk_scalar_check(end, dt))) return -1;
  SkDevice dev = resolve_device(device);
  SkIntList size = {&steps, 1};
  if (dev.type == SK_DEVICE_META) return sk_empty_memory_format(result, size, (int)dt, layout, dev, pin_memory, -1);
  SkTensor *cpu = NULL;
  if (sk_empty_memory_format(&cpu, size, (int)dt, layout, SK_CPU, pin_memory, -1)) return -1;
  int integral = sk_dtype_is_integral(dt);
  double a = integral ? (double)sk_scalar_to_int(start) : sk_scalar_to_double(start);
  double b = integral ? (double)sk_scalar_to_int(end) : sk_scalar_to_double(end);
  double step = steps > 1 ? (b - a) / (double)(steps - 1) : 0;
  char *p = sk_tensor_data(cpu);
  size_t sz = sk_dtype_size(dt);
  for (int64_t i = 0; i < steps; i++) {
    double v = steps == 1 ? a : i < steps / 2 ? a + step * (double)i : b - step * (double)(steps - 1 - i);
    if (log) v = pow(base, v);
    sk_store_double(p + (size_t)i * sz, dt, v);
  }
  return move_to(result, cpu, dev);
}

int sk_math_linspace(SkTensor **result, SkScalar start, SkScalar end, int64_t steps, int dtype, int layout,
                     SkDevice device, int pin_memory) {
  return spaced(result, "linspace", start, end, steps, 0, 0, dtype, layout, device, pin_memory);
}

int sk_math_logspace(SkTensor **result, SkScalar start, SkScalar end, int64_t steps, double base, int dtype, int layout,
                     SkDevice device, int pin_memory) {
  return spaced(result, "logspace", start, end, steps, base, 1, dtype, layout, device, pin_memory);
}

int sk_math_eye_m(SkTensor **result, int64_t n, int64_t m, int dtype, int layout, SkDevice device, int pin_memory) {
  if (n < 0) return sk_error("eye: argument 'n' must be greater or equal to 0, got %lld", (long long)n);
  if (m < 0) return sk_error("eye: argument 'm' must be greater or equal to 0, got %lld", (long long)m);
  int64_t sizes[2] = {n, m};
  SkTensor *t = NULL;
  if (sk_math_zeros(&t, (SkIntList){sizes, 2}, dtype, layout, device, pin_memory)) return -1;
  int64_t k = n < m ? n : m, stride = k > 1 ? m + 1 : 1; /* k > 1: n, m >= 2 and n * m fits, so m + 1 does */
  SkTensor *diag = sk_tensor_alias(t, 1, &k, &stride, t->offset); /* the diagonal as a view */
  int rc = diag ? sk_fill__Scalar(diag, sk_scalar_int(1)) : -1;
  sk_tensor_release(diag);
  if (rc) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}

int sk_math_eye(SkTensor **result, int64_t n, int dtype, int layout, SkDevice device, int pin_memory) {
  return sk_math_eye_m(result, n, n, dtype, layout, device, pin_memory);
}
/* }==== */

/* {==== randint, bernoulli ==== */
int sk_math_randint_low(SkTensor **result, int64_t low, int64_t high, SkIntList size, int dtype, int layout,
                        SkDevice device, int pin_memory) {
  SkTensor *t = NULL;
  if (sk_empty_memory_format(&t, size, dtype >= 0 ? dtype : SK_DTYPE_INT64, layout, device, pin_memory, -1)) return -1;
  if (sk_random__from(t, low, (SkOptInt){1, high}, NULL)) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}

int sk_math_randint(SkTensor **result, int64_t high, SkIntList size, int dtype, int layout, SkDevice device, int pin_memory) {
  return sk_math_randint_low(result, 0, high, size, dtype, layout, device, pin_memory);
}

int sk_default_bernoulli(SkTensor **result, const SkTensor *self, void *generator) {
  SkTensor *t = NULL;
  if (empty_like_of(&t, self, -1, -1, sk_device(-1, 0), -1, -1)) return -1;
  if (sk_bernoulli_(t, self, generator)) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}

int sk_default_bernoulli_p(SkTensor **result, const SkTensor *self, double p, void *generator) {
  SkTensor *t = NULL;
  if (empty_like_of(&t, self, -1, -1, sk_device(-1, 0), -1, -1)) return -1;
  if (sk_bernoulli__float(t, p, generator)) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}
/* }==== */

/* {==== Meta kernels of the random ops: the checks, no data ==== */
int sk_meta_kernel_random_from_(SkTensor *self, int64_t from, SkOptInt to, void *generator) {
  (void)generator;
  if (to.has && from >= to.v)
    return sk_error("random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld", (long long)from, (long long)to.v);
  int64_t top = sk_random_upper(self->dtype), hi = to.has ? to.v - 1 : top; /* to > from, so to - 1 fits */
  if (hi > top || (self->dtype != SK_DTYPE_INT64 && from < -top - 1))
    return sk_error("random_: the range [%lld, %lld] does not fit in %s", (long long)from, (long long)hi, sk_dtype_name(self->dtype));
  return 0;
}

int sk_meta_kernel_bernoulli_float_(SkTensor *self, double p, void *generator) {
  (void)self; (void)generator;
  return p >= 0 && p <= 1 ? 0 : sk_error("bernoulli_ expects p to be in [0, 1], but got p=%g", p);
}

int sk_meta_kernel_bernoulli_tensor_(SkTensor *self, const SkTensor *p, void *generator) {
  (void)generator;
  for (int i = 0; i < p->ndim; i++) {
    int d = self->ndim - p->ndim + i;
    if (d < 0 || (p->sizes[i] != 1 && p->sizes[i] != self->sizes[d]))
      return sk_error("bernoulli_: argument 'p' is not broadcastable to the shape of 'self'");
  }
  return 0;
}

int sk_meta_kernel_randperm(SkTensor **result, int64_t n, int dtype, int layout, SkDevice device, int pin_memory) {
  (void)layout; (void)pin_memory; (void)device;
  if (sk_random_check_randperm(n, dtype)) return -1;
  *result = sk_tensor_empty(1, &n, dtype >= 0 ? (SkDType)dtype : SK_DTYPE_INT64, SK_META);
  return *result ? 0 : -1;
}

int sk_meta_kernel_multinomial(SkTensor **result, const SkTensor *self, int64_t num_samples, int replacement,
                               void *generator) {
  (void)generator;
  int64_t rows, cats;
  if (sk_multinomial_check(self, num_samples, replacement, &rows, &cats)) return -1;
  int64_t shape[2] = {rows, num_samples};
  *result = self->ndim == 2 ? sk_tensor_empty(2, shape, SK_DTYPE_INT64, SK_META) : sk_tensor_empty(1, &num_samples, SK_DTYPE_INT64, SK_META);
  return *result ? 0 : -1;
}
/* }==== */

/* {==== resize_, new_empty_strided, randint_like, normal ==== */
/* PyTorch's resize_: the same sizes leave self alone (strides too); other sizes make self
** contiguous over its storage from its offset, grown (old bytes kept) when too small. A
** tensor that requires grad refuses, as PyTorch's Variable does. */
int sk_default_resize_(SkTensor *self, SkIntList size, int memory_format) {
  if (memory_format > 1)
    return sk_error("argument 'memory_format' must be contiguous_format or preserve_format in sk (got %s)",
                    sk_memory_format_name(memory_format));
  if (sk_tensor_grad_flag(self)) return sk_error("cannot resize variables that require grad");
  if (check_size(size)) return -1;
  if (size.n == self->ndim && (size.n == 0 || memcmp(size.data, self->sizes, (size_t)size.n * sizeof *size.data) == 0))
    return 0;
  return sk_tensor_resize(self, size.n, size.data);
}

int sk_math_resize_as_(SkTensor *self, const SkTensor *the_template, int memory_format) {
  return sk_resize_(self, (SkIntList){the_template->sizes, the_template->ndim}, memory_format);
}

int sk_default_new_empty_strided(SkTensor **result, const SkTensor *self, SkIntList size, SkIntList stride, int dtype,
                                 int layout, SkDevice device, int pin_memory) {
  (void)layout, (void)pin_memory;
  SkDType dt;
  if (size.n != stride.n)
    return sk_error("dimensionality of sizes (%d) must match dimensionality of strides (%d)", size.n, stride.n);
  if (check_size(size) || resolve_dtype(dtype, self->dtype, &dt)) return -1;
  *result = sk_tensor_empty_strided(size.n, size.data, stride.data, dt, device.type >= 0 ? device : self->device);
  return *result ? 0 : -1;
}

int sk_math_randint_like_low_dtype(SkTensor **result, const SkTensor *self, int64_t low, int64_t high, int dtype, int layout,
                                   SkDevice device, int pin_memory, int memory_format) {
  SkTensor *t = NULL;
  if (empty_like_of(&t, self, dtype, layout, device, pin_memory, memory_format)) return -1;
  if (sk_random__from(t, low, (SkOptInt){1, high}, NULL)) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}

int sk_math_randint_like(SkTensor **result, const SkTensor *self, int64_t high, int dtype, int layout, SkDevice device,
                         int pin_memory, int memory_format) {
  return sk_math_randint_like_low_dtype(result, self, 0, high, dtype, layout, device, pin_memory, memory_format);
}

/* mean + std·N(0, 1) over the broadcast shape of the tensor arguments (NULL: the double),
** in their promoted dtype. A kernel of its own (DefaultBackend) so that autograd sees one
** op, whose formula gives the parameters zero gradients, as PyTorch's. */
static int normal_of(SkTensor **result, const SkTensor *mean, double mean_v, const SkTensor *std, double std_v, void *generator) {
  if (!std && !(std_v >= 0.0)) return sk_error("normal expects std >= 0.0, but found std %g", std_v);
  const SkTensor *like = mean ? mean : std, *ts[2] = {mean ? mean : std, std ? std : mean};
  SkDType dt = sk_result_type(2, ts);
  if (!sk_dtype_is_floating(dt)) return sk_error("normal expects floating point tensors, got %s", sk_dtype_name(dt));
  if (std && sk_device_host_addressable(std->device)) { /* PyTorch's check of the values */
    SkTensor *neg = NULL, *any = NULL;
    int rc = sk_lt_Scalar(&neg, std, sk_scalar_float(0.0));
    if (!rc) rc = sk_any(&any, neg);
    int bad = !rc && *(const uint8_t *)sk_tensor_data(any);
    sk_tensor_release(neg), sk_tensor_release(any);
    if (rc) return -1;
    if (bad) return sk_error("normal expects all elements of std >= 0.0");
  }
  SkTensor *noise = NULL, *scaled = NULL, *m = NULL, *s = NULL;
  int rc = 0;
  if (mean && std) { /* the broadcast shape, through a sum of zeros */
    rc = sk_zeros_like(&m, mean, (int)dt, -1, sk_device(-1, 0), -1, -1);
    if (!rc) rc = sk_zeros_like(&s, std, (int)dt, -1, sk_device(-1, 0), -1, -1);
    if (!rc) rc = sk_add(&noise, m, s, sk_scalar_int(1));
  } else {
    rc = sk_empty_like(&noise, like, (int)dt, -1, sk_device(-1, 0), -1, -1);
  }
  if (!rc) rc = sk_normal_(noise, 0.0, 1.0, generator);
  if (!rc) rc = std ? sk_mul(&scaled, noise, std) : sk_mul_Scalar(&scaled, noise, sk_scalar_float(std_v));
  if (!rc) rc = mean ? sk_add(result, scaled, mean, sk_scalar_int(1))
                     : sk_add_Scalar(result, scaled, sk_scalar_float(mean_v), sk_scalar_int(1));
  sk_tensor_release(noise), sk_tensor_release(scaled), sk_tensor_release(m), sk_tensor_release(s);
  return rc;
}

int sk_default_normal_Tensor_float(SkTensor **result, const SkTensor *mean, double std, void *generator) {
  return normal_of(result, mean, 0, NULL, std, generator);
}

int sk_default_normal_float_Tensor(SkTensor **result, double mean, const SkTensor *std, void *generator) {
  return normal_of(result, NULL, mean, std, 0, generator);
}

int sk_default_normal_Tensor_Tensor(SkTensor **result, const SkTensor *mean, const SkTensor *std, void *generator) {
  return normal_of(result, mean, 0, std, 0, generator);
}

int sk_math_normal_float_float(SkTensor **result, double mean, double std, SkIntList size, void *generator, int dtype,
                               int layout, SkDevice device, int pin_memory) {
  SkTensor *t = NULL;
  if (!(std >= 0.0)) return sk_error("normal expects std >= 0.0, but found std %g", std);
  if (sk_empty_memory_format(&t, size, dtype, layout, device, pin_memory, -1)) return -1;
  if (sk_normal_(t, mean, std, generator)) { sk_tensor_release(t); return -1; }
  *result = t;
  return 0;
}
/* }==== */
