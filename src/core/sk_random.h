/*
** sk_random.h — the global random stream: Philox4x32-10, counter based
** A draw of n values reserves n counters [offset, offset + n) from the
** global offset; value i of the draw is a function of (seed, offset + i)
** only, so results never depend on how the work is split across threads.
** Not thread-safe: draws are reserved by the (single) calling thread.
*/
#ifndef SK_RANDOM_H
#define SK_RANDOM_H

#include "sk_dtype.h"

#include <stdint.h>

#define SK_DEFAULT_SEED 67280421310721ull /* PyTorch's default CPU seed */

/* The largest value random_ draws into dt when `to` is None: the dtype's max, or 2^mantissa for floats. */
int64_t sk_random_upper(SkDType dt);
/* randperm's argument checks, for every backend and Meta (dtype -1: int64). */
int sk_random_check_randperm(int64_t n, int dtype);
/* Sets the seed and restarts the stream (offset 0). */
void sk_manual_seed(uint64_t seed);
uint64_t sk_initial_seed(void);
/* Reserves n counters; returns the first. */
uint64_t sk_random_reserve(uint64_t n);
/* The whole state, to save and restore a stream. */
void sk_random_get_state(uint64_t *seed, uint64_t *offset);
void sk_random_set_state(uint64_t seed, uint64_t offset);

#ifdef __CUDACC__ /* the CUDA kernels draw the same numbers from the same function */
#define SK_HOST_DEVICE __host__ __device__
#else
#define SK_HOST_DEVICE
#endif

/* Philox4x32-10 of counter (ctr, 0, 0) under key seed: four independent 32-bit words. */
static inline SK_HOST_DEVICE void sk_philox(uint64_t seed, uint64_t ctr, uint32_t out[4]) {
  uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

#endif
