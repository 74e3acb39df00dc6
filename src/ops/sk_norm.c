/*
** sk_norm.c — normalization: native_group_norm's checks and Meta results (its kernel is in
** kernels/cpu/sk_cpu_norm.c), the composites group_norm, instance_norm (native_batch_norm over [1, N·C, ...], PyTorch's way),
** local_response_norm and normalize (torch.nn.functional's formulas)
** They call only dispatched ops, so they run on every backend and record for autograd.
** Ownership: arguments are borrowed; every temporary is released on every path.
*/
#include "sk_kernels.h"
#include "sk_composite_util.h"
#include "sk_checked.h"

#include <stdio.h>
#include <string.h>

#define T(call) SK_TAPE_STEP(tp, call)

/* {==== group_norm ==== */
/* native_group_norm's checks and results: y as input, mean and rstd [N, group] in its dtype */
int sk_meta_kernel_native_group_norm(SkTensor **result1, SkTensor **result2, SkTensor **result3, const SkTensor *input,
                                     const SkTensor *weight, const SkTensor *bias, int64_t N, int64_t C, int64_t HxW,
                                     int64_t group, double eps) {
  (void)eps;
  char a[160], b[160];
  if (group <= 0) return sk_error("Expected num_groups to be positive, but got num_groups=%lld", (long long)group);
  int64_t numel;
  if (input->ndim < 2 || input->sizes[0] != N || input->sizes[1] != C || HxW < 0 || sk_mul_overflow(N, C, &numel) ||
      sk_mul_overflow(numel, HxW, &numel) || input->numel != numel)
    return sk_error("Expected the input of size %s to be [N=%lld, C=%lld, ...] with HxW=%lld",
                    sk_shape_str(input->ndim, input->sizes, a, sizeof a), (long long)N, (long long)C, (long long)HxW);
  if (C % group)
    return sk_error("Expected number of channels in input to be divisible by num_groups, but got input of shape %s and "
                    "num_groups=%lld", sk_shape_str(input->ndim, input->sizes, a, sizeof a), (long long)group);
  if (!sk_dtype_is_floating(input->dtype))
    return sk_error("\"GroupNormKernelImpl\" not implemented for '%s'", sk_dtype_torch_name(input->dtype));
  const SkTensor *aff[2] = {weight, bias};
  static const char *const names[2] = {"weight", "bias"};
  for (int i = 0; i < 2; i++) {
    if (aff[i] && (aff[i]->ndim != 1 || aff[i]->numel != C))
      return sk_error("Expected %s to be a vector of size equal to the number of channels in input, but got %s of shape %s "
                      "and input of shape %s", names[i], names[i], sk_shape_str(aff[i]->ndim, aff[i]->sizes, a, sizeof a),
                      sk_shape_str(input->ndim, input->sizes, b, sizeof b));
    if (aff[i] && !sk_device_eq(aff[i]->device, input->device))
      return sk_error("Expected all tensors to be on the same device, but found at least two devices (argument '%s')", names[i]);
  }
  int64_t ng[2] = {N, group};
  SkTensor *r[3] = {sk_tensor_empty(input->ndim, input->sizes, input->dtype, SK_META), sk_tensor_empty(2, ng, input->dtype, SK_META),
                    sk_tensor_empty(2, ng, input->dtype, SK_META)};
  if (!r[0] || !r[1] || !r[2]) {
    for (int i = 0; i < 3; i++) sk_tensor_release(r[i]);
    return -1;
  }
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
}

int sk_math_group_norm(SkTensor **result, const SkTensor *input, int64_t num_groups, const SkTensor *weight,
                       const SkTensor *bias, double eps, int cudnn_enabled) {
  (void)cudnn_enabled;
  if (input->ndim < 2)
    return sk_error("Expected at least 2 dimensions for input tensor but received %d", input->ndim);
  int64_t n = input->sizes[0], c = input->sizes[1], hw = sk_numel(input->ndim - 2, input->sizes + 2);
  SkTensor *m = NULL, *r = NULL;
  int rc = sk_native_group_norm(result, &m, &r, input, weight, bias, n, c, hw, num_groups, eps);
  sk_tensor_release(m);
  sk_tensor_release(r);
  return rc;
}
/* }==== */

/* {==== instance_norm: batch_norm over [1, N·C, ...] with the running statistics repeated N
** times, then their mean over the batch written back (PyTorch's instance_norm) ==== */
static int repeat_n(SkTensor **out, const SkTensor *t, int64_t n) {
  if (!t) { *out = NULL; return 0; }
  int64_t r[1] = {n};
  return sk_repeat(out, t, (SkIntList){r, 1});
}

int sk_math_instance_norm(SkTensor **result, const SkTensor *input, const SkTensor *weight, const SkTensor *bias,
                          const SkTensor *running_mean, const SkTensor *running_var, int use_input_stats,
                          double momentum, double eps, int cudnn_enabled) {
  (void)cudnn_enabled;
  if (!use_input_stats && (!running_mean || !running_var))
    return sk_error("Expected running_mean and running_var to be defined when use_input_stats is false");
  if (input->ndim < 2)
    return sk_error("Expected at least 2 dimensions for input tensor but received %d", input->ndim);
  int64_t b = input->sizes[0], c = input->sizes[1], shape[SK_MAX_DIMS], bc[2] = {b, c};
  for (int i = 0; i < input->ndim; i++) shape[i] = input->sizes[i];
  shape[0] = 1, shape[1] = b * c;
  SkTensor *w = NULL, *bi = NULL, *rm = NULL, *rv = NULL, *x = NULL, *y = NULL, *s1 = NULL, *s2 = NULL;
  int rc = repeat_n(&w, weight, b);
  if (!rc) rc = repeat_n(&bi, bias, b);
  if (!rc) rc = repeat_n(&rm, running_mean, b);
  if (!rc) rc = repeat_n(&rv, running_var, b);
  if (!rc) rc = sk_reshape(&x, input, (SkIntList){shape, input->ndim});
  if (!rc) rc = sk_native_batch_norm(&y, &s1, &s2, x, w, bi, rm, rv, use_input_stats, momentum, eps);
  SkTensor *st[2] = {rm, rv};
  SkTensor *dst[2] = {(SkTensor *)running_mean, (SkTensor *)running_var};
  for (int i = 0; i < 2 && !rc; i++) {
    if (!dst[i]) continue;
    SkTensor *v = NULL, *mean = NULL;
    rc = sk_view(&v, st[i], (SkIntList){bc, 2});
    if (!rc) rc = sk_mean_dim(&mean, v, (SkIntList){(const int64_t[]){0}, 1}, 0, -1);
    if (!rc) rc = sk_copy_(dst[i], mean, 0);
    sk_tensor_release(v);
    sk_tensor_release(mean);
  }
  if (!rc) rc = sk_reshape(result, y, (SkIntList){input->sizes, input->ndim});
  SkTensor *all[] = {w, bi, rm, rv, x, y, s1, s2};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sk_tensor_release(all[i]);
  return rc;
}
/* }==== */

/* {==== local_response_norm: x / (k + α·avg of x² over `size` neighbouring channels)^β; the
** window is PyTorch's (size/2 before, (size-1)/2 after): a symmetric pool of size/2, keeping the
** first C outputs ==== */
int sk_math_local_response_norm(SkTensor **result, const SkTensor *input, int64_t size, double alpha, double beta,
                                double k_) {
  if (input->ndim < 3)
    return sk_error("Expected 3D or higher dimensionality input (got %d dimensions)", input->ndim);
  if (size <= 0) return sk_error("size must be positive, got %lld", (long long)size);
  if (input->numel == 0) { *result = sk_tensor_retain((SkTensor *)input); return 0; }
  SkTape t = {0}, *tp = &t; /* in opmath: a half type rounds once */
  int64_t c = input->sizes[1];
  SkTensor *x = sk_tape_opmath(tp, input, input->dtype);
  SkTensor *sq = T(sk_unsqueeze(&r, T(sk_mul(&r, x, x)), 1)), *avg;
  if (input->ndim == 3) {
    int64_t k[2] = {size, 1}, s[2] = {1, 1}, p[2] = {size / 2, 0};
    avg = T(sk_avg_pool2d(&r, sq, (SkIntList){k, 2}, (SkIntList){s, 2}, (SkIntList){p, 2}, 0, 1, (SkOptInt){0, 0}));
  } else {
    int64_t v[5] = {input->sizes[0], 1, c, input->sizes[2], -1};
    int64_t k[3] = {size, 1, 1}, s[3] = {1, 1, 1}, p[3] = {size / 2, 0, 0};
    avg = T(sk_avg_pool3d(&r, T(sk_reshape(&r, sq, (SkIntList){v, 5})), (SkIntList){k, 3}, (SkIntList){s, 3}, (SkIntList){p, 3}, 0, 1,
                          (SkOptInt){0, 0}));
  }
  SkTensor *d = T(sk_reshape(&r, T(sk_squeeze_dim(&r, T(sk_narrow(&r, avg, 2, 0, c)), 1)), (SkIntList){input->sizes, input->ndim}));
  d = T(sk_pow_Tensor_Scalar(&r, T(sk_add_Scalar(&r, T(sk_mul_Scalar(&r, d, sk_scalar_float(alpha))), sk_scalar_float(k_), sk_scalar_int(1))),
                             sk_scalar_float(beta)));
  return sk_tape_result(tp, sk_tape_round(tp, T(sk_div(&r, x, d)), input->dtype), result);
}
/* }==== */

/* {==== normalize: x / max(‖x‖_p over dim, eps) ==== */
int sk_math_normalize(SkTensor **result, const SkTensor *input, double p, int64_t dim, double eps) {
  SkTape t = {0}, *tp = &t; /* in opmath: a half type rounds once, not at the norm too */
  SkTensor *x = sk_tape_opmath(tp, input, input->dtype);
  SkTensor *n = T(sk_clamp_min(&r, T(sk_norm_ScalarOpt_dim(&r, x, sk_scalar_float(p), (SkIntList){&dim, 1}, 1)), sk_scalar_float(eps)));
  return sk_tape_result(tp, sk_tape_round(tp, T(sk_div(&r, x, n)), input->dtype), result);
}
/* }==== */
