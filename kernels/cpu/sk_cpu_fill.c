/*
** sk_cpu_fill.c — fill_ and where (unstructured kernels)
** Both move whole elements: fill_ copies one converted value, where picks
** one of two elements, so loops are by element size (1, 2, 4, 8 bytes),
** not by dtype. fill_ writes broadcast (stride-0) dims once: the write is
** idempotent, as in PyTorch, which skips the overlap check for fill_.
** Version counters are bumped by the generated wrappers, not here.
*/
#include "sk_kernels.h"
#include "sk_cpu_util.h"
#include "sk_parallel.h"

/* {==== fill_ ==== */
typedef struct { SkWalk w; size_t size; union { uint8_t b; uint16_t h; uint32_t s; uint64_t d; } v; } FillCtx;

#define FILL_ROW(T, field)                                            \
  if (f->size == sizeof(T)) {                                         \
    T v = f->v.field;                                                 \
    if (st == (int64_t)sizeof(T))                                     \
      for (int64_t i = 0; i < n; i++) ((T *)p)[i] = v;                \
    else                                                              \
      for (int64_t i = 0; i < n; i++) *(T *)(p + i * st) = v;         \
    return;                                                           \
  }

static void fill_row(char *p, int64_t n, int64_t st, int64_t first, void *ctx) {
  const FillCtx *f = ctx;
  (void)first;
  FILL_ROW(uint8_t, b)
  FILL_ROW(uint16_t, h)
  FILL_ROW(uint32_t, s)
  FILL_ROW(uint64_t, d)
}

static void fill_range(void *ctx, int64_t b, int64_t e) {
  FillCtx *f = ctx;
  sk_walk_range(&f->w, f->w.data, b, e, fill_row, f);
}

int sk_cpu_fill_(SkTensor *self, SkScalar value) {
  if (value.kind == SK_SCALAR_NONE) return sk_error("fill_: argument 'value' must be a number, got None");
  FillCtx f;
  f.size = sk_dtype_size(self->dtype);
  f.v.d = 0;
  if (sk_scalar_store(&f.v, self->dtype, value)) return -1;
  if (self->numel == 0) return 0;
  sk_walk_init(&f.w, self, 1);
  sk_parallel_for(0, f.w.numel, SK_GRAIN, fill_range, &f);
  return 0;
}
/* }==== */

/* {==== where ==== */
#define WHERE_LOOP(name, T)                                                                   \
  SK_CLONES static void name(char **d, const int64_t *s, int64_t n, void *ctx) {                        \
    const int64_t z = (int64_t)sizeof(T);                                                     \
    (void)ctx;                                                                                \
    if (s[0] == z && s[1] == 1 && s[2] == z && s[3] == z) {                                   \
      T *o = (T *)d[0];                                                                       \
      const uint8_t *c = (const uint8_t *)d[1];                                               \
      const T *a = (const T *)d[2], *b = (const T *)d[3];                                     \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b[i];                              \
    } else                                                                                    \
      for (int64_t i = 0; i < n; i++)                                                         \
        *(T *)(d[0] + i * s[0]) = *(const uint8_t *)(d[1] + i * s[1]) ? *(const T *)(d[2] + i * s[2]) \
                                                                     : *(const T *)(d[3] + i * s[3]); \
  }
WHERE_LOOP(where_1, uint8_t)
WHERE_LOOP(where_2, uint16_t)
WHERE_LOOP(where_4, uint32_t)
WHERE_LOOP(where_8, uint64_t)

/* The iterator gives the output and self/other one dtype; the condition is bool. */
int sk_cpu_where_out(const SkMeta *m, const SkTensor *condition, const SkTensor *self, const SkTensor *other, SkTensor *out) {
  (void)condition; (void)self; (void)other; (void)out;
  static const SkLoopFn loops[9] = {[1] = where_1, [2] = where_2, [4] = where_4, [8] = where_8};
  sk_iter_for_each(m->iter, loops[sk_dtype_size(m->iter->common_dtype)], NULL);
  return 0;
}
/* }==== */
