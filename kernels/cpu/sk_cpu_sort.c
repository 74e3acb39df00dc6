/*
** sk_cpu_sort.c — sort and topk
** Each slice along dim is sorted as (key, index) pairs. A key is an unsigned
** integer in the order of the values: floats flip their sign-magnitude bits,
** -0.0 keys as +0.0, every NaN keys above +inf (so NaN sorts last ascending
** and first descending, as in PyTorch); signed integers flip the sign bit;
** descending inverts the key. An LSD radix sort on bytes is stable and skips
** the bytes all keys share, so equal values keep their original order in
** both directions: that is sort(stable=True), and the tie order of topk.
** Short slices use insertion sort. Slices sort in parallel, each with its
** own buffers; values are copied from self through the sorted indices, so
** they keep their exact bits (NaN payloads, the sign of zero).
** Limit: a slice has fewer than 2^32 elements (indices are 32-bit while sorting).
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

#include <stdlib.h>

#define INSERTION_MAX 32

/* {==== Keys ==== */
static inline uint32_t key_f32(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
  if (u == 0x80000000u) u = 0;
  return u >> 31 ? ~u : u | 0x80000000u;
}

static inline uint64_t key_f64(uint64_t u) {
  if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return ~0ull;
  if (u == 0x8000000000000000ull) u = 0;
  return u >> 63 ? ~u : u | 0x8000000000000000ull;
}

/* 16-bit floats: nan_above is the largest non-NaN magnitude (the infinity pattern). */
static inline uint32_t key_f16(uint16_t h, uint16_t inf) {
  if ((h & 0x7fffu) > inf) return 0xffffu;
  if (h == 0x8000u) h = 0;
  return h >> 15 ? (uint16_t)~h : (uint32_t)(h | 0x8000u);
}

/* Key width in bytes per dtype; 8-byte keys sort as uint64. */
static int key_bytes(SkDType dt) {
  switch (dt) {
  case SK_DTYPE_BOOL: case SK_DTYPE_UINT8: case SK_DTYPE_INT8: return 1;
  case SK_DTYPE_INT16: case SK_DTYPE_FLOAT16: case SK_DTYPE_BFLOAT16: return 2;
  case SK_DTYPE_INT32: case SK_DTYPE_FLOAT32: return 4;
  default: return 8;
  }
}

#define LOAD(T, EXPR)                                                           \
  for (int64_t j = 0; j < n; j++) {                                              \
    T v = *(const T *)(src + j * st);                                            \
    k[j] = (EXPR) ^ flip;                                                        \
  }                                                                              \
  break;

/* Keys of the n elements at src (st bytes apart), inverted when descending. */
static void load_keys32(uint32_t *k, const char *src, int64_t st, int64_t n, SkDType dt, int desc) {
  uint32_t flip = desc ? (key_bytes(dt) == 4 ? 0xffffffffu : key_bytes(dt) == 2 ? 0xffffu : 0xffu) : 0;
  switch (dt) {
  case SK_DTYPE_BOOL: case SK_DTYPE_UINT8: LOAD(uint8_t, (uint32_t)v)
  case SK_DTYPE_INT8: LOAD(uint8_t, (uint32_t)(v ^ 0x80u))
  case SK_DTYPE_INT16: LOAD(uint16_t, (uint32_t)(v ^ 0x8000u))
  case SK_DTYPE_INT32: LOAD(uint32_t, v ^ 0x80000000u)
  case SK_DTYPE_FLOAT16: LOAD(uint16_t, key_f16(v, 0x7c00u))
  case SK_DTYPE_BFLOAT16: LOAD(uint16_t, key_f16(v, 0x7f80u))
  default: LOAD(uint32_t, key_f32(v))
  }
}

static void load_keys64(uint64_t *k, const char *src, int64_t st, int64_t n, SkDType dt, int desc) {
  uint64_t flip = desc ? ~0ull : 0;
  if (dt == SK_DTYPE_INT64) {
    for (int64_t j = 0; j < n; j++) k[j] = (*(const uint64_t *)(src + j * st) ^ 0x8000000000000000ull) ^ flip;
  } else {
    for (int64_t j = 0; j < n; j++) k[j] = key_f64(*(const uint64_t *)(src + j * st)) ^ flip;
  }
}
/* }==== */

/* {==== Stable sorts of (key, index) ==== */
/* Each sorts k[0..n) carrying ix; returns the array that holds the sorted indices. */
#define INSERTION(K)                                                             \
  for (int64_t j = 1; j < n; j++) {                                              \
    K x = k[j];                                                                  \
    uint32_t xi = ix[j];                                                         \
    int64_t m = j;                                                               \
    for (; m > 0 && k[m - 1] > x; m--) k[m] = k[m - 1], ix[m] = ix[m - 1];        \
    k[m] = x, ix[m] = xi;                                                        \
  }                                                                              \
  return ix;

#define RADIX(K, NB)                                                             \
  if (n <= INSERTION_MAX) { INSERTION(K) }                                       \
  int64_t hist[NB][256];                                                         \
  memset(hist, 0, sizeof hist);                                                  \
  for (int64_t j = 0; j < n; j++)                                                \
    for (int b = 0; b < nbytes; b++) hist[b][(k[j] >> (8 * b)) & 255]++;       \
  for (int b = 0; b < nbytes; b++) {                                             \
    int sh = 8 * b;                                                              \
    if (hist[b][(k[0] >> sh) & 255] == n) continue;                              \
    int64_t off[256], sum = 0;                                                   \
    for (int d = 0; d < 256; d++) off[d] = sum, sum += hist[b][d];               \
    for (int64_t j = 0; j < n; j++) {                                            \
      int64_t pos = off[(k[j] >> sh) & 255]++;                                   \
      k2[pos] = k[j];                                                            \
      ix2[pos] = ix[j];                                                          \
    }                                                                            \
    K *tk = k; k = k2; k2 = tk;                                                  \
    uint32_t *ti = ix; ix = ix2; ix2 = ti;                                       \
  }                                                                              \
  return ix;

static uint32_t *sort32(uint32_t *k, uint32_t *ix, uint32_t *k2, uint32_t *ix2, int64_t n, int nbytes) { RADIX(uint32_t, 4) }
static uint32_t *sort64(uint64_t *k, uint32_t *ix, uint64_t *k2, uint32_t *ix2, int64_t n, int nbytes) { RADIX(uint64_t, 8) }
/* }==== */

/* {==== Slices ==== */
typedef struct {
  SkDType dt;
  int desc, kb;                  /* descending, key bytes */
  int64_t n, keep, z;            /* slice length, how many to write, element size */
  int64_t ssd, vsd, isd;         /* byte strides along dim: self, values, indices */
  /* the slices: a walk over the other dims of self, values, indices */
  int nd;
  int64_t sizes[SK_MAX_DIMS], st[3][SK_MAX_DIMS];
  const char *self;
  char *values, *indices;
  int failed;
} SortCtx;

/* Sorts one slice into values / indices; buf holds 2n keys and 2n indices. */
static void sort_slice(const SortCtx *c, const char *src, char *vdst, char *idst, void *buf) {
  int64_t n = c->n;
  uint32_t *ix, *res;
  if (c->kb == 8) {
    uint64_t *k = buf;
    ix = (uint32_t *)(k + 2 * n);
    load_keys64(k, src, c->ssd, n, c->dt, c->desc);
    for (int64_t j = 0; j < n; j++) ix[j] = (uint32_t)j;
    res = sort64(k, ix, k + n, ix + n, n, 8);
  } else {
    uint32_t *k = buf;
    ix = k + 2 * n;
    load_keys32(k, src, c->ssd, n, c->dt, c->desc);
    for (int64_t j = 0; j < n; j++) ix[j] = (uint32_t)j;
    res = sort32(k, ix, k + n, ix + n, n, c->kb);
  }
  int64_t z = c->z;
  for (int64_t j = 0; j < c->keep; j++) {
    memcpy(vdst + j * c->vsd, src + (int64_t)res[j] * c->ssd, (size_t)z);
    *(int64_t *)(idst + j * c->isd) = res[j];
  }
}

static void sort_range(void *ctx, int64_t begin, int64_t end) {
  SortCtx *c = ctx;
  size_t kz = c->kb == 8 ? 8 : 4;
  size_t need = (size_t)c->n * 2 * (kz + 4);
  void *buf = malloc(need ? need : 1);
  if (!buf) { __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED); return; }
  for (int64_t s = begin; s < end; s++) {
    int64_t rem = s, off[3] = {0, 0, 0};
    for (int d = c->nd - 1; d >= 0; d--) {
      int64_t q = rem % c->sizes[d];
      rem /= c->sizes[d];
      for (int k = 0; k < 3; k++) off[k] += q * c->st[k][d];
    }
    sort_slice(c, c->self + off[0], c->values + off[1], c->indices + off[2], buf);
  }
  free(buf);
}

/* Sorts every slice of self along dim, writing the first `keep` of each. */
static int sort_slices(const SkTensor *self, int64_t dim, int desc, int64_t keep, SkTensor *values, SkTensor *indices) {
  if (self->numel == 0 || keep == 0) return 0;
  SortCtx c;
  int64_t vz = (int64_t)sk_tensor_itemsize(values);
  c.dt = self->dtype;
  c.desc = desc;
  c.kb = key_bytes(self->dtype);
  c.n = self->ndim ? self->sizes[dim] : 1;
  if (c.n > (int64_t)UINT32_MAX)
    return sk_error("sort: slices of %lld elements are not supported (at most 2^32 - 1)", (long long)c.n);
  c.keep = keep;
  c.z = (int64_t)sk_tensor_itemsize(self);
  c.ssd = self->ndim ? self->strides[dim] * c.z : 0;
  c.vsd = values->ndim ? values->strides[dim] * vz : 0;
  c.isd = indices->ndim ? indices->strides[dim] * 8 : 0;
  c.nd = 0;
  for (int d = 0; d < self->ndim; d++) {
    if (d == dim) continue;
    c.sizes[c.nd] = self->sizes[d];
    c.st[0][c.nd] = self->strides[d] * c.z;
    c.st[1][c.nd] = values->strides[d] * vz;
    c.st[2][c.nd++] = indices->strides[d] * 8;
  }
  c.self = sk_tensor_data(self);
  c.values = sk_tensor_data(values);
  c.indices = sk_tensor_data(indices);
  c.failed = 0;
  int64_t slices = self->numel / c.n;
  sk_parallel_for(0, slices, SK_GRAIN / c.n + 1, sort_range, &c);
  return c.failed ? sk_error("sort: out of memory") : 0;
}
/* }==== */

int sk_cpu_sort_out(const SkMeta *m, const SkTensor *self, int stable, int64_t dim, int descending, SkTensor *values,
                    SkTensor *indices) {
  (void)m, (void)stable; /* always stable */
  return sort_slices(self, dim, descending, self->ndim ? self->sizes[dim] : 1, values, indices);
}

/* topk sorts the whole slice (radix sort is linear) and keeps the first k: ties in index order. */
int sk_cpu_topk_out(const SkMeta *m, const SkTensor *self, int64_t k, int64_t dim, int largest, int sorted,
                    SkTensor *values, SkTensor *indices) {
  (void)m, (void)sorted; /* always sorted */
  return sort_slices(self, dim, largest, k, values, indices);
}
