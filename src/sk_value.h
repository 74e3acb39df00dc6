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

typedef struct SkValue {
  SkValueTag tag;
  int n;                 /* list length */
  union {
    SkTensor *t;
    int64_t i;
    double d;
    int b;
    SkScalar s;
    const char *str;
    SkDType dtype;
    SkDevice device;
    int64_t *ints;
    double *doubles;
    SkTensor **tensors;
  } u;
} SkValue;

#define SK_STACK_INLINE 24

typedef struct SkStack {
  SkValue *v;
  int n, cap;
  SkValue inline_buf[SK_STACK_INLINE];
} SkStack;

void sk_stack_init(SkStack *s);
void sk_stack_free(SkStack *s);            /* releases every value */
int sk_stack_reserve(SkStack *s, int n);
void sk_value_clear(SkValue *v);           /* releases what v owns; v becomes NONE */
/* Drops the values from index `from` on. */
void sk_stack_truncate(SkStack *s, int from);

/* Pushers take their own reference / copy; they fail only on out of memory. */
int sk_push_none(SkStack *s);
int sk_push_tensor(SkStack *s, SkTensor *t);      /* retains; NULL pushes NONE */
int sk_push_tensor_owned(SkStack *s, SkTensor *t); /* takes the caller's reference */
int sk_push_int(SkStack *s, int64_t i);
int sk_push_double(SkStack *s, double d);
int sk_push_bool(SkStack *s, int b);
int sk_push_scalar(SkStack *s, SkScalar x);
int sk_push_string(SkStack *s, const char *str);
int sk_push_dtype(SkStack *s, SkDType t);
int sk_push_device(SkStack *s, SkDevice d);
int sk_push_intlist(SkStack *s, const int64_t *data, int n);
int sk_push_doublelist(SkStack *s, const double *data, int n);
int sk_push_boollist(SkStack *s, const int64_t *data, int n);
int sk_push_tensorlist(SkStack *s, SkTensor *const *data, int n); /* retains each */
int sk_push_tensorlist_owned(SkStack *s, SkTensor **data, int n); /* takes array and refs (array from malloc) */
int sk_push_copy(SkStack *s, const SkValue *v);                   /* a deep copy of v */

static inline SkIntList sk_value_intlist(const SkValue *v) { SkIntList l = {v->u.ints, v->n}; return l; }
static inline SkTensorList sk_value_tensorlist(const SkValue *v) { SkTensorList l = {v->u.tensors, v->n}; return l; }

const char *sk_value_tag_name(SkValueTag t);

#endif
