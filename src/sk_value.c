/*
** sk_value.c — boxed values and stacks
*/
#include "sk_value.h"
#include "sk_error.h"

#include <stdlib.h>
#include <string.h>

void sk_stack_init(SkStack *s) {
  s->v = s->inline_buf;
  s->n = 0;
  s->cap = SK_STACK_INLINE;
}

void sk_value_clear(SkValue *v) {
  switch (v->tag) {
  case SK_VAL_TENSOR: sk_tensor_release(v->u.t); break;
  case SK_VAL_INTLIST: case SK_VAL_BOOLLIST: free(v->u.ints); break;
  case SK_VAL_DOUBLELIST: free(v->u.doubles); break;
  case SK_VAL_TENSORLIST:
    for (int i = 0; i < v->n; i++) sk_tensor_release(v->u.tensors[i]);
    free(v->u.tensors);
    break;
  default: break;
  }
  v->tag = SK_VAL_NONE;
  v->n = 0;
}

void sk_stack_truncate(SkStack *s, int from) {
  while (s->n > from) sk_value_clear(&s->v[--s->n]);
}

void sk_stack_free(SkStack *s) {
  sk_stack_truncate(s, 0);
  if (s->v != s->inline_buf) free(s->v);
  sk_stack_init(s);
}

int sk_stack_reserve(SkStack *s, int n) {
  if (s->n + n <= s->cap) return 0;
  int cap = s->cap * 2 > s->n + n ? s->cap * 2 : s->n + n;
  SkValue *v = malloc((size_t)cap * sizeof *v);
  if (!v) return sk_error("out of memory growing the stack");
  memcpy(v, s->v, (size_t)s->n * sizeof *v);
  if (s->v != s->inline_buf) free(s->v);
  s->v = v;
  s->cap = cap;
  return 0;
}

static SkValue *push(SkStack *s, SkValueTag tag) {
  if (sk_stack_reserve(s, 1)) return NULL;
  SkValue *v = &s->v[s->n++];
  v->tag = tag;
  v->n = 0;
  return v;
}

int sk_push_none(SkStack *s) { return push(s, SK_VAL_NONE) ? 0 : -1; }

int sk_push_tensor_owned(SkStack *s, SkTensor *t) {
  SkValue *v = push(s, t ? SK_VAL_TENSOR : SK_VAL_NONE);
  if (!v) { sk_tensor_release(t); return -1; }
  v->u.t = t;
  return 0;
}

int sk_push_tensor(SkStack *s, SkTensor *t) { return sk_push_tensor_owned(s, sk_tensor_retain(t)); }

#define PUSH_FIELD(fn, T, tag, field) \
  int fn(SkStack *s, T x) { SkValue *v = push(s, tag); if (!v) return -1; v->u.field = x; return 0; }
PUSH_FIELD(sk_push_int, int64_t, SK_VAL_INT, i)
PUSH_FIELD(sk_push_double, double, SK_VAL_DOUBLE, d)
PUSH_FIELD(sk_push_scalar, SkScalar, SK_VAL_SCALAR, s)
PUSH_FIELD(sk_push_string, const char *, SK_VAL_STRING, str)
PUSH_FIELD(sk_push_dtype, SkDType, SK_VAL_DTYPE, dtype)
PUSH_FIELD(sk_push_device, SkDevice, SK_VAL_DEVICE, device)
#undef PUSH_FIELD

int sk_push_bool(SkStack *s, int b) {
  SkValue *v = push(s, SK_VAL_BOOL);
  if (!v) return -1;
  v->u.b = b != 0;
  return 0;
}

static int push_ints(SkStack *s, SkValueTag tag, const int64_t *data, int n) {
  int64_t *copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
  if (!copy) return sk_error("out of memory");
  if (n) memcpy(copy, data, (size_t)n * sizeof *copy);
  SkValue *v = push(s, tag);
  if (!v) { free(copy); return -1; }
  v->u.ints = copy;
  v->n = n;
  return 0;
}

int sk_push_intlist(SkStack *s, const int64_t *data, int n) { return push_ints(s, SK_VAL_INTLIST, data, n); }
int sk_push_boollist(SkStack *s, const int64_t *data, int n) { return push_ints(s, SK_VAL_BOOLLIST, data, n); }

int sk_push_doublelist(SkStack *s, const double *data, int n) {
  double *copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
  if (!copy) return sk_error("out of memory");
  if (n) memcpy(copy, data, (size_t)n * sizeof *copy);
  SkValue *v = push(s, SK_VAL_DOUBLELIST);
  if (!v) { free(copy); return -1; }
  v->u.doubles = copy;
  v->n = n;
  return 0;
}

int sk_push_tensorlist_owned(SkStack *s, SkTensor **data, int n) {
  SkValue *v = push(s, SK_VAL_TENSORLIST);
  if (!v) {
    for (int i = 0; i < n; i++) sk_tensor_release(data[i]);
    free(data);
    return -1;
  }
  v->u.tensors = data;
  v->n = n;
  return 0;
}

int sk_push_tensorlist(SkStack *s, SkTensor *const *data, int n) {
  SkTensor **copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
  if (!copy) return sk_error("out of memory");
  for (int i = 0; i < n; i++) copy[i] = sk_tensor_retain(data[i]);
  return sk_push_tensorlist_owned(s, copy, n);
}

const char *sk_value_tag_name(SkValueTag t) {
  static const char *names[] = {"None", "Tensor", "int", "float", "bool", "Scalar", "str",
                                "ScalarType", "Device", "int[]", "float[]", "bool[]", "Tensor[]"};
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

int sk_push_copy(SkStack *s, const SkValue *v) {
  switch (v->tag) {
  case SK_VAL_TENSOR: return sk_push_tensor(s, v->u.t);
  case SK_VAL_TENSORLIST: return sk_push_tensorlist(s, v->u.tensors, v->n);
  case SK_VAL_INTLIST: return sk_push_intlist(s, v->u.ints, v->n);
  case SK_VAL_BOOLLIST: return sk_push_boollist(s, v->u.ints, v->n);
  case SK_VAL_DOUBLELIST: return sk_push_doublelist(s, v->u.doubles, v->n);
  default: {
    SkValue *d = push(s, v->tag);
    if (!d) return -1;
    *d = *v;
    return 0;
  }
  }
}
