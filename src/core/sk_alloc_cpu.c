/*
** sk_alloc_cpu.c — the CPU allocator: malloc for small blocks, a cache for the rest
** Fresh pages cost ~12 µs per 4 KiB here (perf_notes.md), so blocks from
** SK_CACHED_MIN up are mmap'ed (MADV_HUGEPAGE from 2 MiB) and, once freed, kept in a
** small cache and handed out again to a request of the same rounded size. The floor is
** glibc's default mmap threshold: from there malloc would map and unmap (or grow and trim
** its heap) on every call, and a loop of 512 KiB temporaries spent half its time faulting
** fresh pages in.
** Invariant: a cached block's size is a multiple of SK_MID_ROUND below SK_LARGE_ROUND
** and of SK_LARGE_ROUND from there; the cache holds at most SK_CACHE_MAX bytes; only the
** thread running Lua allocates.
*/
#include "sk_device.h"
#include "sk_error.h"

#include <stdlib.h>
#include <sys/mman.h>

#define SK_CACHED_MIN ((size_t)128 << 10) /* below this, plain malloc */
#define SK_MID_ROUND ((size_t)64 << 10)   /* granularity below a huge page */
#define SK_LARGE_ROUND ((size_t)2 << 20)  /* huge-page granularity */
#define SK_CACHE_SLOTS 256
#define SK_CACHE_MAX ((size_t)2 << 30)

static struct { void *ptr; size_t size; } cache[SK_CACHE_SLOTS];
static int ncached;
static size_t cached_bytes;

static size_t round_block(size_t n) {
  size_t g = n < SK_LARGE_ROUND ? SK_MID_ROUND : SK_LARGE_ROUND;
  return (n + g - 1) / g * g;
}

/* SK_CPU_MAX_ALLOC (bytes, read once): larger requests fail as out of memory. The fuzzer sets
** it, so that a valid but huge result (a pad of 2^32) is an error rather than minutes of paging. */
static size_t max_alloc(void) {
  static size_t limit = 0;
  static int read = 0;
  if (!read) {
    const char *e = getenv("SK_CPU_MAX_ALLOC");
    limit = e && *e ? (size_t)strtoull(e, NULL, 10) : 0;
    read = 1;
  }
  return limit;
}

void *sk_cpu_alloc(size_t nbytes) {
  size_t cap = max_alloc();
  if (cap && nbytes > cap)
    return sk_error("out of memory allocating %zu bytes on cpu (SK_CPU_MAX_ALLOC is %zu)", nbytes, cap), NULL;
  if (nbytes < SK_CACHED_MIN) {
    void *p = malloc(nbytes ? nbytes : 1);
    if (!p) sk_error("out of memory allocating %zu bytes on cpu", nbytes);
    return p;
  }
  size_t size = round_block(nbytes);
  for (int i = 0; i < ncached; i++) {
    if (cache[i].size == size) {
      void *p = cache[i].ptr;
      cached_bytes -= size;
      cache[i] = cache[--ncached];
      return p;
    }
  }
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    sk_cpu_empty_cache(); /* give the cache back and try once more */
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return sk_error("out of memory allocating %zu bytes on cpu", nbytes), NULL;
  }
#ifdef MADV_HUGEPAGE
  if (size >= SK_LARGE_ROUND) madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

void sk_cpu_free(void *ptr, size_t nbytes) {
  if (!ptr) return;
  if (nbytes < SK_CACHED_MIN) { free(ptr); return; }
  size_t size = round_block(nbytes);
  if (size <= SK_CACHE_MAX / 4) {
    while (ncached > 0 && (ncached == SK_CACHE_SLOTS || cached_bytes + size > SK_CACHE_MAX)) {
      ncached--; /* evict the oldest-inserted survivor at the end */
      munmap(cache[ncached].ptr, cache[ncached].size);
      cached_bytes -= cache[ncached].size;
    }
    cache[ncached].ptr = ptr;
    cache[ncached].size = size;
    ncached++;
    cached_bytes += size;
    return;
  }
  munmap(ptr, size);
}

size_t sk_cpu_cached_bytes(void) { return cached_bytes; }

void sk_cpu_empty_cache(void) {
  while (ncached > 0) {
    ncached--;
    munmap(cache[ncached].ptr, cache[ncached].size);
  }
  cached_bytes = 0;
}
