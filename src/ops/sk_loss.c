/*
** sk_loss.c — the losses and distances of torch.nn.functional as composites: binary_cross_entropy
** (and its backward), binary_cross_entropy_with_logits, l1, smooth_l1, huber, kl_div, poisson and
** gaussian nll, margin_ranking, hinge_embedding, soft_margin, multilabel_soft_margin,
** multi_margin, multilabel_margin, cosine_embedding, triplet_margin, cosine_similarity,
** pairwise_distance, pdist, cdist; ctc_loss over _ctc_loss, with _ctc_loss's shape checks and
** Meta kernels (its CPU kernels are in kernels/cpu/sk_cpu_ctc.c).
** Each formula is PyTorch 1.13's over dispatched ops, so it runs on every backend and records
** for autograd; binary_cross_entropy is a DefaultBackend composite because its gradient is
** PyTorch's clamped formula (derivatives.yaml), not the one its pieces would give.
** Checks that read values (binary_cross_entropy's input range, targets in range, a negative
** variance) read them on the CPU and are skipped on Meta tensors, whose values do not exist.
** Shapes in messages print as [2, 3] where PyTorch prints torch.Size([2, 3]).
** A loss of float16/bfloat16 inputs computes in float32 and rounds once (sk_tape_opmath), except
** l1 and hinge_embedding, whose one rounding step is their last (binary_cross_entropy, the
** multi(label)_margin losses, pdist and cdist take float32 and float64 only).
*/
#include "sk_plan.h"
#include "sk_kernels.h"
#include "sk_composite_util.h"
#include "sk_checked.h"
#include "sk_dispatch.h"

#include <math.h>
#include <stdlib.h>

#define T(call) SK_TAPE_STEP(tp, call)
#define NUM(v) sk_tape_number(tp, sk_scalar_float(v))
#define S1 sk_scalar_int(1)
#define FL(v) sk_scalar_float(v)
#define NO_DEVICE sk_device(-1, 0)
#define TAPE SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape
/* Ends a composite: *result = y (when every step succeeded), the rest released. */
#define FINISH(y)                                  \
  do {                                             \
    SkTensor *y_ = (y);                            \
    if (!tp->rc && y_) *result = sk_tape_take(tp, y_); \
    return sk_tape_free(tp);                       \
  } while (0)

static const int64_t no_dims[1] = {0};

/* {==== Shared steps ==== */
static SkTensor *reduced(SkTape *tp, const SkTensor *loss, int64_t red) {
  if (!loss) return NULL;
  if (red == SK_REDUCTION_MEAN) return T(sk_mean(&r, loss, -1));
  if (red == SK_REDUCTION_SUM) return T(sk_sum(&r, loss, -1));
  return (SkTensor *)loss;
}

/* v with its values clamped to at least lo and the gradient of the identity: PyTorch clamps in
** place under NoGradGuard (gaussian_nll_loss's var, cosine_similarity's norms). The correction
** clamp(v) - v is computed with Autograd excluded, so it carries no history. */
static SkTensor *clamp_min_nograd(SkTape *tp, const SkTensor *v, double lo) {
  if (!v) return NULL;
  SkKeySet old = sk_tls_exclude;
  sk_tls_exclude |= SK_KEYSET(SK_KEY_AUTOGRAD);
  SkTensor *d = T(sk_sub(&r, T(sk_clamp_min(&r, v, FL(lo))), v, S1));
  sk_tls_exclude = old;
  return T(sk_add(&r, v, d, S1));
}

/* Whether some element of the bool tensor m is true, read on the CPU; no on Meta. */
static int any_true(SkTape *tp, const SkTensor *m) {
  if (!m || tp->rc) return 0;
  if (sk_values_absent(m)) return 0;
  SkTensor *c = T(sk_to_device(&r, T(sk_any(&r, m)), sk_device(SK_DEVICE_CPU, 0), -1, 0, 0, -1));
  return c && *(const uint8_t *)sk_tensor_data(c) != 0;
}

/* An int64 tensor of n values on device d (built on the CPU, then moved). */
static SkTensor *int64_values(SkTape *tp, const int64_t *v, int64_t n, SkDevice d) {
  if (tp->rc) return NULL;
  SkTensor *c = sk_tensor_empty(1, &n, SK_DTYPE_INT64, sk_device(SK_DEVICE_CPU, 0));
  if (!sk_tape_keep(tp, c ? 0 : -1, c)) return NULL;
  if (n) memcpy(sk_tensor_data(c), v, (size_t)n * sizeof *v);
  return d.type == SK_DEVICE_CPU ? c : T(sk_to_device(&r, c, d, -1, 0, 0, -1));
}

/* v - x, v as a wrapped number (it takes part in type promotion as a Python number would) */
static SkTensor *rsub(SkTape *tp, const SkTensor *x, SkScalar v) { return T(sk_sub(&r, sk_tape_number(tp, v), x, S1)); }

static int need_floating(const SkTensor *t, const char *kernel) {
  if (t->dtype != SK_DTYPE_FLOAT32 && t->dtype != SK_DTYPE_FLOAT64)
    return sk_error("\"%s\" not implemented for '%s'", kernel, sk_dtype_torch_name(t->dtype));
  return 0;
}

static SkDType common_dtype(const SkTensor *a, const SkTensor *b) {
  const SkTensor *ts[2] = {a, b};
  return sk_result_type(2, ts);
}
/* }==== */

/* {==== binary_cross_entropy ==== */
/* torch.nn.functional's checks, then ATen's: equal shapes (an error since 1.13's deprecation
** became one: PyTorch 1.13 already raises it, as a ValueError), equal dtypes, float32/float64.
** weight broadcasts to the target's shape (torch.nn.functional expands it). */
static int bce_check(const SkTensor *self, const SkTensor *target) {
  char a[160], b[160];
  if (!sk_tensor_same_shape(self, target))
    return sk_error("Using a target size (%s) that is different to the input size (%s) is deprecated. Please ensure "
                    "they have the same size.", sk_shape_str(target->ndim, target->sizes, a, sizeof a),
                    sk_shape_str(self->ndim, self->sizes, b, sizeof b));
  if (target->dtype != self->dtype)
    return sk_error("Found dtype %s but expected %s", sk_dtype_torch_name(target->dtype), sk_dtype_torch_name(self->dtype));
  return need_floating(self, "binary_cross_entropy");
}

static SkTensor *weighted(SkTape *tp, SkTensor *loss, const SkTensor *weight, const SkTensor *like) {
  if (!weight || !loss) return loss;
  SkTensor *w = T(sk_expand(&r, weight, (SkIntList){like->sizes, like->ndim}, 0));
  return T(sk_mul(&r, loss, w));
}

/* (t - 1)·max(log(1 - x), -100) - t·max(log(x), -100), PyTorch's clamp of the logs */
int sk_default_binary_cross_entropy(SkTensor **result, const SkTensor *self, const SkTensor *target,
                                    const SkTensor *weight, const char *reduction) {
  int64_t red = 0; /* set by sk_reduction_of on success */
  if (sk_reduction_of(reduction, &red) || bce_check(self, target)) return -1;
  TAPE;
  SkTensor *inside = T(sk_logical_and(&r, T(sk_ge_Scalar(&r, self, sk_scalar_int(0))), T(sk_le_Scalar(&r, self, S1))));
  if (any_true(tp, T(sk_logical_not(&r, inside)))) {
    sk_tape_free(tp);
    return sk_error("all elements of input should be between 0 and 1");
  }
  SkTensor *log_x = T(sk_clamp_min(&r, T(sk_log(&r, self)), FL(-100)));
  SkTensor *log_1mx = T(sk_clamp_min(&r, T(sk_log1p(&r, T(sk_neg(&r, self)))), FL(-100)));
  SkTensor *loss = T(sk_sub(&r, T(sk_mul(&r, T(sk_sub_Scalar(&r, target, S1, S1)), log_1mx)), T(sk_mul(&r, target, log_x)), S1));
  FINISH(reduced(tp, weighted(tp, loss, weight, target), red));
}

/* PyTorch's binary_cross_entropy_backward: grad·(x - t) / max((1 - x)·x, 1e-12)·weight (/ numel) */
int sk_math_binary_cross_entropy_backward(SkTensor **result, const SkTensor *grad_output, const SkTensor *self,
                                          const SkTensor *target, const SkTensor *weight, const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red) || bce_check(self, target)) return -1;
  TAPE;
  SkTensor *den = T(sk_clamp_min(&r, T(sk_mul(&r, rsub(tp, self, S1), self)), FL(1e-12)));
  SkTensor *g = T(sk_div(&r, T(sk_mul(&r, grad_output, T(sk_sub(&r, self, target, S1)))), den));
  g = weighted(tp, g, weight, target);
  if (red == SK_REDUCTION_MEAN && g) g = T(sk_div_Scalar(&r, g, sk_scalar_int(self->numel)));
  FINISH(g);
}

/* (1 - t)·x + lw·(log(exp(-m) + exp(-x - m)) + m), m = max(-x, 0), lw = (pos_weight - 1)·t + 1; in opmath */
int sk_math_binary_cross_entropy_with_logits(SkTensor **result, const SkTensor *self, const SkTensor *target,
                                             const SkTensor *weight, const SkTensor *pos_weight, const char *reduction) {
  int64_t red = 0;
  char a[160], b[160];
  if (sk_reduction_of(reduction, &red)) return -1;
  if (!sk_tensor_same_shape(self, target))
    return sk_error("Target size (%s) must be the same as input size (%s)", sk_shape_str(target->ndim, target->sizes, a, sizeof a),
                    sk_shape_str(self->ndim, self->sizes, b, sizeof b));
  if (sk_check_cast(SK_DTYPE_FLOAT32, self->dtype, "self")) return -1; /* an integer self */
  const SkTensor *ts[4] = {self, target, weight, pos_weight};
  SkDType dt = sk_result_type(2 + (weight != NULL) + (pos_weight != NULL), ts);
  TAPE;
  const SkTensor *x = sk_tape_opmath(tp, self, dt), *t = sk_tape_opmath(tp, target, dt);
  SkTensor *m = T(sk_clamp_min(&r, T(sk_neg(&r, x)), sk_scalar_int(0)));
  SkTensor *lse = T(sk_add(&r, T(sk_log(&r, T(sk_add(&r, T(sk_exp(&r, T(sk_neg(&r, m)))),
                                                      T(sk_exp(&r, T(sk_sub(&r, T(sk_neg(&r, x)), m, S1)))), S1)))), m, S1));
  if (pos_weight) {
    SkTensor *pw = sk_tape_opmath(tp, pos_weight, dt);
    SkTensor *lw = T(sk_add_Scalar(&r, T(sk_mul(&r, T(sk_sub_Scalar(&r, pw, S1, S1)), t)), S1, S1));
    lse = T(sk_mul(&r, lw, lse));
  }
  SkTensor *loss = T(sk_add(&r, T(sk_mul(&r, rsub(tp, t, S1), x)), lse, S1));
  if (weight) loss = T(sk_mul(&r, loss, sk_tape_opmath(tp, weight, dt)));
  FINISH(sk_tape_round(tp, reduced(tp, loss, red), dt));
}
/* }==== */

/* {==== Regression losses: l1, smooth_l1, huber ==== */
int sk_math_l1_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  TAPE;
  FINISH(reduced(tp, T(sk_abs(&r, T(sk_sub(&r, self, target, S1)))), red));
}

/* z = |x - t|; z < beta ? z²/(2·beta) : z - beta/2 (huber: z < delta ? z²/2 : delta·(z - delta/2)) */
static int smooth(SkTensor **result, const SkTensor *self, const SkTensor *target, const char *reduction, double b,
                  int huber) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  if (huber && !(b > 0)) return sk_error("huber_loss does not support non-positive values for delta.");
  if (!huber && b < 0) return sk_error("smooth_l1_loss does not support negative values for beta.");
  if (!huber && b == 0) return sk_math_l1_loss(result, self, target, reduction);
  SkDType dt = common_dtype(self, target);
  if (!sk_dtype_is_floating(dt))
    return sk_error("\"%s\" not implemented for '%s'", huber ? "huber_cpu" : "smooth_l1_cpu", sk_dtype_torch_name(dt));
  TAPE;
  const SkTensor *x = sk_tape_opmath(tp, self, dt);
  const SkTensor *t = sk_tape_opmath(tp, target, dt);
  SkTensor *z = T(sk_abs(&r, T(sk_sub(&r, x, t, S1))));
  SkTensor *sq = T(sk_mul_Scalar(&r, T(sk_mul(&r, z, z)), FL(huber ? 0.5 : 0.5 / b)));
  SkTensor *lin = huber ? T(sk_mul_Scalar(&r, T(sk_sub_Scalar(&r, z, FL(0.5 * b), S1)), FL(b)))
                        : T(sk_sub_Scalar(&r, z, FL(0.5 * b), S1));
  FINISH(sk_tape_round(tp, reduced(tp, T(sk_where_self(&r, T(sk_lt_Scalar(&r, z, FL(b))), sq, lin)), red), dt));
}

int sk_math_smooth_l1_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, const char *reduction,
                           double beta) {
  return smooth(result, self, target, reduction, beta, 0);
}

int sk_math_huber_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, const char *reduction,
                       double delta) {
  return smooth(result, self, target, reduction, delta, 1);
}
/* }==== */

/* {==== Likelihood losses: kl_div, poisson_nll, gaussian_nll ==== */
/* log_target: exp(t)·(t - x); else xlogy(t, t) - t·x, xlogy as t·log(t == 0 ? 1 : t) (0 at t = 0,
** NaN stays NaN). "batchmean" (torch.nn.functional's) is the sum over the batch size. */
int sk_math_kl_div(SkTensor **result, const SkTensor *self, const SkTensor *target, const char *reduction, int log_target) {
  int64_t red = 0;
  int batchmean = reduction && strcmp(reduction, "batchmean") == 0;
  if (batchmean) red = SK_REDUCTION_SUM;
  else if (sk_reduction_of(reduction, &red)) return -1;
  if (!sk_dtype_is_floating(self->dtype) || !sk_dtype_is_floating(target->dtype))
    return sk_error("kl_div: Integral inputs not supported.");
  SkDType dt = common_dtype(self, target);
  TAPE;
  const SkTensor *x = sk_tape_opmath(tp, self, dt);
  const SkTensor *t = sk_tape_opmath(tp, target, dt);
  SkTensor *loss;
  if (log_target) loss = T(sk_mul(&r, T(sk_exp(&r, t)), T(sk_sub(&r, t, x, S1))));
  else {
    SkTensor *safe = T(sk_where_self(&r, T(sk_eq_Scalar(&r, t, sk_scalar_int(0))), NUM(1), t));
    loss = T(sk_sub(&r, T(sk_mul(&r, t, T(sk_log(&r, safe)))), T(sk_mul(&r, t, x)), S1));
  }
  SkTensor *y = reduced(tp, loss, red);
  if (batchmean && self->ndim > 0) y = T(sk_div_Scalar(&r, y, sk_scalar_int(self->sizes[0])));
  FINISH(sk_tape_round(tp, y, dt));
}

/* log_input: exp(x) - t·x; else x - t·log(x + eps); full adds Stirling's t·log(t) - t + log(2πt)/2
** where t > 1 */
int sk_math_poisson_nll_loss(SkTensor **result, const SkTensor *input, const SkTensor *target, int log_input, int full,
                             double eps, const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  SkDType dt = common_dtype(input, target);
  TAPE;
  const SkTensor *x = sk_tape_opmath(tp, input, dt);
  const SkTensor *t = sk_tape_opmath(tp, target, dt);
  SkTensor *loss = log_input ? T(sk_sub(&r, T(sk_exp(&r, x)), T(sk_mul(&r, t, x)), S1))
                             : T(sk_sub(&r, x, T(sk_mul(&r, t, T(sk_log(&r, T(sk_add_Scalar(&r, x, FL(eps), S1)))))), S1));
  if (full) {
    SkTensor *st = T(sk_sub(&r, T(sk_mul(&r, t, T(sk_log(&r, t)))), t, S1));
    st = T(sk_add(&r, st, T(sk_mul_Scalar(&r, T(sk_log(&r, T(sk_mul_Scalar(&r, t, FL(2 * M_PI))))), FL(0.5))), S1));
    loss = T(sk_add(&r, loss, T(sk_masked_fill_Scalar(&r, st, T(sk_le_Scalar(&r, t, S1)), sk_scalar_int(0))), S1));
  }
  FINISH(sk_tape_round(tp, reduced(tp, loss, red), dt));
}

/* torch.nn.functional's: var of input's shape, or of it without the last dim (unsqueezed), or
** with the last dim 1; var clamped to eps without touching its gradient;
** (log(var) + (x - t)²/var)/2, plus log(2π)/2 when full */
int sk_math_gaussian_nll_loss(SkTensor **result, const SkTensor *input, const SkTensor *target, const SkTensor *var,
                              int full, double eps, const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  int same = sk_tensor_same_shape(var, input), k = input->ndim - 1;
  int lead = k >= 0 && var->ndim >= k && memcmp(var->sizes, input->sizes, (size_t)k * sizeof *var->sizes) == 0;
  int unsq = !same && lead && var->ndim == k;
  if (!same && !unsq && !(lead && var->ndim == input->ndim && var->sizes[k] == 1))
    return sk_error("var is of incorrect size");
  const SkTensor *ts[3] = {input, target, var};
  SkDType dt = sk_result_type(3, ts);
  TAPE;
  const SkTensor *x = sk_tape_opmath(tp, input, dt);
  const SkTensor *t = sk_tape_opmath(tp, target, dt);
  const SkTensor *vr = sk_tape_opmath(tp, var, dt);
  const SkTensor *v = unsq ? T(sk_unsqueeze(&r, vr, -1)) : vr;
  if (v && any_true(tp, T(sk_lt_Scalar(&r, v, sk_scalar_int(0))))) {
    sk_tape_free(tp);
    return sk_error("var has negative entry/entries");
  }
  SkTensor *vc = clamp_min_nograd(tp, v, eps);
  SkTensor *d = T(sk_sub(&r, x, t, S1));
  SkTensor *loss = T(sk_mul_Scalar(&r, T(sk_add(&r, T(sk_log(&r, vc)), T(sk_div(&r, T(sk_mul(&r, d, d)), vc)), S1)), FL(0.5)));
  if (full) loss = T(sk_add_Scalar(&r, loss, FL(0.5 * log(2 * M_PI)), S1));
  FINISH(sk_tape_round(tp, reduced(tp, loss, red), dt));
}
/* }==== */

/* {==== Margin losses ==== */
/* max(0, -t·(x1 - x2) + margin) */
int sk_math_margin_ranking_loss(SkTensor **result, const SkTensor *input1, const SkTensor *input2, const SkTensor *target,
                                double margin, const char *reduction) {
  int64_t red = 0;
  char a[128], b[128], c[128];
  if (sk_reduction_of(reduction, &red)) return -1;
  if (input1->ndim != input2->ndim || input1->ndim != target->ndim)
    return sk_error("margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: %s, "
                    "input2: %s, target: %s ", sk_shape_str(input1->ndim, input1->sizes, a, sizeof a),
                    sk_shape_str(input2->ndim, input2->sizes, b, sizeof b), sk_shape_str(target->ndim, target->sizes, c, sizeof c));
  const SkTensor *ts[3] = {input1, input2, target};
  SkDType dt = sk_result_type(3, ts);
  TAPE;
  const SkTensor *x1 = sk_tape_opmath(tp, input1, dt);
  const SkTensor *x2 = sk_tape_opmath(tp, input2, dt);
  const SkTensor *t = sk_tape_opmath(tp, target, dt);
  SkTensor *v = T(sk_add_Scalar(&r, T(sk_mul(&r, T(sk_neg(&r, t)), T(sk_sub(&r, x1, x2, S1)))), FL(margin), S1));
  FINISH(sk_tape_round(tp, reduced(tp, T(sk_clamp_min(&r, v, sk_scalar_int(0))), red), dt));
}

/* (t != 1 ? max(0, margin - x) : 0) + (t != -1 ? x : 0) */
int sk_math_hinge_embedding_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, double margin,
                                 const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  TAPE;
  SkTensor *zero = sk_tape_number(tp, sk_scalar_int(0));
  SkTensor *mc = T(sk_clamp_min(&r, rsub(tp, self, FL(margin)), sk_scalar_int(0)));
  SkTensor *om = T(sk_where_self(&r, T(sk_ne_Scalar(&r, target, S1)), mc, zero));
  SkTensor *os = T(sk_where_self(&r, T(sk_ne_Scalar(&r, target, sk_scalar_int(-1))), self, zero));
  FINISH(reduced(tp, T(sk_add(&r, om, os, S1)), red));
}

/* log(1 + exp(-t·x)) */
int sk_math_soft_margin_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  SkDType dt = common_dtype(self, target);
  TAPE;
  const SkTensor *x = sk_tape_opmath(tp, self, dt);
  const SkTensor *t = sk_tape_opmath(tp, target, dt);
  FINISH(sk_tape_round(tp, reduced(tp, T(sk_log1p(&r, T(sk_exp(&r, T(sk_neg(&r, T(sk_mul(&r, x, t)))))))), red), dt));
}

/* -(t·logσ(x) + (1 - t)·logσ(-x))·weight, the mean over the last (class) dim */
int sk_math_multilabel_soft_margin_loss(SkTensor **result, const SkTensor *input, const SkTensor *target,
                                        const SkTensor *weight, const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  if (input->ndim == 0) return sk_error("dimension specified as -1 but tensor has no dimensions");
  int64_t cd = input->ndim - 1, nc = input->sizes[cd];
  const SkTensor *ts[3] = {input, target, weight};
  SkDType dt = sk_result_type(weight ? 3 : 2, ts);
  TAPE;
  const SkTensor *x = sk_tape_opmath(tp, input, dt);
  const SkTensor *t = sk_tape_opmath(tp, target, dt);
  const SkTensor *w = sk_tape_opmath(tp, weight, dt);
  SkTensor *pos = T(sk_mul(&r, t, T(sk_log_sigmoid(&r, x))));
  SkTensor *neg = T(sk_mul(&r, rsub(tp, t, S1), T(sk_log_sigmoid(&r, T(sk_neg(&r, x))))));
  SkTensor *loss = T(sk_neg(&r, T(sk_add(&r, pos, neg, S1))));
  if (w) loss = T(sk_mul(&r, loss, w));
  loss = T(sk_div_Scalar(&r, T(sk_sum_dim_IntList(&r, loss, (SkIntList){&cd, 1}, 0, -1)), sk_scalar_int(nc)));
  FINISH(sk_tape_round(tp, reduced(tp, loss, red), dt));
}

/* ATen's multi_margin_loss_shape_check and multilabel_margin_loss_shape_check: [N, C] or [C]
** (C > 0) or a 0-dim input; N targets (multi) or a target of self's shape (multilabel), int64. */
static int margin_shape_check(const SkTensor *self, const SkTensor *target, int multilabel, int64_t *nframe, int64_t *dim) {
  char a[128];
  int nd = self->ndim;
  if (!((nd == 2 && self->sizes[1] != 0) || (nd == 1 && self->sizes[0] != 0) || nd == 0))
    return sk_error("Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s",
                    sk_shape_str(nd, self->sizes, a, sizeof a));
  *nframe = nd <= 1 ? 1 : self->sizes[0];
  *dim = nd == 0 ? 1 : self->sizes[nd - 1];
  if (!multilabel && !(target->ndim <= 1 && target->numel == *nframe))
    return sk_error("inconsistent target size, got: %s", sk_shape_str(target->ndim, target->sizes, a, sizeof a));
  if (multilabel && !(nd <= 1 ? target->ndim <= 1 && target->numel == *dim
                              : target->ndim == 2 && target->sizes[0] == *nframe && target->sizes[1] == *dim))
    return sk_error("inconsistent size %s for argument #2 'target'", sk_shape_str(target->ndim, target->sizes, a, sizeof a));
  if (target->dtype != SK_DTYPE_INT64)
    return sk_error("expected scalar type Long but found %s", sk_dtype_torch_name(target->dtype));
  return 0;
}

/* Σ_{i≠y} max(0, margin - x[y] + x[i])^p·w[y] / C per sample (p 1 or 2), shaped as target */
int sk_math_multi_margin_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, SkScalar p, SkScalar margin,
                              const SkTensor *weight, const char *reduction) {
  int64_t red = 0, nframe = 0, dim = 0;
  char a[128];
  double pv = sk_scalar_to_double(p);
  if (sk_reduction_of(reduction, &red)) return -1;
  if (pv != 1 && pv != 2) return sk_error("only p == 1 and p == 2 supported");
  if (margin_shape_check(self, target, 0, &nframe, &dim) ||
      need_floating(self, "multi_margin_loss_cpu_kernel"))
    return -1;
  if (weight && !(weight->ndim <= 1 && weight->numel == dim))
    return sk_error("inconsistent weight size, expected %lld but got %s", (long long)dim,
                    sk_shape_str(weight->ndim, weight->sizes, a, sizeof a));
  TAPE;
  int64_t s2[2] = {nframe, dim}, s1[2] = {nframe, 1}, flat = nframe;
  SkTensor *x = T(sk_reshape(&r, self, (SkIntList){s2, 2}));
  SkTensor *y = T(sk_reshape(&r, target, (SkIntList){s1, 2}));
  SkTensor *bad = y ? T(sk_logical_or(&r, T(sk_lt_Scalar(&r, y, sk_scalar_int(0))), T(sk_ge_Scalar(&r, y, sk_scalar_int(dim))))) : NULL;
  if (any_true(tp, bad)) {
    sk_tape_free(tp);
    return sk_error("target out of range");
  }
  SkTensor *z = T(sk_clamp_min(&r, T(sk_add_Scalar(&r, T(sk_sub(&r, x, T(sk_gather(&r, x, 1, y, 0)), S1)), margin, S1)),
                               sk_scalar_int(0)));
  if (pv == 2) z = T(sk_mul(&r, z, z));
  if (weight) {
    SkTensor *w1 = T(sk_reshape(&r, weight, (SkIntList){&dim, 1}));
    z = T(sk_mul(&r, z, T(sk_reshape(&r, T(sk_index_select(&r, w1, 0, T(sk_reshape(&r, y, (SkIntList){&flat, 1})))),
                                      (SkIntList){s1, 2}))));
  }
  SkTensor *cls = T(sk_arange(&r, sk_scalar_int(dim), SK_DTYPE_INT64, -1, self->device, -1));
  z = T(sk_where_self(&r, T(sk_eq(&r, cls, y)), sk_tape_number(tp, sk_scalar_int(0)), z));
  int64_t one = 1;
  SkTensor *loss = T(sk_div_Scalar(&r, T(sk_sum_dim_IntList(&r, z, (SkIntList){&one, 1}, 0, -1)), sk_scalar_int(dim)));
  if (red == SK_REDUCTION_NONE && loss) loss = T(sk_reshape(&r, loss, (SkIntList){target->sizes, target->ndim}));
  FINISH(reduced(tp, loss, red));
}

/* Σ_{j<k} Σ_{i not a target} max(0, 1 - (x[y_j] - x[i])) / C per sample, y_0..y_{k-1} the targets
** before the first -1 (ATen's multilabel_margin_loss; shapes as multi_margin's, target like self) */
int sk_math_multilabel_margin_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, const char *reduction) {
  int64_t red = 0, nframe = 0, dim = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  if (margin_shape_check(self, target, 1, &nframe, &dim) ||
      need_floating(self, "multilabel_margin_loss_forward_out_frame"))
    return -1;
  TAPE;
  int64_t s2[2] = {nframe, dim}, s3j[3] = {nframe, dim, 1}, s3i[3] = {nframe, 1, dim};
  SkTensor *x = T(sk_reshape(&r, self, (SkIntList){s2, 2}));
  SkTensor *y = T(sk_reshape(&r, target, (SkIntList){s2, 2}));
  SkTensor *bad = y ? T(sk_logical_or(&r, T(sk_lt_Scalar(&r, y, sk_scalar_int(-1))), T(sk_ge_Scalar(&r, y, sk_scalar_int(dim))))) : NULL;
  if (any_true(tp, bad)) {
    sk_tape_free(tp);
    return sk_error("argument #2 'target' is out of range");
  }
  /* valid[n, j]: j comes before the first -1 */
  SkTensor *valid = T(sk_cumprod(&r, T(sk_ne_Scalar(&r, y, sk_scalar_int(-1))), 1, SK_DTYPE_INT64));
  SkTensor *ys = T(sk_clamp_min(&r, y, sk_scalar_int(0)));
  /* is_target[n, i] = any_j valid[n, j] and y[n, j] == i */
  SkTensor *cls = T(sk_arange(&r, sk_scalar_int(dim), SK_DTYPE_INT64, -1, self->device, -1));
  SkTensor *hit = T(sk_logical_and(&r, T(sk_eq(&r, T(sk_reshape(&r, ys, (SkIntList){s3j, 3})), cls)),
                                   T(sk_reshape(&r, valid, (SkIntList){s3j, 3}))));
  SkTensor *is_target = T(sk_any_dim(&r, hit, 1, 0));
  SkTensor *xy = T(sk_reshape(&r, T(sk_gather(&r, x, 1, ys, 0)), (SkIntList){s3j, 3}));
  SkTensor *z = T(sk_clamp_min(&r, T(sk_add(&r, rsub(tp, xy, S1), T(sk_reshape(&r, x, (SkIntList){s3i, 3})), S1)),
                               sk_scalar_int(0)));
  SkTensor *keep = T(sk_logical_and(&r, T(sk_reshape(&r, valid, (SkIntList){s3j, 3})),
                                    T(sk_logical_not(&r, T(sk_reshape(&r, is_target, (SkIntList){s3i, 3}))))));
  z = T(sk_where_self(&r, keep, z, sk_tape_number(tp, sk_scalar_int(0))));
  int64_t both[2] = {1, 2};
  SkTensor *loss = T(sk_div_Scalar(&r, T(sk_sum_dim_IntList(&r, z, (SkIntList){both, 2}, 0, -1)), sk_scalar_int(dim)));
  if (red == SK_REDUCTION_NONE && loss) {
    int64_t n1 = nframe;
    loss = self->ndim == 2 ? T(sk_reshape(&r, loss, (SkIntList){&n1, 1})) : T(sk_reshape(&r, loss, (SkIntList){no_dims, 0}));
  }
  FINISH(reduced(tp, loss, red));
}

/* cos = Σ x1·x2 / sqrt((Σ x1² + ε)(Σ x2² + ε)), ε = 1e-12; t == 1 ? 1 - cos : t == -1 ? max(0, cos - margin) : 0 */
int sk_math_cosine_embedding_loss(SkTensor **result, const SkTensor *input1, const SkTensor *input2, const SkTensor *target,
                                  double margin, const char *reduction) {
  int64_t red = 0;
  char a[128], b[128];
  if (sk_reduction_of(reduction, &red)) return -1;
  int64_t td = target->ndim;
  if (td > 1) return sk_error("0D or 1D target tensor expected, multi-target not supported");
  if (td == 1 ? !(input1->ndim == 2 && input2->ndim == 2) : !(input1->ndim == 1 && input2->ndim == 1))
    return sk_error("%s target tensor expects %s input tensors, but found inputs with sizes %s and %s.", td ? "1D" : "0D",
                    td ? "2D" : "1D", sk_shape_str(input1->ndim, input1->sizes, a, sizeof a),
                    sk_shape_str(input2->ndim, input2->sizes, b, sizeof b));
  const SkTensor *ts[3] = {input1, input2, target};
  SkDType dt = sk_result_type(3, ts);
  TAPE;
  const SkTensor *x1 = sk_tape_opmath(tp, input1, dt);
  const SkTensor *x2 = sk_tape_opmath(tp, input2, dt);
  const SkTensor *t = sk_tape_opmath(tp, target, dt);
  SkIntList d = {&td, 1};
  SkTensor *prod = T(sk_sum_dim_IntList(&r, T(sk_mul(&r, x1, x2)), d, 0, -1));
  SkTensor *m1 = T(sk_add_Scalar(&r, T(sk_sum_dim_IntList(&r, T(sk_mul(&r, x1, x1)), d, 0, -1)), FL(1e-12), S1));
  SkTensor *m2 = T(sk_add_Scalar(&r, T(sk_sum_dim_IntList(&r, T(sk_mul(&r, x2, x2)), d, 0, -1)), FL(1e-12), S1));
  SkTensor *cos = T(sk_div(&r, prod, T(sk_sqrt(&r, T(sk_mul(&r, m1, m2))))));
  SkTensor *zero = sk_tape_number(tp, sk_scalar_int(0));
  SkTensor *pos = T(sk_where_self(&r, T(sk_eq_Scalar(&r, t, S1)), rsub(tp, cos, S1), zero));
  SkTensor *neg = T(sk_where_self(&r, T(sk_eq_Scalar(&r, t, sk_scalar_int(-1))),
                                  T(sk_clamp_min(&r, T(sk_sub_Scalar(&r, cos, FL(margin), S1)), sk_scalar_int(0))), zero));
  FINISH(sk_tape_round(tp, reduced(tp, T(sk_add(&r, pos, neg, S1)), red), dt));
}
/* }==== */

/* {==== Distances ==== */
/* ‖x1 - x2 + eps‖_p over the last dim of the broadcast shape */
static SkTensor *pairwise(SkTape *tp, const SkTensor *x1, const SkTensor *x2, double p, double eps, int keepdim) {
  int64_t last = (x1->ndim > x2->ndim ? x1->ndim : x2->ndim) - 1;
  SkTensor *d = T(sk_add_Scalar(&r, T(sk_sub(&r, x1, x2, S1)), FL(eps), S1));
  return T(sk_norm_ScalarOpt_dim(&r, d, FL(p), (SkIntList){&last, 1}, keepdim));
}

int sk_math_pairwise_distance(SkTensor **result, const SkTensor *x1, const SkTensor *x2, double p, double eps, int keepdim) {
  SkDType dt = common_dtype(x1, x2);
  TAPE;
  const SkTensor *a = sk_tape_opmath(tp, x1, dt);
  const SkTensor *b = sk_tape_opmath(tp, x2, dt);
  FINISH(sk_tape_round(tp, pairwise(tp, a, b, p, eps, keepdim), dt));
}

/* max(0, margin + d(a, p) - d(a, n)), with swap d(a, n) = min(d(a, n), d(p, n)) */
int sk_math_triplet_margin_loss(SkTensor **result, const SkTensor *anchor, const SkTensor *positive,
                                const SkTensor *negative, double margin, double p, double eps, int swap,
                                const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  if (anchor->ndim != positive->ndim || positive->ndim != negative->ndim)
    return sk_error("All inputs should have same dimension but got %dD, %dD and %dD inputs.", anchor->ndim,
                    positive->ndim, negative->ndim);
  const SkTensor *ts[3] = {anchor, positive, negative};
  SkDType dt = sk_result_type(3, ts);
  TAPE;
  const SkTensor *a = sk_tape_opmath(tp, anchor, dt);
  const SkTensor *ps = sk_tape_opmath(tp, positive, dt);
  const SkTensor *ng = sk_tape_opmath(tp, negative, dt);
  SkTensor *dp = pairwise(tp, a, ps, p, eps, 0), *dn = pairwise(tp, a, ng, p, eps, 0);
  if (swap) dn = T(sk_minimum(&r, dn, pairwise(tp, ps, ng, p, eps, 0)));
  SkTensor *v = T(sk_add_Scalar(&r, T(sk_sub(&r, dp, dn, S1)), FL(margin), S1));
  FINISH(sk_tape_round(tp, reduced(tp, T(sk_clamp_min(&r, v, sk_scalar_int(0))), red), dt));
}

/* Σ x1·x2 / sqrt(max(Σ x1², ε²)·max(Σ x2², ε²)) over dim, in the common floating dtype's opmath */
int sk_math_cosine_similarity(SkTensor **result, const SkTensor *x1, const SkTensor *x2, int64_t dim, double eps) {
  SkDType dt = common_dtype(x1, x2);
  if (!sk_dtype_is_floating(dt))
    return sk_error("expected common dtype to be floating point, yet common dtype is %s", sk_dtype_torch_name(dt));
  TAPE;
  const SkTensor *a = sk_tape_opmath(tp, x1, dt);
  const SkTensor *b = sk_tape_opmath(tp, x2, dt);
  SkTensor *prod = T(sk_mul(&r, a, b)); /* broadcasts; x1², x2² are expanded to its shape */
  if (!prod) FINISH(NULL);
  int64_t d;
  if (sk_wrap_dim(dim, prod->ndim, "dim", &d)) {
    sk_tape_free(tp);
    return -1;
  }
  SkIntList dl = {&d, 1};
  SkTensor *e1 = T(sk_expand(&r, T(sk_mul(&r, a, a)), (SkIntList){prod->sizes, prod->ndim}, 0));
  SkTensor *e2 = T(sk_expand(&r, T(sk_mul(&r, b, b)), (SkIntList){prod->sizes, prod->ndim}, 0));
  int sdt = (int)sk_opmath_dtype(dt);
  SkTensor *n1 = clamp_min_nograd(tp, T(sk_sum_dim_IntList(&r, e1, dl, 0, sdt)), eps * eps);
  SkTensor *n2 = clamp_min_nograd(tp, T(sk_sum_dim_IntList(&r, e2, dl, 0, sdt)), eps * eps);
  SkTensor *num = T(sk_sum_dim_IntList(&r, prod, dl, 0, sdt));
  FINISH(sk_tape_round(tp, T(sk_mul(&r, num, T(sk_rsqrt(&r, T(sk_mul(&r, n1, n2)))))), dt));
}

/* ‖x_i - x_j‖_p for i < j, in row-major order of (i, j) */
int sk_math_pdist(SkTensor **result, const SkTensor *self, double p) {
  if (self->ndim != 2) return sk_error("pdist only supports 2D tensors, got: %dD", self->ndim);
  if (!sk_dtype_is_floating(self->dtype)) return sk_error("pdist only supports floating-point dtypes");
  if (!(p >= 0)) return sk_error("pdist only supports non-negative p values");
  if (need_floating(self, "pdist")) return -1;
  /* n·(n - 1)/2 pairs of two int64 indices, counted in checked arithmetic (an expanded self may
  ** have 2^62 rows): a count past int64 is more memory than exists */
  int64_t n = self->sizes[0], np = 0, bytes = 0, k = 0;
  if (n > 1 && (sk_mul_overflow(n % 2 ? n : n / 2, n % 2 ? (n - 1) / 2 : n - 1, &np) ||
                sk_mul_overflow(np, 2 * (int64_t)sizeof(int64_t), &bytes)))
    return sk_error("pdist: the pairs of %lld rows are more than memory can hold", (long long)n);
  int64_t *ij = malloc((size_t)bytes + sizeof *ij);
  if (!ij) return sk_error("pdist: out of memory for %lld pairs", (long long)np);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) ij[k] = i, ij[np + k] = j, k++;
  TAPE;
  SkTensor *I = int64_values(tp, ij, np, self->device), *J = int64_values(tp, ij + np, np, self->device);
  free(ij);
  SkTensor *d = T(sk_sub(&r, T(sk_index_select(&r, self, 0, I)), T(sk_index_select(&r, self, 0, J)), S1));
  int64_t one = 1;
  FINISH(T(sk_norm_ScalarOpt_dim(&r, d, FL(p), (SkIntList){&one, 1}, 0)));
}

/* PyTorch's _euclidean_dist: sqrt of [-2·x1, ‖x1‖², 1] @ [x2, 1, ‖x2‖²]ᵀ clamped to 0 */
static SkTensor *euclidean_mm(SkTape *tp, const SkTensor *x1, const SkTensor *x2) {
  int64_t last = -1;
  SkIntList ld = {&last, 1};
  SkTensor *n1 = T(sk_sum_dim_IntList(&r, T(sk_mul(&r, x1, x1)), ld, 1, -1));
  SkTensor *n2 = T(sk_sum_dim_IntList(&r, T(sk_mul(&r, x2, x2)), ld, 1, -1));
  SkTensor *o1 = n1 ? T(sk_ones_like(&r, n1, -1, -1, NO_DEVICE, -1, -1)) : NULL;
  SkTensor *o2 = n2 ? T(sk_ones_like(&r, n2, -1, -1, NO_DEVICE, -1, -1)) : NULL;
  SkTensor *m1 = T(sk_mul_Scalar(&r, x1, sk_scalar_int(-2)));
  if (tp->rc) return NULL;
  SkTensor *a[3] = {m1, n1, o1}, *b[3] = {(SkTensor *)x2, o2, n2};
  SkTensor *c1 = T(sk_cat(&r, (SkTensorList){a, 3}, -1)), *c2 = T(sk_cat(&r, (SkTensorList){b, 3}, -1));
  SkTensor *m = T(sk_matmul(&r, c1, T(sk_transpose_int(&r, c2, -1, -2))));
  SkTensor *sq = T(sk_clamp_min(&r, m, sk_scalar_int(0)));
  SkTensor *zero = T(sk_eq_Scalar(&r, sq, sk_scalar_int(0)));
  /* sqrt of a safe 1 where the distance is 0, so its gradient there is 0 (PyTorch's backward masks it) */
  SkTensor *root = T(sk_sqrt(&r, T(sk_where_self(&r, zero, sk_tape_number(tp, sk_scalar_int(1)), sq))));
  return T(sk_where_self(&r, zero, sk_tape_number(tp, sk_scalar_int(0)), root));
}

/* [B..., P, M] × [B..., R, M] → [B..., P, R], batch dims broadcast; p = 2 through matmul where
** compute_mode allows (None/0: past 25 rows, 1: always, 2: never), else ‖x1_p - x2_r‖_p */
int sk_math_cdist(SkTensor **result, const SkTensor *x1, const SkTensor *x2, double p, SkOptInt compute_mode) {
  if (x1->ndim < 2) return sk_error("cdist only supports at least 2D tensors, X1 got: %dD", x1->ndim);
  if (x2->ndim < 2) return sk_error("cdist only supports at least 2D tensors, X2 got: %dD", x2->ndim);
  int64_t c1 = x1->sizes[x1->ndim - 1], c2 = x2->sizes[x2->ndim - 1];
  if (c1 != c2) return sk_error("X1 and X2 must have the same number of columns. X1: %lld X2: %lld", (long long)c1, (long long)c2);
  int64_t mode = compute_mode.has ? compute_mode.v : 0;
  if (!sk_dtype_is_floating(x1->dtype)) return sk_error("cdist only supports floating-point dtypes, X1 got: %s", sk_dtype_torch_name(x1->dtype));
  if (!sk_dtype_is_floating(x2->dtype)) return sk_error("cdist only supports floating-point dtypes, X2 got: %s", sk_dtype_torch_name(x2->dtype));
  if (x1->dtype != x2->dtype)
    return sk_error("expected scalar type %s but found %s", sk_dtype_torch_name(x1->dtype), sk_dtype_torch_name(x2->dtype));
  if (!(p >= 0)) return sk_error("cdist only supports non-negative p values");
  if (mode < 0 || mode > 2) return sk_error("possible modes: 0, 1, 2, but was: %lld", (long long)mode);
  if (need_floating(x1, "cdist")) return -1;
  int64_t r1 = x1->sizes[x1->ndim - 2], r2 = x2->sizes[x2->ndim - 2];
  TAPE;
  SkTensor *y;
  if (p == 2 && x1->numel && x2->numel && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)))) {
    /* batch dims expanded to their broadcast shape (the sub of the direct form does this itself) */
    int nb = (x1->ndim > x2->ndim ? x1->ndim : x2->ndim) - 2;
    int64_t s1[SK_MAX_DIMS], s2[SK_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
      int i1 = i - (nb - (x1->ndim - 2)), i2 = i - (nb - (x2->ndim - 2));
      int64_t b1 = i1 >= 0 ? x1->sizes[i1] : 1, b2 = i2 >= 0 ? x2->sizes[i2] : 1;
      if (b1 != b2 && b1 != 1 && b2 != 1) {
        sk_tape_free(tp);
        return sk_error("The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                        (long long)b1, (long long)b2, i);
      }
      s1[i] = s2[i] = b1 == 1 ? b2 : b1;
    }
    s1[nb] = r1, s2[nb] = r2, s1[nb + 1] = s2[nb + 1] = c1;
    y = euclidean_mm(tp, T(sk_expand(&r, x1, (SkIntList){s1, nb + 2}, 0)), T(sk_expand(&r, x2, (SkIntList){s2, nb + 2}, 0)));
  } else {
    SkTensor *d = T(sk_sub(&r, T(sk_unsqueeze(&r, x1, -2)), T(sk_unsqueeze(&r, x2, -3)), S1));
    int64_t last = -1;
    y = T(sk_norm_ScalarOpt_dim(&r, d, FL(p), (SkIntList){&last, 1}, 0));
  }
  FINISH(y);
}
/* }==== */

/* {==== ctc_loss ==== */
/* ATen's ctc_loss_cpu checks (with its messages), and what PyTorch leaves unchecked: lengths
** are non-negative, and the sum of the target lengths fits int64 (PyTorch's wraps). Every length
** is checked against its bounds before it takes part in any arithmetic. *max_target gets the
** longest target, at most the targets' length. */
static int ctc_check(const SkTensor *log_probs, const SkTensor *targets, SkIntList il, SkIntList tl, int64_t blank,
                     int64_t *max_target) {
  if (log_probs->ndim != 3)
    return sk_error("ctc_loss: expected log_probs of 3 dims (T, N, C), or 2 (T, C) through ctc_loss, got %dD", log_probs->ndim);
  if (need_floating(log_probs, "ctc_loss_cpu")) return -1;
  if (targets->dtype != SK_DTYPE_INT64 && targets->dtype != SK_DTYPE_INT32)
    return sk_error("ctc_loss: argument 'targets' must be an int32 or int64 tensor, got %s", sk_dtype_torch_name(targets->dtype));
  if (targets->ndim != 1 && targets->ndim != 2)
    return sk_error("ctc_loss: argument 'targets' must be 1-D (concatenated) or 2-D (N, S), got %dD", targets->ndim);
  int64_t tmax = log_probs->sizes[0], n = log_probs->sizes[1], nc = log_probs->sizes[2];
  if (!(blank < nc && blank >= 0)) return sk_error("blank must be in label range");
  if (il.n != n) return sk_error("input_lengths must be of size batch_size");
  if (tl.n != n) return sk_error("target_lengths must be of size batch_size");
  int64_t total = 0, mx = 0;
  for (int b = 0; b < n; b++) {
    const char *arg = il.data[b] < 0 ? "input_lengths" : "target_lengths";
    if (il.data[b] < 0 || tl.data[b] < 0)
      return sk_error("ctc_loss: argument '%s' must be non-negative, got %lld for batch entry %d", arg,
                      (long long)(il.data[b] < 0 ? il.data[b] : tl.data[b]), b);
    if (targets->ndim == 1 && sk_add_overflow(total, tl.data[b], &total))
      return sk_error("ctc_loss: argument 'target_lengths' sums past the int64 range at batch entry %d (%lld), "
                      "but 'targets' has %lld elements", b, (long long)tl.data[b], (long long)targets->sizes[0]);
    if (tl.data[b] > mx) mx = tl.data[b];
  }
  const char *c = "(while checking arguments for ctc_loss_cpu)";
  if (targets->ndim == 1 && targets->sizes[0] != total)
    return sk_error("Expected tensor to have size %lld at dimension 0, but got size %lld for argument #2 'targets' %s",
                    (long long)total, (long long)targets->sizes[0], c);
  if (targets->ndim == 2 && targets->sizes[0] != n)
    return sk_error("Expected tensor to have size %lld at dimension 0, but got size %lld for argument #2 'targets' %s",
                    (long long)n, (long long)targets->sizes[0], c);
  if (targets->ndim == 2 && targets->sizes[1] < mx)
    return sk_error("Expected tensor to have size at least %lld at dimension 1, but got size %lld for argument #2 'targets' %s",
                    (long long)mx, (long long)targets->sizes[1], c);
  for (int b = 0; b < n; b++)
    if (il.data[b] > tmax)
      return sk_error("Expected input_lengths to have value at most %lld, but got value %lld %s", (long long)tmax,
                      (long long)il.data[b], c);
  *max_target = mx;
  return 0;
}

/* log_alpha's sizes [N, T, 2·max_target + 1]; the last overflows only for a Meta targets of more
** than 2^62 columns */
static int ctc_alpha_sizes(const SkTensor *log_probs, int64_t mx, int64_t la[3]) {
  la[0] = log_probs->sizes[1], la[1] = log_probs->sizes[0];
  if (sk_mul_overflow(mx, 2, &la[2]) || sk_add_overflow(la[2], 1, &la[2]))
    return sk_error("ctc_loss: argument 'target_lengths': the longest target (%lld) is too long for log_alpha", (long long)mx);
  return 0;
}

/* neg_log_likelihood [N] and log_alpha [N, T, 2·max_target + 1], log_probs' dtype */
int sk_meta_kernel__ctc_loss(SkTensor **result1, SkTensor **result2, const SkTensor *log_probs, const SkTensor *targets,
                             SkIntList input_lengths, SkIntList target_lengths, int64_t blank, int zero_infinity) {
  (void)zero_infinity;
  int64_t mx = 0;
  int64_t n = log_probs->sizes[1], la[3];
  if (ctc_check(log_probs, targets, input_lengths, target_lengths, blank, &mx) || ctc_alpha_sizes(log_probs, mx, la)) return -1;
  SkTensor *a = sk_tensor_empty(1, &n, log_probs->dtype, SK_META), *b = sk_tensor_empty(3, la, log_probs->dtype, SK_META);
  if (!a || !b) {
    sk_tensor_release(a);
    sk_tensor_release(b);
    return -1;
  }
  *result1 = a, *result2 = b;
  return 0;
}

/* the gradient of log_probs: its shape; grad, neg_log_likelihood and log_alpha as forward made them */
int sk_meta_kernel__ctc_loss_backward(SkTensor **result, const SkTensor *grad, const SkTensor *log_probs,
                                      const SkTensor *targets, SkIntList input_lengths, SkIntList target_lengths,
                                      const SkTensor *neg_log_likelihood, const SkTensor *log_alpha, int64_t blank,
                                      int zero_infinity) {
  (void)zero_infinity;
  int64_t mx = 0;
  char a[128];
  int64_t n = log_probs->sizes[1], la[3];
  if (ctc_check(log_probs, targets, input_lengths, target_lengths, blank, &mx) || ctc_alpha_sizes(log_probs, mx, la)) return -1;
  if (grad->numel != n || neg_log_likelihood->numel != n)
    return sk_error("_ctc_loss_backward: expected grad and neg_log_likelihood of %lld elements, got %lld and %lld",
                    (long long)n, (long long)grad->numel, (long long)neg_log_likelihood->numel);
  if (log_alpha->ndim != 3 || memcmp(log_alpha->sizes, la, sizeof la) != 0)
    return sk_error("_ctc_loss_backward: expected log_alpha of size %s, got %s", sk_shape_str(3, la, a, sizeof a),
                    sk_shape_str(log_alpha->ndim, log_alpha->sizes, a + 64, sizeof a - 64));
  const SkTensor *same[3] = {grad, neg_log_likelihood, log_alpha};
  for (int i = 0; i < 3; i++)
    if (same[i]->dtype != log_probs->dtype)
      return sk_error("_ctc_loss_backward: expected %s tensors (log_probs' dtype), got %s", sk_dtype_torch_name(log_probs->dtype),
                      sk_dtype_torch_name(same[i]->dtype));
  SkTensor *g = sk_tensor_empty(3, log_probs->sizes, log_probs->dtype, SK_META);
  if (!g) return -1;
  *result = g;
  return 0;
}

/* PyTorch's ctc_loss_impl: unbatched (T, C) input as a batch of one; targets as int64 on
** log_probs' device; zero_infinity zeroes infinite losses; "mean" divides each loss by its
** target length (at least 1), then averages over the batch. */
int sk_math_ctc_loss_IntList(SkTensor **result, const SkTensor *log_probs, const SkTensor *targets, SkIntList input_lengths,
                             SkIntList target_lengths, int64_t blank, const char *reduction, int zero_infinity) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  int batched = log_probs->ndim == 3;
  if (log_probs->ndim != 2 && log_probs->ndim != 3)
    return sk_error("ctc_loss: expected log_probs of 3 dims (T, N, C), or 2 (T, C) unbatched, got %dD", log_probs->ndim);
  TAPE;
  const SkTensor *lp = batched ? log_probs : T(sk_unsqueeze(&r, log_probs, 1));
  SkTensor *tg = T(sk_to_device(&r, targets, log_probs->device, SK_DTYPE_INT64, 0, 0, -1));
  SkTensor *nll = NULL, *alpha = NULL;
  if (!tp->rc) {
    int rc = sk__ctc_loss(&nll, &alpha, lp, tg, input_lengths, target_lengths, blank, zero_infinity);
    sk_tape_keep(tp, rc, nll);
    if (!rc) sk_tape_keep(tp, 0, alpha);
  }
  SkTensor *res = nll;
  if (zero_infinity && res)
    res = T(sk_where_self(&r, T(sk_eq_Scalar(&r, res, FL(INFINITY))), sk_tape_number(tp, sk_scalar_int(0)), res));
  SkTensor *y = res;
  if (red == SK_REDUCTION_MEAN && res) {
    SkTensor *tl = T(sk_to_device(&r, int64_values(tp, target_lengths.data, target_lengths.n, res->device), res->device,
                                  (int)res->dtype, 0, 0, -1));
    y = T(sk_mean(&r, T(sk_div(&r, res, T(sk_clamp_min(&r, tl, S1)))), -1));
  } else if (red == SK_REDUCTION_SUM && res) y = T(sk_sum(&r, res, -1));
  else if (!batched && res) y = T(sk_squeeze_dim(&r, res, 0));
  FINISH(y);
}

/* The lengths read on the CPU as int64 lists (a 0-dim length is a list of one). */
int sk_math_ctc_loss_Tensor(SkTensor **result, const SkTensor *log_probs, const SkTensor *targets,
                            const SkTensor *input_lengths, const SkTensor *target_lengths, int64_t blank,
                            const char *reduction, int zero_infinity) {
  if (!sk_dtype_is_integral(input_lengths->dtype)) return sk_error("input_lengths must be integral");
  if (!sk_dtype_is_integral(target_lengths->dtype)) return sk_error("target_lengths must be integral");
  if (input_lengths->device.type == SK_DEVICE_META || target_lengths->device.type == SK_DEVICE_META)
    return sk_error("ctc_loss: input_lengths and target_lengths are read as numbers, so they cannot be meta tensors "
                    "(give them as lists of integers)");
  TAPE;
  SkDevice cpu = sk_device(SK_DEVICE_CPU, 0);
  SkTensor *il = T(sk_contiguous(&r, T(sk_to_device(&r, input_lengths, cpu, SK_DTYPE_INT64, 0, 0, -1)), 0));
  SkTensor *tl = T(sk_contiguous(&r, T(sk_to_device(&r, target_lengths, cpu, SK_DTYPE_INT64, 0, 0, -1)), 0));
  if (!tp->rc) {
    SkTensor *y = NULL;
    int rc = sk_ctc_loss_IntList(&y, log_probs, targets, (SkIntList){sk_tensor_data(il), (int)il->numel},
                                 (SkIntList){sk_tensor_data(tl), (int)tl->numel}, blank, reduction, zero_infinity);
    if (sk_tape_keep(tp, rc, y)) FINISH(y);
  }
  return sk_tape_free(tp);
}
/* }==== */
