/*
** sk_dtype.c — dtype tables and PyTorch's promotion lattice
*/
#include "sk_dtype.h"
#include "sk_error.h"

static const struct { const char *name; } info[SK_DTYPE_COUNT] = {
  {"bool"}, {"uint8"}, {"int8"}, {"int16"}, {"int32"}, {"int64"}, {"float16"}, {"bfloat16"}, {"float32"}, {"float64"},
};

/* PyTorch's aliases, accepted on input; names are always printed canonically. */
static const struct { const char *alias; SkDType t; } aliases[] = {
  {"float", SK_DTYPE_FLOAT32}, {"double", SK_DTYPE_FLOAT64}, {"half", SK_DTYPE_FLOAT16},
  {"long", SK_DTYPE_INT64}, {"int", SK_DTYPE_INT32}, {"short", SK_DTYPE_INT16},
};

const char *sk_dtype_name(SkDType t) { return (unsigned)t < SK_DTYPE_COUNT ? info[t].name : "?"; }

const char *sk_dtype_torch_name(SkDType t) {
  static const char *const names[SK_DTYPE_COUNT] = {"Bool", "Byte", "Char", "Short", "Int", "Long",
                                                    "Half", "BFloat16", "Float", "Double"};
  return (unsigned)t < SK_DTYPE_COUNT ? names[t] : "?";
}

/* The first letter is compared before strcmp: most names differ there, and this runs for every dtype a script passes. */
int sk_dtype_from_name(const char *name, SkDType *out) {
  for (int i = 0; i < SK_DTYPE_COUNT; i++)
    if (name[0] == info[i].name[0] && strcmp(name, info[i].name) == 0) { *out = (SkDType)i; return 0; }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (name[0] == aliases[i].alias[0] && strcmp(name, aliases[i].alias) == 0) { *out = aliases[i].t; return 0; }
  return -1;
}

int sk_dtype_category(SkDType t) {
  return t == SK_DTYPE_BOOL ? SK_CAT_BOOL : sk_dtype_is_floating(t) ? SK_CAT_FLOAT : SK_CAT_INT;
}

SkDType sk_dtype_promote(SkDType a, SkDType b) {
  if (a == b) return a;
  if (a == SK_DTYPE_BOOL) return b;
  if (b == SK_DTYPE_BOOL) return a;
  int fa = sk_dtype_is_floating(a), fb = sk_dtype_is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) { /* float16 with bfloat16 meet at float32; otherwise the wider wins */
    if ((a == SK_DTYPE_FLOAT16 && b == SK_DTYPE_BFLOAT16) || (a == SK_DTYPE_BFLOAT16 && b == SK_DTYPE_FLOAT16))
      return SK_DTYPE_FLOAT32;
    return a > b ? a : b;
  }
  /* integers: uint8 with a signed type needs a signed type wider than 8 bits */
  if (a == SK_DTYPE_UINT8 || b == SK_DTYPE_UINT8) {
    SkDType other = a == SK_DTYPE_UINT8 ? b : a;
    return other == SK_DTYPE_INT8 ? SK_DTYPE_INT16 : other;
  }
  return a > b ? a : b;
}

int sk_dtype_can_cast(SkDType from, SkDType to) {
  if (sk_dtype_is_floating(from) && !sk_dtype_is_floating(to)) return 0;
  if (from != SK_DTYPE_BOOL && to == SK_DTYPE_BOOL) return 0;
  return 1;
}

int sk_check_cast(SkDType from, SkDType to, const char *arg) {
  if (sk_dtype_can_cast(from, to)) return 0;
  return sk_error("result type %s can't be cast to the desired output type %s (argument '%s')", sk_dtype_name(from),
                  sk_dtype_name(to), arg);
}
