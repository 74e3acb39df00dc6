/*
** sk_pool.h — the geometry of a pooling op, checked once (src/ops/sk_pool.c, PyTorch's
** messages) and read by the CPU loops (kernels/cpu/sk_cpu_pool.c)
** The input is [N, C, in...] or [C, in...] with 1-3 spatial dims, read as planes = N·C
** planes of in[0]·in[1]·in[2] (spatial sizes padded in front with 1s: a 2-d pool is [1, H, W],
** so the innermost loops run along W); the output has the same
** leading dims and out[...]. An index is a flat position in an input plane.
*/
#ifndef SK_POOL_H
#define SK_POOL_H

#include "sk_tensor.h"
#include "sk_value.h"

typedef struct SkPoolGeom {
  int nsp;                          /* spatial dims, 1..3 */
  int64_t planes;                   /* N·C */
  int64_t in[3], out[3];            /* spatial sizes, 1s before the last nsp */
  int64_t k[3], s[3], p[3], d[3];   /* window ops: kernel, stride, padding, dilation */
  int ceil_mode, count_include_pad;
  int64_t divisor;                  /* avg_pool's divisor_override, 0: none */
} SkPoolGeom;

/* max_pool / avg_pool (dilation NULL data: 1) with PyTorch's checks; op names the messages. */
int sk_pool_window(SkPoolGeom *g, const char *op, int nsp, const SkTensor *self, SkIntList kernel_size,
                   SkIntList stride, SkIntList padding, SkIntList dilation, int ceil_mode);
/* adaptive_avg_pool / adaptive_max_pool to output_size. */
int sk_pool_adaptive(SkPoolGeom *g, const char *op, int nsp, const SkTensor *self, SkIntList output_size);
/* The output's sizes (self->ndim of them): self's leading dims, then g->out. */
void sk_pool_out_sizes(const SkPoolGeom *g, const SkTensor *self, int64_t *sizes);
/* The adaptive window of output position o along a dim of in to out: [start, end). */
static inline int64_t sk_pool_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
static inline int64_t sk_pool_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

#endif
