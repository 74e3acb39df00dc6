/*
** sk_cuda_alloc.c — size classes, splitting, merging, reuse
** Invariants: every block belongs to one segment (a cudaMalloc) and the
** blocks of a segment tile it in address order (prev/next); two free
** neighbours are always merged; `free_list` holds exactly the free blocks.
** Only the thread running Lua allocates.
*/
#include "sk_cuda_alloc.h"
#include "sk_error.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_LIMIT (1u << 20)           /* below: 512-byte classes */
#define SMALL_ROUND 512u
#define LARGE_ROUND ((size_t)2 << 20)    /* above: 2 MiB classes */
#define SPLIT_REMAINDER ((size_t)1 << 20) /* split a free block when this much would remain */
#define MAX_DEVICES 64

typedef struct Block {
  char *ptr;
  size_t size;
  int device, allocated, segment_start;
  struct Block *prev, *next;         /* neighbours in the segment */
  struct Block *free_next;           /* free list */
} Block;

static Block *free_list;
static SkCudaMemoryStats stats[MAX_DEVICES];

/* {==== ptr -> block (open addressing) ==== */
static Block **table;
static size_t table_cap, table_n;

static size_t slot(const void *p) { return ((uintptr_t)p >> 9) * 0x9E3779B97F4A7C15ull; }

static int table_put(Block *b);
static int table_grow(void) {
  size_t cap = table_cap ? table_cap * 2 : 1024;
  Block **old = table;
  size_t old_cap = table_cap;
  table = calloc(cap, sizeof *table);
  if (!table) { table = old; return -1; }
  table_cap = cap;
  table_n = 0;
  for (size_t i = 0; i < old_cap; i++) if (old[i] && old[i] != (Block *)1) table_put(old[i]);
  free(old);
  return 0;
}

static int table_put(Block *b) {
  if ((table_n + 1) * 2 > table_cap && table_grow()) return -1;
  for (size_t i = slot(b->ptr) & (table_cap - 1);; i = (i + 1) & (table_cap - 1))
    if (!table[i] || table[i] == (Block *)1) { table[i] = b; table_n++; return 0; }
}

static Block *table_take(const void *p) {
  if (!table_cap) return NULL;
  for (size_t i = slot(p) & (table_cap - 1); table[i]; i = (i + 1) & (table_cap - 1))
    if (table[i] != (Block *)1 && table[i]->ptr == p) { Block *b = table[i]; table[i] = (Block *)1; table_n--; return b; }
  return NULL;
}
/* }==== */

static size_t round_size(size_t n) {
  if (n == 0) n = 1;
  return n < SMALL_LIMIT ? (n + SMALL_ROUND - 1) / SMALL_ROUND * SMALL_ROUND : (n + LARGE_ROUND - 1) / LARGE_ROUND * LARGE_ROUND;
}

static void free_list_remove(Block *b) {
  for (Block **p = &free_list; *p; p = &(*p)->free_next)
    if (*p == b) { *p = b->free_next; return; }
}

/* The smallest free block of the device that fits, or NULL. */
static Block *best_fit(int device, size_t size) {
  Block *best = NULL;
  for (Block *b = free_list; b; b = b->free_next)
    if (b->device == device && b->size >= size && (!best || b->size < best->size)) best = b;
  return best;
}

/* A segment of `device`, whichever device is current (cudaMalloc allocates on the current one). */
static int segment_new(int device, size_t size, Block **out) {
  void *p = NULL;
  int prev;
  if (cudaGetDevice(&prev) != cudaSuccess || (prev != device && cudaSetDevice(device) != cudaSuccess)) {
    cudaGetLastError();
    return -1;
  }
  cudaError_t e = cudaMalloc(&p, size);
  if (prev != device) cudaSetDevice(prev);
  if (e != cudaSuccess) { cudaGetLastError(); return -1; }
  Block *b = calloc(1, sizeof *b);
  if (!b) { cudaFree(p); return -1; }
  b->ptr = p;
  b->size = size;
  b->device = device;
  b->segment_start = 1;
  stats[device].reserved += size;
  *out = b;
  return 0;
}

void *sk_cuda_alloc(int device, size_t nbytes) {
  if (device < 0 || device >= MAX_DEVICES) return sk_error("CUDA device %d out of range", device), NULL;
  size_t size = round_size(nbytes);
  SkCudaMemoryStats *st = &stats[device];
  Block *b = best_fit(device, size);
  if (b) { free_list_remove(b); st->num_cache_hits++; st->cached -= b->size; }
  else if (segment_new(device, size, &b)) {
    st->num_ooms++;
    sk_memory_pressure();            /* the binding collects garbage: dead tensors give blocks back */
    b = best_fit(device, size);
    if (b) { free_list_remove(b); st->cached -= b->size; }
    else {
      sk_cuda_alloc_empty_cache();
      if (segment_new(device, size, &b))
        return sk_error("CUDA out of memory: tried to allocate %zu bytes on cuda:%d (%llu bytes allocated, %llu reserved)",
                        nbytes, device, (unsigned long long)st->allocated, (unsigned long long)st->reserved), NULL;
    }
  }
  if (b->size >= size + SPLIT_REMAINDER || (size < SMALL_LIMIT && b->size >= size + SMALL_ROUND * 8)) {
    Block *rest = calloc(1, sizeof *rest);
    if (rest) { /* split: the remainder stays free in the same segment */
      rest->ptr = b->ptr + size;
      rest->size = b->size - size;
      rest->device = device;
      rest->prev = b;
      rest->next = b->next;
      if (b->next) b->next->prev = rest;
      b->next = rest;
      b->size = size;
      rest->free_next = free_list;
      free_list = rest;
      st->cached += rest->size;
    }
  }
  b->allocated = 1;
  if (table_put(b)) { sk_cuda_free(device, b->ptr); return sk_error("out of memory (allocator table)"), NULL; }
  st->allocated += b->size;
  st->num_allocs++;
  if (st->allocated > st->peak_allocated) st->peak_allocated = st->allocated;
  return b->ptr;
}

void sk_cuda_free(int device, void *ptr) {
  (void)device;
  if (!ptr) return;
  Block *b = table_take(ptr);
  if (!b) return;
  SkCudaMemoryStats *st = &stats[b->device];
  st->allocated -= b->size;
  b->allocated = 0;
  /* merge with free neighbours of the same segment */
  Block *n = b->next;
  if (n && !n->allocated && !n->segment_start) {
    free_list_remove(n);
    st->cached -= n->size;
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    free(n);
  }
  Block *p = b->prev;
  if (p && !p->allocated && !b->segment_start) {
    free_list_remove(p);
    st->cached -= p->size;
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    free(b);
    b = p;
  }
  b->free_next = free_list;
  free_list = b;
  st->cached += b->size;
}

void sk_cuda_alloc_empty_cache(void) {
  for (Block **pp = &free_list; *pp;) {
    Block *b = *pp;
    if (b->segment_start && !b->next) { /* a whole segment, free */
      *pp = b->free_next;
      int prev;
      cudaGetDevice(&prev);
      cudaSetDevice(b->device);
      cudaFree(b->ptr);
      cudaSetDevice(prev);
      stats[b->device].reserved -= b->size;
      stats[b->device].cached -= b->size;
      free(b);
    } else pp = &b->free_next;
  }
}

int sk_cuda_alloc_stats(int device, SkCudaMemoryStats *out) {
  if (device < 0 || device >= MAX_DEVICES) return sk_error("CUDA device %d out of range", device);
  *out = stats[device];
  return 0;
}
