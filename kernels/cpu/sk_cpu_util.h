/*
** sk_cpu_util.h — private helpers of the CPU kernels: type lists, loop
** templates, dispatch tables and a strided walker over one tensor.
** Invariants: a type list entry X(sfx, T, CT, LD, ST) stores T and computes
** in CT (LD: T -> CT, ST: CT -> T); integer entries X(sfx, T, UT) compute
** wrapping arithmetic in the unsigned UT so that overflow is never C UB.
** Loop templates take iterator operands (byte strides) and have a flat
** path, a scalar-broadcast path and a general strided path.
*/
#ifndef SK_CPU_UTIL_H
#define SK_CPU_UTIL_H

#include "sk_error.h"
#include "sk_iter.h"
#include "sk_elem.h"

#include <math.h>

#include <string.h>

/* {==== Type lists and tables ==== */
#define SK_ID(x) (x)
#define SK_FLOAT_TYPES(X)                               \
  X(f32, float, float, SK_ID, SK_ID)                    \
  X(f64, double, double, SK_ID, SK_ID)                  \
  X(f16, uint16_t, float, sk_half_to_float, sk_float_to_half) \
  X(bf16, uint16_t, float, sk_bf16_to_float, sk_float_to_bf16)
#define SK_INT_TYPES(X)                                 \
  X(u8, uint8_t, uint32_t) X(i8, int8_t, uint32_t) X(i16, int16_t, uint32_t) \
  X(i32, int32_t, uint32_t) X(i64, int64_t, uint64_t)

#define SK_FLOAT_TABLE(p) [SK_DTYPE_FLOAT32] = p##_f32, [SK_DTYPE_FLOAT64] = p##_f64, \
  [SK_DTYPE_FLOAT16] = p##_f16, [SK_DTYPE_BFLOAT16] = p##_bf16
#define SK_INT_TABLE(p) [SK_DTYPE_UINT8] = p##_u8, [SK_DTYPE_INT8] = p##_i8, \
  [SK_DTYPE_INT16] = p##_i16, [SK_DTYPE_INT32] = p##_i32, [SK_DTYPE_INT64] = p##_i64

/* Parameters a loop reads from its context: one float and one integer view of each. */
typedef struct SkOpParams { double f, f2; int64_t i, i2; } SkOpParams;

/* Runs the iterator with the loop the table holds for its compute dtype. */
static inline int sk_cpu_run(const SkMeta *m, const SkLoopFn *table, const SkOpParams *p, const char *kname) {
  SkDType dt = m->iter->common_dtype;
  if (!table[dt]) return sk_error("\"%s\" not implemented for '%s'", kname, sk_dtype_torch_name(dt));
  sk_iter_for_each(m->iter, table[dt], (void *)p);
  return 0;
}
/* }==== */

/* {==== Loop templates ==== */
/* Hot loops are built three times — baseline x86-64, x86-64-v3 (AVX2, FMA) and
** x86-64-v4 (AVX-512) — and the CPU picks one when the module loads (GCC's
** function multiversioning, through an ifunc), so the module runs on any
** x86-64 and uses the widest vectors it has. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SK_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define SK_CLONES
#endif

/* out = EXPR(a, b, p) with a, b, p of type CT; p = (CT)(PARAM) from SkOpParams *c. */
#define SK_BINARY_LOOP(name, T, CT, LD, ST, PARAM, EXPR)                                   \
  SK_CLONES static void name(char **d, const int64_t *s, int64_t n, void *ctx) {           \
    const SkOpParams *c = ctx;                                                             \
    const CT p = (CT)(PARAM);                                                              \
    const int64_t z = (int64_t)sizeof(T);                                                  \
    T *o = (T *)d[0];                                                                      \
    const T *x = (const T *)d[1], *y = (const T *)d[2];                                    \
    (void)c; (void)p;                                                                      \
    if (s[0] == z && s[1] == z && s[2] == z)                                               \
      for (int64_t i = 0; i < n; i++) { CT a = LD(x[i]), b = LD(y[i]); o[i] = ST(EXPR); }  \
    else if (s[0] == z && s[1] == z && s[2] == 0) {                                        \
      const CT b = LD(*y);                                                                 \
      for (int64_t i = 0; i < n; i++) { CT a = LD(x[i]); o[i] = ST(EXPR); }                \
    } else if (s[0] == z && s[1] == 0 && s[2] == z) {                                      \
      const CT a = LD(*x);                                                                 \
      for (int64_t i = 0; i < n; i++) { CT b = LD(y[i]); o[i] = ST(EXPR); }                \
    } else                                                                                 \
      for (int64_t i = 0; i < n; i++) {                                                    \
        CT a = LD(*(const T *)(d[1] + i * s[1])), b = LD(*(const T *)(d[2] + i * s[2]));   \
        *(T *)(d[0] + i * s[0]) = ST(EXPR);                                                \
      }                                                                                    \
  }

/* out = EXPR(a, p, q) with p = (CT)(P), q = (CT)(Q); only operands 0 and 1 are read. */
#define SK_UNARY_LOOP(name, T, CT, LD, ST, P, Q, EXPR)                                     \
  SK_CLONES static void name(char **d, const int64_t *s, int64_t n, void *ctx) {           \
    const SkOpParams *c = ctx;                                                             \
    const CT p = (CT)(P), q = (CT)(Q);                                                     \
    const int64_t z = (int64_t)sizeof(T);                                                  \
    (void)c; (void)p; (void)q;                                                             \
    if (s[0] == z && s[1] == z) {                                                          \
      T *o = (T *)d[0];                                                                    \
      const T *x = (const T *)d[1];                                                        \
      for (int64_t i = 0; i < n; i++) { CT a = LD(x[i]); o[i] = ST(EXPR); }                \
    } else                                                                                 \
      for (int64_t i = 0; i < n; i++) {                                                    \
        CT a = LD(*(const T *)(d[1] + i * s[1]));                                          \
        *(T *)(d[0] + i * s[0]) = ST(EXPR);                                                \
      }                                                                                    \
  }
/* }==== */

/* {==== Walking one tensor in logical (C) order ==== */
/* A row: n elements from p, stride bytes apart; `first` is the logical index of the first. */
typedef void (*SkRowFn)(char *p, int64_t n, int64_t stride, int64_t first, void *ctx);

typedef struct SkWalk {
  int ndim;                      /* coalesced, last dim fastest; at least 1 */
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS]; /* strides in bytes */
  char *data;
  int64_t numel;
} SkWalk;

/* Merges dims that are adjacent in memory as well as in logical order; drops size-1 dims.
** With skip_broadcast, dims of stride 0 are dropped too (for idempotent writes). */
/* Appends a dim of n elements, stride st bytes, merging it into the previous dim when they walk as one. */
static inline void sk_walk_push(SkWalk *w, int64_t n, int64_t st) {
  if (w->ndim && w->strides[w->ndim - 1] == n * st) {
    w->sizes[w->ndim - 1] *= n;
    w->strides[w->ndim - 1] = st;
  } else {
    w->sizes[w->ndim] = n;
    w->strides[w->ndim++] = st;
  }
}

static inline void sk_walk_init(SkWalk *w, const SkTensor *t, int skip_broadcast) {
  int64_t sz = (int64_t)sk_dtype_size(t->dtype);
  w->data = (char *)sk_tensor_data(t);
  w->numel = t->numel;
  w->ndim = 0;
  for (int d = 0; d < t->ndim; d++) {
    int64_t n = t->sizes[d], st = t->strides[d] * sz;
    if (n == 1 || (skip_broadcast && st == 0 && n > 0)) continue;
    sk_walk_push(w, n, st);
  }
  if (!w->ndim) { w->sizes[0] = 1; w->strides[0] = sz; w->ndim = 1; }
  if (skip_broadcast) w->numel = sk_numel(w->ndim, w->sizes);
}

/* Byte offset of logical element `index`. */
static inline int64_t sk_walk_offset(const SkWalk *w, int64_t index) {
  int64_t off = 0;
  for (int d = w->ndim - 1; d >= 0; d--) {
    off += index % w->sizes[d] * w->strides[d];
    index /= w->sizes[d];
  }
  return off;
}

/* Calls fn on the rows that hold logical elements [begin, end), addressed from base. */
static inline void sk_walk_range(const SkWalk *w, char *base, int64_t begin, int64_t end, SkRowFn fn, void *ctx) {
  int nd = w->ndim, last = nd - 1;
  int64_t idx[SK_MAX_DIMS], rem = begin, off = 0;
  if (begin >= end) return;
  for (int d = last; d >= 0; d--) {
    idx[d] = rem % w->sizes[d];
    rem /= w->sizes[d];
    off += idx[d] * w->strides[d];
  }
  for (int64_t pos = begin; pos < end;) {
    int64_t n = w->sizes[last] - idx[last];
    if (n > end - pos) n = end - pos;
    fn(base + off, n, w->strides[last], pos, ctx);
    pos += n;
    off += n * w->strides[last];
    idx[last] += n;
    for (int d = last; d > 0 && idx[d] == w->sizes[d]; d--) {
      off -= idx[d] * w->strides[d];
      idx[d] = 0;
      idx[d - 1]++;
      off += w->strides[d - 1];
    }
  }
}

typedef struct { size_t size; int found; } SkZeroScan;

static inline void sk_zero_row(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  static const char zero[8] = {0};
  SkZeroScan *z = ctx;
  (void)first;
  for (int64_t i = 0; i < n && !z->found; i++, p += st) z->found = memcmp(p, zero, z->size) == 0;
}

/* 1 when some element of integer tensor t is 0 (every byte zero). */
static inline int sk_cpu_any_zero(const SkTensor *t) {
  SkWalk w;
  SkZeroScan z = {sk_dtype_size(t->dtype), 0};
  sk_walk_init(&w, t, 1);
  if (w.numel > 0) sk_walk_range(&w, w.data, 0, w.numel, sk_zero_row, &z);
  return z.found;
}
/* }==== */

/* {==== Operands of kernels that read contiguous data in a compute dtype ====
** sk_cpu_operand: t itself (borrowed) when contiguous in ct, else a converted copy (owned, left
** in *keep); NULL stays NULL. sk_cpu_target: where a kernel writes, out itself or a new
** tensor in *keep to copy back. Both do nothing once *rc is set, and set it on failure. */
static inline const SkTensor *sk_cpu_operand(const SkTensor *t, SkDType ct, SkTensor **keep, int *rc) {
  if (!t || *rc) return NULL;
  if (t->dtype == ct && sk_tensor_is_contiguous(t)) return t;
  if (!(*keep = sk_tensor_empty(t->ndim, t->sizes, ct, t->device)) || sk_copy_cpu(*keep, t)) { *rc = -1; return NULL; }
  return *keep;
}
static inline SkTensor *sk_cpu_target(SkTensor *out, SkDType ct, SkTensor **keep, int *rc) {
  if (!out || *rc) return NULL;
  if (out->dtype == ct && sk_tensor_is_contiguous(out)) return out;
  if (!(*keep = sk_tensor_empty(out->ndim, out->sizes, ct, out->device))) *rc = -1;
  return *keep;
}
/* An unstructured kernel's results shaped by its Meta kernel: each (NULL stays NULL) becomes
** an empty CPU tensor of the same sizes and dtype. Returns -1 when one cannot be made. */
static inline int sk_cpu_from_meta(SkTensor **r, int n) {
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (!r[i]) continue;
    SkTensor *t = rc ? NULL : sk_tensor_empty(r[i]->ndim, r[i]->sizes, r[i]->dtype, sk_device(SK_DEVICE_CPU, 0));
    sk_tensor_release(r[i]);
    if (!(r[i] = t)) rc = -1;
  }
  return rc;
}
/* }==== */

/* {==== Order keys ====
** A uint64 that sorts as the values: floats map their double's bits so that every NaN keys
** above +inf (SK_NAN_KEY) and -0.0 equals +0.0; integers flip their sign bit. */
#define SK_NAN_KEY UINT64_MAX
static inline uint64_t sk_cpu_order_key(const char *p, SkDType dt) {
  if (sk_dtype_is_floating(dt)) {
    double v = sk_elem_load_floating(p, dt);
    if (isnan(v)) return SK_NAN_KEY;
    if (v == 0) v = 0;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u >> 63 ? ~u : u | 0x8000000000000000ull;
  }
  return (uint64_t)sk_elem_load_integral(p, dt) ^ 0x8000000000000000ull;
}
/* }==== */

#endif
