/*
** sk_random.c — the global seed and offset of the Philox stream
*/
#include "sk_random.h"

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
