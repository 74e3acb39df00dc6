/*
** sk_cpu_ctc.c — CTC loss on the CPU: the forward (alpha) recursion and the gradient, in log space
** (Graves et al. 2006, as PyTorch's LossCTC.cpp computes them).
** The extended target l' of a sample interleaves blanks: l'_s = blank for even s, l_{(s-1)/2} for
** odd s, s < 2·L + 1. log_alpha[b, t, s] is the log-probability of the prefixes of l' ending in s
** at time t; entries past the sample's input length are -inf (PyTorch leaves them unset).
** The gradient is PyTorch's: with respect to the logits behind log_softmax (exp(lp) - Σ αβ / p·Z),
** which is what the log_probs' gradient becomes once it goes through log_softmax's backward.
** Every shape was checked by the Meta kernel (sk_loss.c); this file checks target values.
** Computation is in double; log_probs of float32 are widened first and results narrowed.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

#include <math.h>
#include <stdlib.h>

typedef struct Ctc {
  const double *lp;      /* [T, N, C] */
  const int64_t *tg;     /* targets, int64 contiguous */
  const int64_t *off;    /* each sample's first target */
  int64_t tg_stride;     /* between one sample's targets (1) */
  const int64_t *il, *tl;
  int64_t tmax, n, nc, sp, blank; /* sp = 2·max_target + 1 */
  double *alpha, *nll;   /* [N, T, sp], [N] */
  const double *grad_out;
  double *beta, *grad;   /* [N, T, sp], [T, N, C] */
  int zero_infinity;
} Ctc;

static inline int64_t prime(const Ctc *c, int64_t b, int64_t s) {
  return s % 2 == 0 ? c->blank : c->tg[c->off[b] + (s / 2) * c->tg_stride];
}
static inline double lp_at(const Ctc *c, int64_t t, int64_t b, int64_t k) { return c->lp[(t * c->n + b) * c->nc + k]; }

/* log(e^a + e^b + e^c) without overflow; -inf when all are */
static inline double lse3(double a, double b, double d) {
  double m = a > b ? a : b;
  m = m > d ? m : d;
  if (m == -INFINITY) return -INFINITY;
  return log(exp(a - m) + exp(b - m) + exp(d - m)) + m;
}

static void forward_rows(void *ctx, int64_t b0, int64_t b1) {
  const Ctc *c = ctx;
  for (int64_t b = b0; b < b1; b++) {
    double *la = c->alpha + b * c->tmax * c->sp;
    for (int64_t i = 0; i < c->tmax * c->sp; i++) la[i] = -INFINITY;
    int64_t tin = c->il[b], L = c->tl[b];
    if (tin == 0) {
      c->nll[b] = L == 0 ? -0.0 : INFINITY;
      continue;
    }
    la[0] = lp_at(c, 0, b, c->blank);
    if (L > 0) la[1] = lp_at(c, 0, b, prime(c, b, 1));
    for (int64_t t = 1; t < tin; t++) {
      const double *prev = la + (t - 1) * c->sp;
      double *cur = la + t * c->sp;
      for (int64_t s = 0; s < 2 * L + 1; s++) {
        int64_t k = prime(c, b, s);
        double a2 = s > 0 ? prev[s - 1] : -INFINITY;
        double a3 = s > 1 && prime(c, b, s - 2) != k ? prev[s - 2] : -INFINITY;
        cur[s] = lse3(prev[s], a2, a3) + lp_at(c, t, b, k);
      }
    }
    const double *last = la + (tin - 1) * c->sp;
    c->nll[b] = L == 0 ? -last[0] : -lse3(last[2 * L], last[2 * L - 1], -INFINITY);
  }
}

/* log(e^a + e^b) into *acc, -inf standing for the empty sum */
static inline void log_add(double *acc, double v) {
  if (*acc == -INFINITY) { *acc = v; return; }
  double m = *acc > v ? *acc : v;
  if (m == -INFINITY) return;
  *acc = log(exp(*acc - m) + exp(v - m)) + m;
}

static void backward_rows(void *ctx, int64_t b0, int64_t b1) {
  const Ctc *c = ctx;
  for (int64_t b = b0; b < b1; b++) {
    double nll = c->nll[b];
    int64_t tin = c->il[b], L = c->tl[b], S = 2 * L + 1;
    double *lb = c->beta + b * c->tmax * c->sp;
    const double *la = c->alpha + b * c->tmax * c->sp;
#define G(t, k) c->grad[((t) * c->n + b) * c->nc + (k)]
    for (int64_t t = 0; t < c->tmax; t++)
      for (int64_t k = 0; k < c->nc; k++) G(t, k) = -INFINITY; /* log of the empty sum */
    if (c->zero_infinity && nll == INFINITY) {
      for (int64_t t = 0; t < c->tmax; t++)
        for (int64_t k = 0; k < c->nc; k++) G(t, k) = 0;
      continue;
    }
    for (int64_t i = 0; i < c->tmax * c->sp; i++) lb[i] = -INFINITY;
    if (tin > 0) {
      int64_t t = tin - 1;
      lb[t * c->sp + 2 * L] = lp_at(c, t, b, c->blank);
      G(t, c->blank) = la[t * c->sp + 2 * L] + lb[t * c->sp + 2 * L];
      if (L > 0) {
        int64_t k = prime(c, b, 2 * L - 1);
        lb[t * c->sp + 2 * L - 1] = lp_at(c, t, b, k);
        G(t, k) = la[t * c->sp + 2 * L - 1] + lb[t * c->sp + 2 * L - 1]; /* a blank and a label: different */
      }
    }
    for (int64_t t = tin - 2; t >= 0; t--) {
      const double *next = lb + (t + 1) * c->sp;
      double *cur = lb + t * c->sp;
      for (int64_t s = S - 1; s >= 0; s--) {
        int64_t k = prime(c, b, s);
        double b2 = s < S - 1 ? next[s + 1] : -INFINITY;
        double b3 = s < S - 2 && prime(c, b, s + 2) != k ? next[s + 2] : -INFINITY;
        cur[s] = lse3(next[s], b2, b3) + lp_at(c, t, b, k);
        log_add(&G(t, k), la[t * c->sp + s] + cur[s]);
      }
    }
    double gr = c->grad_out[b];
    for (int64_t t = 0; t < c->tmax; t++)
      for (int64_t k = 0; k < c->nc; k++) {
        double lp = lp_at(c, t, b, k);
        G(t, k) = t < tin ? (exp(lp) - exp(G(t, k) + nll - lp)) * gr : 0;
      }
#undef G
  }
}

/* The per-sample target offsets and the target value check (labels in [0, C)). */
static int ctc_setup(Ctc *c, const SkTensor *log_probs, const SkTensor *targets, SkIntList il, SkIntList tl, int64_t blank,
                     int64_t sp, int64_t **off) {
  c->tmax = log_probs->sizes[0], c->n = log_probs->sizes[1], c->nc = log_probs->sizes[2], c->sp = sp, c->blank = blank;
  c->il = il.data, c->tl = tl.data;
  *off = malloc((size_t)(c->n + 1) * sizeof **off);
  if (!*off) return sk_error("ctc_loss: out of memory");
  int64_t pos = 0;
  for (int64_t b = 0; b < c->n; b++) {
    (*off)[b] = targets->ndim == 1 ? pos : b * targets->sizes[1];
    pos += tl.data[b];
  }
  c->off = *off, c->tg_stride = 1;
  for (int64_t b = 0; b < c->n; b++)
    for (int64_t j = 0; j < tl.data[b]; j++) {
      int64_t v = c->tg[(*off)[b] + j];
      if (v < 0 || v >= c->nc)
        return sk_error("ctc_loss: target %lld of batch entry %lld is out of range for %lld classes", (long long)v,
                        (long long)b, (long long)c->nc);
    }
  return 0;
}

static int64_t grain_of(int64_t work) { return work > 0 && SK_GRAIN / work > 1 ? SK_GRAIN / work : 1; }

int sk_cpu__ctc_loss(SkTensor **result1, SkTensor **result2, const SkTensor *log_probs, const SkTensor *targets,
                     SkIntList input_lengths, SkIntList target_lengths, int64_t blank, int zero_infinity) {
  SkTensor *r[2] = {NULL, NULL};
  if (sk_meta_kernel__ctc_loss(&r[0], &r[1], log_probs, targets, input_lengths, target_lengths, blank, zero_infinity))
    return -1;
  int rc = sk_cpu_from_meta(r, 2);
  SkTensor *k[5] = {NULL};
  int64_t *off = NULL;
  Ctc c = {0};
  const SkTensor *lp = sk_cpu_operand(log_probs, SK_DTYPE_FLOAT64, &k[0], &rc);
  const SkTensor *tg = sk_cpu_operand(targets, SK_DTYPE_INT64, &k[1], &rc);
  SkTensor *nll = sk_cpu_target(r[0], SK_DTYPE_FLOAT64, &k[2], &rc), *alpha = sk_cpu_target(r[1], SK_DTYPE_FLOAT64, &k[3], &rc);
  if (!rc) {
    c.lp = sk_tensor_data(lp), c.tg = sk_tensor_data(tg);
    rc = ctc_setup(&c, log_probs, targets, input_lengths, target_lengths, blank, r[1]->sizes[2], &off);
  }
  if (!rc) {
    c.alpha = sk_tensor_data(alpha), c.nll = sk_tensor_data(nll);
    sk_parallel_for(0, c.n, grain_of(c.tmax * c.sp), forward_rows, &c);
    if (k[2]) rc = sk_copy_cpu(r[0], k[2]);
    if (!rc && k[3]) rc = sk_copy_cpu(r[1], k[3]);
  }
  free(off);
  for (int i = 0; i < 5; i++) sk_tensor_release(k[i]);
  if (rc) {
    sk_tensor_release(r[0]);
    sk_tensor_release(r[1]);
    return -1;
  }
  *result1 = r[0], *result2 = r[1];
  return 0;
}

int sk_cpu__ctc_loss_backward(SkTensor **result, const SkTensor *grad, const SkTensor *log_probs, const SkTensor *targets,
                              SkIntList input_lengths, SkIntList target_lengths, const SkTensor *neg_log_likelihood,
                              const SkTensor *log_alpha, int64_t blank, int zero_infinity) {
  SkTensor *r[1] = {NULL};
  if (sk_meta_kernel__ctc_loss_backward(&r[0], grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                                        log_alpha, blank, zero_infinity))
    return -1;
  int rc = sk_cpu_from_meta(r, 1);
  SkTensor *k[7] = {NULL};
  int64_t *off = NULL;
  Ctc c = {0};
  const SkTensor *lp = sk_cpu_operand(log_probs, SK_DTYPE_FLOAT64, &k[0], &rc);
  const SkTensor *tg = sk_cpu_operand(targets, SK_DTYPE_INT64, &k[1], &rc);
  const SkTensor *go = sk_cpu_operand(grad, SK_DTYPE_FLOAT64, &k[2], &rc);
  const SkTensor *nll = sk_cpu_operand(neg_log_likelihood, SK_DTYPE_FLOAT64, &k[3], &rc);
  const SkTensor *la = sk_cpu_operand(log_alpha, SK_DTYPE_FLOAT64, &k[4], &rc);
  SkTensor *gi = sk_cpu_target(r[0], SK_DTYPE_FLOAT64, &k[5], &rc);
  int64_t n = log_probs->sizes[1], sp = log_alpha->sizes[2], bsz = n * log_probs->sizes[0] * sp;
  if (!rc && !(k[6] = sk_tensor_empty(1, &bsz, SK_DTYPE_FLOAT64, sk_device(SK_DEVICE_CPU, 0)))) rc = -1;
  if (!rc) {
    c.lp = sk_tensor_data(lp), c.tg = sk_tensor_data(tg);
    rc = ctc_setup(&c, log_probs, targets, input_lengths, target_lengths, blank, sp, &off);
  }
  if (!rc) {
    c.grad_out = sk_tensor_data(go), c.nll = sk_tensor_data(nll), c.alpha = sk_tensor_data(la);
    c.beta = sk_tensor_data(k[6]), c.grad = sk_tensor_data(gi), c.zero_infinity = zero_infinity;
    sk_parallel_for(0, c.n, grain_of(c.tmax * (c.sp + c.nc)), backward_rows, &c);
    if (k[5]) rc = sk_copy_cpu(r[0], k[5]);
  }
  free(off);
  for (int i = 0; i < 7; i++) sk_tensor_release(k[i]);
  if (rc) {
    sk_tensor_release(r[0]);
    return -1;
  }
  *result = r[0];
  return 0;
}
