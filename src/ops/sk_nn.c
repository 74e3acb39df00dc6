/*
** sk_nn.c — the nn ops: softmax and log_softmax, layer_norm, batch_norm, dropout, and the
** losses nll_loss, cross_entropy, mse_loss
** _softmax, _log_softmax, their backward ops and nll_loss_forward are structured (their meta
** functions are here, their CPU kernels in sk_cpu_softmax.c); everything else
** is a composite over the dispatched API, so it runs on every backend that
** has those ops, Meta included.
** Losses take reduction as a string, "mean" | "sum" | "none" (sk_reduction_of in
** sk_composite_util.h); nll_loss_forward keeps PyTorch's int (0 none, 1 mean, 2 sum).
** Ownership: arguments are borrowed; every temporary is released on every
** path; a result is stored only on success.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_composite_util.h"
#include "sk_error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const int64_t no_dims[1] = {0}; /* data of an empty (not None) int list */
#define NO_DEVICE sk_device(-1, 0)


/* Releases up to 8 temporaries (NULL allowed), then passes rc through. */
static int release_all(int rc, int n, SkTensor **ts) {
  for (int i = 0; i < n; i++) sk_tensor_release(ts[i]);
  return rc;
}
#define RELEASE(rc, ...) release_all(rc, (int)(sizeof((SkTensor *[]){__VA_ARGS__}) / sizeof(SkTensor *)), (SkTensor *[]){__VA_ARGS__})

/* {==== softmax, log_softmax ==== */
static int softmax_meta(SkMeta *m, const SkTensor *self, int64_t dim, int half_to_float) {
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  m->alias_ok = 1; /* the kernels read each row before writing it: out may be self */
  return sk_meta_set_output(m, 0, self->ndim, self->sizes, NULL, half_to_float ? SK_DTYPE_FLOAT32 : self->dtype);
}

int sk_meta__softmax(SkMeta *m, const SkTensor *self, int64_t dim, int half_to_float) {
  return softmax_meta(m, self, dim, half_to_float);
}

int sk_meta__log_softmax(SkMeta *m, const SkTensor *self, int64_t dim, int half_to_float) {
  return softmax_meta(m, self, dim, half_to_float);
}

/* PyTorch's _softmax_backward_data / _log_softmax_backward_data metas: grad_input has
** grad_output's shape and dtype; input_dtype other than that would be half_to_float. */
static int softmax_backward_meta(SkMeta *m, const SkTensor *grad_output, const SkTensor *output, int64_t dim,
                                 SkDType input_dtype, const char *name) {
  int same = grad_output->ndim == output->ndim;
  for (int i = 0; same && i < output->ndim; i++) same = grad_output->sizes[i] == output->sizes[i];
  if (!same) {
    char a[256], b[256];
    return sk_error("Expected tensor for argument #1 'grad_output' to have same size as tensor for argument #2 "
                    "'output'; but %s does not equal %s (while checking arguments for %s)",
                    sk_shape_str(grad_output->ndim, grad_output->sizes, a, sizeof a),
                    sk_shape_str(output->ndim, output->sizes, b, sizeof b), name);
  }
  if (grad_output->dtype != output->dtype)
    return sk_error("%s: argument 'output' (dtype %s) must have the dtype of 'grad_output' (%s)", name,
                    sk_dtype_name(output->dtype), sk_dtype_name(grad_output->dtype));
  if (input_dtype != grad_output->dtype)
    return sk_error("%s with half to float conversion is not supported on CPU", name);
  int64_t d;
  if (sk_wrap_dim(dim, grad_output->ndim, "dim", &d)) return -1;
  return sk_meta_set_output(m, 0, grad_output->ndim, grad_output->sizes, NULL, grad_output->dtype);
}

int sk_meta__softmax_backward_data(SkMeta *m, const SkTensor *grad_output, const SkTensor *output, int64_t dim,
                                   SkDType input_dtype) {
  return softmax_backward_meta(m, grad_output, output, dim, input_dtype, "softmax_backward");
}

int sk_meta__log_softmax_backward_data(SkMeta *m, const SkTensor *grad_output, const SkTensor *output, int64_t dim,
                                       SkDType input_dtype) {
  return softmax_backward_meta(m, grad_output, output, dim, input_dtype, "log_softmax_backward");
}

/* self converted to dtype first when one is given (PyTorch's softmax.int). */
static int converted(const SkTensor *self, int dtype, SkTensor **conv) {
  *conv = NULL;
  return dtype < 0 ? 0 : sk_to_dtype(conv, self, (SkDType)dtype, 0, 0, -1);
}

int sk_math_softmax_int(SkTensor **result, const SkTensor *self, int64_t dim, int dtype) {
  SkTensor *c;
  if (converted(self, dtype, &c)) return -1;
  return RELEASE(sk__softmax(result, c ? c : self, dim, 0), c);
}

int sk_default_softmax_int_out(const SkTensor *self, int64_t dim, int dtype, SkTensor *out) {
  SkTensor *c;
  if (converted(self, dtype, &c)) return -1;
  return RELEASE(sk__softmax_out(c ? c : self, dim, 0, out), c);
}

int sk_math_log_softmax_int(SkTensor **result, const SkTensor *self, int64_t dim, int dtype) {
  SkTensor *c;
  if (converted(self, dtype, &c)) return -1;
  return RELEASE(sk__log_softmax(result, c ? c : self, dim, 0), c);
}

int sk_default_log_softmax_int_out(const SkTensor *self, int64_t dim, int dtype, SkTensor *out) {
  SkTensor *c;
  if (converted(self, dtype, &c)) return -1;
  return RELEASE(sk__log_softmax_out(c ? c : self, dim, 0, out), c);
}
/* }==== */

/* {==== layer_norm ==== */
static int same_shape(const SkTensor *t, SkIntList shape) {
  return t->ndim == shape.n && memcmp(t->sizes, shape.data, (size_t)shape.n * sizeof *shape.data) == 0;
}

/* PyTorch's _check_layer_norm_inputs, with its messages (formatted only on failure). */
static int layer_norm_check(const SkTensor *input, SkIntList shape, const SkTensor *weight, const SkTensor *bias) {
  char a[256], b[256];
#define NORMALIZED sk_shape_str(shape.n, shape.data, a, sizeof a)
  if (shape.n < 1)
    return sk_error("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, "
                    "but got normalized_shape = %s", NORMALIZED);
  if (weight && !same_shape(weight, shape))
    return sk_error("Expected weight to be of same shape as normalized_shape, but got weight of shape %s and "
                    "normalized_shape = %s", sk_shape_str(weight->ndim, weight->sizes, b, sizeof b), NORMALIZED);
  if (bias && !same_shape(bias, shape))
    return sk_error("Expected bias to be of same shape as normalized_shape, but got bias of shape %s and "
                    "normalized_shape = %s", sk_shape_str(bias->ndim, bias->sizes, b, sizeof b), NORMALIZED);
  int k = input->ndim - shape.n;
  if (k < 0 || memcmp(input->sizes + k, shape.data, (size_t)shape.n * sizeof *shape.data) != 0) {
    char star[256];
    int len = snprintf(star, sizeof star, "[*");
    for (int i = 0; i < shape.n && len < (int)sizeof star; i++)
      len += snprintf(star + len, sizeof star - (size_t)len, ", %lld", (long long)shape.data[i]);
    if (len < (int)sizeof star) snprintf(star + len, sizeof star - (size_t)len, "]");
    return sk_error("Given normalized_shape=%s, expected input with shape %s, but got input of size%s", NORMALIZED, star,
                    sk_shape_str(input->ndim, input->sizes, b, sizeof b));
  }
#undef NORMALIZED
  if (!sk_dtype_is_floating(input->dtype))
    return sk_error("\"LayerNormKernelImpl\" not implemented for '%s'", sk_dtype_torch_name(input->dtype));
  return 0;
}

/* mean's and rstd's shape: input's, with the normalized dims 1. */
static void stats_shape(const SkTensor *input, int k, int64_t *sizes) {
  for (int i = 0; i < input->ndim; i++) sizes[i] = i < input->ndim - k ? input->sizes[i] : 1;
}

int sk_meta_native_layer_norm(SkMeta *m, const SkTensor *input, SkIntList normalized_shape, const SkTensor *weight,
                              const SkTensor *bias, double eps) {
  (void)eps;
  if (layer_norm_check(input, normalized_shape, weight, bias)) return -1;
  int64_t st[SK_MAX_DIMS];
  stats_shape(input, normalized_shape.n, st);
  if (sk_meta_set_output(m, 0, input->ndim, input->sizes, NULL, input->dtype)) return -1;
  if (sk_meta_set_output(m, 1, input->ndim, st, NULL, input->dtype)) return -1;
  return sk_meta_set_output(m, 2, input->ndim, st, NULL, input->dtype);
}

/* The gradients' shapes: input's, weight's and bias's (None where output_mask is false or
** that argument is None). */
int sk_meta_kernel_native_layer_norm_backward(SkTensor **result1, SkTensor **result2, SkTensor **result3,
                                              const SkTensor *grad_out, const SkTensor *input,
                                              SkIntList normalized_shape, const SkTensor *mean, const SkTensor *rstd,
                                              const SkTensor *weight, const SkTensor *bias, SkIntList output_mask) {
  char a[160], b[160];
  if (output_mask.n != 3) return sk_error("output_mask must have 3 elements, got %d", output_mask.n);
  if (layer_norm_check(input, normalized_shape, weight, bias)) return -1;
  if (grad_out->ndim != input->ndim || memcmp(grad_out->sizes, input->sizes, (size_t)input->ndim * sizeof *input->sizes))
    return sk_error("expected grad_out of size %s (the input's), but got %s", sk_shape_str(input->ndim, input->sizes, a, sizeof a),
                    sk_shape_str(grad_out->ndim, grad_out->sizes, b, sizeof b));
  int64_t st[SK_MAX_DIMS];
  stats_shape(input, normalized_shape.n, st);
  int64_t rows = sk_numel(input->ndim - normalized_shape.n, input->sizes);
  const SkTensor *stats[2] = {mean, rstd};
  for (int i = 0; i < 2; i++)
    if (stats[i]->numel != rows)
      return sk_error("expected %s of %lld elements (shaped %s), but got %s", i ? "rstd" : "mean", (long long)rows,
                      sk_shape_str(input->ndim, st, a, sizeof a), sk_shape_str(stats[i]->ndim, stats[i]->sizes, b, sizeof b));
  SkTensor *r[3] = {NULL, NULL, NULL};
  const SkTensor *like[3] = {input, weight, bias};
  for (int i = 0; i < 3; i++)
    if (output_mask.data[i] && like[i] && !(r[i] = sk_tensor_empty(like[i]->ndim, like[i]->sizes, input->dtype, SK_META))) {
      for (int j = 0; j < 3; j++) sk_tensor_release(r[j]);
      return -1;
    }
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
}

int sk_math_layer_norm(SkTensor **result, const SkTensor *input, SkIntList normalized_shape, const SkTensor *weight,
                       const SkTensor *bias, double eps, int cudnn_enable) {
  (void)cudnn_enable;
  SkTensor *y = NULL, *mean = NULL, *rstd = NULL;
  int rc = sk_native_layer_norm(&y, &mean, &rstd, input, normalized_shape, weight, bias, eps);
  sk_tensor_release(mean);
  sk_tensor_release(rstd);
  if (!rc) *result = y;
  return rc;
}
/* }==== */

/* {==== batch_norm ==== */
/* PyTorch's checks: [N, C, ...] input, each per-channel argument of C elements, running
** statistics in eval mode (PyTorch 1.13 reads NULL there), save_mean/save_invstd in training. */
static int batch_norm_check(const SkTensor *input, const SkTensor *const *per_channel, const char *const *names, int n) {
  if (input->ndim < 2)
    return sk_error("expected an input of at least 2 dims (N, C, ...), got %d-dimensional input", input->ndim);
  int64_t c = input->sizes[1];
  for (int i = 0; i < n; i++)
    if (per_channel[i] && per_channel[i]->numel != c)
      return sk_error("%s should contain %lld elements not %lld", names[i], (long long)c, (long long)per_channel[i]->numel);
  return 0;
}

int sk_meta_kernel_native_batch_norm(SkTensor **result1, SkTensor **result2, SkTensor **result3, const SkTensor *input,
                                     const SkTensor *weight, const SkTensor *bias, SkTensor *running_mean,
                                     SkTensor *running_var, int training, double momentum, double eps) {
  (void)momentum, (void)eps;
  const SkTensor *pc[4] = {weight, bias, running_mean, running_var};
  static const char *const names[4] = {"weight", "bias", "running_mean", "running_var"};
  if (batch_norm_check(input, pc, names, 4)) return -1;
  if (!training && (!running_mean || !running_var))
    return sk_error("running_mean and running_var must be defined in evaluation mode");
  if ((running_mean == NULL) != (running_var == NULL))
    return sk_error("running_mean and running_var must both be given or both be None");
  int64_t c = training ? input->sizes[1] : 0;
  SkTensor *r[3] = {sk_tensor_empty(input->ndim, input->sizes, input->dtype, SK_META),
                    sk_tensor_empty(1, &c, input->dtype, SK_META), sk_tensor_empty(1, &c, input->dtype, SK_META)};
  if (!r[0] || !r[1] || !r[2]) { RELEASE(0, r[0], r[1], r[2]); return -1; }
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
}

int sk_meta_kernel_native_batch_norm_backward(SkTensor **result1, SkTensor **result2, SkTensor **result3,
                                              const SkTensor *grad_out, const SkTensor *input, const SkTensor *weight,
                                              const SkTensor *running_mean, const SkTensor *running_var,
                                              const SkTensor *save_mean, const SkTensor *save_invstd, int train,
                                              double eps, SkIntList output_mask) {
  (void)eps;
  char a[160], b[160];
  if (output_mask.n != 3) return sk_error("output_mask must have 3 elements, got %d", output_mask.n);
  const SkTensor *pc[5] = {weight, running_mean, running_var, train ? save_mean : NULL, train ? save_invstd : NULL};
  static const char *const names[5] = {"weight", "running_mean", "running_var", "save_mean", "save_invstd"};
  if (batch_norm_check(input, pc, names, 5)) return -1;
  if (train && (!save_mean || !save_invstd)) return sk_error("save_mean and save_invstd must be defined when train is true");
  if (!train && (!running_mean || !running_var))
    return sk_error("running_mean and running_var must be defined when train is false");
  if (grad_out->ndim != input->ndim || memcmp(grad_out->sizes, input->sizes, (size_t)input->ndim * sizeof *input->sizes))
    return sk_error("expected grad_out of size %s (the input's), but got %s", sk_shape_str(input->ndim, input->sizes, a, sizeof a),
                    sk_shape_str(grad_out->ndim, grad_out->sizes, b, sizeof b));
  int64_t c = input->sizes[1];
  SkTensor *r[3] = {NULL, NULL, NULL};
  if ((output_mask.data[0] && !(r[0] = sk_tensor_empty(input->ndim, input->sizes, input->dtype, SK_META))) ||
      (output_mask.data[1] && weight && !(r[1] = sk_tensor_empty(1, &c, input->dtype, SK_META))) ||
      (output_mask.data[2] && !(r[2] = sk_tensor_empty(1, &c, input->dtype, SK_META))))
    return RELEASE(-1, r[0], r[1], r[2]);
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
}

/* PyTorch's batch_norm of an input without elements: no statistics to take or update;
** a copy of input scaled by weight[0] and shifted by bias[0], so the gradient still
** reaches them. It reads no channel count, so a 1-d empty input passes too. */
static int batch_norm_empty(SkTensor **result, const SkTensor *input, const SkTensor *weight, const SkTensor *bias) {
  SkTensor *y = NULL;
  int rc = sk_clone(&y, input, -1);
  const SkTensor *by[2] = {weight, bias};
  for (int i = 0; i < 2 && !rc; i++) {
    if (!by[i]) continue;
    SkTensor *e = NULL, *z = NULL;
    rc = sk_select_int(&e, by[i], 0, 0);
    if (!rc) rc = i ? sk_add(&z, y, e, sk_scalar_int(1)) : sk_mul(&z, y, e);
    sk_tensor_release(e);
    if (!rc) sk_tensor_release(y), y = z;
  }
  if (rc) { sk_tensor_release(y); return -1; }
  *result = y;
  return 0;
}

/* torch.nn.functional.batch_norm's check first: training needs more than one value per channel. */
int sk_math_batch_norm(SkTensor **result, const SkTensor *input, const SkTensor *weight, const SkTensor *bias,
                       const SkTensor *running_mean, const SkTensor *running_var, int training, double momentum,
                       double eps, int cudnn_enabled) {
  (void)cudnn_enabled;
  if (input->numel == 0) return batch_norm_empty(result, input, weight, bias);
  char a[160];
  if (training && input->ndim >= 2 && input->sizes[1] && input->numel / input->sizes[1] == 1)
    return sk_error("Expected more than 1 value per channel when training, got input size %s",
                    sk_shape_str(input->ndim, input->sizes, a, sizeof a));
  SkTensor *y = NULL, *m = NULL, *v = NULL;
  int rc = sk_native_batch_norm(&y, &m, &v, input, weight, bias, (SkTensor *)running_mean, (SkTensor *)running_var,
                                training, momentum, eps);
  sk_tensor_release(m);
  sk_tensor_release(v);
  if (!rc) *result = y;
  return rc;
}
/* }==== */

/* {==== dropout ==== */
/* PyTorch's _dropout: input * bernoulli(1 - p) / (1 - p), from sk's random stream. */
int sk_math_dropout(SkTensor **result, const SkTensor *input, double p, int train) {
  if (!(p >= 0 && p <= 1)) return sk_error("dropout probability has to be between 0 and 1, but got %g", p);
  if (p == 0 || !train || input->numel == 0) { *result = sk_tensor_retain((SkTensor *)input); return 0; }
  SkTensor *noise = NULL, *w = NULL;
  int rc;
  if (p == 1) { /* input * 0: NaN stays NaN, as in PyTorch */
    rc = sk_zeros(&noise, (SkIntList){no_dims, 0}, (int)input->dtype, -1, input->device, -1);
    if (!rc) rc = sk_mul(result, input, noise);
    return RELEASE(rc, noise);
  }
  rc = sk_empty_like(&noise, input, -1, -1, NO_DEVICE, -1, -1);
  if (!rc) rc = sk_bernoulli__float(noise, 1 - p, NULL);
  if (!rc && !(w = sk_tensor_wrap_number(sk_scalar_float(1 - p)))) rc = -1;
  if (!rc) rc = sk_div_(noise, w);
  if (!rc) rc = sk_mul(result, input, noise);
  return RELEASE(rc, noise, w);
}
/* }==== */

/* {==== nll_loss ==== */
/* PyTorch's nll_loss_forward meta: self [N, C] or [C], target [N] or [], weight [C]. */
int sk_meta_nll_loss_forward_output(SkMeta *m, const SkTensor *self, const SkTensor *target, const SkTensor *weight,
                                    int64_t reduction, int64_t ignore_index) {
  (void)ignore_index;
  char a[128], b[128];
  if (self->ndim < 1 || self->ndim > 2) return sk_error("input tensor should be 1D or 2D");
  if (target->ndim > 1) return sk_error("0D or 1D target tensor expected, multi-target not supported");
  int no_batch = self->ndim == 1 && target->ndim == 0;
  if (!no_batch && (target->ndim == 0 || self->sizes[0] != target->sizes[0]))
    return sk_error("size mismatch (got input: %s, target: %s)", sk_shape_str(self->ndim, self->sizes, a, sizeof a),
                    sk_shape_str(target->ndim, target->sizes, b, sizeof b));
  int64_t nc = self->sizes[self->ndim - 1];
  if (weight && (weight->ndim != 1 || weight->numel != nc))
    return sk_error("weight tensor should be defined either for all %lld classes or no classes but got weight tensor "
                    "of shape: %s", (long long)nc, sk_shape_str(weight->ndim, weight->sizes, a, sizeof a));
  int rc = reduction == SK_REDUCTION_NONE && self->ndim == 2 ? sk_meta_set_output(m, 0, 1, self->sizes, NULL, self->dtype)
                                                          : sk_meta_set_output(m, 0, 0, no_dims, NULL, self->dtype);
  return rc ? rc : sk_meta_set_output(m, 1, 0, no_dims, NULL, self->dtype);
}

/* PyTorch's nll_loss_nd: 1-D and 2-D inputs go to nll_loss_forward; [N, C, d...] moves the
** class dim last and flattens to [N·d..., C]. total_weight (may be NULL) gets the weight sum. */
static int nll_nd(const SkTensor *self, const SkTensor *target, const SkTensor *weight, int64_t red, int64_t ignore,
                  SkTensor **result, SkTensor **total_weight) {
  SkTensor *tw = NULL;
  char a[128], b[128];
  if (self->ndim < 1) return sk_error("Expected 1 or more dimensions (got %d)", self->ndim);
  if (self->ndim != 1 && target->ndim >= 1 && self->sizes[0] != target->sizes[0])
    return sk_error("Expected input batch_size (%lld) to match target batch_size (%lld).", (long long)self->sizes[0],
                    (long long)target->sizes[0]);
  if (self->ndim <= 2) {
    int rc = sk_nll_loss_forward(result, &tw, self, target, weight, red, ignore);
    if (!rc && total_weight) *total_weight = tw;
    else sk_tensor_release(tw);
    return rc;
  }
  int nd = self->ndim;
  int64_t perm[SK_MAX_DIMS], out_shape[SK_MAX_DIMS], flat[2] = {-1, self->sizes[1]}, flat1[1] = {-1};
  out_shape[0] = self->sizes[0];
  for (int i = 2; i < nd; i++) out_shape[i - 1] = self->sizes[i];
  if (target->ndim != nd - 1 || memcmp(target->sizes, out_shape, (size_t)(nd - 1) * sizeof *out_shape) != 0)
    return sk_error("Expected target size %s, got %s", sk_shape_str(nd - 1, out_shape, a, sizeof a),
                    sk_shape_str(target->ndim, target->sizes, b, sizeof b));
  perm[0] = 0;
  for (int i = 2; i < nd; i++) perm[i - 1] = i;
  perm[nd - 1] = 1;
  SkTensor *p = NULL, *x2 = NULL, *t1 = NULL, *o = NULL;
  int rc = sk_permute(&p, self, (SkIntList){perm, nd});
  if (!rc) rc = sk_reshape(&x2, p, (SkIntList){flat, 2});
  if (!rc) rc = sk_reshape(&t1, target, (SkIntList){flat1, 1});
  if (!rc) rc = sk_nll_loss_forward(&o, &tw, x2, t1, weight, red, ignore);
  if (!rc && red == SK_REDUCTION_NONE) rc = sk_reshape(result, o, (SkIntList){out_shape, nd - 1});
  else if (!rc) *result = sk_tensor_retain(o);
  if (!rc && total_weight) *total_weight = sk_tensor_retain(tw);
  return RELEASE(rc, p, x2, t1, o, tw);
}

int sk_math_nll_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, const SkTensor *weight,
                     const char *reduction, int64_t ignore_index) {
  int64_t red = 0; /* set by sk_reduction_of on success */
  if (sk_reduction_of(reduction, &red)) return -1;
  return nll_nd(self, target, weight, red, ignore_index, result, NULL);
}
/* }==== */

/* {==== cross_entropy ==== */
/* weight as [1, C, 1, ...] against an input of nd dims (as is for 1-D input). */
static int weight_view(const SkTensor *weight, int nd, int class_dim, SkTensor **w) {
  int64_t shape[SK_MAX_DIMS];
  for (int i = 0; i < nd; i++) shape[i] = 1;
  shape[class_dim] = weight->numel;
  return sk_view(w, weight, (SkIntList){shape, nd});
}

/* Class probabilities: -Σ_c w_c · target_c · log_softmax_c, mean over the other elements. */
static int ce_prob_target(SkTensor **result, const SkTensor *logp, const SkTensor *target, const SkTensor *weight,
                          int64_t red, double smoothing, int class_dim) {
  int64_t nc = logp->sizes[class_dim];
  char a[128];
  if (weight && (weight->ndim != 1 || weight->numel != nc))
    return sk_error("cross_entropy: weight tensor should be defined either for all %lld classes or no classes but got "
                    "weight tensor of shape: %s", (long long)nc, sk_shape_str(weight->ndim, weight->sizes, a, sizeof a));
  SkTensor *t = NULL, *w = NULL, *prod = NULL, *pw = NULL, *s = NULL, *neg = NULL;
  int rc = 0;
  if (smoothing > 0) {
    SkTensor *t0 = NULL;
    rc = sk_mul_Scalar(&t0, target, sk_scalar_float(1 - smoothing));
    if (!rc) rc = sk_add_Scalar(&t, t0, sk_scalar_float(smoothing / (double)nc), sk_scalar_int(1));
    sk_tensor_release(t0);
  }
  if (!rc) rc = sk_mul(&prod, logp, t ? t : target);
  if (!rc && weight) rc = weight_view(weight, logp->ndim, class_dim, &w);
  if (!rc && weight) rc = sk_mul(&pw, prod, w);
  const SkTensor *terms = pw ? pw : prod;
  int64_t cd = class_dim;
  if (!rc && red == SK_REDUCTION_NONE) rc = sk_sum_dim_IntList(&s, terms, (SkIntList){&cd, 1}, 0, -1);
  else if (!rc) rc = sk_sum(&s, terms, -1);
  if (!rc) rc = sk_neg(red == SK_REDUCTION_MEAN ? &neg : result, s);
  if (!rc && red == SK_REDUCTION_MEAN) /* over the elements other than classes; NaN when there are none */
    rc = sk_div_Scalar(result, neg, sk_scalar_float(logp->numel ? (double)(logp->numel / nc) : NAN));
  return RELEASE(rc, t, w, prod, pw, s, neg);
}

/* Class indices with label smoothing: (1 - ls) · nll + ls / C · (-Σ_c w_c · log_softmax_c), where
** ignored targets add nothing and the mean divides by nll's total weight. */
static int ce_smoothed(SkTensor **result, const SkTensor *logp, const SkTensor *target, const SkTensor *weight,
                       int64_t red, int64_t ignore, double smoothing, int class_dim) {
  SkTensor *nll = NULL, *tw = NULL, *w = NULL, *pw = NULL, *s = NULL, *smooth = NULL, *mask = NULL, *ig = NULL,
           *zero = NULL, *kept = NULL, *tot = NULL, *ret = NULL, *a = NULL, *b = NULL;
  int64_t nc = logp->sizes[class_dim], cd = class_dim;
  int rc = nll_nd(logp, target, weight, red, ignore, &nll, &tw);
  if (!rc && weight) rc = weight_view(weight, logp->ndim, class_dim, &w);
  if (!rc && weight) rc = sk_mul(&pw, logp, w);
  if (!rc) rc = sk_sum_dim_IntList(&s, pw ? pw : logp, (SkIntList){&cd, 1}, 0, -1);
  if (!rc) rc = sk_neg(&smooth, s);
  if (!rc && !((ig = sk_tensor_wrap_number(sk_scalar_int(ignore))) && (zero = sk_tensor_wrap_number(sk_scalar_float(0)))))
    rc = -1;
  if (!rc) rc = sk_eq(&mask, target, ig);
  if (!rc) rc = sk_where_self(&kept, mask, zero, smooth);
  if (!rc && red == SK_REDUCTION_NONE) ret = sk_tensor_retain(kept);
  else if (!rc) rc = sk_sum(red == SK_REDUCTION_MEAN ? &tot : &ret, kept, -1);
  if (!rc && red == SK_REDUCTION_MEAN) rc = sk_div(&ret, tot, tw);
  if (!rc) rc = sk_mul_Scalar(&a, nll, sk_scalar_float(1 - smoothing));
  if (!rc) rc = sk_mul_Scalar(&b, ret, sk_scalar_float(smoothing / (double)nc));
  if (!rc) rc = sk_add(result, a, b, sk_scalar_int(1));
  rc = RELEASE(rc, nll, tw, w, pw, s, smooth, mask, ig);
  return RELEASE(rc, zero, kept, tot, ret, a, b);
}

int sk_math_cross_entropy(SkTensor **result, const SkTensor *self, const SkTensor *target, const SkTensor *weight,
                          const char *reduction, int64_t ignore_index, double label_smoothing) {
  int64_t red = 0; /* set by sk_reduction_of on success */
  if (sk_reduction_of(reduction, &red)) return -1;
  int class_dim = self->ndim == 1 ? 0 : 1;
  int probs = sk_tensor_same_shape(self, target);
  if (probs && !sk_dtype_is_floating(target->dtype))
    return sk_error("Expected floating point type for target with class probabilities, got %s", sk_dtype_torch_name(target->dtype));
  if (probs && ignore_index >= 0) return sk_error("ignore_index is not supported for floating point target");
  if (label_smoothing > 1) return sk_error("label_smoothing must be between 0.0 and 1.0. Got: %g", label_smoothing);
  /* In opmath: a half-type loss (its smoothing, weights, sums) is computed in float32 and rounded
  ** once. A weight of another dtype keeps the half path, and so nll's dtype check. */
  const SkTensor *both[2] = {self, target};
  SkDType dt = probs ? sk_result_type(2, both) : self->dtype;
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  const SkTensor *x = self, *t = target, *w = weight;
  if (!weight || weight->dtype == dt)
    x = sk_tape_opmath(tp, self, dt), t = sk_tape_opmath(tp, target, dt), w = sk_tape_opmath(tp, weight, dt);
  if (tp->rc) return sk_tape_free(tp);
  SkTensor *logp = NULL, *y = NULL;
  int rc = sk_log_softmax_int(&logp, x, class_dim, (int)x->dtype);
  if (!rc && probs) rc = ce_prob_target(&y, logp, t, w, red, label_smoothing, class_dim);
  else if (!rc && label_smoothing > 0) rc = ce_smoothed(&y, logp, t, w, red, ignore_index, label_smoothing, class_dim);
  else if (!rc) rc = nll_nd(logp, t, w, red, ignore_index, &y, NULL);
  rc = RELEASE(rc, logp);
  return sk_tape_result(tp, sk_tape_round(tp, sk_tape_keep(tp, rc, y), dt), result);
}
/* }==== */

/* {==== mse_loss ==== */
int sk_math_mse_loss(SkTensor **result, const SkTensor *self, const SkTensor *target, const char *reduction) {
  int64_t red = 0; /* set by sk_reduction_of on success */
  if (sk_reduction_of(reduction, &red)) return -1;
  const SkTensor *both[2] = {self, target};
  SkDType dt = sk_result_type(2, both);
  if (!sk_dtype_is_floating(dt)) return sk_error("\"mse_cpu\" not implemented for '%s'", sk_dtype_torch_name(dt));
  SkTape t = {{NULL}, 0, 0, {0}}, *tp = &t; /* in opmath: a half-type (x - t)² rounds once */
  SkTensor *d = SK_TAPE_STEP(tp, sk_sub(&r, sk_tape_opmath(tp, self, dt), sk_tape_opmath(tp, target, dt), sk_scalar_int(1)));
  SkTensor *y = SK_TAPE_STEP(tp, sk_mul(&r, d, d));
  if (red == SK_REDUCTION_MEAN) y = SK_TAPE_STEP(tp, sk_mean(&r, y, -1));
  if (red == SK_REDUCTION_SUM) y = SK_TAPE_STEP(tp, sk_sum(&r, y, -1));
  return sk_tape_result(tp, sk_tape_round(tp, y, dt), result);
}
/* }==== */
