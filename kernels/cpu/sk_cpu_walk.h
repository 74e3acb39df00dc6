/*
** sk_cpu_walk.h — private helpers of the CPU copy kernels (sk_cpu_shape.c,
** sk_cpu_index.c): a multi-operand strided walker and tensor geometry.
** MWalk runs one loop shape over up to MW_OPS operands, each with its own
** byte strides (negative and zero allowed), so it never looks at dtypes.
** mw_init drops dims of size 1 and merges neighbours that every operand
** walks as one; rows of the last dim go to a row function (MRowFn) with the
** flat index of their first element, in parallel past SK_GRAIN in mw_run.
** Invariants: after mw_init, 1 <= ndim <= SK_MAX_DIMS in C order (last dim
** fastest); a 0-dim tensor is seen as shape [1] with stride 0 (geom_*,
** byte_strides). A parallel run splits the flat range anywhere, so a walk
** that writes through an index must not let two flat positions write one
** element (its callers drop the indexed dim from the walk).
*/
#ifndef SK_CPU_WALK_H
#define SK_CPU_WALK_H

#include "sk_parallel.h"
#include "sk_tensor.h"

/* {==== Multi-operand walker ==== */
#define MW_OPS (SK_MAX_DIMS + 2)

typedef struct MWalk {
  int nops, ndim;                       /* ndim >= 1, C order (last dim fastest) */
  int64_t sizes[SK_MAX_DIMS];
  int64_t strides[SK_MAX_DIMS][MW_OPS]; /* bytes */
  char *data[MW_OPS];
  int64_t numel;
} MWalk;

/* A row: n elements, operand k at p[k] advancing st[k] bytes; `first` is the flat index of the first. */
typedef void (*MRowFn)(char *const *p, const int64_t *st, int64_t n, int64_t first, void *ctx);

/* st[k][d]: byte stride of operand k along loop dim d. */
static inline void mw_init(MWalk *w, int ndim, const int64_t *sizes, int nops, char *const *data, int64_t (*st)[SK_MAX_DIMS]) {
  w->nops = nops;
  w->ndim = 0;
  w->numel = sk_numel(ndim, sizes);
  for (int k = 0; k < nops; k++) w->data[k] = data[k];
  for (int d = 0; d < ndim; d++) {
    if (sizes[d] == 1) continue;
    if (w->ndim > 0 && w->numel > 0) {
      int merge = 1;
      for (int k = 0; k < nops && merge; k++) merge = w->strides[w->ndim - 1][k] == sizes[d] * st[k][d];
      if (merge) {
        w->sizes[w->ndim - 1] *= sizes[d];
        for (int k = 0; k < nops; k++) w->strides[w->ndim - 1][k] = st[k][d];
        continue;
      }
    }
    w->sizes[w->ndim] = sizes[d];
    for (int k = 0; k < nops; k++) w->strides[w->ndim][k] = st[k][d];
    w->ndim++;
  }
  if (!w->ndim) {
    w->sizes[0] = 1;
    for (int k = 0; k < nops; k++) w->strides[0][k] = 0;
    w->ndim = 1;
  }
}

static inline void mw_range(const MWalk *w, int64_t begin, int64_t end, MRowFn fn, void *ctx) {
  int last = w->ndim - 1, nops = w->nops;
  int64_t idx[SK_MAX_DIMS], rem = begin;
  char *p[MW_OPS];
  for (int k = 0; k < nops; k++) p[k] = w->data[k];
  for (int d = last; d >= 0; d--) {
    idx[d] = rem % w->sizes[d];
    rem /= w->sizes[d];
    for (int k = 0; k < nops; k++) p[k] += idx[d] * w->strides[d][k];
  }
  for (int64_t pos = begin; pos < end;) {
    int64_t n = w->sizes[last] - idx[last];
    if (n > end - pos) n = end - pos;
    fn(p, w->strides[last], n, pos, ctx);
    pos += n;
    idx[last] += n;
    for (int k = 0; k < nops; k++) p[k] += n * w->strides[last][k];
    for (int d = last; d > 0 && idx[d] == w->sizes[d]; d--) {
      for (int k = 0; k < nops; k++) p[k] += w->strides[d - 1][k] - idx[d] * w->strides[d][k];
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
}

typedef struct { const MWalk *w; MRowFn fn; void *ctx; } MWJob;

static inline void mw_chunk(void *c, int64_t b, int64_t e) {
  const MWJob *j = c;
  mw_range(j->w, b, e, j->fn, j->ctx);
}

/* Runs fn over every element; in parallel past the grain when `parallel`. */
static inline void mw_run(const MWalk *w, MRowFn fn, void *ctx, int parallel) {
  if (w->numel <= 0) return;
  MWJob j = {w, fn, ctx};
  if (parallel) sk_parallel_for(0, w->numel, SK_GRAIN, mw_chunk, &j);
  else mw_range(w, 0, w->numel, fn, ctx);
}

/* Byte strides of t, or of t seen with `ndim` dims: a 0-dim tensor as [1]. */
static inline void byte_strides(const SkTensor *t, int64_t *out) {
  int64_t z = (int64_t)sk_tensor_itemsize(t);
  for (int d = 0; d < t->ndim; d++) out[d] = t->strides[d] * z;
  if (t->ndim == 0) out[0] = 0;
}

static inline int geom_ndim(const SkTensor *t) { return t->ndim ? t->ndim : 1; }
static inline int64_t geom_size(const SkTensor *t, int d) { return t->ndim ? t->sizes[d] : 1; }
/* }==== */

#endif
