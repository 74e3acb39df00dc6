/*
** sk_functional.c — torch.nn.functional composites: linear, bilinear, one_hot, pixel_shuffle,
** pixel_unshuffle, scaled_dot_product_attention
** Each is PyTorch's definition over dispatched ops, so it runs on every backend, Meta included,
** and records for autograd through its pieces.
*/
#include "sk_plan.h"
#include "sk_kernels.h"
#include "sk_composite_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T(call) SK_TAPE_STEP(tp, call)
#define TAPE_BEGIN SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape
#define TAPE_END(y)                                     \
  do {                                                  \
    SkTensor *y_ = (y);                                 \
    if (!tp->rc) *result = sk_tape_take(tp, y_);        \
    return sk_tape_free(tp);                            \
  } while (0)
#define LIST(...) ((SkIntList){(const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)})

/* {==== linear and bilinear ==== */
/* y = input·weightᵀ + bias; a 2-d input with a bias is one addmm, as PyTorch's. Another input with a
** bias is a matmul and an add, in opmath (a half type rounds once). */
int sk_math_linear(SkTensor **result, const SkTensor *input, const SkTensor *weight, const SkTensor *bias) {
  TAPE_BEGIN;
  SkTensor *wt = weight->ndim == 2 ? T(sk_t(&r, weight)) : (SkTensor *)weight;
  if (input->ndim == 2 && bias && wt)
    TAPE_END(T(sk_addmm(&r, bias, input, wt, sk_scalar_int(1), sk_scalar_int(1))));
  if (!bias) TAPE_END(T(sk_matmul(&r, input, wt)));
  const SkTensor *ts[3] = {input, weight, bias};
  SkDType dt = sk_result_type(3, ts);
  SkTensor *y = T(sk_matmul(&r, sk_tape_opmath(tp, input, dt), sk_tape_opmath(tp, wt, dt)));
  TAPE_END(sk_tape_round(tp, T(sk_add(&r, y, sk_tape_opmath(tp, bias, dt), sk_scalar_int(1))), dt));
}

/* y[..., k] = Σ_ij x1[..., i]·weight[k, i, j]·x2[..., j] + bias[k]: the batch dims flattened to B,
** x1 (B, I) · weight as (I, K·J) gives (B, K, J), and a bmm with x2 as (B, J, 1) sums over j. In opmath
** (sk_tape_opmath): a half-type bilinear rounds once, not after the mm, the bmm and the bias. */
int sk_math_bilinear(SkTensor **result, const SkTensor *input1, const SkTensor *input2, const SkTensor *weight,
                     const SkTensor *bias) {
  if (input1->ndim != input2->ndim)
    return sk_error("bilinear(): input dimensions do not match: got %d and %d", input1->ndim, input2->ndim);
  if (input1->ndim == 0) return sk_error("bilinear(): argument 'input1' must have at least one dimension");
  for (int d = 0; d < input1->ndim - 1; d++)
    if (input1->sizes[d] != input2->sizes[d])
      return sk_error("bilinear(): input batch dimensions do not match at dim %d: got %lld and %lld", d,
                      (long long)input1->sizes[d], (long long)input2->sizes[d]);
  if (weight->ndim != 3) return sk_error("bilinear(): argument 'weight' must be 3-dimensional, got %d dims", weight->ndim);
  int last = input1->ndim - 1;
  if (input1->sizes[last] != weight->sizes[1])
    return sk_error("bilinear(): input1 size does not match weight size: got %lld but expected %lld",
                    (long long)input1->sizes[last], (long long)weight->sizes[1]);
  if (input2->sizes[last] != weight->sizes[2])
    return sk_error("bilinear(): input2 size does not match weight size: got %lld but expected %lld",
                    (long long)input2->sizes[last], (long long)weight->sizes[2]);
  if (bias && (bias->ndim != 1 || bias->sizes[0] != weight->sizes[0]))
    return sk_error("bilinear(): bias size does not match weight size: got %lld but expected %lld",
                    (long long)(bias->ndim ? bias->sizes[bias->ndim - 1] : 1), (long long)weight->sizes[0]);
  int64_t K = weight->sizes[0], I = weight->sizes[1], J = weight->sizes[2];
  int64_t B = 1, out[SK_MAX_DIMS];
  for (int d = 0; d < last; d++) B *= out[d] = input1->sizes[d]; /* a partial numel of input1: fits */
  out[last] = K;
  const SkTensor *ts[4] = {input1, input2, weight, bias};
  SkDType dt = sk_result_type(bias ? 4 : 3, ts);
  TAPE_BEGIN;
  SkTensor *x1 = sk_tape_opmath(tp, input1, dt), *x2 = sk_tape_opmath(tp, input2, dt);
  SkTensor *w = T(sk_reshape(&r, T(sk_permute(&r, sk_tape_opmath(tp, weight, dt), LIST(1, 0, 2))), LIST(I, K * J)));
  SkTensor *t = T(sk_reshape(&r, T(sk_mm(&r, T(sk_reshape(&r, x1, LIST(B, I))), w)), LIST(B, K, J)));
  SkTensor *y = T(sk_reshape(&r, T(sk_bmm(&r, t, T(sk_reshape(&r, x2, LIST(B, J, 1))))), ((SkIntList){out, last + 1})));
  if (bias) y = T(sk_add(&r, y, sk_tape_opmath(tp, bias, dt), sk_scalar_int(1)));
  TAPE_END(sk_tape_round(tp, y, dt));
}
/* }==== */

/* {==== one_hot ==== */
/* zeros(self.shape + [C]) with 1 at each value, int64. The values are checked (read back);
** a meta tensor has none, so it needs num_classes and is not checked. */
int sk_math_one_hot(SkTensor **result, const SkTensor *self, int64_t num_classes) {
  if (self->dtype != SK_DTYPE_INT64) return sk_error("one_hot is only applicable to index tensor. (argument 'self' has dtype %s, expected int64)", sk_dtype_name(self->dtype));
  if (num_classes < -1) return sk_error("one_hot: num_classes must be -1 (inferred) or at least 0, got %lld", (long long)num_classes);
  if (self->ndim >= SK_MAX_DIMS) return sk_error("one_hot: the result would have %d dimensions, at most %d are supported", self->ndim + 1, SK_MAX_DIMS);
  int meta = sk_values_absent(self); /* then the values are not checked */
  if (num_classes == -1 && meta) return sk_error("one_hot: a meta tensor has no values to infer num_classes from: pass num_classes");
  if (num_classes == -1 && self->numel == 0) return sk_error("Can not infer total number of classes from empty tensor.");
  if (!meta && self->numel) {
    SkTensor *lo = NULL, *hi = NULL;
    int64_t vlo = 0, vhi = 0;
    int rc = sk_min(&lo, self);
    if (!rc) rc = sk_max(&hi, self);
    if (!rc) rc = sk_host_int(lo, "one_hot", "self", &vlo);
    if (!rc) rc = sk_host_int(hi, "one_hot", "self", &vhi);
    sk_tensor_release(lo);
    sk_tensor_release(hi);
    if (rc) return -1;
    if (vlo < 0) return sk_error("Class values must be non-negative.");
    if (num_classes == -1) num_classes = vhi + 1;
    else if (vhi >= num_classes) return sk_error("Class values must be smaller than num_classes.");
  }
  int64_t sizes[SK_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  sizes[self->ndim] = num_classes;
  TAPE_BEGIN;
  SkTensor *z = T(sk_new_zeros(&r, self, ((SkIntList){sizes, self->ndim + 1}), -1, -1, sk_device(-1, 0), -1));
  if (z && self->numel) z = T(sk_scatter_value(&r, z, self->ndim, T(sk_unsqueeze(&r, self, self->ndim)), sk_scalar_int(1)));
  TAPE_END(z);
}
/* }==== */

/* {==== pixel_shuffle and pixel_unshuffle ==== */
/* (*, C·r², H, W) -> (*, C, H·r, W·r): split C into (C, r, r), interleave with H and W */
static int shuffle(SkTensor **result, const SkTensor *self, int64_t f, int down) {
  const char *op = down ? "pixel_unshuffle" : "pixel_shuffle";
  if (self->ndim < 3)
    return sk_error("%s expects input to have at least 3 dimensions, but got input with %d dimension(s)", op, self->ndim);
  if (f <= 0) return sk_error("%s expects a positive %s, but got %lld", op, down ? "downscale_factor" : "upscale_factor", (long long)f);
  int n = self->ndim, b = n - 3;
  int64_t c = self->sizes[n - 3], h = self->sizes[n - 2], w = self->sizes[n - 1];
  if (f > 3037000499LL) return sk_error("%s: factor %lld is too large", op, (long long)f); /* f² fits */
  if (!down && c % (f * f))
    return sk_error("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                    "upscale_factor, but input.size(-3)=%lld is not divisible by %lld", (long long)c, (long long)(f * f));
  if (down && h % f)
    return sk_error("pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=%lld is "
                    "not divisible by %lld", (long long)h, (long long)f);
  if (down && w % f)
    return sk_error("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=%lld is "
                    "not divisible by %lld", (long long)w, (long long)f);
  if (b + 5 > SK_MAX_DIMS) return sk_error("%s: the input has too many batch dims (%d, at most %d)", op, b, SK_MAX_DIMS - 5);
  int64_t split[SK_MAX_DIMS], perm[SK_MAX_DIMS], out[SK_MAX_DIMS];
  for (int d = 0; d < b; d++) split[d] = out[d] = self->sizes[d], perm[d] = d;
  if (!down) { /* (C', r, r, H, W) -> (C', H, r, W, r) */
    int64_t s[5] = {c / (f * f), f, f, h, w}, p[5] = {0, 3, 1, 4, 2}, o[3] = {c / (f * f), h * f, w * f};
    for (int i = 0; i < 5; i++) split[b + i] = s[i], perm[b + i] = b + p[i];
    for (int i = 0; i < 3; i++) out[b + i] = o[i];
  } else { /* (C, H', r, W', r) -> (C, r, r, H', W') */
    int64_t s[5] = {c, h / f, f, w / f, f}, p[5] = {0, 2, 4, 1, 3}, o[3] = {c * f * f, h / f, w / f};
    for (int i = 0; i < 5; i++) split[b + i] = s[i], perm[b + i] = b + p[i];
    for (int i = 0; i < 3; i++) out[b + i] = o[i];
  }
  if (down && c > INT64_MAX / f / f) return sk_error("pixel_unshuffle: the output channel count overflows");
  TAPE_BEGIN;
  SkTensor *v = T(sk_permute(&r, T(sk_reshape(&r, self, ((SkIntList){split, b + 5}))), ((SkIntList){perm, b + 5})));
  TAPE_END(T(sk_reshape(&r, v, ((SkIntList){out, b + 3}))));
}
int sk_math_pixel_shuffle(SkTensor **result, const SkTensor *self, int64_t upscale_factor) {
  return shuffle(result, self, upscale_factor, 0);
}
int sk_math_pixel_unshuffle(SkTensor **result, const SkTensor *self, int64_t downscale_factor) {
  return shuffle(result, self, downscale_factor, 1);
}
/* }==== */

/* {==== scaled_dot_product_attention ==== */
/* softmax(q·kᵀ·scale + mask)·v over (..., L, E), (..., S, E), (..., S, Ev). A bool mask keeps
** the True positions (the others get -inf), a float mask is added; is_causal keeps j <= i.
** scale defaults to 1/√E. A row with every position masked gives NaN, as PyTorch's. In opmath
** (sk_tape_opmath): half-type q, k, v round once, at the end. */
int sk_math_scaled_dot_product_attention(SkTensor **result, const SkTensor *query, const SkTensor *key,
                                         const SkTensor *value, const SkTensor *attn_mask, double dropout_p,
                                         int is_causal, SkOptDouble scale) {
  const char *op = "scaled_dot_product_attention";
  if (query->ndim < 2 || key->ndim < 2 || value->ndim < 2)
    return sk_error("%s: query, key and value must have at least 2 dims (got %d, %d and %d)", op, query->ndim, key->ndim,
                    value->ndim);
  int64_t L = query->sizes[query->ndim - 2], E = query->sizes[query->ndim - 1], S = key->sizes[key->ndim - 2];
  if (key->sizes[key->ndim - 1] != E)
    return sk_error("%s: the last dim of key (%lld) must match the last dim of query (%lld)", op,
                    (long long)key->sizes[key->ndim - 1], (long long)E);
  if (value->sizes[value->ndim - 2] != S)
    return sk_error("%s: value's sequence dim (size %lld, dim -2) must match key's (%lld)", op,
                    (long long)value->sizes[value->ndim - 2], (long long)S);
  if (attn_mask && is_causal) return sk_error("%s: Explicit attn_mask should not be set when is_causal=True", op);
  if (dropout_p < 0 || dropout_p > 1) return sk_error("%s: dropout_p must be in [0, 1], got %g", op, dropout_p);
  if (attn_mask && attn_mask->dtype != SK_DTYPE_BOOL && attn_mask->dtype != query->dtype)
    return sk_error("%s: attn_mask must be bool or of query's dtype (%s), got %s", op, sk_dtype_name(query->dtype),
                    sk_dtype_name(attn_mask->dtype));
  double s = scale.has ? scale.v : 1 / sqrt((double)(E > 0 ? E : 1));
  const SkTensor *qkv[3] = {query, key, value};
  SkDType dt = sk_result_type(3, qkv);
  TAPE_BEGIN;
  SkTensor *q = sk_tape_opmath(tp, query, dt), *k = sk_tape_opmath(tp, key, dt);
  SkTensor *att = T(sk_mul_Scalar(&r, T(sk_matmul(&r, q, T(sk_transpose_int(&r, k, -2, -1)))), sk_scalar_float(s)));
  SkTensor *keep = NULL;
  if (is_causal) {
    SkTensor *ones = T(sk_ones(&r, LIST(L, S), SK_DTYPE_BOOL, -1, query->device, -1));
    keep = T(sk_tril(&r, ones, 0));
  } else if (attn_mask && attn_mask->dtype == SK_DTYPE_BOOL) {
    keep = (SkTensor *)attn_mask;
  } else if (attn_mask) {
    att = T(sk_add(&r, att, sk_tape_opmath(tp, attn_mask, dt), sk_scalar_int(1)));
  }
  if (keep) att = T(sk_masked_fill_Scalar(&r, att, T(sk_logical_not(&r, keep)), sk_scalar_float(-INFINITY)));
  att = T(sk_softmax_int(&r, att, -1, -1));
  if (dropout_p > 0) att = T(sk_dropout(&r, att, dropout_p, 1));
  TAPE_END(sk_tape_round(tp, T(sk_matmul(&r, att, sk_tape_opmath(tp, value, dt))), dt));
}
/* }==== */

/* {==== embedding_bag ==== */
/* Bags of rows of weight: bag b is indices[offsets[b] : offsets[b+1]] (the last runs to the end,
** or include_last_offset makes the last offset the end), reduced by mode 0 sum (each row times
** its per_sample_weight), 1 mean, 2 max; rows at padding_idx are left out, an empty bag is 0.
** Results (output, offset2bag, bag_size, max_indices): max_indices are the weight rows each max
** came from (0 for an empty bag, as PyTorch's CPU kernel), and empty outside max mode. */
int sk_math_embedding_bag_padding_idx(SkTensor **output, SkTensor **offset2bag, SkTensor **bag_size,
                                      SkTensor **max_indices, const SkTensor *weight, const SkTensor *indices,
                                      const SkTensor *offsets, int scale_grad_by_freq, int64_t mode, int sparse,
                                      const SkTensor *per_sample_weights, int include_last_offset, SkOptInt padding_idx) {
  (void)scale_grad_by_freq, (void)sparse;
  const char *op = "embedding_bag";
  if (mode < 0 || mode > 2) return sk_error("%s: mode must be 0 (sum), 1 (mean) or 2 (max), got %lld", op, (long long)mode);
  if (weight->ndim != 2) return sk_error("%s: 'weight' must be 2-D (argument 'weight' is %dD)", op, weight->ndim);
  for (int i = 0; i < 2; i++) {
    const SkTensor *t = i ? offsets : indices;
    if (t->dtype != SK_DTYPE_INT64 && t->dtype != SK_DTYPE_INT32)
      return sk_error("Expected tensor for argument #%d '%s' to have one of the following scalar types: Long, Int; but got "
                      "%s instead (while checking arguments for embedding_bag)", i + 1, i ? "offsets" : "indices",
                      sk_dtype_name(t->dtype));
    if (t->ndim != 1) return sk_error("%s: argument '%s' must be 1-D, got %d dims", op, i ? "offsets" : "indices", t->ndim);
  }
  if (per_sample_weights) {
    if (mode != 0) return sk_error("embedding_bag: per_sample_weights only supported with mode='sum'");
    if (per_sample_weights->ndim != 1 || per_sample_weights->numel != indices->numel)
      return sk_error("%s: per_sample_weights must be 1-D with one weight per index (%lld), got shape of %lld elements", op,
                      (long long)indices->numel, (long long)per_sample_weights->numel);
    if (per_sample_weights->dtype != weight->dtype)
      return sk_error("%s: per_sample_weights (%s) must have weight's dtype (%s)", op, sk_dtype_name(per_sample_weights->dtype),
                      sk_dtype_name(weight->dtype));
  }
  int64_t rows = weight->sizes[0], dim = weight->sizes[1], n = indices->numel, pad = -1;
  if (padding_idx.has) {
    pad = padding_idx.v < 0 ? padding_idx.v + rows : padding_idx.v;
    if (pad < 0 || pad >= rows)
      return sk_error("%s: padding_idx must be within the number of embeddings (%lld), got %lld", op, (long long)rows,
                      (long long)padding_idx.v);
  }
  int64_t nb = offsets->numel - (include_last_offset && offsets->numel ? 1 : 0);
  int64_t *off = sk_host_ints(offsets, "embedding_bag", "offsets"), *idx = NULL, *bag = NULL, *cnt = NULL;
  if (!off) return -1;
  int rc = 0;
  if (offsets->numel && off[0] != 0)
    rc = sk_error("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, "
                  "got %lld", (long long)off[0]);
  for (int64_t b = 1; !rc && b < offsets->numel; b++)
    if (off[b] < off[b - 1])
      rc = sk_error("%s: offsets must be non-decreasing, but offsets[%lld] = %lld is less than offsets[%lld] = %lld", op,
                    (long long)b, (long long)off[b], (long long)(b - 1), (long long)off[b - 1]);
  if (!rc && offsets->numel && off[offsets->numel - 1] > n)
    rc = sk_error("offsets[-1] can not be greater than input's length %lld but got offsets[-1] of %lld", (long long)n,
                  (long long)off[offsets->numel - 1]);
  if (!rc) { /* idx: the values (range-checked), bag: each position's bag, cnt: each bag's kept rows */
    idx = sk_host_ints(indices, "embedding_bag", "indices");
    bag = malloc(sizeof(int64_t) * (size_t)(n + 1));
    cnt = calloc((size_t)(nb + 1), sizeof(int64_t));
    if (!idx) rc = -1;
    else if (!bag || !cnt) rc = sk_error("%s: out of memory", op);
  }
  for (int64_t b = 0; !rc && b < nb; b++) {
    int64_t e = b + 1 < offsets->numel ? off[b + 1] : n;
    for (int64_t i = off[b]; i < e; i++) bag[i] = b, cnt[b] += idx[i] != pad;
  }
  for (int64_t i = 0; !rc && i < n; i++) {
    if (idx[i] < 0 || idx[i] >= rows)
      rc = sk_error("%s: index %lld is out of range for weight of %lld rows (argument 'indices', position %lld)", op,
                    (long long)idx[i], (long long)rows, (long long)i);
  }
  /* the positions past the last offset belong to no bag under include_last_offset: dropped */
  int64_t used = !nb ? 0 : include_last_offset ? off[offsets->numel - 1] : n;
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  if (rc) sk_tape_keep(tp, -1, NULL);
  SkDevice dev = weight->device;
  SkTensor *out = NULL, *maxi = NULL;
  if (!tp->rc && mode == 2) {
    /* The kept rows (not padding, inside a bag) at once: each bag's max by scatter_reduce amax,
    ** then for each bag and column the first kept row equal to it (NaN to a NaN max) by
    ** scatter_reduce amin over positions (k, one past them, stands for none and picks row 0, what
    ** an empty bag reports). The output is weight gathered at those rows (0 for an empty bag),
    ** so its gradient reaches the chosen row only, as PyTorch's. */
    int64_t k = 0, *kr = malloc(sizeof(int64_t) * (size_t)(used + 1)), *kb = malloc(sizeof(int64_t) * (size_t)(used + 1));
    if (!kr || !kb) sk_tape_keep(tp, sk_error("%s: out of memory", op), NULL);
    for (int64_t i = 0; !tp->rc && i < used; i++)
      if (idx[i] != pad) kr[k] = idx[i], kb[k++] = bag[i];
    int64_t bd[2] = {nb, dim}, kd[2] = {k, dim}, kn = k, flat = -1;
    out = T(sk_new_zeros(&r, weight, ((SkIntList){bd, 2}), -1, -1, sk_device(-1, 0), -1));
    maxi = T(sk_zeros(&r, ((SkIntList){bd, 2}), SK_DTYPE_INT64, -1, dev, -1));
    if (!tp->rc && k && nb) {
      kr[k] = 0;
      SkTensor *krows = sk_tape_host_tensor(tp, kr, k + 1, SK_DTYPE_INT64, -1, dev);
      SkTensor *g = T(sk_index_select(&r, weight, 0, T(sk_narrow(&r, krows, 0, 0, k))));
      SkTensor *where = T(sk_expand(&r, T(sk_unsqueeze(&r, sk_tape_host_tensor(tp, kb, k, SK_DTYPE_INT64, -1, dev), 1)),
                                    ((SkIntList){kd, 2}), 0));
      SkTensor *best = T(sk_gather(&r, T(sk_scatter_reduce_two(&r, out, 0, where, g, "amax", 0)), 0, where, 0));
      SkTensor *hit = T(sk_logical_or(&r, T(sk_eq(&r, g, best)),
                                      T(sk_logical_and(&r, T(sk_isnan(&r, g)), T(sk_isnan(&r, best))))));
      SkTensor *pos = T(sk_expand(&r, T(sk_unsqueeze(&r, T(sk_arange(&r, sk_scalar_int(k), SK_DTYPE_INT64, -1, dev, -1)), 1)),
                                  ((SkIntList){kd, 2}), 0));
      pos = T(sk_where_self(&r, hit, pos, sk_tape_number(tp, sk_scalar_int(kn))));
      SkTensor *first = T(sk_scatter_reduce_two(&r, T(sk_full(&r, ((SkIntList){bd, 2}), sk_scalar_int(kn), SK_DTYPE_INT64, -1, dev, -1)),
                                                0, where, pos, "amin", 1));
      maxi = T(sk_view(&r, T(sk_index_select(&r, krows, 0, T(sk_reshape(&r, first, ((SkIntList){&flat, 1}))))), ((SkIntList){bd, 2})));
      SkTensor *filled = T(sk_unsqueeze(&r, T(sk_gt_Scalar(&r, sk_tape_host_tensor(tp, cnt, nb, SK_DTYPE_INT64, -1, dev),
                                                           sk_scalar_int(0))), 1));
      out = T(sk_where_self(&r, filled, T(sk_gather(&r, weight, 0, maxi, 0)), sk_tape_number(tp, sk_scalar_int(0))));
    }
    free(kr), free(kb);
  } else if (!tp->rc) {
    /* sum or mean: every row scaled (0 at padding), scatter-added into its bag; in the opmath
    ** type (a half-type weight's rows are summed in float32 and rounded once at the end) */
    SkDType dt = weight->dtype, ot = sk_opmath_dtype(dt);
    SkTensor *ind = T(sk_narrow(&r, indices, 0, 0, used));
    SkTensor *g = T(sk_index_select(&r, sk_tape_opmath(tp, weight, dt), 0, ind));
    SkTensor *w = per_sample_weights ? T(sk_narrow(&r, sk_tape_opmath(tp, per_sample_weights, dt), 0, 0, used)) : NULL;
    if (pad >= 0) {
      SkTensor *keep = T(sk_to_dtype(&r, T(sk_ne_Scalar(&r, ind, sk_scalar_int(pad))), ot, 0, 0, -1));
      w = w ? T(sk_mul(&r, w, keep)) : keep;
    }
    if (w) g = T(sk_mul(&r, g, T(sk_unsqueeze(&r, w, 1))));
    int64_t bd[2] = {nb, dim}, ud[2] = {used, dim};
    SkTensor *where = T(sk_expand(&r, T(sk_unsqueeze(&r, sk_tape_host_tensor(tp, bag, used, SK_DTYPE_INT64, -1, dev), 1)), ((SkIntList){ud, 2}), 0));
    out = T(sk_scatter_add(&r, T(sk_new_zeros(&r, weight, ((SkIntList){bd, 2}), ot, -1, sk_device(-1, 0), -1)), 0, where, g));
    if (mode == 1) {
      double *inv = malloc(sizeof(double) * (size_t)(nb + 1));
      if (!inv) sk_tape_keep(tp, sk_error("%s: out of memory", op), NULL);
      for (int64_t b = 0; inv && b < nb; b++) inv[b] = cnt[b] ? 1.0 / (double)cnt[b] : 0;
      if (inv && !tp->rc) {
        SkTensor *s = sk_tape_host_tensor(tp, inv, nb, SK_DTYPE_FLOAT64, ot, dev);
        out = T(sk_mul(&r, out, T(sk_unsqueeze(&r, s, 1))));
      }
      free(inv);
    }
    out = sk_tape_round(tp, out, dt);
    int64_t zero = 0;
    maxi = T(sk_zeros(&r, ((SkIntList){&zero, 1}), SK_DTYPE_INT64, -1, dev, -1));
  }
  SkTensor *o2b = sk_tape_host_tensor(tp, bag, used, SK_DTYPE_INT64, -1, dev), *bs = sk_tape_host_tensor(tp, cnt, nb, SK_DTYPE_INT64, -1, dev);
  free(off), free(idx), free(bag), free(cnt);
  if (!tp->rc) {
    *output = sk_tape_take(tp, out);
    *offset2bag = sk_tape_take(tp, o2b);
    *bag_size = sk_tape_take(tp, bs);
    *max_indices = sk_tape_take(tp, maxi);
  }
  return sk_tape_free(tp);
}

int sk_math_embedding_bag(SkTensor **output, SkTensor **offset2bag, SkTensor **bag_size, SkTensor **max_indices,
                          const SkTensor *weight, const SkTensor *indices, const SkTensor *offsets, int scale_grad_by_freq,
                          int64_t mode, int sparse, const SkTensor *per_sample_weights, int include_last_offset) {
  return sk_math_embedding_bag_padding_idx(output, offset2bag, bag_size, max_indices, weight, indices, offsets,
                                           scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
                                           (SkOptInt){0, 0});
}
/* }==== */
