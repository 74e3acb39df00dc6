/*
** sk_cpu_pool.c — the CPU kernels of pooling: max (with indices), avg, adaptive avg,
** adaptive max, their gradients, and max_unpool
** Operands are read contiguous in a compute type: float32 (float16 and bfloat16 through
** float32 copies), float64, or int64 for avg_pool over integers (sums wrap, the quotient
** truncates, as PyTorch's); each plane of sk_pool.h is one task, and planes run in parallel.
** A max takes the first largest element of its window, NaN wins (PyTorch's rule). The
** gradients scatter into their plane, so a plane is never shared between threads. Indices a
** caller passes are checked before anything is written.
*/
#include "sk_pool.h"
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"
#include "sk_error.h"

#include <math.h>
#include <string.h>

typedef enum { MAX_FWD, MAX_BWD, AVG_FWD, AVG_BWD, AAVG_FWD, AAVG_BWD, AMAX_FWD } Pass;

typedef struct Pool {
  SkPoolGeom g;
  int64_t inv, outv;        /* elements of an input plane, an output plane */
  const void *x;            /* FWD: the input; BWD: grad_output */
  void *y;                  /* FWD: the output; BWD: the gradient (zeroed) */
  int64_t *ind;             /* max: indices (written by FWD, read by MAX_BWD) */
  const int64_t *win;       /* all but max's passes: each dim's windows (windows()) */
} Pool;

#define FLAT(g, a, b, c) (((a) * (g)->in[1] + (b)) * (g)->in[2] + (c))

/* The window of output o along dim a: [lo, hi) clipped to the input, and the unclipped size
** avg_pool divides by (padding counted; hi never past in + p). */
static inline void avg_window(const SkPoolGeom *g, int a, int64_t o, int64_t *lo, int64_t *hi, int64_t *full) {
  int64_t s = o * g->s[a] - g->p[a], e = s + g->k[a];
  if (e > g->in[a] + g->p[a]) e = g->in[a] + g->p[a];
  *full = e - s;
  *lo = s < 0 ? 0 : s;
  *hi = e > g->in[a] ? g->in[a] : e;
}

#define POOL_LOOPS(sfx, T, AT, LOW)                                                                        \
  /* Σ of a contiguous run: past 16 elements in two vectors of 32 bytes (a single chain stalls  \
  ** on add latency), folded by halves (three dependent adds, not a lane at a time) */           \
  typedef T vec_##sfx __attribute__((vector_size(32)));                                                \
  static inline __attribute__((always_inline)) AT run_sum_##sfx(const T *p, int64_t n) {          \
    enum { W = 32 / sizeof(T) };                                                                       \
    AT s = 0;                                                                                          \
    int64_t i = 0;                                                                                     \
    if (n >= 16) {                                                                                     \
      vec_##sfx a = {0}, b = {0}, v;                                                                   \
      for (; i + 2 * W <= n; i += 2 * W) {                                                             \
        memcpy(&v, p + i, sizeof v), a += v;                                                           \
        memcpy(&v, p + i + W, sizeof v), b += v;                                                       \
      }                                                                                                \
      if (i + W <= n) memcpy(&v, p + i, sizeof v), a += v, i += W;                                     \
      a += b;                                                                                          \
      T l[8];                                                                                          \
      memcpy(l, &a, sizeof a);                                                                         \
      s = W == 8 ? ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))                   \
                 : (l[0] + l[2]) + (l[1] + l[3]);                                                      \
    }                                                                                                  \
    for (; i < n; i++) s += (AT)p[i];                                                                  \
    return s;                                                                                          \
  }                                                                                                    \
  static inline __attribute__((always_inline)) void plane_##sfx(void *ctx, int64_t lo_pl, int64_t hi_pl, Pass pass) { \
    const Pool *c = ctx;                                                                               \
    const SkPoolGeom G = c->g, *g = &G; /* a local copy: stores through ind cannot alias it */         \
    for (int64_t pl = lo_pl; pl < hi_pl; pl++) {                                                       \
      const T *x = (const T *)c->x + pl * (pass == MAX_BWD || pass == AVG_BWD || pass == AAVG_BWD ? c->outv : c->inv); \
      T *y = (T *)c->y + pl * (pass == MAX_BWD || pass == AVG_BWD || pass == AAVG_BWD ? c->inv : c->outv); \
      int64_t *ind = c->ind ? c->ind + pl * c->outv : NULL;                                            \
      if (pass == MAX_BWD) { /* y[ind[o]] += x[o] */                                                   \
        for (int64_t o = 0; o < c->outv; o++) y[ind[o]] = (T)((AT)y[ind[o]] + (AT)x[o]);               \
        continue;                                                                                      \
      }                                                                                                \
      if (pass == MAX_FWD && g->in[0] == 1) { /* 2-d (and 1-d): each window's rows inside the input   \
                                                  found once a row, its columns once an output */    \
        const int64_t W = g->in[2], s2 = g->s[2], p2 = g->p[2], d1 = g->d[1], d2 = g->d[2], k2 = g->k[2]; \
        for (int64_t o1 = 0, o = 0; o1 < g->out[1]; o1++) {                                              \
          const int64_t r0 = o1 * g->s[1] - g->p[1];                                                   \
          int64_t ka = r0 < 0 ? (-r0 + d1 - 1) / d1 : 0, kb = g->k[1];                                  \
          while (kb > ka && r0 + (kb - 1) * d1 >= g->in[1]) kb--;                                      \
          for (int64_t o2 = 0; o2 < g->out[2]; o2++, o++) {                                            \
            const int64_t c0 = o2 * s2 - p2;                                                           \
            int64_t ja = 0, jb = k2;                                                                   \
            if (c0 < 0 || c0 + (k2 - 1) * d2 >= W) { /* a border column: clip */                      \
              ja = c0 < 0 ? (-c0 + d2 - 1) / d2 : 0;                                                    \
              while (jb > ja && c0 + (jb - 1) * d2 >= W) jb--;                                         \
            }                                                                                          \
            /* the maximum first (a max instruction a step, no branch on data), then where it is: the \
            ** first position holding it, or with a NaN the last NaN (PyTorch's order of taking) */    \
            T best = LOW;                                                                              \
            int nan = 0;                                                                               \
            for (int64_t k1 = ka; k1 < kb; k1++) {                                                     \
              const T *row = x + (r0 + k1 * d1) * W + c0;                                              \
              for (int64_t k2i = ja; k2i < jb; k2i++) {                                                \
                const T v = row[k2i * d2];                                                             \
                best = v > best ? v : best, nan |= v != v;                                             \
              }                                                                                        \
            }                                                                                          \
            int64_t bi = -1;                                                                           \
            for (int64_t k1 = ka; k1 < kb && (bi < 0 || nan); k1++) {                                  \
              const int64_t row = (r0 + k1 * d1) * W + c0;                                             \
              for (int64_t k2i = ja; k2i < jb; k2i++) {                                                \
                const int64_t f = row + k2i * d2;                                                      \
                if (nan ? x[f] != x[f] : x[f] == best) { bi = f; if (!nan) break; }                    \
              }                                                                                        \
            }                                                                                          \
            y[o] = nan ? x[bi] : best;                                                                 \
            ind[o] = bi;                                                                               \
          }                                                                                            \
        }                                                                                              \
        continue;                                                                                      \
      }                                                                                                \
      const int64_t *W0 = c->win, *W1 = W0 ? W0 + 3 * g->out[0] : NULL, *W2 = W1 ? W1 + 3 * g->out[1] : NULL; \
      if (pass == AAVG_FWD && c->outv == 1) { /* to 1×1: the plane's mean as one run (the loops below   \
                                                 took twice as long on 7×7 planes) */                 \
        y[0] = (T)(run_sum_##sfx(x, c->inv) / (AT)c->inv);                                             \
        continue;                                                                                      \
      }                                                                                                \
      if ((pass == AVG_FWD || pass == AAVG_FWD) && g->in[0] == 1) { /* 2-d (and 1-d) sums, row by row */ \
        const int64_t W = g->in[2];                                                                    \
        for (int64_t o1 = 0, o = 0; o1 < g->out[1]; o1++) {                                            \
          const int64_t r0 = W1[3 * o1], r1 = W1[3 * o1 + 1], f1 = W1[3 * o1 + 2];                     \
          for (int64_t o2 = 0; o2 < g->out[2]; o2++, o++) {                                            \
            const int64_t *wc = W2 + 3 * o2, c0 = wc[0], c1 = wc[1];                                   \
            const int64_t cnt = (r1 > r0 ? r1 - r0 : 0) * (c1 > c0 ? c1 - c0 : 0);                     \
            AT sum = 0;                                                                                \
            if (c0 == 0 && c1 == W) /* whole rows: one contiguous run */                               \
              sum = run_sum_##sfx(x + r0 * W, (r1 - r0) * W);                                          \
            else                                                                                       \
              for (int64_t r = r0; r < r1; r++) sum += run_sum_##sfx(x + r * W + c0, c1 - c0);         \
            AT dv = pass == AAVG_FWD ? (AT)cnt : g->divisor ? (AT)g->divisor                            \
                  : g->count_include_pad ? (AT)(f1 * wc[2]) : (AT)cnt;                                 \
            y[o] = cnt ? (T)(sum / dv) : (T)0;                                                         \
          }                                                                                            \
        }                                                                                              \
        continue;                                                                                      \
      }                                                                                                \
      int64_t o = 0;                                                                                   \
      for (int64_t o0 = 0; o0 < g->out[0]; o0++)                                                       \
        for (int64_t o1 = 0; o1 < g->out[1]; o1++)                                                     \
          for (int64_t o2 = 0; o2 < g->out[2]; o2++, o++) {                                            \
            int64_t oo[3] = {o0, o1, o2}, lo[3], hi[3], full = 1, n = 1;                                \
            if (pass != MAX_FWD)                                                                       \
              for (int a = 0; a < 3; a++) {                                                            \
                const int64_t *wa = (a == 0 ? W0 : a == 1 ? W1 : W2) + 3 * oo[a];                      \
                lo[a] = wa[0], hi[a] = wa[1], full *= wa[2];                                           \
                n *= hi[a] > lo[a] ? hi[a] - lo[a] : 0;                                                \
              }                                                                                        \
            if (pass == MAX_FWD) { /* dilated window, positions outside the input skipped */           \
              T best = LOW;                                                                   \
              int64_t bi = -1;                                                                         \
              /* each dim's window clipped to the input first (a kernel may be far larger) */         \
              int64_t ks[3], ke[3];                                                                    \
              for (int a = 0; a < 3; a++) {                                                            \
                int64_t st = oo[a] * g->s[a] - g->p[a];                                                \
                ks[a] = st < 0 ? (-st + g->d[a] - 1) / g->d[a] : 0;                                    \
                ke[a] = st >= g->in[a] ? 0 : (g->in[a] - 1 - st) / g->d[a] + 1;                       \
                if (ke[a] > g->k[a]) ke[a] = g->k[a];                                                  \
              }                                                                                        \
              for (int64_t k0 = ks[0]; k0 < ke[0]; k0++) {                                             \
                int64_t i0 = o0 * g->s[0] - g->p[0] + k0 * g->d[0];                                    \
                for (int64_t k1 = ks[1]; k1 < ke[1]; k1++) {                                           \
                  int64_t i1 = o1 * g->s[1] - g->p[1] + k1 * g->d[1];                                  \
                  for (int64_t k2 = ks[2]; k2 < ke[2]; k2++) {                                         \
                    int64_t i2 = o2 * g->s[2] - g->p[2] + k2 * g->d[2];                                \
                    int64_t f = FLAT(g, i0, i1, i2);                                                   \
                    T v = x[f];                                                                        \
                    if (bi < 0) bi = f;                                                                \
                    const int take = (v > best) | (v != v); /* branch-free: the maximum is unpredictable */ \
                  bi = take ? f : bi, best = take ? v : best;                                          \
                  }                                                                                    \
                }                                                                                      \
              }                                                                                        \
              y[o] = best;                                                                             \
              ind[o] = bi;                                                                             \
              continue;                                                                                \
            }                                                                                          \
            if (pass == AMAX_FWD) {                                                                    \
              T best = LOW;                                                                   \
              int64_t bi = FLAT(g, lo[0], lo[1], lo[2]);                                               \
              for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)                                               \
                for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)                                             \
                  for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {                                         \
                    int64_t f = FLAT(g, i0, i1, i2);                                                   \
                    T v = x[f];                                                                        \
                    const int take = (v > best) | (v != v); /* branch-free: the maximum is unpredictable */ \
                  bi = take ? f : bi, best = take ? v : best;                                          \
                  }                                                                                    \
              y[o] = best;                                                                             \
              ind[o] = bi;                                                                             \
              continue;                                                                                \
            }                                                                                          \
            AT div = pass == AAVG_FWD || pass == AAVG_BWD ? (AT)n                                      \
                   : g->divisor ? (AT)g->divisor : g->count_include_pad ? (AT)full : (AT)n;            \
            if (pass == AVG_FWD || pass == AAVG_FWD) {                                                 \
              AT sum = 0;                                                                              \
              for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)                                               \
                for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)                                             \
                  for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) sum += (AT)x[FLAT(g, i0, i1, i2)];        \
              y[o] = n ? (T)(sum / div) : (T)0;                                                        \
            } else if (n) { /* AVG_BWD, AAVG_BWD: x[o] / div to each element of the window */          \
              AT share = (AT)x[o] / div;                                                               \
              for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)                                               \
                for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)                                             \
                  for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {                                         \
                    int64_t f = FLAT(g, i0, i1, i2);                                                   \
                    y[f] = (T)((AT)y[f] + share);                                                      \
                  }                                                                                    \
            }                                                                                          \
          }                                                                                            \
    }                                                                                                  \
  }

POOL_LOOPS(f32, float, float, -INFINITY)
POOL_LOOPS(f64, double, double, -INFINITY)
POOL_LOOPS(i64, int64_t, int64_t, INT64_MIN) /* avg_pool over integers only */

/* One function per (type, pass): the pass is a constant in each, so its branches fold away. */
#define PASS_FN(sfx, P) SK_CLONES static void sfx##_##P(void *ctx, int64_t lo, int64_t hi) { plane_##sfx(ctx, lo, hi, P); }
#define PASS_FNS(sfx) PASS_FN(sfx, MAX_FWD) PASS_FN(sfx, MAX_BWD) PASS_FN(sfx, AVG_FWD) PASS_FN(sfx, AVG_BWD) \
  PASS_FN(sfx, AAVG_FWD) PASS_FN(sfx, AAVG_BWD) PASS_FN(sfx, AMAX_FWD)
PASS_FNS(f32)
PASS_FNS(f64)
PASS_FNS(i64)
#define PASS_ROW(sfx) {sfx##_MAX_FWD, sfx##_MAX_BWD, sfx##_AVG_FWD, sfx##_AVG_BWD, sfx##_AAVG_FWD, sfx##_AAVG_BWD, sfx##_AMAX_FWD}
static const SkRangeFn PASSES[3][7] = {PASS_ROW(f32), PASS_ROW(f64), PASS_ROW(i64)};

typedef struct Task { Pool *c; Pass pass; SkDType ct; } Task;
static void run_planes(void *ctx, int64_t lo, int64_t hi) {
  const Task *t = ctx;
  PASSES[t->ct == SK_DTYPE_FLOAT32 ? 0 : t->ct == SK_DTYPE_FLOAT64 ? 1 : 2][t->pass](t->c, lo, hi);
}

/* {==== Operands ==== */
/* An index outside [0, n): the first one, for the message. */
static int bad_index(const SkTensor *ind, int64_t n, int64_t *bad) {
  const int64_t *p = sk_tensor_data(ind);
  for (int64_t i = 0; i < ind->numel; i++)
    if (p[i] < 0 || p[i] >= n) { *bad = p[i]; return 1; }
  return 0;
}
/* }==== */

/* Each dim's windows, once a call (a plane's loops then do no division): for dim a and output
** o, lo, hi (clipped to the input) and the size avg_pool divides by (padding counted), or for
** the adaptive passes hi - lo; dims one after another. NULL after an error. */
static int64_t *windows(Pass pass, const SkPoolGeom *g, size_t *bytes) {
  *bytes = (size_t)(g->out[0] + g->out[1] + g->out[2]) * 3 * sizeof(int64_t);
  int64_t *w = sk_cpu_alloc(*bytes ? *bytes : 1), *p = w;
  if (!w) return NULL;
  for (int a = 0; a < 3; a++)
    for (int64_t o = 0; o < g->out[a]; o++, p += 3) {
      if (pass == AVG_FWD || pass == AVG_BWD) avg_window(g, a, o, &p[0], &p[1], &p[2]);
      else p[0] = sk_pool_start(o, g->in[a], g->out[a]), p[1] = sk_pool_end(o, g->in[a], g->out[a]), p[2] = p[1] - p[0];
    }
  return w;
}

static SkDType compute_dtype(SkDType t) {
  if (t == SK_DTYPE_FLOAT64) return SK_DTYPE_FLOAT64;
  return sk_dtype_is_floating(t) ? SK_DTYPE_FLOAT32 : SK_DTYPE_INT64;
}

/* One pass: src read (contiguous in ct), dst written (zeroed first by a backward), indices
** read or written (int64, contiguous), through temporaries where the caller's are not. */
static int run(Pass pass, const SkPoolGeom *g, const SkTensor *src, SkTensor *dst, SkTensor *indices) {
  SkDType ct = compute_dtype(src->dtype);
  SkTensor *k[3] = {NULL, NULL, NULL};
  int rc = 0;
  const SkTensor *x = sk_cpu_operand(src, ct, &k[0], &rc);
  SkTensor *y = sk_cpu_target(dst, ct, &k[1], &rc);
  SkTensor *ind = NULL;
  if (indices) {
    if (pass == MAX_BWD) ind = (SkTensor *)sk_cpu_operand(indices, SK_DTYPE_INT64, &k[2], &rc);
    else ind = sk_cpu_target(indices, SK_DTYPE_INT64, &k[2], &rc);
  }
  if (!rc) {
    Pool c;
    c.g = *g;
    c.inv = g->in[0] * g->in[1] * g->in[2];
    c.outv = g->out[0] * g->out[1] * g->out[2];
    c.x = sk_tensor_data(x), c.y = sk_tensor_data(y), c.ind = ind ? sk_tensor_data(ind) : NULL;
    size_t wbytes = 0;
    int64_t *wins = pass == MAX_FWD || pass == MAX_BWD ? NULL : windows(pass, g, &wbytes);
    c.win = wins;
    if (pass != MAX_FWD && pass != MAX_BWD && !wins) rc = -1;
    int bwd = pass == MAX_BWD || pass == AVG_BWD || pass == AAVG_BWD;
    if (bwd) memset(c.y, 0, (size_t)y->numel * sk_dtype_size(ct));
    /* the work of one plane, in double: a kernel may be far larger than the input it is clipped to */
    double win = pass == MAX_FWD || pass == AVG_FWD || pass == AVG_BWD ? (double)g->k[0] * (double)g->k[1] * (double)g->k[2]
               : pass == MAX_BWD ? 1 : (double)c.inv / (double)(c.outv ? c.outv : 1) + 1;
    double work = (double)c.outv * win;
    int64_t grain = work >= SK_GRAIN ? 1 : work > 0 ? (int64_t)(SK_GRAIN / work) : g->planes;
    Task t = {&c, pass, ct};
    if (!rc && g->planes > 0 && c.outv > 0) sk_parallel_for(0, g->planes, grain < 1 ? 1 : grain, run_planes, &t);
    if (!rc && k[1]) rc = sk_copy_cpu(dst, k[1]);
    if (!rc && indices && pass != MAX_BWD && k[2]) rc = sk_copy_cpu(indices, k[2]);
    if (wins) sk_cpu_free(wins, wbytes ? wbytes : 1);
  }
  for (int i = 0; i < 3; i++) sk_tensor_release(k[i]);
  return rc;
}

static int floats_only(const SkTensor *t, const char *name) {
  if (sk_dtype_is_floating(t->dtype)) return 0;
  return sk_error("\"%s\" not implemented for '%s'", name, sk_dtype_torch_name(t->dtype));
}

/* max_pool's and adaptive_max_pool's gradient: every index must lie in an input plane. */
static int scatter_backward(const SkPoolGeom *g, const SkTensor *grad_output, const SkTensor *indices, SkTensor *grad_input,
                            const char *op) {
  int64_t bad, n = g->in[0] * g->in[1] * g->in[2];
  SkTensor *ci = NULL;
  int rc = 0;
  const SkTensor *ind = sk_cpu_operand(indices, SK_DTYPE_INT64, &ci, &rc);
  if (!rc && bad_index(ind, n, &bad))
    rc = sk_error("%s: index %lld in indices is out of range for input planes of %lld elements", op, (long long)bad, (long long)n);
  if (!rc) rc = run(MAX_BWD, g, grad_output, grad_input, (SkTensor *)ind);
  sk_tensor_release(ci);
  return rc;
}

#define POOL_KERNELS(n)                                                                                                \
  int sk_cpu_max_pool##n##d_with_indices_out(const SkMeta *m, const SkTensor *self, SkIntList kernel_size,             \
                                             SkIntList stride, SkIntList padding, SkIntList dilation, int ceil_mode,    \
                                             SkTensor *out, SkTensor *indices) {                                       \
    (void)m;                                                                                                           \
    SkPoolGeom g;                                                                                                      \
    if (sk_pool_window(&g, "max_pool" #n "d", n, self, kernel_size, stride, padding, dilation, ceil_mode) ||            \
        floats_only(self, "max_pool" #n "d"))                                                                          \
      return -1;                                                                                                       \
    return run(MAX_FWD, &g, self, out, indices);                                                                       \
  }                                                                                                                    \
  int sk_cpu_max_pool##n##d_with_indices_backward_out(const SkMeta *m, const SkTensor *grad_output,                    \
                                                      const SkTensor *self, SkIntList kernel_size, SkIntList stride,    \
                                                      SkIntList padding, SkIntList dilation, int ceil_mode,            \
                                                      const SkTensor *indices, SkTensor *grad_input) {                 \
    (void)m;                                                                                                           \
    SkPoolGeom g;                                                                                                      \
    if (sk_pool_window(&g, "max_pool" #n "d", n, self, kernel_size, stride, padding, dilation, ceil_mode) ||            \
        floats_only(self, "max_pool" #n "d_with_indices_backward"))                                                    \
      return -1;                                                                                                       \
    return scatter_backward(&g, grad_output, indices, grad_input, "max_pool" #n "d_with_indices_backward");            \
  }                                                                                                                    \
  int sk_cpu_avg_pool##n##d_out(const SkMeta *m, const SkTensor *self, SkIntList kernel_size, SkIntList stride,         \
                                SkIntList padding, int ceil_mode, int count_include_pad, SkOptInt divisor_override,    \
                                SkTensor *out) {                                                                       \
    (void)m;                                                                                                           \
    SkPoolGeom g;                                                                                                      \
    if (sk_pool_window(&g, "avg_pool" #n "d", n, self, kernel_size, stride, padding, (SkIntList){NULL, 0}, ceil_mode))  \
      return -1;                                                                                                       \
    if (self->dtype == SK_DTYPE_BOOL) return sk_error("\"avg_pool" #n "d\" not implemented for 'Bool'");               \
    g.count_include_pad = count_include_pad;                                                                           \
    g.divisor = divisor_override.has ? divisor_override.v : 0;                                                 \
    return run(AVG_FWD, &g, self, out, NULL);                                                                          \
  }                                                                                                                    \
  int sk_cpu_avg_pool##n##d_backward_out(const SkMeta *m, const SkTensor *grad_output, const SkTensor *self,           \
                                         SkIntList kernel_size, SkIntList stride, SkIntList padding, int ceil_mode,    \
                                         int count_include_pad, SkOptInt divisor_override, SkTensor *grad_input) {     \
    (void)m;                                                                                                           \
    SkPoolGeom g;                                                                                                      \
    if (sk_pool_window(&g, "avg_pool" #n "d", n, self, kernel_size, stride, padding, (SkIntList){NULL, 0}, ceil_mode))  \
      return -1;                                                                                                       \
    if (self->dtype == SK_DTYPE_BOOL) return sk_error("\"avg_pool" #n "d_backward\" not implemented for 'Bool'");      \
    g.count_include_pad = count_include_pad;                                                                           \
    g.divisor = divisor_override.has ? divisor_override.v : 0;                                                 \
    return run(AVG_BWD, &g, grad_output, grad_input, NULL);                                                            \
  }                                                                                                                    \
  int sk_cpu_adaptive_avg_pool##n##d_out(const SkMeta *m, const SkTensor *self, SkIntList output_size, SkTensor *out) { \
    (void)m;                                                                                                           \
    SkPoolGeom g;                                                                                                      \
    if (sk_pool_adaptive(&g, "adaptive_avg_pool" #n "d", n, self, output_size) ||                                      \
        floats_only(self, "adaptive_avg_pool" #n "d"))                                                                 \
      return -1;                                                                                                       \
    return run(AAVG_FWD, &g, self, out, NULL);                                                                         \
  }                                                                                                                    \
  int sk_cpu_adaptive_avg_pool##n##d_backward_out(const SkMeta *m, const SkTensor *grad_output, const SkTensor *self,  \
                                                  SkTensor *out) {                                                     \
    (void)m;                                                                                                           \
    SkPoolGeom g;                                                                                                      \
    SkIntList os = {grad_output->sizes + grad_output->ndim - n, n};                                                    \
    if (sk_pool_adaptive(&g, "adaptive_avg_pool" #n "d_backward", n, self, os) ||                                      \
        floats_only(self, "adaptive_avg_pool" #n "d_backward"))                                                        \
      return -1;                                                                                                       \
    return run(AAVG_BWD, &g, grad_output, out, NULL);                                                                  \
  }                                                                                                                    \
  int sk_cpu_adaptive_max_pool##n##d_out(const SkMeta *m, const SkTensor *self, SkIntList output_size, SkTensor *out,  \
                                         SkTensor *indices) {                                                          \
    (void)m;                                                                                                           \
    SkPoolGeom g;                                                                                                      \
    if (sk_pool_adaptive(&g, "adaptive_max_pool" #n "d", n, self, output_size) ||                                      \
        floats_only(self, "adaptive_max_pool" #n "d"))                                                                 \
      return -1;                                                                                                       \
    return run(AMAX_FWD, &g, self, out, indices);                                                                      \
  }                                                                                                                    \
  int sk_cpu_adaptive_max_pool##n##d_backward_out(const SkMeta *m, const SkTensor *grad_output, const SkTensor *self,  \
                                                  const SkTensor *indices, SkTensor *grad_input) {                     \
    (void)m;                                                                                                           \
    SkPoolGeom g;                                                                                                      \
    SkIntList os = {grad_output->sizes + grad_output->ndim - n, n};                                                    \
    if (sk_pool_adaptive(&g, "adaptive_max_pool" #n "d_backward", n, self, os) ||                                      \
        floats_only(self, "adaptive_max_pool" #n "d_backward"))                                                        \
      return -1;                                                                                                       \
    return scatter_backward(&g, grad_output, indices, grad_input, "adaptive_max_pool" #n "d_backward");                \
  }
POOL_KERNELS(2)
POOL_KERNELS(3)

/* {==== max_unpool: out[plane, indices[i]] = self[i], the rest 0; any dtype (bytes) ==== */
static int unpool(const SkTensor *self, const SkTensor *indices, SkIntList output_size, SkTensor *out, int nsp) {
  if (self->dtype == SK_DTYPE_BOOL) return sk_error("\"max_unpooling%dd_forward_out_cpu_frame\" not implemented for 'Bool'", nsp);
  int64_t plane_out = sk_numel(nsp, output_size.data), plane_in = sk_numel(nsp, self->sizes + self->ndim - nsp);
  int64_t planes = sk_numel(self->ndim - nsp, self->sizes), bad;
  SkTensor *kx = NULL, *ki = NULL, *ko = NULL;
  int rc = 0;
  const SkTensor *x = sk_cpu_operand(self, self->dtype, &kx, &rc), *ind = sk_cpu_operand(indices, SK_DTYPE_INT64, &ki, &rc);
  SkTensor *o = sk_cpu_target(out, self->dtype, &ko, &rc);
  if (!rc && bad_index(ind, plane_out, &bad)) {
    if (nsp == 2)
      rc = sk_error("Found an invalid max index: %lld (output volumes are of size %lldx%lld)", (long long)bad,
                    (long long)output_size.data[0], (long long)output_size.data[1]);
    else
      rc = sk_error("Found an invalid max index: %lld (output volumes are of size %lldx%lldx%lld)", (long long)bad,
                    (long long)output_size.data[0], (long long)output_size.data[1], (long long)output_size.data[2]);
  }
  if (!rc) {
    size_t z = sk_dtype_size(self->dtype);
    char *op = sk_tensor_data(o);
    const char *xp = sk_tensor_data(x);
    const int64_t *ip = sk_tensor_data(ind);
    memset(op, 0, (size_t)o->numel * z);
    for (int64_t p = 0; p < planes; p++)
      for (int64_t i = 0; i < plane_in; i++)
        memcpy(op + (size_t)(p * plane_out + ip[p * plane_in + i]) * z, xp + (size_t)(p * plane_in + i) * z, z);
    if (ko) rc = sk_copy_cpu(out, ko);
  }
  sk_tensor_release(kx);
  sk_tensor_release(ki);
  sk_tensor_release(ko);
  return rc;
}

int sk_cpu_max_unpool2d_out(const SkMeta *m, const SkTensor *self, const SkTensor *indices, SkIntList output_size,
                            SkTensor *out) {
  (void)m;
  return unpool(self, indices, output_size, out, 2);
}

int sk_cpu_max_unpool3d_out(const SkMeta *m, const SkTensor *self, const SkTensor *indices, SkIntList output_size,
                            SkIntList stride, SkIntList padding, SkTensor *out) {
  (void)m, (void)stride, (void)padding;
  return unpool(self, indices, output_size, out, 3);
}
/* }==== */
