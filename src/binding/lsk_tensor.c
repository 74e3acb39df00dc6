/*
** lsk_tensor.c — the tensor userdata: lifetime, queries, construction from tables
** A userdata holds one SkTensor* (one reference). __gc and __close release
** it; a closed tensor holds NULL and every use of it is an error.
*/
#include "lsk.h"
#include "sk_autograd.h"
#include "sk_checked.h"
#include "sk_error.h"
#include "sk_kernels.h"
#include "sk_ops.h"

#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* {==== Boxes and the collector ====
** A tensor userdata is an LskBox. It is recognised by its size and by a
** check word keyed with a per-process secret, never by its metatable: a
** script can give any userdata the metatable (debug.setmetatable) but
** cannot write these bytes. A closed box holds NULL and the closed mark. */
typedef struct LskBox { SkTensor *t; uintptr_t check; size_t charge; int accounts, carries; } LskBox;
static uintptr_t secret;
#define CLOSED_MARK (secret ^ 1u)

/* Lua sees a small userdata, but a tensor holds a header and often a
** storage of its own. The binding tells the collector in two ways, the
** same in incremental and generational mode:
** - every LSK_GC_DEBT bytes made, the next op pays a collector step of that
**   size before it allocates (incremental mode collects dead tensors at the
**   rate they are made; generational mode frees the young ones);
** - the bytes held by live boxes are counted, and once they pass gc_limit a
**   full collection runs. A tensor that outlived two minor collections is
**   old, and only a major one frees it: without this bound, generational
**   mode keeps every such tensor (the Lua heap barely grows, so Lua's own
**   majors never come). After it, the limit is set to the live bytes plus
**   as much again (the tensors and the Lua heap, at least LSK_GC_FLOOR), so
**   full collections cost O(1) per byte made, like Lua's own pause of 200%.
** The bytes autograd's graphs hold as saved values count as live too (sk_saved_bytes): a
** graph is reachable only through the small box of its output.
** A host that stopped the collector (collectgarbage("stop")) is obeyed. */
#define LSK_GC_DEBT (256 << 10)
#define LSK_GC_FLOOR ((size_t)32 << 20)

static void gc_pay(lua_State *L, LskState *st) {
  size_t live = st->gc_live + (size_t)sk_saved_bytes(); /* graphs hold their saved values through small boxes */
  if (st->gc_debt < LSK_GC_DEBT && live <= st->gc_limit) return;
  if (!lua_gc(L, LUA_GCISRUNNING)) { st->gc_debt = 0; return; }
  if (live > st->gc_limit) {
    lua_gc(L, LUA_GCCOLLECT);
    live = st->gc_live + (size_t)sk_saved_bytes();
    size_t heap = (size_t)lua_gc(L, LUA_GCCOUNT) << 10, grow = live + heap;
    st->gc_limit = live + (grow > LSK_GC_FLOOR ? grow : LSK_GC_FLOOR);
    st->gc_debt = 0;
    return;
  }
  int kb = (int)(st->gc_debt >> 10);
  st->gc_debt = 0;
  lua_gc(L, LUA_GCSTEP, kb);
}

static const char state_key = 0;

LskState *lsk_state(lua_State *L) {
  LskFrame *f = lsk_frame;
  if (f && f->L == L && f->st) return f->st;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key);
  LskState *st = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (f && f->L == L) f->st = st;
  return st;
}

/* A closed box with the tensor metatable, to be given its tensor by box_set. */
static LskBox *new_box(lua_State *L, const LskState *st) {
  LskBox *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->t = NULL;
  b->check = CLOSED_MARK;
  b->charge = 0;
  b->accounts = b->carries = 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, st->mt_ref);
  lua_setmetatable(L, -2);
  return b;
}

/* Gives the box its tensor (the box takes the reference) and charges the collector: the
** storage's bytes (none for meta) too unless another box has them on its account (a view of a boxed tensor).
** Whether other references exist does not matter: a graph's saved alias of an output holds
** one while the output is boxed, and drops it at backward, long before the box is collected. */
static void box_set(LskState *st, LskBox *b, SkTensor *t) {
  b->t = t;
  b->check = (uintptr_t)t ^ secret;
  b->accounts = !t->storage->accounted;
  t->storage->accounted = 1;
  size_t data = t->device.type == SK_DEVICE_META ? 0 : t->storage->nbytes; /* a meta storage holds no bytes */
  b->charge = sizeof *t + (b->accounts ? sizeof *t->storage + data : 0);
  st->gc_debt += b->charge;
  st->gc_live += b->charge;
}

void lsk_push_tensor(lua_State *L, SkTensor *t) {
  LskState *st = lsk_state(L);
  box_set(st, new_box(L, st), t);
}

/* Each spare box has its own registry slot (st->spare[i], i < nspare): taking one is a
** read and a write of the registry's array part, neither of which allocates. */
void lsk_call_entry(lua_State *L, LskState *st) {
  gc_pay(L, st);
  if (st->dead || st->cycle_ended) lsk_held_update(L, st);
  while (st->nspare < LSK_SPARE_BOXES) {
    new_box(L, st);
    if (st->spare[st->nspare] == LUA_NOREF) st->spare[st->nspare] = luaL_ref(L, LUA_REGISTRYINDEX);
    else lua_rawseti(L, LUA_REGISTRYINDEX, st->spare[st->nspare]);
    st->nspare++;
  }
}

int lsk_push_spare(lua_State *L, LskState *st, SkTensor *t) {
  if (!st->nspare) return 0;
  int ref = st->spare[--st->nspare];
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  lua_pushboolean(L, 0);
  lua_rawseti(L, LUA_REGISTRYINDEX, ref); /* the slot stays: refilling it allocates nothing but the box */
  box_set(st, lua_touserdata(L, -1), t);
  return 1;
}

/* lua_rawlen is 0 for a light userdata, so the size test also tells a full userdata. */
static LskBox *peek_box(lua_State *L, int idx) {
  LskBox *b = lua_touserdata(L, idx);
  if (!b || lua_rawlen(L, idx) != sizeof *b) return NULL;
  return b->check == ((uintptr_t)b->t ^ secret) || (!b->t && b->check == CLOSED_MARK) ? b : NULL;
}

/* Every use of a box's tensor goes through here. A box that Lua values autograd holds hang on
** (carries: lsk_held.c) pins them first: apart from a leaf's accumulator (which keeps its
** hooks pinned), only a use can give its tensor, or the node it leads to, another owner, so a
** value hanging on a box that nobody used since is still owned through that box alone. While
** the pinning cannot run (no stack room), the box stays marked and the next use pins. */
static LskBox *test_box(lua_State *L, int idx) {
  LskBox *b = peek_box(L, idx);
  if (b && b->carries && !lsk_held_box_used(L, idx)) b->carries = 0;
  return b;
}

SkTensor *lsk_box_peek(lua_State *L, int idx, int carries) {
  LskBox *b = peek_box(L, idx);
  if (!b) return NULL;
  if (carries >= 0) b->carries = carries;
  return b->t;
}

void lsk_push_state(lua_State *L) { lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key); }

int lsk_is_closed_tensor(lua_State *L, int idx) {
  LskBox *b = test_box(L, idx);
  return b && !b->t;
}

SkTensor *lsk_test_tensor(lua_State *L, int idx) {
  LskBox *b = test_box(L, idx);
  return b ? b->t : NULL;
}

SkTensor *lsk_check_tensor(lua_State *L, int idx, const char *fname, const char *arg) {
  LskBox *b = test_box(L, idx);
  if (!b) lsk_raise(L, "%s: argument '%s' expected a tensor, got %s", fname, arg, luaL_typename(L, idx));
  if (!b->t) lsk_raise(L, "%s: argument '%s' is a closed tensor", fname, arg);
  return b->t;
}

/* Kept boxes. A Lua callback sees tensors as boxes: a structured impl its outs, a
** Lua kernel the results it returns. When such a tensor becomes a result of the op
** call that ran the callback, the caller gets that very box, as a Lua kernel gets the
** caller's own values as its arguments: no second box, no second charge to the
** collector. The boxes stay on the stack of the call's C function (lsk_frame_keep),
** which holds them until it returns; a box closed meanwhile no longer holds its
** tensor, so a box found for t holds a reference to t of its own. */
void lsk_frame_keep(lua_State *L, int n) {
  LskFrame *f = lsk_frame;
  int top = lua_gettop(L), lo = top - n + 1;
  if (n <= 0 || !f || f->L != L || !f->keeps) { lua_settop(L, top - n); return; }
  if (!f->kept_hi && n <= LSK_MAX_KEPT) f->kept_lo = lo, f->kept_hi = top;
  else if (f->kept_hi && lo == f->kept_hi + 1 && top - f->kept_lo < LSK_MAX_KEPT) f->kept_hi = top;
  else lua_settop(L, top - n); /* not next to those kept before, or too many: the caller gets a new box */
}

void lsk_push_result(lua_State *L, LskState *st, SkTensor *t, int lo, int hi) {
  for (int i = lo; i <= hi; i++) {
    LskBox *b = test_box(L, i);
    if (b && b->t == t) {
      lua_pushvalue(L, i);
      sk_tensor_release(t); /* the box holds its own reference */
      return;
    }
  }
  box_set(st, new_box(L, st), t);
}

/* Only the innermost frame counts, and only when it is on L: its indices are those
** of the C function running now (kernels are called from within it, with no Lua call between). */
int lsk_frame_push_tensor(lua_State *L, const SkTensor *t) {
  LskFrame *f = lsk_frame;
  if (!f || f->L != L) return 0;
  int top = lua_gettop(L), last = f->last < top ? f->last : top;
  if (f->nboxes < 0)
    for (f->nboxes = 0; f->nboxes < LSK_FRAME_BOXES && f->first + f->nboxes <= last; f->nboxes++)
      f->boxes[f->nboxes] = test_box(L, f->first + f->nboxes);
  for (int i = 0; i < f->nboxes; i++) {
    const LskBox *b = f->boxes[i];
    if (b && b->t == t) { lua_pushvalue(L, f->first + i); return 1; }
  }
  for (int i = f->first + f->nboxes; i <= last; i++)
    if (lsk_test_tensor(L, i) == t) { lua_pushvalue(L, i); return 1; }
  return 0;
}

/* __gc and __close (upvalue: the state's LskState) */
static int t_gc(lua_State *L) {
  LskBox *b = test_box(L, 1);
  if (!b) return lsk_raise(L, "Tensor:close: argument 'self' expected a tensor, got %s", luaL_typename(L, 1));
  LskState *st = lua_touserdata(L, lua_upvalueindex(1));
  if (!b->t) return 0;
  st->gc_live -= b->charge;
  if (b->accounts) b->t->storage->accounted = 0;
  sk_tensor_release(b->t);
  b->t = NULL;
  b->check = CLOSED_MARK;
  return 0;
}
/* }==== */

/* __index: a method of that name (upvalue 1, the methods table, read raw), the field
** `grad` (the gradient autograd left, or nil), else
** for a non-string key the Lua indexer (upvalue 2: t[i], t[{...}], t[mask]).
** In C because every method call looks up through it; lsk_where passes over its frame. */
int lsk_tensor_index(lua_State *L) {
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  if (lua_type(L, 2) == LUA_TSTRING) { /* the one field: t.grad (only a miss pays the compare) */
    SkTensor *t = lsk_test_tensor(L, 1);
    if (t && strcmp(lua_tostring(L, 2), "grad") == 0 && t->autograd && t->autograd->grad)
      lsk_push_tensor(L, sk_tensor_retain(t->autograd->grad));
    else lua_pushnil(L);
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 1);
  return 1;
}

/* core.tensor_index(methods, indexer) -> the __index function */
static int l_tensor_index(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  lua_pushcclosure(L, lsk_tensor_index, 2);
  return 1;
}

#define SELF(fname) SkTensor *t = lsk_check_tensor(L, 1, fname, "self")

static void push_ints(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) { lua_pushinteger(L, v[i]); lua_rawseti(L, -2, i + 1); }
}

static int t_shape(lua_State *L) { SELF("Tensor:shape"); push_ints(L, t->ndim, t->sizes); return 1; }
static int t_stride(lua_State *L) {
  SELF("Tensor:stride");
  if (lua_isnoneornil(L, 2)) { push_ints(L, t->ndim, t->strides); return 1; }
  int64_t d;
  if (sk_wrap_dim(luaL_checkinteger(L, 2), t->ndim, "dim", &d)) return lsk_error(L, "Tensor:stride");
  lua_pushinteger(L, t->ndim ? t->strides[d] : 1);
  return 1;
}
static int t_size(lua_State *L) {
  SELF("Tensor:size");
  if (lua_isnoneornil(L, 2)) { push_ints(L, t->ndim, t->sizes); return 1; }
  int64_t d;
  if (sk_wrap_dim(luaL_checkinteger(L, 2), t->ndim, "dim", &d)) return lsk_error(L, "Tensor:size");
  if (t->ndim == 0) return lsk_raise(L, "Tensor:size: a 0-dim tensor has no dimension %d", (int)d);
  lua_pushinteger(L, t->sizes[d]);
  return 1;
}
static int t_len(lua_State *L) {
  SELF("#");
  if (t->ndim == 0) return lsk_raise(L, "#: len() of a 0-d tensor");
  lua_pushinteger(L, t->sizes[0]);
  return 1;
}
static int t_dim(lua_State *L) { SELF("Tensor:dim"); lua_pushinteger(L, t->ndim); return 1; }
static int t_numel(lua_State *L) { SELF("Tensor:numel"); lua_pushinteger(L, t->numel); return 1; }
static int t_dtype(lua_State *L) { SELF("Tensor:dtype"); lua_pushstring(L, sk_dtype_name(t->dtype)); return 1; }
static int t_device(lua_State *L) {
  SELF("Tensor:device");
  char buf[48];
  sk_device_format(t->device, buf, sizeof buf);
  lua_pushstring(L, buf);
  return 1;
}
static int t_is_contiguous(lua_State *L) { SELF("Tensor:is_contiguous"); lua_pushboolean(L, sk_tensor_is_contiguous(t)); return 1; }
static int t_version(lua_State *L) { SELF("Tensor:version"); lua_pushinteger(L, (lua_Integer)t->storage->version); return 1; }
static int t_storage_offset(lua_State *L) { SELF("Tensor:storage_offset"); lua_pushinteger(L, t->offset); return 1; }
static int t_same_storage(lua_State *L) {
  SELF("Tensor:is_view_of");
  SkTensor *o = lsk_check_tensor(L, 2, "Tensor:is_view_of", "other");
  lua_pushboolean(L, t->storage == o->storage);
  return 1;
}

/* {==== Reading values ==== */
static void push_element(lua_State *L, const char *p, SkDType dt) {
  if (dt == SK_DTYPE_BOOL) lua_pushboolean(L, *p != 0);
  else if (sk_dtype_is_floating(dt)) lua_pushnumber(L, sk_load_double(p, dt));
  else lua_pushinteger(L, sk_load_int64(p, dt));
}

/* A CPU tensor with t's values (t itself, retained, when already on the CPU). */
static SkTensor *on_cpu(lua_State *L, SkTensor *t, const char *fname) {
  if (t->device.type == SK_DEVICE_CPU) return sk_tensor_retain(t);
  if (t->device.type == SK_DEVICE_META) { lsk_raise(L, "%s: meta tensors have no data", fname); return NULL; }
  SkTensor *c = NULL;
  if (sk_to_device(&c, t, SK_CPU, -1, 0, 0, -1)) lsk_error(L, fname);
  return c;
}

/* Element offsets travel as integers: only a leaf (never reached when t is empty) forms a pointer. */
static void push_nested(lua_State *L, const SkTensor *t, int d, int64_t off) {
  size_t sz = sk_dtype_size(t->dtype);
  if (d == t->ndim) { push_element(L, (const char *)sk_tensor_data(t) + off * (int64_t)sz, t->dtype); return; }
  lua_createtable(L, t->sizes[d] < INT_MAX ? (int)t->sizes[d] : INT_MAX, 0);
  for (int64_t i = 0; i < t->sizes[d]; i++) {
    push_nested(L, t, d + 1, off + i * t->strides[d]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* An empty tensor's tables stop at its first dim of size 0, but the dims before it may
** still ask for more tables than memory holds: at most TOTABLE_EMPTY_MAX of them. */
#define TOTABLE_EMPTY_MAX ((int64_t)1 << 20)
static int empty_tables_fit(const SkTensor *t) {
  int64_t level = 1, total = 1;
  for (int d = 0; d < t->ndim && t->sizes[d] != 0; d++)
    if (sk_mul_overflow(level, t->sizes[d], &level) || sk_add_overflow(total, level, &total) || total > TOTABLE_EMPTY_MAX)
      return 0;
  return 1;
}

static int t_totable(lua_State *L) {
  SELF("Tensor:totable");
  char buf[256];
  if (t->numel == 0 && !empty_tables_fit(t))
    return luaL_error(L, "Tensor:totable: a tensor of shape %s has no elements but would need more than %I nested "
                      "tables", sk_shape_str(t->ndim, t->sizes, buf, sizeof buf), (lua_Integer)TOTABLE_EMPTY_MAX);
  SkTensor *c = on_cpu(L, t, "Tensor:totable");
  luaL_checkstack(L, c->ndim + 8, "tensor too deep");
  push_nested(L, c, 0, 0);
  sk_tensor_release(c);
  return 1;
}

static int t_item(lua_State *L) {
  SELF("Tensor:item");
  if (t->numel != 1)
    return lsk_raise(L, "Tensor:item: a Tensor with %I elements cannot be converted to a number", (lua_Integer)t->numel);
  SkTensor *c = on_cpu(L, t, "Tensor:item");
  push_element(L, sk_tensor_data(c), c->dtype);
  sk_tensor_release(c);
  return 1;
}
/* }==== */

/* {==== sk.tensor(nested, {dtype=, device=}) ====
** Read raw (no __index/__len) and with no Lua allocation between the scan of
** the shape and the fill, so no Lua code can change the data in between; the
** box that will own the tensor exists before either, so an error leaks nothing. */
typedef struct { int ndim, leaf; int64_t sizes[SK_MAX_DIMS]; int has_float, has_int, has_bool; } Shape;

static void scan(lua_State *L, int idx, int d, Shape *sh) {
  int lt = lua_type(L, idx);
  if (lt == LUA_TTABLE) {
    if (d >= SK_MAX_DIMS) lsk_raise(L, "sk.tensor: nesting deeper than %d dimensions", SK_MAX_DIMS);
    if (sh->leaf >= 0 && d >= sh->leaf)
      lsk_raise(L, "sk.tensor: ragged nested table: a table at depth %d where a number was expected", d + 1);
    lua_Unsigned n = lua_rawlen(L, idx);
    if (n > (lua_Unsigned)INT64_MAX) lsk_raise(L, "sk.tensor: a table too long");
    if (d == sh->ndim) { sh->ndim = d + 1; sh->sizes[d] = (int64_t)n; }
    else if (sh->sizes[d] != (int64_t)n)
      lsk_raise(L, "sk.tensor: ragged nested table: expected a sequence of length %I at depth %d, got %I",
                (lua_Integer)sh->sizes[d], d + 1, (lua_Integer)n);
    luaL_checkstack(L, 2, "sk.tensor: nesting too deep");
    for (lua_Unsigned i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, (lua_Integer)i);
      scan(L, lua_gettop(L), d + 1, sh);
      lua_pop(L, 1);
    }
    return;
  }
  if (sh->leaf < 0) sh->leaf = d;
  if (d != sh->ndim) lsk_raise(L, "sk.tensor: ragged nested table: a number at depth %d where a table was expected", d + 1);
  if (lt == LUA_TNUMBER) { if (lua_isinteger(L, idx)) sh->has_int = 1; else sh->has_float = 1; }
  else if (lt == LUA_TBOOLEAN) sh->has_bool = 1;
  else lsk_raise(L, "sk.tensor: expected numbers, booleans or nested tables, got %s", luaL_typename(L, idx));
}

/* 0, or -1 with the sk error set (a value that does not fit the dtype). */
static int fill(lua_State *L, int idx, int d, const SkTensor *t, char **p) {
  if (d == t->ndim) {
    SkScalar v = lua_isboolean(L, idx) ? sk_scalar_bool(lua_toboolean(L, idx))
               : lua_isinteger(L, idx) ? sk_scalar_int(lua_tointeger(L, idx)) : sk_scalar_float(lua_tonumber(L, idx));
    if (sk_scalar_store(*p, t->dtype, v)) return -1;
    *p += sk_dtype_size(t->dtype);
    return 0;
  }
  for (lua_Integer i = 1; i <= t->sizes[d]; i++) {
    lua_rawgeti(L, idx, i);
    int rc = fill(L, lua_gettop(L), d + 1, t, p);
    lua_pop(L, 1);
    if (rc) return -1;
  }
  return 0;
}

static int l_tensor(lua_State *L) {
  luaL_checkany(L, 1);
  if (lsk_test_tensor(L, 1)) return lsk_raise(L, "sk.tensor: argument 'data' is already a tensor (use clone())");
  SkDType dt = SK_DTYPE_COUNT;
  SkDevice dev = SK_CPU;
  int requires_grad = 0;
  if (lua_istable(L, 2)) {
    lua_pushliteral(L, "requires_grad");
    int ty = lua_rawget(L, 2);
    if (ty != LUA_TNIL && ty != LUA_TBOOLEAN) return lsk_raise(L, "sk.tensor: option 'requires_grad' expected a boolean");
    requires_grad = lua_toboolean(L, -1);
    lua_pop(L, 1);
    lua_pushliteral(L, "dtype");
    if (lua_rawget(L, 2) != LUA_TNIL && lsk_to_dtype(L, -1, &dt))
      return lsk_raise(L, "sk.tensor: option 'dtype': unknown dtype '%s'", luaL_tolstring(L, -1, NULL));
    lua_pushliteral(L, "device");
    if (lua_rawget(L, 2) != LUA_TNIL && (lua_type(L, -1) != LUA_TSTRING || sk_device_parse(lua_tostring(L, -1), &dev)))
      return lua_type(L, -1) != LUA_TSTRING ? lsk_raise(L, "sk.tensor: option 'device' expected a string")
                                            : lsk_error(L, "sk.tensor: option 'device'");
    lua_pop(L, 2);
  } else if (!lua_isnoneornil(L, 2)) return lsk_raise(L, "sk.tensor: argument 'options' expected a table, got %s", luaL_typename(L, 2));
  lua_settop(L, 1);
  LskState *st = lsk_state(L);
  LskBox *b = new_box(L, st);
  Shape sh;
  memset(&sh, 0, sizeof sh);
  sh.leaf = -1;
  scan(L, 1, 0, &sh);
  if (sh.has_bool && (sh.has_int || sh.has_float)) return lsk_raise(L, "sk.tensor: cannot mix booleans and numbers");
  if (dt == SK_DTYPE_COUNT)
    dt = sh.has_float ? SK_DTYPE_FLOAT32 : sh.has_bool ? SK_DTYPE_BOOL : sh.has_int ? SK_DTYPE_INT64 : SK_DTYPE_FLOAT32;
  SkTensor *t = sk_tensor_empty(sh.ndim, sh.sizes, dt, SK_CPU);
  if (!t) return lsk_error(L, "sk.tensor");
  box_set(st, b, t); /* owned by Lua from here: an error below cannot leak it */
  char *p = sk_tensor_data(t);
  if (t->numel && fill(L, 1, 0, t, &p)) return lsk_error(L, "sk.tensor");
  if (dev.type != SK_DEVICE_CPU) {
    SkTensor *moved = NULL;
    if (sk_to_device(&moved, t, dev, -1, 0, 0, -1)) return lsk_error(L, "sk.tensor");
    lsk_push_tensor(L, moved);
    t = moved;
  }
  if (requires_grad && sk_set_requires_grad(t, 1)) return lsk_error(L, "sk.tensor");
  return 1;
}
/* }==== */

static void init_secret(void) {
  if (secret) return;
  uintptr_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) r = (uintptr_t)&r ^ (uintptr_t)time(NULL) * 0x9e3779b97f4a7c15u;
  secret = r | 2u; /* never 0 or 1, so no check word equals a plain pointer or the closed mark of NULL */
}

void lsk_open_tensor(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"shape", t_shape}, {"size", t_size}, {"stride", t_stride}, {"dim", t_dim}, {"numel", t_numel},
    {"dtype", t_dtype}, {"device", t_device}, {"is_contiguous", t_is_contiguous}, {"version", t_version},
    {"storage_offset", t_storage_offset}, {"shares_storage", t_same_storage},
    {"totable", t_totable}, {"item", t_item}, {NULL, NULL}};
  init_secret();
  int mod = lua_gettop(L);
  /* The module state of this lua_State: one, made by the first load. A second load (busted's
  ** insulation reloads modules) keeps it, as it keeps the tensor metatable: boxes of both
  ** loads then charge and pay one collector account (a second state would be paid for
  ** tensors the first was charged for, and its count of live bytes would wrap). */
  lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key);
  LskState *st = lua_touserdata(L, -1);
  if (!st) {
    lua_pop(L, 1);
    st = lua_newuserdatauv(L, sizeof *st, 0);
    memset(st, 0, sizeof *st);
    st->gc_limit = LSK_GC_FLOOR;
    st->meta_ref = LUA_NOREF;
    luaL_newmetatable(L, LSK_TENSOR_MT);
    st->mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    for (int i = 0; i < LSK_SPARE_BOXES; i++) st->spare[i] = LUA_NOREF;
    lua_createtable(L, SK_DTYPE_COUNT, 0); /* anchors the dtype names for lsk_to_dtype */
    for (int i = 0; i < SK_DTYPE_COUNT; i++) {
      st->dtype_names[i] = lua_pushstring(L, sk_dtype_name((SkDType)i));
      lua_rawseti(L, -2, i + 1);
    }
    luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &state_key);
  }
  int sti = lua_gettop(L);
  luaL_newmetatable(L, LSK_TENSOR_MT); /* the state's (made above, or by the first load) */
  lua_pushvalue(L, sti);
  lua_pushcclosure(L, t_gc, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "__gc");
  lua_setfield(L, -2, "__close");
  lua_pushcfunction(L, t_len);
  lua_setfield(L, -2, "__len");
  lua_pushliteral(L, "sk.Tensor");
  lua_setfield(L, -2, "__name");
  lua_setfield(L, mod, "metatable");
  luaL_newlib(L, methods);
  lua_pushvalue(L, sti);
  lua_pushcclosure(L, t_gc, 1);
  lua_setfield(L, -2, "close");
  lua_setfield(L, mod, "tensor_methods");
  lua_pushcfunction(L, l_tensor);
  lua_setfield(L, mod, "tensor");
  lua_pushcfunction(L, l_tensor_index);
  lua_setfield(L, mod, "tensor_index");
  lua_settop(L, mod);
}
