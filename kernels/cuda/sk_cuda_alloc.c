/*
** sk_cuda_alloc.c — segments, size-ordered pools, best fit, splitting, merging (sk_cuda_alloc.h)
** Invariants: every block belongs to one segment (one cudaMalloc on its device) and the
** blocks of a segment tile it in address order through prev/next (NULL at its ends); no
** two neighbours are both free; a pool's array holds exactly its free blocks, sorted by
** (stream, size, ptr), and has room for every block of the pool (cap ≥ blocks), so
** giving a block back never allocates; `table` maps each live block's ptr to it.
** Streams: sk runs everything on the default stream, so every block records that one and a
** request reuses only blocks of its own stream. Handing a block to another stream would
** need what PyTorch's record_stream does: an event recorded on each stream that used it,
** and reuse only once cudaEventQuery says they all passed.
** Only the thread running Lua allocates (the binding's memory-pressure handler collects
** garbage on that thread, and its finalizers call sk_cuda_free re-entrantly: no pool
** position is held across sk_memory_pressure).
*/
#include "sk_cuda_alloc.h"
#include "sk_error.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_BLOCK ((size_t)512)            /* every request is rounded up to a multiple */
#define SMALL_SIZE ((size_t)1 << 20)       /* up to this: the small pool */
#define SMALL_SEGMENT ((size_t)2 << 20)    /* the small pool's segment size */
#define LARGE_SEGMENT ((size_t)20 << 20)   /* the segment for a large request below MIN_LARGE_ALLOC */
#define MIN_LARGE_ALLOC ((size_t)10 << 20) /* from here on: a segment of the request's own size */
#define ROUND_LARGE ((size_t)2 << 20)      /* ... rounded to this */
#define MAX_DEVICES 64
#define DEFAULT_STREAM ((uintptr_t)0)      /* the legacy default stream, CUDA's handle 0 */

typedef struct Block {
  char *ptr;
  size_t size;
  uintptr_t stream;                  /* the stream it was made for; reused only on that one */
  int device, allocated;
  struct Pool *pool;
  struct Block *prev, *next;         /* neighbours in the segment */
} Block;

typedef struct Pool {
  Block **avail;                     /* the free blocks, by (stream, size, ptr) */
  size_t n, cap, blocks;             /* blocks: all of the pool's blocks, free or not */
} Pool;

typedef struct DeviceAlloc {
  Pool small, large;
  SkCudaMemoryStats stats;           /* `cached` is computed when read */
} DeviceAlloc;

static DeviceAlloc devs[MAX_DEVICES];

static int on_device(int device, int *prev) {
  if (cudaGetDevice(prev) != cudaSuccess || (*prev != device && cudaSetDevice(device) != cudaSuccess)) {
    cudaError_t e = cudaGetLastError();
    return sk_error("CUDA error selecting cuda:%d: %s", device, cudaGetErrorString(e));
  }
  return 0;
}
static void back_to(int device, int prev) { if (prev != device) cudaSetDevice(prev); }

/* {==== ptr -> block: open addressing, TOMB marks a removed entry ==== */
static Block **table;
static size_t table_cap, table_live, table_used; /* used = live + tombstones ≤ cap/2: probes reach a NULL */
static Block tomb;
#define TOMB (&tomb)

static size_t slot(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
  return (size_t)(h ^ (h >> 29)) & (table_cap - 1);
}

static void table_put(Block *b) {
  size_t i = slot(b->ptr);
  while (table[i] && table[i] != TOMB) i = (i + 1) & (table_cap - 1);
  if (!table[i]) table_used++;
  table[i] = b;
  table_live++;
}

/* Room for one more entry; rebuilds without tombstones (doubling while live entries fill a quarter). */
static int table_reserve(void) {
  if ((table_used + 1) * 2 <= table_cap) return 0;
  size_t cap = table_cap ? table_cap : 1024;
  while ((table_live + 1) * 4 > cap) cap *= 2;
  Block **fresh = calloc(cap, sizeof *fresh);
  if (!fresh) return sk_error("CUDA allocator: out of host memory for its block table");
  Block **old = table;
  size_t old_cap = table_cap;
  table = fresh;
  table_cap = cap;
  table_live = table_used = 0;
  for (size_t i = 0; i < old_cap; i++) if (old[i] && old[i] != TOMB) table_put(old[i]);
  free(old);
  return 0;
}

static Block *table_take(const void *p) {
  if (!table_cap) return NULL;
  for (size_t i = slot(p); table[i]; i = (i + 1) & (table_cap - 1))
    if (table[i] != TOMB && table[i]->ptr == p) {
      Block *b = table[i];
      table[i] = TOMB;
      table_live--;
      return b;
    }
  return NULL;
}
/* }==== */

/* {==== Pools ==== */
static int before(const Block *b, uintptr_t stream, size_t size, const char *ptr) {
  if (b->stream != stream) return b->stream < stream;
  if (b->size != size) return b->size < size;
  return b->ptr < ptr;
}

/* The first position whose block is not before (stream, size, ptr). */
static size_t lower_bound(const Pool *p, uintptr_t stream, size_t size, const char *ptr) {
  size_t lo = 0, hi = p->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (before(p->avail[mid], stream, size, ptr)) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* Room in the array for one more block of the pool (so that it can always be given back). */
static int pool_reserve(Pool *p) {
  if (p->blocks < p->cap) return 0;
  size_t cap = p->cap ? p->cap * 2 : 64;
  Block **v = realloc(p->avail, cap * sizeof *v);
  if (!v) return sk_error("CUDA allocator: out of host memory for its free lists");
  p->avail = v;
  p->cap = cap;
  return 0;
}

static void pool_insert(Pool *p, Block *b) {
  size_t i = lower_bound(p, b->stream, b->size, b->ptr);
  memmove(p->avail + i + 1, p->avail + i, (p->n - i) * sizeof *p->avail);
  p->avail[i] = b;
  p->n++;
}

static void pool_remove(Pool *p, const Block *b) {
  size_t i = lower_bound(p, b->stream, b->size, b->ptr); /* the key is unique: b is there */
  memmove(p->avail + i, p->avail + i + 1, (p->n - i - 1) * sizeof *p->avail);
  p->n--;
}

/* The smallest free block of `stream` that holds size (the lowest address among equals; an
** exact fit when there is one), taken out of the pool; or NULL. */
static Block *pool_take(Pool *p, uintptr_t stream, size_t size) {
  size_t i = lower_bound(p, stream, size, NULL);
  if (i == p->n || p->avail[i]->stream != stream) return NULL;
  Block *b = p->avail[i];
  memmove(p->avail + i, p->avail + i + 1, (p->n - i - 1) * sizeof *p->avail);
  p->n--;
  return b;
}
/* }==== */

/* {==== Segments ==== */
static size_t segment_size(size_t size) {
  if (size <= SMALL_SIZE) return SMALL_SEGMENT;
  if (size < MIN_LARGE_ALLOC) return LARGE_SEGMENT;
  return (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

static void segment_release(Block *b) {
  int prev;
  if (on_device(b->device, &prev) == 0) {
    cudaFree(b->ptr);
    back_to(b->device, prev);
  }
  cudaGetLastError(); /* a failure here leaves nothing to undo: the bookkeeping forgets the segment */
  devs[b->device].stats.reserved -= b->size;
  b->pool->blocks--;
  free(b);
}

/* Gives back every wholly free segment of the pool, keeping the array's order. */
static void pool_release(Pool *p) {
  size_t kept = 0;
  for (size_t i = 0; i < p->n; i++) {
    Block *b = p->avail[i];
    if (!b->prev && !b->next) segment_release(b);
    else p->avail[kept++] = b;
  }
  p->n = kept;
}

static void device_release(int device) {
  pool_release(&devs[device].small);
  pool_release(&devs[device].large);
}

/* A new segment of `size` for the pool as one allocated-to-be block: 0; 1 when the device
** is out of memory even after its cache was given back; -1 with the error otherwise. */
static int segment_new(int device, Pool *pool, size_t size, Block **out) {
  Block *b = calloc(1, sizeof *b);
  if (!b) return sk_error("CUDA allocator: out of host memory for a block");
  if (pool_reserve(pool)) { free(b); return -1; }
  int prev;
  if (on_device(device, &prev)) { free(b); return -1; }
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, size);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    device_release(device);
    e = cudaMalloc(&p, size);
  }
  back_to(device, prev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    free(b);
    return e == cudaErrorMemoryAllocation ? 1 : sk_error("CUDA error in cudaMalloc of %zu bytes on cuda:%d: %s", size, device, cudaGetErrorString(e));
  }
  b->ptr = p;
  b->size = size;
  b->stream = DEFAULT_STREAM;
  b->device = device;
  b->pool = pool;
  pool->blocks++;
  devs[device].stats.reserved += size;
  *out = b;
  return 0;
}

/* A free block, or a new segment: 0; 1 out of memory; -1 with the error. */
static int obtain(int device, Pool *pool, size_t size, Block **out) {
  if ((*out = pool_take(pool, DEFAULT_STREAM, size))) { devs[device].stats.num_cache_hits++; return 0; }
  return segment_new(device, pool, segment_size(size), out);
}

/* Splits b after `size` when what remains is worth a block: 512 bytes in the small pool, more than
** 1 MiB in the large one (PyTorch's rule: large remainders smaller than that fragment more than they serve).
** Without host memory for the bookkeeping the block is handed out whole, which is still correct. */
static void split(Block *b, size_t size) {
  size_t rest = b->size - size;
  if (b->pool == &devs[b->device].small ? rest < MIN_BLOCK : rest <= SMALL_SIZE) return;
  Block *r;
  if (pool_reserve(b->pool) || !(r = calloc(1, sizeof *r))) return;
  *r = *b;
  r->ptr = b->ptr + size;
  r->size = rest;
  r->prev = b;
  if (b->next) b->next->prev = r;
  b->next = r;
  b->size = size;
  b->pool->blocks++;
  pool_insert(b->pool, r);
}
/* }==== */

static void oom_error(int device, size_t nbytes) {
  const SkCudaMemoryStats *st = &devs[device].stats;
  size_t free_b = 0, total_b = 0;
  int prev;
  if (on_device(device, &prev) == 0) {
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) cudaGetLastError();
    back_to(device, prev);
  }
  sk_error("CUDA out of memory: tried to allocate %zu bytes on cuda:%d (%zu bytes free of %zu); "
           "%llu bytes allocated by sk, %llu reserved",
           nbytes, device, free_b, total_b, (unsigned long long)st->allocated, (unsigned long long)st->reserved);
}

/* b takes in n, the block after it in the segment (neither is in the pool's array). */
static void merge(Block *b, Block *n) {
  b->size += n->size;
  b->next = n->next;
  if (n->next) n->next->prev = b;
  b->pool->blocks--;
  free(n);
}

/* b, free and in no array, back into its pool, merged with its free neighbours. */
static void give_back(Block *b) {
  Block *n = b->next, *p = b->prev;
  if (n && !n->allocated) { pool_remove(n->pool, n); merge(b, n); }
  if (p && !p->allocated) { pool_remove(p->pool, p); merge(p, b); b = p; }
  pool_insert(b->pool, b);
}

void *sk_cuda_alloc(int device, size_t nbytes) {
  if (device < 0 || device >= MAX_DEVICES) return sk_error("CUDA device %d out of range", device), NULL;
  size_t size = nbytes < MIN_BLOCK ? MIN_BLOCK : (nbytes + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK;
  if (size < nbytes || size > SIZE_MAX - ROUND_LARGE)
    return sk_error("CUDA out of memory: tried to allocate %zu bytes on cuda:%d (too large)", nbytes, device), NULL;
  DeviceAlloc *d = &devs[device];
  Pool *pool = size <= SMALL_SIZE ? &d->small : &d->large;
  Block *b;
  int rc = obtain(device, pool, size, &b);
  if (rc == 1) {
    d->stats.num_ooms++;
    sk_memory_pressure(); /* the binding collects garbage: dead tensors give blocks back */
    rc = obtain(device, pool, size, &b);
    if (rc == 1) return oom_error(device, nbytes), NULL;
  }
  if (rc) return NULL;
  split(b, size);
  if (table_reserve()) { give_back(b); return NULL; }
  b->allocated = 1;
  table_put(b);
  d->stats.allocated += b->size;
  d->stats.num_allocs++;
  if (d->stats.allocated > d->stats.peak_allocated) d->stats.peak_allocated = d->stats.allocated;
  return b->ptr;
}

void sk_cuda_free(int device, void *ptr) {
  (void)device; /* the block knows its own */
  if (!ptr) return;
  Block *b = table_take(ptr);
  if (!b) return;
  devs[b->device].stats.allocated -= b->size;
  b->allocated = 0;
  give_back(b);
}

void sk_cuda_alloc_empty_cache(void) {
  for (int d = 0; d < MAX_DEVICES; d++) device_release(d);
}

int sk_cuda_alloc_stats(int device, SkCudaMemoryStats *out) {
  if (device < 0 || device >= MAX_DEVICES) return sk_error("CUDA device %d out of range", device);
  *out = devs[device].stats;
  out->cached = out->reserved - out->allocated;
  return 0;
}
