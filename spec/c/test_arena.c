/*
** spec/c/test_arena.c — the static memory planner (sk_arena), from C
** Exact offsets worked out by hand for small plans, the invariants (no shared byte between
** items live at the same step, aligned offsets, total >= peak) for 10,000 random items.
** Prints "N passed, M failed".
*/
#include "sk_arena.h"
#include "sk_error.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_check.h"

#define N(a) ((int)(sizeof(a) / sizeof *(a)))

static SkArenaItem item(size_t size, int first, int last) { return (SkArenaItem){size, 1, first, last, 0}; }

/* 1 when every offset is the expected one */
static int offsets_are(int n, const SkArenaItem *items, const size_t *want) {
  for (int i = 0; i < n; i++)
    if (items[i].offset != want[i]) {
      printf("  item %d: offset %zu, want %zu\n", i, items[i].offset, want[i]);
      return 0;
    }
  return 1;
}

/* {==== The invariants, for any plan ==== */
static const SkArenaItem *sorted_items;
static int by_first(const void *pa, const void *pb) {
  int a = sorted_items[*(const int *)pa].first, b = sorted_items[*(const int *)pb].first;
  return (a > b) - (a < b);
}

/* 1 when every offset is a multiple of its align, every item ends within total, and no two
** items live at a common step share a byte. Pairs that meet in time are found from the items
** sorted by first step: j after i meets i iff first_j <= last_i. */
static int plan_is_valid(int n, const SkArenaItem *items, size_t total) {
  for (int i = 0; i < n; i++)
    if (items[i].offset % items[i].align || (items[i].size && items[i].offset + items[i].size > total)) {
      printf("  item %d: offset %zu, size %zu, align %zu, total %zu\n", i, items[i].offset, items[i].size,
             items[i].align, total);
      return 0;
    }
  int *idx = malloc((n > 0 ? (size_t)n : 1) * sizeof *idx), ok = 1;
  for (int i = 0; i < n; i++) idx[i] = i;
  sorted_items = items;
  qsort(idx, (size_t)n, sizeof *idx, by_first);
  for (int a = 0; a < n && ok; a++) {
    const SkArenaItem *x = &items[idx[a]];
    for (int b = a + 1; b < n && items[idx[b]].first <= x->last; b++) {
      const SkArenaItem *y = &items[idx[b]];
      if (x->size && y->size && x->offset < y->offset + y->size && y->offset < x->offset + x->size) {
        printf("  items %d and %d share bytes\n", idx[a], idx[b]);
        ok = 0;
        break;
      }
    }
  }
  free(idx);
  return ok;
}
/* }==== */

/* {==== The plain algorithm, for comparison ==== */
/* Greedy by size as the paper states it, in O(n^2 log n): for each item in turn, the placed
** items that meet it sorted by offset, then the smallest gap that holds it, else past the
** highest end. sk_arena_plan must give the same offsets (its chunks and time buckets only
** skip items that cannot meet). */
static const SkArenaItem *ref_items;
static int ref_by_size(const void *pa, const void *pb) {
  const SkArenaItem *a = &ref_items[*(const int *)pa], *b = &ref_items[*(const int *)pb];
  if (a->size != b->size) return a->size > b->size ? -1 : 1;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  return (*(const int *)pa > *(const int *)pb) - (*(const int *)pa < *(const int *)pb);
}
static int ref_by_offset(const void *pa, const void *pb) {
  size_t a = ref_items[*(const int *)pa].offset, b = ref_items[*(const int *)pb].offset;
  return (a > b) - (a < b);
}
static size_t up(size_t x, size_t align) { return (x + align - 1) / align * align; }
static size_t reference_plan(int n, SkArenaItem *items) {
  int *order = malloc((n > 0 ? (size_t)n : 1) * sizeof *order), *met = malloc((n > 0 ? (size_t)n : 1) * sizeof *met);
  size_t total = 0;
  for (int i = 0; i < n; i++) order[i] = i;
  ref_items = items;
  qsort(order, (size_t)n, sizeof *order, ref_by_size);
  for (int k = 0; k < n; k++) {
    SkArenaItem *x = &items[order[k]];
    x->offset = 0;
    if (!x->size) continue;
    int m = 0;
    for (int j = 0; j < k; j++) {
      const SkArenaItem *y = &items[order[j]];
      if (y->size && y->first <= x->last && x->first <= y->last) met[m++] = order[j];
    }
    qsort(met, (size_t)m, sizeof *met, ref_by_offset);
    size_t end = 0, best = 0, best_gap = SIZE_MAX;
    for (int j = 0; j < m; j++) {
      const SkArenaItem *y = &items[met[j]];
      if (y->offset >= end && up(end, x->align) + x->size <= y->offset && y->offset - end < best_gap) {
        best_gap = y->offset - end;
        best = up(end, x->align);
      }
      if (y->offset + y->size > end) end = y->offset + y->size;
    }
    x->offset = best_gap < SIZE_MAX ? best : up(end, x->align);
    if (x->offset + x->size > total) total = x->offset + x->size;
  }
  free(order);
  free(met);
  return total;
}
/* }==== */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t lcg_state = 0x5eed;
static uint32_t lcg(void) {
  lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(lcg_state >> 33);
}

int main(void) {
  size_t total;

  { /* a -> b -> c -> d, each live while made and read: [i, i+1]. Same sizes go in order of first
    ** step: a at 0; b meets a (step 1), no gap before it, so past it: 4096; c meets only b, and
    ** the gap [0, 4096) before b holds it: 0; d meets only c: 4096. Two buffers live at a time. */
    SkArenaItem chain[] = {item(4096, 0, 1), item(4096, 1, 2), item(4096, 2, 3), item(4096, 3, 4)};
    size_t want[] = {0, 4096, 0, 4096};
    CHECK(sk_arena_plan(N(chain), chain, &total) == 0 && total == 8192 && offsets_are(N(chain), chain, want),
          "a chain ping-pongs between two buffers");
    CHECK(sk_arena_peak(N(chain), chain) == 8192, "a chain's peak is two buffers");
  }

  { /* a diamond: x (input) feeds p at step 1 and q at step 2; y = p + q at step 3, read at 4.
    ** x 4096 [0,2], p 4096 [1,3], q 8192 [2,3], y 4096 [3,4]. Peak: step 2 (x, p, q) and step 3
    ** (p, q, y): 16384. Greedy: q (largest) at 0; x meets q: 8192; p meets q and x: 12288;
    ** y meets q and p (not x): the gap [8192, 12288) between them holds it: 8192. Total 16384. */
    SkArenaItem d[] = {item(4096, 0, 2), item(4096, 1, 3), item(8192, 2, 3), item(4096, 3, 4)};
    size_t want[] = {8192, 12288, 0, 8192};
    CHECK(sk_arena_plan(N(d), d, &total) == 0 && total == 16384 && offsets_are(N(d), d, want),
          "a diamond: both branches live at once, the output reuses the input's bytes");
    CHECK(sk_arena_peak(N(d), d) == 16384, "a diamond's peak");
  }

  { /* The paper's style of example: 8 buffers of a small net.
    **   #  size  live      order by size: 5(64) 7(40) 2(36) 0(32) 1(28) 3(16) 6(10) 4(8)
    **   0   32   [0,1]     5: 0.  7 meets 5 (step 7): 64.  2 meets 5 (step 5), not 7: 64.
    **   1   28   [1,4]     0 meets none: 0.
    **   2   36   [2,5]     1 meets 0 and 2: gap [32, 64) after 0 holds 28: 32.
    **   3   16   [3,5]     3 meets 5 [0,64), 1 [32,60), 2 [64,100): no gap: 100.
    **   4    8   [4,5]     6 meets 5 and 7 [64,104): 104.
    **   5   64   [5,7]     4 meets 5, 1, 2, 3 [100,116): no gap: 116.
    **   6   10   [6,8]
    **   7   40   [7,8]     Total 124 = the peak (step 5: 36 + 16 + 8 + 64). */
    SkArenaItem net[] = {item(32, 0, 1), item(28, 1, 4), item(36, 2, 5), item(16, 3, 5),
                         item(8, 4, 5),  item(64, 5, 7), item(10, 6, 8), item(40, 7, 8)};
    size_t want[] = {0, 32, 64, 100, 116, 0, 104, 64};
    CHECK(sk_arena_plan(N(net), net, &total) == 0 && total == 124 && offsets_are(N(net), net, want),
          "the paper-style example: exact offsets");
    CHECK(sk_arena_peak(N(net), net) == 124, "its peak, reached by the plan");
  }

  { /* The smallest gap that fits wins over the first one.
    **   T 400 [6,6]: 0.  P 200 [0,0]: meets none: 0.  Q 150 [0,5]: meets P: 200.
    **   S 50 [5,6]: meets T [0,400) and Q [200,350): 400.
    **   X 40 [5,5]: meets Q and S; gaps [0,200) (200 bytes) and [350,400) (50): 350.
    ** Total 450 = the peak (step 6: T + S). */
    SkArenaItem g[] = {item(400, 6, 6), item(200, 0, 0), item(150, 0, 5), item(50, 5, 6), item(40, 5, 5)};
    size_t want[] = {0, 0, 200, 400, 350};
    CHECK(sk_arena_plan(N(g), g, &total) == 0 && total == 450 && offsets_are(N(g), g, want),
          "the smallest gap that holds the item, not the first");
    CHECK(sk_arena_peak(N(g), g) == 450, "its peak");
  }

  { /* Alignment. c 1000 [0,2] align 64: 0. a 100 [0,1] align 64: past c's 1000, rounded: 1024.
    ** b 37 [1,2] align 256: the gap [1000, 1024) is too small; past a's 1124, rounded: 1280.
    ** e 10 [2,2] align 256: meets c and b; the gap [1000, 1280) before b holds it at 1024.
    ** Total 1317. */
    SkArenaItem al[] = {{100, 64, 0, 1, 0}, {37, 256, 1, 2, 0}, {1000, 64, 0, 2, 0}, {10, 256, 2, 2, 0}};
    size_t want[] = {1024, 1280, 0, 1024};
    CHECK(sk_arena_plan(N(al), al, &total) == 0 && total == 1317 && offsets_are(N(al), al, want),
          "offsets rounded up to each item's align, in a gap and past the end");
    /* odd sizes, every item live at once: each past the last, rounded up */
    SkArenaItem odd[8];
    for (int i = 0; i < N(odd); i++) odd[i] = (SkArenaItem){(size_t)(97 + 31 * i), i % 2 ? 256 : 64, 0, 3, 0};
    CHECK(sk_arena_plan(N(odd), odd, &total) == 0 && plan_is_valid(N(odd), odd, total),
          "odd sizes at align 64 and 256: aligned, disjoint");
  }

  { /* Zero sizes take offset 0 and no space; equal items with the same interval stack in index
    ** order; one item sits at 0; no items make an empty arena. */
    SkArenaItem z[] = {item(0, 0, 9), item(100, 0, 9), item(0, 3, 3), item(50, 2, 4)};
    size_t wz[] = {0, 0, 0, 100};
    CHECK(sk_arena_plan(N(z), z, &total) == 0 && total == 150 && offsets_are(N(z), z, wz), "zero-size items");
    CHECK(sk_arena_peak(N(z), z) == 150, "zero-size items add nothing to the peak");
    SkArenaItem same[] = {item(10, 2, 4), item(30, 2, 4), item(20, 2, 4), item(30, 2, 4)};
    size_t ws[] = {80, 0, 60, 30}; /* 30 (#1), 30 (#3), 20, 10 */
    CHECK(sk_arena_plan(N(same), same, &total) == 0 && total == 90 && offsets_are(N(same), same, ws),
          "identical intervals: stacked by size, ties by index");
    SkArenaItem one[] = {{12345, 4096, 7, 7, 99}};
    CHECK(sk_arena_plan(1, one, &total) == 0 && total == 12345 && one[0].offset == 0, "a single item");
    CHECK(sk_arena_peak(1, one) == 12345, "a single item's peak");
    total = 77;
    CHECK(sk_arena_plan(0, NULL, &total) == 0 && total == 0 && sk_arena_peak(0, NULL) == 0, "no items");
  }

  { /* Bad input: -1, a message naming the item, and nothing written. */
    SkArenaItem bad[] = {item(8, 0, 1), {8, 0, 0, 1, 5}};
    total = 77;
    CHECK(sk_arena_plan(2, bad, &total) == -1 &&
          strstr(sk_error_message(), "sk_arena_plan: item 1: align 0 is not a power of two") && total == 77 &&
          bad[0].offset == 0 && bad[1].offset == 5, "align 0");
    bad[1].align = 3;
    CHECK(sk_arena_plan(2, bad, &total) == -1 && strstr(sk_error_message(), "item 1: align 3 is not a power of two"),
          "align 3");
    SkArenaItem back[] = {item(8, 4, 3)};
    CHECK(sk_arena_plan(1, back, &total) == -1 &&
          strstr(sk_error_message(), "sk_arena_plan: item 0: last step 3 is before first step 4"), "last < first");
    CHECK(sk_arena_peak(1, back) == 0, "an item live at no step has no peak");
    SkArenaItem huge[] = {item(SIZE_MAX / 2 + 1, 0, 1), item(SIZE_MAX / 2 + 1, 1, 2), {1, 1, 5, 5, 3}};
    CHECK(sk_arena_plan(3, huge, &total) == -1 &&
          strstr(sk_error_message(), "sk_arena_plan: the sizes up to item 1 (9223372036854775808 bytes, align 1) add up "
                                     "past SIZE_MAX") &&
          huge[0].offset == 0 && huge[2].offset == 3 && total == 77, "an arena past SIZE_MAX, nothing written");
    CHECK(sk_arena_peak(3, huge) == SIZE_MAX, "a peak past SIZE_MAX is SIZE_MAX");
    SkArenaItem unaligned_end[] = {item(SIZE_MAX - 10, 0, 0), {4, 64, 0, 0, 0}};
    CHECK(sk_arena_plan(2, unaligned_end, &total) == -1 && strstr(sk_error_message(), "item 1 (4 bytes, align 64)"),
          "rounding up past SIZE_MAX");
    CHECK(sk_arena_plan(-1, NULL, &total) == -1 && strstr(sk_error_message(), "-1 items"), "a negative count");
  }

  { /* Random plans against the plain algorithm: up to 400 items (so chunks of 64 split), steps
    ** over a few to a few hundred, some at the ends of int (the buckets' arithmetic), sizes
    ** from 0, aligns 1 to 4096. */
    enum { NP = 300, MAXN = 400 };
    SkArenaItem *a = malloc(MAXN * sizeof *a), *b = malloc(MAXN * sizeof *b);
    int same = 0, valid = 0;
    for (int t = 0; t < NP; t++) {
      int n = 1 + (int)(lcg() % MAXN), steps = 1 + (int)(lcg() % 400);
      int base = t % 10 == 0 ? INT_MIN : t % 10 == 1 ? INT_MAX - steps + 1 : -(int)(lcg() % 50);
      for (int i = 0; i < n; i++) {
        int first = (int)(lcg() % (uint32_t)steps), len = lcg() % 8 ? (int)(lcg() % 8) : (int)(lcg() % (uint32_t)steps);
        int last = first + len < steps ? first + len : steps - 1;
        size_t size = lcg() % 16 ? 1 + lcg() % (lcg() % 2 ? 100u : 100000u) : 0;
        a[i] = (SkArenaItem){size, (size_t)1 << (lcg() % 13), base + first, base + last, 0};
      }
      memcpy(b, a, (size_t)n * sizeof *a);
      size_t want = reference_plan(n, b);
      int ok = sk_arena_plan(n, a, &total) == 0 && total == want;
      for (int i = 0; i < n && ok; i++) ok = a[i].offset == b[i].offset;
      same += ok;
      valid += plan_is_valid(n, a, total) && total >= sk_arena_peak(n, a);
    }
    CHECK(same == NP, "300 random plans: the plain algorithm's offsets and total");
    CHECK(valid == NP, "300 random plans: aligned, disjoint, at least the peak");
    free(a);
    free(b);
  }

  { /* 10,000 random items: sizes 1 B .. 1 MiB, align 1, 8, 64 or 256, first step in 0..1999;
    ** 15 in 16 live up to 63 steps, 1 in 16 up to the end (long skips, activations kept for a
    ** backward pass). */
    enum { NR = 10000 };
    lcg_state = 0x5eed; /* the same items whatever ran before */
    SkArenaItem *r = malloc(NR * sizeof *r);
    static const size_t aligns[] = {1, 8, 64, 256};
    for (int i = 0; i < NR; i++) {
      int first = (int)(lcg() % 2000), span = lcg() % 16 ? 64 : 2000 - first;
      int last = first + (int)(lcg() % (uint32_t)span);
      r[i] = (SkArenaItem){1 + lcg() % (1u << 20), aligns[lcg() % 4], first, last < 1999 ? last : 1999, 0};
    }
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
      double t0 = now();
      int rc = sk_arena_plan(NR, r, &total);
      double t = now() - t0;
      if (t < best) best = t;
      CHECK(rc == 0, "10,000 random items plan");
    }
    size_t peak = sk_arena_peak(NR, r);
    CHECK(plan_is_valid(NR, r, total), "10,000 random items: aligned, disjoint when live at once");
    CHECK(peak > 0 && total >= peak, "the arena is at least the peak");
    printf("10000 random items: total %zu, peak %zu, total/peak %.4f, planned in %.2f ms (best of 5)\n", total, peak,
           (double)total / (double)peak, best * 1e3);
    free(r);
  }

  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
