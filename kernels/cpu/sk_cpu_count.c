/*
** sk_cpu_count.c — counting: unique (_unique2, unique_dim, unique_consecutive), bincount,
** histc, histogram
** unique sees self as n rows of m elements (the elements themselves, or the slices along
** dim) and compares rows by their order keys (sk_cpu_order_key); rows holding a NaN are
** never equal to another (NaN != NaN, as PyTorch's CPU unique). Sorting is stable, so
** each group's first row is its earliest; results are always sorted (PyTorch's unsorted
** order is its hash set's, unspecified). Histograms accumulate in double.
*/
#define _GNU_SOURCE /* qsort_r */
#include "sk_kernels.h"
#include "sk_cpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* {==== unique ==== */
typedef struct Rows {
  int64_t n, m, inner;  /* n rows of m; element c of row r: ((c / inner) * n + r) * inner + c % inner */
  uint64_t *k;          /* keys, row-major [n][m] */
  int fl;               /* floating: a NaN key is a NaN */
} Rows;

static int cmp_rows(const void *a, const void *b, void *ctx) {
  const Rows *R = ctx;
  int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
  const uint64_t *x = R->k + i * R->m, *y = R->k + j * R->m;
  for (int64_t c = 0; c < R->m; c++)
    if (x[c] != y[c]) return x[c] < y[c] ? -1 : 1;
  return (i > j) - (i < j);
}

static int rows_equal(const Rows *R, int64_t i, int64_t j) {
  const uint64_t *x = R->k + i * R->m, *y = R->k + j * R->m;
  for (int64_t c = 0; c < R->m; c++)
    if (x[c] != y[c] || (R->fl && x[c] == SK_NAN_KEY)) return 0;
  return 1;
}

/* An empty 1-d int64 tensor (an output not asked for). */
static SkTensor *empty_long(void) {
  int64_t z = 0;
  return sk_tensor_empty(1, &z, SK_DTYPE_INT64, SK_CPU);
}

/* The unique rows of self (along dim d when has_dim): sorted (sort) or consecutive groups. */
static int unique_rows(SkTensor **out, SkTensor **inv, SkTensor **cnt, const SkTensor *self, int has_dim, int64_t dim, int sort,
                       int want_inv, int want_counts) {
  int64_t d = 0;
  if (has_dim) {
    if (self->ndim == 0) return sk_error("Dimension specified as %lld but tensor has no dimensions", (long long)dim);
    if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
    if (self->numel == 0 && self->sizes[d] != 0)
      return sk_error("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  }
  Rows R;
  R.fl = sk_dtype_is_floating(self->dtype);
  R.n = has_dim ? self->sizes[d] : self->numel;
  R.inner = has_dim ? sk_numel(self->ndim - (int)d - 1, self->sizes + d + 1) : 1;
  R.m = R.n ? self->numel / R.n : 0;
  int rc = 0;
  SkTensor *keep = NULL;
  const SkTensor *in = sk_cpu_operand(self, self->dtype, &keep, &rc);
  size_t kb, pb;
  if (!rc && (sk_nbytes(self->numel, sizeof(uint64_t), &kb) || sk_nbytes(R.n, 3 * sizeof(int64_t), &pb))) rc = -1;
  R.k = rc ? NULL : malloc(kb ? kb : 1);
  int64_t *perm = rc ? NULL : malloc(pb ? pb : 1);
  if (!rc && (!R.k || !perm)) rc = sk_error("unique: out of memory");
  SkTensor *o = NULL, *iv = NULL, *ct = NULL;
  if (!rc) {
    int64_t *start = perm + R.n, *group = perm + 2 * R.n; /* group starts; the group of each sorted position */
    size_t z = sk_dtype_size(self->dtype);
    const char *x = sk_tensor_data(in);
    for (int64_t r = 0; r < R.n; r++)
      for (int64_t c = 0; c < R.m; c++)
        R.k[r * R.m + c] = sk_cpu_order_key(x + (((c / R.inner) * R.n + r) * R.inner + c % R.inner) * (int64_t)z, self->dtype);
    for (int64_t r = 0; r < R.n; r++) perm[r] = r;
    if (sort && R.n > 1) qsort_r(perm, (size_t)R.n, sizeof *perm, cmp_rows, &R);
    int64_t U = 0;
    for (int64_t p = 0; p < R.n; p++) {
      if (p == 0 || !rows_equal(&R, perm[p - 1], perm[p])) start[U++] = p;
      group[p] = U - 1;
    }
    int64_t sizes[SK_MAX_DIMS];
    int nd = 1;
    if (has_dim) {
      memcpy(sizes, self->sizes, sizeof sizes);
      sizes[d] = U;
      nd = self->ndim;
    } else
      sizes[0] = U;
    int64_t one = R.n;
    o = sk_tensor_empty(nd, sizes, self->dtype, SK_CPU);
    iv = want_inv ? (has_dim ? sk_tensor_empty(1, &one, SK_DTYPE_INT64, SK_CPU)
                             : sk_tensor_empty(self->ndim, self->sizes, SK_DTYPE_INT64, SK_CPU))
                  : empty_long();
    ct = want_counts ? sk_tensor_empty(1, &U, SK_DTYPE_INT64, SK_CPU) : empty_long();
    if (!o || !iv || !ct) rc = -1;
    if (!rc) {
      char *ov = sk_tensor_data(o);
      for (int64_t g = 0; g < U; g++) {
        int64_t r = perm[start[g]];
        for (int64_t c = 0; c < R.m; c++) {
          int64_t oo = c / R.inner, j = c % R.inner;
          memcpy(ov + ((oo * U + g) * R.inner + j) * (int64_t)z, x + ((oo * R.n + r) * R.inner + j) * (int64_t)z, z);
        }
      }
      if (want_inv) {
        int64_t *ip = sk_tensor_data(iv);
        for (int64_t p = 0; p < R.n; p++) ip[perm[p]] = group[p];
      }
      if (want_counts) {
        int64_t *cp = sk_tensor_data(ct);
        for (int64_t g = 0; g < U; g++) cp[g] = (g + 1 < U ? start[g + 1] : R.n) - start[g];
      }
    }
  }
  free(R.k);
  free(perm);
  sk_tensor_release(keep);
  if (rc) {
    sk_tensor_release(o), sk_tensor_release(iv), sk_tensor_release(ct);
    return -1;
  }
  *out = o, *inv = iv, *cnt = ct;
  return 0;
}

int sk_cpu__unique2(SkTensor **r1, SkTensor **r2, SkTensor **r3, const SkTensor *self, int sorted, int return_inverse,
                    int return_counts) {
  (void)sorted; /* always sorted */
  return unique_rows(r1, r2, r3, self, 0, 0, 1, return_inverse, return_counts);
}

int sk_cpu_unique_dim(SkTensor **r1, SkTensor **r2, SkTensor **r3, const SkTensor *self, int64_t dim, int sorted,
                      int return_inverse, int return_counts) {
  (void)sorted; /* always sorted, as PyTorch's */
  return unique_rows(r1, r2, r3, self, 1, dim, 1, return_inverse, return_counts);
}

int sk_cpu_unique_consecutive(SkTensor **r1, SkTensor **r2, SkTensor **r3, const SkTensor *self, int return_inverse,
                              int return_counts, SkOptInt dim) {
  return unique_rows(r1, r2, r3, self, dim.has, dim.v, 0, return_inverse, return_counts);
}
/* }==== */

/* {==== bincount ==== */
/* PyTorch's _bincount_cpu: counts (int64), or sums of weights (float32 weights stay float32,
** others are summed as float64), over max(self) + 1 bins, at least minlength. */
int sk_cpu_bincount(SkTensor **result, const SkTensor *self, const SkTensor *weights, int64_t minlength) {
  if (self->dtype == SK_DTYPE_BOOL || sk_dtype_is_floating(self->dtype))
    return sk_error("\"bincount_cpu\" not implemented for '%s'", sk_dtype_torch_name(self->dtype));
  if (minlength < 0) return sk_error("minlength should be >= 0");
  if (self->ndim == 1 && self->numel == 0) {
    if (!(*result = sk_tensor_empty(1, &minlength, SK_DTYPE_INT64, SK_CPU))) return -1;
    memset(sk_tensor_data(*result), 0, (size_t)minlength * 8);
    return 0;
  }
  int rc = 0;
  SkTensor *k1 = NULL, *k2 = NULL;
  const SkTensor *in = self->ndim == 1 ? sk_cpu_operand(self, SK_DTYPE_INT64, &k1, &rc) : NULL;
  const int64_t *v = in ? sk_tensor_data(in) : NULL;
  int64_t mx = -1, mn = 0;
  for (int64_t i = 0; v && i < in->numel; i++) {
    if (v[i] > mx) mx = v[i];
    if (v[i] < mn) mn = v[i];
  }
  if (!rc && (self->ndim != 1 || mn < 0)) rc = sk_error("bincount only supports 1-d non-negative integral inputs.");
  if (!rc && mx == INT64_MAX) rc = sk_error("bincount: the largest value %lld leaves no room for its bin", (long long)mx);
  if (!rc && weights && (weights->ndim != 1 || weights->sizes[0] != self->sizes[0]))
    rc = sk_error("weights should be 1-d and have the same length as input");
  SkDType wt = weights && weights->dtype == SK_DTYPE_FLOAT32 ? SK_DTYPE_FLOAT32 : SK_DTYPE_FLOAT64;
  const SkTensor *w = weights && !rc ? sk_cpu_operand(weights, SK_DTYPE_FLOAT64, &k2, &rc) : NULL;
  int64_t nb = rc ? 0 : mx + 1 > minlength ? mx + 1 : minlength;
  SkTensor *acc = rc ? NULL : sk_tensor_empty(1, &nb, weights ? SK_DTYPE_FLOAT64 : SK_DTYPE_INT64, SK_CPU);
  if (!rc && !acc) rc = -1;
  if (!rc) {
    memset(sk_tensor_data(acc), 0, (size_t)nb * 8);
    if (w) {
      double *a = sk_tensor_data(acc);
      const double *wv = sk_tensor_data(w);
      for (int64_t i = 0; i < in->numel; i++) a[v[i]] += wv[i];
    } else {
      int64_t *a = sk_tensor_data(acc);
      for (int64_t i = 0; i < in->numel; i++) a[v[i]]++;
    }
  }
  if (!rc && weights && wt != SK_DTYPE_FLOAT64) {
    SkTensor *c = sk_tensor_empty(1, &nb, wt, SK_CPU);
    rc = c && !sk_copy_cpu(c, acc) ? 0 : -1;
    sk_tensor_release(acc);
    acc = c;
  }
  sk_tensor_release(k1);
  sk_tensor_release(k2);
  if (rc) { sk_tensor_release(acc); return -1; }
  *result = acc;
  return 0;
}
/* }==== */

/* {==== histc, histogram ==== */
/* Adds w to the bin of x among nb equal bins over [lo, hi] (hi falls in the last); edges,
** when given, refine the bin so that edges[b] <= x < edges[b + 1] (PyTorch's local search). */
static void bin_linear(double *h, int64_t nb, double lo, double hi, const double *edges, double x, double w) {
  if (!(x >= lo && x <= hi)) return; /* outside, or NaN */
  int64_t b = (int64_t)((x - lo) * (double)nb / (hi - lo));
  if (b >= nb) b = nb - 1;
  if (b < 0) b = 0;
  if (edges) {
    if (edges[b] > x && b > 0) b--;
    else if (b + 1 < nb && edges[b + 1] <= x) b++;
  }
  h[b] += w;
}

/* The elements of t as doubles (a contiguous float64 copy, or t itself). */
static const double *as_doubles(const SkTensor *t, SkTensor **keep, int *rc) {
  const SkTensor *c = sk_cpu_operand(t, SK_DTYPE_FLOAT64, keep, rc);
  return c ? sk_tensor_data(c) : NULL;
}

/* Stores n doubles into out (any layout), through a contiguous temporary of out's dtype. */
static int store_doubles(SkTensor *out, const double *v, int64_t n) {
  int rc = 0;
  SkTensor *keep = NULL, *t = sk_cpu_target(out, out->dtype, &keep, &rc);
  if (rc) return -1;
  char *p = sk_tensor_data(t);
  size_t z = sk_dtype_size(out->dtype);
  for (int64_t i = 0; i < n; i++) sk_elem_store_floating(p + i * (int64_t)z, out->dtype, v[i]);
  if (keep) rc = sk_copy_cpu(out, keep);
  sk_tensor_release(keep);
  return rc;
}

/* The data's finite range [lo, hi] when lo == hi (PyTorch's aminmax), widened by pad when
** still empty; NaN in the data is refused with `fn`'s text. */
static int auto_range(const double *x, int64_t n, double *lo, double *hi, double pad, const char *fn) {
  if (*lo == *hi && n > 0) {
    double a = x[0], b = x[0];
    for (int64_t i = 0; i < n; i++) {
      if (isnan(x[i])) { a = b = NAN; break; }
      if (x[i] < a) a = x[i];
      if (x[i] > b) b = x[i];
    }
    if (!isfinite(a) || !isfinite(b)) return sk_error("%s: range of [%g, %g] is not finite", fn, a, b);
    *lo = a, *hi = b;
  }
  if (*lo == *hi) *lo -= pad, *hi += pad;
  return 0;
}

int sk_cpu_histc_out(const SkMeta *m, const SkTensor *self, int64_t bins, SkScalar min, SkScalar max, SkTensor *out) {
  (void)m;
  int rc = 0;
  SkTensor *keep = NULL;
  const double *x = as_doubles(self, &keep, &rc);
  double lo = sk_scalar_to_double(min), hi = sk_scalar_to_double(max);
  double *h = rc ? NULL : calloc((size_t)bins, sizeof *h);
  if (!rc && !h) rc = sk_error("histc: out of memory");
  if (!rc) rc = auto_range(x, self->numel, &lo, &hi, 1.0, "torch.histc");
  for (int64_t i = 0; !rc && i < self->numel; i++) bin_linear(h, bins, lo, hi, NULL, x[i], 1.0);
  if (!rc) rc = store_doubles(out, h, bins);
  free(h);
  sk_tensor_release(keep);
  return rc;
}

/* hist (weighted), then density: hist / (sum(hist) * bin widths). */
static int histogram_finish(SkTensor *hist, double *h, const double *e, int64_t nb, int density) {
  if (density) {
    double s = 0;
    for (int64_t b = 0; b < nb; b++) s += h[b];
    for (int64_t b = 0; b < nb; b++) h[b] /= s * (e[b + 1] - e[b]);
  }
  return store_doubles(hist, h, nb);
}

int sk_cpu_histogram_bin_ct_out(const SkMeta *m, const SkTensor *self, int64_t bins, SkDoubleList range, const SkTensor *weight,
                                int density, SkTensor *hist, SkTensor *bin_edges) {
  (void)m;
  int rc = 0;
  SkTensor *k1 = NULL, *k2 = NULL, *k3 = NULL;
  const double *x = as_doubles(self, &k1, &rc), *w = weight ? as_doubles(weight, &k2, &rc) : NULL;
  double lo = range.data ? range.data[0] : 0, hi = range.data ? range.data[1] : 0;
  size_t nbytes;
  if (!rc && (bins > (INT64_MAX - 1) / 2 || sk_nbytes(2 * bins + 1, sizeof(double), &nbytes)))
    rc = sk_error("histogram: %lld bins are too many", (long long)bins);
  double *h = rc ? NULL : calloc(1, nbytes);
  if (!rc && !h) rc = sk_error("histogram: out of memory");
  if (!rc) rc = auto_range(x, self->numel, &lo, &hi, 0.5, "torch.histogram");
  if (!rc) {
    /* edges as linspace(lo, hi, bins + 1) in bin_edges' dtype (PyTorch's two-sided formula), read back */
    double *e = h + bins, step = (hi - lo) / (double)bins;
    int64_t steps = bins + 1, half = steps / 2;
    for (int64_t i = 0; i < steps; i++) e[i] = i < half ? lo + step * (double)i : hi - step * (double)(steps - i - 1);
    rc = store_doubles(bin_edges, e, steps);
    const double *er = rc ? NULL : as_doubles(bin_edges, &k3, &rc);
    for (int64_t i = 0; er && i < self->numel; i++) bin_linear(h, bins, er[0], er[bins], er, x[i], w ? w[i] : 1.0);
    if (er) rc = histogram_finish(hist, h, er, bins, density);
  }
  free(h);
  sk_tensor_release(k1), sk_tensor_release(k2), sk_tensor_release(k3);
  return rc;
}

int sk_cpu_histogram_bins_tensor_out(const SkMeta *m, const SkTensor *self, const SkTensor *bins, const SkTensor *weight,
                                     int density, SkTensor *hist, SkTensor *bin_edges) {
  (void)m;
  int rc = 0;
  SkTensor *k1 = NULL, *k2 = NULL, *k3 = NULL;
  const double *x = as_doubles(self, &k1, &rc), *w = weight ? as_doubles(weight, &k2, &rc) : NULL;
  const double *e = as_doubles(bins, &k3, &rc);
  int64_t nb = bins->numel - 1;
  double *h = rc ? NULL : calloc((size_t)(nb > 0 ? nb : 1), sizeof *h);
  if (!rc && !h) rc = sk_error("histogram: out of memory");
  /* bin b holds edges[b] <= x < edges[b + 1]; the last edge closes the last bin */
  for (int64_t i = 0; !rc && nb > 0 && i < self->numel; i++) {
    double v = x[i];
    if (!(v >= e[0] && v <= e[nb])) continue;
    int64_t a = 0, b = nb + 1; /* the first edge above v, by bisection over [a, b) */
    while (a < b) {
      int64_t c = a + (b - a) / 2;
      if (e[c] <= v) a = c + 1; else b = c;
    }
    int64_t pos = a - 1 < nb ? a - 1 : nb - 1;
    h[pos] += w ? w[i] : 1.0;
  }
  if (!rc) rc = store_doubles(bin_edges, e, bins->numel);
  if (!rc) rc = histogram_finish(hist, h, e, nb, density);
  free(h);
  sk_tensor_release(k1), sk_tensor_release(k2), sk_tensor_release(k3);
  return rc;
}
/* }==== */
