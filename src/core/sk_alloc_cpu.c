/*
** sk_alloc_cpu.c — the CPU allocator: malloc for small blocks, a cache for the rest
** Fresh pages cost ~12 µs per 4 KiB here (perf_notes.md), and glibc gives them back on
** every free of a block from a few KiB up (it trims its heap, or unmaps past its mmap
** threshold), so a loop of 64 KiB temporaries spent most of its time in brk and page
** faults. Freed blocks from SK_CACHED_MIN up are therefore kept and handed out again to
** a request of the same rounded size:
**   below 2 MiB, size classes (4 KiB steps to 64 KiB, then 64 KiB steps) of blocks from
**   aligned_alloc (64 bytes), a stack of up to SK_CLASS_DEPTH each: found in O(1);
**   from 2 MiB, mmap'ed blocks (MADV_HUGEPAGE) in multiples of 2 MiB, in a list of
**   SK_CACHE_SLOTS, oldest evicted first.
** Invariant: every cached block has its class's (or its rounded) size; the cache holds at
** most SK_CACHE_MAX bytes; only the thread running Lua allocates (so the counters need no
** atomics).
*/
#include "sk_device.h"
#include "sk_error.h"

#include <stdlib.h>
#include <sys/mman.h>

/* A cached block is off limits to the program until handed out again, and a handed-out one
** past the n bytes asked for: valgrind's memcheck and AddressSanitizer are told so, and
** still catch a use after free through the cache or a read past the end into the slack. */
#if defined(__has_include) && __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_NOACCESS(p, n) ((void)(p), (void)(n))
#define VALGRIND_MAKE_MEM_UNDEFINED(p, n) ((void)(p), (void)(n))
#endif
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif
static void *keep(void *p, size_t size) {
  ASAN_POISON_MEMORY_REGION(p, size);
  VALGRIND_MAKE_MEM_NOACCESS(p, size);
  return p;
}
/* n bytes of a block of size usable (n == size: the whole block, as before freeing it) */
static void *hand_out(void *p, size_t n, size_t size) {
  keep((char *)p + n, size - n);
  ASAN_UNPOISON_MEMORY_REGION(p, n);
  VALGRIND_MAKE_MEM_UNDEFINED(p, n);
  return p;
}

#define SK_CACHED_MIN ((size_t)4 << 10)   /* below this, plain malloc (its own bins reuse them) */
#define SK_FINE_STEP ((size_t)4 << 10)    /* class steps below SK_FINE_MAX */
#define SK_FINE_MAX ((size_t)64 << 10)
#define SK_MID_STEP ((size_t)64 << 10)    /* class steps from SK_FINE_MAX to SK_LARGE_ROUND */
#define SK_LARGE_ROUND ((size_t)2 << 20)  /* huge-page granularity */
#define SK_NCLASSES ((int)(SK_FINE_MAX / SK_FINE_STEP + SK_LARGE_ROUND / SK_MID_STEP - 1))
#define SK_CLASS_DEPTH 32
#define SK_CACHE_SLOTS 256
#define SK_CACHE_MAX ((size_t)2 << 30)

static struct { void *ptr[SK_CLASS_DEPTH]; int n; } classes[SK_NCLASSES];
static struct { void *ptr; size_t size; } cache[SK_CACHE_SLOTS];
static int ncached;
static size_t cached_bytes;
static SkCpuMemoryStats stats; /* .cached is cached_bytes, filled in when read */

/* The class of a block of n bytes, SK_CACHED_MIN <= n < SK_LARGE_ROUND, and a class's size. */
#define FINE_CLASSES ((int)(SK_FINE_MAX / SK_FINE_STEP))
static int class_of(size_t n) {
  if (n <= SK_FINE_MAX) return (int)((n + SK_FINE_STEP - 1) / SK_FINE_STEP) - 1;
  return FINE_CLASSES + (int)((n + SK_MID_STEP - 1) / SK_MID_STEP) - 2;
}
static size_t class_size(int k) {
  return k < FINE_CLASSES ? (size_t)(k + 1) * SK_FINE_STEP : (size_t)(k + 2 - FINE_CLASSES) * SK_MID_STEP;
}

/* A block below 2 MiB: a class's on a cache line (its size is a multiple of 4 KiB, as
** aligned_alloc wants), a smaller one from malloc. */
static void *block_alloc(size_t size) { return size >= SK_CACHED_MIN ? aligned_alloc(64, size) : malloc(size); }

static size_t round_large(size_t n) { return (n + SK_LARGE_ROUND - 1) / SK_LARGE_ROUND * SK_LARGE_ROUND; }

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

/* The block itself; *hit says whether the cache served it. */
static void *alloc_block(size_t nbytes, int *hit) {
  size_t cap = max_alloc();
  if (cap && nbytes > cap)
    return sk_error("out of memory allocating %zu bytes on cpu (SK_CPU_MAX_ALLOC is %zu)", nbytes, cap), NULL;
  void *p;
  if (nbytes < SK_LARGE_ROUND) {
    size_t size = nbytes ? nbytes : 1;
    if (nbytes >= SK_CACHED_MIN) {
      int k = class_of(nbytes);
      size = class_size(k);
      if (classes[k].n > 0) {
        cached_bytes -= size;
        *hit = 1;
        return hand_out(classes[k].ptr[--classes[k].n], nbytes, size);
      }
    }
    if (!(p = block_alloc(size))) {
      sk_cpu_empty_cache(); /* give the cache back and try once more */
      if (!(p = block_alloc(size))) return sk_error("out of memory allocating %zu bytes on cpu", nbytes), NULL;
    }
    return nbytes >= SK_CACHED_MIN ? hand_out(p, nbytes, size) : p;
  }
  size_t size = round_large(nbytes);
  for (int i = 0; i < ncached; i++) {
    if (cache[i].size == size) {
      p = cache[i].ptr;
      cached_bytes -= size;
      cache[i] = cache[--ncached];
      *hit = 1;
      return hand_out(p, nbytes, size);
    }
  }
  p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    sk_cpu_empty_cache(); /* give the cache back and try once more */
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return sk_error("out of memory allocating %zu bytes on cpu", nbytes), NULL;
  }
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE);
#endif
  return hand_out(p, nbytes, size);
}

void *sk_cpu_alloc(size_t nbytes) {
  int hit = 0;
  void *p = alloc_block(nbytes, &hit);
  if (!p) {
    stats.num_ooms++;
    return NULL;
  }
  stats.num_allocs++;
  stats.num_cache_hits += (uint64_t)hit;
  stats.allocated += nbytes;
  if (stats.allocated > stats.peak_allocated) stats.peak_allocated = stats.allocated;
  return p;
}

void sk_cpu_memory_stats(SkCpuMemoryStats *out) {
  *out = stats;
  out->cached = cached_bytes;
}

void sk_cpu_free(void *ptr, size_t nbytes) {
  if (!ptr) return;
  stats.num_frees++;
  stats.allocated -= nbytes;
  if (nbytes < SK_LARGE_ROUND) {
    if (nbytes >= SK_CACHED_MIN) {
      int k = class_of(nbytes);
      size_t size = class_size(k);
      if (classes[k].n < SK_CLASS_DEPTH && cached_bytes + size <= SK_CACHE_MAX) {
        classes[k].ptr[classes[k].n++] = keep(ptr, size);
        cached_bytes += size;
        return;
      }
      hand_out(ptr, size, size); /* all of it back to malloc */
    }
    free(ptr);
    return;
  }
  size_t size = round_large(nbytes);
  if (size <= SK_CACHE_MAX / 4) {
    while (ncached > 0 && (ncached == SK_CACHE_SLOTS || cached_bytes + size > SK_CACHE_MAX)) {
      ncached--; /* evict the oldest-inserted survivor at the end */
      munmap(hand_out(cache[ncached].ptr, cache[ncached].size, cache[ncached].size), cache[ncached].size);
      cached_bytes -= cache[ncached].size;
    }
    if (cached_bytes + size <= SK_CACHE_MAX) {
      cache[ncached].ptr = keep(ptr, size);
      cache[ncached].size = size;
      ncached++;
      cached_bytes += size;
      return;
    }
  }
  munmap(ptr, size);
}

size_t sk_cpu_cached_bytes(void) { return cached_bytes; }

void sk_cpu_empty_cache(void) {
  for (int k = 0; k < SK_NCLASSES; k++)
    while (classes[k].n > 0) {
      free(hand_out(classes[k].ptr[--classes[k].n], class_size(k), class_size(k)));
    }
  while (ncached > 0) {
    ncached--;
    munmap(hand_out(cache[ncached].ptr, cache[ncached].size, cache[ncached].size), cache[ncached].size);
  }
  cached_bytes = 0;
}
