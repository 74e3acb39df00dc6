/*
** sk_arena.c — the static memory planner: greedy-by-size offsets, and the peak they are
** measured against
** Greedy by size (TFLite's GreedyBySizeAssignment; Pisarchyk & Lee 2020): items go in order of
** non-increasing size (ties: earlier first step, then lower index, so a plan is reproducible);
** each takes the smallest gap, among the placed items whose live intervals meet its own (in
** offset order, and before the first), that holds it at its alignment, else the first aligned
** offset past the highest end among them. Zero-size items take offset 0 and no space.
** Invariant: the placed items are kept in non-decreasing offset order; two of them whose
** intervals intersect share no byte; no end passes the sum over placed items of
** size + align - 1 (an item ends at most that much past the highest end before it), which
** the plan checks fits in size_t before it starts, so no offset arithmetic can wrap.
*/
#include "sk_arena.h"
#include "sk_error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* {==== The placed items ==== */
/* In offset order, cut into chunks of at most CHUNK (each sorted; every offset in a chunk <=
** every offset in the next). Beside each chunk, bit masks over its items by time: the steps
** from the lowest first to the highest last are cut into BUCKETS equal buckets;
** starts[b][c] has the bits of chunk c's items whose first step is in bucket b or earlier,
** reaches[b][c] of those whose last step is in bucket b or later. An item live over
** buckets [bf, bl] can meet only the items in starts[bl] & reaches[bf]: its scan reads two
** words per chunk and then just those. (A scan of one flat array, every placed item behind
** an unpredictable branch, took 100 to 200 ms for spec/c/test_arena.c's 10,000 random items;
** this takes 35 to 40, on the same machine.) */
#define CHUNK 64   /* items per chunk: one bit each in a mask */
#define BUCKETS 64 /* time buckets */

typedef struct { size_t off, end; int first, last; } Slot;
typedef struct { Slot at[CHUNK]; int n; } Chunk;

typedef struct {
  Chunk *chunk;               /* by id, in the order they were made */
  uint64_t *starts, *reaches; /* [bucket * cap + id] */
  int *order;                 /* the ids in offset order */
  int nchunks, cap;
  int64_t smin, span;         /* bucket(s) = (s - smin) * BUCKETS / span */
} Placed;

static int bucket(const Placed *p, int step) { return (int)(((int64_t)step - p->smin) * BUCKETS / p->span); }

/* The offset for an item of size (> 0) and align live over [first, last]. */
static size_t place(const Placed *p, size_t size, size_t align, int first, int last) {
  const uint64_t *starts = p->starts + (size_t)bucket(p, last) * (size_t)p->cap;
  const uint64_t *reaches = p->reaches + (size_t)bucket(p, first) * (size_t)p->cap;
  size_t end = 0, best = 0, best_gap = SIZE_MAX; /* end: the highest end among those met so far */
  for (int k = 0; k < p->nchunks; k++) {
    int id = p->order[k];
    const Chunk *c = &p->chunk[id];
    for (uint64_t m = starts[id] & reaches[id]; m; m &= m - 1) {
      /* No branch (whether a candidate meets the item, and whether a gap holds it, are coin
      ** flips to a branch predictor: with branches this loop took 1.5 times as long), and
      ** from one candidate to the next only the chains of best_gap and end, a compare and a
      ** move each. A candidate apart in steps (in the same buckets) changes nothing. */
      const Slot *q = &c->at[__builtin_ctzll(m)];
      size_t meets = -(size_t)((q->first <= last) & (q->last >= first)); /* all ones or 0 */
      size_t at = (end + align - 1) & ~(align - 1);
      /* the gap [end, q->off): the smallest that holds the item wins, the lowest among equals */
      size_t holds = meets & -(size_t)(at + size <= q->off);
      size_t gap = ((q->off - end) & holds) | ~holds; /* SIZE_MAX: none (a real gap is less) */
      best = gap < best_gap ? at : best;
      best_gap = gap < best_gap ? gap : best_gap;
      end = (q->end & meets) > end ? q->end : end;
    }
  }
  return best_gap < SIZE_MAX ? best : (end + align - 1) & ~(align - 1);
}

/* w with a bit v inserted at position i, the bits from i up moved up by one */
static uint64_t insert_bit(uint64_t w, int i, int v) {
  uint64_t low = ((uint64_t)1 << i) - 1;
  return (w & low) | ((w & ~low) << 1) | ((uint64_t)v << i);
}

/* The items of the (full) chunk at k in offset order from CHUNK / 2 up move to a new chunk,
** next in order. */
static void split(Placed *p, int k) {
  int c = p->order[k], d = p->nchunks++, h = CHUNK / 2;
  memcpy(p->chunk[d].at, p->chunk[c].at + h, h * sizeof(Slot));
  p->chunk[d].n = p->chunk[c].n = h;
  for (size_t b = 0; b < BUCKETS; b++) {
    uint64_t *s = p->starts + b * (size_t)p->cap, *r = p->reaches + b * (size_t)p->cap;
    s[d] = s[c] >> h;
    r[d] = r[c] >> h;
    s[c] &= ((uint64_t)1 << h) - 1;
    r[c] &= ((uint64_t)1 << h) - 1;
  }
  memmove(p->order + k + 2, p->order + k + 1, (size_t)(p->nchunks - 2 - k) * sizeof *p->order);
  p->order[k + 1] = d;
}

/* Adds an item after every placed one at an offset <= its own. */
static void insert(Placed *p, Slot s) {
  int lo = 1, hi = p->nchunks; /* k: the last chunk whose lowest offset is <= s.off, else 0 */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (p->chunk[p->order[mid]].at[0].off <= s.off) lo = mid + 1;
    else hi = mid;
  }
  int k = lo - 1;
  if (p->chunk[p->order[k]].n == CHUNK) {
    split(p, k);
    if (p->chunk[p->order[k + 1]].at[0].off <= s.off) k++;
  }
  int id = p->order[k];
  Chunk *c = &p->chunk[id];
  int i = c->n;
  while (i > 0 && c->at[i - 1].off > s.off) i--; /* a chunk is short: a linear search */
  memmove(c->at + i + 1, c->at + i, (size_t)(c->n - i) * sizeof *c->at);
  c->at[i] = s;
  c->n++;
  int bf = bucket(p, s.first), bl = bucket(p, s.last);
  for (int b = 0; b < BUCKETS; b++) {
    size_t w = (size_t)b * (size_t)p->cap + (size_t)id;
    p->starts[w] = insert_bit(p->starts[w], i, bf <= b);
    p->reaches[w] = insert_bit(p->reaches[w], i, bl >= b);
  }
}
/* }==== */

/* {==== Planning ==== */
typedef struct { size_t size; int first, index; } Order;

static int by_size(const void *pa, const void *pb) {
  const Order *a = pa, *b = pb;
  if (a->size != b->size) return a->size > b->size ? -1 : 1;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

int sk_arena_plan(int n, SkArenaItem *items, size_t *total) {
  if (n < 0) return sk_error("sk_arena_plan: %d items", n);
  if (n > 0 && !items) return sk_error("sk_arena_plan: %d items at NULL", n);
  size_t bound = 0; /* the sum of size + align - 1: no offset or end passes it */
  for (int i = 0; i < n; i++) {
    const SkArenaItem *it = &items[i];
    if (it->align == 0 || (it->align & (it->align - 1)))
      return sk_error("sk_arena_plan: item %d: align %zu is not a power of two", i, it->align);
    if (it->last < it->first)
      return sk_error("sk_arena_plan: item %d: last step %d is before first step %d", i, it->last, it->first);
    if (it->size && (__builtin_add_overflow(bound, it->size, &bound) || __builtin_add_overflow(bound, it->align - 1, &bound)))
      return sk_error("sk_arena_plan: the sizes up to item %d (%zu bytes, align %zu) add up past SIZE_MAX", i,
                      it->size, it->align);
  }
  if (n == 0) {
    *total = 0;
    return 0;
  }
  /* One scratch block: the chunks and their masks (a chunk splits only when full, so every
  ** chunk but the first holds at least CHUNK / 2 items), the chunk order, the placement
  ** order, and the offsets by item (copied out at the end, so an error writes none). */
  int cap = n / (CHUNK / 2) + 1;
  size_t per_chunk = sizeof(Chunk) + 2 * BUCKETS * sizeof(uint64_t) + sizeof(int);
  size_t per_item = sizeof(Order) + sizeof(size_t), chunk_bytes, item_bytes, bytes;
  if (__builtin_mul_overflow((size_t)cap, per_chunk, &chunk_bytes) ||
      __builtin_mul_overflow((size_t)n, per_item, &item_bytes) || __builtin_add_overflow(chunk_bytes, item_bytes, &bytes))
    return sk_error("sk_arena_plan: %d items overflow size_t", n);
  char *scratch = malloc(bytes);
  if (!scratch) return sk_error("sk_arena_plan: out of memory planning %d items (%zu bytes)", n, bytes);
  Order *order = (Order *)scratch;
  size_t *off = (size_t *)(order + n);
  Placed p = {(Chunk *)(off + n), NULL, NULL, NULL, 1, cap, items[0].first, 0};
  p.starts = (uint64_t *)(p.chunk + cap);
  p.reaches = p.starts + (size_t)BUCKETS * (size_t)cap;
  p.order = (int *)(p.reaches + (size_t)BUCKETS * (size_t)cap);
  p.order[0] = 0;
  p.chunk[0].n = 0;
  for (size_t b = 0; b < BUCKETS; b++) p.starts[b * (size_t)cap] = p.reaches[b * (size_t)cap] = 0;
  int64_t smax = items[0].last;
  for (int i = 0; i < n; i++) {
    if (items[i].first < p.smin) p.smin = items[i].first;
    if (items[i].last > smax) smax = items[i].last;
    order[i] = (Order){items[i].size, items[i].first, i};
  }
  p.span = smax - p.smin + 1;
  qsort(order, (size_t)n, sizeof *order, by_size);

  size_t top = 0;
  for (int k = 0; k < n; k++) {
    const SkArenaItem *it = &items[order[k].index];
    size_t *o = &off[order[k].index];
    *o = 0;
    if (it->size == 0) continue; /* no byte to share */
    *o = place(&p, it->size, it->align, it->first, it->last);
    insert(&p, (Slot){*o, *o + it->size, it->first, it->last});
    if (*o + it->size > top) top = *o + it->size;
  }
  for (int i = 0; i < n; i++) items[i].offset = off[i];
  *total = top;
  free(scratch);
  return 0;
}
/* }==== */

/* {==== Peak ==== */
typedef struct { size_t size; int step; } Event;

static int by_step(const void *pa, const void *pb) {
  const Event *a = pa, *b = pb;
  return (a->step > b->step) - (a->step < b->step);
}

size_t sk_arena_peak(int n, const SkArenaItem *items) {
  int m = 0;
  for (int i = 0; i < n; i++) m += items[i].size > 0 && items[i].last >= items[i].first;
  if (m == 0) return 0;
  Event *start = malloc(2 * (size_t)m * sizeof *start), *stop = start + m; /* 2m < 2^32 events */
  if (!start) return sk_error("sk_arena_peak: out of memory for %d items", n), 0;
  for (int i = 0, k = 0; i < n; i++)
    if (items[i].size > 0 && items[i].last >= items[i].first) {
      start[k] = (Event){items[i].size, items[i].first};
      stop[k++] = (Event){items[i].size, items[i].last};
    }
  qsort(start, (size_t)m, sizeof *start, by_step);
  qsort(stop, (size_t)m, sizeof *stop, by_step);
  /* Sweep: a start at step t counts before a stop at t (the intervals are closed). While a
  ** start is left, so is a stop: the unswept starts' own stops come no earlier. */
  size_t live = 0, peak = 0;
  for (int i = 0, j = 0; i < m;) {
    if (start[i].step <= stop[j].step) {
      if (__builtin_add_overflow(live, start[i++].size, &live)) {
        peak = SIZE_MAX;
        break;
      }
      if (live > peak) peak = live;
    } else {
      live -= stop[j++].size;
    }
  }
  free(start);
  return peak;
}
/* }==== */
