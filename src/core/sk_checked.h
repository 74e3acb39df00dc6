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

#endif
