/*
** sk_cpu_sort.c — sort and topk
** Each slice along dim is sorted as (key, index) pairs. A key is an unsigned
** integer in the order of the values: floats flip their sign-magnitude bits,
** -0.0 keys as +0.0, every NaN keys above +inf (so NaN sorts last ascending
** and first descending, as in PyTorch); signed integers flip the sign bit;
** descending inverts the key. An LSD radix sort on bytes (11-bit digits
** measured no faster) is stable and skips the bytes all keys share, so equal
** values keep their original order in both directions: that is
** sort(stable=True), and the tie order of topk. Short slices use insertion
** sort. Slices sort in parallel, each thread with its own scratch from the
** caching allocator; values are copied from self through the sorted
** indices, so they keep their exact bits (NaN payloads, the sign of zero).
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

/* LSD radix sort on DIGIT-bit digits; passes where every key has the same digit are skipped. */
#define DIGIT 8
#define RADIX(K, NP)                                                             \
  if (n <= INSERTION_MAX) { INSERTION(K) }                                       \
  int64_t hist[NP][1 << DIGIT];                                                  \
  const int np = (8 * nbytes + DIGIT - 1) / DIGIT;                               \
  const K mask = (1 << DIGIT) - 1;                                               \
  memset(hist, 0, sizeof hist);                                                  \
  for (int64_t j = 0; j < n; j++)                                                \
    for (int b = 0; b < np; b++) hist[b][(k[j] >> (DIGIT * b)) & mask]++;       \
  for (int b = 0; b < np; b++) {                                                 \
    int sh = DIGIT * b;                                                          \
    if (hist[b][(k[0] >> sh) & mask] == n) continue;                             \
    int64_t *off = hist[b], sum = 0;                                             \
    for (int d = 0; d < 1 << DIGIT; d++) { int64_t c = off[d]; off[d] = sum; sum += c; } \
    for (int64_t j = 0; j < n; j++) {                                            \
      int64_t pos = off[(k[j] >> sh) & mask]++;                                  \
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
  char *scratch;                 /* nslots buffers of slot bytes, from the caching allocator */
  size_t slot;
  int nslots, next, failed;
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

/* {==== One long slice on several threads ====
** A stable pass on the top byte (per-thread counts, offsets thread-major within a bucket)
** splits the slice into 256 buckets in order; the buckets then sort on their lower bytes
** independently, in groups of about n / threads elements, and write their part of the output. */
#define BIG_MIN 65536
#define BIG_MAXT 64

typedef struct {
  const SortCtx *c;
  const char *src;
  char *vdst, *idst;
  char *k, *k2;                         /* keys (4 or 8 bytes each) */
  uint32_t *ix, *ix2;
  int nt, shift;                        /* threads; bit shift of the top byte */
  int64_t bounds[BIG_MAXT + 1];         /* chunk t of the slice: [bounds[t], bounds[t + 1]) */
  int64_t hist[BIG_MAXT][256];          /* top-byte counts per chunk, then its write offsets */
  int64_t boff[257];                    /* bucket starts */
  int groups[BIG_MAXT + 1];             /* bucket groups [groups[g], groups[g + 1]) */
} Big;

static inline uint64_t key_at(const Big *b, const char *k, int64_t j) {
  return b->c->kb == 8 ? ((const uint64_t *)k)[j] : ((const uint32_t *)k)[j];
}

static void big_count(void *ctx, int64_t t0, int64_t t1) {
  Big *b = ctx;
  const SortCtx *c = b->c;
  for (int64_t t = t0; t < t1; t++) {
    int64_t lo = b->bounds[t], n = b->bounds[t + 1] - lo;
    if (c->kb == 8) load_keys64((uint64_t *)b->k + lo, b->src + lo * c->ssd, c->ssd, n, c->dt, c->desc);
    else load_keys32((uint32_t *)b->k + lo, b->src + lo * c->ssd, c->ssd, n, c->dt, c->desc);
    for (int64_t j = lo; j < lo + n; j++) {
      b->ix[j] = (uint32_t)j;
      b->hist[t][(key_at(b, b->k, j) >> b->shift) & 255]++;
    }
  }
}

static void big_split(void *ctx, int64_t t0, int64_t t1) {
  Big *b = ctx;
  int wide = b->c->kb == 8;
  for (int64_t t = t0; t < t1; t++)
    for (int64_t j = b->bounds[t]; j < b->bounds[t + 1]; j++) {
      uint64_t key = key_at(b, b->k, j);
      int64_t pos = b->hist[t][(key >> b->shift) & 255]++;
      if (wide) ((uint64_t *)b->k2)[pos] = key;
      else ((uint32_t *)b->k2)[pos] = (uint32_t)key;
      b->ix2[pos] = b->ix[j];
    }
}

static void big_buckets(void *ctx, int64_t g0, int64_t g1) {
  Big *b = ctx;
  const SortCtx *c = b->c;
  for (int64_t g = g0; g < g1; g++)
    for (int d = b->groups[g]; d < b->groups[g + 1]; d++) {
      int64_t lo = b->boff[d], n = b->boff[d + 1] - lo;
      if (n == 0 || lo >= c->keep) continue;
      uint32_t *res = c->kb == 8
        ? sort64((uint64_t *)b->k2 + lo, b->ix2 + lo, (uint64_t *)b->k + lo, b->ix + lo, n, 7)
        : sort32((uint32_t *)b->k2 + lo, b->ix2 + lo, (uint32_t *)b->k + lo, b->ix + lo, n, c->kb - 1);
      for (int64_t j = 0; j < n && lo + j < c->keep; j++) {
        memcpy(b->vdst + (lo + j) * c->vsd, b->src + (int64_t)res[j] * c->ssd, (size_t)c->z);
        *(int64_t *)(b->idst + (lo + j) * c->isd) = res[j];
      }
    }
}

/* Sorts one slice of c->n elements on nt threads; buf as sort_slice's. */
static void sort_big(const SortCtx *c, Big *b, int nt, const char *src, char *vdst, char *idst, void *buf) {
  int64_t n = c->n;
  size_t kz = c->kb == 8 ? 8 : 4;
  memset(b, 0, sizeof *b);
  b->c = c, b->src = src, b->vdst = vdst, b->idst = idst, b->nt = nt;
  b->k = buf;
  b->k2 = b->k + (size_t)n * kz;
  b->ix = (uint32_t *)(b->k2 + (size_t)n * kz);
  b->ix2 = b->ix + n;
  b->shift = 8 * (c->kb - 1);
  for (int t = 0; t <= nt; t++) b->bounds[t] = n * t / nt;
  sk_parallel_for(0, nt, 1, big_count, b);
  int64_t sum = 0;
  for (int d = 0; d < 256; d++) {
    b->boff[d] = sum;
    for (int t = 0; t < nt; t++) {
      int64_t cnt = b->hist[t][d];
      b->hist[t][d] = sum;
      sum += cnt;
    }
  }
  b->boff[256] = n;
  sk_parallel_for(0, nt, 1, big_split, b);
  int g = 0;
  b->groups[0] = 0;
  for (int d = 0; d < 256 && g < nt - 1; d++)
    if (b->boff[d + 1] >= n * (g + 1) / nt) b->groups[++g] = d + 1;
  while (g < nt) b->groups[++g] = 256;
  sk_parallel_for(0, nt, 1, big_buckets, b);
}
/* }==== */

/* A range of slices; each call (one per thread) takes a scratch slot, or mallocs past the last. */
static void sort_range(void *ctx, int64_t begin, int64_t end) {
  SortCtx *c = ctx;
  int mine = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED);
  void *buf = mine < c->nslots ? c->scratch + (size_t)mine * c->slot : malloc(c->slot);
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
  if (mine >= c->nslots) free(buf);
}

/* The slices of a few long ones, each sorted on every thread. */
static int sort_long(SortCtx *c, int64_t slices, int nt) {
  int64_t bytes = (int64_t)c->slot;
  SkTensor *scratch = sk_tensor_empty(1, &bytes, SK_DTYPE_UINT8, SK_CPU);
  Big *b = malloc(sizeof *b);
  int rc = scratch && b ? 0 : sk_error("sort: out of memory");
  for (int64_t s = 0; s < slices && !rc; s++) {
    int64_t rem = s, off[3] = {0, 0, 0};
    for (int d = c->nd - 1; d >= 0; d--) {
      int64_t q = rem % c->sizes[d];
      rem /= c->sizes[d];
      for (int k = 0; k < 3; k++) off[k] += q * c->st[k][d];
    }
    sort_big(c, b, nt, c->self + off[0], c->values + off[1], c->indices + off[2], sk_tensor_data(scratch));
  }
  free(b);
  sk_tensor_release(scratch);
  return rc;
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
  c.next = 0;
  /* scratch (2n keys, 2n indices per thread) from the caching allocator: fresh pages cost more than the sort */
  c.slot = ((size_t)c.n * 2 * ((c.kb == 8 ? 8 : 4) + 4) + 63) & ~(size_t)63;
  int64_t slices = self->numel / c.n, grain = SK_GRAIN / c.n + 1;
  int64_t nt = sk_get_num_threads(), chunks = (slices + grain - 1) / grain;
  if (nt > 1 && slices < nt && c.n >= BIG_MIN && !sk_in_parallel_region())
    return sort_long(&c, slices, (int)(nt < BIG_MAXT ? nt : BIG_MAXT));
  c.nslots = (int)(nt < chunks ? nt : chunks);
  int64_t bytes = (int64_t)c.slot * c.nslots;
  SkTensor *scratch = sk_tensor_empty(1, &bytes, SK_DTYPE_UINT8, SK_CPU);
  if (!scratch) return -1;
  c.scratch = sk_tensor_data(scratch);
  sk_parallel_for(0, slices, grain, sort_range, &c);
  sk_tensor_release(scratch);
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
