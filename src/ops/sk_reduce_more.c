/*
** sk_reduce_more.c — composite reductions of issue 13: nansum, nanmean, count_nonzero,
** aminmax, var_mean/std_mean, diff, trace, dist, renorm, trapezoid and
** cumulative_trapezoid, quantile/nanquantile, median()/nanmedian() over everything.
** Each follows PyTorch's composite (or kernel) step by step with the dispatched API,
** so it serves Meta, every backend and autograd through its pieces.
*/
#include "sk_plan.h"
#include "sk_kernels.h"
#include "sk_composite_util.h"

#include <math.h>

static const int64_t no_dims[1] = {0}; /* data of an empty (not None) int list */
#define ALL_DIMS ((SkIntList){no_dims, 0})
#define ONE_DIM(d) ((SkIntList){&(d), 1})
#define NONE_DEVICE ((SkDevice){-1, 0})

/* {==== nansum, nanmean, count_nonzero ==== */
/* NaNs read as zero; integers and bool have none. */
int sk_math_nansum(SkTensor **result, const SkTensor *self, SkIntList dim, int keepdim, int dtype) {
  if (!sk_dtype_is_floating(self->dtype)) return sk_sum_dim_IntList(result, self, dim, keepdim, dtype);
  SkTape tp = {0};
  SkTensor *z = SK_TAPE_STEP(&tp, sk_masked_fill_Scalar(&r, self, SK_TAPE_STEP(&tp, sk_isnan(&r, self)), sk_scalar_int(0)));
  SkTensor *s = SK_TAPE_STEP(&tp, sk_sum_dim_IntList(&r, z, dim, keepdim, dtype));
  if (s) *result = sk_tape_take(&tp, s);
  return sk_tape_free(&tp);
}

int sk_math_nansum_out(const SkTensor *self, SkIntList dim, int keepdim, int dtype, SkTensor *out) {
  SK_OUT_FROM(sk_math_nansum(&r, self, dim, keepdim, dtype), out, SK_READS(self));
}

/* nansum / the count of non-NaN elements (PyTorch's composite). */
int sk_math_nanmean(SkTensor **result, const SkTensor *self, SkIntList dim, int keepdim, int dtype) {
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("nanmean(): expected input to have floating point dtype but got %s", sk_dtype_torch_name(self->dtype));
  SkTape tp = {0};
  SkTensor *ok = SK_TAPE_STEP(&tp, sk_logical_not(&r, SK_TAPE_STEP(&tp, sk_isnan(&r, self))));
  SkTensor *n = SK_TAPE_STEP(&tp, sk_sum_dim_IntList(&r, ok, dim, keepdim, -1));
  SkTensor *s = SK_TAPE_STEP(&tp, sk_math_nansum(&r, self, dim, keepdim, dtype));
  SkTensor *q = SK_TAPE_STEP(&tp, sk_div(&r, s, n));
  if (q) *result = sk_tape_take(&tp, q);
  return sk_tape_free(&tp);
}

int sk_math_nanmean_out(const SkTensor *self, SkIntList dim, int keepdim, int dtype, SkTensor *out) {
  SK_OUT_FROM(sk_math_nanmean(&r, self, dim, keepdim, dtype), out, SK_READS(self));
}

/* The count of non-zero elements (int64) over dim; [] counts over every dim. */
int sk_math_count_nonzero_dim_IntList(SkTensor **result, const SkTensor *self, SkIntList dim) {
  SkTape tp = {0};
  SkTensor *nz = SK_TAPE_STEP(&tp, sk_ne_Scalar(&r, self, sk_scalar_int(0)));
  SkTensor *c = SK_TAPE_STEP(&tp, sk_sum_dim_IntList(&r, nz, dim.data ? dim : ALL_DIMS, 0, SK_DTYPE_INT64));
  if (c) *result = sk_tape_take(&tp, c);
  return sk_tape_free(&tp);
}

int sk_math_count_nonzero(SkTensor **result, const SkTensor *self, SkOptInt dim) {
  return sk_math_count_nonzero_dim_IntList(result, self, dim.has ? ONE_DIM(dim.v) : ALL_DIMS);
}
/* }==== */

/* {==== aminmax ==== */
int sk_math_aminmax(SkTensor **min, SkTensor **max, const SkTensor *self, SkOptInt dim, int keepdim) {
  SkIntList dims = ALL_DIMS;
  int64_t d = 0;
  if (dim.has) {
    if (sk_wrap_dim(dim.v, self->ndim, "dim", &d)) return -1;
    if (self->ndim && self->sizes[d] == 0)
      return sk_error("aminmax: Expected reduction dim %lld to have non-zero size.", (long long)d);
    dims = ONE_DIM(d);
  } else if (self->numel == 0)
    return sk_error("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  SkTensor *lo = NULL, *hi = NULL;
  if (sk_amin(&lo, self, dims, keepdim)) return -1;
  if (sk_amax(&hi, self, dims, keepdim)) { sk_tensor_release(lo); return -1; }
  *min = lo, *max = hi;
  return 0;
}

int sk_math_aminmax_out(const SkTensor *self, SkOptInt dim, int keepdim, SkTensor *min, SkTensor *max) {
  SkTensor *r[2] = {NULL, NULL}, *outs[2] = {min, max};
  int rc = sk_math_aminmax(&r[0], &r[1], self, dim, keepdim);
  return sk_composite_write_outs(rc, 2, r, outs, (const char *const[]){"min", "max"}, SK_READS(self));
}
/* }==== */

/* {==== var_mean, std_mean ==== */
static int moments(SkTensor **r1, SkTensor **r2, const SkTensor *self, SkIntList dim, SkScalar correction, int keepdim,
                   int is_std) {
  if (!sk_dtype_is_floating(self->dtype))
    return sk_error("%s only support floating point and complex dtypes", is_std ? "std_mean" : "var_mean");
  SkTensor *v = NULL, *m = NULL;
  int rc = is_std ? sk_std_correction(&v, self, dim, correction, keepdim) : sk_var_correction(&v, self, dim, correction, keepdim);
  if (!rc) rc = sk_mean_dim(&m, self, dim, keepdim, -1);
  if (rc) { sk_tensor_release(v); return -1; }
  *r1 = v, *r2 = m;
  return 0;
}
static SkScalar unbiased_of(int unbiased) { return sk_scalar_int(unbiased ? 1 : 0); }
static const SkIntList none_dims = {NULL, 0};

int sk_math_var_mean(SkTensor **r1, SkTensor **r2, const SkTensor *self, int unbiased) {
  return moments(r1, r2, self, none_dims, unbiased_of(unbiased), 0, 0);
}
int sk_math_var_mean_dim(SkTensor **r1, SkTensor **r2, const SkTensor *self, SkIntList dim, int unbiased, int keepdim) {
  return moments(r1, r2, self, dim, unbiased_of(unbiased), keepdim, 0);
}
int sk_math_var_mean_correction(SkTensor **r1, SkTensor **r2, const SkTensor *self, SkIntList dim, SkScalar correction,
                                int keepdim) {
  return moments(r1, r2, self, dim, correction, keepdim, 0);
}
int sk_math_std_mean(SkTensor **r1, SkTensor **r2, const SkTensor *self, int unbiased) {
  return moments(r1, r2, self, none_dims, unbiased_of(unbiased), 0, 1);
}
int sk_math_std_mean_dim(SkTensor **r1, SkTensor **r2, const SkTensor *self, SkIntList dim, int unbiased, int keepdim) {
  return moments(r1, r2, self, dim, unbiased_of(unbiased), keepdim, 1);
}
int sk_math_std_mean_correction(SkTensor **r1, SkTensor **r2, const SkTensor *self, SkIntList dim, SkScalar correction,
                                int keepdim) {
  return moments(r1, r2, self, dim, correction, keepdim, 1);
}
/* }==== */

/* {==== diff, trace, dist, renorm ==== */
/* n rounds of x[1:] - x[:-1] along dim (logical_xor for bool), after cat(prepend, self, append);
** n = 0 is self unchanged, prepend and append not added (PyTorch and NumPy). */
int sk_math_diff(SkTensor **result, const SkTensor *self, int64_t n, int64_t dim, const SkTensor *prepend,
                 const SkTensor *append) {
  if (self->ndim < 1) return sk_error("diff expects input to be at least one-dimensional");
  if (n < 0) return sk_error("order must be non-negative but got %lld", (long long)n);
  if ((prepend && prepend->ndim != self->ndim) || (append && append->ndim != self->ndim))
    return sk_error("diff expects prepend or append to be the same dimension as input");
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  SkTape tp = {0};
  const SkTensor *x = self;
  if (n > 0 && (prepend || append)) {
    const SkTensor *parts[3];
    int np = 0;
    if (prepend) parts[np++] = prepend;
    parts[np++] = self;
    if (append) parts[np++] = append;
    x = SK_TAPE_STEP(&tp, sk_cat(&r, (SkTensorList){(SkTensor **)parts, np}, d));
  }
  SkDType dt = x ? x->dtype : self->dtype;
  if (x) {
    int64_t len = x->sizes[d];
    if (n > len) n = len;
    if (n > 1) x = sk_tape_opmath(&tp, x, dt); /* rounds of differences: in opmath, rounded once */
    for (int64_t i = 0; i < n && x; i++, len--) {
      SkTensor *hi = SK_TAPE_STEP(&tp, sk_narrow(&r, x, d, 1, len - 1));
      SkTensor *lo = SK_TAPE_STEP(&tp, sk_narrow(&r, x, d, 0, len - 1));
      x = x->dtype == SK_DTYPE_BOOL ? SK_TAPE_STEP(&tp, sk_logical_xor(&r, hi, lo))
                                    : SK_TAPE_STEP(&tp, sk_sub(&r, hi, lo, sk_scalar_int(1)));
    }
  }
  if (x == self) x = SK_TAPE_STEP(&tp, sk_clone(&r, self, -1));
  return sk_tape_result(&tp, sk_tape_round(&tp, (SkTensor *)x, dt), result);
}

int sk_math_diff_out(const SkTensor *self, int64_t n, int64_t dim, const SkTensor *prepend, const SkTensor *append,
                     SkTensor *out) {
  SK_OUT_FROM(sk_math_diff(&r, self, n, dim, prepend, append), out, SK_READS(self, prepend, append));
}

/* The sum of the main diagonal of a matrix (int64 for integers, as sum). */
int sk_math_trace(SkTensor **result, const SkTensor *self) {
  if (self->ndim != 2) return sk_error("trace: expected a matrix, but got tensor with dim %d", self->ndim);
  if (self->dtype == SK_DTYPE_BOOL) return sk_error("\"trace\" not implemented for 'Bool'");
  SkTape tp = {0};
  SkTensor *s = SK_TAPE_STEP(&tp, sk_sum(&r, SK_TAPE_STEP(&tp, sk_diagonal(&r, self, 0, 0, 1)), -1));
  if (s) *result = sk_tape_take(&tp, s);
  return sk_tape_free(&tp);
}

/* The p-norm of self - other. */
int sk_math_dist(SkTensor **result, const SkTensor *self, const SkTensor *other, SkScalar p) {
  SkTape tp = {0};
  SkTensor *d = SK_TAPE_STEP(&tp, sk_norm_Scalar(&r, SK_TAPE_STEP(&tp, sk_sub(&r, self, other, sk_scalar_int(1))), p));
  if (d) *result = sk_tape_take(&tp, d);
  return sk_tape_free(&tp);
}

/* Each slice along dim whose p-norm exceeds maxnorm scaled to maxnorm / (norm + 1e-7);
** 16-bit floats take their norm in float32 (PyTorch's accumulate type). */
int sk_math_renorm(SkTensor **result, const SkTensor *self, SkScalar p, int64_t dim, SkScalar maxnorm) {
  if (p.kind == SK_SCALAR_NONE || !(sk_scalar_to_double(p) > 0.0)) return sk_error("renorm: non-positive-norm not supported");
  double mx = sk_scalar_to_double(maxnorm);
  if (!(mx >= 0.0)) return sk_error("renorm: expected maxnorm to be >= 0 but got %g", mx);
  if (self->ndim <= 1) return sk_error("renorm: input needs at least 2 dimensions, got %d dimensions", self->ndim);
  int64_t d, dims[SK_MAX_DIMS];
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  int nd = 0;
  for (int i = 0; i < self->ndim; i++) if (i != d) dims[nd++] = i;
  SkTape tp = {0}; /* in opmath: a half type rounds once, not at the factor too */
  const SkTensor *x = sk_tape_opmath(&tp, self, self->dtype);
  SkTensor *norm = SK_TAPE_STEP(&tp, sk_norm_ScalarOpt_dim(&r, x, p, (SkIntList){dims, nd}, 1));
  SkTensor *big = SK_TAPE_STEP(&tp, sk_gt_Scalar(&r, norm, maxnorm));
  SkTensor *scale = SK_TAPE_STEP(&tp, sk_mul_Scalar(&r, SK_TAPE_STEP(&tp, sk_reciprocal(&r,
                      SK_TAPE_STEP(&tp, sk_add_Scalar(&r, norm, sk_scalar_float(1e-7), sk_scalar_int(1))))), maxnorm));
  SkTensor *factor = SK_TAPE_STEP(&tp, sk_where_self(&r, big, scale, sk_tape_number(&tp, sk_scalar_float(1.0))));
  SkTensor *y = sk_tape_round(&tp, SK_TAPE_STEP(&tp, sk_mul(&r, x, factor)), self->dtype);
  return sk_tape_result(&tp, y, result);
}

int sk_math_renorm_(SkTensor *self, SkScalar p, int64_t dim, SkScalar maxnorm) {
  SK_INPLACE_FROM(sk_math_renorm(&r, self, p, dim, maxnorm), self);
}

int sk_math_renorm_out(const SkTensor *self, SkScalar p, int64_t dim, SkScalar maxnorm, SkTensor *out) {
  SK_OUT_FROM(sk_math_renorm(&r, self, p, dim, maxnorm), out, SK_READS(self));
}
/* }==== */

/* {==== trapezoid, cumulative_trapezoid ==== */
/* y[1:] and y[:-1] along d (both empty when y has no samples there). */
static void halves(SkTape *tp, const SkTensor *y, int64_t d, SkTensor **right, SkTensor **left) {
  int64_t n = y->sizes[d], len = n > 0 ? n - 1 : 0;
  *right = SK_TAPE_STEP(tp, sk_narrow(&r, y, d, n > 0 ? 1 : 0, len));
  *left = SK_TAPE_STEP(tp, sk_narrow(&r, y, d, 0, len));
}

/* x[1:] - x[:-1] along d, x first viewed as y's rank (PyTorch's: a 1-d x lies along d,
** a shorter x gains leading 1s; the differences broadcast against y's). */
static SkTensor *x_steps(SkTape *tp, const SkTensor *y, const SkTensor *x, int64_t d, const char *fn) {
  int64_t sizes[SK_MAX_DIMS];
  const SkTensor *xv = x;
  if (x->ndim == 1) {
    if (x->sizes[0] != y->sizes[d]) { sk_tape_keep(tp, sk_error("%s: There must be one `x` value for each sample point", fn), NULL); return NULL; }
    for (int i = 0; i < y->ndim; i++) sizes[i] = i == d ? x->sizes[0] : 1;
    xv = SK_TAPE_STEP(tp, sk_reshape(&r, x, (SkIntList){sizes, y->ndim}));
  } else if (x->ndim < y->ndim) {
    int pad = y->ndim - x->ndim;
    for (int i = 0; i < y->ndim; i++) sizes[i] = i < pad ? 1 : x->sizes[i - pad];
    xv = SK_TAPE_STEP(tp, sk_reshape(&r, x, (SkIntList){sizes, y->ndim}));
  }
  if (!xv) return NULL;
  int64_t dd;
  if (sk_wrap_dim(d - y->ndim + xv->ndim, xv->ndim, "dim", &dd)) { sk_tape_keep(tp, -1, NULL); return NULL; }
  SkTensor *hi, *lo;
  halves(tp, xv, dd, &hi, &lo);
  return SK_TAPE_STEP(tp, sk_sub(&r, hi, lo, sk_scalar_int(1)));
}

static int trapz_checks(const SkTensor *y, const SkTensor *x, int64_t dim, int64_t *d, const char *fn) {
  if (sk_wrap_dim(dim, y->ndim, "dim", d)) return -1;
  if (y->ndim == 0) return sk_error("Dimension specified as %lld but tensor has no dimensions", (long long)dim);
  if (y->dtype == SK_DTYPE_BOOL || (x && x->dtype == SK_DTYPE_BOOL))
    return sk_error("%s: received a bool input for `%s`, but bool is not supported", fn, x ? "x` or `y" : "y");
  return 0;
}

static int dx_check(SkScalar dx, const char *fn) {
  return dx.kind == SK_SCALAR_BOOL ? sk_error("%s: Currently, we only support dx as a real number.", fn) : 0;
}

/* zeros of y's shape without dim d: the integral over no samples (NumPy's). */
static int no_samples(SkTensor **result, const SkTensor *y, int64_t d) {
  int64_t sizes[SK_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < y->ndim; i++) if (i != d) sizes[nd++] = y->sizes[i];
  return sk_zeros(result, (SkIntList){sizes, nd}, (int)y->dtype, -1, y->device, -1);
}

/* sum((y[1:] + y[:-1]) * dx) / 2 */
int sk_math_trapezoid_x(SkTensor **result, const SkTensor *y, const SkTensor *x, int64_t dim) {
  int64_t d;
  if (trapz_checks(y, x, dim, &d, "trapezoid")) return -1;
  if (y->sizes[d] == 0) return no_samples(result, y, d);
  const SkTensor *ts[2] = {y, x};
  SkDType dt = sk_result_type(2, ts);
  SkTape tp = {0}; /* in opmath, as cumulative_trapezoid_x */
  const SkTensor *yo = sk_tape_opmath(&tp, y, dt), *xo = sk_tape_opmath(&tp, x, dt);
  if (tp.rc) return sk_tape_free(&tp);
  SkTensor *dx = x_steps(&tp, y, xo, d, "trapezoid"), *hi, *lo;
  halves(&tp, yo, d, &hi, &lo);
  SkTensor *s = SK_TAPE_STEP(&tp, sk_sum_dim_IntList(&r, SK_TAPE_STEP(&tp, sk_mul(&r,
                  SK_TAPE_STEP(&tp, sk_add(&r, lo, hi, sk_scalar_int(1))), dx)), ONE_DIM(d), 0, -1));
  SkTensor *v = SK_TAPE_STEP(&tp, sk_div_Scalar(&r, s, sk_scalar_float(2.0)));
  return sk_tape_result(&tp, sk_tape_round(&tp, v, dt), result);
}

/* (sum(y) - (y[0] + y[-1]) / 2) * dx */
int sk_math_trapezoid_dx(SkTensor **result, const SkTensor *y, SkScalar dx, int64_t dim) {
  int64_t d;
  if (trapz_checks(y, NULL, dim, &d, "trapezoid") || dx_check(dx, "trapezoid")) return -1;
  if (y->sizes[d] == 0) return no_samples(result, y, d);
  SkTape tp = {0}; /* in opmath, as cumulative_trapezoid_x */
  SkTensor *yo = sk_tape_opmath(&tp, y, y->dtype);
  if (tp.rc) return sk_tape_free(&tp);
  SkTensor *ends = SK_TAPE_STEP(&tp, sk_add(&r, SK_TAPE_STEP(&tp, sk_select_int(&r, yo, d, 0)),
                                            SK_TAPE_STEP(&tp, sk_select_int(&r, yo, d, -1)), sk_scalar_int(1)));
  SkTensor *s = SK_TAPE_STEP(&tp, sk_sub(&r, SK_TAPE_STEP(&tp, sk_sum_dim_IntList(&r, yo, ONE_DIM(d), 0, -1)),
                                         SK_TAPE_STEP(&tp, sk_mul_Scalar(&r, ends, sk_scalar_float(0.5))), sk_scalar_int(1)));
  SkTensor *v = SK_TAPE_STEP(&tp, sk_mul_Scalar(&r, s, sk_scalar_float(sk_scalar_to_double(dx))));
  return sk_tape_result(&tp, sk_tape_round(&tp, v, y->dtype), result);
}

/* cumsum((y[1:] + y[:-1]) * dx) / 2 */
int sk_math_cumulative_trapezoid_x(SkTensor **result, const SkTensor *y, const SkTensor *x, int64_t dim) {
  int64_t d;
  if (trapz_checks(y, x, dim, &d, "cumulative_trapezoid")) return -1;
  const SkTensor *ts[2] = {y, x};
  SkDType dt = sk_result_type(2, ts);
  SkTape tp = {0}; /* in opmath: a half type's running sums round once each */
  const SkTensor *yo = sk_tape_opmath(&tp, y, dt), *xo = sk_tape_opmath(&tp, x, dt);
  if (tp.rc) return sk_tape_free(&tp);
  SkTensor *dx = x_steps(&tp, y, xo, d, "cumulative_trapezoid"), *hi, *lo;
  halves(&tp, yo, d, &hi, &lo);
  SkTensor *s = SK_TAPE_STEP(&tp, sk_cumsum(&r, SK_TAPE_STEP(&tp, sk_mul(&r,
                  SK_TAPE_STEP(&tp, sk_add(&r, lo, hi, sk_scalar_int(1))), dx)), d, -1));
  SkTensor *v = SK_TAPE_STEP(&tp, sk_div_Scalar(&r, s, sk_scalar_float(2.0)));
  return sk_tape_result(&tp, sk_tape_round(&tp, v, dt), result);
}

/* cumsum(dx / 2 * (y[1:] + y[:-1])) */
int sk_math_cumulative_trapezoid_dx(SkTensor **result, const SkTensor *y, SkScalar dx, int64_t dim) {
  int64_t d;
  if (trapz_checks(y, NULL, dim, &d, "cumulative_trapezoid") || dx_check(dx, "cumulative_trapezoid")) return -1;
  SkTape tp = {0}; /* in opmath, as cumulative_trapezoid_x */
  SkTensor *hi, *lo, *yo = sk_tape_opmath(&tp, y, y->dtype);
  if (tp.rc) return sk_tape_free(&tp);
  halves(&tp, yo, d, &hi, &lo);
  SkTensor *h = SK_TAPE_STEP(&tp, sk_mul_Scalar(&r, SK_TAPE_STEP(&tp, sk_add(&r, lo, hi, sk_scalar_int(1))),
                                                sk_scalar_float(sk_scalar_to_double(dx) / 2.0)));
  SkTensor *v = SK_TAPE_STEP(&tp, sk_cumsum(&r, h, d, -1));
  return sk_tape_result(&tp, sk_tape_round(&tp, v, y->dtype), result);
}
/* }==== */

/* {==== quantile, nanquantile ==== */
enum { Q_LINEAR, Q_LOWER, Q_HIGHER, Q_MIDPOINT, Q_NEAREST };
static const char *const q_modes[] = {"linear", "lower", "higher", "midpoint", "nearest"};

/* PyTorch's quantile_checks, then the q range (read on the CPU only, as PyTorch does). */
static int quantile_checks(const SkTensor *self, const SkTensor *q, const char *interpolation, int *mode, const char *fn) {
  *mode = -1;
  for (int i = 0; i < 5; i++) if (interpolation && strcmp(interpolation, q_modes[i]) == 0) *mode = i;
  if (*mode < 0)
    return sk_error("%s interpolation must be one of linear, lower, higher, midpoint or nearest, but got %s", fn,
                    interpolation ? interpolation : "None");
  if (self->numel == 0) return sk_error("%s input tensor must be non-empty", fn);
  if (q->ndim > 1) return sk_error("%s q must be a scalar or 1D tensor", fn);
  if (self->dtype != SK_DTYPE_FLOAT32 && self->dtype != SK_DTYPE_FLOAT64)
    return sk_error("%s input tensor must be either float or double dtype", fn);
  if (self->dtype != q->dtype) return sk_error("%s q tensor must be same dtype as the input tensor", fn);
  if (!sk_device_eq(self->device, q->device)) return sk_error("%s q tensor must be on the same device as the input tensor", fn);
  if (sk_values_absent(q) || q->device.type != SK_DEVICE_CPU) return 0;
  SkTensor *c = NULL;
  if (sk_to_dtype(&c, q, SK_DTYPE_FLOAT64, 0, 1, 0)) return -1;
  const double *v = sk_tensor_data(c);
  int bad = 0;
  for (int64_t i = 0; i < c->numel; i++) bad |= !(v[i] >= 0 && v[i] <= 1);
  sk_tensor_release(c);
  return bad ? sk_error("%s q values must be in the range [0, 1]", fn) : 0;
}

/* PyTorch's quantile_compute: sort along the reduced dim (moved last), ranks from q (NaN
** rows to the last rank, or for nanquantile over the non-NaN count), gather below/above and lerp. */
static int quantile_impl(SkTensor **result, const SkTensor *self, const SkTensor *q, SkOptInt dim, int keepdim,
                         const char *interpolation, int ignore_nan) {
  const char *fn = ignore_nan ? "nanquantile()" : "quantile()";
  int mode;
  if (quantile_checks(self, q, interpolation, &mode, fn)) return -1;
  int64_t wd = 0;
  if (sk_wrap_dim(dim.has ? dim.v : 0, self->ndim, "dim", &wd)) return -1;
  /* the reduced shape (without q's dim), then the sorted rows' view [reduced..., n] */
  int64_t shape[SK_MAX_DIMS + 1];
  int ns = 0;
  if (dim.has && self->ndim > 0) {
    for (int i = 0; i < self->ndim; i++)
      if (i != wd) shape[ns++] = self->sizes[i];
      else if (keepdim) shape[ns++] = 1;
  } else if (keepdim)
    for (int i = 0; i < self->ndim; i++) shape[ns++] = 1;
  SkTape tp = {0};
  SkTensor *rows;
  if (!dim.has) rows = SK_TAPE_STEP(&tp, sk_flatten_using_ints(&r, self, 0, -1));
  else rows = SK_TAPE_STEP(&tp, sk_transpose_int(&r, SK_TAPE_STEP(&tp, sk_unsqueeze(&r, self, -1)), wd, -1));
  SkTensor *sv = NULL, *si = NULL;
  if (rows && !tp.rc) {
    int rc = sk_sort_stable(&sv, &si, rows, 0, -1, 0);
    sk_tensor_release(si);
    sk_tape_keep(&tp, rc, sv);
  }
  int64_t n = sv && !tp.rc ? sv->sizes[sv->ndim - 1] : 0;
  if (!tp.rc && n > (1 << 24)) sk_tape_keep(&tp, sk_error("%s input tensor is too large", fn), NULL);
  shape[ns] = n;
  SkTensor *sorted = SK_TAPE_STEP(&tp, sk_reshape(&r, sv, (SkIntList){shape, ns + 1}));
  SkTensor *ranks;
  if (ignore_nan) {
    SkTensor *cnt = SK_TAPE_STEP(&tp, sk_sum_dim_IntList(&r, SK_TAPE_STEP(&tp, sk_logical_not(&r,
                      SK_TAPE_STEP(&tp, sk_isnan(&r, sorted)))), (SkIntList){(int64_t[]){-1}, 1}, 1, -1));
    ranks = SK_TAPE_STEP(&tp, sk_mul(&r, q, SK_TAPE_STEP(&tp, sk_sub_Scalar(&r, cnt, sk_scalar_int(1), sk_scalar_int(1)))));
    ranks = SK_TAPE_STEP(&tp, sk_masked_fill_Scalar(&r, ranks, SK_TAPE_STEP(&tp, sk_lt_Scalar(&r, ranks, sk_scalar_int(0))),
                                                     sk_scalar_int(0)));
  } else {
    SkTensor *anynan = SK_TAPE_STEP(&tp, sk_any_dim(&r, SK_TAPE_STEP(&tp, sk_isnan(&r, sorted)), -1, 1));
    SkTensor *qr = SK_TAPE_STEP(&tp, sk_mul_Scalar(&r, q, sk_scalar_int(n - 1)));
    /* broadcast q * last against the rows' NaN flags, then NaN rows take the last rank */
    SkTensor *zero = SK_TAPE_STEP(&tp, sk_mul_Scalar(&r, SK_TAPE_STEP(&tp, sk_to_dtype(&r, anynan, q->dtype, 0, 0, -1)),
                                                     sk_scalar_int(0)));
    ranks = SK_TAPE_STEP(&tp, sk_masked_fill_Scalar(&r, SK_TAPE_STEP(&tp, sk_add(&r, qr, zero, sk_scalar_int(1))), anynan,
                                                     sk_scalar_int(n - 1)));
  }
  if (mode == Q_LOWER) ranks = SK_TAPE_STEP(&tp, sk_floor(&r, ranks));
  else if (mode == Q_HIGHER) ranks = SK_TAPE_STEP(&tp, sk_ceil(&r, ranks));
  else if (mode == Q_NEAREST) ranks = SK_TAPE_STEP(&tp, sk_round(&r, ranks));
  SkTensor *below = SK_TAPE_STEP(&tp, sk_to_dtype(&r, ranks, SK_DTYPE_INT64, 0, 0, -1));
  SkTensor *v = SK_TAPE_STEP(&tp, sk_gather(&r, sorted, -1, below, 0));
  if (mode == Q_LINEAR || mode == Q_MIDPOINT) {
    SkTensor *w = mode == Q_MIDPOINT ? SK_TAPE_STEP(&tp, sk_full_like(&r, ranks, sk_scalar_float(0.5), -1, -1, NONE_DEVICE, -1, -1))
                                     : SK_TAPE_STEP(&tp, sk_sub(&r, ranks, below, sk_scalar_int(1)));
    SkTensor *above = SK_TAPE_STEP(&tp, sk_to_dtype(&r, SK_TAPE_STEP(&tp, sk_ceil(&r, ranks)), SK_DTYPE_INT64, 0, 0, -1));
    v = SK_TAPE_STEP(&tp, sk_lerp(&r, v, SK_TAPE_STEP(&tp, sk_gather(&r, sorted, -1, above, 0)), w));
  }
  if (q->ndim == 0) v = SK_TAPE_STEP(&tp, sk_squeeze_dim(&r, v, -1));
  else v = SK_TAPE_STEP(&tp, sk_squeeze_dim(&r, SK_TAPE_STEP(&tp, sk_transpose_int(&r,
             SK_TAPE_STEP(&tp, sk_unsqueeze(&r, v, 0)), 0, -1)), -1));
  if (v) *result = sk_tape_take(&tp, v);
  return sk_tape_free(&tp);
}

/* A float q as a 0-dim tensor of self's dtype, after PyTorch's range check. */
static int scalar_q(SkTensor **t, const SkTensor *self, double q, const char *fn) {
  if (!(q >= 0 && q <= 1)) return sk_error("%s q must be in the range [0, 1] but got %g", fn, q);
  SkDType dt = sk_dtype_is_floating(self->dtype) ? self->dtype : SK_DTYPE_FLOAT32;
  return sk_full(t, (SkIntList){no_dims, 0}, sk_scalar_float(q), (int)dt, -1, self->device, -1);
}

int sk_math_quantile(SkTensor **result, const SkTensor *self, const SkTensor *q, SkOptInt dim, int keepdim,
                     const char *interpolation) {
  return quantile_impl(result, self, q, dim, keepdim, interpolation, 0);
}
int sk_math_nanquantile(SkTensor **result, const SkTensor *self, const SkTensor *q, SkOptInt dim, int keepdim,
                        const char *interpolation) {
  return quantile_impl(result, self, q, dim, keepdim, interpolation, 1);
}

static int quantile_scalar(SkTensor **result, const SkTensor *self, double q, SkOptInt dim, int keepdim,
                           const char *interpolation, int ignore_nan) {
  SkTensor *qt = NULL;
  if (scalar_q(&qt, self, q, ignore_nan ? "nanquantile()" : "quantile()")) return -1;
  int rc = quantile_impl(result, self, qt, dim, keepdim, interpolation, ignore_nan);
  sk_tensor_release(qt);
  return rc;
}
int sk_math_quantile_scalar(SkTensor **result, const SkTensor *self, double q, SkOptInt dim, int keepdim,
                            const char *interpolation) {
  return quantile_scalar(result, self, q, dim, keepdim, interpolation, 0);
}
int sk_math_nanquantile_scalar(SkTensor **result, const SkTensor *self, double q, SkOptInt dim, int keepdim,
                               const char *interpolation) {
  return quantile_scalar(result, self, q, dim, keepdim, interpolation, 1);
}

int sk_math_quantile_out(const SkTensor *self, const SkTensor *q, SkOptInt dim, int keepdim, const char *interpolation,
                         SkTensor *out) {
  SK_OUT_FROM(quantile_impl(&r, self, q, dim, keepdim, interpolation, 0), out, SK_READS(self, q));
}
int sk_math_nanquantile_out(const SkTensor *self, const SkTensor *q, SkOptInt dim, int keepdim, const char *interpolation,
                            SkTensor *out) {
  SK_OUT_FROM(quantile_impl(&r, self, q, dim, keepdim, interpolation, 1), out, SK_READS(self, q));
}
int sk_math_quantile_scalar_out(const SkTensor *self, double q, SkOptInt dim, int keepdim, const char *interpolation,
                                SkTensor *out) {
  SK_OUT_FROM(quantile_scalar(&r, self, q, dim, keepdim, interpolation, 0), out, SK_READS(self));
}
int sk_math_nanquantile_scalar_out(const SkTensor *self, double q, SkOptInt dim, int keepdim, const char *interpolation,
                                   SkTensor *out) {
  SK_OUT_FROM(quantile_scalar(&r, self, q, dim, keepdim, interpolation, 1), out, SK_READS(self));
}
/* }==== */

/* {==== median(), nanmedian() over every element ==== */
/* median.dim over the flattened tensor; an empty one gives NaN (PyTorch's). */
static int median_all(SkTensor **result, const SkTensor *self, int ignore_nan) {
  if (self->numel == 0)
    return sk_full(result, (SkIntList){no_dims, 0}, sk_scalar_float(NAN), (int)self->dtype, -1, self->device, -1);
  SkTensor *f = NULL, *v = NULL, *i = NULL;
  int rc = sk_reshape(&f, self, (SkIntList){(int64_t[]){-1}, 1});
  if (!rc) rc = ignore_nan ? sk_nanmedian_dim(&v, &i, f, 0, 0) : sk_median_dim(&v, &i, f, 0, 0);
  sk_tensor_release(f);
  sk_tensor_release(i);
  if (!rc) *result = v;
  return rc;
}

int sk_default_median(SkTensor **result, const SkTensor *self) { return median_all(result, self, 0); }
int sk_default_nanmedian(SkTensor **result, const SkTensor *self) { return median_all(result, self, 1); }
/* }==== */
