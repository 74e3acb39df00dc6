/*
** sk_cpu_conv.c — the CPU kernels of convolution and convolution_backward
** Each is made of the three passes of sk_cpu_dnnl.h over contiguous operands in a
** compute dtype: float32 (float16 and bfloat16 through float32 copies) runs on oneDNN,
** float64, the integers (in int64, wrapping) and any shape oneDNN refuses run on the
** direct loops below. A transposed convolution is the data pass with its input as b.
** Kernels do not call the dispatcher: bias terms are loops here too.
** The loops sum in double (float) or uint64 (integers) and run in parallel over output
** planes: [n, c] for the forward and data passes, [cb, ca] for the weight pass.
*/
#include "sk_conv.h"
#include "sk_cpu_dnnl.h"
#include "sk_cpu_util.h"
#include "sk_kernels.h"
#include "sk_parallel.h"
#include "sk_error.h"

#include <string.h>

/* {==== Direct loops ====
** Sizes padded to 3 spatial dims (1s): a [N, Ca, A0, A1, A2], b [N, Cb, B...], w [Cb, Cag, K...]. */
typedef struct Loop {
  SkConvGeom g;
  int64_t n, ca, cb, cag, cbg;
  int64_t A[3], B[3], K[3], s[3], p[3], d[3];
  const void *x, *y;   /* the two read operands of the pass */
  void *o;             /* the written one */
  const void *bias;    /* FWD only, may be NULL */
  SkConvPass pass;
} Loop;

#define VOL(v) ((v)[0] * (v)[1] * (v)[2])

#define CONV_LOOPS(sfx, T, AT, LOAD)                                                                      \
  static void fwd_##sfx(void *ctx, int64_t lo, int64_t hi) { /* rows [n, co] of b */                    \
    const Loop *L = ctx;                                                                                 \
    const T *a = L->x, *w = L->y, *bias = L->bias;                                                       \
    T *b = L->o;                                                                                         \
    for (int64_t r = lo; r < hi; r++) {                                                                  \
      int64_t n = r / L->cb, co = r % L->cb, ca0 = co / L->cbg * L->cag;                                 \
      T *out = b + r * VOL(L->B);                                                                        \
      for (int64_t o0 = 0; o0 < L->B[0]; o0++)                                                           \
        for (int64_t o1 = 0; o1 < L->B[1]; o1++)                                                         \
          for (int64_t o2 = 0; o2 < L->B[2]; o2++) {                                                     \
            AT acc = bias ? (AT)LOAD(bias[co]) : 0;                                                      \
            for (int64_t ci = 0; ci < L->cag; ci++) {                                                    \
              const T *ap = a + (n * L->ca + ca0 + ci) * VOL(L->A), *wp = w + (co * L->cag + ci) * VOL(L->K); \
              for (int64_t k0 = 0; k0 < L->K[0]; k0++) {                                                 \
                int64_t i0 = o0 * L->s[0] - L->p[0] + k0 * L->d[0];                                      \
                if (i0 < 0 || i0 >= L->A[0]) continue;                                                   \
                for (int64_t k1 = 0; k1 < L->K[1]; k1++) {                                               \
                  int64_t i1 = o1 * L->s[1] - L->p[1] + k1 * L->d[1];                                    \
                  if (i1 < 0 || i1 >= L->A[1]) continue;                                                 \
                  for (int64_t k2 = 0; k2 < L->K[2]; k2++) {                                             \
                    int64_t i2 = o2 * L->s[2] - L->p[2] + k2 * L->d[2];                                  \
                    if (i2 < 0 || i2 >= L->A[2]) continue;                                               \
                    acc += (AT)LOAD(ap[(i0 * L->A[1] + i1) * L->A[2] + i2]) *                            \
                           (AT)LOAD(wp[(k0 * L->K[1] + k1) * L->K[2] + k2]);                             \
                  }                                                                                      \
                }                                                                                        \
              }                                                                                          \
            }                                                                                            \
            out[(o0 * L->B[1] + o1) * L->B[2] + o2] = (T)acc;                                            \
          }                                                                                              \
    }                                                                                                    \
  }                                                                                                      \
  /* i = o·s - p + k·d: for each i and k, the o that reaches it, if any */                             \
  static void data_##sfx(void *ctx, int64_t lo, int64_t hi) { /* rows [n, ca] of a */                   \
    const Loop *L = ctx;                                                                                 \
    const T *b = L->x, *w = L->y;                                                                        \
    T *a = L->o;                                                                                         \
    for (int64_t r = lo; r < hi; r++) {                                                                  \
      int64_t n = r / L->ca, ca = r % L->ca, ci = ca % L->cag, co0 = ca / L->cag * L->cbg;               \
      T *out = a + r * VOL(L->A);                                                                        \
      for (int64_t i0 = 0; i0 < L->A[0]; i0++)                                                           \
        for (int64_t i1 = 0; i1 < L->A[1]; i1++)                                                         \
          for (int64_t i2 = 0; i2 < L->A[2]; i2++) {                                                     \
            AT acc = 0;                                                                                  \
            for (int64_t co = co0; co < co0 + L->cbg; co++) {                                            \
              const T *bp = b + (n * L->cb + co) * VOL(L->B), *wp = w + (co * L->cag + ci) * VOL(L->K);  \
              for (int64_t k0 = 0; k0 < L->K[0]; k0++) {                                                 \
                int64_t t0 = i0 + L->p[0] - k0 * L->d[0], o0 = t0 / L->s[0];                             \
                if (t0 < 0 || t0 % L->s[0] || o0 >= L->B[0]) continue;                                   \
                for (int64_t k1 = 0; k1 < L->K[1]; k1++) {                                               \
                  int64_t t1 = i1 + L->p[1] - k1 * L->d[1], o1 = t1 / L->s[1];                           \
                  if (t1 < 0 || t1 % L->s[1] || o1 >= L->B[1]) continue;                                 \
                  for (int64_t k2 = 0; k2 < L->K[2]; k2++) {                                             \
                    int64_t t2 = i2 + L->p[2] - k2 * L->d[2], o2 = t2 / L->s[2];                         \
                    if (t2 < 0 || t2 % L->s[2] || o2 >= L->B[2]) continue;                               \
                    acc += (AT)LOAD(bp[(o0 * L->B[1] + o1) * L->B[2] + o2]) *                            \
                           (AT)LOAD(wp[(k0 * L->K[1] + k1) * L->K[2] + k2]);                             \
                  }                                                                                      \
                }                                                                                        \
              }                                                                                          \
            }                                                                                            \
            out[(i0 * L->A[1] + i1) * L->A[2] + i2] = (T)acc;                                            \
          }                                                                                              \
    }                                                                                                    \
  }                                                                                                      \
  static void weights_##sfx(void *ctx, int64_t lo, int64_t hi) { /* rows [co, ci] of w */               \
    const Loop *L = ctx;                                                                                 \
    const T *a = L->x, *b = L->y;                                                                        \
    T *w = L->o;                                                                                         \
    for (int64_t r = lo; r < hi; r++) {                                                                  \
      int64_t co = r / L->cag, ca = co / L->cbg * L->cag + r % L->cag;                                   \
      T *out = w + r * VOL(L->K);                                                                        \
      for (int64_t k0 = 0; k0 < L->K[0]; k0++)                                                           \
        for (int64_t k1 = 0; k1 < L->K[1]; k1++)                                                         \
          for (int64_t k2 = 0; k2 < L->K[2]; k2++) {                                                     \
            AT acc = 0;                                                                                  \
            for (int64_t n = 0; n < L->n; n++) {                                                         \
              const T *ap = a + (n * L->ca + ca) * VOL(L->A), *bp = b + (n * L->cb + co) * VOL(L->B);    \
              for (int64_t o0 = 0; o0 < L->B[0]; o0++) {                                                 \
                int64_t i0 = o0 * L->s[0] - L->p[0] + k0 * L->d[0];                                      \
                if (i0 < 0 || i0 >= L->A[0]) continue;                                                   \
                for (int64_t o1 = 0; o1 < L->B[1]; o1++) {                                               \
                  int64_t i1 = o1 * L->s[1] - L->p[1] + k1 * L->d[1];                                    \
                  if (i1 < 0 || i1 >= L->A[1]) continue;                                                 \
                  for (int64_t o2 = 0; o2 < L->B[2]; o2++) {                                             \
                    int64_t i2 = o2 * L->s[2] - L->p[2] + k2 * L->d[2];                                  \
                    if (i2 < 0 || i2 >= L->A[2]) continue;                                               \
                    acc += (AT)LOAD(ap[(i0 * L->A[1] + i1) * L->A[2] + i2]) *                            \
                           (AT)LOAD(bp[(o0 * L->B[1] + o1) * L->B[2] + o2]);                             \
                  }                                                                                      \
                }                                                                                        \
              }                                                                                          \
            }                                                                                            \
            out[(k0 * L->K[1] + k1) * L->K[2] + k2] = (T)acc;                                            \
          }                                                                                              \
    }                                                                                                    \
  }

#define U64(x) ((uint64_t)(x))
#define SAME(x) (x)
CONV_LOOPS(f32, float, double, SAME)
CONV_LOOPS(f64, double, double, SAME)
CONV_LOOPS(i64, int64_t, uint64_t, U64)

static void run_loops(SkConvPass pass, const SkConvGeom *g, const SkTensor *a, const SkTensor *w, const SkTensor *b,
                      const SkTensor *bias) {
  Loop L;
  memset(&L, 0, sizeof L);
  L.g = *g;
  L.pass = pass;
  L.n = a->sizes[0], L.ca = a->sizes[1], L.cb = b->sizes[1];
  L.cag = L.ca / g->groups, L.cbg = L.cb / g->groups;
  for (int i = 0; i < 3; i++) {
    int sp = i < g->nsp;
    L.A[i] = sp ? a->sizes[2 + i] : 1, L.B[i] = sp ? b->sizes[2 + i] : 1, L.K[i] = sp ? w->sizes[2 + i] : 1;
    L.s[i] = sp ? g->stride[i] : 1, L.p[i] = sp ? g->pad[i] : 0, L.d[i] = sp ? g->dil[i] : 1;
  }
  int64_t rows, work;
  SkRangeFn fn;
  int t = a->dtype == SK_DTYPE_FLOAT32 ? 0 : a->dtype == SK_DTYPE_FLOAT64 ? 1 : 2;
  if (pass == SK_CONV_FWD) {
    static const SkRangeFn fns[3] = {fwd_f32, fwd_f64, fwd_i64};
    L.x = sk_tensor_data(a), L.y = sk_tensor_data(w), L.o = sk_tensor_data(b), L.bias = bias ? sk_tensor_data(bias) : NULL;
    rows = L.n * L.cb, work = VOL(L.B) * L.cag * VOL(L.K), fn = fns[t];
  } else if (pass == SK_CONV_DATA) {
    static const SkRangeFn fns[3] = {data_f32, data_f64, data_i64};
    L.x = sk_tensor_data(b), L.y = sk_tensor_data(w), L.o = sk_tensor_data(a);
    rows = L.n * L.ca, work = VOL(L.A) * L.cbg * VOL(L.K), fn = fns[t];
  } else {
    static const SkRangeFn fns[3] = {weights_f32, weights_f64, weights_i64};
    L.x = sk_tensor_data(a), L.y = sk_tensor_data(b), L.o = sk_tensor_data(w);
    rows = L.cb * L.cag, work = VOL(L.K) * L.n * VOL(L.B), fn = fns[t];
  }
  int64_t grain = work > 0 ? SK_GRAIN / work : SK_GRAIN;
  sk_parallel_for(0, rows, grain < 1 ? 1 : grain, fn, &L);
}
/* }==== */

/* {==== Operands ==== */
static SkDType compute_dtype(SkDType t) {
  if (t == SK_DTYPE_FLOAT64) return SK_DTYPE_FLOAT64;
  return sk_dtype_is_floating(t) ? SK_DTYPE_FLOAT32 : SK_DTYPE_INT64;
}

/* Per-channel loops over a contiguous [N, C, plane] tensor of the compute dtype: o += bias
** (a transposed convolution's), and the sum over N and the plane (the bias's gradient). */
#define CHANNEL_LOOPS(sfx, T, AT)                                                               \
  static void add_bias_##sfx(T *o, const T *b, int64_t n, int64_t c, int64_t plane) {           \
    for (int64_t i = 0; i < n * c; i++)                                                          \
      for (int64_t j = 0; j < plane; j++) o[i * plane + j] = (T)((AT)o[i * plane + j] + (AT)b[i % c]); \
  }                                                                                              \
  static void sum_channels_##sfx(const T *g, T *out, int64_t n, int64_t c, int64_t plane) {     \
    for (int64_t k = 0; k < c; k++) {                                                            \
      AT acc = 0;                                                                                \
      for (int64_t i = 0; i < n; i++)                                                            \
        for (int64_t j = 0; j < plane; j++) acc += (AT)g[(i * c + k) * plane + j];               \
      out[k] = (T)acc;                                                                           \
    }                                                                                            \
  }
CHANNEL_LOOPS(f32, float, double)
CHANNEL_LOOPS(f64, double, double)
CHANNEL_LOOPS(i64, int64_t, uint64_t)

static int64_t plane_of(const SkTensor *t) { return t->ndim > 2 ? sk_numel(t->ndim - 2, t->sizes + 2) : 1; }

static void add_bias(SkTensor *o, const SkTensor *b) {
  int64_t n = o->sizes[0], c = o->sizes[1], p = plane_of(o);
  if (o->dtype == SK_DTYPE_FLOAT32) add_bias_f32(sk_tensor_data(o), sk_tensor_data(b), n, c, p);
  else if (o->dtype == SK_DTYPE_FLOAT64) add_bias_f64(sk_tensor_data(o), sk_tensor_data(b), n, c, p);
  else add_bias_i64(sk_tensor_data(o), sk_tensor_data(b), n, c, p);
}

/* out[c] = the sum of g over every dim but 1; out is [C] of any dtype. */
static int sum_channels(SkTensor *out, const SkTensor *g) {
  SkDType ct = compute_dtype(g->dtype);
  SkTensor *kg = NULL, *ko = NULL;
  int rc = 0;
  const SkTensor *x = sk_cpu_operand(g, ct, &kg, &rc);
  SkTensor *o = sk_cpu_target(out, ct, &ko, &rc);
  if (!rc) {
    int64_t n = x->sizes[0], c = x->sizes[1], p = plane_of(x);
    if (ct == SK_DTYPE_FLOAT32) sum_channels_f32(sk_tensor_data(x), sk_tensor_data(o), n, c, p);
    else if (ct == SK_DTYPE_FLOAT64) sum_channels_f64(sk_tensor_data(x), sk_tensor_data(o), n, c, p);
    else sum_channels_i64(sk_tensor_data(x), sk_tensor_data(o), n, c, p);
    rc = o != out ? sk_copy_cpu(out, o) : 0;
  }
  sk_tensor_release(kg);
  sk_tensor_release(ko);
  return rc;
}
/* One pass, written into the pass's output (a for DATA, b for FWD, w for WEIGHTS). */
static int pass_run(SkConvPass pass, const SkConvGeom *g, const SkTensor *a, const SkTensor *w, const SkTensor *b,
                    const SkTensor *bias) {
  if (a->dtype == SK_DTYPE_FLOAT32) {
    int rc = sk_cpu_dnnl_conv(pass, g, a, w, b, bias);
    if (rc <= 0) return rc;
  }
  run_loops(pass, g, a, w, b, bias);
  return 0;
}

/* Runs pass with the written operand `out` (any dtype and layout) and the two read ones,
** in the slots the pass gives them; temporaries are released on every path. */
static int pass_into(SkConvPass pass, const SkConvGeom *g, SkTensor *out, const SkTensor *r1, const SkTensor *r2,
                     const SkTensor *bias) {
  SkDType ct = compute_dtype(r1->dtype);
  SkTensor *k1 = NULL, *k2 = NULL, *kb = NULL, *ko = NULL;
  int rc = 0;
  const SkTensor *x1 = sk_cpu_operand(r1, ct, &k1, &rc), *x2 = sk_cpu_operand(r2, ct, &k2, &rc);
  const SkTensor *xb = sk_cpu_operand(bias, ct, &kb, &rc);
  SkTensor *o = sk_cpu_target(out, ct, &ko, &rc);
  if (!rc) {
    if (pass == SK_CONV_FWD) rc = pass_run(pass, g, x1, x2, o, xb);          /* r1 a, r2 w */
    else if (pass == SK_CONV_DATA) {                                          /* r1 b, r2 w */
      rc = pass_run(pass, g, o, x2, x1, NULL);
      if (!rc && xb) add_bias(o, xb);
    }
    else rc = pass_run(pass, g, x1, o, x2, NULL);                            /* r1 a, r2 b */
    if (!rc && o != out) rc = sk_copy_cpu(out, o);
  }
  sk_tensor_release(k1);
  sk_tensor_release(k2);
  sk_tensor_release(kb);
  sk_tensor_release(ko);
  return rc;
}

/* }==== */

static int check_cpu_dtype(const SkTensor *t) {
  if (t->dtype == SK_DTYPE_BOOL) return sk_error("\"convolution\" not implemented for 'Bool'");
  return 0;
}

int sk_cpu_convolution_out(const SkMeta *m, const SkTensor *input, const SkTensor *weight, const SkTensor *bias,
                           SkIntList stride, SkIntList padding, SkIntList dilation, int transposed,
                           SkIntList output_padding, int64_t groups, SkTensor *out) {
  (void)m;
  SkConvGeom g;
  int64_t sizes[2 + SK_CONV_MAX_SPATIAL];
  static const SkIntList none = {NULL, 0};
  if (sk_conv_check(&g, input, weight, bias, none, stride, padding, dilation, transposed, output_padding, groups, sizes) ||
      check_cpu_dtype(input))
    return -1;
  if (out->numel == 0) return 0;
  return pass_into(transposed ? SK_CONV_DATA : SK_CONV_FWD, &g, out, input, weight, bias);
}

int sk_cpu_convolution_backward(SkTensor **result1, SkTensor **result2, SkTensor **result3,
                                const SkTensor *grad_output, const SkTensor *input, const SkTensor *weight,
                                SkIntList bias_sizes, SkIntList stride, SkIntList padding, SkIntList dilation,
                                int transposed, SkIntList output_padding, int64_t groups, SkIntList output_mask) {
  SkConvGeom g;
  SkTensor *r[3] = {NULL, NULL, NULL};
  /* the checks and shapes: the Meta kernel's, then the same tensors on the CPU */
  if (sk_meta_kernel_convolution_backward(&r[0], &r[1], &r[2], grad_output, input, weight, bias_sizes, stride, padding,
                                          dilation, transposed, output_padding, groups, output_mask) ||
      check_cpu_dtype(input))
    goto fail;
  static const SkIntList none = {NULL, 0};
  int64_t sizes[2 + SK_CONV_MAX_SPATIAL];
  if (sk_conv_check(&g, input, weight, NULL, none, stride, padding, dilation, transposed, output_padding, groups, sizes))
    goto fail;
  if (sk_cpu_from_meta(r, 3)) goto fail;
  /* non-transposed: input is a, grad_output b; transposed: grad_output is a, input b */
  const SkTensor *a = transposed ? grad_output : input, *b = transposed ? input : grad_output;
  if (r[0] && r[0]->numel) {
    int rc = transposed ? pass_into(SK_CONV_FWD, &g, r[0], a, weight, NULL) : pass_into(SK_CONV_DATA, &g, r[0], b, weight, NULL);
    if (rc) goto fail;
  }
  if (r[1] && r[1]->numel) {
    if (grad_output->numel == 0 || input->numel == 0) { /* no terms: zeros */
      memset(sk_tensor_data(r[1]), 0, (size_t)r[1]->numel * sk_dtype_size(r[1]->dtype));
    } else if (pass_into(SK_CONV_WEIGHTS, &g, r[1], a, b, NULL)) goto fail;
  }
  if (r[2] && sum_channels(r[2], grad_output)) goto fail; /* over every dim but the channels */
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
fail:
  for (int i = 0; i < 3; i++) sk_tensor_release(r[i]);
  return -1;
}
