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

static int fill_random(SkTensor *self, const char *op, int normal, double a, double b) {
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("%s expects a floating point tensor, got %s", op, sk_dtype_name(self->dtype));
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

int sk_cpu_uniform_(SkTensor *self, double from, double to, void *generator) {
  (void)generator;
  if (!(from <= to))
    return sk_error("uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
  return fill_random(self, "uniform_", 0, from, to - from);
}

int sk_cpu_normal_(SkTensor *self, double mean, double std, void *generator) {
  (void)generator;
  if (!(std >= 0)) return sk_error("normal expects std >= 0.0, but found std %g", std);
  return fill_random(self, "normal_", 1, mean, std);
}
