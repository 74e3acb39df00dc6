/*
** sk_dtype.h — element types, scalars and PyTorch's promotion rules
** Half types are stored as 16-bit patterns and computed in float on the CPU.
** Order matters: it is the order of sk's type tables and Lua names.
*/
#ifndef SK_DTYPE_H
#define SK_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Functions that CUDA device code shares with the host (sk_elem.h). */
#ifdef __CUDACC__
#define SK_HD __host__ __device__
#else
#define SK_HD
#endif

typedef enum SkDType {
  SK_DTYPE_BOOL, SK_DTYPE_UINT8, SK_DTYPE_INT8, SK_DTYPE_INT16, SK_DTYPE_INT32,
  SK_DTYPE_INT64, SK_DTYPE_FLOAT16, SK_DTYPE_BFLOAT16, SK_DTYPE_FLOAT32,
  SK_DTYPE_FLOAT64, SK_DTYPE_COUNT
} SkDType;

/* Promotion categories: bool < integral < floating. */
enum { SK_CAT_BOOL, SK_CAT_INT, SK_CAT_FLOAT };

/* log2 of a dtype's size in bytes, 4 bits per dtype in enum order (1 1 1 2 4 8 2 2 4 8 bytes):
** inline, as every view, stride and byte count asks it. */
SK_HD static inline unsigned sk_dtype_shift(SkDType t) { return (unsigned)(0x3211321000ull >> (4 * (unsigned)t)) & 15u; }
SK_HD static inline size_t sk_dtype_size(SkDType t) { return (size_t)1 << sk_dtype_shift(t); }
const char *sk_dtype_name(SkDType t);
/* PyTorch's ScalarType name ("Float"), only for messages that quote a PyTorch kernel's text. */
const char *sk_dtype_torch_name(SkDType t);
int sk_dtype_from_name(const char *name, SkDType *out); /* 0 ok, -1 unknown (no error set) */
int sk_dtype_category(SkDType t);
SK_HD static inline int sk_dtype_is_floating(SkDType t) { return t >= SK_DTYPE_FLOAT16; }
static inline int sk_dtype_is_integral(SkDType t) { return t > SK_DTYPE_BOOL && t <= SK_DTYPE_INT64; }
SkDType sk_dtype_promote(SkDType a, SkDType b);
/* PyTorch's canCast: no floating -> integral, no non-bool -> bool. */
int sk_dtype_can_cast(SkDType from, SkDType to);
/* 0 when a result of dtype `from` may be written to argument `arg` of dtype `to`, else the one
** error for it: "result type F can't be cast to the desired output type T (argument 'arg')". */
int sk_check_cast(SkDType from, SkDType to, const char *arg);

/* {==== Half types ==== */
SK_HD static inline float sk_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else { /* subnormal: normalize */
      int e = -1;
      do { man <<= 1; e++; } while (!(man & 0x400));
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 0x1f) bits = sign | 0x7f800000u | man << 13;
  else bits = sign | (exp + 112) << 23 | man << 13;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

SK_HD static inline uint16_t sk_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* overflow to inf */
  if (absx < 0x38800000u) { /* subnormal or zero: round to nearest even */
    float a;
    memcpy(&a, &absx, 4);
    a += 0.5f; /* 0.5 = 2^-1: shifts the half subnormal bits into the low mantissa */
    uint32_t b;
    memcpy(&b, &a, 4);
    return (uint16_t)(sign | (b - 0x3f000000u));
  }
  uint32_t mant_odd = (absx >> 13) & 1;
  absx += 0xc8000fffu + mant_odd; /* rebias exponent and round to nearest even */
  return (uint16_t)(sign | (absx >> 13));
}

SK_HD static inline float sk_bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

SK_HD static inline uint16_t sk_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}
/* }==== */

/* {==== Scalars ==== */
typedef enum { SK_SCALAR_NONE, SK_SCALAR_BOOL, SK_SCALAR_INT, SK_SCALAR_FLOAT } SkScalarKind;

typedef union SkScalarBits { int64_t i; double f; } SkScalarBits; /* bool and int use i */

typedef struct SkScalar {
  SkScalarKind kind;
  SkScalarBits v;
} SkScalar;

static inline SkScalar sk_scalar_int(int64_t i) { SkScalar s; s.kind = SK_SCALAR_INT; s.v.i = i; return s; }
static inline SkScalar sk_scalar_float(double f) { SkScalar s; s.kind = SK_SCALAR_FLOAT; s.v.f = f; return s; }
static inline SkScalar sk_scalar_bool(int b) { SkScalar s; s.kind = SK_SCALAR_BOOL; s.v.i = b != 0; return s; }
static inline double sk_scalar_to_double(SkScalar s) { return s.kind == SK_SCALAR_FLOAT ? s.v.f : (double)s.v.i; }
static inline int64_t sk_scalar_to_int(SkScalar s) { return s.kind == SK_SCALAR_FLOAT ? (int64_t)s.v.f : s.v.i; }
/* The dtype a Scalar has as a wrapped number: bool, int64 or float64. */
static inline SkDType sk_scalar_dtype(SkScalar s) {
  return s.kind == SK_SCALAR_FLOAT ? SK_DTYPE_FLOAT64 : s.kind == SK_SCALAR_BOOL ? SK_DTYPE_BOOL : SK_DTYPE_INT64;
}
/* }==== */

#endif
