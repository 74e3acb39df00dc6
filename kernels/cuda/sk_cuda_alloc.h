/*
** sk_cuda_alloc.h — the CUDA caching allocator (PyTorch's CUDACachingAllocator, one stream)
** Requests are rounded to 512 bytes; small ones (≤ 1 MiB) are carved from 2 MiB
** segments, large ones from 20 MiB segments (below 10 MiB) or from a segment of their
** size rounded to 2 MiB. Each device has its own small and large pools of free blocks,
** ordered by (stream, size, address): a request takes the best fit, split when enough
** remains, and a freed block merges with its free neighbours in the segment.
** empty_cache gives every wholly free segment back. When cudaMalloc fails: the device's
** free segments are given back and cudaMalloc retried once; then memory pressure (the
** binding collects Lua garbage, dead tensors give their blocks back) and one more
** attempt; then an "out of memory" error naming the device, the request and the totals.
*/
#ifndef SK_CUDA_ALLOC_H
#define SK_CUDA_ALLOC_H

#include "sk_cuda.h"

/* A block of at least nbytes on `device` (NULL with the error); never NULL for nbytes 0. */
void *sk_cuda_alloc(int device, size_t nbytes);
/* Gives ptr's block back to its pool; ptr NULL, or not from sk_cuda_alloc, is ignored. */
void sk_cuda_free(int device, void *ptr);
void sk_cuda_alloc_empty_cache(void);
/* allocated: bytes in live blocks; reserved: bytes in segments; cached = reserved - allocated;
** num_cache_hits: requests served without a new segment; num_ooms: requests for which
** cudaMalloc failed even after the cache was given back (whether collecting garbage then helped or not). */
int sk_cuda_alloc_stats(int device, SkCudaMemoryStats *out);

#endif
