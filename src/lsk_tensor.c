/*
** lsk_tensor.c — the tensor userdata: lifetime, queries, construction from tables
** A userdata holds one SkTensor* (one reference). __gc and __close release
** it; a closed tensor holds NULL and every use of it is an error.
*/
#include "lsk.h"
#include "sk_checked.h"
#include "sk_error.h"
#include "sk_ops.h"

#include <limits.h>
#include <string.h>

/* The metatable lives in the registry under the address of mt_key. The last
** state that opened sk also caches its address: a metatable at that address
** is the tensor metatable (a fast check; other states take the registry path). */
static const char mt_key = 0;
static const void *cached_mt;

/* Lua sees an 8-byte userdata but a tensor holds a header and often a
** storage of its own: without telling the collector, thousands of dead
** tensors pile up between cycles (cold memory, no block reuse). The memory
** a new tensor holds is owed to the collector; once LSK_GC_DEBT bytes are
** owed, the next op pays with a step of that size before it allocates, so
** the blocks of tensors that died meanwhile are free to be reused. */
#define LSK_GC_DEBT (256 << 10)
static size_t gc_debt;

void lsk_gc_pay(lua_State *L) {
  if (gc_debt < LSK_GC_DEBT) return;
  int kb = (int)(gc_debt >> 10);
  gc_debt = 0;
  lua_gc(L, LUA_GCSTEP, kb);
}

void lsk_push_tensor(lua_State *L, SkTensor *t) {
  SkTensor **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = t;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &mt_key);
  lua_setmetatable(L, -2);
  gc_debt += sizeof *t + (t->storage->refcount == 1 ? sizeof *t->storage + t->storage->nbytes : 0);
}

static SkTensor **test_ud(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx)) return NULL;
  const void *mt = lua_topointer(L, -1);
  int ok = mt == cached_mt;
  if (!ok) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &mt_key);
    ok = lua_rawequal(L, -1, -2);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return ok ? lua_touserdata(L, idx) : NULL;
}

SkTensor *lsk_test_tensor(lua_State *L, int idx) {
  SkTensor **ud = test_ud(L, idx);
  return ud ? *ud : NULL;
}

SkTensor *lsk_check_tensor(lua_State *L, int idx, const char *fname, const char *arg) {
  SkTensor **ud = test_ud(L, idx);
  if (!ud) luaL_error(L, "%s: argument '%s' expected a tensor, got %s", fname, arg, luaL_typename(L, idx));
  if (!*ud) luaL_error(L, "%s: argument '%s' is a closed tensor", fname, arg);
  return *ud;
}

int lsk_error(lua_State *L, const char *fname) { return luaL_error(L, "%s: %s", fname, sk_error_message()); }

static int t_gc(lua_State *L) {
  SkTensor **ud = test_ud(L, 1);
  if (!ud) return luaL_error(L, "Tensor:close: argument 'self' expected a tensor, got %s", luaL_typename(L, 1));
  sk_tensor_release(*ud);
  *ud = NULL;
  return 0;
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
  if (t->ndim == 0) return luaL_error(L, "Tensor:size: a 0-dim tensor has no dimension %d", (int)d);
  lua_pushinteger(L, t->sizes[d]);
  return 1;
}
static int t_len(lua_State *L) {
  SELF("#");
  if (t->ndim == 0) return luaL_error(L, "#: len() of a 0-d tensor");
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
  if (t->device.type == SK_DEVICE_META) { luaL_error(L, "%s: meta tensors have no data", fname); return NULL; }
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
    return luaL_error(L, "Tensor:item: a Tensor with %I elements cannot be converted to a number", (lua_Integer)t->numel);
  SkTensor *c = on_cpu(L, t, "Tensor:item");
  push_element(L, sk_tensor_data(c), c->dtype);
  sk_tensor_release(c);
  return 1;
}
/* }==== */

/* {==== sk.tensor(nested, {dtype=, device=}) ==== */
typedef struct { int ndim; int64_t sizes[SK_MAX_DIMS]; int has_float, has_int, has_bool; } Shape;

static void scan(lua_State *L, int idx, int d, Shape *sh) {
  int lt = lua_type(L, idx);
  if (lt == LUA_TTABLE) {
    if (d >= SK_MAX_DIMS) luaL_error(L, "sk.tensor: nesting deeper than %d dimensions", SK_MAX_DIMS);
    lua_Integer n = luaL_len(L, idx);
    if (d == sh->ndim) { sh->ndim = d + 1; sh->sizes[d] = n; }
    else if (d > sh->ndim || sh->sizes[d] != n)
      luaL_error(L, "sk.tensor: ragged nested table: expected a sequence of length %d at depth %d, got %d",
                 (int)(d < sh->ndim ? sh->sizes[d] : 0), d + 1, (int)n);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, i);
      scan(L, lua_gettop(L), d + 1, sh);
      lua_pop(L, 1);
    }
    return;
  }
  if (d != sh->ndim) luaL_error(L, "sk.tensor: ragged nested table: a number at depth %d where a table was expected", d + 1);
  if (lt == LUA_TNUMBER) { if (lua_isinteger(L, idx)) sh->has_int = 1; else sh->has_float = 1; }
  else if (lt == LUA_TBOOLEAN) sh->has_bool = 1;
  else luaL_error(L, "sk.tensor: expected numbers, booleans or nested tables, got %s", luaL_typename(L, idx));
}

static void fill(lua_State *L, int idx, int d, const SkTensor *t, char **p) {
  if (d == t->ndim) {
    if (lua_isboolean(L, idx)) sk_store_int64(*p, t->dtype, lua_toboolean(L, idx));
    else if (lua_isinteger(L, idx)) sk_store_int64(*p, t->dtype, lua_tointeger(L, idx));
    else sk_store_double(*p, t->dtype, lua_tonumber(L, idx));
    *p += sk_dtype_size(t->dtype);
    return;
  }
  for (lua_Integer i = 1; i <= t->sizes[d]; i++) {
    lua_rawgeti(L, idx, i);
    fill(L, lua_gettop(L), d + 1, t, p);
    lua_pop(L, 1);
  }
}

static int l_tensor(lua_State *L) {
  Shape sh;
  memset(&sh, 0, sizeof sh);
  luaL_checkany(L, 1);
  if (lsk_test_tensor(L, 1)) return luaL_error(L, "sk.tensor: argument 'data' is already a tensor (use clone())");
  scan(L, 1, 0, &sh);
  if (sh.has_bool && (sh.has_int || sh.has_float)) return luaL_error(L, "sk.tensor: cannot mix booleans and numbers");
  SkDType dt = sh.has_float ? SK_DTYPE_FLOAT32 : sh.has_bool ? SK_DTYPE_BOOL : sh.has_int ? SK_DTYPE_INT64 : SK_DTYPE_FLOAT32;
  SkDevice dev = SK_CPU;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "dtype");
    if (!lua_isnil(L, -1) && sk_dtype_from_name(luaL_checkstring(L, -1), &dt))
      return luaL_error(L, "sk.tensor: option 'dtype': unknown dtype '%s'", lua_tostring(L, -1));
    lua_getfield(L, 2, "device");
    if (!lua_isnil(L, -1) && sk_device_parse(luaL_checkstring(L, -1), &dev)) return lsk_error(L, "sk.tensor: option 'device'");
    lua_pop(L, 2);
  } else if (!lua_isnoneornil(L, 2)) return luaL_error(L, "sk.tensor: argument 'options' expected a table, got %s", luaL_typename(L, 2));
  SkTensor *t = sk_tensor_empty(sh.ndim, sh.sizes, dt, SK_CPU);
  if (!t) return lsk_error(L, "sk.tensor");
  lsk_push_tensor(L, t); /* owned by Lua from here: an error below cannot leak it */
  char *p = sk_tensor_data(t);
  if (t->numel) fill(L, 1, 0, t, &p);
  if (dev.type != SK_DEVICE_CPU) {
    SkTensor *moved = NULL;
    if (sk_to_device(&moved, t, dev, -1, 0, 0, -1)) return lsk_error(L, "sk.tensor");
    lsk_push_tensor(L, moved);
  }
  return 1;
}
/* }==== */

/* Collected with its state: forget that state's metatable address. */
static int forget_mt(lua_State *L) {
  const void **owner = lua_touserdata(L, 1);
  if (owner && *owner == cached_mt) cached_mt = NULL;
  return 0;
}

void lsk_open_tensor(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"shape", t_shape}, {"size", t_size}, {"stride", t_stride}, {"dim", t_dim}, {"numel", t_numel},
    {"dtype", t_dtype}, {"device", t_device}, {"is_contiguous", t_is_contiguous}, {"version", t_version},
    {"storage_offset", t_storage_offset}, {"shares_storage", t_same_storage},
    {"totable", t_totable}, {"item", t_item}, {"close", t_gc}, {NULL, NULL}};
  luaL_newmetatable(L, LSK_TENSOR_MT);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &mt_key);
  cached_mt = lua_topointer(L, -1);
  const void **sentinel = lua_newuserdatauv(L, sizeof *sentinel, 0);
  *sentinel = cached_mt;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, forget_mt);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &cached_mt);
  lua_pushcfunction(L, t_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, t_gc);
  lua_setfield(L, -2, "__close");
  lua_pushcfunction(L, t_len);
  lua_setfield(L, -2, "__len");
  lua_pushliteral(L, "sk.Tensor");
  lua_setfield(L, -2, "__name");
  lua_setfield(L, -2, "metatable");
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "tensor_methods");
  lua_pushcfunction(L, l_tensor);
  lua_setfield(L, -2, "tensor");
}
