/*
** sk_elem.h — one element of any dtype, read and written through a pointer
** Host code and CUDA device code both include these, so a conversion gives the
** same value on either side. Integer stores of floating values truncate toward
** zero as C casts do; NaN, ±inf and values outside the target's range (int64 for
** int64, int32 for the narrower dtypes, which then keep the low bits) give the
** type's minimum, x86's "integer indefinite" (cvttsd2si), which is what PyTorch
** gives on x86 — defined here on every machine, never C's undefined cast.
*/
#ifndef SK_ELEM_H
#define SK_ELEM_H

#include "sk_dtype.h"

/* The comparisons are false for NaN; the bounds are exact doubles (±2^63, ±2^31). */
SK_HD static inline int64_t sk_double_to_int64(double v) {
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}
SK_HD static inline int32_t sk_double_to_int32(double v) {
  return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN;
}

/* Bool and integer dtypes only. */
SK_HD static inline int64_t sk_elem_load_integral(const void *p, SkDType t) {
  switch (t) {
  case SK_DTYPE_BOOL: return *(const uint8_t *)p != 0;
  case SK_DTYPE_UINT8: return *(const uint8_t *)p;
  case SK_DTYPE_INT8: return *(const int8_t *)p;
  case SK_DTYPE_INT16: return *(const int16_t *)p;
  case SK_DTYPE_INT32: return *(const int32_t *)p;
  default: return *(const int64_t *)p;
  }
}
SK_HD static inline void sk_elem_store_integral(void *p, SkDType t, int64_t v) {
  switch (t) {
  case SK_DTYPE_BOOL: *(uint8_t *)p = v != 0; break;
  case SK_DTYPE_UINT8: *(uint8_t *)p = (uint8_t)v; break;
  case SK_DTYPE_INT8: *(int8_t *)p = (int8_t)v; break;
  case SK_DTYPE_INT16: *(int16_t *)p = (int16_t)v; break;
  case SK_DTYPE_INT32: *(int32_t *)p = (int32_t)v; break;
  default: *(int64_t *)p = v; break;
  }
}
/* Floating dtypes only. */
SK_HD static inline double sk_elem_load_floating(const void *p, SkDType t) {
  switch (t) {
  case SK_DTYPE_FLOAT16: return sk_half_to_float(*(const uint16_t *)p);
  case SK_DTYPE_BFLOAT16: return sk_bf16_to_float(*(const uint16_t *)p);
  case SK_DTYPE_FLOAT32: return *(const float *)p;
  default: return *(const double *)p;
  }
}
SK_HD static inline void sk_elem_store_floating(void *p, SkDType t, double v) {
  switch (t) {
  case SK_DTYPE_FLOAT16: *(uint16_t *)p = sk_float_to_half((float)v); break;
  case SK_DTYPE_BFLOAT16: *(uint16_t *)p = sk_float_to_bf16((float)v); break;
  case SK_DTYPE_FLOAT32: *(float *)p = (float)v; break;
  default: *(double *)p = v; break;
  }
}

/* Any dtype. */
SK_HD static inline double sk_elem_load_double(const void *p, SkDType t) {
  return sk_dtype_is_floating(t) ? sk_elem_load_floating(p, t) : (double)sk_elem_load_integral(p, t);
}
SK_HD static inline int64_t sk_elem_load_int64(const void *p, SkDType t) {
  return sk_dtype_is_floating(t) ? sk_double_to_int64(sk_elem_load_floating(p, t)) : sk_elem_load_integral(p, t);
}
SK_HD static inline void sk_elem_store_double(void *p, SkDType t, double v) {
  if (sk_dtype_is_floating(t)) sk_elem_store_floating(p, t, v);
  else if (t == SK_DTYPE_BOOL) *(uint8_t *)p = v != 0;
  else if (t == SK_DTYPE_INT64) *(int64_t *)p = sk_double_to_int64(v);
  else sk_elem_store_integral(p, t, sk_double_to_int32(v));
}
SK_HD static inline void sk_elem_store_int64(void *p, SkDType t, int64_t v) {
  if (sk_dtype_is_floating(t)) sk_elem_store_floating(p, t, (double)v);
  else sk_elem_store_integral(p, t, v);
}

#endif
