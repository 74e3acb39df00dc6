/*
** sk_composite_util.h — shapes shared by the composite kernels of src/ops
*/
#ifndef SK_COMPOSITE_UTIL_H
#define SK_COMPOSITE_UTIL_H

#include "sk_ops.h"
#include "sk_error.h"

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

#endif
