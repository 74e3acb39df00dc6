/*
** sk_cpu_reduce.c — reductions: sum, mean, amax, argmax
** The input splits into kept dims (one per output element) and reduced dims,
** each coalesced and walked in logical order, so that argmax's indices are
** flat logical indices and ties keep the first. A Reducer folds elements into
** accumulators: sum in double (floating) or wrapping uint64 (integers, bool),
** amax in double / int64 with NaN winning, argmax as (value, index).
** Strategies: rows (the reduced run is contiguous, or nothing better: one
** accumulator per output), columns (the kept run is contiguous: a block of up
** to COLS accumulators advanced row by row, so a reduction over the outer dim
** reads memory in order), and split (few outputs, long reductions: fixed
** chunks reduced in parallel and combined in order — the same result for any
** thread count). Results go to `out`, or to a contiguous temporary copied in.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

#include <math.h>
#include <stdlib.h>

#define COLS 2048                /* accumulators of one column block */
#define SPLIT_CHUNK 32768        /* elements of one chunk in split mode */
#define SPLIT_MAX_OUT 8          /* split only when there are at most this many outputs */

typedef struct { union { double f; int64_t i; } v; int64_t idx; } ArgAcc;

typedef struct Reducer {
  void (*init)(void *acc, int64_t k);
  void (*row)(void *acc, const char *p, int64_t n, int64_t st, int64_t first);    /* n elements into acc[0] */
  void (*cols)(void *acc, const char *p, int64_t k, int64_t st, int64_t index);   /* element j into acc[j] */
  void (*combine)(void *acc, const void *later);                                 /* acc[0] (+)= later[0] */
  void (*finish)(const void *acc, int64_t k, char *out, SkDType odt, double divisor);
  size_t acc_size;
} Reducer;

/* {==== Typed loops ==== */
#define FBETTER(x, m) ((x) > (m) || (x) != (x))
#define IBETTER(x, m) ((x) > (m))
#define FTAKE(x, m) ((m) == (m) && FBETTER(x, m))

#define SUM_LOOPS(sfx, T, LD, A)                                                                   \
  static void sum_row_##sfx(void *acc, const char *p, int64_t n, int64_t st, int64_t first) {      \
    A s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                              \
    (void)first;                                                                                   \
    if (st == (int64_t)sizeof(T)) {                                                                \
      const T *x = (const T *)p;                                                                   \
      int64_t i = 0;                                                                               \
      for (; i + 4 <= n; i += 4) {                                                                 \
        s0 += (A)LD(x[i]); s1 += (A)LD(x[i + 1]); s2 += (A)LD(x[i + 2]); s3 += (A)LD(x[i + 3]);    \
      }                                                                                            \
      for (; i < n; i++) s0 += (A)LD(x[i]);                                                        \
    } else                                                                                         \
      for (int64_t i = 0; i < n; i++, p += st) s0 += (A)LD(*(const T *)p);                         \
    *(A *)acc += (s0 + s1) + (s2 + s3);                                                            \
  }                                                                                                \
  static void sum_cols_##sfx(void *acc, const char *p, int64_t k, int64_t st, int64_t index) {     \
    A *a = acc;                                                                                    \
    (void)index;                                                                                   \
    if (st == (int64_t)sizeof(T)) {                                                                \
      const T *x = (const T *)p;                                                                   \
      for (int64_t j = 0; j < k; j++) a[j] += (A)LD(x[j]);                                         \
    } else                                                                                         \
      for (int64_t j = 0; j < k; j++, p += st) a[j] += (A)LD(*(const T *)p);                       \
  }

#define MAX_LOOPS(sfx, T, LD, A, BETTER)                                                           \
  static void max_row_##sfx(void *acc, const char *p, int64_t n, int64_t st, int64_t first) {      \
    A m = *(A *)acc;                                                                               \
    (void)first;                                                                                   \
    for (int64_t i = 0; i < n; i++, p += st) {                                                     \
      A x = (A)LD(*(const T *)p);                                                                  \
      m = BETTER(x, m) ? x : m;                                                                    \
    }                                                                                              \
    *(A *)acc = m;                                                                                 \
  }                                                                                                \
  static void max_cols_##sfx(void *acc, const char *p, int64_t k, int64_t st, int64_t index) {     \
    A *a = acc;                                                                                    \
    (void)index;                                                                                   \
    for (int64_t j = 0; j < k; j++, p += st) {                                                     \
      A x = (A)LD(*(const T *)p);                                                                  \
      a[j] = BETTER(x, a[j]) ? x : a[j];                                                           \
    }                                                                                              \
  }

#define ARG_LOOPS(sfx, T, LD, F, V, TAKE)                                                            \
  static void arg_row_##sfx(void *acc, const char *p, int64_t n, int64_t st, int64_t first) {      \
    ArgAcc *a = acc;                                                                               \
    for (int64_t i = 0; i < n; i++, p += st) {                                                     \
      V x = LD(*(const T *)p);                                                    \
      if (a->idx < 0 || TAKE(x, a->v.F)) { a->v.F = x; a->idx = first + i; }                      \
    }                                                                                              \
  }                                                                                                \
  static void arg_cols_##sfx(void *acc, const char *p, int64_t k, int64_t st, int64_t index) {     \
    ArgAcc *a = acc;                                                                               \
    for (int64_t j = 0; j < k; j++, p += st) {                                                     \
      V x = LD(*(const T *)p);                                                    \
      if (a[j].idx < 0 || TAKE(x, a[j].v.F)) { a[j].v.F = x; a[j].idx = index; }                   \
    }                                                                                              \
  }

#define RED_FLOAT(sfx, T, CT, LD, ST) \
  SUM_LOOPS(sfx, T, LD, double) MAX_LOOPS(sfx, T, LD, double, FBETTER) ARG_LOOPS(sfx, T, LD, f, double, FTAKE)
#define RED_INT(sfx, T, UT) \
  SUM_LOOPS(sfx, T, SK_ID, uint64_t) MAX_LOOPS(sfx, T, SK_ID, int64_t, IBETTER) ARG_LOOPS(sfx, T, SK_ID, i, int64_t, IBETTER)
SK_FLOAT_TYPES(RED_FLOAT)
SK_INT_TYPES(RED_INT)
RED_INT(b, uint8_t, uint32_t)
/* }==== */

/* {==== Accumulators ==== */
static void zero_init(void *acc, int64_t k) { memset(acc, 0, (size_t)k * 8); }
static void maxf_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((double *)acc)[j] = -INFINITY; }
static void maxi_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((int64_t *)acc)[j] = INT64_MIN; }
static void arg_init(void *acc, int64_t k) { for (int64_t j = 0; j < k; j++) ((ArgAcc *)acc)[j].idx = -1; }

static void sumf_combine(void *a, const void *b) { *(double *)a += *(const double *)b; }
static void sumi_combine(void *a, const void *b) { *(uint64_t *)a += *(const uint64_t *)b; }
static void maxf_combine(void *a, const void *b) {
  double x = *(const double *)b, *m = a;
  if (FBETTER(x, *m)) *m = x;
}
static void maxi_combine(void *a, const void *b) {
  int64_t x = *(const int64_t *)b, *m = a;
  if (x > *m) *m = x;
}
static void argf_combine(void *a, const void *b) {
  ArgAcc *x = a;
  const ArgAcc *y = b;
  if (y->idx >= 0 && (x->idx < 0 || FTAKE(y->v.f, x->v.f))) *x = *y;
}
static void argi_combine(void *a, const void *b) {
  ArgAcc *x = a;
  const ArgAcc *y = b;
  if (y->idx >= 0 && (x->idx < 0 || y->v.i > x->v.i)) *x = *y;
}

/* divisor > 0 (or NaN-producing 0) only for mean; sum and amax pass -1. */
static void f_finish(const void *acc, int64_t k, char *out, SkDType odt, double divisor) {
  size_t sz = sk_dtype_size(odt);
  for (int64_t j = 0; j < k; j++) {
    double v = ((const double *)acc)[j];
    sk_store_double(out + j * sz, odt, divisor >= 0 ? v / divisor : v);
  }
}
static void i_finish(const void *acc, int64_t k, char *out, SkDType odt, double divisor) {
  size_t sz = sk_dtype_size(odt);
  (void)divisor;
  for (int64_t j = 0; j < k; j++) sk_store_int64(out + j * sz, odt, ((const int64_t *)acc)[j]);
}
static void arg_finish(const void *acc, int64_t k, char *out, SkDType odt, double divisor) {
  (void)odt; (void)divisor;
  for (int64_t j = 0; j < k; j++) ((int64_t *)out)[j] = ((const ArgAcc *)acc)[j].idx;
}

#define R_SUMF(s) {zero_init, sum_row_##s, sum_cols_##s, sumf_combine, f_finish, 8}
#define R_SUMI(s) {zero_init, sum_row_##s, sum_cols_##s, sumi_combine, i_finish, 8}
#define R_MAXF(s) {maxf_init, max_row_##s, max_cols_##s, maxf_combine, f_finish, 8}
#define R_MAXI(s) {maxi_init, max_row_##s, max_cols_##s, maxi_combine, i_finish, 8}
#define R_ARGF(s) {arg_init, arg_row_##s, arg_cols_##s, argf_combine, arg_finish, sizeof(ArgAcc)}
#define R_ARGI(s) {arg_init, arg_row_##s, arg_cols_##s, argi_combine, arg_finish, sizeof(ArgAcc)}
#define ENTRIES(F, I) [SK_DTYPE_FLOAT32] = F(f32), [SK_DTYPE_FLOAT64] = F(f64), [SK_DTYPE_FLOAT16] = F(f16), \
  [SK_DTYPE_BFLOAT16] = F(bf16), [SK_DTYPE_BOOL] = I(b), [SK_DTYPE_UINT8] = I(u8), [SK_DTYPE_INT8] = I(i8),  \
  [SK_DTYPE_INT16] = I(i16), [SK_DTYPE_INT32] = I(i32), [SK_DTYPE_INT64] = I(i64)

enum { KIND_SUM, KIND_MEAN, KIND_AMAX, KIND_ARGMAX };
static const Reducer reducers[4][SK_DTYPE_COUNT] = {
  {ENTRIES(R_SUMF, R_SUMI)}, {ENTRIES(R_SUMF, R_SUMI)}, {ENTRIES(R_MAXF, R_MAXI)}, {ENTRIES(R_ARGF, R_ARGI)},
};

/* Room for one or for COLS accumulators of any reducer. */
typedef union { double f; int64_t i; uint64_t u; ArgAcc a; } Acc1;
typedef union { double f[COLS]; int64_t i[COLS]; uint64_t u[COLS]; ArgAcc a[COLS]; } AccBlock;
/* }==== */

/* {==== Driver ==== */
typedef struct RedCtx {
  const Reducer *r;
  SkWalk kw, rw;          /* kept and reduced dims of the input */
  char *in, *out;
  size_t osz;
  SkDType odt;
  double divisor;
  char *partials;         /* split mode: one accumulator per chunk */
  int64_t nchunks;
  const char *base;       /* split mode: the input of the current output */
} RedCtx;

/* Splits t's dims by mask into two coalesced walks (size-1 dims dropped). */
static void split_dims(const SkTensor *t, uint32_t mask, SkWalk *kw, SkWalk *rw) {
  int64_t sz = (int64_t)sk_dtype_size(t->dtype);
  kw->ndim = rw->ndim = 0;
  for (int d = 0; d < t->ndim; d++) {
    int64_t n = t->sizes[d];
    if (n != 1) sk_walk_push(mask & (1u << d) ? rw : kw, n, t->strides[d] * sz);
  }
  SkWalk *both[2] = {kw, rw};
  for (int i = 0; i < 2; i++) {
    SkWalk *w = both[i];
    if (!w->ndim) { w->sizes[0] = 1; w->strides[0] = sz; w->ndim = 1; }
    w->numel = sk_numel(w->ndim, w->sizes);
    w->data = sk_tensor_data(t);
  }
}

typedef struct { const Reducer *r; void *acc; int64_t k, kst; } Fold;

static void fold_rows(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const Fold *f = ctx;
  f->r->row(f->acc, p, n, st, first);
}

static void fold_cols(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const Fold *f = ctx;
  for (int64_t i = 0; i < n; i++) f->r->cols(f->acc, p + i * st, f->k, f->kst, first + i);
}

/* Rows: one accumulator per output of a kept run. */
static void kept_run_rows(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const RedCtx *c = ctx;
  Acc1 acc;
  Fold f = {c->r, &acc, 1, 0};
  for (int64_t i = 0; i < n; i++) {
    c->r->init(&acc, 1);
    sk_walk_range(&c->rw, p + i * st, 0, c->rw.numel, fold_rows, &f);
    c->r->finish(&acc, 1, c->out + (first + i) * (int64_t)c->osz, c->odt, c->divisor);
  }
}

/* Columns: blocks of COLS outputs of a kept run advance together over the reduced elements. */
static void kept_run_cols(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const RedCtx *c = ctx;
  AccBlock acc;
  for (int64_t j = 0; j < n; j += COLS) {
    int64_t k = n - j < COLS ? n - j : COLS;
    Fold f = {c->r, &acc, k, st};
    c->r->init(&acc, k);
    sk_walk_range(&c->rw, p + j * st, 0, c->rw.numel, fold_cols, &f);
    c->r->finish(&acc, k, c->out + (first + j) * (int64_t)c->osz, c->odt, c->divisor);
  }
}

static void outputs_rows(void *ctx, int64_t b, int64_t e) {
  const RedCtx *c = ctx;
  sk_walk_range(&c->kw, c->in, b, e, kept_run_rows, ctx);
}

static void outputs_cols(void *ctx, int64_t b, int64_t e) {
  const RedCtx *c = ctx;
  sk_walk_range(&c->kw, c->in, b, e, kept_run_cols, ctx);
}

static void chunks_split(void *ctx, int64_t b, int64_t e) {
  const RedCtx *c = ctx;
  int64_t nred = c->rw.numel;
  for (int64_t ch = b; ch < e; ch++) {
    Fold f = {c->r, c->partials + ch * (int64_t)c->r->acc_size, 1, 0};
    int64_t r0 = ch * SPLIT_CHUNK, r1 = r0 + SPLIT_CHUNK < nred ? r0 + SPLIT_CHUNK : nred;
    c->r->init(f.acc, 1);
    sk_walk_range(&c->rw, (char *)c->base, r0, r1, fold_rows, &f);
  }
}

/* Exact widenings need no converted copy: elements load as double or int64 anyway. */
static int needs_convert(SkDType in, SkDType out) {
  if (in == out) return 0;
  if (!sk_dtype_is_floating(in)) return out != SK_DTYPE_INT64;
  return in == SK_DTYPE_FLOAT64 || (out != SK_DTYPE_FLOAT32 && out != SK_DTYPE_FLOAT64);
}

static int reduce(const SkTensor *self, uint32_t mask, SkTensor *out, int kind) {
  SkTensor *conv = NULL, *tmp = NULL;
  const SkTensor *in = self;
  int rc = 0;
  if ((kind == KIND_SUM || kind == KIND_MEAN) && needs_convert(self->dtype, out->dtype)) {
    conv = sk_tensor_empty(self->ndim, self->sizes, out->dtype, self->device);
    if (!conv || sk_copy_cpu(conv, self)) { sk_tensor_release(conv); return -1; }
    in = conv;
  }
  RedCtx c;
  c.r = &reducers[kind][in->dtype];
  split_dims(in, mask, &c.kw, &c.rw);
  c.in = sk_tensor_data(in);
  c.odt = out->dtype;
  c.osz = sk_dtype_size(out->dtype);
  c.divisor = kind == KIND_MEAN ? (double)c.rw.numel : -1;
  c.partials = NULL;
  int64_t nout = c.kw.numel, nred = c.rw.numel;
  int split = nout <= SPLIT_MAX_OUT && nred >= 2 * SPLIT_CHUNK;
  if (nout > 0 && (!sk_tensor_is_contiguous(out) || sk_tensor_may_overlap(out, self))) {
    if (!(tmp = sk_tensor_empty(out->ndim, out->sizes, out->dtype, out->device))) rc = -1;
  }
  if (!rc && split) {
    c.nchunks = (nred + SPLIT_CHUNK - 1) / SPLIT_CHUNK;
    if (!(c.partials = malloc((size_t)c.nchunks * c.r->acc_size))) rc = sk_error("out of memory");
  }
  if (!rc && nout > 0) {
    c.out = sk_tensor_data(tmp ? tmp : out);
    if (split) {
      Acc1 acc;
      for (int64_t o = 0; o < nout; o++) {
        c.base = c.in + sk_walk_offset(&c.kw, o);
        sk_parallel_for(0, c.nchunks, 1, chunks_split, &c);
        memcpy(&acc, c.partials, c.r->acc_size);
        for (int64_t ch = 1; ch < c.nchunks; ch++) c.r->combine(&acc, c.partials + ch * (int64_t)c.r->acc_size);
        c.r->finish(&acc, 1, c.out + o * (int64_t)c.osz, c.odt, c.divisor);
      }
    } else {
      int last_r = c.rw.ndim - 1, last_k = c.kw.ndim - 1;
      int cols = c.rw.strides[last_r] != (int64_t)sk_dtype_size(in->dtype) && c.kw.sizes[last_k] > 1 &&
                 c.kw.strides[last_k] == (int64_t)sk_dtype_size(in->dtype);
      int64_t grain = nred > 0 ? SK_GRAIN / nred : SK_GRAIN;
      sk_parallel_for(0, nout, grain < 1 ? 1 : grain, cols ? outputs_cols : outputs_rows, &c);
    }
    if (tmp) rc = sk_copy_cpu(out, tmp);
  }
  free(c.partials);
  sk_tensor_release(tmp);
  sk_tensor_release(conv);
  return rc;
}

/* }==== */

/* dim_mask is precomputed by the meta function: bit d set when dim d is reduced. */
int sk_cpu_sum_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, int dtype, SkTensor *out) {
  (void)m; (void)keepdim; (void)dtype;
  return reduce(self, (uint32_t)dim_mask, out, KIND_SUM);
}

int sk_cpu_mean_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, int dtype, SkTensor *out) {
  (void)m; (void)keepdim; (void)dtype;
  return reduce(self, (uint32_t)dim_mask, out, KIND_MEAN);
}

int sk_cpu_amax_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, out, KIND_AMAX);
}

int sk_cpu_argmax_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) {
  (void)m; (void)keepdim;
  return reduce(self, (uint32_t)dim_mask, out, KIND_ARGMAX);
}
