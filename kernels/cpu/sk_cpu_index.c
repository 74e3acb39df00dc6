/*
** sk_cpu_index.c — copy kernels of the indexing ops
** gather, index_select (take along one dim), scatter, scatter_add (put
** along one dim), nonzero, masked_select (count per chunk, then write at
** prefix offsets), masked_fill_, index and index_put_ (advanced indexing).
** All run on the multi-operand walker of sk_cpu_walk.h or on contiguous
** fast paths. Elements move as bytes of their size (1, 2, 4 or 8); only
** scatter_add and accumulating index_put_ look at values.
** Invariants: the meta functions have checked shapes, dtypes and overlap;
** index values are checked here before anything the caller can see is
** written (functional results may be left half-written on failure: they
** are freed). Rows that write through an index are never split between
** threads in a way that lets two threads write one element.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_cpu_walk.h"

#include <stdlib.h>
#include <string.h>

/* {==== Index checks ==== */
/* An int64 CPU copy of an integer index tensor (or the tensor itself retained). */
static SkTensor *as_int64(const SkTensor *t) {
  if (t->dtype == SK_DTYPE_INT64) return sk_tensor_retain((SkTensor *)t);
  SkTensor *c = sk_tensor_empty(t->ndim, t->sizes, SK_DTYPE_INT64, SK_CPU);
  if (c && sk_copy_cpu(c, t)) { sk_tensor_release(c); return NULL; }
  return c;
}

typedef struct { int64_t lo, hi, bad; int found; } BoundScan;

static void bound_row(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  BoundScan *b = ctx;
  (void)first;
  for (int64_t i = 0; i < n && !b->found; i++) {
    int64_t v = *(const int64_t *)(p + i * st);
    if (v < b->lo || v >= b->hi) { b->found = 1; b->bad = v; }
  }
}

/* The message for the first value of int64 tensor idx outside [-size, size) (neg_ok) or [0, size). */
static int check_bounds(const SkTensor *idx, int64_t size, int neg_ok, int64_t dim) {
  BoundScan b = {neg_ok ? -size : 0, size, 0, 0};
  if (idx->numel == 0) return 0;
  SkWalk w;
  sk_walk_init(&w, idx, 1);
  sk_walk_range(&w, w.data, 0, w.numel, bound_row, &b);
  if (!b.found) return 0;
  return sk_error("index %lld is out of bounds for dimension %lld with size %lld", (long long)b.bad, (long long)dim,
                  (long long)size);
}

/* A flag set by any thread that met an index out of range (the message comes from check_bounds). */
static void flag_bad(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELAXED); }
/* }==== */

/* {==== gather and index_select: out[p] = X[p with dim replaced by index[p]] ==== */
/* Operands of a take walk: 0 the output, 1 the int64 index, 2 the indexed tensor (stride 0 along dim). */
typedef struct { int64_t xsd, bound, z; int bad; } TakeCtx;

#define TAKE_LOOP(T)                                                                              \
  for (int64_t i = 0; i < n; i++) {                                                               \
    int64_t v = *(const int64_t *)(ip + i * st[1]);                                               \
    if ((uint64_t)v >= (uint64_t)c->bound) { flag_bad(&c->bad); return; }                         \
    *(T *)(op + i * st[0]) = *(const T *)(xp + i * st[2] + v * c->xsd);                           \
  }                                                                                               \
  return;

static void take_row(char *const *p, const int64_t *st, int64_t n, int64_t first, void *ctx) {
  TakeCtx *c = ctx;
  char *op = p[0];
  const char *ip = p[1], *xp = p[2];
  (void)first;
  switch (c->z) {
  case 1: TAKE_LOOP(uint8_t)
  case 2: TAKE_LOOP(uint16_t)
  case 4: TAKE_LOOP(uint32_t)
  default: TAKE_LOOP(uint64_t)
  }
}

/* Runs the take walk over `nd` dims of `sizes`; ist / xst are byte strides of index / X over them. */
static int take(SkTensor *out, const SkTensor *index, int64_t *ist, const SkTensor *x, int64_t *xst, int dim,
                int nd, const int64_t *sizes, int prescan) {
  TakeCtx c = {0, geom_size(x, dim), (int64_t)sk_tensor_itemsize(x), 0};
  if (prescan && check_bounds(index, c.bound, 0, dim)) return -1;
  int64_t st[3][SK_MAX_DIMS];
  byte_strides(out, st[0]);
  memcpy(st[1], ist, (size_t)nd * sizeof *ist);
  memcpy(st[2], xst, (size_t)nd * sizeof *xst);
  c.xsd = st[2][dim];
  st[2][dim] = 0;
  char *data[3] = {sk_tensor_data(out), sk_tensor_data(index), sk_tensor_data(x)};
  MWalk w;
  mw_init(&w, nd, sizes, 3, data, st);
  mw_run(&w, take_row, &c, 1);
  return c.bad ? check_bounds(index, c.bound, 0, dim) : 0;
}

/* {==== Fast paths: contiguous self, index and out seen as [A, K, B] ==== */
/* out[a, k, b] = x[a, idx, b] with x of size S along dim: idx = index[k] (index_select, one
** index per row of B elements) or index[a, k, b] (gather, where index and self agree off dim). */
typedef struct {
  const char *x;
  char *o;
  const int64_t *idx;
  int64_t K, S, B, bound; /* index length along dim, self's size along dim, inner elements, bound */
  int64_t row;            /* bytes of a row of B elements */
  int bad;
} FastTake;

#define PREFETCH_AHEAD 8

/* index_select: rows r = (a, k) in [begin, end), copied whole (N bytes; 0 = c->row). */
#define SELECT_ROWS(N)                                                                            \
  for (int64_t r = begin, a = begin / c->K, k = begin % c->K; r < end; r++) {                    \
    int64_t v = c->idx[k];                                                                        \
    if ((uint64_t)v >= (uint64_t)c->bound) { flag_bad(&c->bad); return; }                         \
    if (k + PREFETCH_AHEAD < c->K)                                                                \
      __builtin_prefetch(c->x + (a * c->S + c->idx[k + PREFETCH_AHEAD]) * row);                   \
    memcpy(c->o + r * row, c->x + (a * c->S + v) * row, (size_t)(N ? N : row));                   \
    if (++k == c->K) k = 0, a++;                                                                  \
  }                                                                                               \
  return;

static void select_rows(void *ctx, int64_t begin, int64_t end) {
  FastTake *c = ctx;
  const int64_t row = c->row;
  switch (row) {
  case 1: SELECT_ROWS(1)
  case 2: SELECT_ROWS(2)
  case 4: SELECT_ROWS(4)
  case 8: SELECT_ROWS(8)
  case 16: SELECT_ROWS(16)
  case 32: SELECT_ROWS(32)
  case 64: SELECT_ROWS(64)
  default: SELECT_ROWS(0)
  }
}

/* gather: rows r = (a, k) of B elements of type T, each with its own index. */
#define GATHER_ROWS(T)                                                                            \
  {                                                                                               \
    const T *x = (const T *)c->x;                                                                 \
    T *o = (T *)c->o;                                                                             \
    for (int64_t r = begin, a = begin / c->K, k = begin % c->K; r < end; r++) {                   \
      const int64_t *ix = c->idx + r * c->B;                                                      \
      const T *xa = x + a * c->S * c->B;                                                          \
      T *orow = o + r * c->B;                                                                     \
      for (int64_t b = 0; b < c->B; b++) {                                                        \
        int64_t v = ix[b];                                                                        \
        if ((uint64_t)v >= (uint64_t)c->bound) { flag_bad(&c->bad); return; }                     \
        orow[b] = xa[v * c->B + b];                                                               \
      }                                                                                           \
      if (++k == c->K) k = 0, a++;                                                                \
    }                                                                                             \
    return;                                                                                       \
  }

static void gather_rows(void *ctx, int64_t begin, int64_t end) {
  FastTake *c = ctx;
  switch (c->row / c->B) {
  case 1: GATHER_ROWS(uint8_t)
  case 2: GATHER_ROWS(uint16_t)
  case 4: GATHER_ROWS(uint32_t)
  default: GATHER_ROWS(uint64_t)
  }
}

/* Runs a fast path when self, index and out are contiguous (and, for gather, index has self's
** sizes off dim); returns 1 when it ran, with *rc set. */
static int fast_take(const SkTensor *self, int dim, const SkTensor *idx, SkTensor *out, int gather, int prescan, int *rc) {
  if (!sk_tensor_is_contiguous(self) || !sk_tensor_is_contiguous(out) || !sk_tensor_is_contiguous(idx)) return 0;
  int64_t bound = geom_size(self, dim), z = (int64_t)sk_tensor_itemsize(self), A = 1, B = 1;
  for (int d = 0; d < self->ndim; d++) {
    if (gather && d != dim && idx->sizes[d] != self->sizes[d]) return 0;
    if (d < dim) A *= self->sizes[d];
    else if (d > dim) B *= self->sizes[d];
  }
  *rc = 0;
  if (prescan && check_bounds(idx, bound, 0, dim)) { *rc = -1; return 1; }
  FastTake c = {sk_tensor_data(self), sk_tensor_data(out), sk_tensor_data(idx),
                gather ? geom_size(idx, dim) : idx->numel, bound, B, bound, B * z, 0};
  sk_parallel_for(0, A * c.K, SK_GRAIN / B + 1, gather ? gather_rows : select_rows, &c);
  if (c.bad) *rc = check_bounds(idx, bound, 0, dim);
  return 1;
}
/* }==== */

int sk_cpu_gather_out(const SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, int sparse_grad,
                      SkTensor *out) {
  (void)sparse_grad;
  if (index->numel == 0) return 0;
  int prescan = m->variant != SK_VARIANT_FUNCTIONAL, rc;
  if (fast_take(self, (int)dim, index, out, 1, prescan, &rc)) return rc;
  int64_t ist[SK_MAX_DIMS], xst[SK_MAX_DIMS];
  byte_strides(index, ist);
  byte_strides(self, xst);
  int64_t sizes[SK_MAX_DIMS] = {1};
  memcpy(sizes, index->sizes, (size_t)index->ndim * sizeof sizes[0]);
  return take(out, index, ist, self, xst, (int)dim, geom_ndim(index), sizes, prescan);
}

int sk_cpu_index_select_out(const SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, SkTensor *out) {
  if (out->numel == 0) return 0;
  int prescan = m->variant != SK_VARIANT_FUNCTIONAL, rc = 0;
  SkTensor *idx = as_int64(index);
  if (!idx) return -1;
  if (!fast_take(self, (int)dim, idx, out, 0, prescan, &rc)) {
    /* the general walk: the index varies along dim only */
    int nd = geom_ndim(out);
    int64_t ist[SK_MAX_DIMS] = {0}, xst[SK_MAX_DIMS], sizes[SK_MAX_DIMS] = {1};
    memcpy(sizes, out->sizes, (size_t)out->ndim * sizeof sizes[0]);
    ist[dim] = idx->ndim ? idx->strides[0] * 8 : 0;
    byte_strides(self, xst);
    rc = take(out, idx, ist, self, xst, (int)dim, nd, sizes, prescan);
  }
  sk_tensor_release(idx);
  return rc;
}
/* }==== */

/* {==== scatter, scatter_add: X[p with dim replaced by index[p]] (op)= Y[p] ==== */
/* The walk runs over index's dims without dim (so no two threads write one element of X);
** each row loops over dim itself. Operands: 0 X (out), 1 index, 2 Y (src; NULL for a value). */
typedef enum { PUT_SET, PUT_ADD } PutOp;

typedef struct {
  int64_t K, isd, ysd, xsd, z; /* index length along dim; byte strides along dim of index, Y, X */
  PutOp op;
  SkDType dt;
  const char *value;           /* the value overload's element, else NULL */
} PutCtx;

/* x (op)= y for one element of dtype dt. */
static inline void put_elem(char *x, const char *y, int64_t z, PutOp op, SkDType dt) {
  if (op == PUT_SET) { memcpy(x, y, (size_t)z); return; }
  switch (dt) {
  case SK_DTYPE_BOOL: *(uint8_t *)x = *(uint8_t *)x | *(const uint8_t *)y; break;
  case SK_DTYPE_UINT8: *(uint8_t *)x = (uint8_t)(*(uint8_t *)x + *(const uint8_t *)y); break;
  case SK_DTYPE_INT8: *(int8_t *)x = (int8_t)(uint8_t)((uint8_t)*(int8_t *)x + (uint8_t)*(const int8_t *)y); break;
  case SK_DTYPE_INT16: *(int16_t *)x = (int16_t)(uint16_t)((uint16_t)*(int16_t *)x + (uint16_t)*(const int16_t *)y); break;
  case SK_DTYPE_INT32: *(int32_t *)x = (int32_t)((uint32_t)*(int32_t *)x + (uint32_t)*(const int32_t *)y); break;
  case SK_DTYPE_INT64: *(int64_t *)x = (int64_t)((uint64_t)*(int64_t *)x + (uint64_t)*(const int64_t *)y); break;
  case SK_DTYPE_FLOAT32: *(float *)x += *(const float *)y; break;
  case SK_DTYPE_FLOAT64: *(double *)x += *(const double *)y; break;
  case SK_DTYPE_FLOAT16:
    *(uint16_t *)x = sk_float_to_half(sk_half_to_float(*(uint16_t *)x) + sk_half_to_float(*(const uint16_t *)y));
    break;
  default:
    *(uint16_t *)x = sk_float_to_bf16(sk_bf16_to_float(*(uint16_t *)x) + sk_bf16_to_float(*(const uint16_t *)y));
    break;
  }
}

static void put_row(char *const *p, const int64_t *st, int64_t n, int64_t first, void *ctx) {
  const PutCtx *c = ctx;
  (void)first;
  /* walk along dim innermost when that is the shorter stride of the index */
  int k_inner = (c->isd < 0 ? -c->isd : c->isd) <= (st[1] < 0 ? -st[1] : st[1]);
  for (int64_t a = 0; a < (k_inner ? n : c->K); a++)
    for (int64_t b = 0; b < (k_inner ? c->K : n); b++) {
      int64_t i = k_inner ? a : b, k = k_inner ? b : a;
      int64_t v = *(const int64_t *)(p[1] + i * st[1] + k * c->isd);
      const char *y = c->value ? c->value : p[2] + i * st[2] + k * c->ysd;
      put_elem(p[0] + i * st[0] + v * c->xsd, y, c->z, c->op, c->dt);
    }
}

static int scatter(const SkMeta *m, const SkTensor *self, int dim, const SkTensor *index, const SkTensor *src,
                   SkScalar value, PutOp op, SkTensor *out) {
  if (!src && sk_scalar_check(value, out->dtype)) return -1; /* before anything is written */
  if (m->variant != SK_VARIANT_INPLACE && out != self && sk_copy_cpu(out, self)) return -1;
  if (index->numel == 0) return 0;
  if (check_bounds(index, geom_size(self, dim), 0, dim)) return -1;
  char vbuf[8];
  PutCtx c = {geom_size(index, dim), 0, 0, 0, (int64_t)sk_tensor_itemsize(out), op, out->dtype, NULL};
  if (!src) {
    sk_scalar_store(vbuf, out->dtype, value);
    c.value = vbuf;
  }
  int nd = geom_ndim(index);
  int64_t st[3][SK_MAX_DIMS], sizes[SK_MAX_DIMS] = {1};
  memcpy(sizes, index->sizes, (size_t)index->ndim * sizeof sizes[0]);
  byte_strides(out, st[0]);
  byte_strides(index, st[1]);
  if (src) byte_strides(src, st[2]);
  else memset(st[2], 0, sizeof st[2]);
  c.xsd = st[0][dim], c.isd = st[1][dim], c.ysd = st[2][dim];
  st[0][dim] = st[1][dim] = st[2][dim] = 0;
  sizes[dim] = 1;
  char *data[3] = {sk_tensor_data(out), sk_tensor_data(index), src ? sk_tensor_data(src) : NULL};
  MWalk w;
  mw_init(&w, nd, sizes, 3, data, st);
  mw_run(&w, put_row, &c, 1);
  return 0;
}

int sk_cpu_scatter_src_out(const SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index,
                           const SkTensor *src, SkTensor *out) {
  return scatter(m, self, (int)dim, index, src, sk_scalar_int(0), PUT_SET, out);
}

int sk_cpu_scatter_value_out(const SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, SkScalar value,
                             SkTensor *out) {
  return scatter(m, self, (int)dim, index, NULL, value, PUT_SET, out);
}

int sk_cpu_scatter_add_out(const SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index,
                           const SkTensor *src, SkTensor *out) {
  return scatter(m, self, (int)dim, index, src, sk_scalar_int(0), PUT_ADD, out);
}
/* }==== */

/* {==== nonzero and masked_select: counts per chunk, then writes at prefix offsets ==== */
typedef struct {
  const MWalk *w;
  int64_t nchunks, *counts;
  SkDType dt;                /* of the tested operand */
  int tested;                /* operand whose nonzero elements count */
  /* write pass */
  char *out;
  int64_t z, ndim, sizes[SK_MAX_DIMS], ost0, ost1; /* nonzero: the shape for coordinates, out strides (elements) */
  int mode;                  /* 0 count, 1 nonzero coordinates, 2 masked_select values */
} Scan;

/* 1 when the element at p of dtype dt is nonzero (-0.0 is zero, NaN is not). */
static inline int is_nonzero(const char *p, SkDType dt) {
  switch (sk_dtype_size(dt)) {
  case 1: return *(const uint8_t *)p != 0;
  case 2: return (*(const uint16_t *)p & (sk_dtype_is_floating(dt) ? 0x7fffu : 0xffffu)) != 0;
  case 4: return (*(const uint32_t *)p & (sk_dtype_is_floating(dt) ? 0x7fffffffu : 0xffffffffu)) != 0;
  default: return (*(const uint64_t *)p & (sk_dtype_is_floating(dt) ? 0x7fffffffffffffffull : ~0ull)) != 0;
  }
}

typedef struct { Scan *s; int64_t pos, count; } ScanRow;

static void scan_row(char *const *p, const int64_t *st, int64_t n, int64_t first, void *ctx) {
  ScanRow *r = ctx;
  const Scan *s = r->s;
  const char *t = p[s->tested];
  if (s->mode == 0) {
    int64_t c = 0;
    if (s->dt == SK_DTYPE_BOOL || sk_dtype_size(s->dt) == 1)
      for (int64_t i = 0; i < n; i++) c += *(const uint8_t *)(t + i * st[s->tested]) != 0;
    else
      for (int64_t i = 0; i < n; i++) c += is_nonzero(t + i * st[s->tested], s->dt);
    r->count += c;
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!is_nonzero(t + i * st[s->tested], s->dt)) continue;
    if (s->mode == 2) {
      memcpy(s->out + r->pos * s->ost0 * s->z, p[0] + i * st[0], (size_t)s->z);
    } else { /* coordinates of flat index first + i */
      int64_t rem = first + i;
      int64_t *row = (int64_t *)s->out + r->pos * s->ost0;
      for (int64_t d = s->ndim - 1; d >= 0; d--) {
        row[d * s->ost1] = rem % s->sizes[d];
        rem /= s->sizes[d];
      }
    }
    r->pos++;
  }
}

static void scan_chunks(void *ctx, int64_t begin, int64_t end) {
  Scan *s = ctx;
  for (int64_t ch = begin; ch < end; ch++) {
    int64_t b = s->w->numel * ch / s->nchunks, e = s->w->numel * (ch + 1) / s->nchunks;
    ScanRow r = {s, s->mode ? s->counts[ch] : 0, 0};
    mw_range(s->w, b, e, scan_row, &r);
    if (!s->mode) s->counts[ch] = r.count;
  }
}

/* Counts the nonzero elements of operand `tested` in chunks; counts[] become start offsets. */
static int64_t scan_count(Scan *s) {
  int64_t total = 0;
  s->mode = 0;
  sk_parallel_for(0, s->nchunks, 1, scan_chunks, s);
  for (int64_t ch = 0; ch < s->nchunks; ch++) {
    int64_t c = s->counts[ch];
    s->counts[ch] = total;
    total += c;
  }
  return total;
}

static int64_t chunks_for(int64_t numel) {
  int64_t nc = numel / SK_GRAIN + 1, cap = 4 * (int64_t)sk_get_num_threads();
  return nc < cap ? nc : cap;
}

/* The output of a data-dependent op: a new tensor, or the caller's out checked and resized
** as a structured out would be. *dst is where to write (out, or a contiguous temporary). */
static int dd_output(const char *op, SkTensor **result, SkTensor *out, int ndim, const int64_t *sizes, SkDType dt,
                     SkTensor **dst) {
  SkMeta mm;
  sk_meta_init(&mm, op, out ? SK_VARIANT_OUT : SK_VARIANT_FUNCTIONAL, SK_CPU, 1, 1);
  mm.outputs[0] = out;
  int rc = sk_meta_set_output(&mm, 0, ndim, sizes, NULL, dt);
  if (!rc && out) {
    *dst = sk_tensor_is_contiguous(out) ? sk_tensor_retain(out) : sk_tensor_empty(ndim, sizes, dt, SK_CPU);
    rc = *dst ? 0 : -1;
  } else if (!rc) {
    *result = sk_meta_take_output(&mm, 0);
    *dst = sk_tensor_retain(*result);
  }
  sk_meta_cleanup(&mm, rc != 0);
  return rc;
}

/* Copies a contiguous temporary back into the caller's out. */
static int dd_finish(SkTensor *out, SkTensor *dst, int rc) {
  if (!rc && out && dst != out) rc = sk_copy_cpu(out, dst);
  sk_tensor_release(dst);
  return rc;
}

static int check_out_overlap(const SkTensor *out, const SkTensor *a, const SkTensor *b) {
  if (!out) return 0;
  if ((a && sk_tensor_may_overlap(out, a)) || (b && sk_tensor_may_overlap(out, b)))
    return sk_error("unsupported operation: some elements of the input tensor and the written-to tensor 'out' refer to "
                    "a single memory location; clone() the input first");
  return 0;
}

static int nonzero_into(SkTensor **result, const SkTensor *self, SkTensor *out) {
  if (check_out_overlap(out, self, NULL)) return -1;
  Scan s;
  int64_t st[1][SK_MAX_DIMS];
  char *data[1] = {sk_tensor_data(self)};
  MWalk w;
  byte_strides(self, st[0]);
  mw_init(&w, self->ndim, self->sizes, 1, data, st);
  s.w = &w;
  s.nchunks = chunks_for(w.numel);
  s.counts = calloc((size_t)s.nchunks, sizeof *s.counts);
  if (!s.counts) return sk_error("out of memory");
  s.dt = self->dtype;
  s.tested = 0;
  int64_t total = self->numel ? scan_count(&s) : 0, sizes[2] = {total, self->ndim};
  SkTensor *dst = NULL;
  int rc = dd_output("nonzero", result, out, 2, sizes, SK_DTYPE_INT64, &dst);
  if (!rc && total > 0 && self->ndim > 0) {
    s.out = sk_tensor_data(dst);
    s.ndim = self->ndim;
    memcpy(s.sizes, self->sizes, sizeof s.sizes);
    s.ost0 = self->ndim, s.ost1 = 1, s.z = 8;
    s.mode = 1;
    sk_parallel_for(0, s.nchunks, 1, scan_chunks, &s);
  }
  free(s.counts);
  return dst ? dd_finish(out, dst, rc) : rc;
}

int sk_cpu_nonzero(SkTensor **result, const SkTensor *self) { return nonzero_into(result, self, NULL); }
int sk_cpu_nonzero_out(const SkTensor *self, SkTensor *out) { return nonzero_into(NULL, self, out); }

/* The broadcast shape of a and b, or an error naming argument `bname`. */
static int broadcast2(const SkTensor *a, const SkTensor *b, const char *bname, int *nd, int64_t *sizes) {
  char x[128], y[128];
  *nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 1; i <= *nd; i++) {
    int64_t sa = i <= a->ndim ? a->sizes[a->ndim - i] : 1, sb = i <= b->ndim ? b->sizes[b->ndim - i] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return sk_error("argument '%s' (shape %s) is not broadcastable to shape %s", bname,
                      sk_shape_str(b->ndim, b->sizes, x, sizeof x), sk_shape_str(a->ndim, a->sizes, y, sizeof y));
    sizes[*nd - i] = sa == 1 ? sb : sa;
  }
  return 0;
}

/* Byte strides of t expanded to nd dims of `sizes` (0 where broadcast). */
static void expanded_strides(const SkTensor *t, int nd, const int64_t *sizes, int64_t *out) {
  int64_t z = (int64_t)sk_tensor_itemsize(t);
  for (int i = 1; i <= nd; i++) {
    int td = t->ndim - i;
    out[nd - i] = td >= 0 && t->sizes[td] == sizes[nd - i] ? t->strides[td] * z : 0;
  }
}

static int masked_select_into(SkTensor **result, const SkTensor *self, const SkTensor *mask, SkTensor *out) {
  if (mask->dtype != SK_DTYPE_BOOL)
    return sk_error("masked_select: expected BoolTensor for mask (argument 'mask' has dtype %s)", sk_dtype_name(mask->dtype));
  if (out && out->dtype != self->dtype)
    return sk_error("masked_select(): self and result must have the same scalar type (argument 'out' has dtype %s, "
                    "expected %s)", sk_dtype_name(out->dtype), sk_dtype_name(self->dtype));
  if (check_out_overlap(out, self, mask)) return -1;
  int nd;
  int64_t sizes[SK_MAX_DIMS], st[2][SK_MAX_DIMS];
  if (broadcast2(self, mask, "mask", &nd, sizes)) return -1;
  expanded_strides(self, nd, sizes, st[0]);
  expanded_strides(mask, nd, sizes, st[1]);
  char *data[2] = {sk_tensor_data(self), sk_tensor_data(mask)};
  MWalk w;
  mw_init(&w, nd, sizes, 2, data, st);
  Scan s;
  s.w = &w;
  s.nchunks = chunks_for(w.numel);
  s.counts = calloc((size_t)s.nchunks, sizeof *s.counts);
  if (!s.counts) return sk_error("out of memory");
  s.dt = SK_DTYPE_BOOL;
  s.tested = 1;
  int64_t total = w.numel ? scan_count(&s) : 0;
  SkTensor *dst = NULL;
  int rc = dd_output("masked_select", result, out, 1, &total, self->dtype, &dst);
  if (!rc && total > 0) {
    s.out = sk_tensor_data(dst);
    s.ost0 = 1, s.z = (int64_t)sk_tensor_itemsize(self);
    s.mode = 2;
    sk_parallel_for(0, s.nchunks, 1, scan_chunks, &s);
  }
  free(s.counts);
  return dst ? dd_finish(out, dst, rc) : rc;
}

int sk_cpu_masked_select(SkTensor **result, const SkTensor *self, const SkTensor *mask) {
  return masked_select_into(result, self, mask, NULL);
}

int sk_cpu_masked_select_out(const SkTensor *self, const SkTensor *mask, SkTensor *out) {
  return masked_select_into(NULL, self, mask, out);
}
/* }==== */

/* {==== masked_fill_ ==== */
typedef struct { char v[8]; int64_t z; } FillCtx;

#define FILL_LOOP(T)                                                                              \
  {                                                                                               \
    T v;                                                                                          \
    memcpy(&v, c->v, sizeof v);                                                                   \
    if (st[0] == (int64_t)sizeof(T) && st[1] == 1)                                                \
      for (int64_t i = 0; i < n; i++) ((T *)p[0])[i] = p[1][i] ? v : ((T *)p[0])[i];              \
    else                                                                                          \
      for (int64_t i = 0; i < n; i++)                                                             \
        if (p[1][i * st[1]]) *(T *)(p[0] + i * st[0]) = v;                                        \
    return;                                                                                       \
  }

static void fill_row(char *const *p, const int64_t *st, int64_t n, int64_t first, void *ctx) {
  const FillCtx *c = ctx;
  (void)first;
  switch (c->z) {
  case 1: FILL_LOOP(uint8_t)
  case 2: FILL_LOOP(uint16_t)
  case 4: FILL_LOOP(uint32_t)
  default: FILL_LOOP(uint64_t)
  }
}

int sk_cpu_masked_fill__Scalar(SkTensor *self, const SkTensor *mask, SkScalar value) {
  if (sk_meta_kernel_masked_fill__Scalar(self, mask, value)) return -1;
  for (int d = 0; d < self->ndim; d++)
    if (self->strides[d] == 0 && self->sizes[d] > 1)
      return sk_error("unsupported operation: more than one element of the written-to tensor 'self' refers to a single "
                      "memory location; clone() it first");
  FillCtx c;
  c.z = (int64_t)sk_tensor_itemsize(self);
  if (sk_scalar_store(c.v, self->dtype, value)) return -1;
  int64_t st[2][SK_MAX_DIMS];
  byte_strides(self, st[0]);
  expanded_strides(mask, self->ndim, self->sizes, st[1]);
  if (self->ndim == 0) st[1][0] = 0;
  char *data[2] = {sk_tensor_data(self), sk_tensor_data(mask)};
  MWalk w;
  mw_init(&w, self->ndim, self->sizes, 2, data, st);
  mw_run(&w, fill_row, &c, 1);
  return 0;
}
/* }==== */

/* {==== Advanced indexing: index and index_put_ ==== */
/* self[indices] as a walk over the result shape: operand 0 the result (or the values for
** index_put_), 1 self restrided over the result (0 on the broadcast dims), then one int64
** index tensor per indexed dim, broadcast over the result. */
typedef struct Plan {
  int nidx, dims[SK_MAX_DIMS];
  SkTensor *idx[SK_MAX_DIMS];          /* owned */
  int64_t mul[SK_MAX_DIMS], bound[SK_MAX_DIMS]; /* byte stride and size of self along dims[j] */
  int bnd, rnd, bstart;
  int64_t bshape[SK_MAX_DIMS], rshape[SK_MAX_DIMS];
  int64_t st[MW_OPS][SK_MAX_DIMS];     /* byte strides over the result, operands 1.. */
} Plan;

static void plan_free(Plan *p) {
  for (int j = 0; j < p->nidx; j++) sk_tensor_release(p->idx[j]);
  p->nidx = 0;
}

/* The coordinates of the true elements of a bool/uint8 mask: ndim column views of a [count, ndim] tensor. */
static int mask_columns(const SkTensor *mask, SkTensor **cols) {
  SkTensor *nz = NULL;
  if (nonzero_into(&nz, mask, NULL)) return -1;
  for (int k = 0; k < mask->ndim; k++) {
    int64_t size = nz->sizes[0], stride = mask->ndim;
    cols[k] = sk_tensor_alias(nz, 1, &size, &stride, nz->offset + k);
    if (!cols[k]) {
      for (int j = 0; j < k; j++) sk_tensor_release(cols[j]);
      sk_tensor_release(nz);
      return -1;
    }
  }
  sk_tensor_release(nz);
  return 0;
}

static int plan_build(Plan *p, const SkTensor *self, SkTensorList indices) {
  char a[128], b[128];
  int d = 0;
  p->nidx = 0;
  for (int i = 0; i < indices.n; i++) {
    const SkTensor *t = indices.data[i];
    if (!t) { d++; continue; }
    if (t->dtype == SK_DTYPE_BOOL || t->dtype == SK_DTYPE_UINT8) {
      if (t->ndim == 0 || d + t->ndim > self->ndim) goto shape_error;
      for (int k = 0; k < t->ndim; k++)
        if (t->sizes[k] != self->sizes[d + k]) goto shape_error;
      if (mask_columns(t, p->idx + p->nidx)) goto fail;
      for (int k = 0; k < t->ndim; k++) p->dims[p->nidx++] = d++;
      continue;
    }
    if (d >= self->ndim || (t->dtype != SK_DTYPE_INT64 && t->dtype != SK_DTYPE_INT32)) goto shape_error;
    if (!(p->idx[p->nidx] = as_int64(t))) goto fail;
    p->dims[p->nidx++] = d++;
  }
  for (int j = 0; j < p->nidx; j++) {
    int dj = p->dims[j];
    p->bound[j] = self->sizes[dj];
    p->mul[j] = self->strides[dj] * (int64_t)sk_tensor_itemsize(self);
    if (check_bounds(p->idx[j], p->bound[j], 1, dj)) goto fail;
  }
  /* broadcast shape */
  p->bnd = 0;
  for (int j = 0; j < p->nidx; j++) if (p->idx[j]->ndim > p->bnd) p->bnd = p->idx[j]->ndim;
  for (int q = 0; q < p->bnd; q++) p->bshape[q] = 1;
  for (int j = 0; j < p->nidx; j++) {
    const SkTensor *t = p->idx[j];
    for (int q = 0; q < t->ndim; q++) {
      int64_t *s = &p->bshape[p->bnd - t->ndim + q];
      if (t->sizes[q] == *s || t->sizes[q] == 1) continue;
      if (*s != 1)
        return plan_free(p), sk_error("shape mismatch: indexing tensors could not be broadcast together with shapes %s, %s",
                                      sk_shape_str(p->bnd, p->bshape, a, sizeof a), sk_shape_str(t->ndim, t->sizes, b, sizeof b));
      *s = t->sizes[q];
    }
  }
  /* result layout */
  int adjacent = 1;
  for (int j = 1; j < p->nidx; j++) adjacent &= p->dims[j] == p->dims[j - 1] + 1;
  p->bstart = p->nidx && adjacent ? p->dims[0] : 0;
  int64_t sst[SK_MAX_DIMS];
  byte_strides(self, sst);
  int r = 0, j = 0;
  for (int k = 0; k < self->ndim; k++) {
    if (p->nidx && k == p->dims[0]) { /* the broadcast block goes here (adjacent) or first */
      if (!adjacent) {
        memmove(p->rshape + p->bnd, p->rshape, (size_t)r * sizeof p->rshape[0]);
        memmove(p->st[1] + p->bnd, p->st[1], (size_t)r * sizeof p->st[1][0]);
      }
      int at = adjacent ? r : 0;
      for (int q = 0; q < p->bnd; q++) p->rshape[at + q] = p->bshape[q], p->st[1][at + q] = 0;
      r += p->bnd;
    }
    if (j < p->nidx && p->dims[j] == k) { j++; continue; }
    p->rshape[r] = self->sizes[k];
    p->st[1][r++] = sst[k];
  }
  p->rnd = r;
  for (j = 0; j < p->nidx; j++) {
    const SkTensor *t = p->idx[j];
    int64_t *s = p->st[2 + j];
    memset(s, 0, sizeof p->st[0]);
    for (int q = 0; q < t->ndim; q++)
      if (t->sizes[q] != 1) s[p->bstart + p->bnd - t->ndim + q] = t->strides[q] * 8;
  }
  return 0;
shape_error:
  plan_free(p);
  return sk_error("index: argument 'indices' does not fit a tensor of shape %s (checked by the meta function)",
                  sk_shape_str(self->ndim, self->sizes, a, sizeof a));
fail:
  plan_free(p);
  return -1;
}

typedef struct { int nidx; int64_t mul[SK_MAX_DIMS], bound[SK_MAX_DIMS], z; PutOp op; SkDType dt; int put; } IndexCtx;

static inline int64_t index_offset(const IndexCtx *c, char *const *p, const int64_t *st, int64_t i) {
  int64_t off = 0;
  for (int j = 0; j < c->nidx; j++) {
    int64_t v = *(const int64_t *)(p[2 + j] + i * st[2 + j]);
    off += (v < 0 ? v + c->bound[j] : v) * c->mul[j];
  }
  return off;
}

static void index_row(char *const *p, const int64_t *st, int64_t n, int64_t first, void *ctx) {
  const IndexCtx *c = ctx;
  (void)first;
  for (int64_t i = 0; i < n; i++) {
    char *x = p[1] + i * st[1] + index_offset(c, p, st, i), *y = p[0] + i * st[0];
    if (c->put) put_elem(x, y, c->z, c->op, c->dt);
    else memcpy(y, x, (size_t)c->z);
  }
}

static void index_walk(Plan *p, char *first, int64_t *first_st, const SkTensor *self, IndexCtx *c, int parallel) {
  char *data[MW_OPS];
  memcpy(p->st[0], first_st, (size_t)p->rnd * sizeof first_st[0]);
  data[0] = first;
  data[1] = sk_tensor_data(self);
  for (int j = 0; j < p->nidx; j++) data[2 + j] = sk_tensor_data(p->idx[j]);
  c->nidx = p->nidx;
  c->z = (int64_t)sk_tensor_itemsize(self);
  memcpy(c->mul, p->mul, sizeof c->mul);
  memcpy(c->bound, p->bound, sizeof c->bound);
  MWalk w;
  mw_init(&w, p->rnd, p->rshape, 2 + p->nidx, data, p->st);
  mw_run(&w, index_row, c, parallel);
}

int sk_cpu_index_out(const SkMeta *m, const SkTensor *self, SkTensorList indices, SkTensor *out) {
  (void)m;
  Plan p;
  if (plan_build(&p, self, indices)) return -1;
  if (out->numel > 0) {
    int64_t ost[SK_MAX_DIMS];
    byte_strides(out, ost);
    IndexCtx c = {0};
    index_walk(&p, sk_tensor_data(out), ost, self, &c, 1);
  }
  plan_free(&p);
  return 0;
}

int sk_cpu_index_put_(SkTensor *self, SkTensorList indices, const SkTensor *values, int accumulate) {
  char a[128], b[128];
  if (sk_meta_kernel_index_put_(self, indices, values, accumulate)) return -1;
  for (int i = 0; i < indices.n; i++)
    if (indices.data[i] && sk_tensor_may_overlap(self, indices.data[i]))
      return sk_error("unsupported operation: some elements of the input tensor 'indices' and the written-to tensor "
                      "'self' refer to a single memory location; clone() the input first");
  if (sk_tensor_may_overlap(self, values))
    return sk_error("unsupported operation: some elements of the input tensor 'values' and the written-to tensor 'self' "
                    "refer to a single memory location; clone() the input first");
  Plan p;
  if (plan_build(&p, self, indices)) return -1;
  int64_t vst[SK_MAX_DIMS];
  for (int i = 1; i <= values->ndim; i++) /* values broadcast to the result shape */
    if (i > p.rnd || (values->sizes[values->ndim - i] != 1 && values->sizes[values->ndim - i] != p.rshape[p.rnd - i])) {
      plan_free(&p);
      return sk_error("shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                      sk_shape_str(values->ndim, values->sizes, a, sizeof a), sk_shape_str(p.rnd, p.rshape, b, sizeof b));
    }
  expanded_strides(values, p.rnd, p.rshape, vst);
  if (sk_numel(p.rnd, p.rshape) > 0) {
    IndexCtx c = {0};
    c.put = 1;
    c.op = accumulate ? PUT_ADD : PUT_SET;
    c.dt = self->dtype;
    /* accumulation is serial: two result positions may name one element of self */
    index_walk(&p, sk_tensor_data(values), vst, self, &c, !accumulate);
  }
  plan_free(&p);
  return 0;
}
/* }==== */

/* {==== searchsorted: a binary search per value ==== */
/* PyTorch's cus_lower_bound / cus_upper_bound: the first position whose boundary is not
** below (left) / not at or below (right) the value, with its comparisons, so a NaN value
** lands at the end and NaN boundaries count as below everything. Boundaries and values
** are contiguous copies in their promoted dtype; integers compare as int64, others as
** double. */
typedef struct {
  const char *bd, *val;
  const int64_t *sorter;
  char *out;
  SkDType dt, odt;
  size_t z;
  int64_t m, k, rows1d; /* boundary row length, values per row, 1: one boundary row for all */
  int right, isint;
} SearchCtx;

static int64_t search_one(const SearchCtx *c, const char *row, const int64_t *srow, int64_t i) {
  int64_t lo = 0, hi = c->m;
  const char *vp = c->val + i * (int64_t)c->z;
  if (c->isint) {
    int64_t v = sk_load_int64(vp, c->dt);
    while (lo < hi) {
      int64_t mid = lo + ((hi - lo) >> 1), at = srow ? srow[mid] : mid;
      int64_t b = sk_load_int64(row + at * (int64_t)c->z, c->dt);
      if (c->right ? !(b > v) : !(b >= v)) lo = mid + 1;
      else hi = mid;
    }
  } else {
    double v = sk_load_double(vp, c->dt);
    while (lo < hi) {
      int64_t mid = lo + ((hi - lo) >> 1), at = srow ? srow[mid] : mid;
      double b = sk_load_double(row + at * (int64_t)c->z, c->dt);
      if (c->right ? !(b > v) : !(b >= v)) lo = mid + 1;
      else hi = mid;
    }
  }
  return lo;
}

static void search_range(void *ctx, int64_t begin, int64_t end) {
  const SearchCtx *c = ctx;
  for (int64_t i = begin; i < end; i++) {
    int64_t r = c->rows1d ? 0 : i / c->k;
    int64_t pos = search_one(c, c->bd + r * c->m * (int64_t)c->z, c->sorter ? c->sorter + r * c->m : NULL, i);
    if (c->odt == SK_DTYPE_INT32) ((int32_t *)c->out)[i] = (int32_t)pos;
    else ((int64_t *)c->out)[i] = pos;
  }
}

/* t as a contiguous CPU tensor of dtype dt: itself (retained) or a copy */
static SkTensor *contiguous_as(const SkTensor *t, SkDType dt) {
  if (t->dtype == dt && sk_tensor_is_contiguous(t)) return sk_tensor_retain((SkTensor *)t);
  SkTensor *c = sk_tensor_empty(t->ndim, t->sizes, dt, SK_CPU);
  if (c && sk_copy_cpu(c, t)) { sk_tensor_release(c); return NULL; }
  return c;
}

int sk_cpu_searchsorted_out(const SkMeta *m, const SkTensor *sorted_sequence, const SkTensor *self, int out_int32, int right,
                            const char *side, const SkTensor *sorter, SkTensor *out) {
  (void)m, (void)out_int32;
  if (side) right = strcmp(side, "right") == 0;
  const SkTensor *pair[2] = {sorted_sequence, self};
  SkDType dt = sk_result_type(2, pair);
  SkTensor *bd = contiguous_as(sorted_sequence, dt), *val = contiguous_as(self, dt);
  SkTensor *so = sorter ? contiguous_as(sorter, SK_DTYPE_INT64) : NULL;
  SkTensor *o = sk_tensor_is_contiguous(out) ? sk_tensor_retain(out) : sk_tensor_empty(out->ndim, out->sizes, out->dtype, SK_CPU);
  int rc = bd && val && o && (!sorter || so) ? 0 : -1;
  int64_t mlen = sorted_sequence->sizes[sorted_sequence->ndim - 1];
  if (!rc && so) { /* every sorter entry must name a boundary of its row */
    const int64_t *s = sk_tensor_data(so);
    for (int64_t i = 0; i < so->numel && !rc; i++)
      if (s[i] < 0 || s[i] >= mlen) rc = sk_error("torch.searchsorted(): sorter index out of range");
  }
  if (!rc && self->numel > 0) {
    SearchCtx c = {sk_tensor_data(bd), sk_tensor_data(val), so ? sk_tensor_data(so) : NULL, sk_tensor_data(o), dt, out->dtype,
                   sk_dtype_size(dt), mlen, self->ndim ? self->sizes[self->ndim - 1] : 1, sorted_sequence->ndim == 1, right,
                   !sk_dtype_is_floating(dt)};
    if (mlen == 0) c.rows1d = 1; /* every position is 0: no row is read */
    int64_t grain = SK_GRAIN / (mlen > 1 ? 64 - __builtin_clzll((unsigned long long)mlen) : 1);
    sk_parallel_for(0, self->numel, grain > 0 ? grain : 1, search_range, &c);
    if (o != out) rc = sk_copy_cpu(out, o);
  }
  sk_tensor_release(bd), sk_tensor_release(val), sk_tensor_release(so), sk_tensor_release(o);
  return rc;
}
/* }==== */

/* {==== index_reduce: out = self, then out[index[i] along dim] (op)= source[i] ====
** Serial: repeated indices reduce into one element. Elements go through double (floating
** dtypes) or int64 (integer and bool ones); a mean divides by the count of contributions
** (self's included), floor division for integers, as PyTorch's. */
typedef enum { RED_PROD, RED_MEAN, RED_AMAX, RED_AMIN, RED_SUM } RedOp;

static double red_d(RedOp op, double a, double b) {
  switch (op) {
  case RED_PROD: return a * b;
  case RED_MEAN: case RED_SUM: return a + b;
  case RED_AMAX: return (a != a || b != b) ? a + b : a > b ? a : b; /* NaN propagates */
  default: return (a != a || b != b) ? a + b : a < b ? a : b;
  }
}
static int64_t red_i(RedOp op, int64_t a, int64_t b) {
  switch (op) {
  case RED_PROD: return (int64_t)((uint64_t)a * (uint64_t)b); /* wraps, as C++'s int multiply does in practice */
  case RED_MEAN: case RED_SUM: return (int64_t)((uint64_t)a + (uint64_t)b);
  case RED_AMAX: return a > b ? a : b;
  default: return a < b ? a : b;
  }
}

/* the extremes of an integer (or bool) dtype, the identities of amax and amin */
static int64_t int_lowest(SkDType dt) {
  switch (dt) {
  case SK_DTYPE_INT8: return INT8_MIN;
  case SK_DTYPE_INT16: return INT16_MIN;
  case SK_DTYPE_INT32: return INT32_MIN;
  case SK_DTYPE_INT64: return INT64_MIN;
  default: return 0; /* uint8, bool */
  }
}
static int64_t int_highest(SkDType dt) {
  switch (dt) {
  case SK_DTYPE_INT8: return INT8_MAX;
  case SK_DTYPE_INT16: return INT16_MAX;
  case SK_DTYPE_INT32: return INT32_MAX;
  case SK_DTYPE_UINT8: return UINT8_MAX;
  case SK_DTYPE_BOOL: return 1;
  default: return INT64_MAX;
  }
}

int sk_cpu_index_reduce_out(const SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source,
                            const char *reduce, int include_self, SkTensor *out) {
  (void)m;
  RedOp op = !strcmp(reduce, "prod") ? RED_PROD : !strcmp(reduce, "mean") ? RED_MEAN : !strcmp(reduce, "amax") ? RED_AMAX : RED_AMIN;
  int d = (int)dim, nd = self->ndim;
  int64_t size = nd ? self->sizes[d] : 1, ost = nd ? out->strides[d] : 0, sst = source->ndim ? source->strides[d] : 0;
  SkTensor *idx = as_int64(index);
  if (!idx) return -1;
  if (check_bounds(idx, size, 0, dim)) { sk_tensor_release(idx); return sk_error("index out of range in self"); }
  if (out != self && !sk_tensor_same_view(out, self) && sk_copy_cpu(out, self)) { sk_tensor_release(idx); return -1; }
  int64_t n = idx->numel, *iv = malloc((size_t)(n ? n : 1) * sizeof *iv), *count = calloc((size_t)size, sizeof *count);
  if (!iv || !count) { free(iv), free(count), sk_tensor_release(idx); return sk_error("out of memory"); }
  const char *ip = sk_tensor_data(idx);
  for (int64_t i = 0; i < n; i++) iv[i] = *(const int64_t *)(ip + i * (idx->ndim ? idx->strides[0] : 0) * 8);
  sk_tensor_release(idx);
  SkDType dt = self->dtype;
  size_t z = sk_dtype_size(dt);
  int isint = !sk_dtype_is_floating(dt);
  char *ob = sk_tensor_data(out);
  const char *sb = sk_tensor_data(source);
  /* the slices of out along dim: every position of the other dims (a 0-dim tensor is one slice) */
  int64_t slice = 1, at[SK_MAX_DIMS] = {0};
  for (int k = 0; k < nd; k++) if (k != d) slice *= out->sizes[k];
  for (int64_t s = 0; s < slice; s++) {
    int64_t oo = 0, so = 0;
    for (int k = 0; k < nd; k++) if (k != d) oo += at[k] * out->strides[k], so += at[k] * source->strides[k];
    if (!include_self) { /* the reduced places start from the reduction's identity */
      for (int64_t i = 0; i < n; i++) {
        char *p = ob + (oo + iv[i] * ost) * (int64_t)z;
        if (isint) {
          int64_t id = op == RED_PROD ? 1 : op == RED_MEAN ? 0 : op == RED_AMAX ? int_lowest(dt) : int_highest(dt);
          sk_store_int64(p, dt, id);
        } else {
          sk_store_double(p, dt, op == RED_PROD ? 1.0 : op == RED_MEAN ? 0.0 : op == RED_AMAX ? -1.0 / 0.0 : 1.0 / 0.0);
        }
      }
    }
    for (int64_t i = 0; i < n; i++) {
      char *p = ob + (oo + iv[i] * ost) * (int64_t)z;
      const char *q = sb + (so + i * sst) * (int64_t)z;
      if (isint) sk_store_int64(p, dt, red_i(op, sk_load_int64(p, dt), sk_load_int64(q, dt)));
      else sk_store_double(p, dt, red_d(op, sk_load_double(p, dt), sk_load_double(q, dt)));
      if (s == 0) count[iv[i]]++;
    }
    if (op == RED_MEAN)
      for (int64_t j = 0; j < size; j++) {
        int64_t c = count[j] + (include_self ? 1 : 0);
        if (count[j] == 0 || c == 1) continue;
        char *p = ob + (oo + j * ost) * (int64_t)z;
        if (isint) {
          int64_t v = sk_load_int64(p, dt), qv = v / c;
          if ((v % c != 0) && ((v < 0) != (c < 0))) qv--; /* floor */
          sk_store_int64(p, dt, qv);
        } else {
          sk_store_double(p, dt, sk_load_double(p, dt) / (double)c);
        }
      }
    for (int k = nd - 1; k >= 0; k--) {
      if (k == d) continue;
      if (++at[k] < out->sizes[k]) break;
      at[k] = 0;
    }
  }
  free(iv), free(count);
  return 0;
}
/* }==== */

/* {==== scatter_reduce: out = self, then out[p with dim replaced by index[p]] (op)= src[p] ====
** Serial, over index's positions in C order, with index_reduce's element rules (NaN
** propagates through amax/amin; a mean divides by the count of contributions, self's
** included, with floor division for integers); bool sums as logical or. */
static RedOp red_of(const char *reduce) {
  return !strcmp(reduce, "sum") ? RED_SUM : !strcmp(reduce, "prod") ? RED_PROD : !strcmp(reduce, "mean") ? RED_MEAN
         : !strcmp(reduce, "amax") ? RED_AMAX : RED_AMIN;
}

static void red_store(char *p, const char *q, SkDType dt, RedOp op) {
  if (dt == SK_DTYPE_BOOL && op == RED_SUM) *(uint8_t *)p = *(uint8_t *)p | *(const uint8_t *)q;
  else if (!sk_dtype_is_floating(dt)) sk_store_int64(p, dt, red_i(op, sk_load_int64(p, dt), sk_load_int64(q, dt)));
  else sk_store_double(p, dt, red_d(op, sk_load_double(p, dt), sk_load_double(q, dt)));
}

/* red_store for the common dtypes, without its per-element dtype switches */
typedef void (*RedFn)(char *p, const char *q, RedOp op);
static void red_f32(char *p, const char *q, RedOp op) { *(float *)p = (float)red_d(op, *(float *)p, *(const float *)q); }
static void red_f64(char *p, const char *q, RedOp op) { *(double *)p = red_d(op, *(double *)p, *(const double *)q); }
static void red_i64(char *p, const char *q, RedOp op) { *(int64_t *)p = red_i(op, *(int64_t *)p, *(const int64_t *)q); }

static void red_identity(char *p, SkDType dt, RedOp op) {
  if (!sk_dtype_is_floating(dt)) {
    int64_t id = op == RED_PROD ? 1 : op == RED_AMAX ? int_lowest(dt) : op == RED_AMIN ? int_highest(dt) : 0;
    sk_store_int64(p, dt, id);
  } else
    sk_store_double(p, dt, op == RED_PROD ? 1.0 : op == RED_AMAX ? -1.0 / 0.0 : op == RED_AMIN ? 1.0 / 0.0 : 0.0);
}

int sk_cpu_scatter_reduce_two_out(const SkMeta *m, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *src,
                                  const char *reduce, int include_self, SkTensor *out) {
  RedOp op = red_of(reduce);
  int d = (int)dim, nd = index->ndim;
  if (index->numel && check_bounds(index, geom_size(self, d), 0, dim)) return -1;
  if (m->variant != SK_VARIANT_INPLACE && out != self && sk_copy_cpu(out, self)) return -1;
  int64_t n = index->numel;
  if (n == 0) return 0;
  /* per out element along the scattered positions: the count of contributions (mean) */
  int64_t *count = NULL;
  if (op == RED_MEAN && !(count = calloc((size_t)out->numel, sizeof *count))) return sk_error("out of memory");
  SkDType dt = out->dtype;
  size_t z = sk_dtype_size(dt);
  char *ob = sk_tensor_data(out);
  const char *sb = sk_tensor_data(src), *ib = sk_tensor_data(index);
  int64_t at[SK_MAX_DIMS] = {0};
  RedFn fn = dt == SK_DTYPE_FLOAT32 ? red_f32 : dt == SK_DTYPE_FLOAT64 ? red_f64 : dt == SK_DTYPE_INT64 ? red_i64 : NULL;
  /* two passes over index: identities where self is left out, then the reduction; index's
  ** last dim is the inner run (its strides once), the dims before it counted in at[] */
  const int last = nd - 1;
  const int64_t inner = nd ? index->sizes[last] : 1, ds = nd ? out->strides[d] : 0;
  const int64_t is = nd ? index->strides[last] : 0, ss = nd ? src->strides[last] : 0;
  const int64_t os = nd && last != d ? out->strides[last] : 0;
  int64_t mult[SK_MAX_DIMS]; /* out's logical strides, for the count's linear position */
  for (int k = out->ndim - 1; k >= 0; k--) mult[k] = k == out->ndim - 1 ? 1 : mult[k + 1] * out->sizes[k + 1];
  for (int pass = include_self ? 1 : 0; pass < 2; pass++) {
    memset(at, 0, sizeof at);
    for (int64_t e = 0; e < n; e += inner) {
      int64_t io = 0, so = 0, oo = 0, lin = 0;
      for (int k = 0; k < last; k++) {
        io += at[k] * index->strides[k], so += at[k] * src->strides[k];
        if (k != d) oo += at[k] * out->strides[k], lin += at[k] * mult[k];
      }
      for (int64_t j = 0; j < inner; j++) {
        const int64_t v = *(const int64_t *)(ib + (io + j * is) * 8);
        char *p = ob + (oo + j * os + v * ds) * (int64_t)z;
        const char *q = sb + (so + j * ss) * (int64_t)z;
        if (pass == 0) red_identity(p, dt, op);
        else if (fn) fn(p, q, op);
        else red_store(p, q, dt, op);
        if (pass == 1 && count) count[lin + (last == d ? v : j) + (nd && d < last ? v * mult[d] : 0)]++;
      }
      for (int k = last - 1; k >= 0; k--) {
        if (++at[k] < index->sizes[k]) break;
        at[k] = 0;
      }
    }
  }
  if (count) {
    memset(at, 0, sizeof at);
    int ond = out->ndim;
    for (int64_t lin = 0; lin < out->numel; lin++) {
      int64_t c = count[lin] + (include_self ? 1 : 0);
      if (count[lin] && c > 1) {
        int64_t oo = 0;
        for (int k = 0; k < ond; k++) oo += at[k] * out->strides[k];
        char *p = ob + oo * (int64_t)z;
        if (!sk_dtype_is_floating(dt)) {
          int64_t x = sk_load_int64(p, dt), q = x / c;
          if ((x % c != 0) && (x < 0)) q--; /* floor */
          sk_store_int64(p, dt, q);
        } else
          sk_store_double(p, dt, sk_load_double(p, dt) / (double)c);
      }
      for (int k = ond - 1; k >= 0; k--) {
        if (++at[k] < out->sizes[k]) break;
        at[k] = 0;
      }
    }
    free(count);
  }
  return 0;
}
/* }==== */
