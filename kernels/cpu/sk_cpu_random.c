/*
** sk_cpu_random.c — uniform_ and normal_ on the Philox stream (sk_random.h)
** Element i (logical C order) of a draw uses counter base + i alone, so a
** seed gives the same tensor whatever the thread count and the strides.
** float64 takes 53 random bits per uniform, the other types 24; normal_ is
** Box-Muller with one value per counter. Values are computed in double.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"
#include "sk_cpu_random.h"
#include "sk_random.h"

#include <math.h>

typedef struct RandCtx {
  SkWalk w;
  uint64_t seed, base;
  double a, b;        /* uniform: from, to - from; normal: mean, std */
  SkDType dt;
  int normal;
} RandCtx;

static double bits53(uint32_t hi, uint32_t lo) { return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1p-53; }

static double draw(const RandCtx *c, uint64_t i) {
  uint32_t r[4];
  sk_philox(c->seed, c->base + i, r);
  int wide = c->dt == SK_DTYPE_FLOAT64;
  if (!c->normal) return c->a + c->b * (wide ? bits53(r[0], r[1]) : (double)(r[0] >> 8) * 0x1p-24);
  double u1 = wide ? bits53(r[0], r[1]) + 0x1p-53 : ((double)r[0] + 1) * 0x1p-32; /* (0, 1]: log is finite */
  double u2 = wide ? bits53(r[2], r[3]) : (double)r[1] * 0x1p-32;
  return c->a + c->b * sqrt(-2 * log(u1)) * cos(6.283185307179586476925 * u2);
}

static void rand_row(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const RandCtx *c = ctx;
  for (int64_t i = 0; i < n; i++, p += st) {
    double v = draw(c, (uint64_t)(first + i));
    switch (c->dt) {
    case SK_DTYPE_FLOAT32: *(float *)p = (float)v; break;
    case SK_DTYPE_FLOAT64: *(double *)p = v; break;
    case SK_DTYPE_FLOAT16: *(uint16_t *)p = sk_float_to_half((float)v); break;
    default: *(uint16_t *)p = sk_float_to_bf16((float)v); break;
    }
  }
}

static void rand_range(void *ctx, int64_t b, int64_t e) {
  RandCtx *c = ctx;
  sk_walk_range(&c->w, c->w.data, b, e, rand_row, c);
}

static int fill_random(SkTensor *self, int normal, double a, double b) {
  for (int d = 0; d < self->ndim; d++)
    if (self->strides[d] == 0 && self->sizes[d] > 1)
      return sk_error("unsupported operation: more than one element of the written-to tensor 'self' refers to a "
                      "single memory location; clone() it first");
  if (self->numel == 0) return 0;
  RandCtx c;
  sk_walk_init(&c.w, self, 0);
  sk_random_get_state(&c.seed, &c.base);
  c.base = sk_random_reserve((uint64_t)self->numel);
  c.a = a;
  c.b = b;
  c.dt = self->dtype;
  c.normal = normal;
  sk_parallel_for(0, c.w.numel, SK_GRAIN / 8, rand_range, &c);
  return 0;
}

/* The argument checks are Meta's (sk_factories.c): one set for every backend. */
int sk_cpu_uniform_(SkTensor *self, double from, double to, void *generator) {
  if (sk_meta_kernel_uniform_(self, from, to, generator)) return -1;
  return fill_random(self, 0, from, to - from);
}

int sk_cpu_normal_(SkTensor *self, double mean, double std, void *generator) {
  if (sk_meta_kernel_normal_(self, mean, std, generator)) return -1;
  return fill_random(self, 1, mean, std);
}

/* {==== Integers, Bernoulli, permutations, multinomial ====
** Each draw reserves its counters up front; element i of a fill uses counter
** base + i (logical order), so values depend on the seed only. */
static uint64_t bits64(uint64_t seed, uint64_t ctr) {
  uint32_t r[4];
  sk_philox(seed, ctr, r);
  return (uint64_t)r[0] << 32 | r[1];
}

static double unit53(uint64_t seed, uint64_t ctr) { return (double)(bits64(seed, ctr) >> 11) * 0x1p-53; }

typedef struct DrawCtx {
  SkWalk w;
  uint64_t seed, base;
  int64_t from;
  uint64_t range;       /* random_: values from + [0, range), 0 standing for 2^64 */
  double p;             /* bernoulli_.float */
  const double *probs;  /* bernoulli_.Tensor: one probability per element, logical order */
  SkDType dt;
} DrawCtx;

static void store_int(char *p, SkDType dt, int64_t v) {
  if (sk_dtype_is_floating(dt)) sk_store_double(p, dt, (double)v);
  else sk_store_int64(p, dt, v);
}

static void random_row(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const DrawCtx *c = ctx;
  for (int64_t i = 0; i < n; i++, p += st) { /* unsigned: from + r may pass INT64_MAX only on the way to a value in range */
    uint64_t r = bits64(c->seed, c->base + (uint64_t)(first + i));
    if (c->range) r %= c->range;
    store_int(p, c->dt, (int64_t)((uint64_t)c->from + r));
  }
}

static void bernoulli_row(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const DrawCtx *c = ctx;
  for (int64_t i = 0; i < n; i++, p += st) {
    int64_t k = first + i;
    double prob = c->probs ? c->probs[k] : c->p;
    store_int(p, c->dt, unit53(c->seed, c->base + (uint64_t)k) < prob);
  }
}

typedef struct { DrawCtx *c; SkRowFn row; } DrawJob;
static void draw_range(void *ctx, int64_t b, int64_t e) {
  DrawJob *j = ctx;
  sk_walk_range(&j->c->w, j->c->w.data, b, e, j->row, j->c);
}

static int check_writable(const SkTensor *self) {
  for (int d = 0; d < self->ndim; d++)
    if (self->strides[d] == 0 && self->sizes[d] > 1)
      return sk_error("unsupported operation: more than one element of the written-to tensor 'self' refers to a "
                      "single memory location; clone() it first");
  return 0;
}

static void draw_all(SkTensor *self, DrawCtx *c, SkRowFn row) {
  sk_walk_init(&c->w, self, 0);
  sk_random_get_state(&c->seed, &c->base);
  c->base = sk_random_reserve((uint64_t)self->numel);
  c->dt = self->dtype;
  DrawJob j = {c, row};
  sk_parallel_for(0, c->w.numel, SK_GRAIN / 8, draw_range, &j);
}

int sk_cpu_random_from_(SkTensor *self, int64_t from, SkOptInt to, void *generator) {
  if (sk_meta_kernel_random_from_(self, from, to, generator)) return -1; /* the one set of argument checks */
  int64_t hi = to.has ? to.v - 1 : sk_random_upper(self->dtype); /* to > from, so to - 1 fits */
  if (check_writable(self)) return -1;
  if (self->numel == 0) return 0;
  DrawCtx c = {0};
  c.from = from;
  c.range = (uint64_t)hi - (uint64_t)from + 1; /* wraps to 0 for the full int64 range */
  draw_all(self, &c, random_row);
  return 0;
}

int sk_cpu_bernoulli_float_(SkTensor *self, double p, void *generator) {
  (void)generator;
  if (!(p >= 0 && p <= 1)) return sk_error("bernoulli_ expects p to be in [0, 1], but got p=%g", p);
  if (check_writable(self)) return -1;
  if (self->numel == 0) return 0;
  DrawCtx c = {0};
  c.p = p;
  draw_all(self, &c, bernoulli_row);
  return 0;
}

int sk_cpu_bernoulli_tensor_(SkTensor *self, const SkTensor *p, void *generator) {
  (void)generator;
  if (check_writable(self)) return -1;
  SkTensor *probs = sk_tensor_empty(self->ndim, self->sizes, SK_DTYPE_FLOAT64, SK_CPU);
  if (!probs) return -1;
  if (sk_copy_cpu(probs, p)) { sk_tensor_release(probs); return sk_error_context("bernoulli_: argument 'p'"); }
  const double *pv = sk_tensor_data(probs);
  for (int64_t i = 0; i < probs->numel; i++)
    if (!(pv[i] >= 0 && pv[i] <= 1)) {
      double bad = pv[i];
      sk_tensor_release(probs);
      return sk_error("bernoulli_: argument 'p' must hold probabilities in [0, 1], got %g", bad);
    }
  if (self->numel) {
    DrawCtx c = {0};
    c.probs = pv;
    draw_all(self, &c, bernoulli_row);
  }
  sk_tensor_release(probs);
  return 0;
}

int sk_cpu_randperm(SkTensor **result, int64_t n, int dtype, int layout, SkDevice device, int pin_memory) {
  (void)layout; (void)pin_memory; (void)device;
  if (sk_random_check_randperm(n, dtype)) return -1;
  SkDType dt = dtype >= 0 ? (SkDType)dtype : SK_DTYPE_INT64;
  SkTensor *t = sk_tensor_empty(1, &n, SK_DTYPE_INT64, SK_CPU);
  if (!t) return -1;
  int64_t *v = sk_tensor_data(t);
  uint64_t seed, base;
  sk_random_get_state(&seed, &base);
  base = sk_random_reserve((uint64_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; i++) v[i] = i;
  for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int64_t j = (int64_t)(bits64(seed, base + (uint64_t)i) % (uint64_t)(i + 1));
    int64_t x = v[i]; v[i] = v[j]; v[j] = x;
  }
  if (dt == SK_DTYPE_INT64) { *result = t; return 0; }
  SkTensor *c = sk_tensor_empty(1, &n, dt, SK_CPU);
  if (c && sk_copy_cpu(c, t)) { sk_tensor_release(c); c = NULL; }
  sk_tensor_release(t);
  *result = c;
  return c ? 0 : -1;
}


int sk_multinomial_check(const SkTensor *self, int64_t num_samples, int replacement, int64_t *rows, int64_t *cats) {
  if (self->ndim != 1 && self->ndim != 2)
    return sk_error("multinomial: argument 'self' must be 1 or 2 dim, got %d dims", self->ndim);
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("multinomial only supports floating-point dtypes for input, got: %s", sk_dtype_name(self->dtype));
  if (num_samples <= 0) return sk_error("cannot sample n_sample <= 0 samples");
  *cats = self->sizes[self->ndim - 1];
  *rows = self->ndim == 2 ? self->sizes[0] : 1;
  if (!replacement && num_samples > *cats)
    return sk_error("cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  return 0;
}

int sk_cpu_multinomial(SkTensor **result, const SkTensor *self, int64_t num_samples, int replacement, void *generator) {
  (void)generator;
  int64_t rows, cats;
  if (sk_multinomial_check(self, num_samples, replacement, &rows, &cats)) return -1;
  SkTensor *w = sk_tensor_empty(self->ndim, self->sizes, SK_DTYPE_FLOAT64, SK_CPU);
  if (!w || sk_copy_cpu(w, self)) { sk_tensor_release(w); return -1; }
  double *wv = sk_tensor_data(w);
  for (int64_t r = 0; r < rows; r++) {
    double total = 0;
    int64_t nonzero = 0;
    for (int64_t k = 0; k < cats; k++) {
      double x = wv[r * cats + k];
      if (!(x >= 0) || isinf(x)) { sk_tensor_release(w); return sk_error("invalid multinomial distribution (encountering probability entry < 0 or inf or nan)"); }
      total += x;
      nonzero += x > 0;
    }
    if (!(total > 0)) { sk_tensor_release(w); return sk_error("invalid multinomial distribution (sum of probabilities <= 0)"); }
    if (!replacement && num_samples > nonzero) {
      sk_tensor_release(w);
      return sk_error("cannot sample n_sample > prob_dist.size(-1) samples without replacement (row %lld has %lld non-zero entries)",
                      (long long)r, (long long)nonzero);
    }
  }
  int64_t shape[2] = {rows, num_samples};
  SkTensor *out = self->ndim == 2 ? sk_tensor_empty(2, shape, SK_DTYPE_INT64, SK_CPU) : sk_tensor_empty(1, &num_samples, SK_DTYPE_INT64, SK_CPU);
  if (!out) { sk_tensor_release(w); return -1; }
  int64_t *ov = sk_tensor_data(out);
  uint64_t seed, base;
  sk_random_get_state(&seed, &base);
  base = sk_random_reserve((uint64_t)(rows * num_samples));
  for (int64_t r = 0; r < rows; r++) {
    double *row = wv + r * cats, total = 0;
    for (int64_t k = 0; k < cats; k++) total += row[k];
    for (int64_t s = 0; s < num_samples; s++) {
      double u = unit53(seed, base + (uint64_t)(r * num_samples + s)) * total, acc = 0;
      int64_t pick = cats - 1;
      for (int64_t k = 0; k < cats; k++) {
        acc += row[k];
        if (u < acc && row[k] > 0) { pick = k; break; }
      }
      while (row[pick] <= 0 && pick > 0) pick--; /* rounding at the top end */
      ov[r * num_samples + s] = pick;
      if (!replacement) { total -= row[pick]; row[pick] = 0; }
    }
  }
  sk_tensor_release(w);
  *result = out;
  return 0;
}
/* }==== */
