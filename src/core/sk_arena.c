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
** every offset in the next). A chunk keeps its items' fields in arrays, so the items of a chunk
** that meet an interval come out as a bit mask from one pass over two int arrays that the
** compiler vectorizes; the gap search then reads just those, and a chunk whose items' span of
** steps misses the interval is skipped whole (equal offsets sit in placing order, so a chain's
** chunks cover disjoint stretches of steps). On a 2-core EPYC: a chain of 200 one-step buffers
** plans in 21 us, of 5,000 in 1 ms; spec/c/test_arena.c's 10,000 random items in ~57 ms (a
** scan that tested every placed item behind a branch took 100 to 200). meeting() masks off the
** slots past a chunk's count; they hold an empty interval so that its pass, which reads the
** slots in groups of 8, reads defined bytes. */
#define CHUNK 64 /* items per chunk: one bit each in a mask */

typedef struct {
  int32_t first[CHUNK], last[CHUNK];
  size_t off[CHUNK], end[CHUNK];
  int n;
  int32_t lo, hi; /* the lowest first and highest last of its items: a chunk out of range is skipped */
} Chunk;

typedef struct {
  Chunk *chunk; /* by id, in the order they were made */
  int *order;   /* the ids in offset order */
  int nchunks;
} Placed;

/* Keeps c's first `from` items. */
static void chunk_cut(Chunk *c, int from) {
  c->lo = INT32_MAX, c->hi = INT32_MIN;
  for (int i = 0; i < from; i++) {
    c->lo = c->first[i] < c->lo ? c->first[i] : c->lo;
    c->hi = c->last[i] > c->hi ? c->last[i] : c->hi;
  }
  for (int i = from; i < CHUNK; i++) c->first[i] = INT32_MAX, c->last[i] = INT32_MIN;
  c->n = from;
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "meeting() reads 8 flag bytes as one little-endian word");

/* The items of c whose intervals meet [first, last], one bit each (its slots in groups of 8). */
static uint64_t meeting(const Chunk *c, int32_t first, int32_t last) {
  unsigned char hit[CHUNK];
  int slots = (c->n + 7) & ~7;
  for (int i = 0; i < slots; i++) hit[i] = (c->first[i] <= last) & (c->last[i] >= first);
  uint64_t m = 0;
  for (int i = 0; i < slots; i += 8) {
    uint64_t w;
    memcpy(&w, hit + i, 8);
    m |= (w * 0x0102040810204080ull >> 56) << i; /* the low bits of 8 bytes, byte k to bit k */
  }
  return c->n == CHUNK ? m : m & (((uint64_t)1 << c->n) - 1);
}

/* The offset for an item of size (> 0) and align live over [first, last]. */
static size_t place(const Placed *p, size_t size, size_t align, int first, int last) {
  size_t end = 0, best = 0, best_gap = SIZE_MAX; /* end: the highest end among those met so far */
  for (int k = 0; k < p->nchunks; k++) {
    const Chunk *c = &p->chunk[p->order[k]];
    if (c->lo > last || c->hi < first) continue;
    for (uint64_t m = meeting(c, first, last); m; m &= m - 1) {
      /* No branch (whether a gap holds the item is a coin flip to a branch predictor), and
      ** from one item to the next only the chains of best_gap and end. */
      int i = __builtin_ctzll(m);
      size_t at = (end + align - 1) & ~(align - 1);
      /* the gap [end, off): the smallest that holds the item wins, the lowest among equals */
      size_t holds = -(size_t)(at + size <= c->off[i]);
      size_t gap = ((c->off[i] - end) & holds) | ~holds; /* SIZE_MAX: none (a real gap is less) */
      best = gap < best_gap ? at : best;
      best_gap = gap < best_gap ? gap : best_gap;
      end = c->end[i] > end ? c->end[i] : end;
    }
  }
  return best_gap < SIZE_MAX ? best : (end + align - 1) & ~(align - 1);
}

/* The items of the (full) chunk at k in offset order from CHUNK / 2 up move to a new chunk,
** next in order. */
static void split(Placed *p, int k) {
  Chunk *c = &p->chunk[p->order[k]], *d = &p->chunk[p->nchunks];
  int h = CHUNK / 2;
  memcpy(d->first, c->first + h, h * sizeof *d->first);
  memcpy(d->last, c->last + h, h * sizeof *d->last);
  memcpy(d->off, c->off + h, h * sizeof *d->off);
  memcpy(d->end, c->end + h, h * sizeof *d->end);
  chunk_cut(d, h);
  chunk_cut(c, h);
  memmove(p->order + k + 2, p->order + k + 1, (size_t)(p->nchunks - 1 - k) * sizeof *p->order);
  p->order[k + 1] = p->nchunks++;
}

/* Adds an item after every placed one at an offset <= its own. */
static void insert(Placed *p, size_t off, size_t end, int first, int last) {
  int lo = 1, hi = p->nchunks; /* k: the last chunk whose lowest offset is <= off, else 0 */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (p->chunk[p->order[mid]].off[0] <= off) lo = mid + 1;
    else hi = mid;
  }
  int k = lo - 1;
  if (p->chunk[p->order[k]].n == CHUNK) {
    split(p, k);
    if (p->chunk[p->order[k + 1]].off[0] <= off) k++;
  }
  Chunk *c = &p->chunk[p->order[k]];
  int i = 0, tail;
  for (int j = 0; j < c->n; j++) i += c->off[j] <= off; /* sorted: the count is the place (no branch to mispredict) */
  tail = c->n - i;
  memmove(c->first + i + 1, c->first + i, (size_t)tail * sizeof *c->first);
  memmove(c->last + i + 1, c->last + i, (size_t)tail * sizeof *c->last);
  memmove(c->off + i + 1, c->off + i, (size_t)tail * sizeof *c->off);
  memmove(c->end + i + 1, c->end + i, (size_t)tail * sizeof *c->end);
  c->first[i] = first, c->last[i] = last, c->off[i] = off, c->end[i] = end;
  c->n++;
  c->lo = first < c->lo ? first : c->lo;
  c->hi = last > c->hi ? last : c->hi;
}
/* }==== */

/* {==== Planning ==== */
typedef struct { size_t size; int first, index; } Order;

static int before(const Order *a, const Order *b) {
  return (a->size > b->size) | ((a->size == b->size) & ((a->first < b->first) | ((a->first == b->first) & (a->index < b->index))));
}

/* Sorts a[n] into placing order: a bottom-up merge sort through tmp[n] (qsort's calls through a
** pointer took a third of a 200-buffer plan); runs already in order are merged by one compare. */
static void sort_orders(Order *a, Order *tmp, int n) {
  Order *src = a, *dst = tmp;
  for (int w = 1; w < n; w *= 2) {
    for (int lo = 0; lo < n; lo += 2 * w) {
      int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;
      if (mid == hi || !before(&src[mid], &src[mid - 1])) { /* already in order */
        memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof *src);
        continue;
      }
      while (i < mid && j < hi) { /* no branch on the comparison: which side wins is a coin flip */
        int right = before(&src[j], &src[i]);
        dst[k++] = *(right ? &src[j] : &src[i]);
        j += right, i += !right;
      }
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    Order *t = src;
    src = dst, dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
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
  /* One scratch block: the chunks (a chunk splits only when full, so every chunk but the
  ** first holds at least CHUNK / 2 items), the chunk order, the placement order and its
  ** sorting space, and the offsets by item (copied out at the end, so an error writes none). */
  int cap = n / (CHUNK / 2) + 1;
  size_t per_chunk = sizeof(Chunk) + sizeof(int);
  size_t per_item = 2 * sizeof(Order) + sizeof(size_t), chunk_bytes, item_bytes, bytes;
  if (__builtin_mul_overflow((size_t)cap, per_chunk, &chunk_bytes) ||
      __builtin_mul_overflow((size_t)n, per_item, &item_bytes) || __builtin_add_overflow(chunk_bytes, item_bytes, &bytes))
    return sk_error("sk_arena_plan: %d items overflow size_t", n);
  char *scratch = malloc(bytes);
  if (!scratch) return sk_error("sk_arena_plan: out of memory planning %d items (%zu bytes)", n, bytes);
  Order *order = (Order *)scratch, *tmp = order + n;
  size_t *off = (size_t *)(tmp + n);
  Placed p = {(Chunk *)(off + n), NULL, 1};
  p.order = (int *)(p.chunk + cap);
  p.order[0] = 0;
  chunk_cut(&p.chunk[0], 0);
  for (int i = 0; i < n; i++) order[i] = (Order){items[i].size, items[i].first, i};
  sort_orders(order, tmp, n);

  size_t top = 0;
  for (int k = 0; k < n; k++) {
    const SkArenaItem *it = &items[order[k].index];
    size_t *o = &off[order[k].index];
    *o = 0;
    if (it->size == 0) continue; /* no byte to share */
    *o = place(&p, it->size, it->align, it->first, it->last);
    insert(&p, *o, *o + it->size, it->first, it->last);
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
