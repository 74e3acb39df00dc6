/*
** sk_reduce.c — the reductions' composite forms: prod and max/min over every
** element, the unbiased forms of var/std, norm with a Scalar p. They call only
** the dispatched API, so they serve every backend.
*/
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_error.h"

#include <math.h>
#include <string.h>

static const int64_t no_dims[1] = {0}; /* data of an empty (not None) int list */

/* {==== Composite forms ==== */
/* prod over everything: prod over dim 0 of the flattened tensor. */
int sk_default_prod(SkTensor **result, const SkTensor *self, int dtype) {
  static const int64_t flat[1] = {-1};
  SkTensor *f = NULL;
  int rc = sk_reshape(&f, self, (SkIntList){flat, 1});
  if (!rc) rc = sk_prod_dim_int(result, f, 0, 0, dtype);
  sk_tensor_release(f);
  return rc;
}

/* max()/min() over everything: amax/amin, after PyTorch's own message for an empty tensor. */
static int extremum_all(SkTensor **result, const SkTensor *self, int is_max) {
  if (self->numel == 0)
    return sk_error("%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
                    "with the 'dim' argument.", is_max ? "max" : "min");
  SkIntList all = {no_dims, 0};
  return is_max ? sk_amax(result, self, all, 0) : sk_amin(result, self, all, 0);
}

int sk_default_max(SkTensor **result, const SkTensor *self) { return extremum_all(result, self, 1); }
int sk_default_min(SkTensor **result, const SkTensor *self) { return extremum_all(result, self, 0); }

/* var/std with `unbiased`: correction 1 (unbiased) or 0. */
static SkScalar correction_of(int unbiased) { return sk_scalar_int(unbiased ? 1 : 0); }
static const SkIntList all_dims = {NULL, 0};

int sk_math_var(SkTensor **result, const SkTensor *self, int unbiased) {
  return sk_var_correction(result, self, all_dims, correction_of(unbiased), 0);
}
int sk_math_var_dim(SkTensor **result, const SkTensor *self, SkIntList dim, int unbiased, int keepdim) {
  return sk_var_correction(result, self, dim, correction_of(unbiased), keepdim);
}
int sk_math_var_out(const SkTensor *self, SkIntList dim, int unbiased, int keepdim, SkTensor *out) {
  return sk_var_correction_out(self, dim, correction_of(unbiased), keepdim, out);
}
int sk_math_std(SkTensor **result, const SkTensor *self, int unbiased) {
  return sk_std_correction(result, self, all_dims, correction_of(unbiased), 0);
}
int sk_math_std_dim(SkTensor **result, const SkTensor *self, SkIntList dim, int unbiased, int keepdim) {
  return sk_std_correction(result, self, dim, correction_of(unbiased), keepdim);
}
int sk_math_std_out(const SkTensor *self, SkIntList dim, int unbiased, int keepdim, SkTensor *out) {
  return sk_std_correction_out(self, dim, correction_of(unbiased), keepdim, out);
}

/* norm(p=2) over everything. */
int sk_default_norm_Scalar(SkTensor **result, const SkTensor *self, SkScalar p) {
  return sk_norm_ScalarOpt_dim(result, self, p, (SkIntList){no_dims, 0}, 0);
}
/* }==== */
