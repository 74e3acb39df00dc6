/*
** sk_cpu_select.c — scans and selections along one dim: logcumsumexp, cummax, cummin,
** median, nanmedian, kthvalue, mode
** self is read contiguous as [outer, n, inner] with dim in the middle (a 0-dim self is
** [1, 1, 1]); outputs are written contiguous ([outer, n, inner] for the scans,
** [outer, inner] for the selections) and copied back when the caller's are not.
** Comparisons use an order key: floats map to a uint64 that sorts as the values with
** every NaN above +inf (and -0.0 equal to +0.0), integers flip their sign bit. Values
** are copied from self by their index, so they keep their exact bits.
** Selections sort each slice as (key, index) pairs: equal values stay in index order,
** which gives PyTorch's indices (median: the middle one of the stable order; mode: the
** last index of the most frequent value, the smallest such value on a tie).
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* {==== Geometry ==== */
typedef struct Slices {
  SkDType dt;
  int fl;               /* floating: NaN keys are NaNs */
  int64_t outer, n, inner;
  size_t z;             /* bytes per element of self */
  const char *x;        /* self, contiguous */
  char *v;              /* values, contiguous, self's dtype */
  int64_t *ix;          /* indices, contiguous */
  int64_t param;        /* kthvalue's k */
  int scan, failed;
} Slices;

/* Readies contiguous operands: keep[] holds the copies to release, tv and ti the targets. */
static int slices_init(Slices *s, const SkTensor *self, int64_t dim, SkTensor *values, SkTensor *indices, int scan,
                       SkTensor *keep[3], SkTensor **tv, SkTensor **ti) {
  int rc = 0;
  const SkTensor *in = sk_cpu_operand(self, self->dtype, &keep[0], &rc);
  *tv = sk_cpu_target(values, values->dtype, &keep[1], &rc);
  *ti = indices ? sk_cpu_target(indices, SK_DTYPE_INT64, &keep[2], &rc) : NULL;
  if (rc) return -1;
  s->dt = self->dtype;
  s->fl = sk_dtype_is_floating(self->dtype);
  s->n = self->ndim ? self->sizes[dim] : 1;
  s->outer = self->ndim ? sk_numel((int)dim, self->sizes) : 1;
  s->inner = self->ndim ? sk_numel(self->ndim - (int)dim - 1, self->sizes + dim + 1) : 1;
  s->z = sk_dtype_size(self->dtype);
  s->x = sk_tensor_data(in);
  s->v = sk_tensor_data(*tv);
  s->ix = *ti ? sk_tensor_data(*ti) : NULL;
  s->scan = scan;
  s->failed = 0;
  return 0;
}

/* Copies the contiguous targets back into the caller's outputs, then releases the copies. */
static int slices_finish(int rc, SkTensor *values, SkTensor *indices, SkTensor *keep[3]) {
  if (!rc && keep[1]) rc = sk_copy_cpu(values, keep[1]);
  if (!rc && keep[2]) rc = sk_copy_cpu(indices, keep[2]);
  for (int i = 0; i < 3; i++) sk_tensor_release(keep[i]);
  return rc;
}

typedef void (*SliceFn)(Slices *s, const char *x, char *v, int64_t *ix, void *scratch);

typedef struct Run { Slices *s; SliceFn fn; size_t scratch; } Run;

/* Unit u: slab u / inner, column u % inner. */
static void run_units(void *ctx, int64_t b, int64_t e) {
  Run *r = ctx;
  Slices *s = r->s;
  void *scratch = r->scratch ? malloc(r->scratch) : NULL;
  if (r->scratch && !scratch) { __atomic_store_n(&s->failed, 1, __ATOMIC_RELAXED); return; }
  for (int64_t u = b; u < e; u++) {
    int64_t o = u / s->inner, j = u % s->inner;
    int64_t in_off = o * s->n * s->inner + j, out_off = s->scan ? in_off : o * s->inner + j;
    r->fn(s, s->x + in_off * (int64_t)s->z, s->v + out_off * (int64_t)s->z, s->ix ? s->ix + out_off : NULL, scratch);
  }
  free(scratch);
}

static int run_slices(Slices *s, SliceFn fn, size_t scratch_per_elem) {
  int64_t units = s->outer * s->inner;
  if (units == 0 || s->n == 0) return 0;
  size_t bytes;
  if (sk_nbytes(s->n, scratch_per_elem ? scratch_per_elem : 1, &bytes)) return -1;
  Run r = {s, fn, scratch_per_elem ? bytes : 0};
  int64_t grain = SK_GRAIN / s->n + 1;
  sk_parallel_for(0, units, grain, run_units, &r);
  return s->failed ? sk_error("out of memory") : 0;
}
/* }==== */

/* {==== Scans ==== */
/* PyTorch's rule: a NaN always takes over (so the last NaN's index wins); otherwise x
** takes over on x >= best (cummax) / x <= best (cummin), so ties give the last index. */
static void cum_slice(Slices *s, const char *x, char *v, int64_t *ix, int is_max) {
  int64_t st = s->inner * (int64_t)s->z, best = 0;
  uint64_t bk = sk_cpu_order_key(x, s->dt);
  for (int64_t i = 0; i < s->n; i++) {
    uint64_t k = sk_cpu_order_key(x + i * st, s->dt);
    int xnan = s->fl && k == SK_NAN_KEY, bnan = s->fl && bk == SK_NAN_KEY;
    if (i == 0 || xnan || (!bnan && (is_max ? k >= bk : k <= bk))) best = i, bk = k;
    memcpy(v + i * st, x + best * st, s->z);
    ix[i * s->inner] = best;
  }
}
static void cummax_slice(Slices *s, const char *x, char *v, int64_t *ix, void *scratch) { (void)scratch; cum_slice(s, x, v, ix, 1); }
static void cummin_slice(Slices *s, const char *x, char *v, int64_t *ix, void *scratch) { (void)scratch; cum_slice(s, x, v, ix, 0); }

/* log(exp(a) + exp(b)) as PyTorch's _log_add_exp_helper: equal infinities stay as they are. */
static inline double log_add_exp(double a, double b) {
  double lo = a < b ? a : b, hi = a < b ? b : a;
  if (isnan(a) || isnan(b)) return NAN;
  if (lo != hi || isfinite(lo)) return hi + log1p(exp(lo - hi));
  return a;
}

static void logcumsumexp_slice(Slices *s, const char *x, char *v, int64_t *ix, void *scratch) {
  (void)ix, (void)scratch;
  int64_t st = s->inner * (int64_t)s->z;
  double a = -INFINITY;
  for (int64_t i = 0; i < s->n; i++) {
    a = log_add_exp(a, sk_elem_load_floating(x + i * st, s->dt));
    sk_elem_store_floating(v + i * st, s->dt, a);
  }
}

static int scan_run(const SkTensor *self, int64_t dim, SkTensor *values, SkTensor *indices, SliceFn fn) {
  if (values->numel == 0) return 0;
  Slices s;
  SkTensor *keep[3] = {NULL, NULL, NULL}, *tv, *ti;
  int rc = slices_init(&s, self, dim, values, indices, 1, keep, &tv, &ti);
  if (!rc) rc = run_slices(&s, fn, 0);
  return slices_finish(rc, values, indices, keep);
}

int sk_cpu_logcumsumexp_out(const SkMeta *m, const SkTensor *self, int64_t dim, SkTensor *out) {
  (void)m;
  return scan_run(self, dim, out, NULL, logcumsumexp_slice);
}
int sk_cpu_cummax_out(const SkMeta *m, const SkTensor *self, int64_t dim, SkTensor *values, SkTensor *indices) {
  (void)m;
  return scan_run(self, dim, values, indices, cummax_slice);
}
int sk_cpu_cummin_out(const SkMeta *m, const SkTensor *self, int64_t dim, SkTensor *values, SkTensor *indices) {
  (void)m;
  return scan_run(self, dim, values, indices, cummin_slice);
}
/* }==== */

/* {==== Selections ==== */
typedef struct Elem { uint64_t k; int64_t i; } Elem;

static int elem_cmp(const void *a, const void *b) {
  const Elem *x = a, *y = b;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* The slice's (key, index) pairs in stable sorted order; returns the count of NaNs. */
static int64_t sorted_slice(Slices *s, const char *x, Elem *e) {
  int64_t st = s->inner * (int64_t)s->z, nnan = 0;
  for (int64_t i = 0; i < s->n; i++) {
    e[i].k = sk_cpu_order_key(x + i * st, s->dt);
    e[i].i = i;
    nnan += s->fl && e[i].k == SK_NAN_KEY;
  }
  qsort(e, (size_t)s->n, sizeof *e, elem_cmp);
  return nnan;
}

static void put(Slices *s, const char *x, char *v, int64_t *ix, int64_t i) {
  memcpy(v, x + i * s->inner * (int64_t)s->z, s->z);
  *ix = i;
}

/* median: with a NaN, the first NaN (in index order); else the lower middle. */
static void median_slice(Slices *s, const char *x, char *v, int64_t *ix, void *scratch) {
  Elem *e = scratch;
  int64_t nnan = sorted_slice(s, x, e);
  put(s, x, v, ix, e[nnan ? s->n - nnan : (s->n - 1) / 2].i);
}

/* nanmedian: the lower middle of the non-NaN values; all NaN gives the first NaN. */
static void nanmedian_slice(Slices *s, const char *x, char *v, int64_t *ix, void *scratch) {
  Elem *e = scratch;
  int64_t nnan = sorted_slice(s, x, e), m = s->n - nnan;
  put(s, x, v, ix, e[m > 0 ? (m - 1) / 2 : 0].i);
}

static void kthvalue_slice(Slices *s, const char *x, char *v, int64_t *ix, void *scratch) {
  Elem *e = scratch;
  sorted_slice(s, x, e);
  put(s, x, v, ix, e[s->param - 1].i);
}

/* The longest run of equal keys (the first on a tie: the smallest value); each NaN is a run of its own. */
static void mode_slice(Slices *s, const char *x, char *v, int64_t *ix, void *scratch) {
  Elem *e = scratch;
  sorted_slice(s, x, e);
  int64_t best = 0, freq = 0, run = 0;
  for (int64_t i = 0; i < s->n; i++) {
    run++;
    int ends = i == s->n - 1 || e[i].k != e[i + 1].k || (s->fl && e[i].k == SK_NAN_KEY);
    if (ends) {
      if (run > freq) freq = run, best = i;
      run = 0;
    }
  }
  put(s, x, v, ix, e[best].i);
}

static int select_run(const SkTensor *self, int64_t dim, SkTensor *values, SkTensor *indices, SliceFn fn, int64_t param) {
  if (values->numel == 0) return 0;
  Slices s;
  SkTensor *keep[3] = {NULL, NULL, NULL}, *tv, *ti;
  int rc = slices_init(&s, self, dim, values, indices, 0, keep, &tv, &ti);
  s.param = param;
  if (!rc) rc = run_slices(&s, fn, sizeof(Elem));
  return slices_finish(rc, values, indices, keep);
}

int sk_cpu_median_out(const SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, SkTensor *values, SkTensor *indices) {
  (void)m, (void)keepdim;
  return select_run(self, dim, values, indices, median_slice, 0);
}
int sk_cpu_nanmedian_out(const SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, SkTensor *values,
                         SkTensor *indices) {
  (void)m, (void)keepdim;
  return select_run(self, dim, values, indices, nanmedian_slice, 0);
}
int sk_cpu_kthvalue_out(const SkMeta *m, const SkTensor *self, int64_t k, int64_t dim, int keepdim, SkTensor *values,
                        SkTensor *indices) {
  (void)m, (void)keepdim;
  return select_run(self, dim, values, indices, kthvalue_slice, k);
}
int sk_cpu_mode_out(const SkMeta *m, const SkTensor *self, int64_t dim, int keepdim, SkTensor *values, SkTensor *indices) {
  (void)m, (void)keepdim;
  return select_run(self, dim, values, indices, mode_slice, 0);
}
/* }==== */
