/*
** test_cuda_alloc.c — the CUDA caching allocator against the emulated runtime (make cuda-emu-spec)
** Links kernels/cuda/sk_cuda_alloc.c with the emulation and sk_error.c alone; this file is
** the binding's part: its sk_memory_pressure frees the block the test calls garbage. It checks
** the emulation's SK_CUDA_EMU_MEMORY first, on which the out-of-memory cases rest. Every
** case asserts addresses and memory_stats worked out from the allocator's rules (512-byte
** rounding; small ≤ 1 MiB from 2 MiB segments; large below 10 MiB from 20 MiB segments,
** from 10 MiB on from their own size rounded to 2 MiB; splits leave ≥ 512 bytes small and
** > 1 MiB large).
*/
#include "sk_cuda_alloc.h"
#include "sk_error.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)

static int failures;
static void *garbage;   /* what the "collector" frees under memory pressure */
static int pressures;

void sk_memory_pressure(void);
void sk_memory_pressure(void) {
  pressures++;
  if (garbage) sk_cuda_free(0, garbage);
  garbage = NULL;
}

static void expect(const char *what, int ok) {
  if (!ok) { printf("FAIL %s\n", what); failures++; }
}

static SkCudaMemoryStats stats(int device) {
  SkCudaMemoryStats s;
  sk_cuda_alloc_stats(device, &s);
  return s;
}

static char *alloc(int device, size_t n) { return sk_cuda_alloc(device, n); }

static void small_blocks(void) {
  char *a = alloc(0, 1000), *b = alloc(0, 1000);
  expect("small blocks are carved one after another from a 2 MiB segment", a && b == a + 1024 && stats(0).reserved == 2 * MiB);
  sk_cuda_free(0, a);
  char *c = alloc(0, 512);
  expect("best fit: the freed 1 KiB block, split", c == a && stats(0).num_cache_hits == 2);
  char *d = alloc(0, 1);
  expect("exact fit: its 512-byte remainder", d == a + 512 && stats(0).allocated == 2048);
  sk_cuda_free(0, b);
  sk_cuda_free(0, c);
  sk_cuda_free(0, d);
  SkCudaMemoryStats s = stats(0);
  expect("all free: cached is the whole segment", s.allocated == 0 && s.cached == 2 * MiB && s.peak_allocated == 2048);
  char *e = alloc(0, 2 * MiB - 512);
  expect("a large request does not use the small pool", e && e != a && stats(0).reserved == 22 * MiB);
  sk_cuda_free(0, e);
  sk_cuda_alloc_empty_cache();
  expect("empty_cache gives both segments back", stats(0).reserved == 0);
}

static void merging(void) {
  char *x[4];
  for (int i = 0; i < 4; i++) x[i] = alloc(1, 512 * KiB);
  expect("four 512 KiB blocks tile one segment on cuda:1", x[3] == x[0] + 3 * 512 * KiB && stats(1).reserved == 2 * MiB);
  sk_cuda_free(1, x[0]);
  sk_cuda_free(1, x[2]);
  sk_cuda_free(1, x[1]); /* merges with both neighbours */
  char *m = alloc(1, MiB + 512 * KiB - 1000);
  expect("1.5 MiB is a large request: a new 20 MiB segment", m && stats(1).reserved == 22 * MiB);
  char *k = alloc(1, MiB);
  expect("the merged 1.5 MiB block serves 1 MiB", k == x[0] && stats(1).reserved == 22 * MiB);
  sk_cuda_free(1, k);
  sk_cuda_free(1, x[3]);
  sk_cuda_free(1, m);
  char *big = alloc(1, 19 * MiB + 512 * KiB);
  expect("a large remainder of 1 MiB or less stays with the block", big == m && stats(1).allocated == 20 * MiB);
  sk_cuda_free(1, big);
  char *own = alloc(1, 21 * MiB);
  expect("from 10 MiB on: a segment of the size rounded to 2 MiB", own && stats(1).reserved == 22 * MiB + 22 * MiB);
  sk_cuda_free(1, own);
  sk_cuda_alloc_empty_cache();
  expect("cuda:1 empty again", stats(1).reserved == 0 && stats(1).allocated == 0);
}

/* Many blocks in and out: the block table's removed entries never fill it, the totals come back to 0. */
static void churn(void) {
  enum { LIVE = 64 };
  char *live[LIVE] = {0};
  unsigned r = 12345;
  for (int i = 0; i < 200000; i++) {
    r = r * 1103515245u + 12345u;
    int j = (int)(r >> 8) % LIVE;
    sk_cuda_free(0, live[j]);
    live[j] = alloc(0, (r >> 12) % (3 * MiB));
    if (!live[j]) { expect("churn allocates", 0); break; }
  }
  for (int j = 0; j < LIVE; j++) sk_cuda_free(0, live[j]);
  sk_cuda_alloc_empty_cache();
  size_t free_b, total;
  cudaSetDevice(0);
  expect("churn: everything back", stats(0).allocated == 0 && stats(0).reserved == 0 &&
                                   cudaMemGetInfo(&free_b, &total) == cudaSuccess && free_b == total);
}

/* The emulation's limit itself, which the cases below rely on. */
static void emulated_limit(void) {
  size_t free_b = 0, total = 0;
  void *p = NULL, *q = NULL;
  cudaSetDevice(1);
  setenv("SK_CUDA_EMU_MEMORY", "1000000", 1);
  expect("cudaMalloc within the limit", cudaMalloc(&p, 600000) == cudaSuccess);
  expect("cudaMemGetInfo reports the limit and what is left",
         cudaMemGetInfo(&free_b, &total) == cudaSuccess && total == 1000000 && free_b == 400000);
  cudaError_t e = cudaMalloc(&q, 400001);
  expect("cudaMalloc past the limit: cudaErrorMemoryAllocation, naming the variable",
         e == cudaErrorMemoryAllocation && !q && strstr(cudaGetErrorString(e), "600000 of 1000000 in use (SK_CUDA_EMU_MEMORY)"));
  cudaGetLastError();
  cudaSetDevice(0);
  expect("the limit is per device", cudaMalloc(&q, 900000) == cudaSuccess);
  cudaFree(q);
  cudaSetDevice(1);
  cudaFree(p);
  expect("cudaFree gives it back", cudaMalloc(&p, 1000000) == cudaSuccess);
  cudaFree(p);
  setenv("SK_CUDA_EMU_MEMORY", "lots", 1);
  e = cudaMalloc(&p, 1);
  expect("a limit that is not a byte count", e == cudaErrorInvalidValue && strstr(cudaGetErrorString(e), "'lots' is not a positive byte count"));
  cudaGetLastError();
  unsetenv("SK_CUDA_EMU_MEMORY");
  cudaSetDevice(0);
}

static void out_of_memory(void) {
  setenv("SK_CUDA_EMU_MEMORY", "25165824", 1); /* 24 MiB per device */
  SkCudaMemoryStats s0 = stats(0);
  char *a = alloc(0, 4 * MiB);
  sk_cuda_free(0, a); /* a whole free 20 MiB segment, cached */
  char *b = alloc(0, 22 * MiB);
  expect("cudaMalloc fails, the cached segment goes back, the retry succeeds without pressure",
         b && pressures == 0 && stats(0).num_ooms == s0.num_ooms && stats(0).reserved == 22 * MiB);
  sk_cuda_free(0, b);
  sk_cuda_alloc_empty_cache();
  char *g = alloc(0, 20 * MiB - 512 * KiB); /* fills its own 20 MiB segment; garbage, freed by the "collector" */
  garbage = g;
  char *c = alloc(0, 12 * MiB);
  expect("memory pressure frees the garbage, whose segment serves the request",
         c && c == g && pressures == 1 && stats(0).num_ooms == s0.num_ooms + 1 && stats(0).reserved == 20 * MiB);
  char *d = alloc(0, 30 * MiB);
  expect("out of memory after the retries: NULL", !d && pressures == 2 && stats(0).num_ooms == s0.num_ooms + 2);
  expect("the message names the device, the request and the totals",
         strstr(sk_error_message(), "CUDA out of memory: tried to allocate 31457280 bytes on cuda:0 (") &&
             strstr(sk_error_message(), "12582912 bytes allocated by sk, 20971520 reserved"));
  sk_cuda_free(0, c);
  sk_cuda_alloc_empty_cache();
  unsetenv("SK_CUDA_EMU_MEMORY");
}

static void bad_requests(void) {
  expect("a device out of the allocator's range", !alloc(64, 1) && strstr(sk_error_message(), "CUDA device 64 out of range"));
  expect("a device the runtime lacks", !alloc(5, 1) && strstr(sk_error_message(), "CUDA error selecting cuda:5: "));
  expect("a size past SIZE_MAX once rounded", !alloc(0, (size_t)-1) && strstr(sk_error_message(), "(too large)"));
  char *z = alloc(0, 0);
  expect("0 bytes: a 512-byte block", z && stats(0).allocated == 512);
  sk_cuda_free(0, z);
  sk_cuda_free(0, z + 512); /* not a block: ignored */
  sk_cuda_alloc_empty_cache();
}

int main(void) {
  small_blocks();
  merging();
  churn();
  emulated_limit();
  out_of_memory();
  bad_requests();
  if (failures) { printf("test_cuda_alloc: %d failed\n", failures); return 1; }
  printf("test_cuda_alloc: all passed\n");
  return 0;
}
