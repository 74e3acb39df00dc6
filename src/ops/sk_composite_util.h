/*
** sk_composite_util.h — shapes shared by the composite kernels of src/ops
*/
#ifndef SK_COMPOSITE_UTIL_H
#define SK_COMPOSITE_UTIL_H

#include "sk_ops.h"
#include "sk_error.h"
#include "sk_meta.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Scalar overload: `w` is the scalar as a wrapped-number tensor (it takes part
** in type promotion as PyTorch's does), `call` the Tensor overload using it. */
#define SK_SCALAR_OVERLOAD(signature, scalar, call) \
  int signature {                                  \
    SkTensor *w = sk_tensor_wrap_number(scalar);   \
    if (!w) return -1;                             \
    int rc = call;                                 \
    sk_tensor_release(w);                          \
    return rc;                                     \
  }

/* PyTorch's pow.Tensor_Scalar check (NumPy's rule): an integer or bool base refuses
** a negative integer Scalar exponent. A Tensor exponent is not checked: the kernel
** gives PyTorch's powi values (1, -1 or 0). */
static inline int sk_check_pow_scalar_exponent(const SkTensor *self, SkScalar exponent) {
  if (!sk_dtype_is_floating(self->dtype) && exponent.kind == SK_SCALAR_INT && exponent.v.i < 0)
    return sk_error("Integers to negative integer powers are not allowed.");
  return 0;
}

/* {==== Loss reductions ====
** The losses take reduction as a string (sk's choice; PyTorch's C++ schemas take an int
** enum): "mean" (also NULL) | "sum" | "none", PyTorch's enum values. */
enum { SK_REDUCTION_NONE, SK_REDUCTION_MEAN, SK_REDUCTION_SUM };
static inline int sk_reduction_of(const char *s, int64_t *r) {
  if (!s || strcmp(s, "mean") == 0) *r = SK_REDUCTION_MEAN;
  else if (strcmp(s, "sum") == 0) *r = SK_REDUCTION_SUM;
  else if (strcmp(s, "none") == 0) *r = SK_REDUCTION_NONE;
  else return sk_error("argument 'reduction': %s is not a valid value for reduction (expected 'none', 'mean' or 'sum')", s);
  return 0;
}
/* }==== */

/* The tensors an out= composite reads: an out may share no memory with them (sk's rule for the
** ops that are not elementwise, sk_check_written, as the structured ops' outs), checked before any
** out is written. SK_READS(a, b) names each by its C name, the op's argument name. */
typedef struct SkReads {
  int n;
  const SkTensor *const *t; /* NULL entries (absent optional arguments) are skipped */
  const char *const *names;
  SkTensorList list; /* a Tensor[] argument, or none (n 0) */
  const char *list_name;
  int alias_ok; /* an elementwise op: the very same view as an input is allowed (TensorIterator's rule) */
} SkReads;
#define SK_READS_PICK(a, b, c, d, e, f, g, ...) g
#define SK_READS_S1(a) #a
#define SK_READS_S2(a, b) #a, #b
#define SK_READS_S3(a, b, c) #a, #b, #c
#define SK_READS_S4(a, b, c, d) #a, #b, #c, #d
#define SK_READS_S5(a, b, c, d, e) #a, #b, #c, #d, #e
#define SK_READS_S6(a, b, c, d, e, f) #a, #b, #c, #d, #e, #f
#define SK_READS(...)                                                                                          \
  ((SkReads){(int)(sizeof((const SkTensor *[]){__VA_ARGS__}) / sizeof(const SkTensor *)),                    \
             (const SkTensor *const[]){__VA_ARGS__},                                                          \
             (const char *const[]){SK_READS_PICK(__VA_ARGS__, SK_READS_S6, SK_READS_S5, SK_READS_S4, SK_READS_S3, \
                                                 SK_READS_S2, SK_READS_S1, )(__VA_ARGS__)},                    \
             {NULL, 0}, NULL, 0})
/* an elementwise composite's one input t */
#define SK_READS_POINTWISE(t) ((SkReads){1, (const SkTensor *const[]){t}, (const char *const[]){#t}, {NULL, 0}, NULL, 1})
/* a composite whose only tensor argument is the list l, named name */
#define SK_READS_LIST(l, name) ((SkReads){0, NULL, NULL, (l), (name), 0})

/* An out= variant of a composite: r (the functional result) written into out, which is
** resized (resize_) when its shape differs; PyTorch's can_cast rule for the dtype. The checks
** (named for the out argument) come first, so that a variant with several outs checks them all
** before it writes any (sk_composite_write_outs). */
static inline int sk_composite_check_out(const SkTensor *r, const SkTensor *out, const char *name, SkReads in) {
  if (sk_check_cast(r->dtype, out->dtype, name)) return -1;
  if (!sk_device_eq(r->device, out->device)) {
    char a[32], b[32];
    sk_device_format(r->device, a, sizeof a);
    sk_device_format(out->device, b, sizeof b);
    return sk_error("expected all tensors to be on the same device, but found at least two devices, %s and %s "
                    "(argument '%s')", a, b, name);
  }
  int resizing = !sk_tensor_same_shape(r, out);
  if (sk_check_written(out, name, resizing, in.n, in.t, in.names, in.alias_ok)) return -1;
  return in.list_name ? sk_check_written_list(out, name, resizing, in.list, in.list_name, in.alias_ok) : 0;
}
static inline int sk_composite_store_out(const SkTensor *r, SkTensor *out) {
  if (!sk_tensor_same_shape(r, out) && sk_resize_(out, (SkIntList){r->sizes, r->ndim}, -1)) return -1;
  return sk_copy_(out, r, 0);
}
static inline int sk_composite_write_out(const SkTensor *r, SkTensor *out, SkReads in) {
  return sk_composite_check_out(r, out, "out", in) || sk_composite_store_out(r, out) ? -1 : 0;
}
/* n results r[i] (from a functional that succeeded when rc is 0) into outs[i], named names[i]:
** all checked, then all written; the results released. */
static inline int sk_composite_write_outs(int rc, int n, SkTensor **r, SkTensor *const *outs, const char *const *names,
                                          SkReads in) {
  for (int i = 0; !rc && i < n; i++) rc = sk_composite_check_out(r[i], outs[i], names[i], in);
  for (int i = 0; !rc && i < n; i++)
    for (int j = 0; !rc && j < n; j++) /* two outs of one call may not share memory */
      if (j != i && sk_tensor_may_overlap(outs[i], outs[j]))
        rc = sk_error("unsupported operation: the outputs '%s' and '%s' refer to a single memory location", names[j], names[i]);
  for (int i = 0; !rc && i < n; i++) rc = sk_composite_store_out(r[i], outs[i]);
  for (int i = 0; i < n; i++) sk_tensor_release(r[i]);
  return rc ? -1 : 0;
}
/* self <- r for an in-place composite, r released: r's shape must be self's (an in-place op
** never resizes) and its dtype cast to self's, PyTorch's rules, checked here so that the
** message names 'self' and not the 'src' of the copy_ that writes it. */
static inline int sk_composite_write_inplace(SkTensor *r, SkTensor *self) {
  char a[128], b[128];
  int rc = !sk_tensor_same_shape(r, self)
             ? sk_error("output with shape %s doesn't match the broadcast shape %s (argument 'self')",
                        sk_shape_str(self->ndim, self->sizes, a, sizeof a), sk_shape_str(r->ndim, r->sizes, b, sizeof b))
           : sk_check_cast(r->dtype, self->dtype, "self") ? -1
           : sk_copy_(self, r, 0);
  sk_tensor_release(r);
  return rc;
}
/* A composite's in-place variant from its functional form: `call` stores into r. */
#define SK_INPLACE_FROM(call, self)               \
  do {                                            \
    SkTensor *r = NULL;                           \
    if (call) return -1;                          \
    return sk_composite_write_inplace(r, self);   \
  } while (0)

/* A composite's out variant from its functional form: `call` stores into r; `in` its SkReads. */
#define SK_OUT_FROM(call, out, in)                 \
  do {                                             \
    SkTensor *r = NULL;                            \
    if (call) return -1;                           \
    int rc_ = sk_composite_write_out(r, out, in);  \
    sk_tensor_release(r);                          \
    return rc_;                                    \
  } while (0)

/* The values of integer or bool tensor t on the host as int64, malloc'd with numel + 1 slots
** (an empty t gives an array too); NULL and an error naming op and arg for a Meta tensor, which
** has none. The composites that need values to decide shapes or checks read them here. */
static inline int64_t *sk_host_ints(const SkTensor *t, const char *op, const char *arg) {
  if (t->device.type == SK_DEVICE_META)
    return sk_error("%s: argument '%s' is a meta tensor: its values are needed", op, arg), NULL;
  SkTensor *c = NULL, *k = NULL;
  if (sk_to_device(&c, t, sk_device(SK_DEVICE_CPU, 0), SK_DTYPE_INT64, 0, 0, -1)) return NULL;
  if (sk_contiguous(&k, c, 0)) { sk_tensor_release(c); return NULL; }
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(t->numel + 1));
  if (v) memcpy(v, sk_tensor_data(k), sizeof(int64_t) * (size_t)t->numel);
  else sk_error("%s: out of memory", op);
  sk_tensor_release(c);
  sk_tensor_release(k);
  return v;
}
/* a one-element t's value */
static inline int sk_host_int(const SkTensor *t, const char *op, const char *arg, int64_t *v) {
  int64_t *a = sk_host_ints(t, op, arg);
  if (!a) return -1;
  *v = a[0];
  free(a);
  return 0;
}

/* {==== Tensor lists: an array of n results, owned until handed to an SkTensorList ====
** sk_list_new refuses more than INT32_MAX pieces (SkTensorList counts in int), naming op. */
static inline SkTensor **sk_list_new(int64_t n, const char *op) {
  if (n > INT32_MAX) { sk_error("%s: %lld pieces are too many", op, (long long)n); return NULL; }
  SkTensor **a = calloc((size_t)(n > 0 ? n : 1), sizeof *a);
  if (!a) sk_error("out of memory");
  return a;
}
static inline void sk_list_free(SkTensor **a, int n) {
  if (!a) return;
  for (int i = 0; i < n; i++) sk_tensor_release(a[i]);
  free(a);
}
/* Hands a filled array to *result, or frees it when rc says the filling failed. */
static inline int sk_list_done(SkTensorList *result, SkTensor **a, int n, int rc) {
  if (rc) { sk_list_free(a, n); return -1; }
  result->data = a;
  result->n = n;
  return 0;
}
/* }==== */

/* {==== A tape of temporaries for composites written as expressions ====
** Each step takes tensors (from the tape or borrowed) and returns its result, kept on the
** tape. Once a step fails, later steps return NULL without calling anything — except a step
** whose operands were being computed when the failure happened (a nested step's caller),
** which fails on its NULL operand: the tape keeps the first error's message and raises it
** again when freed. sk_tape_take hands one result out; sk_tape_free releases the rest.
** Two rules keep a failure from being lost or dereferenced: a helper that reads an operand's
** fields (sizes, dtype...) checks tp->rc first, since an operand is NULL once a step failed; and
** a failure reported outside a step is recorded with sk_tape_keep(tp, rc, NULL), never by
** setting tp->rc, which would leave the message empty. */
#define SK_TAPE_N 128 /* layer_norm_double_backward keeps about 80 */
typedef struct SkTape { SkTensor *t[SK_TAPE_N]; int n, rc; char msg[512]; } SkTape;
static inline SkTensor *sk_tape_keep(SkTape *tp, int rc, SkTensor *r) {
  if (rc || tp->n == SK_TAPE_N) {
    sk_tensor_release(r);
    if (!tp->rc) {
      tp->rc = rc ? rc : sk_error("composite: out of temporaries");
      snprintf(tp->msg, sizeof tp->msg, "%s", sk_error_message());
    }
    return NULL;
  }
  return tp->t[tp->n++] = r;
}
/* A step: `call` stores into r (declared here; nested steps shadow it) and returns a status. */
#define SK_TAPE_STEP(tp, call)                                                                \
  ((tp)->rc ? NULL : (__extension__({                                                         \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wshadow\"")            \
    SkTensor *r = NULL;                                                                       \
    int rc_ = (call);                                                                         \
    _Pragma("GCC diagnostic pop")                                                             \
    sk_tape_keep((tp), rc_, r);                                                               \
  })))
static inline SkTensor *sk_tape_take(SkTape *tp, SkTensor *t) {
  for (int i = 0; i < tp->n; i++) if (tp->t[i] == t) { tp->t[i] = NULL; return t; }
  return sk_tensor_retain(t);
}
static inline int sk_tape_free(SkTape *tp) {
  for (int i = 0; i < tp->n; i++) sk_tensor_release(tp->t[i]);
  if (tp->rc) return sk_error("%s", tp->msg);
  return 0;
}
/* The composite's end: r (taken off the tape) into *result unless a step failed; the tape freed. */
static inline int sk_tape_result(SkTape *tp, SkTensor *r, SkTensor **result) {
  if (!tp->rc && r) *result = sk_tape_take(tp, r);
  return sk_tape_free(tp);
}
/* A Scalar as a wrapped-number tensor on the tape (an operand of where, maximum...). */
static inline SkTensor *sk_tape_number(SkTape *tp, SkScalar s) {
  if (tp->rc) return NULL;
  SkTensor *w = sk_tensor_wrap_number(s);
  return sk_tape_keep(tp, w ? 0 : -1, w);
}
/* n host values of dtype `host` as a 1-d tensor of `dtype` (-1: the same) on dev, on the tape
** (indices and weights a composite computes on the host) */
static inline SkTensor *sk_tape_host_tensor(SkTape *tp, const void *data, int64_t n, SkDType host, int dtype, SkDevice dev) {
  if (tp->rc) return NULL;
  SkTensor *h = sk_tensor_empty(1, &n, host, SK_CPU);
  if (!h) return sk_tape_keep(tp, -1, NULL);
  if (n) memcpy(sk_tensor_data(h), data, (size_t)n * sk_dtype_size(host));
  sk_tape_keep(tp, 0, h);
  return SK_TAPE_STEP(tp, sk_to_device(&r, h, dev, dtype, 0, 0, -1));
}
/* }==== */

/* {==== Opmath: the accumulation rule of float16/bfloat16 composites ====
** A composite that chains several rounding steps computes in its opmath type (PyTorch's
** at::opmath_type: float32 for float16 and bfloat16, the dtype itself otherwise) and rounds once
** at the end. dt is the dtype of the composite's result: sk_tape_opmath gives an input of dtype dt
** as a float32 copy when dt is a half type, and any other input as it is (integer indices, a mixed
** call whose dt is float32 already: no copy, so float32 and float64 keep their path and their
** dtype checks); sk_tape_round casts the result back to dt. */
static inline int sk_dtype_is_half(SkDType dt) { return dt == SK_DTYPE_FLOAT16 || dt == SK_DTYPE_BFLOAT16; }
static inline SkDType sk_opmath_dtype(SkDType dt) { return sk_dtype_is_half(dt) ? SK_DTYPE_FLOAT32 : dt; }
static inline SkTensor *sk_tape_opmath(SkTape *tp, const SkTensor *t, SkDType dt) {
  if (!t || !sk_dtype_is_half(dt) || t->dtype != dt) return (SkTensor *)t;
  return SK_TAPE_STEP(tp, sk_to_dtype(&r, t, SK_DTYPE_FLOAT32, 0, 0, -1));
}
static inline SkTensor *sk_tape_round(SkTape *tp, SkTensor *y, SkDType dt) {
  if (!y || y->dtype == dt || !sk_dtype_is_half(dt)) return y;
  return SK_TAPE_STEP(tp, sk_to_dtype(&r, y, dt, 0, 0, -1));
}
/* }==== */

#endif
