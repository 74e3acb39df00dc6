/*
** sk_cpu_scan.c — scans: cumsum, cumprod
** The input is read in the output's dtype (PyTorch's self.to(result dtype)),
** contiguous, as [outer, n, inner] with the scan over n. Running values are
** kept in double (floating) or wrapping uint64 (integers) and stored after
** each step. A scan over the last dim walks each row; over another dim, a
** block of up to BLOCK columns advances row by row, so memory is read in
** order. Slabs and column blocks run in parallel.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

#define BLOCK 1024 /* running values of one column block */

/* {==== Typed loops ==== */
/* x, y at (o, 0, j0); k columns, rows inner elements apart (inner == 1: one row). */
typedef void (*ScanFn)(const void *x, void *y, int64_t n, int64_t inner, int64_t k);

#define SCAN_FN(name, T, A, LD, ST, INIT, OP)                                                 \
  static void name(const void *xv, void *yv, int64_t n, int64_t inner, int64_t k) {         \
    const T *x = xv;                                                                        \
    T *y = yv;                                                                              \
    if (inner == 1) {                                                                       \
      A a = (INIT);                                                                         \
      for (int64_t i = 0; i < n; i++) { a = OP(a, (A)LD(x[i])); y[i] = ST(a); }             \
      return;                                                                               \
    }                                                                                       \
    A a[BLOCK];                                                                             \
    for (int64_t j = 0; j < k; j++) a[j] = (INIT);                                          \
    for (int64_t i = 0; i < n; i++, x += inner, y += inner)                                 \
      for (int64_t j = 0; j < k; j++) { a[j] = OP(a[j], (A)LD(x[j])); y[j] = ST(a[j]); }    \
  }

#define ADD(a, x) ((a) + (x))
#define MUL(a, x) ((a) * (x))
#define FLOAT_SCANS(sfx, T, CT, LD, ST)                              \
  SCAN_FN(cumsum_##sfx, T, double, LD, ST, 0, ADD)                  \
  SCAN_FN(cumprod_##sfx, T, double, LD, ST, 1, MUL)
#define INT_SCANS(sfx, T, UT)                                        \
  SCAN_FN(cumsum_##sfx, T, uint64_t, SK_ID, (T), 0, ADD)            \
  SCAN_FN(cumprod_##sfx, T, uint64_t, SK_ID, (T), 1, MUL)
SK_FLOAT_TYPES(FLOAT_SCANS)
SK_INT_TYPES(INT_SCANS)
#define TO_BOOL(a) (uint8_t)((a) != 0)
SCAN_FN(cumsum_b, uint8_t, uint64_t, SK_ID, TO_BOOL, 0, ADD)
SCAN_FN(cumprod_b, uint8_t, uint64_t, SK_ID, TO_BOOL, 1, MUL)

static const ScanFn cumsum_fns[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(cumsum), SK_INT_TABLE(cumsum), [SK_DTYPE_BOOL] = cumsum_b};
static const ScanFn cumprod_fns[SK_DTYPE_COUNT] = {SK_FLOAT_TABLE(cumprod), SK_INT_TABLE(cumprod), [SK_DTYPE_BOOL] = cumprod_b};
/* }==== */

/* {==== Driver ==== */
typedef struct ScanCtx {
  ScanFn fn;
  const char *x;
  char *y;
  int64_t n, inner, nblk;
  size_t isz;
} ScanCtx;

/* Unit u: slab u / nblk, column block u % nblk. */
static void scan_units(void *ctx, int64_t b, int64_t e) {
  const ScanCtx *c = ctx;
  for (int64_t u = b; u < e; u++) {
    int64_t o = u / c->nblk, j0 = u % c->nblk * BLOCK;
    int64_t k = c->inner - j0 < BLOCK ? c->inner - j0 : BLOCK;
    int64_t off = (o * c->n * c->inner + j0) * (int64_t)c->isz;
    c->fn(c->x + off, c->y + off, c->n, c->inner, k);
  }
}

/* out (shape of self, its own dtype) <- the scan of self over dim. */
static int scan(const SkTensor *self, int64_t dim, SkTensor *out, const ScanFn *fns) {
  if (out->numel == 0) return 0;
  if (self->ndim == 0) return sk_copy_cpu(out, self);
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  SkTensor *conv = NULL, *tmp = NULL;
  const SkTensor *in = self;
  if (self->dtype != out->dtype || !sk_tensor_is_contiguous(self)) {
    if (!(conv = sk_tensor_empty(self->ndim, self->sizes, out->dtype, self->device))) return -1;
    if (sk_copy_cpu(conv, self)) { sk_tensor_release(conv); return -1; }
    in = conv;
  }
  /* Writing in place over the very elements read is safe: each is read before it is written. */
  int same = out->storage == in->storage && out->offset == in->offset;
  int rc = 0;
  if (!sk_tensor_is_contiguous(out) || (!same && sk_tensor_may_overlap(out, in)))
    if (!(tmp = sk_tensor_empty(out->ndim, out->sizes, out->dtype, out->device))) rc = -1;
  if (!rc) {
    ScanCtx c;
    c.fn = fns[out->dtype];
    c.x = sk_tensor_data(in);
    c.y = sk_tensor_data(tmp ? tmp : out);
    c.n = self->sizes[d];
    c.inner = sk_numel(self->ndim - (int)d - 1, self->sizes + d + 1);
    c.nblk = (c.inner + BLOCK - 1) / BLOCK;
    c.isz = sk_dtype_size(out->dtype);
    int64_t units = sk_numel((int)d, self->sizes) * c.nblk;
    int64_t per_unit = c.n * (c.inner < BLOCK ? c.inner : BLOCK);
    int64_t grain = per_unit > 0 ? SK_GRAIN / per_unit : SK_GRAIN;
    sk_parallel_for(0, units, grain < 1 ? 1 : grain, scan_units, &c);
    if (tmp) rc = sk_copy_cpu(out, tmp);
  }
  sk_tensor_release(tmp);
  sk_tensor_release(conv);
  return rc;
}
/* }==== */

int sk_cpu_cumsum_out(const SkMeta *m, const SkTensor *self, int64_t dim, int dtype, SkTensor *out) {
  (void)m; (void)dtype;
  return scan(self, dim, out, cumsum_fns);
}

int sk_cpu_cumprod_out(const SkMeta *m, const SkTensor *self, int64_t dim, int dtype, SkTensor *out) {
  (void)m; (void)dtype;
  return scan(self, dim, out, cumprod_fns);
}
