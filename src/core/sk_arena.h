/*
** sk_arena.h — the static memory planner: one arena for a plan's intermediate buffers
** Given each buffer's size, alignment and live interval in steps, assigns offsets so that
** buffers live at the same step never share a byte (greedy by size, Pisarchyk & Lee 2020).
** Pure computation: no globals, one scratch allocation per call, thread-safe.
*/
#ifndef SK_ARENA_H
#define SK_ARENA_H

#include <stddef.h>

/* One intermediate buffer of a plan: size and alignment in bytes, closed live interval
** [first, last] in step numbers; offset is the planner's answer. */
typedef struct SkArenaItem { size_t size, align; int first, last; size_t offset; } SkArenaItem;

/* Assigns every item an offset in one arena so that two items whose intervals intersect never
** share a byte; *total is the arena size (max offset + size, 0 for none). 0, or -1 with sk_error
** (size overflow: the sizes, each with align - 1 bytes of slack, add up past SIZE_MAX; out of
** memory; a bad item: align not a power of two, last < first); on -1 neither the offsets nor
** *total are written. Zero-size items get offset 0 and take no space. */
int sk_arena_plan(int n, SkArenaItem *items, size_t *total);

/* The most bytes live at any one step if each item were freed right after its last use:
** max over steps t of the sum of sizes of items with first <= t <= last. A lower bound on any
** arena for these items. Items with last < first count for nothing; a sum past SIZE_MAX gives
** SIZE_MAX; out of memory gives 0 (a trivial lower bound) with sk_error. */
size_t sk_arena_peak(int n, const SkArenaItem *items);

#endif
