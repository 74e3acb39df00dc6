/*
** sk_shapes.c — PyTorch's composite shape ops
** diag_embed, diagflat, movedim/moveaxis, broadcast_to/broadcast_tensors, meshgrid,
** cartesian_prod, combinations, expand_as/view_as/reshape_as, ravel, sum_to_size,
** atleast_1d/2d/3d, hstack/vstack/row_stack/dstack/column_stack, tensor_split,
** hsplit/vsplit/dsplit, rot90, fliplr/flipud, select/slice/diagonal_scatter,
** narrow_copy.
** Each is PyTorch's CompositeImplicitAutograd definition over dispatched ops (views,
** cat, flip, index_select, copy_ into a view of a clone), so it runs on every backend,
** Meta included, and autograd records its pieces. Splits return views.
** Ownership: arguments are borrowed; a Tensor[] result is a malloc'ed array of owned
** references, handed over only on success.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_checked.h"
#include "sk_error.h"
#include "sk_composite_util.h"

#include <stdlib.h>
#include <string.h>

static int check_present(SkTensorList l, const char *op) {
  for (int i = 0; i < l.n; i++)
    if (!l.data[i]) return sk_error("%s: argument 'tensors' has no tensor at position %d", op, i);
  return 0;
}

typedef int (*MapFn)(SkTensor **result, const SkTensor *t);
/* f applied to every tensor of the list: a list of results */
static int list_map(SkTensorList *result, SkTensorList l, MapFn f, const char *op) {
  if (check_present(l, op)) return -1;
  SkTensor **a = sk_list_new(l.n, op);
  if (!a) return -1;
  int rc = 0;
  for (int i = 0; i < l.n && !rc; i++) rc = f(&a[i], l.data[i]);
  return sk_list_done(result, a, l.n, rc);
}

static const char *list_str(SkIntList l, char *buf, size_t n) {
  static const int64_t none[1] = {0};
  return sk_shape_str(l.n, l.data ? l.data : none, buf, n);
}
/* }==== */

/* {==== Diagonals ==== */
/* zeros of the result's shape (the two new dims of length |offset| + self's last size),
** self copied into its diagonal */
int sk_math_diag_embed(SkTensor **result, const SkTensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t d1, d2, sizes[SK_MAX_DIMS];
  int nd = self->ndim + 1;
  if (self->ndim == 0) return sk_error("diag_embed: argument 'self' must have at least one dimension");
  if (nd > SK_MAX_DIMS) return sk_error("diag_embed: the result would have %d dimensions, at most %d are supported", nd, SK_MAX_DIMS);
  if (sk_wrap_dim(dim1, nd, "dim1", &d1) || sk_wrap_dim(dim2, nd, "dim2", &d2)) return -1;
  if (d1 == d2) return sk_error("diagonal dimensions cannot be identical %lld, %lld", (long long)dim1, (long long)dim2);
  int64_t len, mag = offset == INT64_MIN ? -1 : offset < 0 ? -offset : offset;
  if (mag < 0 || sk_add_overflow(self->sizes[self->ndim - 1], mag, &len))
    return sk_error("diag_embed: the result size %lld + |%lld| overflows (argument 'offset')",
                    (long long)self->sizes[self->ndim - 1], (long long)offset);
  for (int i = 0, k = 0; i < nd; i++) sizes[i] = (i == d1 || i == d2) ? len : self->sizes[k++];
  SkTensor *z = NULL, *diag = NULL;
  int rc = sk_zeros(&z, (SkIntList){sizes, nd}, (int)self->dtype, -1, self->device, -1);
  if (!rc) rc = sk_diagonal(&diag, z, offset, d1, d2);
  if (!rc) rc = sk_copy_(diag, self, 0);
  sk_tensor_release(diag);
  if (rc) { sk_tensor_release(z); return -1; }
  *result = z;
  return 0;
}

int sk_math_diagflat(SkTensor **result, const SkTensor *self, int64_t offset) {
  int64_t all = -1;
  SkTensor *flat = NULL;
  if (sk_reshape(&flat, self, (SkIntList){&all, 1})) return -1;
  int rc = sk_diag(result, flat, offset);
  sk_tensor_release(flat);
  return rc;
}
/* }==== */

/* {==== movedim, moveaxis ==== */
int sk_math_movedim_intlist(SkTensor **result, const SkTensor *self, SkIntList source, SkIntList destination) {
  char a[256], b[256];
  int nd = self->ndim;
  if (source.n != destination.n)
    return sk_error("movedim: Invalid source or destination dims: source (%s dims) should contain the same number of "
                    "dims as destination (%s dims)", list_str(source, a, sizeof a), list_str(destination, b, sizeof b));
  /* wrapped dims lie in [0, max(nd, 1)), so a list longer than that repeats one before
  ** its SK_MAX_DIMS-th entry: only that many are kept */
  int64_t order[SK_MAX_DIMS], src[SK_MAX_DIMS], dst[SK_MAX_DIMS], w;
  int src_used[SK_MAX_DIMS] = {0}, dst_used[SK_MAX_DIMS] = {0}, src_rep = 0, dst_rep = 0;
  for (int i = 0; i < source.n; i++) {
    if (sk_wrap_dim(source.data[i], nd, "source", &w)) return -1;
    src_rep |= src_used[w], src_used[w] = 1;
    if (i < SK_MAX_DIMS) src[i] = w;
  }
  for (int i = 0; i < destination.n; i++) {
    if (sk_wrap_dim(destination.data[i], nd, "destination", &w)) return -1;
    dst_rep |= dst_used[w], dst_used[w] = 1;
    if (i < SK_MAX_DIMS) dst[i] = w;
  }
  if (src_rep) return sk_error("movedim: repeated dim in `source` (%s)", list_str(source, a, sizeof a));
  if (dst_rep) return sk_error("movedim: repeated dim in `destination` (%s)", list_str(destination, a, sizeof a));
  if (nd == 0) return sk_permute(result, self, (SkIntList){order, 0});
  for (int i = 0; i < nd; i++) order[i] = -1;
  for (int i = 0; i < source.n; i++) order[dst[i]] = src[i];
  /* the dims not moved keep their relative order in the free slots */
  for (int i = 0, s = 0; i < nd; i++) {
    if (order[i] >= 0) continue;
    while (src_used[s]) s++;
    order[i] = s++;
  }
  return sk_permute(result, self, (SkIntList){order, nd});
}

int sk_math_movedim_int(SkTensor **result, const SkTensor *self, int64_t source, int64_t destination) {
  return sk_movedim_intlist(result, self, (SkIntList){&source, 1}, (SkIntList){&destination, 1});
}

int sk_math_moveaxis_intlist(SkTensor **result, const SkTensor *self, SkIntList source, SkIntList destination) {
  return sk_movedim_intlist(result, self, source, destination);
}

int sk_math_moveaxis_int(SkTensor **result, const SkTensor *self, int64_t source, int64_t destination) {
  return sk_movedim_intlist(result, self, (SkIntList){&source, 1}, (SkIntList){&destination, 1});
}
/* }==== */

/* {==== Broadcasting ==== */
int sk_math_broadcast_to(SkTensor **result, const SkTensor *self, SkIntList size) {
  return sk_expand(result, self, size, 0);
}

/* PyTorch's infer_size over a list: the broadcast shape, or its error */
static int broadcast_shape(SkTensorList l, int *nd, int64_t *shape) {
  *nd = 0;
  for (int i = 0; i < l.n; i++) {
    const SkTensor *t = l.data[i];
    int n = t->ndim > *nd ? t->ndim : *nd;
    int64_t out[SK_MAX_DIMS];
    for (int k = 0; k < n; k++) {
      int ka = k - (n - *nd), kb = k - (n - t->ndim);
      int64_t a = ka >= 0 ? shape[ka] : 1, b = kb >= 0 ? t->sizes[kb] : 1;
      if (a != b && a != 1 && b != 1)
        return sk_error("The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                        (long long)a, (long long)b, k);
      out[k] = a == 1 ? b : a;
    }
    memcpy(shape, out, (size_t)n * sizeof *out);
    *nd = n;
  }
  return 0;
}

int sk_math_broadcast_tensors(SkTensorList *result, SkTensorList tensors) {
  int64_t shape[SK_MAX_DIMS];
  int nd;
  if (check_present(tensors, "broadcast_tensors") || broadcast_shape(tensors, &nd, shape)) return -1;
  SkTensor **a = sk_list_new(tensors.n, "broadcast_tensors");
  if (!a) return -1;
  int rc = 0;
  for (int i = 0; i < tensors.n && !rc; i++) rc = sk_expand(&a[i], tensors.data[i], (SkIntList){shape, nd}, 0);
  return sk_list_done(result, a, tensors.n, rc);
}

int sk_math_expand_as(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  return sk_expand(result, self, (SkIntList){other->sizes, other->ndim}, 0);
}

int sk_math_view_as(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  return sk_view(result, self, (SkIntList){other->sizes, other->ndim});
}

int sk_math_reshape_as(SkTensor **result, const SkTensor *self, const SkTensor *other) {
  return sk_reshape(result, self, (SkIntList){other->sizes, other->ndim});
}

/* contiguous().view(-1): a view of a contiguous self, else a copy (PyTorch's) */
int sk_math_ravel(SkTensor **result, const SkTensor *self) {
  int64_t all = -1;
  SkTensor *c = NULL;
  if (sk_contiguous(&c, self, 0)) return -1;
  int rc = sk_view(result, c, (SkIntList){&all, 1});
  sk_tensor_release(c);
  return rc;
}

/* PyTorch's sum_to: the leading dims summed away, a dim of size 1 in `size` summed (kept) */
int sk_math_sum_to_size(SkTensor **result, const SkTensor *self, SkIntList size) {
  char a[256], b[256];
  int lead = self->ndim - size.n;
  int ok = lead >= 0;
  for (int i = 0; ok && i < size.n; i++) ok = size.data[i] == 1 || size.data[i] == self->sizes[lead + i];
  if (!ok)
    return sk_error("size {%s} is not expandable to size {%s}.", list_str(size, a, sizeof a),
                    sk_shape_str(self->ndim, self->sizes, b, sizeof b));
  int64_t dims[SK_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < lead; i++) dims[n++] = i;
  for (int i = 0; i < size.n; i++)
    if (size.data[i] == 1 && self->sizes[lead + i] != 1) dims[n++] = lead + i;
  if (n == 0) { *result = sk_tensor_retain((SkTensor *)self); return 0; }
  SkTensor *s = NULL;
  if (sk_sum_dim_IntList(&s, self, (SkIntList){dims, n}, 1, -1)) return -1;
  int rc = sk_view(result, s, size);
  sk_tensor_release(s);
  return rc;
}
/* }==== */

/* {==== meshgrid, cartesian_prod, combinations ==== */
static int meshgrid_ij(SkTensorList *result, SkTensorList tensors) {
  int64_t shape[SK_MAX_DIMS];
  if (check_present(tensors, "meshgrid")) return -1;
  if (tensors.n == 0) return sk_error("meshgrid expects a non-empty TensorList");
  if (tensors.n > SK_MAX_DIMS)
    return sk_error("meshgrid: %d tensors would give %d-dim results, at most %d dims are supported", tensors.n, tensors.n,
                    SK_MAX_DIMS);
  for (int i = 0; i < tensors.n; i++) {
    const SkTensor *t = tensors.data[i];
    if (t->ndim > 1)
      return sk_error("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a %dD tensor at position %d",
                      t->ndim, i);
    if (t->dtype != tensors.data[0]->dtype) return sk_error("meshgrid expects all tensors to have the same dtype");
    if (!sk_device_eq(t->device, tensors.data[0]->device))
      return sk_error("meshgrid expects all tensors to have the same device");
    shape[i] = t->numel;
  }
  SkTensor **a = sk_list_new(tensors.n, "meshgrid");
  if (!a) return -1;
  int rc = 0;
  for (int i = 0; i < tensors.n && !rc; i++) {
    int64_t vs[SK_MAX_DIMS];
    for (int k = 0; k < tensors.n; k++) vs[k] = k == i ? -1 : 1;
    SkTensor *v = NULL;
    rc = sk_view(&v, tensors.data[i], (SkIntList){vs, tensors.n});
    if (!rc) rc = sk_expand(&a[i], v, (SkIntList){shape, tensors.n}, 0);
    sk_tensor_release(v);
  }
  return sk_list_done(result, a, tensors.n, rc);
}

int sk_math_meshgrid_indexing(SkTensorList *result, SkTensorList tensors, const char *indexing) {
  if (!indexing || (strcmp(indexing, "xy") && strcmp(indexing, "ij")))
    return sk_error("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s", indexing ? indexing : "None");
  if (strcmp(indexing, "xy") || tensors.n < 2) return meshgrid_ij(result, tensors);
  /* xy: the first two inputs swap places, and so do the first two results */
  if (check_present(tensors, "meshgrid")) return -1;
  SkTensor **swapped = sk_list_new(tensors.n, "meshgrid");
  if (!swapped) return -1;
  memcpy(swapped, tensors.data, (size_t)tensors.n * sizeof *swapped);
  swapped[0] = tensors.data[1], swapped[1] = tensors.data[0];
  int rc = meshgrid_ij(result, (SkTensorList){swapped, tensors.n});
  free(swapped);
  if (rc) return -1;
  SkTensor *t = result->data[0];
  ((SkTensor **)result->data)[0] = result->data[1];
  ((SkTensor **)result->data)[1] = t;
  return 0;
}

/* PyTorch 1.13 warns that indexing will be required, and uses "ij" */
int sk_math_meshgrid(SkTensorList *result, SkTensorList tensors) { return meshgrid_ij(result, tensors); }

static int check_vector(const SkTensor *t) {
  char a[128];
  if (t->ndim != 1) return sk_error("Expect a 1D vector, but got shape %s", sk_shape_str(t->ndim, t->sizes, a, sizeof a));
  return 0;
}

int sk_math_cartesian_prod(SkTensor **result, SkTensorList tensors) {
  if (check_present(tensors, "cartesian_prod")) return -1;
  for (int i = 0; i < tensors.n; i++)
    if (check_vector(tensors.data[i])) return -1;
  if (tensors.n == 1) { *result = sk_tensor_retain(tensors.data[0]); return 0; }
  SkTensorList grids = {NULL, 0};
  if (meshgrid_ij(&grids, tensors)) return -1;
  SkTensor **flat = sk_list_new(grids.n, "cartesian_prod");
  int rc = flat ? 0 : -1;
  int64_t all = -1;
  for (int i = 0; i < grids.n && !rc; i++) rc = sk_reshape(&flat[i], grids.data[i], (SkIntList){&all, 1});
  if (!rc) rc = sk_stack(result, (SkTensorList){flat, grids.n}, 1);
  sk_list_free(flat, grids.n);
  sk_list_free((SkTensor **)grids.data, grids.n);
  return rc;
}

/* Rows of indices i1 < i2 < ... < ir (<= with replacement) in lexicographic order, the
** order of PyTorch's masked meshgrid; the elements come through index_select, so the
** result has a shape on Meta too. */
int sk_math_combinations(SkTensor **result, const SkTensor *self, int64_t r, int with_replacement) {
  if (check_vector(self)) return -1;
  if (r < 0) return sk_error("Expect a non-negative number, but got %lld", (long long)r);
  if (r == 0) return sk_new_empty(result, self, (SkIntList){(int64_t[]){0}, 1}, -1, -1, (SkDevice){-1, 0}, -1);
  if (r > INT32_MAX) return sk_error("combinations: the result would have more than %d rows", INT32_MAX);
  int64_t n = self->sizes[0], count = 0;
  /* count rows: C(n, r) or C(n + r - 1, r), refused past 2^31 rows */
  if (n > 0 && (with_replacement || r <= n)) {
    int64_t top = with_replacement ? n + r - 1 : n;
    double c = 1;
    for (int64_t k = 1; k <= r && c <= (double)INT32_MAX; k++) c = c * (double)(top - r + k) / (double)k;
    if (c > (double)INT32_MAX || r > INT32_MAX)
      return sk_error("combinations: the result would have more than %d rows", INT32_MAX);
    count = (int64_t)(c + 0.5);
  }
  int64_t sizes[2] = {count, r}, total;
  if (sk_mul_overflow(count, r, &total)) return sk_error("combinations: the result is too large");
  SkTensor *idx = sk_tensor_empty(1, &total, SK_DTYPE_INT64, SK_CPU);
  if (!idx) return -1;
  int64_t *p = sk_tensor_data(idx), *cur = malloc((size_t)(r ? r : 1) * sizeof *cur);
  if (!cur) { sk_tensor_release(idx); return sk_error("out of memory"); }
  for (int64_t k = 0; k < r; k++) cur[k] = with_replacement ? 0 : k;
  for (int64_t row = 0; row < count; row++) {
    memcpy(p + row * r, cur, (size_t)r * sizeof *cur);
    int64_t k = r - 1; /* the last position that can still grow */
    while (k >= 0 && cur[k] >= (with_replacement ? n - 1 : n - r + k)) k--;
    if (k < 0) break;
    cur[k]++;
    for (int64_t j = k + 1; j < r; j++) cur[j] = with_replacement ? cur[k] : cur[j - 1] + 1;
  }
  free(cur);
  SkTensor *picked = NULL, *on = NULL;
  int rc = sk_to_device(&on, idx, self->device, -1, 0, 0, -1);
  sk_tensor_release(idx);
  if (!rc) rc = sk_index_select(&picked, self, 0, on);
  sk_tensor_release(on);
  if (!rc) rc = sk_view(result, picked, (SkIntList){sizes, 2});
  sk_tensor_release(picked);
  return rc;
}
/* }==== */

/* {==== atleast_Nd and the stacks ==== */
static int atleast(SkTensor **result, const SkTensor *self, int n) {
  static const int64_t ones[3] = {1, 1, 1};
  if (self->ndim == 0) return sk_reshape(result, self, (SkIntList){ones, n});
  if (self->ndim == 1 && n >= 2) {
    if (n == 2) return sk_unsqueeze(result, self, 0);
    SkTensor *u = NULL;
    if (sk_unsqueeze(&u, self, 0)) return -1;
    int rc = sk_unsqueeze(result, u, -1);
    sk_tensor_release(u);
    return rc;
  }
  if (self->ndim == 2 && n == 3) return sk_unsqueeze(result, self, -1);
  *result = sk_tensor_retain((SkTensor *)self);
  return 0;
}
static int atleast1(SkTensor **r, const SkTensor *t) { return atleast(r, t, 1); }
static int atleast2(SkTensor **r, const SkTensor *t) { return atleast(r, t, 2); }
static int atleast3(SkTensor **r, const SkTensor *t) { return atleast(r, t, 3); }

int sk_math_atleast_1d(SkTensor **result, const SkTensor *self) { return atleast(result, self, 1); }
int sk_math_atleast_2d(SkTensor **result, const SkTensor *self) { return atleast(result, self, 2); }
int sk_math_atleast_3d(SkTensor **result, const SkTensor *self) { return atleast(result, self, 3); }
int sk_math_atleast_1d_Sequence(SkTensorList *result, SkTensorList tensors) {
  return list_map(result, tensors, atleast1, "atleast_1d");
}
int sk_math_atleast_2d_Sequence(SkTensorList *result, SkTensorList tensors) {
  return list_map(result, tensors, atleast2, "atleast_2d");
}
int sk_math_atleast_3d_Sequence(SkTensorList *result, SkTensorList tensors) {
  return list_map(result, tensors, atleast3, "atleast_3d");
}

/* column_stack's rule: a 0-d or 1-d tensor becomes a column [numel, 1] */
static int as_column(SkTensor **result, const SkTensor *t) {
  if (t->ndim > 1) { *result = sk_tensor_retain((SkTensor *)t); return 0; }
  int64_t s[2] = {t->numel, 1};
  return sk_reshape(result, t, (SkIntList){s, 2});
}

/* The stacks: each tensor mapped, then cat along a dim (hstack: 0 when the first mapped is 1-d) */
typedef enum { STACK_H, STACK_V, STACK_D, STACK_COLUMN } StackKind;
static int stack_kind(SkTensor **result, SkTensor *out, SkTensorList tensors, StackKind kind, const char *op) {
  static const MapFn maps[] = {atleast1, atleast2, atleast3, as_column};
  if (tensors.n == 0) return sk_error("%s expects a non-empty TensorList", op);
  SkTensorList m = {NULL, 0};
  if (list_map(&m, tensors, maps[kind], op)) return -1;
  int64_t dim = kind == STACK_V ? 0 : kind == STACK_D ? 2 : (kind == STACK_H && m.data[0]->ndim == 1) ? 0 : 1;
  int rc = out ? sk_cat_out(m, dim, out) : sk_cat(result, m, dim);
  sk_list_free((SkTensor **)m.data, m.n);
  return rc;
}

int sk_math_hstack(SkTensor **result, SkTensorList tensors) { return stack_kind(result, NULL, tensors, STACK_H, "hstack"); }
int sk_math_hstack_out(SkTensorList tensors, SkTensor *out) { return stack_kind(NULL, out, tensors, STACK_H, "hstack"); }
int sk_math_vstack(SkTensor **result, SkTensorList tensors) { return stack_kind(result, NULL, tensors, STACK_V, "vstack"); }
int sk_math_vstack_out(SkTensorList tensors, SkTensor *out) { return stack_kind(NULL, out, tensors, STACK_V, "vstack"); }
int sk_math_row_stack(SkTensor **result, SkTensorList tensors) { return stack_kind(result, NULL, tensors, STACK_V, "vstack"); }
int sk_math_row_stack_out(SkTensorList tensors, SkTensor *out) { return stack_kind(NULL, out, tensors, STACK_V, "vstack"); }
int sk_math_dstack(SkTensor **result, SkTensorList tensors) { return stack_kind(result, NULL, tensors, STACK_D, "dstack"); }
int sk_math_dstack_out(SkTensorList tensors, SkTensor *out) { return stack_kind(NULL, out, tensors, STACK_D, "dstack"); }
int sk_math_column_stack(SkTensor **result, SkTensorList tensors) {
  return stack_kind(result, NULL, tensors, STACK_COLUMN, "column_stack");
}
int sk_math_column_stack_out(SkTensorList tensors, SkTensor *out) {
  return stack_kind(NULL, out, tensors, STACK_COLUMN, "column_stack");
}
/* }==== */

/* {==== tensor_split, hsplit, vsplit, dsplit ==== */
static int split_dim(const SkTensor *self, int64_t dim, int64_t *d) {
  if (self->ndim == 0)
    return sk_error("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  return sk_wrap_dim(dim, self->ndim, "dim", d);
}

int sk_math_tensor_split_sections(SkTensorList *result, const SkTensor *self, int64_t sections, int64_t dim) {
  int64_t d;
  if (split_dim(self, dim, &d)) return -1;
  if (sections <= 0) return sk_error("number of sections must be larger than 0, got %lld", (long long)sections);
  int64_t size = self->sizes[d], base = size / sections, extra = size % sections;
  SkTensor **a = sk_list_new(sections, "tensor_split");
  if (!a) return -1;
  int rc = 0;
  for (int64_t i = 0, start = 0; i < sections && !rc; i++) {
    int64_t len = base + (i < extra);
    rc = sk_narrow(&a[i], self, d, start, len);
    start += len;
  }
  return sk_list_done(result, a, (int)sections, rc);
}

/* slices [0, i0), [i0, i1), ..., [ik, end) with slice's clamping (an index past the end gives empties) */
int sk_math_tensor_split_indices(SkTensorList *result, const SkTensor *self, SkIntList indices, int64_t dim) {
  int64_t d;
  if (split_dim(self, dim, &d)) return -1;
  SkTensor **a = sk_list_new((int64_t)indices.n + 1, "tensor_split");
  if (!a) return -1;
  int rc = 0;
  SkOptInt start = {1, 0};
  for (int i = 0; i <= indices.n && !rc; i++) {
    SkOptInt end = i < indices.n ? (SkOptInt){1, indices.data[i]} : (SkOptInt){0, 0};
    rc = sk_slice(&a[i], self, d, start, end, 1);
    start = end;
  }
  return sk_list_done(result, a, indices.n + 1, rc);
}

int sk_math_tensor_split_tensor_indices_or_sections(SkTensorList *result, const SkTensor *self,
                                                     const SkTensor *tensor_indices_or_sections, int64_t dim) {
  const SkTensor *t = tensor_indices_or_sections;
  char dev[32];
  if (t->device.type != SK_DEVICE_CPU) {
    sk_device_format(t->device, dev, sizeof dev);
    return sk_error("tensor_split expected tensor_indices_or_sections to be on cpu, but it's on %s", dev);
  }
  if (t->dtype != SK_DTYPE_INT64)
    return sk_error("tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s",
                    sk_dtype_name(t->dtype));
  if (t->ndim > 1)
    return sk_error("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
                    "tensor, but got a tensor with %d dims", t->ndim);
  const int64_t *p = sk_tensor_data(t);
  if (t->ndim == 0) return sk_tensor_split_sections(result, self, p[0], dim);
  if (t->numel > INT32_MAX) return sk_error("tensor_split: %lld indices are too many", (long long)t->numel);
  int64_t *v = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *v);
  if (!v) return sk_error("out of memory");
  for (int64_t i = 0; i < t->numel; i++) v[i] = p[i * t->strides[0]];
  int rc = sk_tensor_split_indices(result, self, (SkIntList){v, (int)t->numel}, dim);
  free(v);
  return rc;
}

/* hsplit (dim 1, or 0 of a 1-d tensor), vsplit (0), dsplit (2): at least `need` dims, and
** `sections` must divide the dim */
static int xsplit_dim(const SkTensor *self, const char *op, int need, int64_t dim, int64_t *d) {
  *d = dim;
  if (self->ndim < need)
    return sk_error("torch.%s requires a tensor with at least %d dimension, but got a tensor with %d dimensions!", op, need,
                    self->ndim);
  *d = dim;
  return 0;
}

static int xsplit_int(SkTensorList *result, const SkTensor *self, int64_t sections, const char *op, int need, int64_t dim) {
  int64_t d;
  if (xsplit_dim(self, op, need, dim, &d)) return -1;
  if (sections > 0 && self->sizes[d] % sections != 0)
    return sk_error("torch.%s attempted to split along dimension %lld, but the size of the dimension %lld is not "
                    "divisible by the split_size %lld!", op, (long long)d, (long long)self->sizes[d], (long long)sections);
  return sk_tensor_split_sections(result, self, sections, d);
}

static int xsplit_array(SkTensorList *result, const SkTensor *self, SkIntList indices, const char *op, int need, int64_t dim) {
  int64_t d;
  if (xsplit_dim(self, op, need, dim, &d)) return -1;
  return sk_tensor_split_indices(result, self, indices, d);
}

int sk_math_hsplit_int(SkTensorList *result, const SkTensor *self, int64_t sections) {
  return xsplit_int(result, self, sections, "hsplit", 1, self->ndim == 1 ? 0 : 1);
}
int sk_math_hsplit_array(SkTensorList *result, const SkTensor *self, SkIntList indices) {
  return xsplit_array(result, self, indices, "hsplit", 1, self->ndim == 1 ? 0 : 1);
}
int sk_math_vsplit_int(SkTensorList *result, const SkTensor *self, int64_t sections) {
  return xsplit_int(result, self, sections, "vsplit", 2, 0);
}
int sk_math_vsplit_array(SkTensorList *result, const SkTensor *self, SkIntList indices) {
  return xsplit_array(result, self, indices, "vsplit", 2, 0);
}
int sk_math_dsplit_int(SkTensorList *result, const SkTensor *self, int64_t sections) {
  return xsplit_int(result, self, sections, "dsplit", 3, 2);
}
int sk_math_dsplit_array(SkTensorList *result, const SkTensor *self, SkIntList indices) {
  return xsplit_array(result, self, indices, "dsplit", 3, 2);
}
/* }==== */

/* {==== rot90, fliplr, flipud ==== */
/* k quarter turns from dims[0] towards dims[1]: one turn is flip(dims[1]) then transpose */
int sk_math_rot90(SkTensor **result, const SkTensor *self, int64_t k, SkIntList dims) {
  int64_t nd = self->ndim;
  if (dims.n != 2) return sk_error("expected total rotation dims == 2, but got dims = %d", dims.n);
  if (nd < 2) return sk_error("expected total dims >= 2, but got total dims = %lld", (long long)nd);
  int64_t a = dims.data[0], b = dims.data[1];
  /* PyTorch's order of checks; a difference that overflows (a dim near INT64_MIN or MAX) is
  ** no whole turn */
  int64_t d;
  if (a == b || (!sk_sub_overflow(a, b, &d) && (d == nd || d == -nd)))
    return sk_error("expected rotation dims to be different, but got dim0 = %lld and dim1 = %lld", (long long)a, (long long)b);
  if (a >= nd || a < -nd) return sk_error("Rotation dim0 out of range, dim0 = %lld", (long long)a);
  if (b >= nd || b < -nd) return sk_error("Rotation dim1 out of range, dim1 = %lld", (long long)b);
  k = ((k % 4) + 4) % 4;
  if (k == 0) return sk_clone(result, self, 0); /* contiguous, as PyTorch's */
  if (k == 2) return sk_flip(result, self, dims);
  int64_t f = k == 1 ? b : a;
  SkTensor *flipped = NULL;
  if (sk_flip(&flipped, self, (SkIntList){&f, 1})) return -1;
  int rc = sk_transpose_int(result, flipped, a, b);
  sk_tensor_release(flipped);
  return rc;
}

int sk_math_fliplr(SkTensor **result, const SkTensor *self) {
  int64_t d = 1;
  if (self->ndim < 2) return sk_error("Input must be >= 2-d.");
  return sk_flip(result, self, (SkIntList){&d, 1});
}

int sk_math_flipud(SkTensor **result, const SkTensor *self) {
  int64_t d = 0;
  if (self->ndim < 1) return sk_error("Input must be >= 1-d.");
  return sk_flip(result, self, (SkIntList){&d, 1});
}
/* }==== */

/* {==== select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter, narrow_copy ==== */
/* A clone of self with src copied into the region `view` takes; src must have its shape.
** The clone keeps self's strides where self is dense (preserve_format), so as_strided's
** storage positions are self's, counted from the clone's offset 0 (PyTorch's). */
typedef struct { int kind; int64_t a, b, c, step; SkOptInt start, end; SkIntList size, stride; } Region;
static int region_view(SkTensor **v, const SkTensor *t, const Region *r) {
  switch (r->kind) {
  case 0: return sk_select_int(v, t, r->a, r->b);
  case 1: return sk_slice(v, t, r->a, r->start, r->end, r->step);
  case 2: return sk_diagonal(v, t, r->a, r->b, r->c);
  default: return sk_as_strided(v, t, r->size, r->stride, r->start);
  }
}

/* PyTorch's is_non_overlapping_and_dense: the dims of size > 1, by stride, tile the elements */
static int dense(const SkTensor *t) {
  int64_t st[SK_MAX_DIMS], sz[SK_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < t->ndim; d++)
    if (t->sizes[d] != 1) st[n] = t->strides[d], sz[n++] = t->sizes[d];
  for (int i = 1; i < n; i++) /* insertion sort by stride */
    for (int j = i; j > 0 && st[j] < st[j - 1]; j--) {
      int64_t x = st[j]; st[j] = st[j - 1], st[j - 1] = x;
      x = sz[j]; sz[j] = sz[j - 1], sz[j - 1] = x;
    }
  int64_t want = 1;
  for (int i = 0; i < n; i++) {
    if (st[i] != want) return 0;
    want *= sz[i];
  }
  return 1;
}

/* self's copy: with self's strides for as_strided (preserve_format), else contiguous */
static int clone_for(SkTensor **out, const SkTensor *self, const Region *r) {
  if (r->kind != 3 || sk_tensor_is_contiguous(self) || !dense(self)) return sk_clone(out, self, -1);
  if (sk_new_empty_strided(out, self, (SkIntList){self->sizes, self->ndim}, (SkIntList){self->strides, self->ndim}, -1, -1,
                           sk_device(-1, 0), 0))
    return -1;
  if (sk_copy_(*out, self, 0)) { sk_tensor_release(*out); *out = NULL; return -1; }
  return 0;
}

static int scatter_into(SkTensor **result, const SkTensor *self, const SkTensor *src, const Region *r) {
  char a[128], b[128];
  SkTensor *out = NULL, *view = NULL;
  int rc = clone_for(&out, self, r);
  if (!rc) rc = region_view(&view, out, r);
  if (!rc && !sk_tensor_same_shape(view, src))
    rc = sk_error("expected src to have a size equal to the slice of self. src size = %s, slice size = %s",
                  sk_shape_str(src->ndim, src->sizes, a, sizeof a), sk_shape_str(view->ndim, view->sizes, b, sizeof b));
  if (!rc) rc = sk_copy_(view, src, 0);
  sk_tensor_release(view);
  if (rc) { sk_tensor_release(out); return -1; }
  *result = out;
  return 0;
}

int sk_math_select_scatter(SkTensor **result, const SkTensor *self, const SkTensor *src, int64_t dim, int64_t index) {
  Region r = {0, dim, index, 0, 1, {0, 0}, {0, 0}, {0}, {0}};
  return scatter_into(result, self, src, &r);
}

int sk_math_slice_scatter(SkTensor **result, const SkTensor *self, const SkTensor *src, int64_t dim, SkOptInt start,
                          SkOptInt end, int64_t step) {
  Region r = {1, dim, 0, 0, step, start, end, {0}, {0}};
  return scatter_into(result, self, src, &r);
}

int sk_math_diagonal_scatter(SkTensor **result, const SkTensor *self, const SkTensor *src, int64_t offset, int64_t dim1,
                             int64_t dim2) {
  Region r = {2, offset, dim1, dim2, 1, {0, 0}, {0, 0}, {0}, {0}};
  return scatter_into(result, self, src, &r);
}

int sk_math_as_strided_scatter(SkTensor **result, const SkTensor *self, const SkTensor *src, SkIntList size, SkIntList stride,
                               SkOptInt storage_offset) {
  Region r = {3, 0, 0, 0, 1, storage_offset, {0, 0}, size, stride};
  return scatter_into(result, self, src, &r);
}

int sk_math_narrow_copy(SkTensor **result, const SkTensor *self, int64_t dim, int64_t start, int64_t length) {
  SkTensor *v = NULL;
  if (sk_narrow(&v, self, dim, start, length)) return -1;
  int rc = sk_clone(result, v, 0);
  sk_tensor_release(v);
  return rc;
}

/* cat of one tensor: out resized and written with cat's dtype and overlap checks */
int sk_math_narrow_copy_out(const SkTensor *self, int64_t dim, int64_t start, int64_t length, SkTensor *out) {
  SkTensor *v = NULL;
  if (sk_narrow(&v, self, dim, start, length)) return -1;
  if (v->ndim == 0) { /* cannot happen: narrow refuses a 0-dim self */
    sk_tensor_release(v);
    return sk_error("narrow_copy: argument 'self' must have at least one dimension");
  }
  int rc = sk_cat_out((SkTensorList){&v, 1}, 0, out);
  sk_tensor_release(v);
  return rc;
}
/* }==== */
