/*
** sk_grid_sample.c — grid_sampler (2-d and 3-d: bilinear/trilinear, nearest, bicubic; zeros,
** border and reflection padding; align_corners), grid_sample (F.grid_sample's front door) and
** affine_grid_generator / affine_grid.
** PyTorch's formulas (GridSampler.h) written with tensor ops on the input's device: the grid's
** coordinates are unnormalized and padded elementwise, each corner (tap) is a gather of the
** input flattened over its spatial dims at the clamped linear index, kept where the corner is
** inside the input, times its weight. Autograd reaches input (through gather) and grid
** (through the weights' fractions), as PyTorch's kernels' backward does.
*/
#include "sk_kernels.h"
#include "sk_composite_util.h"

#include <string.h>

#define T(call) SK_TAPE_STEP(tp, call)
#define F(x) sk_scalar_float(x)
#define ONE sk_scalar_int(1)

enum { MODE_BILINEAR, MODE_NEAREST, MODE_BICUBIC };
enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION };

typedef struct {
  int D, mode, pad, align;
  int64_t N, C, P;                     /* P: output positions (the grid's spatial product) */
  int64_t size[3];                     /* input spatial sizes, component order: x (last dim), y, z */
  const SkTensor *flat;                /* input as [N, C, S] */
} Sampler;

/* {==== Coordinates ==== */
/* PyTorch's reflect_coordinates: `in` folded into [twice_low/2, twice_high/2] */
static int reflect(SkTensor **out, const SkTensor *in, int64_t twice_low, int64_t twice_high) {
  SkTape t = {0}, *tp = &t;
  if (twice_low == twice_high) return sk_tape_result(tp, T(sk_mul_Scalar(&r, in, F(0))), out);
  double min = (double)twice_low / 2, span = (double)(twice_high - twice_low) / 2;
  SkTensor *a = T(sk_abs(&r, T(sk_add_Scalar(&r, in, F(-min), ONE))));
  SkTensor *extra = T(sk_fmod_Scalar(&r, a, F(span)));
  SkTensor *flips = T(sk_floor(&r, T(sk_mul_Scalar(&r, a, F(1 / span)))));
  SkTensor *even = T(sk_eq_Scalar(&r, T(sk_remainder_Scalar(&r, flips, F(2))), F(0)));
  SkTensor *up = T(sk_add_Scalar(&r, extra, F(min), ONE));
  SkTensor *down = T(sk_add_Scalar(&r, T(sk_mul_Scalar(&r, extra, F(-1))), F(span + min), ONE));
  return sk_tape_result(tp, T(sk_where_self(&r, even, up, down)), out);
}

/* the source coordinate of grid component g (size n) in input pixels: unnormalized, then
** (padding != 0) padded; a non-finite or huge one becomes -100 (outside), as PyTorch's
** safe_downgrade_to_int_range, so it can become an index */
static int source(SkTensor **out, const SkTensor *g, int64_t n, const Sampler *s, int padding) {
  SkTape t = {0}, *tp = &t;
  SkTensor *x = s->align ? T(sk_mul_Scalar(&r, T(sk_add_Scalar(&r, g, F(1), ONE)), F((double)(n - 1) / 2)))
                         : T(sk_add_Scalar(&r, T(sk_mul_Scalar(&r, T(sk_add_Scalar(&r, g, F(1), ONE)), F((double)n / 2))), F(-0.5), ONE));
  if (padding && s->pad == PAD_REFLECTION)
    x = T(reflect(&r, x, s->align ? 0 : -1, s->align ? 2 * (n - 1) : 2 * n - 1));
  if (padding && s->pad != PAD_ZEROS) x = T(sk_clamp(&r, x, F(0), F((double)(n - 1))));
  SkTensor *fine = T(sk_lt_Scalar(&r, T(sk_abs(&r, x)), F(1 << 30))); /* false for NaN */
  SkTensor *outside = sk_tape_number(tp, F(-100));
  return sk_tape_result(tp, T(sk_where_self(&r, fine, x, outside)), out);
}
/* }==== */

/* {==== Taps ==== */
/* input at integer coordinates idx[k] (int64 [N, 1, P], component order), 0 where outside
** (or, bicubic with border/reflection, at the padded coordinate): [N, C, P] */
static int tap(SkTensor **out, const Sampler *s, SkTensor *const *idx) {
  SkTape t = {0}, *tp = &t;
  SkTensor *lin = NULL, *inside = NULL;
  int64_t stride = 1;
  for (int k = 0; k < s->D; k++) {
    int64_t n = s->size[k];
    SkTensor *c = T(sk_clamp(&r, idx[k], sk_scalar_int(0), sk_scalar_int(n - 1)));
    SkTensor *in = T(sk_logical_and(&r, T(sk_ge_Scalar(&r, idx[k], sk_scalar_int(0))), T(sk_lt_Scalar(&r, idx[k], sk_scalar_int(n)))));
    SkTensor *term = T(sk_mul_Scalar(&r, c, sk_scalar_int(stride)));
    lin = lin ? T(sk_add(&r, lin, term, ONE)) : term;
    inside = inside ? T(sk_logical_and(&r, inside, in)) : in;
    stride *= n;
  }
  int64_t shape[3] = {s->N, s->C, s->P};
  SkTensor *v = T(sk_gather(&r, s->flat, 2, T(sk_expand(&r, lin, (SkIntList){shape, 3}, 0)), 0));
  return sk_tape_result(tp, T(sk_where_self(&r, inside, v, sk_tape_number(tp, F(0)))), out);
}

static int as_index(SkTensor **out, const SkTensor *x, double add) {
  SkTape t = {0}, *tp = &t;
  return sk_tape_result(tp, T(sk_to_dtype(&r, T(sk_add_Scalar(&r, x, F(add), ONE)), SK_DTYPE_INT64, 0, 0, -1)), out);
}

/* bilinear / trilinear: the 2^D corners around the padded coordinates */
static int linear(SkTensor **out, const Sampler *s, SkTensor *const *x) {
  SkTape t = {0}, *tp = &t;
  SkTensor *lo[3], *frac[3], *acc = NULL;
  for (int k = 0; k < s->D; k++) {
    SkTensor *f = T(sk_floor(&r, x[k]));
    lo[k] = T(as_index(&r, f, 0));
    frac[k] = T(sk_sub(&r, x[k], f, ONE));
  }
  for (int corner = 0; corner < (1 << s->D) && !tp->rc; corner++) {
    SkTape t2 = {0}, *tp2 = &t2;
    SkTensor *idx[3], *w = NULL;
    for (int k = 0; k < s->D; k++) {
      int up = corner >> k & 1;
      idx[k] = up ? SK_TAPE_STEP(tp2, sk_add_Scalar(&r, lo[k], ONE, ONE)) : lo[k];
      SkTensor *wk = up ? frac[k] : SK_TAPE_STEP(tp2, sk_add_Scalar(&r, SK_TAPE_STEP(tp2, sk_mul_Scalar(&r, frac[k], F(-1))), F(1), ONE));
      w = w ? SK_TAPE_STEP(tp2, sk_mul(&r, w, wk)) : wk;
    }
    SkTensor *v = SK_TAPE_STEP(tp2, tap(&r, s, idx));
    SkTensor *term = SK_TAPE_STEP(tp2, sk_mul(&r, v, w));
    SkTensor *sum = acc ? SK_TAPE_STEP(tp2, sk_add(&r, acc, term, ONE)) : term;
    if (!tp2->rc) sum = sk_tape_take(tp2, sum);
    if (sk_tape_free(tp2)) { sk_tape_keep(tp, -1, NULL); break; }
    acc = sk_tape_keep(tp, 0, sum);
  }
  return sk_tape_result(tp, acc, out);
}

/* nearest: the corner the coordinates round to (half to even, as nearbyint) */
static int nearest(SkTensor **out, const Sampler *s, SkTensor *const *x) {
  SkTape t = {0}, *tp = &t;
  SkTensor *idx[3];
  for (int k = 0; k < s->D; k++) idx[k] = T(as_index(&r, T(sk_round(&r, x[k])), 0));
  return sk_tape_result(tp, T(tap(&r, s, idx)), out);
}

/* PyTorch's cubic convolution weights (A = -0.75) of taps -1..2 at fraction t */
static int cubic_weight(SkTensor **out, const SkTensor *t_, int i) {
  const double A = -0.75;
  SkTape t = {0}, *tp = &t;
  /* distance d = |i - 1 - t|: conv1(d) = ((A+2)d - (A+3))d² + 1 for d ≤ 1, conv2(d) = ((Ad - 5A)d + 8A)d - 4A */
  SkTensor *d = i == 0 ? T(sk_add_Scalar(&r, t_, F(1), ONE))
              : i == 1 ? (SkTensor *)t_
              : i == 2 ? T(sk_add_Scalar(&r, T(sk_mul_Scalar(&r, t_, F(-1))), F(1), ONE))
                       : T(sk_add_Scalar(&r, T(sk_mul_Scalar(&r, t_, F(-1))), F(2), ONE));
  SkTensor *w;
  if (i == 1 || i == 2)
    w = T(sk_add_Scalar(&r, T(sk_mul(&r, T(sk_mul(&r, T(sk_add_Scalar(&r, T(sk_mul_Scalar(&r, d, F(A + 2))), F(-(A + 3)), ONE)), d)), d)), F(1), ONE));
  else
    w = T(sk_add_Scalar(&r, T(sk_mul(&r, T(sk_add_Scalar(&r, T(sk_mul(&r, T(sk_add_Scalar(&r, T(sk_mul_Scalar(&r, d, F(A))), F(-5 * A), ONE)), d)), F(8 * A), ONE)), d)), F(-4 * A), ONE));
  return sk_tape_result(tp, w, out);
}

/* bicubic (2-d): 4×4 taps around the unpadded coordinates, each tap's coordinate padded */
static int bicubic(SkTensor **out, const Sampler *s, SkTensor *const *x) {
  SkTape t = {0}, *tp = &t;
  SkTensor *base[2], *wt[2][4], *acc = NULL;
  for (int k = 0; k < 2; k++) {
    base[k] = T(sk_floor(&r, x[k]));
    SkTensor *fr = T(sk_sub(&r, x[k], base[k], ONE));
    for (int i = 0; i < 4; i++) wt[k][i] = T(cubic_weight(&r, fr, i));
  }
  for (int j = 0; j < 4 && !tp->rc; j++)
    for (int i = 0; i < 4 && !tp->rc; i++) {
      SkTape t2 = {0}, *tp2 = &t2;
      SkTensor *idx[2];
      int off[2] = {i - 1, j - 1};
      for (int k = 0; k < 2; k++) {
        SkTensor *c = SK_TAPE_STEP(tp2, sk_add_Scalar(&r, base[k], F(off[k]), ONE));
        if (s->pad == PAD_REFLECTION) {
          int64_t n = s->size[k];
          c = SK_TAPE_STEP(tp2, reflect(&r, c, s->align ? 0 : -1, s->align ? 2 * (n - 1) : 2 * n - 1));
        }
        if (s->pad != PAD_ZEROS) c = SK_TAPE_STEP(tp2, sk_clamp(&r, c, F(0), F((double)(s->size[k] - 1))));
        idx[k] = SK_TAPE_STEP(tp2, as_index(&r, c, 0));
      }
      SkTensor *v = SK_TAPE_STEP(tp2, tap(&r, s, idx));
      SkTensor *term = SK_TAPE_STEP(tp2, sk_mul(&r, v, SK_TAPE_STEP(tp2, sk_mul(&r, wt[0][i], wt[1][j]))));
      SkTensor *sum = acc ? SK_TAPE_STEP(tp2, sk_add(&r, acc, term, ONE)) : term;
      if (!tp2->rc) sum = sk_tape_take(tp2, sum);
      if (sk_tape_free(tp2)) { sk_tape_keep(tp, -1, NULL); break; }
      acc = sk_tape_keep(tp, 0, sum);
    }
  return sk_tape_result(tp, acc, out);
}
/* }==== */

static int check(const SkTensor *input, const SkTensor *grid, int64_t mode, int64_t pad) {
  char a[128], b[128];
  sk_shape_str(input->ndim, input->sizes, a, sizeof a);
  sk_shape_str(grid->ndim, grid->sizes, b, sizeof b);
  if (!sk_device_eq(input->device, grid->device)) {
    char da[32], db[32];
    sk_device_format(input->device, da, sizeof da), sk_device_format(grid->device, db, sizeof db);
    return sk_error("grid_sampler(): expected input and grid to be on same device, but input is on %s and grid is on %s", da, db);
  }
  if (input->dtype != grid->dtype)
    return sk_error("grid_sampler(): expected input and grid to have same dtype, but input has %s and grid has %s",
                    sk_dtype_name(input->dtype), sk_dtype_name(grid->dtype));
  if (!sk_dtype_is_floating(input->dtype))
    return sk_error("grid_sampler(): expected input and grid to have a floating point dtype, but got %s", sk_dtype_name(input->dtype));
  if ((input->ndim != 4 && input->ndim != 5) || input->ndim != grid->ndim)
    return sk_error("grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with "
                    "sizes %s and grid with sizes %s", a, b);
  if (input->sizes[0] != grid->sizes[0])
    return sk_error("grid_sampler(): expected grid and input to have same batch size, but got input with sizes %s and grid "
                    "with sizes %s", a, b);
  if (grid->sizes[grid->ndim - 1] != input->ndim - 2)
    return sk_error("grid_sampler(): expected grid to have size %d in last dimension, but got grid with sizes %s", input->ndim - 2, b);
  for (int d = 2; d < input->ndim; d++)
    if (input->sizes[d] <= 0)
      return sk_error("grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes %s with "
                      "dimension %d being empty", a, d);
  if (mode < 0 || mode > MODE_BICUBIC) return sk_error("grid_sampler(): argument 'interpolation_mode': expected 0, 1 or 2, got %lld", (long long)mode);
  if (pad < 0 || pad > PAD_REFLECTION) return sk_error("grid_sampler(): argument 'padding_mode': expected 0, 1 or 2, got %lld", (long long)pad);
  if (mode == MODE_BICUBIC && input->ndim != 4) return sk_error("grid_sampler(): bicubic interpolation only supports 4D input");
  return 0;
}

int sk_math_grid_sampler(SkTensor **result, const SkTensor *input, const SkTensor *grid, int64_t interpolation_mode,
                         int64_t padding_mode, int align_corners) {
  if (check(input, grid, interpolation_mode, padding_mode)) return -1;
  Sampler s = {input->ndim - 2, (int)interpolation_mode, (int)padding_mode, align_corners, input->sizes[0], input->sizes[1], 1, {1, 1, 1}, NULL};
  int64_t S = 1;
  for (int k = 0; k < s.D; k++) {
    s.size[k] = input->sizes[input->ndim - 1 - k];
    S *= s.size[k];
    s.P *= grid->sizes[1 + k];
  }
  SkTape t = {0}, *tp = &t; /* in opmath: a half type's coordinates, weights and taps in float32, rounded once */
  SkDType dt = input->dtype;
  int64_t fs[3] = {s.N, s.C, S}, gs[3] = {s.N, s.P, s.D};
  s.flat = T(sk_reshape(&r, sk_tape_opmath(tp, input, dt), (SkIntList){fs, 3}));
  SkTensor *g = T(sk_reshape(&r, sk_tape_opmath(tp, grid, dt), (SkIntList){gs, 3}));
  SkTensor *x[3];
  for (int k = 0; k < s.D; k++)
    x[k] = T(source(&r, T(sk_unsqueeze(&r, T(sk_select_int(&r, g, 2, k)), 1)), s.size[k], &s, s.mode != MODE_BICUBIC));
  if (tp->rc) return sk_tape_free(tp);
  SkTensor *v = s.mode == MODE_BILINEAR ? T(linear(&r, &s, x)) : s.mode == MODE_NEAREST ? T(nearest(&r, &s, x)) : T(bicubic(&r, &s, x));
  int64_t os[5] = {s.N, s.C};
  for (int d = 1; d <= s.D; d++) os[1 + d] = grid->sizes[d];
  return sk_tape_result(tp, sk_tape_round(tp, T(sk_reshape(&r, v, (SkIntList){os, 2 + s.D})), dt), result);
}

int sk_math_grid_sampler_2d(SkTensor **result, const SkTensor *input, const SkTensor *grid, int64_t interpolation_mode,
                            int64_t padding_mode, int align_corners) {
  if (input->ndim != 4) return sk_error("grid_sampler_2d(): expected 4D input, but got input with %d dimensions", input->ndim);
  return sk_grid_sampler(result, input, grid, interpolation_mode, padding_mode, align_corners);
}

int sk_math_grid_sampler_3d(SkTensor **result, const SkTensor *input, const SkTensor *grid, int64_t interpolation_mode,
                            int64_t padding_mode, int align_corners) {
  if (input->ndim != 5) return sk_error("grid_sampler_3d(): expected 5D input, but got input with %d dimensions", input->ndim);
  return sk_grid_sampler(result, input, grid, interpolation_mode, padding_mode, align_corners);
}

/* F.grid_sample: modes by name; align_corners None is False */
int sk_math_grid_sample(SkTensor **result, const SkTensor *input, const SkTensor *grid, const char *mode,
                        const char *padding_mode, int align_corners) {
  static const char *const modes[] = {"bilinear", "nearest", "bicubic"}, *const pads[] = {"zeros", "border", "reflection"};
  int m = -1, p = -1;
  for (int i = 0; i < 3; i++) {
    if (mode && !strcmp(mode, modes[i])) m = i;
    if (padding_mode && !strcmp(padding_mode, pads[i])) p = i;
  }
  if (m < 0)
    return sk_error("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '%s'", mode ? mode : "None");
  if (p < 0)
    return sk_error("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '%s'",
                    padding_mode ? padding_mode : "None");
  return sk_grid_sampler(result, input, grid, m, p, align_corners > 0);
}

/* {==== affine_grid ==== */
/* the base grid's coordinates along a dim of n: linspace(-1, 1, n), scaled by (n-1)/n
** without align_corners; 0 for n = 1 */
static int base_coords(SkTensor **out, int64_t n, int align, const SkTensor *like) {
  SkTape t = {0}, *tp = &t;
  SkTensor *l = T(sk_linspace(&r, F(-1), F(1), n, (int)like->dtype, -1, like->device, 0));
  if (n == 1) l = T(sk_mul_Scalar(&r, l, F(0)));
  else if (!align) l = T(sk_mul_Scalar(&r, l, F((double)(n - 1) / (double)n)));
  return sk_tape_result(tp, l, out);
}

/* PyTorch's affine_grid_generator: base grid [N, *spatial, D+1] (x, y[, z], 1) times thetaᵀ */
int sk_math_affine_grid_generator(SkTensor **result, const SkTensor *theta, SkIntList size, int align_corners) {
  char sz[128];
  if (size.n != 4 && size.n != 5)
    return sk_error("affine_grid_generator: expected size of 4 or 5 elements (N, C, H, W) or (N, C, D, H, W), got %s",
                    sk_shape_str(size.n, size.data, sz, sizeof sz));
  int D = size.n - 2;
  for (int i = 0; i < size.n; i++)
    if (size.data[i] <= 0) return sk_error("affine_grid_generator: size %s must be positive", sk_shape_str(size.n, size.data, sz, sizeof sz));
  if (!sk_dtype_is_floating(theta->dtype))
    return sk_error("Expected theta to have floating point type, but got %s", sk_dtype_name(theta->dtype));
  if (theta->ndim != 3 || theta->sizes[1] != D || theta->sizes[2] != D + 1) {
    char ts[128];
    sk_shape_str(theta->ndim, theta->sizes, ts, sizeof ts);
    return sk_error("Expected a batch of %dD affine matrices of shape Nx%dx%d for size %s. Got %s.", D, D, D + 1,
                    sk_shape_str(size.n, size.data, sz, sizeof sz), ts);
  }
  if (theta->sizes[0] != size.data[0])
    return sk_error("affine_grid_generator: theta's batch (%lld) and size's N (%lld) differ", (long long)theta->sizes[0],
                    (long long)size.data[0]);
  SkTape t = {0}, *tp = &t; /* in opmath: a half type's base grid and products in float32, rounded once */
  SkDType dt = theta->dtype;
  const SkTensor *th = sk_tape_opmath(tp, theta, dt);
  if (tp->rc) return sk_tape_free(tp);
  /* each component expanded over the spatial dims: x varies along the last, y the one before... */
  int64_t sp[3], P = 1;
  for (int d = 0; d < D; d++) sp[d] = size.data[2 + d], P *= sp[d];
  SkTensor *comp[4];
  for (int k = 0; k < D; k++) {
    int dim = D - 1 - k; /* the spatial dim component k runs along */
    int64_t shape[3] = {1, 1, 1};
    shape[dim] = sp[dim];
    SkTensor *c = T(base_coords(&r, sp[dim], align_corners, th));
    comp[k] = T(sk_expand(&r, T(sk_reshape(&r, c, (SkIntList){shape, D})), (SkIntList){sp, D}, 0));
  }
  if (tp->rc) return sk_tape_free(tp);
  comp[D] = T(sk_add_Scalar(&r, T(sk_mul_Scalar(&r, comp[0], F(0))), F(1), ONE));
  SkTensor *base = T(sk_stack(&r, (SkTensorList){comp, D + 1}, -1));               /* [*spatial, D+1] */
  int64_t bs[3] = {1, P, D + 1}, os[5];
  SkTensor *b = T(sk_reshape(&r, base, (SkIntList){bs, 3}));
  int64_t es[3] = {size.data[0], P, D + 1};
  SkTensor *g = T(sk_bmm(&r, T(sk_expand(&r, b, (SkIntList){es, 3}, 0)), T(sk_transpose_int(&r, th, 1, 2)))); /* [N, P, D] */
  os[0] = size.data[0];
  for (int d = 0; d < D; d++) os[1 + d] = sp[d];
  os[1 + D] = D;
  return sk_tape_result(tp, sk_tape_round(tp, T(sk_reshape(&r, g, (SkIntList){os, D + 2})), dt), result);
}

int sk_math_affine_grid(SkTensor **result, const SkTensor *theta, SkIntList size, int align_corners) {
  return sk_affine_grid_generator(result, theta, size, align_corners > 0);
}
/* }==== */
