/*
** sk_cpu_shape.c — copy kernels of the shape ops
** cat, flip, roll (copies between strided views, flip through negative
** strides, roll as block copies) and tril, triu, diag (row-wise copies
** that zero what they leave out). Elements move as bytes of their size
** (1, 2, 4 or 8); nothing here looks at values, except cat across dtypes,
** which goes through sk_copy_cpu.
** Invariants: the meta functions have checked shapes, dtypes and overlap;
** out has its final shape before the kernel runs; tril/triu may run in
** place (out == self), where the kept elements are not copied.
*/
#include "sk_kernels.h"
#include "sk_cpu_walk.h"

#include <string.h>

/* {==== Copies by element size ==== */
#define COPY_LOOP(T)                                                                              \
  for (int64_t i = 0; i < n; i++) *(T *)(d + i * st[0]) = *(const T *)(s + i * st[1]);            \
  return;

static void copy_row(char *const *p, const int64_t *st, int64_t n, int64_t first, void *ctx) {
  int64_t z = *(const int64_t *)ctx;
  char *d = p[0];
  const char *s = p[1];
  (void)first;
  if (st[0] == z && st[1] == z) { memcpy(d, s, (size_t)(n * z)); return; }
  switch (z) {
  case 1: COPY_LOOP(uint8_t)
  case 2: COPY_LOOP(uint16_t)
  case 4: COPY_LOOP(uint32_t)
  default: COPY_LOOP(uint64_t)
  }
}

/* Same-dtype copy of a view: sizes over both, strides in bytes (any sign). */
static void copy_bytes(char *dst, const int64_t *dst_st, const char *src, const int64_t *src_st, int ndim,
                       const int64_t *sizes, int64_t z) {
  int64_t st[2][SK_MAX_DIMS];
  char *data[2] = {dst, (char *)src};
  memcpy(st[0], dst_st, (size_t)ndim * sizeof st[0][0]);
  memcpy(st[1], src_st, (size_t)ndim * sizeof st[1][0]);
  MWalk w;
  mw_init(&w, ndim, sizes, 2, data, st);
  mw_run(&w, copy_row, &z, 1);
}

static void zero_row(char *const *p, const int64_t *st, int64_t n, int64_t first, void *ctx) {
  int64_t z = *(const int64_t *)ctx;
  (void)first;
  if (st[0] == z) { memset(p[0], 0, (size_t)(n * z)); return; }
  for (int64_t i = 0; i < n; i++) memset(p[0] + i * st[0], 0, (size_t)z);
}

/* Every element of t set to all-zero bytes (the zero of every dtype). */
static void zero_tensor(SkTensor *t) {
  int64_t st[1][SK_MAX_DIMS], z = (int64_t)sk_tensor_itemsize(t);
  char *data[1] = {sk_tensor_data(t)};
  byte_strides(t, st[0]);
  MWalk w;
  mw_init(&w, t->ndim, t->sizes, 1, data, st);
  mw_run(&w, zero_row, &z, 1);
}

/* A contiguous CPU copy of t (a new reference), or t itself retained when already contiguous. */
static SkTensor *contiguous_of(const SkTensor *t) {
  if (sk_tensor_is_contiguous(t)) return sk_tensor_retain((SkTensor *)t);
  SkTensor *c = sk_tensor_empty(t->ndim, t->sizes, t->dtype, SK_CPU);
  if (c && sk_copy_cpu(c, t)) { sk_tensor_release(c); return NULL; }
  return c;
}
/* }==== */

/* {==== cat, flip, roll ==== */
int sk_cpu_cat_out(const SkMeta *m, SkTensorList tensors, int64_t dim, SkTensor *out) {
  (void)m;
  if (out->numel == 0) return 0;
  int64_t z = (int64_t)sk_tensor_itemsize(out), off = 0, ost[SK_MAX_DIMS], ist[SK_MAX_DIMS];
  byte_strides(out, ost);
  for (int i = 0; i < tensors.n; i++) {
    const SkTensor *t = tensors.data[i];
    if (t->ndim == 1 && t->sizes[0] == 0) continue; /* legacy empty */
    if (t->numel > 0) {
      if (t->dtype == out->dtype) {
        byte_strides(t, ist);
        copy_bytes((char *)sk_tensor_data(out) + off * ost[dim], ost, sk_tensor_data(t), ist, t->ndim, t->sizes, z);
      } else {
        SkTensor *v = sk_tensor_alias(out, out->ndim, t->sizes, out->strides, out->offset + off * out->strides[dim]);
        int rc = v ? sk_copy_cpu(v, t) : -1;
        sk_tensor_release(v);
        if (rc) return -1;
      }
    }
    off += t->sizes[dim];
  }
  return 0;
}

/* flip: a copy from self seen backwards (negative strides) along the flipped dims. */
int sk_cpu_flip_out(const SkMeta *m, const SkTensor *self, int64_t dim_mask, SkTensor *out) {
  (void)m;
  if (self->numel == 0) return 0;
  int64_t z = (int64_t)sk_tensor_itemsize(self), sst[SK_MAX_DIMS], ost[SK_MAX_DIMS];
  const char *src = sk_tensor_data(self);
  byte_strides(self, sst);
  byte_strides(out, ost);
  for (int d = 0; d < self->ndim; d++)
    if (dim_mask >> d & 1) {
      src += (self->sizes[d] - 1) * sst[d];
      sst[d] = -sst[d];
    }
  copy_bytes(sk_tensor_data(out), ost, src, sst, self->ndim, self->sizes, z);
  return 0;
}

/* roll over the flattened tensor: two block copies of a contiguous copy. */
static int roll_flat(const SkTensor *self, int64_t shift, SkTensor *out) {
  int64_t n = self->numel, s = ((shift % n) + n) % n, z = (int64_t)sk_tensor_itemsize(self);
  SkTensor *src = contiguous_of(self);
  SkTensor *dst = sk_tensor_is_contiguous(out) ? sk_tensor_retain(out) : sk_tensor_empty(out->ndim, out->sizes, out->dtype, SK_CPU);
  int rc = src && dst ? 0 : -1;
  if (!rc) {
    char *d = sk_tensor_data(dst);
    const char *p = sk_tensor_data(src);
    memcpy(d + s * z, p, (size_t)((n - s) * z));
    memcpy(d, p + (n - s) * z, (size_t)(s * z));
    if (dst != out) rc = sk_copy_cpu(out, dst);
  }
  sk_tensor_release(src);
  sk_tensor_release(dst);
  return rc;
}

/* roll along dims: each rolled dim of size n with shift s splits into the blocks [0, n-s) -> [s, n)
** and [n-s, n) -> [0, s); the 2^k combinations are copied as views. */
int sk_cpu_roll_out(const SkMeta *m, const SkTensor *self, SkIntList shifts, SkIntList dims, SkTensor *out) {
  (void)m;
  if (self->numel == 0) return 0;
  if (dims.n == 0) return roll_flat(self, shifts.data[0], out);
  int64_t shift[SK_MAX_DIMS] = {0};
  for (int i = 0; i < dims.n; i++) {
    int64_t d;
    sk_wrap_dim(dims.data[i], self->ndim, "dims", &d);
    shift[d] += shifts.data[i] % (self->ndim ? self->sizes[d] : 1);
  }
  int rolled[SK_MAX_DIMS], k = 0, nd = geom_ndim(self);
  for (int d = 0; d < self->ndim; d++) {
    int64_t n = self->sizes[d];
    shift[d] = ((shift[d] % n) + n) % n;
    if (shift[d]) rolled[k++] = d;
  }
  int64_t z = (int64_t)sk_tensor_itemsize(self), sst[SK_MAX_DIMS], ost[SK_MAX_DIMS], sizes[SK_MAX_DIMS];
  byte_strides(self, sst);
  byte_strides(out, ost);
  for (int64_t combo = 0; combo < (1ll << k); combo++) {
    const char *src = sk_tensor_data(self);
    char *dst = sk_tensor_data(out);
    for (int d = 0; d < nd; d++) sizes[d] = geom_size(self, d);
    int empty = 0;
    for (int j = 0; j < k; j++) {
      int d = rolled[j];
      int64_t n = self->sizes[d], s = shift[d];
      if (combo >> j & 1) { src += (n - s) * sst[d]; sizes[d] = s; }
      else { dst += s * ost[d]; sizes[d] = n - s; }
      empty |= sizes[d] == 0;
    }
    if (!empty) copy_bytes(dst, ost, src, sst, nd, sizes, z);
  }
  return 0;
}
/* }==== */

/* {==== tril, triu, diag ==== */
typedef struct {
  const char *src;
  char *dst;
  int64_t rows, cols, k, z, upper;
  int nb;                              /* batch dims */
  int64_t bsizes[SK_MAX_DIMS], sbst[SK_MAX_DIMS], obst[SK_MAX_DIMS]; /* batch sizes, byte strides */
  int64_t srs, scs, ors, ocs;          /* row / column byte strides */
} Triangle;

static void triangle_rows(void *c, int64_t begin, int64_t end) {
  const Triangle *t = c;
  for (int64_t r = begin; r < end; r++) {
    int64_t b = r / t->rows, i = r % t->rows, soff = i * t->srs, ooff = i * t->ors;
    for (int d = t->nb - 1; d >= 0; d--) {
      int64_t q = b % t->bsizes[d];
      b /= t->bsizes[d];
      soff += q * t->sbst[d];
      ooff += q * t->obst[d];
    }
    /* kept columns [lo, hi) */
    int64_t lo = 0, hi = t->cols, edge = i + t->k;
    if (t->upper) lo = edge < 0 ? 0 : edge > t->cols ? t->cols : edge;
    else hi = edge + 1 < 0 ? 0 : edge + 1 > t->cols ? t->cols : edge + 1;
    const char *s = t->src + soff;
    char *o = t->dst + ooff;
    int64_t z = t->z, st[2] = {t->ocs, t->scs};
    char *p[2] = {o + lo * t->ocs, (char *)s + lo * t->scs};
    if (o != s && hi > lo) copy_row(p, st, hi - lo, 0, &z);
    if (t->upper) { p[0] = o; if (lo > 0) zero_row(p, st, lo, 0, &z); }
    else { p[0] = o + hi * t->ocs; if (t->cols > hi) zero_row(p, st, t->cols - hi, 0, &z); }
  }
}

static int triangle(const SkTensor *self, int64_t k, SkTensor *out, int upper) {
  if (self->numel == 0) return 0;
  Triangle t;
  int nd = self->ndim;
  int64_t sst[SK_MAX_DIMS], ost[SK_MAX_DIMS];
  byte_strides(self, sst);
  byte_strides(out, ost);
  t.src = sk_tensor_data(self);
  t.dst = sk_tensor_data(out);
  t.rows = self->sizes[nd - 2];
  t.cols = self->sizes[nd - 1];
  t.k = k < -t.rows ? -t.rows : k > t.cols ? t.cols : k; /* the same rows kept for any k beyond; i + k + 1 fits */
  t.z = (int64_t)sk_tensor_itemsize(self);
  t.upper = upper;
  t.nb = nd - 2;
  for (int d = 0; d < t.nb; d++) t.bsizes[d] = self->sizes[d], t.sbst[d] = sst[d], t.obst[d] = ost[d];
  t.srs = sst[nd - 2], t.scs = sst[nd - 1], t.ors = ost[nd - 2], t.ocs = ost[nd - 1];
  int64_t nrows = self->numel / t.cols;
  sk_parallel_for(0, nrows, SK_GRAIN / t.cols + 1, triangle_rows, &t);
  return 0;
}

int sk_cpu_tril_out(const SkMeta *m, const SkTensor *self, int64_t diagonal, SkTensor *out) {
  (void)m;
  return triangle(self, diagonal, out, 0);
}

int sk_cpu_triu_out(const SkMeta *m, const SkTensor *self, int64_t diagonal, SkTensor *out) {
  (void)m;
  return triangle(self, diagonal, out, 1);
}

int sk_cpu_diag_out(const SkMeta *m, const SkTensor *self, int64_t diagonal, SkTensor *out) {
  (void)m;
  int64_t z = (int64_t)sk_tensor_itemsize(self), sst[SK_MAX_DIMS], ost[SK_MAX_DIMS];
  if (out->numel == 0) return 0;
  /* out is non-empty, so |diagonal| is below its (1-D) or self's (2-D) size: -diagonal fits */
  int64_t row = diagonal < 0 ? -diagonal : 0, col = diagonal > 0 ? diagonal : 0;
  byte_strides(self, sst);
  byte_strides(out, ost);
  if (self->ndim == 1) { /* a vector onto the diagonal of a zero matrix */
    zero_tensor(out);
    if (self->numel == 0) return 0;
    int64_t d[1] = {ost[0] + ost[1]}, sizes[1] = {self->sizes[0]};
    copy_bytes((char *)sk_tensor_data(out) + row * ost[0] + col * ost[1], d, sk_tensor_data(self), sst, 1, sizes, z);
  } else { /* the diagonal of a matrix */
    int64_t s[1] = {sst[0] + sst[1]};
    copy_bytes(sk_tensor_data(out), ost, (const char *)sk_tensor_data(self) + row * sst[0] + col * sst[1], s, 1,
               out->sizes, z);
  }
  return 0;
}
/* }==== */
