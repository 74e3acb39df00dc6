/*
** sk_products.c — products and block matrices as composites
** kron, inner, tensordot, addbmm, addr, vdot, cross / linalg_cross, block_diag,
** max.other / min.other, and their out= and in-place forms.
** PyTorch's definitions over mm, addmm, outer, dot, mul, roll and views, so each runs
** on every backend (Meta included) and autograd records its pieces. An out= variant
** computes the functional result and writes it (SK_OUT_FROM); an in-place one copies it
** into self.
*/
#include "sk_kernels.h"
#include "sk_composite_util.h"
#include "sk_checked.h"

#include <string.h>

#define T(call) SK_TAPE_STEP(tp, call)

/* {==== kron ==== */
/* self viewed as [a0, 1, a1, 1, ...] times other as [1, b0, 1, b1, ...] (both padded to the
** larger ndim with leading 1s), then the pairs merged: [a0·b0, a1·b1, ...] */
int sk_math_kron(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  int nd = self->ndim > other->ndim ? self->ndim : other->ndim;
  if (2 * nd > SK_MAX_DIMS) return sk_error("kron: inputs of %d dimensions are not supported (at most %d)", nd, SK_MAX_DIMS / 2);
  int64_t as[SK_MAX_DIMS], bs[SK_MAX_DIMS], rs[SK_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - self->ndim), ib = i - (nd - other->ndim);
    int64_t a = ia >= 0 ? self->sizes[ia] : 1, b = ib >= 0 ? other->sizes[ib] : 1;
    as[2 * i] = a, as[2 * i + 1] = 1;
    bs[2 * i] = 1, bs[2 * i + 1] = b;
    if (sk_mul_overflow(a, b, &rs[i])) return sk_error("kron: the result's size at dimension %d overflows", i);
  }
  SkTape t = {0}, *tp = &t;
  SkTensor *p = T(sk_mul(&r, T(sk_reshape(&r, self, (SkIntList){as, 2 * nd})), T(sk_reshape(&r, other, (SkIntList){bs, 2 * nd}))));
  return sk_tape_result(tp, T(sk_reshape(&r, p, (SkIntList){rs, nd})), result);
}

int sk_math_kron_out(const SkTensor *self, const SkTensor *other, SkTensor *out) { SK_OUT_FROM(sk_kron(&r, self, other), out, SK_READS(self, other)); }
/* }==== */

/* {==== tensordot, inner, vdot ==== */
/* self's free dims then its contracted ones, as a matrix [P, K]; other's contracted then free,
** [K, Q]; mm; the free sizes back. A contracted pair of sizes n and 1 sums the n side first
** (PyTorch's). */
int sk_math_tensordot(SkTensor **result, const SkTensor *self, const SkTensor *other, SkIntList dims_self,
                      SkIntList dims_other) {
  if (dims_self.n != dims_other.n) return sk_error("both dimension lists should have same length");
  int used_a[SK_MAX_DIMS] = {0}, used_b[SK_MAX_DIMS] = {0};
  int64_t da[SK_MAX_DIMS], db[SK_MAX_DIMS], sum_a[SK_MAX_DIMS], sum_b[SK_MAX_DIMS];
  int nsa = 0, nsb = 0;
  for (int i = 0; i < dims_self.n; i++) {
    int64_t a, b;
    if (sk_wrap_dim(dims_self.data[i], self->ndim, "dims_self", &a) || sk_wrap_dim(dims_other.data[i], other->ndim, "dims_other", &b))
      return -1;
    if (used_a[a]) return sk_error("tensordot: dim %lld appears multiple times in the list of dims (argument 'dims_self')", (long long)a);
    if (used_b[b]) return sk_error("tensordot: dim %lld appears multiple times in the list of dims (argument 'dims_other')", (long long)b);
    used_a[a] = used_b[b] = 1;
    int64_t sa = self->ndim ? self->sizes[a] : 1, sb = other->ndim ? other->sizes[b] : 1;
    if (sa != sb) {
      if (sb == 1) sum_a[nsa++] = a;
      else if (sa == 1) sum_b[nsb++] = b;
      else return sk_error("contracted dimensions need to match, but first has size %lld in dim %lld and second has size "
                           "%lld in dim %lld", (long long)sa, (long long)dims_self.data[i], (long long)sb,
                           (long long)dims_other.data[i]);
    }
    da[i] = a, db[i] = b;
  }
  SkTape t = {0}, *tp = &t;
  const SkTensor *x = self, *y = other;
  if (nsa) x = T(sk_sum_dim_IntList(&r, self, (SkIntList){sum_a, nsa}, 1, -1));
  if (nsb) y = T(sk_sum_dim_IntList(&r, other, (SkIntList){sum_b, nsb}, 1, -1));
  if (!x || !y) return sk_tape_free(tp);
  int64_t pa[SK_MAX_DIMS], pb[SK_MAX_DIMS], rs[2 * SK_MAX_DIMS];
  int na = 0, nb = 0, nr = 0, k = dims_self.n;
  int64_t P = 1, K = 1, Q = 1;
  for (int d = 0; d < x->ndim; d++)
    if (!used_a[d]) { pa[na++] = d; rs[nr++] = x->sizes[d]; P *= x->sizes[d]; }
  for (int i = 0; i < k; i++) { pa[na++] = da[i]; K *= x->sizes[da[i]]; }
  for (int i = 0; i < k; i++) pb[nb++] = db[i];
  for (int d = 0; d < y->ndim; d++)
    if (!used_b[d]) { pb[nb++] = d; rs[nr++] = y->sizes[d]; Q *= y->sizes[d]; }
  if (nr > SK_MAX_DIMS) { sk_tape_free(tp); return sk_error("tensordot: the result would have %d dimensions, at most %d are supported", nr, SK_MAX_DIMS); }
  int64_t ma[2] = {P, K}, mb[2] = {K, Q};
  SkTensor *xa = x->ndim ? T(sk_permute(&r, x, (SkIntList){pa, na})) : (SkTensor *)x;
  SkTensor *yb = y->ndim ? T(sk_permute(&r, y, (SkIntList){pb, nb})) : (SkTensor *)y;
  SkTensor *m = T(sk_mm(&r, T(sk_reshape(&r, xa, (SkIntList){ma, 2})), T(sk_reshape(&r, yb, (SkIntList){mb, 2}))));
  return sk_tape_result(tp, T(sk_reshape(&r, m, (SkIntList){rs, nr})), result);
}

int sk_math_tensordot_out(const SkTensor *self, const SkTensor *other, SkIntList dims_self, SkIntList dims_other, SkTensor *out) {
  SK_OUT_FROM(sk_tensordot(&r, self, other, dims_self, dims_other), out, SK_READS(self, other));
}

int sk_math_inner(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  char a[128], b[128];
  if (self->ndim == 0 || other->ndim == 0) return sk_mul(result, self, other);
  if (self->sizes[self->ndim - 1] != other->sizes[other->ndim - 1])
    return sk_error("inner() the last dimension must match on both input tensors but got shapes %s and %s",
                    sk_shape_str(self->ndim, self->sizes, a, sizeof a), sk_shape_str(other->ndim, other->sizes, b, sizeof b));
  int64_t last = -1;
  return sk_tensordot(result, self, other, (SkIntList){&last, 1}, (SkIntList){&last, 1});
}

int sk_math_inner_out(const SkTensor *self, const SkTensor *other, SkTensor *out) { SK_OUT_FROM(sk_inner(&r, self, other), out, SK_READS(self, other)); }

/* real dtypes only in sk: vdot is dot (no conjugate to take) */
int sk_math_vdot(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  if (self->ndim != 1 || other->ndim != 1)
    return sk_error("1D tensors expected, but got %dD and %dD tensors", self->ndim, other->ndim);
  return sk_dot(result, self, other);
}

int sk_math_vdot_out(const SkTensor *self, const SkTensor *other, SkTensor *out) { SK_OUT_FROM(sk_vdot(&r, self, other), out, SK_READS(self, other)); }
/* }==== */

/* {==== addbmm, addr ==== */
/* Σ_b batch1[b] @ batch2[b] as one mm: batch1 as [n, b·k] (batch next to k), batch2 as [b·k, p] */
int sk_math_addbmm(SkTensor **result, const SkTensor *self, const SkTensor *batch1, const SkTensor *batch2, SkScalar beta,
                   SkScalar alpha) {
  if (batch1->ndim != 3) return sk_error("batch1 must be a 3D tensor");
  if (batch2->ndim != 3) return sk_error("batch2 must be a 3D tensor");
  if (batch1->sizes[0] != batch2->sizes[0])
    return sk_error("batch1 and batch2 must have same number of batches, got %lld and %lld", (long long)batch1->sizes[0],
                    (long long)batch2->sizes[0]);
  if (batch1->sizes[2] != batch2->sizes[1])
    return sk_error("Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)", (long long)batch1->sizes[1],
                    (long long)batch1->sizes[2], (long long)batch2->sizes[1], (long long)batch2->sizes[2]);
  int64_t b = batch1->sizes[0], n = batch1->sizes[1], k = batch1->sizes[2], p = batch2->sizes[2];
  int64_t perm[3] = {1, 0, 2}, s1[2] = {n, b * k}, s2[2] = {b * k, p};
  SkTape t = {0}, *tp = &t;
  SkTensor *m1 = T(sk_reshape(&r, T(sk_permute(&r, batch1, (SkIntList){perm, 3})), (SkIntList){s1, 2}));
  SkTensor *m2 = T(sk_reshape(&r, batch2, (SkIntList){s2, 2}));
  return sk_tape_result(tp, T(sk_addmm(&r, self, m1, m2, beta, alpha)), result);
}

int sk_math_addbmm_(SkTensor *self, const SkTensor *batch1, const SkTensor *batch2, SkScalar beta, SkScalar alpha) {
  SK_INPLACE_FROM(sk_addbmm(&r, self, batch1, batch2, beta, alpha), self);
}

int sk_math_addbmm_out(const SkTensor *self, const SkTensor *batch1, const SkTensor *batch2, SkScalar beta, SkScalar alpha,
                       SkTensor *out) {
  SK_OUT_FROM(sk_addbmm(&r, self, batch1, batch2, beta, alpha), out, SK_READS(self, batch1, batch2));
}

static int is_one(SkScalar s) { return sk_scalar_to_double(s) == 1.0; }
static int is_zero(SkScalar s) { return sk_scalar_to_double(s) == 0.0; }

/* beta·self + alpha·outer(vec1, vec2), self broadcast to [n, m]; beta 0 ignores self (its NaNs too).
** All bool: PyTorch's logical form, (beta && self) || (alpha && vec1[i] && vec2[j]), a bool result.
** In opmath (sk_tape_opmath): a half-type addr rounds once. */
int sk_math_addr(SkTensor **result, const SkTensor *self, const SkTensor *vec1, const SkTensor *vec2, SkScalar beta,
                 SkScalar alpha) {
  if (vec1->ndim != 1) return sk_error("addr: Expected 1-D argument vec1, but got %d-D", vec1->ndim);
  if (vec2->ndim != 1) return sk_error("addr: Expected 1-D argument vec2, but got %d-D", vec2->ndim);
  const SkTensor *ts[3] = {self, vec1, vec2};
  SkDType dt = sk_result_type(3, ts);
  if (!sk_dtype_is_floating(dt) && (alpha.kind == SK_SCALAR_FLOAT || beta.kind == SK_SCALAR_FLOAT))
    return sk_error("For integral input tensors, argument %s must not be a floating point number.",
                    beta.kind == SK_SCALAR_FLOAT ? "beta" : "alpha");
  int64_t shape[2] = {vec1->sizes[0], vec2->sizes[0]};
  SkTape t = {0}, *tp = &t;
  SkTensor *o = T(sk_outer(&r, sk_tape_opmath(tp, vec1, dt), sk_tape_opmath(tp, vec2, dt)));
  SkTensor *e = T(sk_expand(&r, sk_tape_opmath(tp, self, dt), (SkIntList){shape, 2}, 0));
  if (dt == SK_DTYPE_BOOL) {
    SkTensor *b = T(sk_mul_Scalar(&r, e, sk_scalar_bool(!is_zero(beta))));
    SkTensor *a = T(sk_mul_Scalar(&r, o, sk_scalar_bool(!is_zero(alpha))));
    return sk_tape_result(tp, T(sk_logical_or(&r, b, a)), result);
  }
  if (!is_one(alpha)) o = T(sk_mul_Scalar(&r, o, alpha));
  if (is_zero(beta)) return sk_tape_result(tp, T(sk_to_dtype(&r, o, dt, 0, 0, -1)), result);
  if (!is_one(beta)) e = T(sk_mul_Scalar(&r, e, beta));
  return sk_tape_result(tp, sk_tape_round(tp, T(sk_add(&r, e, o, sk_scalar_int(1))), dt), result);
}

int sk_math_addr_(SkTensor *self, const SkTensor *vec1, const SkTensor *vec2, SkScalar beta, SkScalar alpha) {
  SK_INPLACE_FROM(sk_addr(&r, self, vec1, vec2, beta, alpha), self);
}

int sk_math_addr_out(const SkTensor *self, const SkTensor *vec1, const SkTensor *vec2, SkScalar beta, SkScalar alpha,
                     SkTensor *out) {
  SK_OUT_FROM(sk_addr(&r, self, vec1, vec2, beta, alpha), out, SK_READS(self, vec1, vec2));
}
/* }==== */

/* {==== cross, linalg_cross ==== */
/* component i of a × b is a[i+1]·b[i+2] - a[i+2]·b[i+1]: rolls by -1 and -2 along dim */
int sk_math_linalg_cross(SkTensor **result, const SkTensor *self, const SkTensor *other, int64_t dim) {
  if (self->ndim != other->ndim) return sk_error("linalg.cross: inputs must have the same number of dimensions.");
  if (self->dtype != other->dtype)
    return sk_error("linalg.cross: expected both inputs to have the same dtype, but got %s and %s", sk_dtype_name(self->dtype),
                    sk_dtype_name(other->dtype));
  int64_t d;
  if (sk_wrap_dim(dim, self->ndim, "dim", &d)) return -1;
  int64_t na = self->ndim ? self->sizes[d] : 1, nb = other->ndim ? other->sizes[d] : 1;
  if (na != 3 || nb != 3)
    return sk_error("linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld", (long long)dim, (long long)na,
                    (long long)nb);
  int64_t m1 = -1, m2 = -2;
  SkIntList s1 = {&m1, 1}, s2 = {&m2, 1}, dl = {&d, 1};
  SkTape t = {0}, *tp = &t; /* in opmath: a half-type a·b - c·d rounds once */
  SkTensor *a = sk_tape_opmath(tp, self, self->dtype), *b = sk_tape_opmath(tp, other, self->dtype);
  SkTensor *p = T(sk_mul(&r, T(sk_roll(&r, a, s1, dl)), T(sk_roll(&r, b, s2, dl))));
  SkTensor *q = T(sk_mul(&r, T(sk_roll(&r, a, s2, dl)), T(sk_roll(&r, b, s1, dl))));
  return sk_tape_result(tp, sk_tape_round(tp, T(sk_sub(&r, p, q, sk_scalar_int(1))), self->dtype), result);
}

int sk_math_linalg_cross_out(const SkTensor *self, const SkTensor *other, int64_t dim, SkTensor *out) {
  SK_OUT_FROM(sk_linalg_cross(&r, self, other, dim), out, SK_READS(self, other));
}

/* dim None: PyTorch 1.13 takes self's first dim of size 3 (and warns that this is deprecated;
** sk does not warn) */
int sk_math_cross(SkTensor **result, const SkTensor *self, const SkTensor *other, SkOptInt dim) {
  if (dim.has) return sk_linalg_cross(result, self, other, dim.v);
  for (int d = 0; d < self->ndim; d++)
    if (self->sizes[d] == 3) return sk_linalg_cross(result, self, other, d);
  return sk_error("no dimension of size 3 in input");
}

int sk_math_cross_out(const SkTensor *self, const SkTensor *other, SkOptInt dim, SkTensor *out) {
  SK_OUT_FROM(sk_cross(&r, self, other, dim), out, SK_READS(self, other));
}
/* }==== */

/* {==== block_diag ==== */
/* zeros [Σ rows, Σ cols] of the promoted dtype, each input copied into its block (a 0-d
** input is [1, 1], a 1-d one a row) */
int sk_math_block_diag(SkTensor **result, SkTensorList tensors) {
  int64_t rows = 0, cols = 0;
  for (int i = 0; i < tensors.n; i++) {
    const SkTensor *t = tensors.data[i];
    if (!t) return sk_error("block_diag: argument 'tensors' has no tensor at position %d", i);
    if (t->ndim > 2)
      return sk_error("torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %d has %d dimensions", i, t->ndim);
    if (!sk_device_eq(t->device, tensors.data[0]->device))
      return sk_error("torch.block_diag: input tensors must all be on the same device (argument 'tensors' at position %d)", i);
    int64_t r = t->ndim == 2 ? t->sizes[0] : 1, c = t->ndim == 2 ? t->sizes[1] : t->ndim == 1 ? t->sizes[0] : 1;
    if (sk_add_overflow(rows, r, &rows) || sk_add_overflow(cols, c, &cols)) return sk_error("block_diag: the result is too large");
  }
  if (tensors.n == 0) {
    int64_t s[2] = {1, 0};
    return sk_empty_memory_format(result, (SkIntList){s, 2}, -1, -1, (SkDevice){-1, 0}, -1, -1);
  }
  SkDType dt = sk_result_type(tensors.n, (const SkTensor *const *)tensors.data);
  int64_t s[2] = {rows, cols}, r0 = 0, c0 = 0;
  SkTensor *z = NULL;
  if (sk_zeros(&z, (SkIntList){s, 2}, (int)dt, -1, tensors.data[0]->device, -1)) return -1;
  int rc = 0;
  for (int i = 0; i < tensors.n && !rc; i++) { /* each block's views released before the next */
    const SkTensor *x = tensors.data[i];
    int64_t two[2] = {x->ndim == 2 ? x->sizes[0] : 1, x->ndim == 2 ? x->sizes[1] : x->ndim == 1 ? x->sizes[0] : 1};
    SkTensor *m = NULL, *rows_v = NULL, *block = NULL;
    rc = sk_reshape(&m, x, (SkIntList){two, 2});
    if (!rc) rc = sk_narrow(&rows_v, z, 0, r0, two[0]);
    if (!rc) rc = sk_narrow(&block, rows_v, 1, c0, two[1]);
    if (!rc) rc = sk_copy_(block, m, 0);
    sk_tensor_release(m), sk_tensor_release(rows_v), sk_tensor_release(block);
    r0 += two[0], c0 += two[1];
  }
  if (rc) { sk_tensor_release(z); return -1; }
  *result = z;
  return 0;
}
/* }==== */

/* {==== max.other, min.other and their out variants ==== */
int sk_math_max_other(SkTensor **result, const SkTensor *self, const SkTensor *other) { return sk_maximum(result, self, other); }
int sk_math_min_other(SkTensor **result, const SkTensor *self, const SkTensor *other) { return sk_minimum(result, self, other); }
int sk_math_max_other_out(const SkTensor *self, const SkTensor *other, SkTensor *out) { return sk_maximum_out(self, other, out); }
int sk_math_min_other_out(const SkTensor *self, const SkTensor *other, SkTensor *out) { return sk_minimum_out(self, other, out); }
/* }==== */
