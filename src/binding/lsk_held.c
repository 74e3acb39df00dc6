/*
** lsk_held.c — Lua values that C objects hold: a hook's function, a Lua function node's
** {backward, ctx}. One mechanism for all of them:
** - A value has a record (LskHeld) and an id (luaL_ref on the ids table). It is pinned
**   (values[id], reachable from the registry) or traced: it hangs on its carrier, the tensor
**   box through which its owner is reached (traced[box][id], an ephemeron), so the collector
**   sees box -> value, and a value holding its own box (a hook capturing its tensor, a ctx
**   keeping its output) is a cycle Lua frees. PyTorch's tensor traverses its hooks the same
**   way when it is their only owner.
** - Traced only while the box is the owner's only way in (sole): the box's tensor has no other
**   reference, and the owner is that tensor (a leaf's hook, while no graph's accumulator can
**   run it) or its grad_fn, held by it alone. Otherwise only a use of the box can change that
**   (a tensor or a node gets a new owner from C code that was given the tensor), so any use
**   pins the values first (lsk_held_box_used, from the
**   binding's one box reader, allocating nothing). After each collector cycle (a sentinel
**   whose finalizer arms the next) the next op call traces again what is sole; a new record
**   is decided at once.
** - When an owner goes (anywhere, even where no Lua call may be made), its record joins
**   st->dead, a list through the records (no allocation, no cap), dropped at the next op call
**   (or at the state's close).
** Invariants: a record is live (st->held) until its owner goes, then dead until drained;
** recs[id] is the record of an id in use; values[id] exists (false while traced) until the
** record is drained, so pinning sets an existing key.
*/
#include "lsk.h"
#include "sk_autograd.h"

#include <stdlib.h>

struct LskHeld {
  LskState *st;
  int id;
  int traced;                   /* the value is in traced[carrier], else in values[id] */
  int dead;                     /* the owner went */
  SkNode *node;                 /* the owner: a node (weak, valid while live), or NULL for the carrier's tensor */
  const void *box;              /* the carrier box (lua_topointer), or NULL: always pinned */
  LskHeld *prev, *next;         /* st->held while live; next: st->dead once dead */
};

/* The held table's slots */
enum { IDS = 1, VALUES, CARRIER, TRACED, SENTINEL_MT, KEEPER, NSLOTS = KEEPER };

static void push_slot(lua_State *L, const LskState *st, int which) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, st->held_ref);
  lua_rawgeti(L, -1, which);
  lua_remove(L, -2);
}

/* {==== Pinned or traced ==== */
/* Whether the box holding t is the only way to the record's owner. A leaf's hooks run from its
** accumulator, which the engine reaches through a live graph's edges without touching the box:
** while the leaf has one, its hooks stay pinned (the accumulator is weak from the leaf and goes
** with the last graph that feeds it). */
static int sole(const LskHeld *h, const SkTensor *t) {
  if (!t || t->refcount != 1) return 0;
  if (!h->node) return !t->autograd || !t->autograd->grad_acc;
  return t->autograd && t->autograd->grad_fn == h->node && h->node->refcount == 1;
}

/* traced[box] (made when missing and `make`), pushed; nil when missing. box at index bi. */
static void push_traced(lua_State *L, const LskState *st, int bi, int make) {
  push_slot(L, st, TRACED);
  lua_pushvalue(L, bi);
  if (lua_rawget(L, -2) == LUA_TNIL && make) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, bi);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
  }
  lua_remove(L, -2);
}

/* values[id] = traced[box][id] (existing keys: no allocation); tr: traced[box] */
static void pin(lua_State *L, LskHeld *h, int tr) {
  push_slot(L, h->st, VALUES);
  lua_rawgeti(L, tr, h->id);
  lua_rawseti(L, -2, h->id);
  lua_pushnil(L);
  lua_rawseti(L, tr, h->id);
  lua_pop(L, 1);
  h->traced = 0;
}

static void trace(lua_State *L, LskHeld *h, int bi) {
  push_traced(L, h->st, bi, 1);
  push_slot(L, h->st, VALUES);
  lua_rawgeti(L, -1, h->id);
  lua_rawseti(L, -3, h->id);
  lua_pushboolean(L, 0); /* the key stays, for pin */
  lua_rawseti(L, -2, h->id);
  lua_pop(L, 2);
  lsk_box_peek(L, bi, 1);
  h->traced = 1;
}

/* Traces h when its carrier is sole (the carrier found through the weak carrier table). */
static void decide(lua_State *L, LskHeld *h) {
  if (!h->box || h->traced || h->dead) return;
  push_slot(L, h->st, CARRIER);
  if (lua_rawgeti(L, -1, h->id) != LUA_TNIL && sole(h, lsk_box_peek(L, -1, -1))) trace(L, h, lua_gettop(L));
  lua_pop(L, 2);
}

int lsk_held_box_used(lua_State *L, int box) {
  LskState *st = lsk_state(L);
  if (st->closing) return 0; /* nothing is traced any more */
  if (!lua_checkstack(L, 8)) return -1;
  box = lua_absindex(L, box);
  const void *p = lua_topointer(L, box);
  push_traced(L, st, box, 0);
  int tr = lua_gettop(L);
  if (lua_istable(L, tr)) {
    lua_pushnil(L);
    while (lua_next(L, tr)) {
      lua_pop(L, 1);
      lua_Integer id = lua_tointeger(L, -1);
      LskHeld *h = id > 0 && id < st->nrecs ? st->recs[id] : NULL;
      if (h && h->traced && h->box == p) pin(L, h, tr);
    }
  }
  lua_settop(L, tr - 1);
  return 0;
}
/* }==== */

/* {==== Records ==== */
static int grow_recs(LskState *st, int id) {
  if (id < st->nrecs) return 0;
  int n = st->nrecs ? st->nrecs : 64;
  while (n <= id) n *= 2;
  LskHeld **r = realloc(st->recs, (size_t)n * sizeof *r);
  if (!r) return -1;
  for (int i = st->nrecs; i < n; i++) r[i] = NULL;
  st->recs = r;
  st->nrecs = n;
  return 0;
}

LskHeld *lsk_held_new(lua_State *L, const char *fname) {
  LskState *st = lsk_state(L);
  push_slot(L, st, IDS);
  lua_pushboolean(L, 1);
  int id = luaL_ref(L, -2);
  push_slot(L, st, VALUES);
  lua_pushvalue(L, -3);
  lua_rawseti(L, -2, id);
  lua_pop(L, 1);
  LskHeld *h = grow_recs(st, id) ? NULL : calloc(1, sizeof *h);
  if (!h) {
    push_slot(L, st, VALUES);
    lua_pushnil(L);
    lua_rawseti(L, -2, id);
    lua_pop(L, 1);
    luaL_unref(L, -1, id);
    return lsk_raise(L, "%s: out of memory", fname), NULL;
  }
  lua_pop(L, 2);
  h->st = st;
  h->id = id;
  h->next = st->held;
  if (st->held) st->held->prev = h;
  st->held = h;
  st->recs[id] = h;
  return h;
}

void lsk_held_track(lua_State *L, LskHeld *h, int box, SkNode *node) {
  box = lua_absindex(L, box);
  h->node = node;
  h->box = lua_topointer(L, box);
  push_slot(L, h->st, CARRIER);
  lua_pushvalue(L, box);
  lua_rawseti(L, -2, h->id);
  lua_pop(L, 1);
  decide(L, h);
}

void lsk_held_push(lua_State *L, const LskHeld *h) {
  if (h->traced) {
    push_slot(L, h->st, CARRIER);
    lua_rawgeti(L, -1, h->id);
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) return; /* its box is being finalized: no value to run */
    push_traced(L, h->st, lua_gettop(L), 0);
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) return;
  } else push_slot(L, h->st, VALUES);
  lua_rawgeti(L, -1, h->id);
  lua_remove(L, -2);
}

void lsk_held_release(LskHeld *h) {
  if (!h) return;
  LskState *st = h->st;
  if (h->prev) h->prev->next = h->next;
  else st->held = h->next;
  if (h->next) h->next->prev = h->prev;
  h->prev = NULL;
  h->dead = 1;
  if (st->closing) { free(h); return; } /* recs is gone */
  h->next = st->dead;
  st->dead = h;
}

void lsk_held_update(lua_State *L, LskState *st) {
  int top = lua_gettop(L);
  push_slot(L, st, VALUES);
  push_slot(L, st, CARRIER);
  push_slot(L, st, IDS);
  while (st->dead) {
    LskHeld *h = st->dead;
    st->dead = h->next;
    if (h->traced && lua_rawgeti(L, top + 2, h->id) != LUA_TNIL) {
      push_traced(L, st, lua_gettop(L), 0);
      if (lua_istable(L, -1)) { lua_pushnil(L); lua_rawseti(L, -2, h->id); }
      lua_pop(L, 1);
    }
    lua_settop(L, top + 3);
    lua_pushnil(L);
    lua_rawseti(L, top + 1, h->id);
    lua_pushnil(L);
    lua_rawseti(L, top + 2, h->id);
    luaL_unref(L, top + 3, h->id);
    st->recs[h->id] = NULL;
    free(h);
  }
  lua_settop(L, top);
  /* a collector step while deciding may end a cycle, or let an owner go: the former is seen
  ** at the next update, the latter moves a record to st->dead (so a dead one is skipped) */
  if (st->cycle_ended && !st->closing) {
    st->cycle_ended = 0;
    for (LskHeld *h = st->held; h; h = h->next) decide(L, h);
  }
}
/* }==== */

/* {==== Carrier boxes and the collector ==== */
static void arm_sentinel(lua_State *L, LskState *st) {
  lua_newuserdatauv(L, 1, 0);
  push_slot(L, st, SENTINEL_MT);
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
}

/* The end of a collector cycle: the next update (an op call's entry, where nothing is half
** done) decides every live record again. */
static int sentinel_gc(lua_State *L) {
  LskState *st = lsk_state(L);
  if (st->closing) return 0;
  st->cycle_ended = 1;
  arm_sentinel(L, st);
  return 0;
}

/* The state's close (this finalizer runs after those of the boxes made since sk was opened):
** what went is dropped, and an owner that goes after frees its record at once. */
static int keeper_gc(lua_State *L) {
  LskState *st = lsk_state(L);
  st->cycle_ended = 0; /* nothing to trace again at close: only the dead are dropped */
  lsk_held_update(L, st);
  st->closing = 1;
  free(st->recs);
  st->recs = NULL;
  st->nrecs = 0;
  return 0;
}

void lsk_held_open(lua_State *L) {
  LskState *st = lsk_state(L);
  if (st->held_ref) return; /* a second load of sk on this state */
  lua_createtable(L, NSLOTS, 0);
  int t = lua_gettop(L);
  lua_newtable(L);
  lua_rawseti(L, t, IDS);
  lua_newtable(L);
  lua_rawseti(L, t, VALUES);
  static const char *const modes[] = {"v", "k"}; /* CARRIER, TRACED */
  for (int i = 0; i < 2; i++) {
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, modes[i]);
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawseti(L, t, CARRIER + i);
  }
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, sentinel_gc);
  lua_setfield(L, -2, "__gc");
  lua_rawseti(L, t, SENTINEL_MT);
  lua_newuserdatauv(L, 1, 0);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, keeper_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_rawseti(L, t, KEEPER);
  st->held_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  arm_sentinel(L, st);
}
/* }==== */
