/*
** sk_pool.c — pooling: checks and shapes (PyTorch's pool2d_shape_check and
** pooling_output_shape, with their messages), the meta functions of the structured 2-d and
** 3-d ops, and the composites: the 1-d ops (through the 2-d ones on an unsqueezed input, as
** PyTorch), max_pool2d/3d, adaptive_avg_pool1d/2d/3d, lp_pool.
** Sizes are computed in 128 bits. Ownership: arguments are borrowed; results are stored
** only on success.
*/
#include "sk_pool.h"
#include "sk_composite_util.h"
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"
#include "sk_checked.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const WORDS[4] = {"", "one", "two", "three"};
static const char *const AXES[4][3] = {{""}, {"W"}, {"H", "W"}, {"T", "H", "W"}};

/* {==== Checks ==== */
/* One value per spatial dim from a list of 1 or nsp (none: dflt[i], or `one` when dflt is NULL). */
static int expand(int64_t *out, SkIntList l, int nsp, const int64_t *dflt, int64_t one, const char *op,
                  const char *what) {
  if (!l.data || l.n == 0) {
    for (int i = 0; i < nsp; i++) out[i] = dflt ? dflt[i] : one;
    return 0;
  }
  if (l.n != 1 && l.n != nsp) return sk_error("%s: %s%s ints", op, what, WORDS[nsp]);
  for (int i = 0; i < nsp; i++) out[i] = l.data[l.n == 1 ? 0 : i];
  return 0;
}

/* "kernel size should be greater than zero, but got kH: 0 kW: 0" for v of nsp values. */
static int positive(const int64_t *v, int nsp, const char *what, const char *prefix) {
  for (int i = 0; i < nsp; i++)
    if (v[i] <= 0) {
      char b[160];
      size_t at = 0;
      for (int j = 0; j < nsp && at < sizeof b; j++)
        at += (size_t)snprintf(b + at, sizeof b - at, "%s%s%s: %lld", j ? " " : "", prefix, AXES[nsp][j], (long long)v[j]);
      return sk_error("%s should be greater than zero, but got %s", what, b);
    }
  return 0;
}

/* PyTorch's input check: nsp+1 or nsp+2 dims, only a batch dim may be 0. */
static int check_input(const SkTensor *self, int nsp) {
  int ok = self->ndim == nsp + 1 || self->ndim == nsp + 2;
  for (int i = self->ndim == nsp + 2 ? 1 : 0; ok && i < self->ndim; i++) ok = self->sizes[i] > 0;
  if (!ok) {
    char b[160];
    return sk_error("Expected %dD or %dD (batch mode) tensor with optional 0 dim batch size for input, but got:%s", nsp + 1,
                    nsp + 2, sk_shape_str(self->ndim, self->sizes, b, sizeof b));
  }
  return 0;
}

static void fill_planes(SkPoolGeom *g, const SkTensor *self, int nsp) {
  g->nsp = nsp;
  int lead = self->ndim - nsp;
  g->planes = sk_numel(lead, self->sizes);
  for (int i = 0; i < 3; i++) {
    g->in[i] = i >= 3 - nsp ? self->sizes[lead + i - (3 - nsp)] : 1;
    g->out[i] = 1;
    g->k[i] = g->s[i] = g->d[i] = 1;
    g->p[i] = 0;
  }
}

/* "(3x1x1)": the channels, then the spatial sizes, each exact (they may pass int64). */
static const char *by_str(int64_t c, int n, const __int128 *v, char *buf, size_t len) {
  char d[SK_I128_CHARS];
  size_t at = (size_t)snprintf(buf, len, "%lld", (long long)c);
  for (int i = 0; i < n && at < len; i++) at += (size_t)snprintf(buf + at, len - at, "x%s", sk_i128_str(v[i], d));
  return buf;
}

int sk_pool_window(SkPoolGeom *g, const char *op, int nsp, const SkTensor *self, SkIntList kernel_size,
                   SkIntList stride, SkIntList padding, SkIntList dilation, int ceil_mode) {
  memset(g, 0, sizeof *g);
  int64_t k[3], s[3], p[3], d[3];
  if (!kernel_size.data || kernel_size.n == 0)
    return sk_error("%s: kernel_size must either be a single int, or a tuple of %s ints", op, WORDS[nsp]);
  if (expand(k, kernel_size, nsp, NULL, 0, op, "kernel_size must either be a single int, or a tuple of ") ||
      expand(s, stride, nsp, k, 0, op, "stride must either be omitted, a single int, or a tuple of ") ||
      expand(p, padding, nsp, NULL, 0, op, "padding must be either be a single int, or a tuple of ") ||
      expand(d, dilation, nsp, NULL, 1, op, "dilation must be either a single int, or a tuple of "))
    return -1;
  if (positive(k, nsp, "kernel size", "k") || positive(s, nsp, "stride", "d") || positive(d, nsp, "dilation", "dilation"))
    return -1;
  for (int i = 0; i < nsp; i++)
    if (p[i] < 0 || p[i] > k[i] / 2)
      return sk_error("pad should be at most half of kernel size, but got pad=%lld and kernel_size=%lld", (long long)p[i],
                      (long long)k[i]);
  if (check_input(self, nsp)) return -1;
  fill_planes(g, self, nsp);
  __int128 out[3], in[3];
  int fits = 1;
  for (int i = 0; i < nsp; i++) {
    in[i] = g->in[3 - nsp + i];
    __int128 num = in[i] + 2 * (__int128)p[i] - (__int128)d[i] * (k[i] - 1) - 1 + (ceil_mode ? s[i] - 1 : 0);
    __int128 q = num >= 0 ? num / s[i] : -((-num + s[i] - 1) / s[i]); /* rounded down */
    out[i] = q + 1;
    if (ceil_mode && (out[i] - 1) * s[i] >= in[i] + p[i]) out[i]--;
    fits &= out[i] >= 1;
    int a = 3 - nsp + i;
    g->k[a] = k[i], g->s[a] = s[i], g->p[a] = p[i], g->d[a] = d[i];
  }
  if (!fits) {
    char a[160], b[160];
    int64_t c = self->sizes[self->ndim - nsp - 1];
    return sk_error("Given input size: (%s). Calculated output size: (%s). Output size is too small",
                    by_str(c, nsp, in, a, sizeof a), by_str(c, nsp, out, b, sizeof b));
  }
  for (int i = 0; i < nsp; i++) g->out[3 - nsp + i] = (int64_t)out[i];
  g->ceil_mode = ceil_mode;
  return 0;
}

int sk_pool_adaptive(SkPoolGeom *g, const char *op, int nsp, const SkTensor *self, SkIntList output_size) {
  char b[160];
  memset(g, 0, sizeof *g);
  if (output_size.n != nsp) return sk_error("%s: output_size must be %d", op, nsp);
  for (int i = 0; i < nsp; i++)
    if (output_size.data[i] < 0) {
      size_t at = 0;
      for (int j = 0; j < nsp && at < sizeof b; j++)
        at += (size_t)snprintf(b + at, sizeof b - at, "%s%lld", j ? ", " : "", (long long)output_size.data[j]);
      return sk_error("%s: elements of output_size must be greater than or equal to 0 but received {%s}", op, b);
    }
  if (self->ndim != nsp + 1 && self->ndim != nsp + 2)
    return sk_error("%s(): Expected %dD or %dD tensor, but got %s", op, nsp + 1, nsp + 2,
                    sk_shape_str(self->ndim, self->sizes, b, sizeof b));
  for (int i = self->ndim == nsp + 2 ? 1 : 0; i < self->ndim; i++)
    if (self->sizes[i] == 0)
      return sk_error("%s(): Expected input to have non-zero size for non-batch dimensions, but input has sizes %s with "
                      "dimension %d being empty", op, sk_shape_str(self->ndim, self->sizes, b, sizeof b), i);
  fill_planes(g, self, nsp);
  for (int i = 0; i < nsp; i++) g->out[3 - nsp + i] = output_size.data[i];
  return 0;
}

void sk_pool_out_sizes(const SkPoolGeom *g, const SkTensor *self, int64_t *sizes) {
  int lead = self->ndim - g->nsp;
  for (int i = 0; i < self->ndim; i++) sizes[i] = i < lead ? self->sizes[i] : g->out[3 - g->nsp + i - lead];
}

/* t has exactly the sizes given (what a backward reads must be the forward's shape). */
static int check_sizes(const SkTensor *t, const char *name, int n, const int64_t *sizes, const char *what) {
  if (t->ndim == n && memcmp(t->sizes, sizes, (size_t)n * sizeof *sizes) == 0) return 0;
  char a[160], b[160];
  return sk_error("expected %s of size %s (%s), but got %s", name, sk_shape_str(n, sizes, a, sizeof a), what,
                  sk_shape_str(t->ndim, t->sizes, b, sizeof b));
}

static int check_indices(const SkTensor *indices) {
  if (indices->dtype != SK_DTYPE_INT64)
    return sk_error("elements in indices should be type int64 but got: %s", sk_dtype_torch_name(indices->dtype));
  return 0;
}
/* }==== */

/* {==== Meta functions of the structured 2-d and 3-d ops ==== */
static int window_outputs(SkMeta *m, const char *op, int nsp, const SkTensor *self, SkIntList ks, SkIntList st,
                          SkIntList pd, SkIntList dl, int ceil_mode, int with_indices) {
  SkPoolGeom g;
  int64_t sizes[SK_MAX_DIMS];
  if (sk_pool_window(&g, op, nsp, self, ks, st, pd, dl, ceil_mode)) return -1;
  sk_pool_out_sizes(&g, self, sizes);
  if (sk_meta_set_output(m, 0, self->ndim, sizes, NULL, self->dtype)) return -1;
  return with_indices ? sk_meta_set_output(m, 1, self->ndim, sizes, NULL, SK_DTYPE_INT64) : 0;
}

/* A window op's backward: grad_output (and indices) of the forward's output shape; the
** gradient has self's. */
static int window_backward(SkMeta *m, const char *op, int nsp, const SkTensor *grad_output, const SkTensor *self,
                           SkIntList ks, SkIntList st, SkIntList pd, SkIntList dl, int ceil_mode,
                           const SkTensor *indices) {
  SkPoolGeom g;
  int64_t sizes[SK_MAX_DIMS];
  if (sk_pool_window(&g, op, nsp, self, ks, st, pd, dl, ceil_mode)) return -1;
  sk_pool_out_sizes(&g, self, sizes);
  if (check_sizes(grad_output, "grad_output", self->ndim, sizes, "the pooling's output") ||
      (indices && (check_indices(indices) || check_sizes(indices, "indices", self->ndim, sizes, "the pooling's output"))))
    return -1;
  return sk_meta_set_output(m, 0, self->ndim, self->sizes, NULL, self->dtype);
}

static int adaptive_outputs(SkMeta *m, const char *op, int nsp, const SkTensor *self, SkIntList output_size,
                            int with_indices) {
  SkPoolGeom g;
  int64_t sizes[SK_MAX_DIMS];
  if (sk_pool_adaptive(&g, op, nsp, self, output_size)) return -1;
  sk_pool_out_sizes(&g, self, sizes);
  if (sk_meta_set_output(m, 0, self->ndim, sizes, NULL, self->dtype)) return -1;
  return with_indices ? sk_meta_set_output(m, 1, self->ndim, sizes, NULL, SK_DTYPE_INT64) : 0;
}

/* grad_output (and indices) have self's leading dims and the forward's output sizes. */
static int adaptive_backward(SkMeta *m, int nsp, const SkTensor *grad_output, const SkTensor *self,
                             const SkTensor *indices) {
  int64_t sizes[SK_MAX_DIMS];
  int lead = self->ndim - nsp;
  if (grad_output->ndim != self->ndim)
    return check_sizes(grad_output, "grad_output", self->ndim, self->sizes, "self's leading dims");
  for (int i = 0; i < self->ndim; i++) sizes[i] = i < lead ? self->sizes[i] : grad_output->sizes[i];
  if (check_sizes(grad_output, "grad_output", self->ndim, sizes, "self's leading dims") ||
      (indices && (check_indices(indices) || check_sizes(indices, "indices", self->ndim, sizes, "grad_output's"))))
    return -1;
  return sk_meta_set_output(m, 0, self->ndim, self->sizes, NULL, self->dtype);
}

static int unpool_outputs(SkMeta *m, int nsp, const SkTensor *self, const SkTensor *indices, SkIntList output_size) {
  char a[160], b[160];
  if (check_indices(indices)) return -1;
  if (self->ndim != nsp + 1 && self->ndim != nsp + 2)
    return sk_error("Input to max_unpooling%dd should be a %dd or %dd Tensor, but got a tensor with %d dimensions.", nsp,
                    nsp + 1, nsp + 2, self->ndim);
  if (indices->ndim != self->ndim || memcmp(indices->sizes, self->sizes, (size_t)self->ndim * sizeof *self->sizes))
    return sk_error("Expected shape of indices to be same as that of the input tensor (%s) but got indices tensor with "
                    "shape: %s", sk_shape_str(self->ndim, self->sizes, a, sizeof a),
                    sk_shape_str(indices->ndim, indices->sizes, b, sizeof b));
  if (output_size.n != nsp)
    return sk_error("There should be exactly %s elements (%s) in output_size, but got %d elements.", WORDS[nsp],
                    nsp == 2 ? "height, width" : "depth, height, width", output_size.n);
  for (int i = 0; i < nsp; i++)
    if (output_size.data[i] < 0) return sk_error("max_unpooling%dd: output_size must be non-negative, got %lld", nsp,
                                                 (long long)output_size.data[i]);
  int64_t sizes[SK_MAX_DIMS];
  int lead = self->ndim - nsp;
  for (int i = 0; i < self->ndim; i++) sizes[i] = i < lead ? self->sizes[i] : output_size.data[i - lead];
  return sk_meta_set_output(m, 0, self->ndim, sizes, NULL, self->dtype);
}

#define POOL_METAS(n)                                                                                                  \
  int sk_meta_max_pool##n##d_with_indices(SkMeta *m, const SkTensor *self, SkIntList kernel_size, SkIntList stride,     \
                                          SkIntList padding, SkIntList dilation, int ceil_mode) {                      \
    return window_outputs(m, "max_pool" #n "d", n, self, kernel_size, stride, padding, dilation, ceil_mode, 1);          \
  }                                                                                                                    \
  int sk_meta_max_pool##n##d_with_indices_backward_grad_input(SkMeta *m, const SkTensor *grad_output,                   \
                                                              const SkTensor *self, SkIntList kernel_size,              \
                                                              SkIntList stride, SkIntList padding, SkIntList dilation,  \
                                                              int ceil_mode, const SkTensor *indices) {                 \
    return window_backward(m, "max_pool" #n "d", n, grad_output, self, kernel_size, stride, padding, dilation,          \
                           ceil_mode, indices);                                                                        \
  }                                                                                                                    \
  int sk_meta_avg_pool##n##d(SkMeta *m, const SkTensor *self, SkIntList kernel_size, SkIntList stride,                  \
                             SkIntList padding, int ceil_mode, int count_include_pad, SkOptInt divisor_override) {      \
    (void)count_include_pad;                                                                                           \
    if (divisor_override.has && divisor_override.v == 0) return sk_error("divisor must be not zero");          \
    return window_outputs(m, "avg_pool" #n "d", n, self, kernel_size, stride, padding, (SkIntList){NULL, 0},           \
                          ceil_mode, 0);                                                                               \
  }                                                                                                                    \
  int sk_meta_avg_pool##n##d_backward_grad_input(SkMeta *m, const SkTensor *grad_output, const SkTensor *self,          \
                                                 SkIntList kernel_size, SkIntList stride, SkIntList padding,            \
                                                 int ceil_mode, int count_include_pad, SkOptInt divisor_override) {     \
    (void)count_include_pad;                                                                                           \
    if (divisor_override.has && divisor_override.v == 0) return sk_error("divisor must be not zero");          \
    return window_backward(m, "avg_pool" #n "d", n, grad_output, self, kernel_size, stride, padding,                   \
                           (SkIntList){NULL, 0}, ceil_mode, NULL);                                                     \
  }                                                                                                                    \
  int sk_meta__adaptive_avg_pool##n##d(SkMeta *m, const SkTensor *self, SkIntList output_size) {                       \
    return adaptive_outputs(m, "adaptive_avg_pool" #n "d", n, self, output_size, 0);                                   \
  }                                                                                                                    \
  int sk_meta__adaptive_avg_pool##n##d_backward(SkMeta *m, const SkTensor *grad_output, const SkTensor *self) {        \
    return adaptive_backward(m, n, grad_output, self, NULL);                                                           \
  }                                                                                                                    \
  int sk_meta_adaptive_max_pool##n##d(SkMeta *m, const SkTensor *self, SkIntList output_size) {                        \
    return adaptive_outputs(m, "adaptive_max_pool" #n "d", n, self, output_size, 1);                                   \
  }                                                                                                                    \
  int sk_meta_adaptive_max_pool##n##d_backward_grad_input(SkMeta *m, const SkTensor *grad_output,                      \
                                                          const SkTensor *self, const SkTensor *indices) {             \
    return adaptive_backward(m, n, grad_output, self, indices);                                                        \
  }
POOL_METAS(2)
POOL_METAS(3)

int sk_meta_max_unpool2d(SkMeta *m, const SkTensor *self, const SkTensor *indices, SkIntList output_size) {
  return unpool_outputs(m, 2, self, indices, output_size);
}

int sk_meta_max_unpool3d(SkMeta *m, const SkTensor *self, const SkTensor *indices, SkIntList output_size,
                         SkIntList stride, SkIntList padding) {
  if (stride.n != 3 || padding.n != 3)
    return sk_error("There should be exactly three elements (depth, height, width) in stride and padding, but got %d and %d",
                    stride.n, padding.n);
  for (int i = 0; i < 3; i++)
    if (stride.data[i] <= 0)
      return sk_error("strides should be greater than zero, but got stride: [%lld, %lld, %lld]", (long long)stride.data[0],
                      (long long)stride.data[1], (long long)stride.data[2]);
  return unpool_outputs(m, 3, self, indices, output_size);
}
/* }==== */

/* {==== Composites ==== */
static int release2(int rc, SkTensor *a, SkTensor *b) {
  sk_tensor_release(a);
  sk_tensor_release(b);
  return rc;
}

int sk_math_max_pool2d(SkTensor **result, const SkTensor *self, SkIntList kernel_size, SkIntList stride,
                       SkIntList padding, SkIntList dilation, int ceil_mode) {
  SkTensor *i = NULL;
  int rc = sk_max_pool2d_with_indices(result, &i, self, kernel_size, stride, padding, dilation, ceil_mode);
  sk_tensor_release(i);
  return rc;
}

int sk_math_max_pool3d(SkTensor **result, const SkTensor *self, SkIntList kernel_size, SkIntList stride,
                       SkIntList padding, SkIntList dilation, int ceil_mode) {
  SkTensor *i = NULL;
  int rc = sk_max_pool3d_with_indices(result, &i, self, kernel_size, stride, padding, dilation, ceil_mode);
  sk_tensor_release(i);
  return rc;
}

/* A 1-d op's list argument as the 2-d op's: [1, v] (stride [] stays []). */
static int list_1d(const char *op, const char *name, SkIntList l, int64_t one, int64_t *two, SkIntList *out) {
  if (l.data && l.n > 1) return sk_error("%s() argument '%s' should contain one int (got %d)", op, name, l.n);
  if (!l.data || l.n == 0) { *out = l; return 0; }
  two[0] = one, two[1] = l.data[0];
  *out = (SkIntList){two, 2};
  return 0;
}

static int check_1d(const SkTensor *self, const char *op) {
  if (self->ndim == 2 || self->ndim == 3) return 0;
  return sk_error("Expected 2 to 3 dimensions, but got %d-dimensional tensor for argument #1 'self' (while checking "
                  "arguments for %s)", self->ndim, op);
}

int sk_math_max_pool1d_with_indices(SkTensor **result1, SkTensor **result2, const SkTensor *self,
                                    SkIntList kernel_size, SkIntList stride, SkIntList padding, SkIntList dilation,
                                    int ceil_mode) {
  char b[160];
  int ok = self->ndim == 2 || self->ndim == 3;
  for (int i = self->ndim == 3 ? 1 : 0; ok && i < self->ndim; i++) ok = self->sizes[i] > 0;
  if (!ok)
    return sk_error("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but "
                    "got:%s", sk_shape_str(self->ndim, self->sizes, b, sizeof b));
  int64_t k2[2], s2[2], p2[2], d2[2];
  SkIntList k, s, p, d;
  if (list_1d("max_pool1d", "kernel_size", kernel_size, 1, k2, &k) || list_1d("max_pool1d", "stride", stride, 1, s2, &s) ||
      list_1d("max_pool1d", "padding", padding, 0, p2, &p) || list_1d("max_pool1d", "dilation", dilation, 1, d2, &d))
    return -1;
  SkTensor *x = NULL, *v = NULL, *i = NULL;
  int rc = sk_unsqueeze(&x, self, -2);
  if (!rc) rc = sk_max_pool2d_with_indices(&v, &i, x, k, s, p, d, ceil_mode);
  sk_tensor_release(x);
  SkTensor *v1 = NULL, *i1 = NULL;
  if (!rc) rc = sk_squeeze_dim(&v1, v, -2);
  if (!rc) rc = sk_squeeze_dim(&i1, i, -2);
  release2(0, v, i);
  if (rc) return release2(-1, v1, i1);
  *result1 = v1, *result2 = i1;
  return 0;
}

int sk_math_max_pool1d(SkTensor **result, const SkTensor *self, SkIntList kernel_size, SkIntList stride,
                       SkIntList padding, SkIntList dilation, int ceil_mode) {
  SkTensor *i = NULL;
  int rc = sk_max_pool1d_with_indices(result, &i, self, kernel_size, stride, padding, dilation, ceil_mode);
  sk_tensor_release(i);
  return rc;
}

int sk_math_avg_pool1d(SkTensor **result, const SkTensor *self, SkIntList kernel_size, SkIntList stride,
                       SkIntList padding, int ceil_mode, int count_include_pad) {
  if (check_1d(self, "avg_pool1d")) return -1;
  int64_t k2[2], s2[2], p2[2];
  SkIntList k, s, p;
  if (list_1d("avg_pool1d", "kernel_size", kernel_size, 1, k2, &k) || list_1d("avg_pool1d", "stride", stride, 1, s2, &s) ||
      list_1d("avg_pool1d", "padding", padding, 0, p2, &p))
    return -1;
  SkTensor *x = NULL, *y = NULL;
  int rc = sk_unsqueeze(&x, self, -2);
  if (!rc) rc = sk_avg_pool2d(&y, x, k, s, p, ceil_mode, count_include_pad, (SkOptInt){0, 0});
  if (!rc) rc = sk_squeeze_dim(result, y, -2);
  return release2(rc, x, y);
}

/* The checks here, so that they name adaptive_avg_pool2d/3d. */
static int adaptive_avg(SkTensor **result, const SkTensor *self, SkIntList output_size, int nsp, const char *op) {
  SkPoolGeom g;
  if (sk_pool_adaptive(&g, op, nsp, self, output_size)) return -1;
  return nsp == 2 ? sk__adaptive_avg_pool2d(result, self, output_size) : sk__adaptive_avg_pool3d(result, self, output_size);
}

int sk_math_adaptive_avg_pool2d(SkTensor **result, const SkTensor *self, SkIntList output_size) {
  return adaptive_avg(result, self, output_size, 2, "adaptive_avg_pool2d");
}

int sk_math_adaptive_avg_pool3d(SkTensor **result, const SkTensor *self, SkIntList output_size) {
  return adaptive_avg(result, self, output_size, 3, "adaptive_avg_pool3d");
}

int sk_math_adaptive_avg_pool1d(SkTensor **result, const SkTensor *self, SkIntList output_size) {
  if (check_1d(self, "adaptive_avg_pool1d")) return -1;
  if (output_size.n != 1) return sk_error("adaptive_avg_pool1d: output_size must be 1");
  int64_t o2[2] = {1, output_size.data[0]};
  SkTensor *x = NULL, *y = NULL;
  int rc = sk_unsqueeze(&x, self, -2);
  if (!rc) rc = sk_adaptive_avg_pool2d(&y, x, (SkIntList){o2, 2});
  if (!rc) rc = sk_squeeze_dim(result, y, -2);
  return release2(rc, x, y);
}

int sk_math_adaptive_max_pool1d(SkTensor **result1, SkTensor **result2, const SkTensor *self, SkIntList output_size) {
  if (check_1d(self, "adaptive_max_pool1d")) return -1;
  if (output_size.n != 1) return sk_error("adaptive_max_pool1d: output_size must be 1");
  int64_t o2[2] = {1, output_size.data[0]};
  SkTensor *x = NULL, *v = NULL, *i = NULL, *v1 = NULL, *i1 = NULL;
  int rc = sk_unsqueeze(&x, self, -2);
  if (!rc) rc = sk_adaptive_max_pool2d(&v, &i, x, (SkIntList){o2, 2});
  sk_tensor_release(x);
  if (!rc) rc = sk_squeeze_dim(&v1, v, -2);
  if (!rc) rc = sk_squeeze_dim(&i1, i, -2);
  release2(0, v, i);
  if (rc) return release2(-1, v1, i1);
  *result1 = v1, *result2 = i1;
  return 0;
}

int sk_math_max_unpool1d(SkTensor **result, const SkTensor *self, const SkTensor *indices, SkIntList output_size) {
  if (check_1d(self, "max_unpool1d")) return -1;
  if (output_size.n != 1)
    return sk_error("There should be exactly one element (width) in output_size, but got %d elements.", output_size.n);
  int64_t o2[2] = {1, output_size.data[0]};
  SkTensor *x = NULL, *ix = NULL, *y = NULL;
  int rc = sk_unsqueeze(&x, self, -2);
  if (!rc) rc = sk_unsqueeze(&ix, indices, -2);
  if (!rc) rc = sk_max_unpool2d(&y, x, ix, (SkIntList){o2, 2});
  if (!rc) rc = sk_squeeze_dim(result, y, -2);
  sk_tensor_release(ix);
  return release2(rc, x, y);
}

/* PyTorch's F.lp_pool: (sign(a)·relu(|a|)·k)^(1/p) with a = avg_pool(x^p), no padding. */
static int lp_pool(SkTensor **result, const SkTensor *self, double p, SkIntList kernel_size, SkIntList stride,
                   int ceil_mode, int nsp) {
  if (sk_dtype_is_half(self->dtype)) { /* in opmath: the seven steps on a float32 copy, rounded once */
    SkTape tp = {0};
    SkTensor *x = sk_tape_opmath(&tp, self, self->dtype);
    SkTensor *y = SK_TAPE_STEP(&tp, lp_pool(&r, x, p, kernel_size, stride, ceil_mode, nsp));
    return sk_tape_result(&tp, sk_tape_round(&tp, y, self->dtype), result);
  }
  SkTensor *t[7] = {NULL};
  double kvol = 1; /* in double: the kernel sizes are checked by avg_pool, after this */
  for (int i = 0; i < nsp; i++) kvol *= kernel_size.data && kernel_size.n ? (double)kernel_size.data[kernel_size.n == 1 ? 0 : i] : 1;
  static const int64_t zero[2] = {0, 0};
  int rc = sk_pow_Tensor_Scalar(&t[0], self, sk_scalar_float(p));
  if (!rc) rc = nsp == 1 ? sk_avg_pool1d(&t[1], t[0], kernel_size, stride, (SkIntList){zero, 1}, ceil_mode, 1)
                         : sk_avg_pool2d(&t[1], t[0], kernel_size, stride, (SkIntList){zero, 2}, ceil_mode, 1, (SkOptInt){0, 0});
  if (!rc) rc = sk_sign(&t[2], t[1]);
  if (!rc) rc = sk_abs(&t[3], t[1]);
  if (!rc) rc = sk_relu_(t[3]);
  if (!rc) rc = sk_mul(&t[4], t[2], t[3]);
  if (!rc) rc = sk_mul_Scalar(&t[5], t[4], sk_scalar_float(kvol));
  if (!rc) rc = sk_pow_Tensor_Scalar(&t[6], t[5], sk_scalar_float(1.0 / p));
  if (!rc) { *result = t[6]; t[6] = NULL; }
  for (int i = 0; i < 7; i++) sk_tensor_release(t[i]);
  return rc;
}

int sk_math_lp_pool1d(SkTensor **result, const SkTensor *self, double norm_type, SkIntList kernel_size,
                      SkIntList stride, int ceil_mode) {
  return lp_pool(result, self, norm_type, kernel_size, stride, ceil_mode, 1);
}

int sk_math_lp_pool2d(SkTensor **result, const SkTensor *self, double norm_type, SkIntList kernel_size,
                      SkIntList stride, int ceil_mode) {
  return lp_pool(result, self, norm_type, kernel_size, stride, ceil_mode, 2);
}
/* }==== */
