/*
** sk_checked.h — overflow-checked int64 arithmetic for sizes, strides and offsets
** Every size, stride, offset or count computed from user values goes
** through these (once per op call, never per element): signed overflow is
** undefined behaviour in C, and a wrapped size is a wrong tensor.
** Each returns 1 when the exact result does not fit in int64.
*/
#ifndef SK_CHECKED_H
#define SK_CHECKED_H

#include <stdint.h>

static inline int sk_mul_overflow(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }
static inline int sk_add_overflow(int64_t a, int64_t b, int64_t *out) { return __builtin_add_overflow(a, b, out); }
static inline int sk_sub_overflow(int64_t a, int64_t b, int64_t *out) { return __builtin_sub_overflow(a, b, out); }

/* ceil(a / b) for a >= 0, b > 0, without forming a + b - 1 (b may be huge). */
static inline int64_t sk_ceil_div(int64_t a, int64_t b) { return a == 0 ? 0 : (a - 1) / b + 1; }

#ifdef __SIZEOF_INT128__
/* v in decimal: a size computed in 128-bit arithmetic (to know when it overflows) is printed as
** it is in an error, never cast to long long (which shows a wrapped value). buf holds
** SK_I128_CHARS: 39 digits, a sign and the NUL. */
#define SK_I128_CHARS 41
static inline const char *sk_i128_str(__int128 v, char *buf) {
  char t[SK_I128_CHARS];
  int n = 0, k = 0;
  unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
  do t[n++] = (char)('0' + (int)(u % 10)); while ((u /= 10) != 0);
  if (v < 0) buf[k++] = '-';
  while (n) buf[k++] = t[--n];
  buf[k] = 0;
  return buf;
}
#endif

#endif
