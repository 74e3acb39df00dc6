/*
** sk_value.c — boxed values and stacks
*/
#include "sk_value.h"
#include "sk_error.h"

#include <stdlib.h>
#include <string.h>

void sk_value_release(SkValue *v) {
  if (v->tag >= SK_VAL_INTLIST && v->dev == SK_VALUE_LIST_BORROWED) return;
  switch (v->tag) {
  case SK_VAL_TENSOR: if (v->n != SK_VALUE_BORROWED) sk_tensor_release(v->u.t); break;
  case SK_VAL_INTLIST: case SK_VAL_BOOLLIST: free(v->u.ints); break;
  case SK_VAL_DOUBLELIST: free(v->u.doubles); break;
  case SK_VAL_TENSORLIST:
    for (int i = 0; i < v->n; i++) sk_tensor_release(v->u.tensors[i]);
    free(v->u.tensors);
    break;
  default: break;
  }
}

void sk_stack_free_buffer(SkStack *s) {
  free(s->v);
  sk_stack_init(s);
}

int sk_stack_grow(SkStack *s, int n) {
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

/* A list value's array: one pointer of the union, by its tag. */
static void put_array(SkValue *v, void *data, int n) {
  if (v->tag == SK_VAL_DOUBLELIST) v->u.doubles = data;
  else if (v->tag == SK_VAL_TENSORLIST) v->u.tensors = data;
  else v->u.ints = data;
  v->n = n;
}
/* A malloc'd copy of n elements of elem bytes (one element's room when n is 0), or NULL. */
static void *dup_array(const void *data, size_t elem, int n) {
  void *copy = malloc((size_t)(n ? n : 1) * elem);
  if (!copy) return sk_error("out of memory"), NULL;
  if (n) memcpy(copy, data, (size_t)n * elem);
  return copy;
}
static void retain_all(SkTensor **ts, int n) {
  for (int i = 0; i < n; i++) sk_tensor_retain(ts[i]);
}

/* An owned array (any element type but tensors) into a new slot of tag; freed on failure. */
static int push_owned(SkStack *s, SkValueTag tag, void *data, int n) {
  SkValue *v = sk_stack_push(s, tag);
  if (!v) { free(data); return -1; }
  put_array(v, data, n);
  return 0;
}
/* A copy of n elements of elem bytes, pushed owned. */
static int push_copy_of(SkStack *s, SkValueTag tag, const void *data, size_t elem, int n) {
  void *copy = dup_array(data, elem, n);
  return copy ? push_owned(s, tag, copy, n) : -1;
}

int sk_push_intlist(SkStack *s, const int64_t *data, int n) { return push_copy_of(s, SK_VAL_INTLIST, data, sizeof *data, n); }
int sk_push_boollist(SkStack *s, const int64_t *data, int n) { return push_copy_of(s, SK_VAL_BOOLLIST, data, sizeof *data, n); }
int sk_push_doublelist(SkStack *s, const double *data, int n) {
  return push_copy_of(s, SK_VAL_DOUBLELIST, data, sizeof *data, n);
}
int sk_push_intlist_owned(SkStack *s, int64_t *data, int n) { return push_owned(s, SK_VAL_INTLIST, data, n); }
int sk_push_boollist_owned(SkStack *s, int64_t *data, int n) { return push_owned(s, SK_VAL_BOOLLIST, data, n); }
int sk_push_doublelist_owned(SkStack *s, double *data, int n) { return push_owned(s, SK_VAL_DOUBLELIST, data, n); }

int sk_push_tensorlist_owned(SkStack *s, SkTensor **data, int n) {
  SkValue *v = sk_stack_push(s, SK_VAL_TENSORLIST);
  if (!v) {
    for (int i = 0; i < n; i++) sk_tensor_release(data[i]);
    free(data);
    return -1;
  }
  put_array(v, data, n);
  return 0;
}

int sk_push_tensorlist(SkStack *s, SkTensor *const *data, int n) {
  SkTensor **copy = dup_array(data, sizeof *copy, n);
  if (!copy) return -1;
  retain_all(copy, n);
  return sk_push_tensorlist_owned(s, copy, n);
}

int sk_push_list_borrowed(SkStack *s, SkValueTag tag, const void *data, int n) {
  SkValue *v = sk_stack_push(s, tag);
  if (!v) return -1;
  v->dev = SK_VALUE_LIST_BORROWED;
  put_array(v, (void *)data, n);
  return 0;
}

int sk_value_own(SkValue *v) {
  if (v->tag < SK_VAL_INTLIST || v->dev != SK_VALUE_LIST_BORROWED) return 0;
  int tensors = v->tag == SK_VAL_TENSORLIST;
  void *copy = dup_array(tensors ? (const void *)v->u.tensors : (const void *)v->u.ints,
                         tensors ? sizeof(SkTensor *) : sizeof(int64_t), v->n); /* a double is 8 bytes too */
  if (!copy) return -1;
  if (tensors) retain_all(copy, v->n);
  put_array(v, copy, v->n);
  v->dev = 0;
  return 0;
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
    SkValue *d = sk_stack_push(s, v->tag);
    if (!d) return -1;
    *d = *v;
    return 0;
  }
  }
}
