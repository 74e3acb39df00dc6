/*
** sk_unary_composite.c — unary ops made of other ops: relu, relu_, isnan, isinf, isfinite
** As in PyTorch: relu is clamp(self, min=0) (NaN stays NaN, integers keep
** their dtype, bool is refused); the three tests give bool tensors, and on
** integer and bool inputs a constant (no integer is NaN or infinite).
** Everything goes through the dispatched API, so every backend has them.
** Ownership: arguments are borrowed; temporaries are released on every path.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

#include <math.h>

/* {==== relu ==== */
static int relu_check(const SkTensor *self) {
  return self->dtype == SK_DTYPE_BOOL ? sk_error("Boolean inputs not supported for relu") : 0;
}

int sk_default_relu(SkTensor **result, const SkTensor *self) {
  if (relu_check(self)) return -1;
  return sk_clamp(result, self, sk_scalar_int(0), (SkScalar){.kind = SK_SCALAR_NONE});
}

int sk_default_relu_(SkTensor *self) {
  if (relu_check(self)) return -1;
  return sk_clamp_(self, sk_scalar_int(0), (SkScalar){.kind = SK_SCALAR_NONE});
}
/* }==== */

/* {==== isnan, isinf, isfinite ==== */
/* A bool tensor of self's shape on self's device, filled with value. */
static int bool_like(SkTensor **result, const SkTensor *self, int value) {
  return sk_full(result, (SkIntList){self->sizes, self->ndim}, sk_scalar_bool(value), SK_DTYPE_BOOL, -1,
                 self->device, -1);
}

/* self != self: true exactly for NaN. */
int sk_default_isnan(SkTensor **result, const SkTensor *self) { return sk_ne(result, self, self); }

/* abs(self) == inf. */
int sk_default_isinf(SkTensor **result, const SkTensor *self) {
  if (!sk_dtype_is_floating(self->dtype)) return bool_like(result, self, 0);
  SkTensor *a = NULL, *inf = sk_tensor_wrap_number(sk_scalar_float(INFINITY));
  int rc = inf ? sk_abs(&a, self) : -1;
  if (!rc) rc = sk_eq(result, a, inf);
  sk_tensor_release(a);
  sk_tensor_release(inf);
  return rc;
}

/* self - self == 0: x - x is 0 for every finite x and NaN for NaN and ±inf. */
int sk_default_isfinite(SkTensor **result, const SkTensor *self) {
  if (!sk_dtype_is_floating(self->dtype)) return bool_like(result, self, 1);
  SkTensor *d = NULL, *zero = sk_tensor_wrap_number(sk_scalar_int(0));
  int rc = zero ? sk_sub(&d, self, self, sk_scalar_int(1)) : -1;
  if (!rc) rc = sk_eq(result, d, zero);
  sk_tensor_release(d);
  sk_tensor_release(zero);
  return rc;
}
/* }==== */
