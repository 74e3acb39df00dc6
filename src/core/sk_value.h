/*
** sk_value.h — boxed values and the stack of the boxed calling convention
** A boxed call takes its arguments on the stack and leaves its results
** there. The stack owns what it holds: one reference per tensor, the
** arrays of lists. Strings are borrowed and live as long as the call.
*/
#ifndef SK_VALUE_H
#define SK_VALUE_H

#include "sk_tensor.h"

typedef enum SkValueTag {
  SK_VAL_NONE, SK_VAL_TENSOR, SK_VAL_INT, SK_VAL_DOUBLE, SK_VAL_BOOL, SK_VAL_SCALAR,
  SK_VAL_STRING, SK_VAL_DTYPE, SK_VAL_DEVICE, SK_VAL_INTLIST, SK_VAL_DOUBLELIST,
  SK_VAL_BOOLLIST, SK_VAL_TENSORLIST
} SkValueTag;

typedef struct SkIntList { const int64_t *data; int n; } SkIntList;
typedef struct SkDoubleList { const double *data; int n; } SkDoubleList;
/* Elements may be NULL in a Tensor?[] list. */
typedef struct SkTensorList { SkTensor *const *data; int n; } SkTensorList;

/* Optional arguments in the unboxed convention. An int list with data NULL is None;
** bool?, ScalarType?, Layout? and MemoryFormat? use -1 for None, Device? type -1,
** Scalar? kind SK_SCALAR_NONE, Tensor? and str? NULL. */
typedef struct SkOptInt { int has; int64_t v; } SkOptInt;
typedef struct SkOptDouble { int has; double v; } SkOptDouble;

/* 16 bytes: a Scalar keeps its kind in n and its bits in the union. A tensor
** value keeps its device type in dev's low bits and SK_TENSOR_REQUIRES_GRAD in
** its top bit, so a boxed call reads its key set off the stack without a load
** through the tensor (written by every tensor push). */
#define SK_VALUE_DEV_TYPE 0x7f
typedef struct SkValue {
  unsigned char tag;     /* SkValueTag */
  unsigned char dev;     /* a tensor's device type */
  int n;                 /* list length; a tensor's SK_VALUE_BORROWED; a Scalar's SkScalarKind */
  union {
    SkTensor *t;
    int64_t i;
    double d;
    int b;
    SkScalarBits sb;
    const char *str;
    SkDType dtype;
    SkDevice device;
    int64_t *ints;
    double *doubles;
    SkTensor **tensors;
  } u;
} SkValue;

#define SK_STACK_INLINE 24
/* A tensor pushed by a C caller that keeps it alive for the whole call (the
** generated boxing adapters): no reference is taken or dropped. Whoever keeps
** a tensor beyond the call retains it, as always. */
#define SK_VALUE_BORROWED 1
/* The dev byte of a list value whose array (and, for a Tensor[], its tensors' references) a C
** caller keeps for the whole call: nothing is freed or released with the value. Whoever keeps
** such a list beyond the call copies it (sk_push_copy does). Every push clears dev. */
#define SK_VALUE_LIST_BORROWED 1

typedef struct SkStack {
  SkValue *v;
  int n, cap;
  SkValue inline_buf[SK_STACK_INLINE];
} SkStack;

int sk_stack_grow(SkStack *s, int n);
void sk_value_release(SkValue *v);         /* the owning tags: tensors and lists */
void sk_stack_free_buffer(SkStack *s);     /* a grown stack's heap buffer */

/* {==== Inline fast paths: every boxed call goes through these ==== */
static inline void sk_stack_init(SkStack *s) {
  s->v = s->inline_buf;
  s->n = 0;
  s->cap = SK_STACK_INLINE;
}
static inline int sk_stack_reserve(SkStack *s, int n) { return s->n + n <= s->cap ? 0 : sk_stack_grow(s, n); }
/* Releases what v owns; v becomes NONE. */
static inline void sk_value_clear(SkValue *v) {
  if (v->tag == SK_VAL_TENSOR) { if (v->n != SK_VALUE_BORROWED) sk_tensor_release(v->u.t); }
  else if (v->tag >= SK_VAL_INTLIST) sk_value_release(v);
  v->tag = SK_VAL_NONE;
  v->n = 0;
}
/* Drops the values from index `from` on. Slots above n are dead (a push
** writes tag and n), so they are released, not reset. */
static inline void sk_stack_truncate(SkStack *s, int from) {
  int n = s->n;
  s->n = from;
  for (SkValue *v = s->v + from, *e = s->v + n; v < e; v++) {
    if (v->tag == SK_VAL_TENSOR) { if (v->n != SK_VALUE_BORROWED) sk_tensor_release(v->u.t); }
    else if (v->tag >= SK_VAL_INTLIST) sk_value_release(v);
  }
}
/* Releases every value and the buffer; the stack is empty and reusable. */
static inline void sk_stack_free(SkStack *s) {
  sk_stack_truncate(s, 0);
  if (s->v != s->inline_buf) sk_stack_free_buffer(s);
}
/* }==== */

/* Pushers take their own reference / copy; they fail only on out of memory. */
/* The slot for a new value, or NULL on out of memory. */
static inline SkValue *sk_stack_push(SkStack *s, SkValueTag tag) {
  if (sk_stack_reserve(s, 1)) return NULL;
  SkValue *v = &s->v[s->n++];
  v->tag = tag;
  v->dev = 0;
  v->n = 0;
  return v;
}
static inline int sk_push_none(SkStack *s) { return sk_stack_push(s, SK_VAL_NONE) ? 0 : -1; }
/* Writes tensor t (not NULL) into slot v; n is 0 or SK_VALUE_BORROWED. */
static inline void sk_value_put_tensor(SkValue *v, SkTensor *t, int n) {
  v->tag = SK_VAL_TENSOR;
  v->dev = (unsigned char)(t->device.type | (sk_tensor_grad_flag(t) ? 0x80 : 0));
  v->n = n;
  v->u.t = t;
}
/* Stores t (owned; NULL stores NONE) in slot v, whose old value the caller has released. */
static inline void sk_value_set_tensor(SkValue *v, SkTensor *t) {
  if (t) sk_value_put_tensor(v, t, 0);
  else { v->tag = SK_VAL_NONE; v->n = 0; }
}
/* Takes the caller's reference (released on failure); NULL pushes NONE. */
static inline int sk_push_tensor_owned(SkStack *s, SkTensor *t) {
  if (sk_stack_reserve(s, 1)) { sk_tensor_release(t); return -1; }
  sk_value_set_tensor(&s->v[s->n++], t);
  return 0;
}
static inline int sk_push_tensor(SkStack *s, SkTensor *t) { return sk_push_tensor_owned(s, sk_tensor_retain(t)); }
/* See SK_VALUE_BORROWED; for a tensor known not to be NULL. */
static inline int sk_push_tensor_present(SkStack *s, const SkTensor *t) {
  if (sk_stack_reserve(s, 1)) return -1;
  sk_value_put_tensor(&s->v[s->n++], (SkTensor *)t, SK_VALUE_BORROWED);
  return 0;
}
/* See SK_VALUE_BORROWED; NULL pushes NONE. */
static inline int sk_push_tensor_borrowed(SkStack *s, const SkTensor *t) {
  return t ? sk_push_tensor_present(s, t) : sk_push_none(s);
}
#define SK_PUSH_FIELD(fn, T, tag, field) \
  static inline int fn(SkStack *s, T x) { SkValue *v = sk_stack_push(s, tag); if (!v) return -1; v->u.field = x; return 0; }
SK_PUSH_FIELD(sk_push_int, int64_t, SK_VAL_INT, i)
SK_PUSH_FIELD(sk_push_double, double, SK_VAL_DOUBLE, d)
SK_PUSH_FIELD(sk_push_string, const char *, SK_VAL_STRING, str)
SK_PUSH_FIELD(sk_push_dtype, SkDType, SK_VAL_DTYPE, dtype)
SK_PUSH_FIELD(sk_push_device, SkDevice, SK_VAL_DEVICE, device)
#undef SK_PUSH_FIELD
static inline int sk_push_scalar(SkStack *s, SkScalar x) {
  SkValue *v = sk_stack_push(s, SK_VAL_SCALAR);
  if (!v) return -1;
  v->n = (int)x.kind;
  v->u.sb = x.v;
  return 0;
}
static inline SkScalar sk_value_scalar(const SkValue *v) {
  SkScalar x;
  x.kind = (SkScalarKind)v->n;
  x.v = v->u.sb;
  return x;
}
static inline int sk_push_bool(SkStack *s, int b) {
  SkValue *v = sk_stack_push(s, SK_VAL_BOOL);
  if (!v) return -1;
  v->u.b = b != 0;
  return 0;
}
int sk_push_intlist(SkStack *s, const int64_t *data, int n);
int sk_push_doublelist(SkStack *s, const double *data, int n);
int sk_push_boollist(SkStack *s, const int64_t *data, int n);
int sk_push_tensorlist(SkStack *s, SkTensor *const *data, int n); /* retains each */
int sk_push_tensorlist_owned(SkStack *s, SkTensor **data, int n); /* takes array and refs (array from malloc) */
/* Take the array (from malloc; NULL only when n is 0), freed on failure: how a returned list is pushed. */
int sk_push_intlist_owned(SkStack *s, int64_t *data, int n);
int sk_push_boollist_owned(SkStack *s, int64_t *data, int n);
int sk_push_doublelist_owned(SkStack *s, double *data, int n);
int sk_push_copy(SkStack *s, const SkValue *v);                   /* a deep copy of v */
/* A list of tag (int[], bool[], float[] or Tensor[]) borrowed: see SK_VALUE_LIST_BORROWED. */
int sk_push_list_borrowed(SkStack *s, SkValueTag tag, const void *data, int n);
/* Makes a borrowed list value own a copy of its array (and references to its tensors), so that
** its elements can be replaced; any other value is left as it is. */
int sk_value_own(SkValue *v);

static inline SkIntList sk_value_intlist(const SkValue *v) { SkIntList l = {v->u.ints, v->n}; return l; }
static inline SkTensorList sk_value_tensorlist(const SkValue *v) { SkTensorList l = {v->u.tensors, v->n}; return l; }

const char *sk_value_tag_name(SkValueTag t);

#endif
