/*
** sk_meta_special.c — meta functions of the pointwise ops of issue 13 (kernels in
** kernels/cpu/sk_cpu_special.c): logaddexp, xlogy, copysign, nextafter, fmax, gcd,
** igamma, erfinv, lgamma, polygamma, logit, sgn, signbit, frexp, the special.* functions ...
** Each builds the iterator as PyTorch's meta does (binary_op, binary_float_op,
** unary_float_op, or a bool result for the predicates), then refuses a common
** dtype PyTorch's CPU kernel has no loop for, with that kernel's name, so Meta
** tensors fail as CPU ones do.
*/
#include "sk_kernels.h"
#include "sk_error.h"

/* {==== Dtype sets ==== */
#define D(t) (1u << SK_DTYPE_##t)
#define F64_32 (D(FLOAT64) | D(FLOAT32))
#define F_BF (F64_32 | D(BFLOAT16))
#define FLOATS (F_BF | D(FLOAT16))
#define INTS (D(UINT8) | D(INT8) | D(INT16) | D(INT32) | D(INT64))
#define ALL (FLOATS | INTS | D(BOOL))

static int check_dtype(const SkMeta *m, const char *kname, unsigned mask) {
  SkDType dt = m->iter->common_dtype;
  if (mask >> dt & 1u) return 0;
  return sk_error("\"%s\" not implemented for '%s'", kname, sk_dtype_torch_name(dt));
}
/* }==== */

/* {==== Binary ops ==== */
/* FLOAT: binary_float_op (integers compute in the default float dtype), else binary_op. */
#define BINARY_META(fn, FLOAT, kname, mask)                                         \
  int sk_meta_##fn(SkMeta *m, const SkTensor *self, const SkTensor *other) {        \
    int rc = FLOAT ? sk_iter_binary_float_op(m, self, other) : sk_iter_binary_op(m, self, other); \
    return rc ? rc : check_dtype(m, kname, mask);                                   \
  }
BINARY_META(logaddexp, 0, "logaddexp_cpu", F_BF)
BINARY_META(logaddexp2, 0, "logaddexp2_cpu", F_BF)
BINARY_META(xlogy_OutTensor, 1, "xlogy_cpu", FLOATS)
BINARY_META(special_xlog1py, 1, "xlog1py_cpu", FLOATS)
BINARY_META(copysign, 1, "copysign_cpu", FLOATS)
BINARY_META(nextafter, 0, "nextafter_cpu", F_BF)
BINARY_META(fmax, 0, "fmax_cpu", ALL)
BINARY_META(fmin, 0, "fmin_cpu", ALL)
BINARY_META(gcd, 0, "gcd_cpu", INTS)
BINARY_META(lcm, 0, "lcm_cpu", INTS)
BINARY_META(igamma, 0, "igamma_cpu", FLOATS)
BINARY_META(igammac, 0, "igammac_cpu", FLOATS)
BINARY_META(special_zeta, 1, "zeta_cpu", F64_32)
#define POLY_META(p) BINARY_META(special_##p, 1, #p "_cpu", F64_32)
POLY_META(chebyshev_polynomial_t)
POLY_META(chebyshev_polynomial_u)
POLY_META(chebyshev_polynomial_v)
POLY_META(chebyshev_polynomial_w)
POLY_META(shifted_chebyshev_polynomial_t)
POLY_META(shifted_chebyshev_polynomial_u)
POLY_META(shifted_chebyshev_polynomial_v)
POLY_META(shifted_chebyshev_polynomial_w)
POLY_META(hermite_polynomial_h)
POLY_META(hermite_polynomial_he)
POLY_META(laguerre_polynomial_l)
POLY_META(legendre_polynomial_p)

int sk_meta_heaviside(SkMeta *m, const SkTensor *self, const SkTensor *values) {
  if (self->dtype != values->dtype) return sk_error("heaviside is not yet implemented for tensors with different dtypes.");
  return sk_iter_binary_op(m, self, values);
}
/* }==== */

/* {==== Unary ops ==== */
#define UNARY_FLOAT_META(fn, kname, mask)                               \
  int sk_meta_##fn(SkMeta *m, const SkTensor *self) {                   \
    int rc = sk_iter_unary_float_op(m, self);                           \
    return rc ? rc : check_dtype(m, kname, mask);                       \
  }
UNARY_FLOAT_META(erfinv, "erfinv_vml_cpu", F_BF)
UNARY_FLOAT_META(lgamma, "lgamma_vml_cpu", F_BF)
UNARY_FLOAT_META(digamma, "digamma", F_BF)
UNARY_FLOAT_META(i0, "i0_vml_cpu", F_BF)
UNARY_FLOAT_META(sinc, "sinc_cpu", F_BF)
UNARY_FLOAT_META(special_entr, "entr_cpu", F_BF)
UNARY_FLOAT_META(special_ndtri, "ndtri_cpu", F64_32)
UNARY_FLOAT_META(special_log_ndtr, "log_ndtr_cpu", F64_32)
UNARY_FLOAT_META(special_erfcx, "erfcx_cpu", F64_32)
UNARY_FLOAT_META(special_i0e, "i0e_cpu", F_BF)
UNARY_FLOAT_META(special_i1, "i1_cpu", F64_32)
UNARY_FLOAT_META(special_i1e, "i1e_cpu", F64_32)
UNARY_FLOAT_META(special_bessel_j0, "bessel_j0_cpu", F64_32)
UNARY_FLOAT_META(special_bessel_j1, "bessel_j1_cpu", F64_32)
UNARY_FLOAT_META(special_bessel_y0, "bessel_y0_cpu", F64_32)
UNARY_FLOAT_META(special_bessel_y1, "bessel_y1_cpu", F64_32)
UNARY_FLOAT_META(special_modified_bessel_i0, "modified_bessel_i0_cpu", F64_32)
UNARY_FLOAT_META(special_modified_bessel_i1, "modified_bessel_i1_cpu", F64_32)
UNARY_FLOAT_META(special_spherical_bessel_j0, "spherical_bessel_j0_cpu", F64_32)
UNARY_FLOAT_META(special_airy_ai, "airy_ai_cpu", F64_32)
UNARY_FLOAT_META(special_modified_bessel_k0, "modified_bessel_k0_cpu", F64_32)
UNARY_FLOAT_META(special_modified_bessel_k1, "modified_bessel_k1_cpu", F64_32)
UNARY_FLOAT_META(special_scaled_modified_bessel_k0, "scaled_modified_bessel_k0_cpu", F64_32)
UNARY_FLOAT_META(special_scaled_modified_bessel_k1, "scaled_modified_bessel_k1_cpu", F64_32)

int sk_meta_sgn(SkMeta *m, const SkTensor *self) { return sk_iter_unary_op(m, self); }

int sk_meta_polygamma(SkMeta *m, int64_t n, const SkTensor *self) {
  if (n < 0) return sk_error("polygamma(n, x) does not support negative n.");
  int rc = sk_iter_unary_float_op(m, self);
  return rc ? rc : check_dtype(m, "polygamma", F_BF);
}

int sk_meta_logit(SkMeta *m, const SkTensor *self, SkOptDouble eps) {
  (void)eps;
  int rc = sk_iter_unary_float_op(m, self);
  return rc ? rc : check_dtype(m, "logit_cpu", F_BF);
}

/* A bool result from an input read in its own dtype (PyTorch's unary_force_boolean_op). */
#define PREDICATE_META(fn)                                                          \
  int sk_meta_##fn(SkMeta *m, const SkTensor *self) {                               \
    static const char *const names[] = {"self"};                                    \
    SkIterConfig c = sk_iter_config();                                              \
    c.bool_output = 1;                                                              \
    c.keep_dtype_mask = 1;                                                          \
    return sk_iter_build(m->iter, m, &c, 1, 1, &self, names);                       \
  }
PREDICATE_META(signbit)
PREDICATE_META(isposinf)
PREDICATE_META(isneginf)

/* frexp: mantissa of self's dtype, exponent int32, both of self's shape; an out of another dtype is an error. */
int sk_meta_frexp_Tensor(SkMeta *m, const SkTensor *self) {
  if (!sk_dtype_is_floating(self->dtype)) return sk_error("torch.frexp() only supports floating-point dtypes");
  const SkTensor *mant = sk_meta_maybe_output(m, 0), *ex = sk_meta_maybe_output(m, 1);
  if (m->variant == SK_VARIANT_OUT && mant && mant->dtype != self->dtype)
    return sk_error("torch.frexp() expects mantissa to have dtype %s but got %s", sk_dtype_name(self->dtype),
                    sk_dtype_name(mant->dtype));
  if (m->variant == SK_VARIANT_OUT && ex && ex->dtype != SK_DTYPE_INT32)
    return sk_error("torch.frexp() expects exponent to have int dtype but got %s", sk_dtype_name(ex->dtype));
  if (sk_meta_set_output(m, 0, self->ndim, self->sizes, NULL, self->dtype)) return -1;
  return sk_meta_set_output(m, 1, self->ndim, self->sizes, NULL, SK_DTYPE_INT32);
}
/* }==== */
