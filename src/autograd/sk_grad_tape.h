/*
** sk_grad_tape.h — the end of the backward helpers with several results (shared by
** sk_grad_helpers.c and sk_grad_linalg.c): the tape of sk_composite_util.h, freed, and the
** gradients handed out as a list.
*/
#ifndef SK_GRAD_TAPE_H
#define SK_GRAD_TAPE_H

#include "sk_autograd.h"
#include "sk_composite_util.h"

/* A step of a formula as a function: NULL once a step failed, else the op's result kept on the tape. */
#define SK_GRAD_TAPE_OP(name, args, call)                  \
  static inline SkTensor *name args {                      \
    SkTensor *r = NULL;                                    \
    if (tp->rc) return NULL;                               \
    int rc_ = call; /* before r is read */                 \
    return sk_tape_keep(tp, rc_, r);                       \
  }
SK_GRAD_TAPE_OP(t_mul, (SkTape *tp, const SkTensor *a, const SkTensor *b), sk_mul(&r, a, b))
SK_GRAD_TAPE_OP(t_div, (SkTape *tp, const SkTensor *a, const SkTensor *b), sk_div(&r, a, b))
SK_GRAD_TAPE_OP(t_add, (SkTape *tp, const SkTensor *a, const SkTensor *b), sk_add(&r, a, b, sk_scalar_int(1)))
SK_GRAD_TAPE_OP(t_sub, (SkTape *tp, const SkTensor *a, const SkTensor *b), sk_sub(&r, a, b, sk_scalar_int(1)))
SK_GRAD_TAPE_OP(t_neg, (SkTape *tp, const SkTensor *a), sk_neg(&r, a))
SK_GRAD_TAPE_OP(t_scale, (SkTape *tp, const SkTensor *a, double s), sk_mul_Scalar(&r, a, sk_scalar_float(s)))

/* The n (2 or 3) gradients a, b[, c] (each may be NULL) as *out, the tape freed. */
static inline int sk_grad_tape_list(SkTape *tp, SkTensorList *out, int n, SkTensor *a, SkTensor *b, SkTensor *c) {
  SkTensor **res = tp->rc ? NULL : calloc(4, sizeof *res);
  if (!tp->rc && !res) sk_tape_keep(tp, sk_error("out of memory"), NULL);
  if (res) res[0] = sk_tensor_retain(a), res[1] = sk_tensor_retain(b), res[2] = n > 2 ? sk_tensor_retain(c) : NULL;
  int rc = sk_tape_free(tp);
  out->data = res;
  out->n = res ? n : 0;
  if (rc) sk_tensorlist_free(out);
  return rc;
}

#endif
