/*
** sk_grad_helpers.c — the helpers of backward formulas (sk_grad_helpers.h), written with
** the dispatched ops so that under create_graph they record like the formulas around them.
** Each keeps its temporaries in a small array released on every path.
*/
#include "sk_grad_helpers.h"
#include "sk_grad_tape.h"
#include "sk_composite_util.h"
#include "sk_error.h"
#include "sk_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NT 20
typedef struct Tmp { SkTensor *t[NT]; int n; } Tmp;
/* The next temporary slot; the result of the call goes there. LAST is never read in the
** call that takes NEXT (their order would be unspecified): it is read into p_ first. */
#define NEXT(tp) (&(tp)->t[(tp)->n++])
#define LAST(tp) ((tp)->t[(tp)->n - 1])
static int finish(Tmp *tp, int rc, SkTensor **out) {
  if (!rc) { *out = LAST(tp); tp->t[tp->n - 1] = NULL; }
  for (int i = 0; i < tp->n; i++) sk_tensor_release(tp->t[i]);
  return rc;
}
#define NONE_DEVICE sk_device(-1, 0)

static SkTensor *zero_number(void) { return sk_tensor_wrap_number(sk_scalar_int(0)); }

int sk_grad_maybe_multiply(SkTensor **out, const SkTensor *grad, SkScalar s) {
  if ((s.kind == SK_SCALAR_INT && s.v.i == 1) || (s.kind == SK_SCALAR_FLOAT && s.v.f == 1.0)) {
    *out = sk_tensor_retain((SkTensor *)grad);
    return 0;
  }
  return sk_mul_Scalar(out, grad, s);
}

int sk_grad_rsub(SkTensor **out, const SkTensor *self, SkScalar s) {
  Tmp tp = {{0}, 0};
  int rc = sk_neg(NEXT(&tp), self);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_add_Scalar(NEXT(&tp), p_, s, sk_scalar_int(1)); }
  return finish(&tp, rc, out);
}

int sk_grad_rdiv(SkTensor **out, const SkTensor *self, SkScalar s) {
  Tmp tp = {{0}, 0};
  int rc = sk_reciprocal(NEXT(&tp), self);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul_Scalar(NEXT(&tp), p_, s); }
  return finish(&tp, rc, out);
}

/* {==== Reductions ==== */
/* The reduced dims of a reduction over `dim` (empty or None: all) of an ndim tensor, as a mask. */
static int reduced_mask(SkIntList dim, int ndim, int *mask) {
  memset(mask, 0, sizeof(int) * SK_MAX_DIMS);
  if (!dim.data || dim.n == 0) {
    for (int d = 0; d < ndim; d++) mask[d] = 1;
    return 0;
  }
  for (int i = 0; i < dim.n; i++) {
    int64_t d;
    if (sk_wrap_dim(dim.data[i], ndim, "dim", &d)) return -1;
    mask[d] = 1;
  }
  return 0;
}

/* g (a reduction's output or gradient) with the reduced dims back as size 1 (restore_reduced_dims). */
static int restore_dims(SkTensor **out, const SkTensor *g, int ndim, const int *mask, int keepdim) {
  if (keepdim || g->ndim == ndim) { *out = sk_tensor_retain((SkTensor *)g); return 0; }
  int64_t sizes[SK_MAX_DIMS];
  int j = 0;
  for (int d = 0; d < ndim; d++) sizes[d] = mask[d] ? 1 : g->sizes[j++];
  return sk_reshape(out, g, (SkIntList){sizes, ndim});
}

static int64_t reduced_count(SkIntList sizes, const int *mask) {
  int64_t n = 1;
  for (int d = 0; d < sizes.n; d++) if (mask[d]) n *= sizes.data[d];
  return n;
}

int sk_grad_sum_to(SkTensor **out, const SkTensor *grad, SkIntList sizes) {
  int64_t dims[SK_MAX_DIMS];
  int nd = 0, lead = grad->ndim - sizes.n;
  if (lead < 0) return sk_error("sum_to: gradient of %d dims for a shape of %d", grad->ndim, sizes.n);
  for (int i = 0; i < grad->ndim; i++)
    if (i < lead || (sizes.data[i - lead] == 1 && grad->sizes[i] != 1)) dims[nd++] = i;
  if (!nd) return sk_reshape(out, grad, sizes);
  Tmp tp = {{0}, 0};
  int rc = sk_sum_dim_IntList(NEXT(&tp), grad, (SkIntList){dims, nd}, 1, -1);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_reshape(NEXT(&tp), p_, sizes); }
  return finish(&tp, rc, out);
}

int sk_grad_sum_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, SkIntList dim, int keepdim) {
  int mask[SK_MAX_DIMS];
  if (reduced_mask(dim, sizes.n, mask)) return -1;
  Tmp tp = {{0}, 0};
  int rc = restore_dims(NEXT(&tp), grad, sizes.n, mask, keepdim);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_expand(NEXT(&tp), p_, sizes, 0); }
  return finish(&tp, rc, out);
}

int sk_grad_mean_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, SkIntList dim, int keepdim) {
  int mask[SK_MAX_DIMS];
  if (reduced_mask(dim, sizes.n, mask)) return -1;
  Tmp tp = {{0}, 0};
  int rc = sk_grad_sum_backward(NEXT(&tp), grad, sizes, dim, keepdim);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_div_Scalar(NEXT(&tp), p_, sk_scalar_int(reduced_count(sizes, mask))); }
  return finish(&tp, rc, out);
}

/* Ties share the gradient equally (scale_grad_by_count), as PyTorch's amax/amin. */
int sk_grad_amax_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result, SkIntList dim,
                          int keepdim) {
  int mask[SK_MAX_DIMS];
  if (reduced_mask(dim, self->ndim, mask)) return -1;
  int64_t dims[SK_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < self->ndim; d++) if (mask[d]) dims[nd++] = d;
  Tmp tp = {{0}, 0};
  int rc = restore_dims(NEXT(&tp), result, self->ndim, mask, keepdim);              /* 0 r */
  if (!rc) rc = sk_eq(NEXT(&tp), self, tp.t[0]);                                      /* 1 hit */
  if (!rc) rc = sk_sum_dim_IntList(NEXT(&tp), tp.t[1], (SkIntList){dims, nd}, 1, (int)self->dtype); /* 2 count */
  if (!rc) rc = restore_dims(NEXT(&tp), grad, self->ndim, mask, keepdim);            /* 3 g */
  if (!rc) rc = sk_div(NEXT(&tp), tp.t[3], tp.t[2]);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), p_, tp.t[1]); }
  return finish(&tp, rc, out);
}

int sk_grad_value_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, const SkTensor *indices,
                           int keepdim) {
  int64_t d;
  if (sk_wrap_dim(dim, sizes.n, "dim", &d)) return -1;
  Tmp tp = {{0}, 0};
  int rc = 0;
  const SkTensor *g = grad, *ix = indices;
  if (!keepdim && sizes.n > 0) {
    rc = sk_unsqueeze(NEXT(&tp), grad, d);
    g = LAST(&tp);
    if (!rc) rc = sk_unsqueeze(NEXT(&tp), indices, d);
    ix = LAST(&tp);
  }
  if (!rc) rc = sk_zeros(NEXT(&tp), sizes, (int)grad->dtype, -1, grad->device, -1);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_scatter_src(NEXT(&tp), p_, d, ix, g); }
  return finish(&tp, rc, out);
}

/* 2 / (N - correction) * grad * (self - mean): PyTorch's var_backward. */
int sk_grad_var_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkIntList dim, SkScalar correction,
                         int keepdim) {
  int mask[SK_MAX_DIMS];
  if (reduced_mask(dim, self->ndim, mask)) return -1;
  double c = correction.kind == SK_SCALAR_NONE ? 1.0 : sk_scalar_to_double(correction);
  int64_t dims[SK_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < self->ndim; d++) if (mask[d]) dims[nd++] = d;
  int64_t n = reduced_count((SkIntList){self->sizes, self->ndim}, mask);
  Tmp tp = {{0}, 0};
  int rc = sk_mean_dim(NEXT(&tp), self, (SkIntList){dims, nd}, 1, -1);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_sub(NEXT(&tp), self, p_, sk_scalar_int(1)); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul_Scalar(NEXT(&tp), p_, sk_scalar_float(2.0 / ((double)n - c))); }
  if (!rc) rc = restore_dims(NEXT(&tp), grad, self->ndim, mask, keepdim);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), p_, tp.t[2]); }
  return finish(&tp, rc, out);
}

int sk_grad_std_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result, SkIntList dim,
                         SkScalar correction, int keepdim) {
  Tmp tp = {{0}, 0};
  int rc = sk_mul_Scalar(NEXT(&tp), result, sk_scalar_int(2));
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_div(NEXT(&tp), grad, p_); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_grad_var_backward(NEXT(&tp), p_, self, dim, correction, keepdim); }
  return finish(&tp, rc, out);
}

int sk_grad_logsumexp_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result,
                               SkIntList dim, int keepdim) {
  int mask[SK_MAX_DIMS];
  if (reduced_mask(dim, self->ndim, mask)) return -1;
  Tmp tp = {{0}, 0};
  int rc = restore_dims(NEXT(&tp), result, self->ndim, mask, keepdim);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_sub(NEXT(&tp), self, p_, sk_scalar_int(1)); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_exp(NEXT(&tp), p_); }
  if (!rc) rc = restore_dims(NEXT(&tp), grad, self->ndim, mask, keepdim);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), p_, tp.t[2]); }
  return finish(&tp, rc, out);
}

int sk_grad_cumsum_backward(SkTensor **out, const SkTensor *grad, int64_t dim) {
  if (grad->ndim == 0) { *out = sk_tensor_retain((SkTensor *)grad); return 0; }
  SkIntList dl = {&dim, 1};
  Tmp tp = {{0}, 0};
  int rc = sk_flip(NEXT(&tp), grad, dl);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_cumsum(NEXT(&tp), p_, dim, -1); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_flip(NEXT(&tp), p_, dl); }
  return finish(&tp, rc, out);
}
/* The product of all the other elements along dim, zeros included: exclusive products from
** the left and from the right (cumprod of x shifted by one, with a one in front). */
static int exclusive_cumprod(SkTensor **out, const SkTensor *x, int64_t dim) {
  int64_t n = x->sizes[dim];
  Tmp tp = {{0}, 0};
  int rc = sk_narrow(NEXT(&tp), x, dim, 0, 1);                         /* 0 a slice, for its shape */
  if (!rc) rc = sk_ones_like(NEXT(&tp), tp.t[0], -1, -1, NONE_DEVICE, -1, -1); /* 1 ones */
  if (!rc) rc = sk_narrow(NEXT(&tp), x, dim, 0, n - 1);                /* 2 */
  if (!rc) { SkTensor *l[2] = {tp.t[1], tp.t[2]}; rc = sk_cat(NEXT(&tp), (SkTensorList){l, 2}, dim); } /* 3 */
  if (!rc) rc = sk_cumprod(NEXT(&tp), tp.t[3], dim, -1);
  return finish(&tp, rc, out);
}

int sk_grad_prod_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, int64_t dim, int keepdim) {
  if (self->ndim == 0) { *out = sk_tensor_retain((SkTensor *)grad); return 0; }
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  if (self->sizes[d] == 0) return sk_zeros_like(out, self, -1, -1, NONE_DEVICE, -1, -1);
  SkIntList dl = {&d, 1};
  Tmp tp = {{0}, 0};
  int rc = exclusive_cumprod(NEXT(&tp), self, d);                     /* 0 left */
  if (!rc) rc = sk_flip(NEXT(&tp), self, dl);                          /* 1 */
  if (!rc) rc = exclusive_cumprod(NEXT(&tp), tp.t[1], d);             /* 2 */
  if (!rc) rc = sk_flip(NEXT(&tp), tp.t[2], dl);                       /* 3 right */
  if (!rc) rc = sk_mul(NEXT(&tp), tp.t[0], tp.t[3]);                   /* 4 the others' product */
  if (!rc) rc = keepdim ? sk_clone(NEXT(&tp), grad, -1) : sk_unsqueeze(NEXT(&tp), grad, d); /* 5 */
  if (!rc) rc = sk_mul(NEXT(&tp), tp.t[5], tp.t[4]);
  return finish(&tp, rc, out);
}

/* d out_j / d x_k = prod_{i <= j, i != k} x_i (j >= k). Along each slice, with z its first zero:
**   k < z:  sum_{k <= j < z} g_j out_j / x_k, a reversed cumsum of g·out (out is 0 from z on)
**           divided by x, which is not 0 there;
**   k = z:  sum_{j >= z} g_j c_j, c the cumprod of x with x_z taken as 1;
**   k > z:  0 (every product holds x_z).
** O(n), from ops, so it records under create_graph (PyTorch's cumprod_backward, same cases). */
int sk_grad_cumprod_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, int64_t dim,
                             const SkTensor *result) {
  if (self->ndim == 0 || self->numel == 0) { *out = sk_tensor_retain((SkTensor *)grad); return 0; }
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  SkTensor *one = sk_tensor_wrap_number(sk_scalar_int(1));
  if (!one) return -1;
  Tmp tp = {{0}, 0};
  int rc = sk_eq_Scalar(NEXT(&tp), self, sk_scalar_int(0));                           /* 0 zeros */
  if (!rc) rc = sk_cumsum(NEXT(&tp), tp.t[0], d, SK_DTYPE_INT64);                      /* 1 zeros so far */
  if (!rc) rc = sk_eq_Scalar(NEXT(&tp), tp.t[1], sk_scalar_int(0));                    /* 2 before z */
  if (!rc) rc = sk_eq_Scalar(NEXT(&tp), tp.t[1], sk_scalar_int(1));                    /* 3 */
  if (!rc) rc = sk_logical_and(NEXT(&tp), tp.t[0], tp.t[3]);                           /* 4 at z */
  if (!rc) rc = sk_mul(NEXT(&tp), grad, result);                                       /* 5 */
  if (!rc) rc = sk_grad_cumsum_backward(NEXT(&tp), tp.t[5], d);                        /* 6 */
  if (!rc) rc = sk_where_self(NEXT(&tp), tp.t[2], self, one);                          /* 7 x, 1 from z on */
  if (!rc) rc = sk_div(NEXT(&tp), tp.t[6], tp.t[7]);                                   /* 8 */
  if (!rc) rc = sk_grad_where_take(NEXT(&tp), tp.t[2], tp.t[8], 1);                    /* 9 k < z */
  if (!rc) rc = sk_where_self(NEXT(&tp), tp.t[4], one, self);                          /* 10 x, x_z = 1 */
  if (!rc) rc = sk_cumprod(NEXT(&tp), tp.t[10], d, -1);                                /* 11 c */
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[11]);                                     /* 12 */
  if (!rc) rc = sk_grad_cumsum_backward(NEXT(&tp), tp.t[12], d);                       /* 13 */
  if (!rc) rc = sk_grad_where_take(NEXT(&tp), tp.t[4], tp.t[13], 1);                   /* 14 k = z */
  if (!rc) rc = sk_add(NEXT(&tp), tp.t[9], tp.t[14], sk_scalar_int(1));
  sk_tensor_release(one);
  return finish(&tp, rc, out);
}

int sk_grad_prod_all_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self) {
  int64_t all = -1;
  Tmp tp = {{0}, 0};
  int rc = sk_reshape(NEXT(&tp), self, (SkIntList){&all, 1});
  if (!rc) rc = sk_reshape(NEXT(&tp), grad, (SkIntList){NULL, 0});
  if (!rc) rc = sk_unsqueeze(NEXT(&tp), tp.t[1], 0);
  if (!rc) rc = sk_grad_prod_backward(NEXT(&tp), tp.t[2], tp.t[0], 0, 1);
  if (!rc) rc = sk_reshape(NEXT(&tp), tp.t[3], (SkIntList){self->sizes, self->ndim});
  return finish(&tp, rc, out);
}

int sk_grad_max_all_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result) {
  return sk_grad_amax_backward(out, grad, self, result, (SkIntList){NULL, 0}, 0);
}

/* p-norm: p = 2 (and any p) through |x|^(p-1) sign(x) / norm^(p-1); p = inf as amax of |x|;
** a zero norm gives zero gradient, as PyTorch's norm_backward. */
int sk_grad_norm_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkScalar p, const SkTensor *result,
                          SkIntList dim, int keepdim) {
  double pv = p.kind == SK_SCALAR_NONE ? 2.0 : sk_scalar_to_double(p);
  int mask[SK_MAX_DIMS];
  if (reduced_mask(dim, self->ndim, mask)) return -1;
  Tmp tp = {{0}, 0};
  if (pv == 0.0) return sk_zeros_like(out, self, -1, -1, NONE_DEVICE, -1, -1);
  int rc = restore_dims(NEXT(&tp), grad, self->ndim, mask, keepdim);  /* 0 g */
  if (!rc) rc = restore_dims(NEXT(&tp), result, self->ndim, mask, keepdim); /* 1 n */
  if (!rc) rc = sk_sign(NEXT(&tp), self);                               /* 2 */
  if (rc) return finish(&tp, rc, out);
  if (isinf(pv)) {
    rc = sk_abs(NEXT(&tp), self);                                        /* 3 */
    if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_eq(NEXT(&tp), p_, tp.t[1]); } /* 4 */
    if (!rc) rc = sk_mul(NEXT(&tp), tp.t[2], tp.t[4]);                   /* 5 */
    int64_t dims[SK_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < self->ndim; d++) if (mask[d]) dims[nd++] = d;
    if (!rc) rc = sk_sum_dim_IntList(NEXT(&tp), tp.t[4], (SkIntList){dims, nd}, 1, (int)self->dtype); /* 6 count */
    if (!rc) rc = sk_div(NEXT(&tp), tp.t[5], tp.t[6]);
    if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), p_, tp.t[0]); }
    return finish(&tp, rc, out);
  }
  if (pv == 1.0) {
    rc = sk_mul(NEXT(&tp), tp.t[2], tp.t[0]);
    return finish(&tp, rc, out);
  }
  rc = sk_abs(NEXT(&tp), self);                                          /* 3 |x| */
  if (!rc) rc = sk_pow_Tensor_Scalar(NEXT(&tp), tp.t[3], sk_scalar_float(pv - 1)); /* 4 */
  if (!rc) rc = sk_mul(NEXT(&tp), tp.t[4], tp.t[2]);                     /* 5 */
  if (!rc) rc = sk_pow_Tensor_Scalar(NEXT(&tp), tp.t[1], sk_scalar_float(pv - 1)); /* 6 */
  if (!rc) rc = sk_div(NEXT(&tp), tp.t[5], tp.t[6]);                     /* 7 */
  if (!rc) rc = sk_eq_Scalar(NEXT(&tp), tp.t[1], sk_scalar_int(0));      /* 8 */
  if (!rc) rc = sk_grad_where_take(NEXT(&tp), tp.t[8], tp.t[7], 0);      /* 9 */
  if (!rc) rc = sk_mul(NEXT(&tp), tp.t[9], tp.t[0]);
  return finish(&tp, rc, out);
}
/* }==== */

/* {==== Pointwise ==== */
/* where(condition, grad, 0) when `when`, else where(condition, 0, grad). */
int sk_grad_where_take(SkTensor **out, const SkTensor *condition, const SkTensor *grad, int when) {
  SkTensor *z = zero_number();
  if (!z) return -1;
  int rc = when ? sk_where_self(out, condition, grad, z) : sk_where_self(out, condition, z, grad);
  sk_tensor_release(z);
  return rc;
}

int sk_grad_threshold_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkScalar threshold) {
  Tmp tp = {{0}, 0};
  int rc = sk_gt_Scalar(NEXT(&tp), self, threshold);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_grad_where_take(NEXT(&tp), p_, grad, 1); }
  return finish(&tp, rc, out);
}

/* clamp with number bounds: the tensor-bound rule with the numbers as wrapped numbers (which,
** as in ge.Scalar, do not take part in type promotion) */
int sk_grad_clamp_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkScalar min, SkScalar max) {
  SkTensor *lo = min.kind != SK_SCALAR_NONE ? sk_tensor_wrap_number(min) : NULL;
  SkTensor *hi = max.kind != SK_SCALAR_NONE ? sk_tensor_wrap_number(max) : NULL;
  int rc = (min.kind != SK_SCALAR_NONE && !lo) || (max.kind != SK_SCALAR_NONE && !hi)
               ? -1 : sk_grad_clamp_tensor_backward(out, grad, self, lo, hi);
  sk_tensor_release(lo);
  sk_tensor_release(hi);
  return rc;
}

/* clamp with tensor bounds: the gradient passes where min <= self <= max */
int sk_grad_clamp_tensor_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *min,
                                  const SkTensor *max) {
  Tmp tp = {{0}, 0};
  int rc = 0;
  const SkTensor *m = NULL;
  if (min) { rc = sk_ge(NEXT(&tp), self, min); m = LAST(&tp); }
  if (!rc && max) {
    rc = sk_le(NEXT(&tp), self, max);
    if (!rc && m) { SkTensor *p_ = LAST(&tp); rc = sk_logical_and(NEXT(&tp), m, p_); }
    m = LAST(&tp);
  }
  if (!rc && !m) rc = sk_clone(NEXT(&tp), grad, -1);
  else if (!rc) rc = sk_grad_where_take(NEXT(&tp), m, grad, 1);
  return finish(&tp, rc, out);
}

/* the gradient of a tensor bound: where it was the value taken. clamp applies min, then max:
** with min > max the result is max (PyTorch's clamp_backward_min_max). */
int sk_grad_clamp_bound_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *bound,
                                 const SkTensor *other, int is_min) {
  Tmp tp = {{0}, 0};
  int rc = is_min ? sk_lt(NEXT(&tp), self, bound) : sk_gt(NEXT(&tp), self, bound);  /* 0 */
  const SkTensor *m = tp.t[0];
  if (!rc && other) {
    rc = sk_lt(NEXT(&tp), bound, other);                                               /* 1: min < max / max < min */
    if (!rc) rc = is_min ? sk_logical_and(NEXT(&tp), tp.t[0], tp.t[1]) : sk_logical_or(NEXT(&tp), tp.t[0], tp.t[1]);
    m = LAST(&tp);
  }
  if (!rc) rc = sk_grad_where_take(NEXT(&tp), m, grad, 1);
  return finish(&tp, rc, out);
}

/* maximum/minimum: a tie splits the gradient in half, as PyTorch's. */
int sk_grad_max_min_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *other, int is_max) {
  Tmp tp = {{0}, 0};
  int rc = sk_div_Scalar(NEXT(&tp), grad, sk_scalar_int(2));       /* 0 half */
  if (!rc) rc = sk_eq(NEXT(&tp), self, other);                      /* 1 */
  if (!rc) rc = sk_where_self(NEXT(&tp), tp.t[1], tp.t[0], grad);   /* 2 */
  if (!rc) rc = is_max ? sk_lt(NEXT(&tp), self, other) : sk_gt(NEXT(&tp), self, other); /* 3 loses */
  if (!rc) rc = sk_grad_where_take(NEXT(&tp), tp.t[3], tp.t[2], 0);
  return finish(&tp, rc, out);
}

/* pow.Scalar (a number to tensor powers): grad * base^e * log(base); zero for a zero base and e >= 0 */
int sk_grad_pow_scalar_backward(SkTensor **out, const SkTensor *grad, SkScalar self, const SkTensor *exponent,
                                const SkTensor *result) {
  double b = sk_scalar_to_double(self);
  if (b == 0.0) {
    Tmp tp = {{0}, 0};
    int rc = sk_ge_Scalar(NEXT(&tp), exponent, sk_scalar_int(0));
    if (!rc) rc = sk_mul_Scalar(NEXT(&tp), result, sk_scalar_float(-INFINITY)); /* log(0) */
    if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[1]);
    if (!rc) rc = sk_grad_where_take(NEXT(&tp), tp.t[0], tp.t[2], 0);
    return finish(&tp, rc, out);
  }
  Tmp tp = {{0}, 0};
  int rc = sk_mul_Scalar(NEXT(&tp), result, sk_scalar_float(log(b)));
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[0]);
  return finish(&tp, rc, out);
}

/* div with a rounding mode is piecewise constant: zero gradients, as PyTorch's; without one, true division */
int sk_grad_div_mode_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *other,
                              const char *rounding_mode, int for_self) {
  if (rounding_mode) return sk_zeros_like(out, for_self ? self : other, -1, -1, NONE_DEVICE, -1, -1);
  if (for_self) return sk_div(out, grad, other);
  Tmp tp = {{0}, 0};
  int rc = sk_div(NEXT(&tp), self, other);                         /* -grad * self / other^2 */
  if (!rc) rc = sk_div(NEXT(&tp), tp.t[0], other);
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[1]);
  if (!rc) rc = sk_neg(NEXT(&tp), tp.t[2]);
  return finish(&tp, rc, out);
}

int sk_grad_pow_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkScalar exponent) {
  double e = sk_scalar_to_double(exponent);
  if (e == 0.0) return sk_zeros_like(out, self, -1, -1, NONE_DEVICE, -1, -1);
  Tmp tp = {{0}, 0};
  SkScalar em1 = exponent.kind == SK_SCALAR_FLOAT ? sk_scalar_float(e - 1) : sk_scalar_int(exponent.v.i - 1);
  int rc = sk_pow_Tensor_Scalar(NEXT(&tp), self, em1);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul_Scalar(NEXT(&tp), p_, exponent); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), grad, p_); }
  return finish(&tp, rc, out);
}

int sk_grad_pow_backward_self(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *exponent) {
  Tmp tp = {{0}, 0};
  int rc = sk_sub_Scalar(NEXT(&tp), exponent, sk_scalar_int(1), sk_scalar_int(1));
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_pow_Tensor_Tensor(NEXT(&tp), self, p_); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), p_, exponent); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), grad, p_); }
  if (!rc) rc = sk_eq_Scalar(NEXT(&tp), exponent, sk_scalar_int(0));
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_grad_where_take(NEXT(&tp), p_, tp.t[3], 0); }
  return finish(&tp, rc, out);
}

int sk_grad_pow_backward_exponent(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *exponent,
                                  const SkTensor *result) {
  Tmp tp = {{0}, 0};
  int rc = sk_log(NEXT(&tp), self);                                  /* 0 */
  if (!rc) rc = sk_mul(NEXT(&tp), result, tp.t[0]);                  /* 1 */
  if (!rc) rc = sk_eq_Scalar(NEXT(&tp), self, sk_scalar_int(0));     /* 2 */
  if (!rc) rc = sk_ge_Scalar(NEXT(&tp), exponent, sk_scalar_int(0)); /* 3 */
  if (!rc) rc = sk_logical_and(NEXT(&tp), tp.t[2], tp.t[3]);         /* 4 */
  if (!rc) rc = sk_grad_where_take(NEXT(&tp), tp.t[4], tp.t[1], 0);  /* 5 */
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), grad, p_); }
  return finish(&tp, rc, out);
}

/* grad · grad_output · gelu''(self), the self-gradient of gelu_backward, from ops (so it records):
** exact: gelu'' = phi(x) (2 - x^2), phi the normal density;
** tanh: with T = tanh(k (x + c x^3)), b = k (1 + 3 c x^2): gelu'' = (1 - T^2) (b - x T b^2 + 3 k c x^2). */
int sk_grad_gelu_double_backward(SkTensor **out, const SkTensor *grad, const SkTensor *grad_output, const SkTensor *self,
                                 const char *approximate) {
  Tmp tp = {{0}, 0};
  int rc = sk_mul(NEXT(&tp), self, self);                                               /* 0 x^2 */
  if (approximate && strcmp(approximate, "tanh") == 0) {
    const double k = sqrt(2.0 / M_PI), c = 0.044715;
    if (!rc) rc = sk_mul_Scalar(NEXT(&tp), tp.t[0], sk_scalar_float(c));                /* 1 c x^2 */
    if (!rc) rc = sk_add_Scalar(NEXT(&tp), tp.t[1], sk_scalar_int(1), sk_scalar_int(1)); /* 2 */
    if (!rc) rc = sk_mul(NEXT(&tp), self, tp.t[2]);                                      /* 3 */
    if (!rc) rc = sk_mul_Scalar(NEXT(&tp), tp.t[3], sk_scalar_float(k));                /* 4 inner */
    if (!rc) rc = sk_tanh(NEXT(&tp), tp.t[4]);                                           /* 5 T */
    if (!rc) rc = sk_mul_Scalar(NEXT(&tp), tp.t[1], sk_scalar_float(3 * k));            /* 6 */
    if (!rc) rc = sk_add_Scalar(NEXT(&tp), tp.t[6], sk_scalar_float(k), sk_scalar_int(1)); /* 7 b */
    if (!rc) rc = sk_mul(NEXT(&tp), tp.t[7], tp.t[7]);                                   /* 8 b^2 */
    if (!rc) rc = sk_mul(NEXT(&tp), tp.t[8], tp.t[5]);                                   /* 9 T b^2 */
    if (!rc) rc = sk_mul(NEXT(&tp), tp.t[9], self);                                      /* 10 x T b^2 */
    if (!rc) rc = sk_add(NEXT(&tp), tp.t[7], tp.t[6], sk_scalar_int(1));                 /* 11 b + 3kc x^2 */
    if (!rc) rc = sk_sub(NEXT(&tp), tp.t[11], tp.t[10], sk_scalar_int(1));               /* 12 */
    if (!rc) rc = sk_mul(NEXT(&tp), tp.t[5], tp.t[5]);                                   /* 13 T^2 */
    if (!rc) rc = sk_grad_rsub(NEXT(&tp), tp.t[13], sk_scalar_int(1));                   /* 14 1 - T^2 */
    if (!rc) rc = sk_mul(NEXT(&tp), tp.t[14], tp.t[12]);                                 /* 15 gelu'' */
  } else {
    if (!rc) rc = sk_mul_Scalar(NEXT(&tp), tp.t[0], sk_scalar_float(-0.5));             /* 1 */
    if (!rc) rc = sk_exp(NEXT(&tp), tp.t[1]);                                            /* 2 */
    if (!rc) rc = sk_mul_Scalar(NEXT(&tp), tp.t[2], sk_scalar_float(0.5 * M_2_SQRTPI * M_SQRT1_2)); /* 3 phi */
    if (!rc) rc = sk_grad_rsub(NEXT(&tp), tp.t[0], sk_scalar_int(2));                    /* 4 2 - x^2 */
    if (!rc) rc = sk_mul(NEXT(&tp), tp.t[3], tp.t[4]);                                   /* 5 gelu'' */
  }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), grad_output, p_); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), grad, p_); }
  return finish(&tp, rc, out);
}

int sk_grad_silu_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self) {
  Tmp tp = {{0}, 0};
  int rc = sk_sigmoid(NEXT(&tp), self);                      /* 0 s */
  if (!rc) rc = sk_grad_rsub(NEXT(&tp), tp.t[0], sk_scalar_int(1)); /* 1 1-s */
  if (!rc) rc = sk_mul(NEXT(&tp), self, tp.t[1]);            /* 2 */
  if (!rc) rc = sk_add_Scalar(NEXT(&tp), tp.t[2], sk_scalar_int(1), sk_scalar_int(1)); /* 3 */
  if (!rc) rc = sk_mul(NEXT(&tp), tp.t[0], tp.t[3]);         /* 4 */
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[4]);
  return finish(&tp, rc, out);
}
/* }==== */

/* {==== Shapes and views ==== */
int sk_grad_permute_backwards(SkTensor **out, const SkTensor *grad, SkIntList dims) {
  int64_t inv[SK_MAX_DIMS];
  if (dims.n > SK_MAX_DIMS) return sk_error("permute: too many dims");
  for (int i = 0; i < dims.n; i++) {
    int64_t d;
    if (sk_wrap_dim(dims.data[i], dims.n, "dims", &d)) return -1;
    inv[d] = i;
  }
  return sk_permute(out, grad, (SkIntList){inv, dims.n});
}

int sk_grad_roll_backward(SkTensor **out, const SkTensor *grad, SkIntList shifts, SkIntList dims) {
  int64_t neg[SK_MAX_DIMS];
  if (shifts.n > SK_MAX_DIMS) return sk_error("roll: too many shifts");
  for (int i = 0; i < shifts.n; i++) neg[i] = -shifts.data[i];
  return sk_roll(out, grad, (SkIntList){neg, shifts.n}, dims);
}

/* repeat: the copies of each element summed (grad viewed as [r0, s0, r1, s1, ...], the r dims summed) */
int sk_grad_repeat_backward(SkTensor **out, const SkTensor *grad, SkIntList repeats, SkIntList sizes) {
  int lead = repeats.n - sizes.n, nd = 0, nr = 0;
  int64_t shape[2 * SK_MAX_DIMS], rdims[2 * SK_MAX_DIMS];
  if (lead < 0 || repeats.n > SK_MAX_DIMS / 2 + 1) return sk_error("repeat_backward: %d repeats for %d dims", repeats.n, sizes.n);
  for (int i = 0; i < repeats.n; i++) {
    int64_t s = i < lead ? 1 : sizes.data[i - lead];
    rdims[nr++] = nd;
    shape[nd++] = repeats.data[i];
    shape[nd++] = s;
  }
  if (nd > SK_MAX_DIMS) return sk_error("repeat_backward: more than %d dims", SK_MAX_DIMS / 2);
  Tmp tp = {{0}, 0};
  int rc = sk_reshape(NEXT(&tp), grad, (SkIntList){shape, nd});
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_sum_dim_IntList(NEXT(&tp), p_, (SkIntList){rdims, nr}, 0, -1); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_reshape(NEXT(&tp), p_, sizes); }
  return finish(&tp, rc, out);
}

/* diag: of a vector, the matrix's diagonal comes back; of a matrix, the vector goes onto the diagonal */
int sk_grad_diag_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t diagonal) {
  if (sizes.n == 1) return sk_diag(out, grad, diagonal);
  Tmp tp = {{0}, 0};
  int rc = sk_diag(NEXT(&tp), grad, diagonal);                           /* 0 square, side len + |k| */
  int64_t side = tp.t[0] ? tp.t[0]->sizes[0] : 0;
  int64_t m = sizes.data[0] < side ? sizes.data[0] : side, n = sizes.data[1] < side ? sizes.data[1] : side;
  if (!rc) rc = sk_zeros(NEXT(&tp), sizes, (int)grad->dtype, -1, grad->device, -1); /* 1 */
  if (!rc) rc = sk_narrow(NEXT(&tp), tp.t[1], 0, 0, m);                  /* 2 */
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_narrow(NEXT(&tp), p_, 1, 0, n); } /* 3 */
  if (!rc) rc = sk_narrow(NEXT(&tp), tp.t[0], 0, 0, m);                  /* 4 */
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_narrow(NEXT(&tp), p_, 1, 0, n); } /* 5 */
  if (!rc) rc = sk_copy_(tp.t[3], tp.t[5], 0);
  if (!rc) { *out = tp.t[1]; tp.t[1] = NULL; }
  for (int i = 0; i < tp.n; i++) sk_tensor_release(tp.t[i]);
  return rc;
}

int sk_grad_unsqueeze_to(SkTensor **out, const SkTensor *grad, int64_t dim, SkIntList sizes) {
  int64_t d;
  if (sk_wrap_dim(dim, sizes.n, "dim", &d)) return -1;
  if (sizes.n > 0 && sizes.data[d] == 1) return sk_unsqueeze(out, grad, d);
  *out = sk_tensor_retain((SkTensor *)grad);
  return 0;
}

/* zeros of the input's shape with grad copied into the region the view took */
typedef int (*RegionFn)(SkTensor **view, const SkTensor *z, const void *args);
static int into_region(SkTensor **out, const SkTensor *grad, SkIntList sizes, RegionFn region, const void *args) {
  Tmp tp = {{0}, 0};
  int rc = sk_zeros(NEXT(&tp), sizes, (int)grad->dtype, -1, grad->device, -1);
  if (!rc) rc = region(NEXT(&tp), tp.t[0], args);
  if (!rc) rc = sk_copy_(tp.t[1], grad, 0);
  if (!rc) { *out = tp.t[0]; tp.t[0] = NULL; }
  for (int i = 0; i < tp.n; i++) sk_tensor_release(tp.t[i]);
  return rc;
}
typedef struct { int64_t dim, a, b, step; SkOptInt start, end; } RegionArgs;
static int select_region(SkTensor **v, const SkTensor *z, const void *p) {
  const RegionArgs *r = p;
  return sk_select_int(v, z, r->dim, r->a);
}
static int slice_region(SkTensor **v, const SkTensor *z, const void *p) {
  const RegionArgs *r = p;
  return sk_slice(v, z, r->dim, r->start, r->end, r->step);
}
static int narrow_region(SkTensor **v, const SkTensor *z, const void *p) {
  const RegionArgs *r = p;
  return sk_narrow(v, z, r->dim, r->a, r->b);
}

static int diagonal_region(SkTensor **v, const SkTensor *z, const void *p) {
  const RegionArgs *r = p; /* a: offset, b: dim1, step: dim2 */
  return sk_diagonal(v, z, r->a, r->b, r->step);
}

int sk_grad_diagonal_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  RegionArgs r = {0, offset, dim1, dim2, {0, 0}, {0, 0}};
  return into_region(out, grad, sizes, diagonal_region, &r);
}

int sk_grad_select_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, int64_t index) {
  RegionArgs r = {dim, index, 0, 1, {0, 0}, {0, 0}};
  return into_region(out, grad, sizes, select_region, &r);
}

int sk_grad_slice_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, SkOptInt start, SkOptInt end,
                           int64_t step) {
  RegionArgs r = {dim, 0, 0, step, start, end};
  return into_region(out, grad, sizes, slice_region, &r);
}

int sk_grad_narrow_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, int64_t start, int64_t length) {
  RegionArgs r = {dim, start, length, 1, {0, 0}, {0, 0}};
  return into_region(out, grad, sizes, narrow_region, &r);
}

/* The gradient of a view with geometry (sizes, strides, offset) over self's storage, for any
** geometry (PyTorch's as_strided_backward): grad is summed into a flat buffer spanning both
** geometries at the storage positions it covers, and self's elements are gathered from it.
** Where self's own elements overlap (an expanded self), each position's sum is split evenly
** among the elements sharing it. Written with ops, so it records under create_graph. */
static int strided_grad(SkTensor **out, const SkTensor *grad, const SkTensor *self, int nd, const int64_t *sizes,
                        const int64_t *strides, int64_t offset) {
  int64_t lo_in = 0, hi_in = -1, lo_out = 0, hi_out = -1;
  if (self->numel && sk_span(self->ndim, self->sizes, self->strides, self->offset, &lo_in, &hi_in)) return -1;
  if (grad->numel && sk_span(nd, sizes, strides, offset, &lo_out, &hi_out)) return -1;
  if (!self->numel || !grad->numel)
    return sk_new_zeros(out, grad, (SkIntList){self->sizes, self->ndim}, -1, -1, NONE_DEVICE, -1);
  int64_t lo = lo_in < lo_out ? lo_in : lo_out, hi = hi_in > hi_out ? hi_in : hi_out, flat_n = -1, m = hi - lo + 1;
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
#define T(call) SK_TAPE_STEP(tp, call)
  SkTensor *pos = T(sk_arange(&r, sk_scalar_int(m), SK_DTYPE_INT64, -1, grad->device, -1));
  SkTensor *iout = T(sk_reshape(&r, T(sk_as_strided(&r, pos, ((SkIntList){sizes, nd}), ((SkIntList){strides, nd}),
                                                     ((SkOptInt){1, offset - lo}))), ((SkIntList){&flat_n, 1})));
  SkTensor *iin = T(sk_reshape(&r, T(sk_as_strided(&r, pos, ((SkIntList){self->sizes, self->ndim}),
                                                    ((SkIntList){self->strides, self->ndim}), ((SkOptInt){1, self->offset - lo}))),
                               ((SkIntList){&flat_n, 1})));
  SkTensor *flat = T(sk_new_zeros(&r, grad, ((SkIntList){&m, 1}), -1, -1, NONE_DEVICE, -1));
  flat = T(sk_scatter_add(&r, flat, 0, iout, T(sk_reshape(&r, grad, ((SkIntList){&flat_n, 1})))));
  if (sk_tensor_has_internal_overlap(self)) {
    SkTensor *count = T(sk_new_zeros(&r, grad, ((SkIntList){&m, 1}), -1, -1, NONE_DEVICE, -1));
    SkTensor *ones = T(sk_new_ones(&r, grad, ((SkIntList){&self->numel, 1}), -1, -1, NONE_DEVICE, -1));
    count = T(sk_clamp_min(&r, T(sk_scatter_add(&r, count, 0, iin, ones)), sk_scalar_int(1)));
    flat = T(sk_div(&r, flat, count));
  }
  SkTensor *g = T(sk_reshape(&r, T(sk_index_select(&r, flat, 0, iin)), ((SkIntList){self->sizes, self->ndim})));
#undef T
  if (!tp->rc) *out = sk_tape_take(tp, g);
  return sk_tape_free(tp);
}

int sk_grad_as_strided_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkIntList size,
                                SkIntList stride, SkOptInt storage_offset) {
  return strided_grad(out, grad, self, size.n, size.data, stride.data, storage_offset.has ? storage_offset.v : self->offset);
}

/* Tensor.unfold is a view of self: its geometry, read off the view itself */
int sk_grad_unfold_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, int64_t dimension, int64_t size,
                            int64_t step) {
  SkTensor *v = NULL;
  if (sk_unfold(&v, self, dimension, size, step)) return -1;
  int rc = strided_grad(out, grad, self, v->ndim, v->sizes, v->strides, v->offset);
  sk_tensor_release(v);
  return rc;
}

/* constant_pad_nd's adjoint: the same op with every pad negated (a pad becomes a crop) */
int sk_grad_constant_pad_nd_backward(SkTensor **out, const SkTensor *grad, SkIntList pad) {
  int64_t neg[2 * SK_MAX_DIMS];
  if (pad.n > 2 * SK_MAX_DIMS) return sk_error("constant_pad_nd_backward: %d pads, at most %d", pad.n, 2 * SK_MAX_DIMS);
  for (int i = 0; i < pad.n; i++) neg[i] = -pad.data[i];
  return sk_constant_pad_nd(out, grad, (SkIntList){neg, pad.n}, sk_scalar_int(0));
}
/* }==== */

/* {==== Softmax ==== */
/* The gradients of _softmax_backward_data and _log_softmax_backward_data (double backward),
** for upstream G, grad_output gO and the forward's output y; sums over dim, kept:
**   softmax, by y:         G·(gO - Σ gO·y) - gO·Σ G·y
**   log_softmax, by gO:    G - Σ G·exp(y)
**   log_softmax, by y:     -G·exp(y)·Σ gO */
static int sum_kept(SkTensor **out, const SkTensor *t, int64_t dim) {
  return sk_sum_dim_IntList(out, t, (SkIntList){&dim, 1}, 1, -1);
}

int sk_grad_softmax_backward_data_output(SkTensor **out, const SkTensor *grad, const SkTensor *grad_output, int64_t dim,
                                         const SkTensor *output) {
  Tmp tp = {{0}, 0};
  int rc = sk_mul(NEXT(&tp), grad_output, output);                                 /* 0 */
  if (!rc) rc = sum_kept(NEXT(&tp), tp.t[0], dim);                                  /* 1 */
  if (!rc) rc = sk_sub(NEXT(&tp), grad_output, tp.t[1], sk_scalar_int(1));          /* 2 */
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[2]);                                   /* 3 */
  if (!rc) rc = sk_mul(NEXT(&tp), grad, output);                                    /* 4 */
  if (!rc) rc = sum_kept(NEXT(&tp), tp.t[4], dim);                                  /* 5 */
  if (!rc) rc = sk_mul(NEXT(&tp), grad_output, tp.t[5]);                            /* 6 */
  if (!rc) rc = sk_sub(NEXT(&tp), tp.t[3], tp.t[6], sk_scalar_int(1));
  return finish(&tp, rc, out);
}

int sk_grad_log_softmax_backward_data_grad_output(SkTensor **out, const SkTensor *grad, const SkTensor *output,
                                                  int64_t dim) {
  Tmp tp = {{0}, 0};
  int rc = sk_exp(NEXT(&tp), output);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), grad, p_); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sum_kept(NEXT(&tp), p_, dim); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_sub(NEXT(&tp), grad, p_, sk_scalar_int(1)); }
  return finish(&tp, rc, out);
}

int sk_grad_log_softmax_backward_data_output(SkTensor **out, const SkTensor *grad, const SkTensor *grad_output,
                                             int64_t dim, const SkTensor *output) {
  Tmp tp = {{0}, 0};
  int rc = sum_kept(NEXT(&tp), grad_output, dim);                                   /* 0 */
  if (!rc) rc = sk_exp(NEXT(&tp), output);                                          /* 1 */
  if (!rc) rc = sk_mul(NEXT(&tp), tp.t[0], tp.t[1]);                                /* 2 */
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[2]);                                   /* 3 */
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_neg(NEXT(&tp), p_); }
  return finish(&tp, rc, out);
}
/* }==== */

/* {==== Indexing ==== */
/* index (1-D, along dim) viewed and expanded to grad's shape, for scatter_add */
static int index_like(SkTensor **out, const SkTensor *index, const SkTensor *grad, int64_t dim) {
  int64_t shape[SK_MAX_DIMS];
  for (int d = 0; d < grad->ndim; d++) shape[d] = d == dim ? -1 : 1;
  SkTensor *v = NULL;
  if (sk_reshape(&v, index, (SkIntList){shape, grad->ndim})) return -1;
  int rc = sk_expand(out, v, (SkIntList){grad->sizes, grad->ndim}, 0);
  sk_tensor_release(v);
  return rc;
}

int sk_grad_index_select_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, const SkTensor *index) {
  int64_t d;
  if (sk_wrap_dim(dim, sizes.n, "dim", &d)) return -1;
  Tmp tp = {{0}, 0};
  int rc = sk_zeros(NEXT(&tp), sizes, (int)grad->dtype, -1, grad->device, -1);
  if (grad->ndim == 0) {
    if (!rc) rc = sk_reshape(NEXT(&tp), grad, (SkIntList){NULL, 0});
    if (!rc) rc = sk_scatter_add(NEXT(&tp), tp.t[0], 0, index, tp.t[1]);
    return finish(&tp, rc, out);
  }
  if (!rc) rc = index_like(NEXT(&tp), index, grad, d);
  if (!rc) rc = sk_scatter_add(NEXT(&tp), tp.t[0], d, tp.t[1], grad);
  return finish(&tp, rc, out);
}

int sk_grad_gather_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, const SkTensor *index) {
  Tmp tp = {{0}, 0};
  int rc = sk_zeros(NEXT(&tp), sizes, (int)grad->dtype, -1, grad->device, -1);
  if (!rc) rc = sk_scatter_add(NEXT(&tp), tp.t[0], dim, index, grad);
  return finish(&tp, rc, out);
}

int sk_grad_embedding_backward(SkTensor **out, const SkTensor *grad, const SkTensor *indices, SkIntList weight_sizes,
                               int64_t padding_idx) {
  if (weight_sizes.n != 2) return sk_error("embedding_backward: weight must be 2-D");
  int64_t flat[2] = {-1, weight_sizes.data[1]}, one = -1;
  Tmp tp = {{0}, 0};
  int rc = sk_reshape(NEXT(&tp), grad, (SkIntList){flat, 2});      /* 0 g2 [N, D] */
  if (!rc) rc = sk_reshape(NEXT(&tp), indices, (SkIntList){&one, 1}); /* 1 idx [N] */
  const SkTensor *g = tp.t[0];
  if (!rc && padding_idx >= 0) {
    rc = sk_ne_Scalar(NEXT(&tp), tp.t[1], sk_scalar_int(padding_idx));
    if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_unsqueeze(NEXT(&tp), p_, 1); }
    if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_grad_where_take(NEXT(&tp), p_, tp.t[0], 1); }
    g = LAST(&tp);
  }
  if (!rc) rc = sk_zeros(NEXT(&tp), weight_sizes, (int)grad->dtype, -1, grad->device, -1);
  int z = tp.n - 1;
  if (!rc) rc = index_like(NEXT(&tp), tp.t[1], g, 0);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_scatter_add(NEXT(&tp), tp.t[z], 0, p_, g); }
  return finish(&tp, rc, out);
}

/* cat: each input's slice of the gradient along dim (sizes: each input's (ndim, sizes...)) */
int sk_grad_cat_backward(SkTensorList *out, const SkTensor *grad, SkIntList sizes, int64_t dim) {
  int n = 0;
  for (int p = 0; p < sizes.n; p += 1 + (int)sizes.data[p]) n++;
  SkTensor **r = calloc((size_t)n + 1, sizeof *r);
  if (!r) return sk_error("out of memory");
  int64_t d, off = 0;
  int rc = sk_wrap_dim(dim, grad->ndim, "dim", &d), i = 0;
  for (int p = 0; !rc && p < sizes.n; p += 1 + (int)sizes.data[p], i++) {
    int nd = (int)sizes.data[p];
    if (nd == 1 && sizes.data[p + 1] == 0 && grad->ndim != 1) { /* a legacy empty [0] input: no gradient */
      rc = sk_zeros(&r[i], (SkIntList){sizes.data + p + 1, 1}, (int)grad->dtype, -1, grad->device, -1);
      continue;
    }
    int64_t len = sizes.data[p + 1 + d];
    SkTensor *v = NULL;
    rc = sk_narrow(&v, grad, d, off, len);
    if (!rc) rc = sk_clone(&r[i], v, -1);
    sk_tensor_release(v);
    off += len;
  }
  out->data = r;
  out->n = i;
  if (rc) sk_tensorlist_free(out);
  return rc;
}

/* stack: each input's index of the gradient along the new dim */
int sk_grad_stack_backward(SkTensorList *out, const SkTensor *grad, SkIntList sizes, int64_t dim) {
  int n = 0;
  for (int p = 0; p < sizes.n; p += 1 + (int)sizes.data[p]) n++;
  SkTensor **r = calloc((size_t)n + 1, sizeof *r);
  if (!r) return sk_error("out of memory");
  int64_t d;
  int rc = sk_wrap_dim(dim, grad->ndim, "dim", &d);
  for (int i = 0; !rc && i < n; i++) rc = sk_select_int(&r[i], grad, d, i);
  out->data = r;
  out->n = n;
  if (rc) sk_tensorlist_free(out);
  return rc;
}

/* split / chunk: the gradients of the pieces (zeros for those that got none) put back together */
int sk_grad_split_backward(SkTensor **out, SkTensorList grads, int64_t dim) { return sk_cat(out, grads, dim); }
int sk_grad_unbind_backward(SkTensor **out, SkTensorList grads, int64_t dim) { return sk_stack(out, grads, dim); }

/* advanced indexing: the gradient summed into the places indexed (index_put_ with accumulate) */
int sk_grad_index_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, SkTensorList indices) {
  Tmp tp = {{0}, 0};
  int rc = sk_zeros(NEXT(&tp), sizes, (int)grad->dtype, -1, grad->device, -1);
  if (!rc) rc = sk_index_put_(tp.t[0], indices, grad, 1);
  if (!rc) { *out = tp.t[0]; tp.t[0] = NULL; }
  for (int i = 0; i < tp.n; i++) sk_tensor_release(tp.t[i]);
  return rc;
}

/* index_put: self's gradient is grad with the written places zeroed (all of grad with accumulate) */
int sk_grad_index_put_self_backward(SkTensor **out, const SkTensor *grad, SkTensorList indices, int accumulate) {
  if (accumulate) { *out = sk_tensor_retain((SkTensor *)grad); return 0; }
  SkTensor *z = NULL; /* a 0-dim zero of grad's dtype: index_put_ takes no conversion */
  if (sk_zeros(&z, (SkIntList){NULL, 0}, (int)grad->dtype, -1, grad->device, -1)) return -1;
  Tmp tp = {{0}, 0};
  int rc = sk_clone(NEXT(&tp), grad, -1);
  if (!rc) rc = sk_index_put_(tp.t[0], indices, z, 0);
  sk_tensor_release(z);
  if (!rc) { *out = tp.t[0]; tp.t[0] = NULL; }
  for (int i = 0; i < tp.n; i++) sk_tensor_release(tp.t[i]);
  return rc;
}

int sk_grad_masked_select_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *mask) {
  Tmp tp = {{0}, 0};
  int rc = sk_zeros_like(NEXT(&tp), self, -1, -1, NONE_DEVICE, -1, -1);   /* 0 */
  if (!rc) rc = sk_zeros_like(NEXT(&tp), mask, (int)self->dtype, -1, NONE_DEVICE, -1, -1); /* 1 */
  if (!rc) rc = sk_add(NEXT(&tp), tp.t[0], tp.t[1], sk_scalar_int(1));  /* 2 zeros of the broadcast shape */
  if (!rc) { SkTensor *m[1] = {(SkTensor *)mask}; rc = sk_index_put_(tp.t[2], (SkTensorList){m, 1}, grad, 1); }
  if (!rc) { *out = tp.t[2]; tp.t[2] = NULL; }
  for (int i = 0; i < tp.n; i++) sk_tensor_release(tp.t[i]);
  return rc;
}

/* nll_loss_forward's input gradient: -weight[target] (masked where target is ignored), over
** total_weight for the mean, times grad, at each row's target column. */
int sk_grad_nll_loss_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *target,
                              const SkTensor *weight, int64_t reduction, int64_t ignore_index, const SkTensor *total_weight) {
  int cdim = self->ndim == 1 ? 0 : 1;
  Tmp tp = {{0}, 0};
  int rc = sk_eq_Scalar(NEXT(&tp), target, sk_scalar_int(ignore_index));            /* 0 ignored */
  if (!rc) rc = sk_masked_fill_Scalar(NEXT(&tp), target, tp.t[0], sk_scalar_int(0)); /* 1 safe target */
  if (!rc && weight) {
    int64_t one = -1;
    rc = sk_reshape(NEXT(&tp), tp.t[1], (SkIntList){&one, 1});
    if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_index_select(NEXT(&tp), weight, 0, p_); }
    if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_reshape(NEXT(&tp), p_, (SkIntList){target->sizes, target->ndim}); }
  } else if (!rc) rc = sk_ones_like(NEXT(&tp), target, (int)self->dtype, -1, sk_device(-1, 0), -1, -1);
  SkTensor *w = LAST(&tp);
  if (!rc) rc = sk_grad_where_take(NEXT(&tp), tp.t[0], w, 0);                        /* w, 0 where ignored */
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul_Scalar(NEXT(&tp), p_, sk_scalar_int(-1)); }
  if (!rc && reduction == 1) { SkTensor *p_ = LAST(&tp); rc = sk_div(NEXT(&tp), p_, total_weight); }
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_mul(NEXT(&tp), p_, grad); }
  SkTensor *coef = LAST(&tp);
  if (!rc) rc = sk_unsqueeze(NEXT(&tp), coef, cdim);
  SkTensor *c1 = LAST(&tp);
  if (!rc) rc = sk_unsqueeze(NEXT(&tp), tp.t[1], cdim);
  SkTensor *t1 = LAST(&tp);
  if (!rc) rc = sk_zeros_like(NEXT(&tp), self, -1, -1, sk_device(-1, 0), -1, -1);
  if (!rc) { SkTensor *p_ = LAST(&tp); rc = sk_scatter_src(NEXT(&tp), p_, cdim, t1, c1); }
  return finish(&tp, rc, out);
}
/* }==== */

/* {==== convolution ====
** PyTorch's _convolution_double_backward, through convolution and convolution_backward (so it
** records under create_graph), the same for transposed convolutions: with ggI, ggW, ggb the
** gradients of convolution_backward's results (each may be NULL, None),
**   grad_output: convolution(ggI, weight) + convolution(input, ggW) + ggb over dim 1,
**   input: the data gradient of convolution(input, ggW), i.e. convolution_backward(gO, input, ggW)[0],
**   weight: the weight gradient of convolution(ggI, weight), convolution_backward(gO, ggI, weight)[1]. */
static int accumulate(SkTensor **acc, SkTensor *t) {
  if (!*acc) { *acc = t; return 0; }
  SkTensor *s = NULL;
  int rc = sk_add(&s, *acc, t, sk_scalar_int(1));
  sk_tensor_release(*acc);
  sk_tensor_release(t);
  *acc = s;
  return rc;
}

int sk_grad_convolution_double_backward(SkTensorList *out, const SkTensor *ggI, const SkTensor *ggW, const SkTensor *ggb,
                                        const SkTensor *grad_output, const SkTensor *weight, const SkTensor *input,
                                        SkIntList stride, SkIntList padding, SkIntList dilation, int transposed,
                                        SkIntList output_padding, int64_t groups, SkIntList mask) {
  SkTensor **r = calloc(4, sizeof *r);
  if (!r) return sk_error("out of memory");
  static const SkIntList none = {NULL, 0};
  static const int64_t want_input[3] = {1, 0, 0}, want_weight[3] = {0, 1, 0};
  int rc = 0;
  if (mask.data[0]) {
    SkTensor *acc = NULL, *t = NULL;
    if (ggI) rc = sk_convolution(&acc, ggI, weight, NULL, stride, padding, dilation, transposed, output_padding, groups);
    if (!rc && ggW && !(rc = sk_convolution(&t, input, ggW, NULL, stride, padding, dilation, transposed, output_padding,
                                            groups)))
      rc = accumulate(&acc, t);
    if (!rc && ggb) {
      int64_t shape[SK_MAX_DIMS];
      for (int i = 0; i < grad_output->ndim; i++) shape[i] = i == 1 ? ggb->numel : 1;
      SkTensor *v = NULL, *e = NULL;
      rc = sk_view(&v, ggb, (SkIntList){shape, grad_output->ndim});
      if (!rc) rc = sk_expand(&e, v, (SkIntList){grad_output->sizes, grad_output->ndim}, 0);
      sk_tensor_release(v);
      if (!rc) rc = accumulate(&acc, e);
    }
    r[0] = acc;
  }
  SkTensor *t[3] = {NULL, NULL, NULL};
  if (!rc && mask.data[1] && ggW) {
    rc = sk_convolution_backward(&t[0], &t[1], &t[2], grad_output, input, ggW, none, stride, padding, dilation,
                                 transposed, output_padding, groups, (SkIntList){want_input, 3});
    r[1] = t[0];
    sk_tensor_release(t[1]);
    sk_tensor_release(t[2]);
  }
  if (!rc && mask.data[2] && ggI) {
    t[0] = t[1] = t[2] = NULL;
    rc = sk_convolution_backward(&t[0], &t[1], &t[2], grad_output, ggI, weight, none, stride, padding, dilation,
                                 transposed, output_padding, groups, (SkIntList){want_weight, 3});
    r[2] = t[1];
    sk_tensor_release(t[0]);
    sk_tensor_release(t[2]);
  }
  out->data = r;
  out->n = 3;
  if (rc) sk_tensorlist_free(out);
  return rc;
}
/* }==== */

/* {==== layer_norm ====
** PyTorch's layer_norm_double_backward (FunctionsManual.cpp), over [M, N] views: x the input,
** µ and σ⁻¹ = rstd per row, g = grad_out, γ the weight (NULL: ones), ggI, ggW, ggB the gradients
** of native_layer_norm_backward's results (each may be NULL). A tape holds the temporaries: each
** step takes operands from it and adds its result, or does nothing once a step failed. */
#define TAPE_OP SK_GRAD_TAPE_OP
TAPE_OP(t_sum1, (SkTape *tp, const SkTensor *a), sk_sum_dim_IntList(&r, a, (SkIntList){(const int64_t[]){1}, 1}, 1, -1))
TAPE_OP(t_sum0, (SkTape *tp, const SkTensor *a), sk_sum_dim_IntList(&r, a, (SkIntList){(const int64_t[]){0}, 1}, 0, -1))
TAPE_OP(t_reshape, (SkTape *tp, const SkTensor *a, int n, const int64_t *s), sk_reshape(&r, a, (SkIntList){s, n}))
TAPE_OP(t_expand, (SkTape *tp, const SkTensor *a, int n, const int64_t *s), sk_expand(&r, a, (SkIntList){s, n}, 0))
/* a + b, where a may be NULL (nothing yet) */
static SkTensor *t_acc(SkTape *tp, SkTensor *a, SkTensor *b) { return a ? t_add(tp, a, b) : b; }

/* PyTorch's first_bwd_fn_grad_input: (γ·σ⁻¹/N)·(N·g - Σg - (x-µ)·σ⁻²·Σ g·(x-µ)), γ NULL: 1. */
static SkTensor *first_bwd(SkTape *tp, const SkTensor *g, const SkTensor *gamma, const SkTensor *s1, const SkTensor *s2,
                           const SkTensor *xmu, double n) {
  SkTensor *h0 = t_scale(tp, gamma ? t_mul(tp, gamma, s1) : s1, 1 / n);
  SkTensor *h1 = t_sub(tp, t_sub(tp, t_scale(tp, g, n), t_sum1(tp, g)), t_mul(tp, t_mul(tp, xmu, s2), t_sum1(tp, t_mul(tp, g, xmu))));
  return t_mul(tp, h0, h1);
}

int sk_grad_layer_norm_double_backward(SkTensorList *out, const SkTensor *ggI, const SkTensor *ggW, const SkTensor *ggB,
                                       const SkTensor *grad_out, const SkTensor *input, SkIntList normalized_shape,
                                       const SkTensor *mean, const SkTensor *rstd, const SkTensor *weight,
                                       SkIntList mask) {
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  int axis = input->ndim - normalized_shape.n;
  int64_t M = sk_numel(axis, input->sizes), N = sk_numel(normalized_shape.n, normalized_shape.data);
  double n = (double)N;
  const int64_t mn[2] = {M, N}, m1[2] = {M, 1}, one_n[2] = {1, N};
  SkTensor *x = t_reshape(tp, input, 2, mn), *g = t_reshape(tp, grad_out, 2, mn);
  SkTensor *mu = t_reshape(tp, mean, 2, m1), *s1 = t_reshape(tp, rstd, 2, m1);
  SkTensor *gamma = weight ? t_reshape(tp, weight, 2, one_n) : NULL;
  SkTensor *ggw = weight && ggW ? t_reshape(tp, ggW, 2, one_n) : NULL, *ggb = ggB ? t_reshape(tp, ggB, 2, one_n) : NULL;
  SkTensor *ggi = ggI ? t_reshape(tp, ggI, 2, mn) : NULL;
  SkTensor *xmu = t_sub(tp, x, mu), *s2 = t_mul(tp, s1, s1), *s3 = t_mul(tp, s2, s1);
  SkTensor *xmu_s3 = t_mul(tp, xmu, s3);
  SkTensor *gI = NULL, *gG = NULL, *ggO = NULL;
  if (mask.data[1] && ggi) {
    SkTensor *gxhat = gamma ? t_mul(tp, g, gamma) : g;
    SkTensor *gxhat_mu_sum = t_sum1(tp, t_mul(tp, gxhat, xmu)), *gxhat_sum = t_sum1(tp, gxhat);
    SkTensor *ggi_sum = t_sum1(tp, ggi), *ggi_mu_sum = t_sum1(tp, t_mul(tp, ggi, xmu));
    SkTensor *all_sub = t_add(tp, t_sub(tp, t_scale(tp, t_mul(tp, ggi_sum, gxhat_sum), 1 / n), t_sum1(tp, t_mul(tp, ggi, gxhat))),
                              t_scale(tp, t_mul(tp, t_mul(tp, s2, gxhat_mu_sum), ggi_mu_sum), 3 / n));
    SkTensor *g0 = t_scale(tp, t_mul(tp, xmu_s3, all_sub), 1 / n);
    SkTensor *g1 = t_mul(tp, t_scale(tp, t_mul(tp, ggi_mu_sum, s3), 1 / n), t_sub(tp, t_scale(tp, gxhat_sum, 1 / n), gxhat));
    SkTensor *g2 = t_mul(tp, t_scale(tp, t_mul(tp, gxhat_mu_sum, s3), 1 / n), t_sub(tp, t_scale(tp, ggi_sum, 1 / n), ggi));
    gI = t_add(tp, t_add(tp, g0, g1), g2);
  }
  if (mask.data[1] && ggw) {
    SkTensor *gog = t_mul(tp, g, ggw);
    SkTensor *a0 = t_mul(tp, gog, s1);
    SkTensor *a1 = t_scale(tp, t_mul(tp, s1, t_sum1(tp, gog)), -1 / n);
    SkTensor *a2 = t_scale(tp, t_mul(tp, xmu_s3, t_sum1(tp, t_mul(tp, gog, xmu))), -1 / n);
    gI = t_acc(tp, gI, t_add(tp, t_add(tp, a0, a1), a2));
  }
  if (gI) gI = t_reshape(tp, gI, input->ndim, input->sizes);
  if (mask.data[2] && gamma && ggi)
    gG = t_reshape(tp, t_sum0(tp, t_mul(tp, g, first_bwd(tp, ggi, NULL, s1, s2, xmu, n))), weight->ndim, weight->sizes);
  if (mask.data[0]) {
    if (ggi) ggO = first_bwd(tp, ggi, gamma, s1, s2, xmu, n);
    if (ggw) ggO = t_acc(tp, ggO, t_mul(tp, t_mul(tp, ggw, xmu), s1));
    if (ggb) ggO = t_acc(tp, ggO, ggb);
    if (ggO) ggO = t_reshape(tp, t_expand(tp, ggO, 2, mn), input->ndim, input->sizes);
  }
  return sk_grad_tape_list(tp, out, 3, ggO, gI, gG);
}
/* }==== */

/* {==== batch_norm ====
** PyTorch's batchnorm_double_backward (FunctionsManual.cpp): the gradients of
** native_batch_norm_backward's (gI, gW, gB) results, ggI, ggG, ggB, flowing to input, weight and
** grad_out. µ and σ⁻¹ per channel are the saved batch statistics in training, the running ones
** in eval; sums run over every dim but 1 (kept, to broadcast), over M = numel / C elements. */
static SkTensor *t_sumx(SkTape *tp, const SkTensor *a, int keep) {
  if (tp->rc) return NULL;
  int64_t d[SK_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < a->ndim; i++)
    if (i != 1) d[n++] = i;
  SkTensor *r = NULL;
  int rc = sk_sum_dim_IntList(&r, a, (SkIntList){d, n}, keep, -1);
  return sk_tape_keep(tp, rc, r);
}
TAPE_OP(t_add_s, (SkTape *tp, const SkTensor *a, double s), sk_add_Scalar(&r, a, sk_scalar_float(s), sk_scalar_int(1)))
TAPE_OP(t_rsqrt, (SkTape *tp, const SkTensor *a), sk_rsqrt(&r, a))

int sk_grad_batchnorm_double_backward(SkTensorList *out, const SkTensor *input, const SkTensor *gamma, const SkTensor *ggI,
                                      const SkTensor *ggG, const SkTensor *ggB, const SkTensor *gO, const SkTensor *running_mean,
                                      const SkTensor *running_var, int training, double eps, const SkTensor *save_mean,
                                      const SkTensor *save_invstd, SkIntList mask) {
  if (mask.n != 3) return sk_error("batchnorm_double_backward: output_mask must have 3 elements");
  if (input->ndim < 2) return sk_error("batchnorm_double_backward: input must have at least 2 dims");
  const SkTensor *mean_src = training ? save_mean : running_mean, *var_src = training ? save_invstd : running_var;
  if (!mean_src || !var_src)
    return sk_error("batchnorm_double_backward: %s", training ? "save_mean and save_invstd are needed in training"
                                                              : "running_mean and running_var are needed in eval");
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  int64_t C = input->sizes[1], ch[SK_MAX_DIMS];
  for (int d = 0; d < input->ndim; d++) ch[d] = d == 1 ? C : 1;
  double M = C ? (double)input->numel / (double)C : 0;
  SkTensor *g = gamma ? t_reshape(tp, gamma, input->ndim, ch) : NULL; /* NULL: 1 */
  SkTensor *gg = gamma && ggG ? t_reshape(tp, ggG, input->ndim, ch) : NULL, *gb = gamma && ggB ? t_reshape(tp, ggB, input->ndim, ch) : NULL;
  SkTensor *mu = t_reshape(tp, mean_src, input->ndim, ch);
  SkTensor *s1 = training ? t_reshape(tp, var_src, input->ndim, ch) : t_rsqrt(tp, t_add_s(tp, t_reshape(tp, var_src, input->ndim, ch), eps));
  SkTensor *s2 = t_mul(tp, s1, s1), *s3 = t_mul(tp, s2, s1);
  SkTensor *xmu = t_sub(tp, input, mu), *xmu_s3 = t_mul(tp, xmu, s3);
  SkTensor *gOxmu_sum = t_sumx(tp, t_mul(tp, gO, xmu), 1), *gO_sum = t_sumx(tp, gO, 1);
  SkTensor *gI = NULL, *gG = NULL, *ggO = NULL;
  if (ggI && training) {
    SkTensor *ggI_sum = t_sumx(tp, ggI, 1), *ggIxmu_sum = t_sumx(tp, t_mul(tp, ggI, xmu), 1);
    SkTensor *all_sub = t_add(tp, t_sub(tp, t_scale(tp, t_mul(tp, ggI_sum, gO_sum), 1 / M), t_sumx(tp, t_mul(tp, gO, ggI), 1)),
                              t_scale(tp, t_mul(tp, t_mul(tp, s2, gOxmu_sum), ggIxmu_sum), 3 / M));
    SkTensor *i0 = t_scale(tp, t_mul(tp, xmu_s3, all_sub), 1 / M);
    SkTensor *i1 = t_mul(tp, t_scale(tp, t_mul(tp, ggIxmu_sum, s3), 1 / M), t_sub(tp, t_scale(tp, gO_sum, 1 / M), gO));
    SkTensor *i2 = t_mul(tp, t_scale(tp, t_mul(tp, gOxmu_sum, s3), 1 / M), t_sub(tp, t_scale(tp, ggI_sum, 1 / M), ggI));
    gI = t_add(tp, t_add(tp, i0, i1), i2);
    if (g) gI = t_mul(tp, g, gI);
  }
  if (gg) {
    SkTensor *term = training ? t_add(tp, t_add(tp, t_mul(tp, gO, s1), t_scale(tp, t_mul(tp, s1, gO_sum), -1 / M)),
                                      t_scale(tp, t_mul(tp, xmu_s3, gOxmu_sum), -1 / M))
                              : t_mul(tp, s1, gO);
    gI = t_acc(tp, gI, t_mul(tp, gg, term));
  }
  /* the first backward's input gradient of g (gamma γ, NULL: 1): (γσ⁻¹/M)(M·g - Σg - (x-µ)σ⁻²Σg(x-µ)) */
#define FIRST_BACK(gr, gm)                                                                                    \
  t_mul(tp, t_scale(tp, (gm) ? t_mul(tp, (gm), s1) : s1, 1 / M),                                              \
        t_sub(tp, t_sub(tp, t_scale(tp, (gr), M), t_sumx(tp, (gr), 1)), t_mul(tp, t_mul(tp, xmu, s2), t_sumx(tp, t_mul(tp, (gr), xmu), 1))))
  if (gamma && ggI && mask.data[1])
    gG = training ? t_sumx(tp, t_mul(tp, ggI, FIRST_BACK(gO, (SkTensor *)NULL)), 0) : t_sumx(tp, t_mul(tp, t_mul(tp, ggI, gO), s1), 0);
  if (mask.data[2]) {
    if (ggI) ggO = training ? FIRST_BACK(ggI, g) : (g ? t_mul(tp, t_mul(tp, ggI, s1), g) : t_mul(tp, ggI, s1));
    if (gg) ggO = t_acc(tp, ggO, t_mul(tp, t_mul(tp, gg, xmu), s1));
    if (gb) ggO = t_acc(tp, ggO, t_expand(tp, gb, input->ndim, input->sizes));
  }
#undef FIRST_BACK
  if (!mask.data[0]) gI = NULL;
  return sk_grad_tape_list(tp, out, 3, gI, gG, ggO);
}
/* }==== */

/* {==== group_norm ====
** x̂ = (x - µ)·σ⁻¹ per [N, group] row; the input's gradient is native_layer_norm_backward of
** grad·γ (γ per channel) over the rows, without affine; γ's is Σ grad·x̂ and β's Σ grad over every
** dim but 1. All dispatched ops, so double backward records through layer_norm's. */
int sk_grad_group_norm_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *input, const SkTensor *mean,
                                const SkTensor *rstd, const SkTensor *weight, int64_t N, int64_t C, int64_t HxW, int64_t group,
                                double eps, SkIntList mask) {
  if (mask.n != 3) return sk_error("group_norm_backward: output_mask must have 3 elements");
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  int64_t K = C / group * HxW;
  const int64_t rows[3] = {N, group, K}, st[3] = {N, group, 1};
  int64_t ch[SK_MAX_DIMS], other[SK_MAX_DIMS];
  int no = 0;
  for (int d = 0; d < input->ndim; d++) {
    ch[d] = d == 1 ? C : 1;
    if (d != 1) other[no++] = d;
  }
  SkTensor *gI = NULL, *gW = NULL, *gB = NULL;
  if (mask.data[0]) {
    const SkTensor *g = weight ? t_mul(tp, grad, t_reshape(tp, weight, input->ndim, ch)) : grad;
    SkTensor *x = t_reshape(tp, input, 3, rows), *gr = t_reshape(tp, g, 3, rows);
    SkTensor *mu = t_reshape(tp, mean, 3, st), *rs = t_reshape(tp, rstd, 3, st);
    if (!tp->rc) {
      SkTensor *r0 = NULL, *r1 = NULL, *r2 = NULL;
      int64_t one[3] = {1, 0, 0};
      int rc = sk_native_layer_norm_backward(&r0, &r1, &r2, gr, x, (SkIntList){&K, 1}, mu, rs, NULL, NULL, (SkIntList){one, 3});
      sk_tensor_release(r1), sk_tensor_release(r2);
      gI = sk_tape_keep(tp, rc, r0);
      gI = t_reshape(tp, gI, input->ndim, input->sizes);
    }
  }
  if ((mask.data[1] && weight) || mask.data[2]) {
    if (mask.data[1] && weight) {
      /* x̂ from the saved statistics; recording for a double backward, from native_layer_norm
      ** again, whose derivative sees µ and σ⁻¹ depend on x (PyTorch's GradMode branch) */
      SkTensor *x = t_reshape(tp, input, 3, rows), *xhat = NULL;
      if (!sk_grad_enabled()) {
        xhat = t_mul(tp, t_sub(tp, x, t_reshape(tp, mean, 3, st)), t_reshape(tp, rstd, 3, st));
      } else if (!tp->rc) {
        SkTensor *y = NULL, *m = NULL, *s = NULL;
        int rc = sk_native_layer_norm(&y, &m, &s, x, (SkIntList){&K, 1}, NULL, NULL, eps);
        sk_tensor_release(m), sk_tensor_release(s);
        xhat = sk_tape_keep(tp, rc, y);
      }
      SkTensor *p = t_mul(tp, grad, t_reshape(tp, xhat, input->ndim, input->sizes));
      if (!tp->rc) {
        SkTensor *r = NULL;
        int rc = sk_sum_dim_IntList(&r, p, (SkIntList){other, no}, 0, -1); /* before r is read */
        gW = sk_tape_keep(tp, rc, r);
      }
    }
    if (mask.data[2] && !tp->rc) {
      SkTensor *r = NULL;
      int rc = sk_sum_dim_IntList(&r, grad, (SkIntList){other, no}, 0, -1);
      gB = sk_tape_keep(tp, rc, r);
    }
  }
  return sk_grad_tape_list(tp, out, 3, gI, gW, gB);
}
/* }==== */

/* {==== pooling ====
** max_pool_double_backward (PyTorch's): grad has the input's shape, indices the output's; each
** output element takes grad at its index within its plane: gather over the flattened planes. */
int sk_grad_max_pool_double_backward(SkTensor **out, const SkTensor *grad, const SkTensor *indices, int64_t dim) {
  if (indices->ndim < dim || grad->ndim != indices->ndim)
    return sk_error("max_pool_double_backward: grad and indices must have the same number of dims, at least %lld",
                    (long long)dim);
  int64_t gs[SK_MAX_DIMS], is[SK_MAX_DIMS];
  int lead = grad->ndim - (int)dim;
  for (int i = 0; i < lead; i++) gs[i] = grad->sizes[i], is[i] = indices->sizes[i];
  gs[lead] = sk_numel((int)dim, grad->sizes + lead);
  is[lead] = sk_numel((int)dim, indices->sizes + lead);
  SkTensor *g = NULL, *ix = NULL, *r = NULL;
  int rc = sk_reshape(&g, grad, (SkIntList){gs, lead + 1});
  if (!rc) rc = sk_reshape(&ix, indices, (SkIntList){is, lead + 1});
  if (!rc) rc = sk_gather(&r, g, lead, ix, 0);
  if (!rc) rc = sk_reshape(out, r, (SkIntList){indices->sizes, indices->ndim});
  sk_tensor_release(g);
  sk_tensor_release(ix);
  sk_tensor_release(r);
  return rc;
}

int sk_grad_adaptive_avg_pool_double_backward(SkTensor **out, const SkTensor *grad, const SkTensor *grad_output,
                                              int64_t dim) {
  SkIntList os = {grad_output->sizes + grad_output->ndim - dim, (int)dim};
  return dim == 2 ? sk__adaptive_avg_pool2d(out, grad, os) : sk__adaptive_avg_pool3d(out, grad, os);
}
/* }==== */

/* PyTorch's binary_cross_entropy_target_backward: grad·(log(1 - x) - log(x))·weight (/ numel for
** "mean"); unclamped, so an input of 0 or 1 gives an infinite gradient, as PyTorch's does. */
int sk_grad_binary_cross_entropy_target_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self,
                                                 const SkTensor *target, const SkTensor *weight, const char *reduction) {
  int64_t red = 0;
  if (sk_reduction_of(reduction, &red)) return -1;
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  SkTensor *l1 = SK_TAPE_STEP(tp, sk_log1p(&r, SK_TAPE_STEP(tp, sk_neg(&r, self))));
  SkTensor *g = SK_TAPE_STEP(tp, sk_mul(&r, SK_TAPE_STEP(tp, sk_sub(&r, l1, SK_TAPE_STEP(tp, sk_log(&r, self)), sk_scalar_int(1))), grad));
  if (weight) g = SK_TAPE_STEP(tp, sk_mul(&r, g, weight));
  if (red == SK_REDUCTION_MEAN) g = SK_TAPE_STEP(tp, sk_div_Scalar(&r, g, sk_scalar_int(target->numel)));
  if (!tp->rc) *out = sk_tape_take(tp, g);
  return sk_tape_free(tp);
}

/* {==== index_reduce and scatter_reduce ====
** PyTorch's index_reduce_backward and scatter_reduce_backward (FunctionsManual.cpp) are one
** formula over two ways of addressing: along dim by a 1-d index (index_add, index_select,
** index_reduce, index_fill) or element by element by an index of self's rank (scatter_add,
** gather, scatter_reduce, scatter). {grad_self, grad_source}:
**   sum: grad, and grad at the indices;
**   prod: through self and source with zeros masked to 1 (a lone zero among those scattered
**         to one place gets the product of the others; with several, PyTorch's double
**         backward refuses, this first-order gradient is the same);
**   mean: grad over the count of contributions (self counts one when included);
**   amax/amin: grad shared evenly among the elements equal to the result.
** A position whose self was not included (include_self False) gets no self gradient. */
typedef struct Scat {
  int elementwise; /* 1: scatter/gather, 0: index_* along dim */
  int64_t dim;
  const SkTensor *index;
  const char *reduce;
  int include_self;
} Scat;
static int scat_add(SkTensor **r, const Scat *s, const SkTensor *t, const SkTensor *v) {
  return s->elementwise ? sk_scatter_add(r, t, s->dim, s->index, v) : sk_index_add(r, t, s->dim, s->index, v, sk_scalar_int(1));
}
static int scat_pick(SkTensor **r, const Scat *s, const SkTensor *t) {
  return s->elementwise ? sk_gather(r, t, s->dim, s->index, 0) : sk_index_select(r, t, s->dim, s->index);
}
static int scat_reduce(SkTensor **r, const Scat *s, const SkTensor *t, const SkTensor *v) {
  return s->elementwise ? sk_scatter_reduce_two(r, t, s->dim, s->index, v, s->reduce, s->include_self)
                        : sk_index_reduce(r, t, s->dim, s->index, v, s->reduce, s->include_self);
}
static int scat_zero(SkTensor **r, const Scat *s, const SkTensor *t) {
  return s->elementwise ? sk_scatter_value(r, t, s->dim, s->index, sk_scalar_int(0))
                        : sk_index_fill_int_Scalar(r, t, s->dim, s->index, sk_scalar_int(0));
}

static int reduce_backward(SkTensorList *out, const Scat *s, const SkTensor *grad, const SkTensor *self,
                           const SkTensor *src, const SkTensor *result) {
  SkTape t = {0}, *tp = &t;
  SkTensor *gs = NULL, *gsrc = NULL;
  SkScalar one = sk_scalar_int(1), zero = sk_scalar_int(0);
#define T_(call) SK_TAPE_STEP(tp, call)
  if (!strcmp(s->reduce, "sum")) {
    gs = sk_tape_keep(tp, 0, sk_tensor_retain((SkTensor *)grad));
    gsrc = T_(scat_pick(&r, s, grad));
  } else if (!strcmp(s->reduce, "prod")) {
    SkTensor *mself = T_(sk_masked_fill_Scalar(&r, self, T_(sk_eq_Scalar(&r, self, zero)), one));
    SkTensor *mres = T_(scat_reduce(&r, s, mself, src));
    gs = T_(sk_div(&r, T_(sk_mul(&r, grad, mres)), mself));
    SkTensor *szero = T_(sk_eq_Scalar(&r, src, zero));
    SkTensor *nz = T_(scat_pick(&r, s, T_(scat_add(&r, s, T_(sk_zeros_like(&r, self, -1, -1, NONE_DEVICE, -1, -1)),
                                                    T_(sk_to_dtype(&r, szero, self->dtype, 0, 0, -1))))));
    SkTensor *single = T_(sk_logical_and(&r, szero, T_(sk_eq_Scalar(&r, nz, one))));
    SkTensor *msrc_res = T_(scat_reduce(&r, s, self, T_(sk_masked_fill_Scalar(&r, src, single, one))));
    SkTensor *a = T_(scat_pick(&r, s, T_(sk_mul(&r, grad, msrc_res))));
    SkTensor *b = T_(sk_div(&r, T_(scat_pick(&r, s, T_(sk_mul(&r, grad, result)))),
                            T_(sk_masked_fill_Scalar(&r, src, szero, one))));
    gsrc = T_(sk_where_self(&r, single, a, b));
  } else if (!strcmp(s->reduce, "mean")) {
    SkTensor *n = s->include_self ? T_(sk_ones_like(&r, grad, -1, -1, NONE_DEVICE, -1, -1))
                                  : T_(sk_zeros_like(&r, grad, -1, -1, NONE_DEVICE, -1, -1));
    n = T_(scat_add(&r, s, n, T_(sk_ones_like(&r, src, -1, -1, NONE_DEVICE, -1, -1))));
    n = T_(sk_masked_fill_Scalar(&r, n, T_(sk_eq_Scalar(&r, n, zero)), one));
    gs = T_(sk_div(&r, grad, n));
    gsrc = T_(sk_div(&r, T_(scat_pick(&r, s, grad)), T_(scat_pick(&r, s, n))));
  } else {
    SkTensor *value = T_(scat_pick(&r, s, result));
    SkTensor *self_is = T_(sk_to_dtype(&r, T_(sk_eq(&r, self, result)), self->dtype, 0, 0, -1));
    SkTensor *src_is = T_(sk_to_dtype(&r, T_(sk_eq(&r, src, value)), self->dtype, 0, 0, -1));
    SkTensor *dist = T_(sk_div(&r, grad, T_(scat_add(&r, s, self_is, src_is))));
    gs = T_(sk_mul(&r, self_is, dist));
    gsrc = T_(sk_mul(&r, src_is, T_(scat_pick(&r, s, dist))));
  }
  if (gs && !s->include_self) gs = T_(scat_zero(&r, s, gs));
#undef T_
  return sk_grad_tape_list(tp, out, 2, gs, gsrc, NULL);
}

int sk_grad_index_reduce_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *self, int64_t dim,
                                  const SkTensor *index, const SkTensor *source, const char *reduce, int include_self,
                                  const SkTensor *result) {
  Scat s = {0, dim, index, reduce, include_self};
  return reduce_backward(out, &s, grad, self, source, result);
}

int sk_grad_scatter_reduce_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *self, int64_t dim,
                                    const SkTensor *index, const SkTensor *src, const char *reduce, int include_self,
                                    const SkTensor *result) {
  Scat s = {1, dim, index, reduce, include_self};
  return reduce_backward(out, &s, grad, self, src, result);
}
/* }==== */

/* {==== Reductions and scans of issue 13 ==== */
/* cummax/cummin: grad summed into the positions the indices chose (PyTorch's cummaxmin_backward). */
int sk_grad_cummaxmin_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *indices,
                               int64_t dim) {
  if (self->ndim == 0) { *out = sk_tensor_retain((SkTensor *)grad); return 0; }
  SkTape t = {0}, *tp = &t;
  SkTensor *z = SK_TAPE_STEP(tp, sk_zeros_like(&r, self, (int)grad->dtype, -1, NONE_DEVICE, -1, -1));
  SkTensor *g = SK_TAPE_STEP(tp, sk_scatter_add(&r, z, dim, indices, grad));
  if (g) *out = sk_tape_take(tp, g);
  return sk_tape_free(tp);
}

/* PyTorch's logcumsumexp_backward (after TensorFlow's): the positive and negative parts of
** grad in log space, each through a reversed logcumsumexp, so nothing overflows. */
int sk_grad_logcumsumexp_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result,
                                  int64_t dim) {
  if (grad->ndim == 0 || grad->numel == 0) { *out = sk_tensor_retain((SkTensor *)grad); return 0; }
  SkTape t = {0}, *tp = &t;
#define T_(call) SK_TAPE_STEP(tp, call)
  double lowest = grad->dtype == SK_DTYPE_FLOAT64 ? -1.7976931348623157e308 : -3.4028234663852886e38;
  SkTensor *gmin = sk_tape_number(tp, sk_scalar_float(lowest));
  SkTensor *lg = T_(sk_log(&r, T_(sk_abs(&r, grad))));
  SkTensor *parts[2];
  for (int s = 0; s < 2; s++) {
    SkTensor *pick = s == 0 ? T_(sk_gt_Scalar(&r, grad, sk_scalar_int(0))) : T_(sk_lt_Scalar(&r, grad, sk_scalar_int(0)));
    SkTensor *lp = T_(sk_sub(&r, T_(sk_where_self(&r, pick, lg, gmin)), result, sk_scalar_int(1)));
    SkIntList d1 = {&dim, 1};
    SkTensor *rev = T_(sk_flip(&r, T_(sk_logcumsumexp(&r, T_(sk_flip(&r, lp, d1)), dim)), d1));
    parts[s] = T_(sk_exp(&r, T_(sk_add(&r, rev, self, sk_scalar_int(1)))));
  }
  SkTensor *g = T_(sk_sub(&r, parts[0], parts[1], sk_scalar_int(1)));
#undef T_
  if (g) *out = sk_tape_take(tp, g);
  return sk_tape_free(tp);
}

/* median()/nanmedian(): grad shared evenly among the elements equal to the result (NaN
** results among the NaNs), PyTorch's evenly_distribute_backward. */
int sk_grad_evenly_distribute_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *value) {
  SkTape t = {0}, *tp = &t;
#define T_(call) SK_TAPE_STEP(tp, call)
  SkTensor *both_nan = T_(sk_logical_and(&r, T_(sk_isnan(&r, self)), T_(sk_isnan(&r, value))));
  SkTensor *mask = T_(sk_logical_or(&r, T_(sk_eq(&r, self, value)), both_nan));
  SkTensor *cnt = T_(sk_sum(&r, mask, -1));
  SkTensor *g = T_(sk_mul(&r, T_(sk_to_dtype(&r, mask, grad->dtype, 0, 0, -1)), T_(sk_div(&r, grad, cnt))));
#undef T_
  if (g) *out = sk_tape_take(tp, g);
  return sk_tape_free(tp);
}

/* segment_reduce's gradient (PyTorch's _segment_reduce_backward, through ops): each position
** along axis finds its segment by a search of the segments' ends, then takes
**   sum: grad; mean: grad / length; max/min: grad shared among the elements equal to the
**   result; prod: result / x, or for the one zero of a segment the product of the others.
** Positions outside every segment (offsets starting past 0, unsafe lengths) get zero. */
int sk_grad_segment_reduce_backward(SkTensor **out, const SkTensor *grad, const SkTensor *result, const SkTensor *data,
                                    const char *reduce, const SkTensor *lengths, const SkTensor *offsets, int64_t axis,
                                    SkScalar initial) {
  int64_t ax;
  if (sk_wrap_dim(axis, data->ndim, "axis", &ax)) return -1;
  int64_t n = data->sizes[ax], nseg = result->sizes[ax];
  if (nseg == 0 || n == 0) return sk_zeros_like(out, data, -1, -1, NONE_DEVICE, -1, -1);
  SkTape t = {0}, *tp = &t;
  SkScalar one = sk_scalar_int(1), zero = sk_scalar_int(0);
#define T_(call) SK_TAPE_STEP(tp, call)
  const SkTensor *seg = offsets ? offsets : lengths;
  SkTensor *seg64 = T_(sk_to_dtype(&r, seg, SK_DTYPE_INT64, 0, 0, -1));
  SkTensor *ends, *lens, *first;
  if (offsets) {
    ends = T_(sk_narrow(&r, seg64, ax, 1, nseg));
    lens = T_(sk_sub(&r, ends, T_(sk_narrow(&r, seg64, ax, 0, nseg)), one));
    first = T_(sk_narrow(&r, seg64, ax, 0, 1));
  } else {
    ends = T_(sk_cumsum(&r, seg64, ax, SK_DTYPE_INT64));
    lens = seg64;
    first = T_(sk_zeros_like(&r, T_(sk_narrow(&r, seg64, ax, 0, 1)), -1, -1, NONE_DEVICE, -1, -1));
  }
  SkTensor *last = T_(sk_narrow(&r, ends, ax, nseg - 1, 1));
  /* positions 0..n-1 along the segments' last dim, for every row */
  int64_t shp[SK_MAX_DIMS], full[SK_MAX_DIMS];
  for (int d = 0; d <= ax; d++) shp[d] = d == ax ? n : 1, full[d] = d == ax ? n : seg->sizes[d];
  SkTensor *pos = T_(sk_arange(&r, sk_scalar_int(n), SK_DTYPE_INT64, -1, data->device, -1));
  pos = T_(sk_expand(&r, T_(sk_reshape(&r, pos, (SkIntList){shp, (int)ax + 1})), (SkIntList){full, (int)ax + 1}, 0));
  pos = T_(sk_clone(&r, pos, -1));
  SkTensor *sid = T_(sk_searchsorted(&r, T_(sk_clone(&r, ends, -1)), pos, 0, 1, NULL, NULL));
  SkTensor *valid = T_(sk_logical_and(&r, T_(sk_ge(&r, pos, first)), T_(sk_lt(&r, pos, last))));
  sid = T_(sk_masked_fill_Scalar(&r, sid, T_(sk_logical_not(&r, valid)), zero));
  /* to data's shape: trailing dims of size 1, expanded */
  int64_t vs[SK_MAX_DIMS];
  for (int d = 0; d < data->ndim; d++) vs[d] = d <= ax ? full[d] : 1;
  SkIntList vshape = {vs, data->ndim}, dshape = {data->sizes, data->ndim};
  SkTensor *idx = T_(sk_expand(&r, T_(sk_reshape(&r, sid, vshape)), dshape, 0));
  SkTensor *vf = T_(sk_to_dtype(&r, T_(sk_expand(&r, T_(sk_reshape(&r, valid, vshape)), dshape, 0)), grad->dtype, 0, 0, -1));
  SkTensor *g = NULL;
  if (!strcmp(reduce, "sum")) {
    g = T_(sk_gather(&r, grad, ax, idx, 0));
  } else if (!strcmp(reduce, "mean")) {
    int64_t ls[SK_MAX_DIMS];
    for (int d = 0; d < result->ndim; d++) ls[d] = d <= ax ? result->sizes[d] : 1;
    SkTensor *lf = T_(sk_clamp_min(&r, T_(sk_to_dtype(&r, lens, grad->dtype, 0, 0, -1)), one));
    lf = T_(sk_reshape(&r, lf, (SkIntList){ls, result->ndim}));
    g = T_(sk_gather(&r, T_(sk_div(&r, grad, lf)), ax, idx, 0));
  } else if (!strcmp(reduce, "max") || !strcmp(reduce, "min")) {
    SkTensor *hit = T_(sk_mul(&r, T_(sk_to_dtype(&r, T_(sk_eq(&r, data, T_(sk_gather(&r, result, ax, idx, 0)))), grad->dtype, 0, 0, -1)), vf));
    SkTensor *cnt = T_(sk_scatter_add(&r, T_(sk_zeros_like(&r, grad, -1, -1, NONE_DEVICE, -1, -1)), ax, idx, hit));
    cnt = T_(sk_clamp_min(&r, cnt, one));
    g = T_(sk_mul(&r, hit, T_(sk_gather(&r, T_(sk_div(&r, grad, cnt)), ax, idx, 0))));
  } else {
    SkTensor *isz = T_(sk_logical_and(&r, T_(sk_eq_Scalar(&r, data, zero)), T_(sk_expand(&r, T_(sk_reshape(&r, valid, vshape)), dshape, 0))));
    SkTensor *masked = T_(sk_where_self(&r, T_(sk_logical_or(&r, isz, T_(sk_logical_not(&r, T_(sk_to_dtype(&r, vf, SK_DTYPE_BOOL, 0, 0, -1)))))),
                                        sk_tape_number(tp, one), data));
    SkTensor *others = T_(sk_scatter_reduce_two(&r, T_(sk_ones_like(&r, result, -1, -1, NONE_DEVICE, -1, -1)), ax, idx, masked, "prod", 1));
    if (initial.kind != SK_SCALAR_NONE) others = T_(sk_mul_Scalar(&r, others, initial));
    SkTensor *zf = T_(sk_to_dtype(&r, isz, grad->dtype, 0, 0, -1));
    SkTensor *nz = T_(sk_gather(&r, T_(sk_scatter_add(&r, T_(sk_zeros_like(&r, grad, -1, -1, NONE_DEVICE, -1, -1)), ax, idx, zf)), ax, idx, 0));
    SkTensor *at_zero = T_(sk_where_self(&r, T_(sk_eq_Scalar(&r, nz, one)), T_(sk_gather(&r, T_(sk_mul(&r, grad, others)), ax, idx, 0)),
                                         sk_tape_number(tp, zero)));
    SkTensor *elsewhere = T_(sk_div(&r, T_(sk_gather(&r, T_(sk_mul(&r, grad, result)), ax, idx, 0)), masked));
    g = T_(sk_where_self(&r, isz, at_zero, elsewhere));
  }
  g = T_(sk_mul(&r, g, vf));
#undef T_
  if (g) *out = sk_tape_take(tp, g);
  return sk_tape_free(tp);
}
/* }==== */

/* {==== Pointwise ops of issue 13 (PyTorch's FunctionsManual formulas) ==== */
int sk_grad_xlogy_self_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *other) {
  Tmp tp = {{0}, 0};
  int rc = sk_ne_Scalar(NEXT(&tp), self, sk_scalar_int(0));
  if (!rc) rc = sk_xlogy(NEXT(&tp), tp.t[0], other);
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[1]);
  return finish(&tp, rc, out);
}

int sk_grad_copysign_tensor_self_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self,
                                          const SkTensor *result) {
  Tmp tp = {{0}, 0};
  int rc = sk_div(NEXT(&tp), result, self);
  if (!rc) rc = sk_eq_Scalar(NEXT(&tp), self, sk_scalar_int(0));
  if (!rc) rc = sk_masked_fill_Scalar(NEXT(&tp), tp.t[0], tp.t[1], sk_scalar_int(0));
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[2]);
  return finish(&tp, rc, out);
}

int sk_grad_fmax_fmin_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *other,
                               int is_max, int to_self) {
  Tmp tp = {{0}, 0};
  int rc = is_max ? sk_ge(NEXT(&tp), self, other) : sk_le(NEXT(&tp), self, other);
  if (!rc) rc = sk_isnan(NEXT(&tp), other);
  if (!rc) rc = sk_logical_or(NEXT(&tp), tp.t[0], tp.t[1]); /* self wins */
  if (!rc) rc = sk_grad_where_take(NEXT(&tp), tp.t[2], grad, to_self);
  return finish(&tp, rc, out);
}

int sk_grad_polygamma_backward(SkTensor **out, const SkTensor *grad, int64_t n, const SkTensor *self) {
  if (n == INT64_MAX) return sk_error("polygamma: n + 1 overflows");
  Tmp tp = {{0}, 0};
  int rc = sk_polygamma(NEXT(&tp), n + 1, self);
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[0]);
  return finish(&tp, rc, out);
}

int sk_grad_logit_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkOptDouble eps) {
  Tmp tp = {{0}, 0};
  double lo = eps.has ? eps.v : 0, hi = eps.has ? 1 - eps.v : 1;
  int rc = sk_rsub_Scalar(NEXT(&tp), self, sk_scalar_int(1), sk_scalar_int(1)); /* 0: 1 - x */
  if (!rc) rc = sk_mul(NEXT(&tp), self, tp.t[0]);
  if (!rc) rc = sk_div(NEXT(&tp), grad, tp.t[1]);                                /* 2 */
  if (!rc) rc = sk_lt_Scalar(NEXT(&tp), self, sk_scalar_float(lo));
  if (!rc) rc = sk_gt_Scalar(NEXT(&tp), self, sk_scalar_float(hi));
  if (!rc) rc = sk_logical_or(NEXT(&tp), tp.t[3], tp.t[4]);                       /* 5: outside */
  if (!rc) rc = sk_masked_fill_Scalar(NEXT(&tp), tp.t[2], tp.t[5], sk_scalar_float(eps.has ? 0.0 : NAN));
  return finish(&tp, rc, out);
}

int sk_grad_sinc_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self) {
  Tmp tp = {{0}, 0};
  int rc = sk_mul_Scalar(NEXT(&tp), self, sk_scalar_float(M_PI));   /* 0: pi x */
  if (!rc) rc = sk_cos(NEXT(&tp), tp.t[0]);
  if (!rc) rc = sk_mul(NEXT(&tp), tp.t[0], tp.t[1]);                 /* 2: pi x cos(pi x) */
  if (!rc) rc = sk_sin(NEXT(&tp), tp.t[0]);
  if (!rc) rc = sk_sub(NEXT(&tp), tp.t[2], tp.t[3], sk_scalar_int(1)); /* 4: numerator */
  if (!rc) rc = sk_mul(NEXT(&tp), tp.t[0], self);                    /* 5: pi x^2 */
  if (!rc) rc = sk_div(NEXT(&tp), tp.t[4], tp.t[5]);
  if (!rc) rc = sk_eq_Scalar(NEXT(&tp), self, sk_scalar_int(0));
  if (!rc) rc = sk_masked_fill_Scalar(NEXT(&tp), tp.t[6], tp.t[7], sk_scalar_int(0));
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[8]);
  return finish(&tp, rc, out);
}
/* }==== */

/* {==== i1, i1e (PyTorch's i1_backward / i1e_backward) ====
** i1'(x) = i0(x) - i1(x) / x, 1/2 at 0; i1e'(x) = i0e(x) - i1e(x) (sgn(x) + 1 / x), 1/2 at 0. */
static int i1_common(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result, int scaled) {
  Tmp tp = {{0}, 0};
  int rc = scaled ? sk_special_i0e(NEXT(&tp), self) : sk_i0(NEXT(&tp), self); /* 0 */
  if (!rc) rc = sk_reciprocal(NEXT(&tp), self);                                /* 1: 1 / x */
  if (!rc && scaled) {
    SkTensor *s = NULL;
    rc = sk_sgn(&s, self);
    if (!rc) rc = sk_add_(tp.t[1], s, sk_scalar_int(1));                       /* sgn(x) + 1 / x */
    sk_tensor_release(s);
  }
  if (!rc) rc = sk_mul(NEXT(&tp), result, tp.t[1]);
  if (!rc) rc = sk_sub(NEXT(&tp), tp.t[0], tp.t[2], sk_scalar_int(1));          /* 3 */
  if (!rc) rc = sk_eq_Scalar(NEXT(&tp), self, sk_scalar_int(0));
  if (!rc) rc = sk_masked_fill_Scalar(NEXT(&tp), tp.t[3], tp.t[4], sk_scalar_float(0.5));
  if (!rc) rc = sk_mul(NEXT(&tp), grad, tp.t[5]);
  return finish(&tp, rc, out);
}
int sk_grad_i1_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result) {
  return i1_common(out, grad, self, result, 0);
}
int sk_grad_i1e_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result) {
  return i1_common(out, grad, self, result, 1);
}
/* }==== */

