/*
** sk_random.c — the global seed and offset of the Philox stream
*/
#include "sk_random.h"
#include "sk_error.h"

static uint64_t g_seed = SK_DEFAULT_SEED, g_offset;

void sk_manual_seed(uint64_t seed) { g_seed = seed; g_offset = 0; }
uint64_t sk_initial_seed(void) { return g_seed; }

uint64_t sk_random_reserve(uint64_t n) {
  uint64_t first = g_offset;
  g_offset += n;
  return first;
}

void sk_random_get_state(uint64_t *seed, uint64_t *offset) { *seed = g_seed; *offset = g_offset; }
void sk_random_set_state(uint64_t seed, uint64_t offset) { g_seed = seed; g_offset = offset; }

int64_t sk_random_upper(SkDType dt) {
  switch (dt) {
  case SK_DTYPE_BOOL: return 1;
  case SK_DTYPE_UINT8: return UINT8_MAX;
  case SK_DTYPE_INT8: return INT8_MAX;
  case SK_DTYPE_INT16: return INT16_MAX;
  case SK_DTYPE_INT32: return INT32_MAX;
  case SK_DTYPE_INT64: return INT64_MAX;
  case SK_DTYPE_FLOAT16: return (int64_t)1 << 11;
  case SK_DTYPE_BFLOAT16: return (int64_t)1 << 8;
  case SK_DTYPE_FLOAT32: return (int64_t)1 << 24;
  default: return (int64_t)1 << 53;
  }
}

int sk_random_check_randperm(int64_t n, int dtype) {
  if (n < 0) return sk_error("randperm: argument 'n' must be non-negative, got %lld", (long long)n);
  SkDType dt = dtype >= 0 ? (SkDType)dtype : SK_DTYPE_INT64;
  if (dt == SK_DTYPE_BOOL || n - 1 > sk_random_upper(dt))
    return sk_error("randperm: n=%lld does not fit in dtype %s", (long long)n, sk_dtype_name(dt));
  return 0;
}
