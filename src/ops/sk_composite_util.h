/*
** sk_composite_util.h — shapes shared by the composite kernels of src/ops
*/
#ifndef SK_COMPOSITE_UTIL_H
#define SK_COMPOSITE_UTIL_H

#include "sk_ops.h"

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

#endif
