/*
** sk_upsample.c — resampling: upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d,
** upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d, upsample_trilinear3d, and
** interpolate (F.interpolate's front door, area mode through adaptive_avg_pool)
** Every mode is separable, so one pass resamples one spatial dim: each output position reads
** 1, 2 or 4 taps of the input (index_select) with weights, both computed here on the host
** with PyTorch's formulas (nearest in float, as its kernels; linear and cubic weights in
** double) and copied to the tensor's device. Autograd runs through index_select and mul.
*/
#include "sk_kernels.h"
#include "sk_composite_util.h"

#include <math.h>
#include <string.h>

#define T(call) SK_TAPE_STEP(tp, call)

enum { UP_NEAREST, UP_NEAREST_EXACT, UP_LINEAR, UP_CUBIC };
static const int taps_of[] = {1, 1, 2, 4};

/* PyTorch's compute_scales_value / area_pixel_compute_scale */
static double scale_of(SkOptDouble s, int64_t in, int64_t out, int mode, int align_corners) {
  if (mode >= UP_LINEAR && align_corners) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
  return s.has && s.v > 0 ? 1.0 / s.v : (double)in / (double)out;
}

/* cubic convolution (A = -0.75): the weights of taps x-1, x, x+1, x+2 at fraction t */
static void cubic_weights(double t, double w[4]) {
  const double A = -0.75;
#define CONV1(x) (((A + 2) * (x) - (A + 3)) * (x) * (x) + 1)
#define CONV2(x) ((((A) * (x) - 5 * (A)) * (x) + 8 * (A)) * (x) - 4 * (A))
  w[0] = CONV2(t + 1), w[1] = CONV1(t), w[2] = CONV1(1 - t), w[3] = CONV2(2 - t);
#undef CONV1
#undef CONV2
}

static int64_t clamp_index(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* The taps of output position o: idx[t] and w[t] for t < taps_of[mode] */
static void taps(int mode, int64_t o, int64_t in, double scale, int align_corners, int64_t *idx, double *w) {
  if (mode == UP_NEAREST || mode == UP_NEAREST_EXACT) {
    /* PyTorch's CPU nearest_neighbor(_exact)_compute_source_index, in float as its kernels */
    float s = (float)scale;
    float src = floorf(mode == UP_NEAREST_EXACT ? ((float)o + 0.5f) * s : (float)o * s);
    int64_t i = src < (float)in ? (int64_t)src : in - 1; /* clamped before the cast: no overflow */
    idx[0] = i < in - 1 ? i : in - 1;
    w[0] = 1;
    return;
  }
  double src = align_corners ? scale * (double)o : scale * ((double)o + 0.5) - 0.5;
  /* beyond the ends every tap is clamped to the edge: clamping src keeps the values and the casts in range */
  if (src > (double)in + 1) src = (double)in + 1;
  if (src < -2) src = -2;
  if (mode == UP_LINEAR) {
    if (src < 0) src = 0;
    int64_t i0 = (int64_t)src;
    double l1 = src - (double)i0;
    if (l1 > 1) l1 = 1;
    idx[0] = i0 < in - 1 ? i0 : in - 1;
    idx[1] = i0 < in - 1 ? i0 + 1 : idx[0];
    w[0] = 1 - l1, w[1] = l1;
    return;
  }
  double f = floor(src);
  cubic_weights(src - f, w);
  for (int t = 0; t < 4; t++) idx[t] = clamp_index((int64_t)f - 1 + t, in);
}

/* A 1-d CPU tensor of n elements on the tape: host arrays go through the CPU allocator, so a
** huge size is its out-of-memory error (and SK_CPU_MAX_ALLOC holds) */
static SkTensor *host_array(SkTape *tp, int64_t n, SkDType dtype) {
  if (tp->rc) return NULL;
  SkTensor *a = sk_tensor_empty(1, &n, dtype, SK_CPU);
  return sk_tape_keep(tp, a ? 0 : -1, a);
}

/* x resampled along dim d to `out` positions; x is NULL once an earlier pass failed (the tape's rc) */
static SkTensor *resample_dim(SkTape *tp, const SkTensor *x, int d, int64_t out, SkOptDouble s, int mode, int align_corners) {
  if (tp->rc) return NULL;
  int64_t in = x->sizes[d], nt = taps_of[mode];
  /* the identity: at scale 1 every mode maps o to o with weight 1 (cubic's other taps weigh 0);
  ** PyTorch's linear kernels copy a dim of equal sizes whatever the scale */
  if (in == out && (mode == UP_LINEAR || align_corners || !(s.has && s.v > 0 && s.v != 1))) return (SkTensor *)x;
  /* tap t's indices and weights are elements [t·out, (t + 1)·out) */
  SkTensor *ti = host_array(tp, nt * out, SK_DTYPE_INT64), *tw = host_array(tp, nt * out, SK_DTYPE_FLOAT64);
  if (tp->rc) return NULL;
  int64_t *idx = sk_tensor_data(ti);
  double *w = sk_tensor_data(tw);
  double scale = scale_of(s, in, out, mode, align_corners);
  for (int64_t o = 0; o < out; o++) {
    int64_t oi[4];
    double ow[4];
    taps(mode, o, in, scale, align_corners, oi, ow);
    for (int t = 0; t < nt; t++) idx[t * out + o] = oi[t], w[t * out + o] = ow[t];
  }
  /* the weights broadcast along the dims after d */
  int64_t wshape[SK_MAX_DIMS];
  int wn = x->ndim - d;
  wshape[0] = out;
  for (int k = 1; k < wn; k++) wshape[k] = 1;
  SkTensor *y = NULL;
  for (int t = 0; t < nt && !tp->rc; t++) {
    SkTensor *it = T(sk_to_device(&r, T(sk_narrow(&r, ti, 0, t * out, out)), x->device, -1, 0, 0, -1));
    SkTensor *g = T(sk_index_select(&r, x, d, it));
    if (mode >= UP_LINEAR) {
      SkTensor *wt = T(sk_to_device(&r, T(sk_narrow(&r, tw, 0, t * out, out)), x->device, (int)x->dtype, 0, 0, -1));
      g = T(sk_mul(&r, g, T(sk_reshape(&r, wt, ((SkIntList){wshape, wn})))));
    }
    y = y ? T(sk_add(&r, y, g, sk_scalar_int(1))) : g;
  }
  return y;
}

static const char *const op_names[4][3] = {
  {"upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"},
  {"_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d"},
  {"upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"},
  {"upsample_bicubic2d", "upsample_bicubic2d", "upsample_bicubic2d"}};

/* The k = output_size.n spatial dims of self (its last k) resampled; scales[i] may be None */
static int upsample(SkTensor **result, const SkTensor *self, int k, SkIntList output_size, const SkOptDouble *scales,
                    int mode, int align_corners) {
  const char *op = op_names[mode][k - 1];
  if (output_size.n != k) return sk_error("%s: argument 'output_size' must have %d elements, got %d", op, k, output_size.n);
  for (int i = 0; i < k; i++)
    if (scales[i].has && !(isfinite(scales[i].v) && fabs(scales[i].v) < 1e15))
      return sk_error("%s: scale factor %g is not finite or too large", op, scales[i].v);
  if (self->ndim != k + 2)
    return sk_error("%s: expected a %d-dim input (N, C and %d spatial dims), got %d dims", op, k + 2, k, self->ndim);
  if (mode >= UP_LINEAR && !sk_dtype_is_floating(self->dtype))
    return sk_error("\"%s\" not implemented for '%s' (it expects a floating point input)", op, sk_dtype_name(self->dtype));
  static const char *const names[3][3] = {{"W", "", ""}, {"H", "W", ""}, {"D", "H", "W"}};
  int bad = 0;
  for (int i = 0; i < k; i++) bad |= self->sizes[2 + i] <= 0 || output_size.data[i] <= 0;
  if (bad) {
    char a[96] = "", b[96] = "";
    size_t na = 0, nb = 0;
    for (int i = 0; i < k; i++) {
      na += (size_t)snprintf(a + na, sizeof a - na, "%s%s: %lld", i ? ", " : "", names[k - 1][i], (long long)self->sizes[2 + i]);
      nb += (size_t)snprintf(b + nb, sizeof b - nb, "%s%s: %lld", i ? ", " : "", names[k - 1][i], (long long)output_size.data[i]);
    }
    return sk_error("%s: Input and output sizes should be greater than 0, but got input (%s) output (%s)", op, a, b);
  }
  for (int i = 0; i < k; i++)
    if (output_size.data[i] > (1LL << 40))
      return sk_error("%s: output size %lld is too large", op, (long long)output_size.data[i]);
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  /* linear and cubic weigh and sum taps, pass after pass: in opmath, rounded once; nearest selects */
  const SkTensor *x = mode >= UP_LINEAR ? sk_tape_opmath(tp, self, self->dtype) : self;
  for (int i = k - 1; i >= 0; i--) x = resample_dim(tp, x, 2 + i, output_size.data[i], scales[i], mode, align_corners);
  if (!tp->rc && x == self) x = T(sk_clone(&r, self, -1)); /* a new tensor, as PyTorch's */
  return sk_tape_result(tp, sk_tape_round(tp, (SkTensor *)x, self->dtype), result);
}

/* {==== The named ops ==== */
#define S1 ((SkOptDouble[]){scales})
#define S2 ((SkOptDouble[]){scales_h, scales_w})
#define S3 ((SkOptDouble[]){scales_d, scales_h, scales_w})
#define SC1 SkOptDouble scales
#define SC2 SkOptDouble scales_h, SkOptDouble scales_w
#define SC3 SkOptDouble scales_d, SkOptDouble scales_h, SkOptDouble scales_w
#define NEAREST(name, mode, SC, S)                                                                  \
  int sk_math_##name(SkTensor **result, const SkTensor *self, SkIntList output_size, SC) {          \
    return upsample(result, self, sizeof S / sizeof(SkOptDouble), output_size, S, mode, 0);                                         \
  }
#define INTERP(name, mode, SC, S)                                                                   \
  int sk_math_##name(SkTensor **result, const SkTensor *self, SkIntList output_size, int align_corners, SC) { \
    return upsample(result, self, sizeof S / sizeof(SkOptDouble), output_size, S, mode, align_corners);                             \
  }
NEAREST(upsample_nearest1d, UP_NEAREST, SC1, S1)
NEAREST(upsample_nearest2d, UP_NEAREST, SC2, S2)
NEAREST(upsample_nearest3d, UP_NEAREST, SC3, S3)
NEAREST(_upsample_nearest_exact1d, UP_NEAREST_EXACT, SC1, S1)
NEAREST(_upsample_nearest_exact2d, UP_NEAREST_EXACT, SC2, S2)
NEAREST(_upsample_nearest_exact3d, UP_NEAREST_EXACT, SC3, S3)
INTERP(upsample_linear1d, UP_LINEAR, SC1, S1)
INTERP(upsample_bilinear2d, UP_LINEAR, SC2, S2)
INTERP(upsample_trilinear3d, UP_LINEAR, SC3, S3)
INTERP(upsample_bicubic2d, UP_CUBIC, SC2, S2)
/* }==== */

/* {==== interpolate: F.interpolate's checks, sizes and scales ==== */
static const struct { const char *name; int mode, dims; } modes[] = {
  {"nearest", UP_NEAREST, 0}, {"nearest-exact", UP_NEAREST_EXACT, 0}, {"area", -1, 0},
  {"linear", UP_LINEAR, 1}, {"bilinear", UP_LINEAR, 2}, {"bicubic", UP_CUBIC, 2}, {"trilinear", UP_LINEAR, 3}};

int sk_math_interpolate(SkTensor **result, const SkTensor *input, SkIntList size, SkDoubleList scale_factor,
                        const char *mode, int align_corners, int recompute_scale_factor, int antialias) {
  char sp[128], got[128];
  int m = -1;
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) if (mode && !strcmp(mode, modes[i].name)) m = (int)i;
  int k = input->ndim - 2;
  if (m < 0 || k < 1 || k > 3)
    return sk_error("interpolate: Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for the modes: "
                    "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got %s)", input->ndim,
                    mode ? mode : "None");
  int interp = modes[m].mode >= UP_LINEAR;
  if (align_corners >= 0 && !interp)
    return sk_error("interpolate: align_corners option can only be set with the interpolating modes: linear | bilinear | "
                    "bicubic | trilinear");
  if (antialias) return sk_error("interpolate: antialias=True is not supported by sk");
  if (modes[m].dims && modes[m].dims != k)
    return sk_error("interpolate: Got %dD input, but %s mode needs %dD input", input->ndim, modes[m].name, modes[m].dims + 2);
  int has_size = size.data != NULL, has_scale = scale_factor.data != NULL;
  if (has_size && has_scale) return sk_error("interpolate: only one of size or scale_factor should be defined");
  if (!has_size && !has_scale) return sk_error("interpolate: either size or scale_factor should be defined");
  sk_shape_str(k, input->sizes + 2, sp, sizeof sp);
  int n = has_size ? size.n : scale_factor.n;
  if (n != 1 && n != k) {
    if (has_size)
      return sk_error("interpolate: Input and output must have the same number of spatial dimensions, but got input with "
                      "spatial dimensions of %s and output size of %s. Please provide input tensor in (N, C, d1, d2, "
                      "...,dK) format and output size in (o1, o2, ...,oK) format.", sp, sk_shape_str(size.n, size.data, got, sizeof got));
    return sk_error("interpolate: Input and scale_factor must have the same number of spatial dimensions, but got input "
                    "with spatial dimensions of %s and scale_factor of %d entries. Please provide input tensor in (N, C, "
                    "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.", sp, scale_factor.n);
  }
  int64_t out[3];
  SkOptDouble sc[3];
  for (int i = 0; i < k; i++) {
    int j = n == 1 ? 0 : i;
    if (has_size) {
      out[i] = size.data[j];
      sc[i] = (SkOptDouble){0, 0};
    } else {
      double f = scale_factor.data[j], o = floor((double)input->sizes[2 + i] * f);
      out[i] = isfinite(o) && o > -9e15 && o < 9e15 ? (int64_t)o : -1;
      /* the scale reaches the kernel unless recomputed from the sizes (area never takes it) */
      sc[i] = (SkOptDouble){recompute_scale_factor != 1 && modes[m].mode >= 0, f};
    }
  }
  SkIntList os = {out, k};
  if (modes[m].mode < 0) {
    for (int i = 0; i < k; i++)
      if (out[i] < 0) return sk_error("interpolate: the output size %lld is negative", (long long)out[i]);
    if (k == 1) return sk_adaptive_avg_pool1d(result, input, os);
    if (k == 2) return sk_adaptive_avg_pool2d(result, input, os);
    return sk_adaptive_avg_pool3d(result, input, os);
  }
  return upsample(result, input, k, os, sc, modes[m].mode, interp && align_corners == 1);
}
/* }==== */
