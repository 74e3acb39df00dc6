/*
** sk_conv.c — convolution: the checks and shapes (PyTorch's check_shape_forward and its
** messages), the meta functions, and conv1d/2d/3d and conv_transpose1d/2d/3d as composites
** over convolution (the CPU kernels are in kernels/cpu/sk_cpu_conv.c).
** Sizes are computed in 128 bits, so no stride, padding or dilation overflows them.
** Ownership: arguments are borrowed; a result is stored only on success.
*/
#include "sk_conv.h"
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"
#include "sk_checked.h"

#include <stdio.h>
#include <string.h>

/* {==== Checks ==== */
static const char *list_str(int n, const int64_t *v, char *buf, size_t len) { return sk_shape_str(n, v, buf, len); }

/* A parameter list of 1 or nsp values (none: dflt) into out[nsp]. */
static int expand(const char *name, SkIntList l, int nsp, int64_t dflt, int64_t *out) {
  char b[160];
  if (!l.data || l.n == 0) {
    for (int i = 0; i < nsp; i++) out[i] = dflt;
    return 0;
  }
  if (l.n != 1 && l.n != nsp)
    return sk_error("expected %s to be a single integer value or a list of %d values to match the convolution "
                    "dimensions, but got %s=%s", name, nsp, name, list_str(l.n, l.data, b, sizeof b));
  for (int i = 0; i < nsp; i++) out[i] = l.data[l.n == 1 ? 0 : i];
  return 0;
}

static int any_below(const int64_t *v, int n, int64_t lo) {
  for (int i = 0; i < n; i++) if (v[i] < lo) return 1;
  return 0;
}

/* "5 x 5": PyTorch's per-channel size lists, each exact (they may pass int64). */
static const char *by_str(int n, const __int128 *v, char *buf, size_t len) {
  char d[SK_I128_CHARS];
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < n && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? " x " : "", sk_i128_str(v[i], d));
  return buf;
}

int sk_conv_check(SkConvGeom *g, const SkTensor *input, const SkTensor *weight, const SkTensor *bias,
                  SkIntList bias_sizes, SkIntList stride, SkIntList padding, SkIntList dilation, int transposed,
                  SkIntList output_padding, int64_t groups, int64_t *out_sizes) {
  char a[160], b[160];
  memset(g, 0, sizeof *g);
  if (weight->ndim < 3) return sk_error("weight should have at least three dimensions");
  if (weight->ndim > 2 + SK_CONV_MAX_SPATIAL)
    return sk_error("weight of size %s has %d spatial dims; sk supports 1 to %d",
                    sk_shape_str(weight->ndim, weight->sizes, a, sizeof a), weight->ndim - 2, SK_CONV_MAX_SPATIAL);
  int nsp = weight->ndim - 2;
  g->nsp = nsp;
  g->transposed = transposed != 0;
  g->groups = groups;
  if (expand("stride", stride, nsp, 1, g->stride) || expand("padding", padding, nsp, 0, g->pad) ||
      expand("dilation", dilation, nsp, 1, g->dil) || expand("output_padding", output_padding, nsp, 0, g->outpad))
    return -1;
  if (groups <= 0) return sk_error("non-positive groups is not supported");
  if (any_below(g->pad, nsp, 0)) return sk_error("negative padding is not supported");
  if (any_below(g->outpad, nsp, 0)) return sk_error("negative output_padding is not supported");
  if (any_below(g->stride, nsp, 1)) return sk_error("non-positive stride is not supported");
  if (any_below(g->dil, nsp, 1)) return sk_error("non-positive dilation is not supported");
  const char *ws = sk_shape_str(weight->ndim, weight->sizes, a, sizeof a);
  if (input->ndim != weight->ndim)
    return sk_error("Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of size "
                    "%s instead", weight->ndim, weight->ndim, ws, input->ndim,
                    sk_shape_str(input->ndim, input->sizes, b, sizeof b));
  if (weight->sizes[0] < groups)
    return sk_error("Given groups=%lld, expected weight to be at least %lld at dimension 0, but got weight of size %s "
                    "instead", (long long)groups, (long long)groups, ws);
  if (weight->sizes[0] % groups)
    return sk_error("Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of size "
                    "%s instead", (long long)groups, (long long)groups, ws);
  int bn = bias ? bias->ndim : bias_sizes.data ? bias_sizes.n : -1;
  const int64_t *bs = bias ? bias->sizes : bias_sizes.data;
  int64_t cb = transposed ? weight->sizes[1] * groups : weight->sizes[0]; /* the bias's channels */
  if (bn >= 0 && !(bn == 1 && bs[0] == cb))
    return sk_error("Given %sweight of size %s, expected bias to be 1-dimensional with %lld elements, but got bias of "
                    "size %s instead", transposed ? "transposed=1, " : "", ws, (long long)cb,
                    sk_shape_str(bn, bs, b, sizeof b));
  __int128 in[SK_CONV_MAX_SPATIAL], ext[SK_CONV_MAX_SPATIAL], out[SK_CONV_MAX_SPATIAL];
  for (int i = 0; i < nsp; i++) {
    ext[i] = (__int128)g->dil[i] * (weight->sizes[2 + i] - 1) + 1; /* the dilated kernel's extent */
    in[i] = input->sizes[2 + i];
  }
  if (!transposed) {
    if (input->sizes[1] != weight->sizes[1] * groups)
      return sk_error("Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but got %lld "
                      "channels instead", (long long)groups, ws, sk_shape_str(input->ndim, input->sizes, b, sizeof b),
                      (long long)(weight->sizes[1] * groups), (long long)input->sizes[1]);
    int fits = 1;
    __int128 padded[SK_CONV_MAX_SPATIAL];
    for (int i = 0; i < nsp; i++) {
      padded[i] = in[i] + 2 * (__int128)g->pad[i];
      fits &= padded[i] >= ext[i];
      out[i] = (padded[i] - ext[i]) / g->stride[i] + 1;
    }
    if (!fits) {
      char c[160], d[160];
      return sk_error("Calculated padded input size per channel: (%s). Kernel size: (%s). Kernel size can't be greater "
                      "than actual input size", by_str(nsp, padded, c, sizeof c), by_str(nsp, ext, d, sizeof d));
    }
  } else {
    if (input->sizes[1] != weight->sizes[0])
      return sk_error("Given transposed=1, weight of size %s, expected input%s to have %lld channels, but got %lld "
                      "channels instead", ws, sk_shape_str(input->ndim, input->sizes, b, sizeof b),
                      (long long)weight->sizes[0], (long long)input->sizes[1]);
    for (int i = 0; i < nsp; i++)
      if (g->outpad[i] >= g->stride[i] && g->outpad[i] >= g->dil[i]) {
        char c[160], d[160];
        return sk_error("output padding must be smaller than either stride or dilation, but got output_padding=%s, "
                        "stride=%s, dilation=%s", list_str(nsp, g->outpad, b, sizeof b),
                        list_str(nsp, g->stride, c, sizeof c), list_str(nsp, g->dil, d, sizeof d));
      }
    int fits = 1;
    for (int i = 0; i < nsp; i++) {
      out[i] = (in[i] - 1) * g->stride[i] - 2 * (__int128)g->pad[i] + ext[i] + g->outpad[i];
      fits &= out[i] > 0;
    }
    if (!fits) {
      char c[160], d[160];
      return sk_error("Given input size per channel: (%s). Calculated output size per channel: (%s). Output size is too "
                      "small", by_str(nsp, in, c, sizeof c), by_str(nsp, out, d, sizeof d));
    }
  }
  out_sizes[0] = input->sizes[0];
  out_sizes[1] = cb;
  for (int i = 0; i < nsp; i++) {
    if (out[i] > INT64_MAX) return sk_error("the output size %s overflows", by_str(nsp, out, a, sizeof a));
    out_sizes[2 + i] = (int64_t)out[i];
  }
  return 0;
}

/* PyTorch's check_input_same_type_as_parameters (the kernels check input against weight). */
static int check_dtypes(const SkTensor *input, const SkTensor *weight, const SkTensor *bias) {
  if (input->dtype != weight->dtype)
    return sk_error("expected scalar type %s but found %s", sk_dtype_torch_name(input->dtype),
                    sk_dtype_torch_name(weight->dtype));
  if (bias && bias->dtype != input->dtype)
    return sk_error("Input type (%s) and bias type (%s) should be the same", sk_dtype_name(input->dtype),
                    sk_dtype_name(bias->dtype));
  if (input->dtype == SK_DTYPE_BOOL) return sk_error("\"convolution\" not implemented for 'Bool'");
  return 0;
}
/* }==== */

/* {==== Meta ==== */
int sk_meta_convolution(SkMeta *m, const SkTensor *input, const SkTensor *weight, const SkTensor *bias, SkIntList stride,
                        SkIntList padding, SkIntList dilation, int transposed, SkIntList output_padding, int64_t groups) {
  SkConvGeom g;
  int64_t sizes[2 + SK_CONV_MAX_SPATIAL];
  static const SkIntList none = {NULL, 0};
  if (sk_conv_check(&g, input, weight, bias, none, stride, padding, dilation, transposed, output_padding, groups, sizes) ||
      check_dtypes(input, weight, bias))
    return -1;
  return sk_meta_set_output(m, 0, input->ndim, sizes, NULL, input->dtype);
}

/* The three gradients' shapes: input's, weight's, bias_sizes; None where output_mask is false. */
int sk_meta_kernel_convolution_backward(SkTensor **result1, SkTensor **result2, SkTensor **result3,
                                        const SkTensor *grad_output, const SkTensor *input, const SkTensor *weight,
                                        SkIntList bias_sizes, SkIntList stride, SkIntList padding, SkIntList dilation,
                                        int transposed, SkIntList output_padding, int64_t groups, SkIntList output_mask) {
  SkConvGeom g;
  int64_t sizes[2 + SK_CONV_MAX_SPATIAL];
  char a[160], b[160];
  if (output_mask.n != 3) return sk_error("output_mask must have 3 elements, got %d", output_mask.n);
  if (sk_conv_check(&g, input, weight, NULL, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
                    sizes) || check_dtypes(input, weight, NULL))
    return -1;
  if (grad_output->ndim != input->ndim || memcmp(grad_output->sizes, sizes, (size_t)input->ndim * sizeof *sizes))
    return sk_error("expected grad_output of size %s (the convolution's output), but got %s",
                    sk_shape_str(input->ndim, sizes, a, sizeof a),
                    sk_shape_str(grad_output->ndim, grad_output->sizes, b, sizeof b));
  if (output_mask.data[2] && !bias_sizes.data)
    return sk_error("output_mask[2] asks for the bias's gradient, but bias_sizes is None");
  SkTensor *r[3] = {NULL, NULL, NULL};
  SkDevice dev = SK_META;
  if (output_mask.data[0] && !(r[0] = sk_tensor_empty(input->ndim, input->sizes, input->dtype, dev))) goto fail;
  if (output_mask.data[1] && !(r[1] = sk_tensor_empty(weight->ndim, weight->sizes, weight->dtype, dev))) goto fail;
  if (output_mask.data[2] && !(r[2] = sk_tensor_empty(bias_sizes.n, bias_sizes.data, grad_output->dtype, dev))) goto fail;
  *result1 = r[0], *result2 = r[1], *result3 = r[2];
  return 0;
fail:
  for (int i = 0; i < 3; i++) sk_tensor_release(r[i]);
  return -1;
}
/* }==== */

/* {==== conv1d/2d/3d, conv_transpose1d/2d/3d ==== */
static const int64_t zeros3[3] = {0, 0, 0};

/* PyTorch's batchify: an unbatched input [C, d...] runs as [1, C, d...]. */
static int conv_nd(SkTensor **result, int n, const char *name, const SkTensor *input, const SkTensor *weight,
                   const SkTensor *bias, SkIntList stride, SkIntList padding, SkIntList dilation, int transposed,
                   SkIntList output_padding, int64_t groups) {
  char a[160];
  if (input->ndim != n + 1 && input->ndim != n + 2)
    return sk_error("Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s", n + 1, n + 2, name,
                    sk_shape_str(input->ndim, input->sizes, a, sizeof a));
  int batched = input->ndim == n + 2;
  SkTensor *x = NULL, *r = NULL;
  int rc = batched ? 0 : sk_unsqueeze(&x, input, 0);
  if (!rc) rc = sk_convolution(&r, batched ? input : x, weight, bias, stride, padding, dilation, transposed,
                               output_padding, groups);
  sk_tensor_release(x);
  if (!rc && !batched) {
    SkTensor *s = NULL;
    rc = sk_squeeze_dim(&s, r, 0);
    sk_tensor_release(r);
    r = s;
  }
  if (rc) return -1;
  *result = r;
  return 0;
}

/* padding "valid" (none) or "same" (stride 1: the output has the input's size). An odd
** total padding d·(k-1) pads one more on the right, as PyTorch: here one more on both
** sides, and the output drops its first element along that dim. */
static int conv_padding_nd(SkTensor **result, int n, const char *name, const SkTensor *input, const SkTensor *weight,
                           const SkTensor *bias, SkIntList stride, const char *padding, SkIntList dilation,
                           int64_t groups) {
  int64_t pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  int odd[3] = {0, 0, 0};
  SkIntList none = {zeros3, n};
  if (strcmp(padding, "same") == 0) {
    for (int i = 0; i < stride.n; i++)
      if (stride.data[i] != 1) return sk_error("padding='same' is not supported for strided convolutions");
    if (weight->ndim != n + 2) /* convolution's own check says what is wrong */
      return conv_nd(result, n, name, input, weight, bias, stride, none, dilation, 0, none, groups);
    if (expand("dilation", dilation, n, 1, dil)) return -1;
    for (int i = 0; i < n; i++) {
      __int128 t = (__int128)dil[i] * (weight->sizes[2 + i] - 1);
      if (t > INT64_MAX) return sk_error("dilation %lld is too large", (long long)dil[i]);
      int64_t total = (int64_t)t;
      odd[i] = (int)(total & 1);
      pad[i] = total / 2 + odd[i];
    }
  } else if (strcmp(padding, "valid") != 0)
    return sk_error("Invalid padding string: '%s'", padding);
  SkTensor *r = NULL;
  if (conv_nd(&r, n, name, input, weight, bias, stride, (SkIntList){pad, n}, dilation, 0, none, groups)) return -1;
  for (int i = 0; i < n; i++) {
    if (!odd[i]) continue;
    int64_t d = r->ndim - n + i;
    SkTensor *s = NULL;
    int rc = sk_narrow(&s, r, d, 1, r->sizes[d] - 1);
    sk_tensor_release(r);
    if (rc) return -1;
    r = s;
  }
  *result = r;
  return 0;
}

#define CONV_ND(n)                                                                                                     \
  int sk_math_conv##n##d(SkTensor **result, const SkTensor *input, const SkTensor *weight, const SkTensor *bias,       \
                         SkIntList stride, SkIntList padding, SkIntList dilation, int64_t groups) {                    \
    return conv_nd(result, n, "conv" #n "d", input, weight, bias, stride, padding, dilation, 0,                        \
                   (SkIntList){zeros3, n}, groups);                                                                    \
  }                                                                                                                    \
  int sk_math_conv##n##d_padding(SkTensor **result, const SkTensor *input, const SkTensor *weight,                     \
                                 const SkTensor *bias, SkIntList stride, const char *padding, SkIntList dilation,      \
                                 int64_t groups) {                                                                     \
    return conv_padding_nd(result, n, "conv" #n "d", input, weight, bias, stride, padding, dilation, groups);          \
  }                                                                                                                    \
  int sk_math_conv_transpose##n##d_input(SkTensor **result, const SkTensor *input, const SkTensor *weight,             \
                                         const SkTensor *bias, SkIntList stride, SkIntList padding,                    \
                                         SkIntList output_padding, int64_t groups, SkIntList dilation) {               \
    return conv_nd(result, n, "conv_transpose" #n "d", input, weight, bias, stride, padding, dilation, 1,              \
                   output_padding, groups);                                                                            \
  }
CONV_ND(1)
CONV_ND(2)
CONV_ND(3)
/* }==== */
