/*
** lsk_value.c — Lua values <-> boxed values, by schema type
** The one pair of conversions of the binding: lsk_read_value (a Lua value as
** an argument or a Lua kernel's result) and lsk_push_value (an op's result or
** a Lua kernel's argument as a Lua value). Ops built in and defined at run
** time, kernels, meta functions and fallbacks all convert here. The schema
** types are the rows of lua/sk/types.lua, whose order SkBaseType follows.
** Invariants: reading runs no Lua code and allocates nothing in Lua (tables
** are read raw), so no metamethod, finalizer or error can run while the stack
** owns what was read; a value read and pushed back is the value given.
*/
#include "lsk.h"
#include "sk_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {==== Per type ==== */

/* Indexed by SkBaseType: what a Lua value of it is, and the names of an enum boxed as an int. */
static const struct { const char *expected, *list_expected; const char *const *names; } types[] = {
  [SK_T_TENSOR] = {"a tensor", "a list of tensors", NULL},
  [SK_T_INT] = {"an integer", "an integer or a list of integers", NULL},
  [SK_T_FLOAT] = {"a number", "a number or a list of numbers", NULL},
  [SK_T_BOOL] = {"a boolean", "a list of booleans", NULL},
  [SK_T_STR] = {"a string", NULL, NULL},
  [SK_T_SCALAR] = {"a number or boolean", NULL, NULL},
  [SK_T_SCALAR_TYPE] = {"a dtype name such as \"float32\"", NULL, NULL},
  [SK_T_LAYOUT] = {"a layout name (\"strided\")", NULL, sk_layout_names},
  [SK_T_DEVICE] = {"a device name such as \"cpu\"", NULL, NULL},
  [SK_T_MEMORY_FORMAT] = {"a memory format name (\"contiguous_format\", \"preserve_format\", \"channels_last\" or "
                          "\"channels_last_3d\")", NULL, sk_memory_format_names},
  [SK_T_GENERATOR] = {"nil (sk has no generator objects)", NULL, NULL},
};

const char *lsk_expected(const SkArg *a) {
  if (a->type >= sizeof types / sizeof types[0]) return "a value";
  return a->is_list && types[a->type].list_expected ? types[a->type].list_expected : types[a->type].expected;
}

int lsk_enum_value(int type, const char *name) {
  const char *const *names = (unsigned)type < sizeof types / sizeof types[0] ? types[type].names : NULL;
  for (int i = 0; names && names[i]; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

/* What a Lua value is, for messages: "tensor", "closed tensor" or its Lua type. */
const char *lsk_got(lua_State *L, int idx) {
  if (lsk_test_tensor(L, idx)) return "tensor";
  return lua_type(L, idx) == LUA_TUSERDATA && lsk_is_closed_tensor(L, idx) ? "closed tensor" : luaL_typename(L, idx);
}
/* }==== */

/* Lua keeps one copy of each short string, and the state anchors one of each dtype
** name: a name is found by its address, and only another string (an alias such as
** "float") is compared by its characters. */
int lsk_to_dtype(lua_State *L, int idx, SkDType *out) {
  if (lua_type(L, idx) != LUA_TSTRING) return -1;
  const char *s = lua_tostring(L, idx);
  const LskState *st = lsk_state(L);
  for (int i = 0; i < SK_DTYPE_COUNT; i++)
    if (s == st->dtype_names[i]) return *out = (SkDType)i, 0;
  return sk_dtype_from_name(s, out);
}

/* {==== Lua -> SkValue ==== */
static int lua_int(lua_State *L, int idx, int64_t *out) {
  if (lua_type(L, idx) != LUA_TNUMBER) return 0;
  int ok;
  lua_Integer i = lua_tointegerx(L, idx, &ok); /* floats with an integral value convert */
  *out = i;
  return ok;
}

static int read_list(lua_State *L, int idx, int last, const SkArg *a, SkStack *s, int flags, char *err, size_t errlen) {
  int lt = lua_type(L, idx);
  int64_t v[LSK_MAX_LIST];
  if (lt == LUA_TNUMBER && a->type == SK_T_INT && a->list_size > 1) { /* int[N] k: N copies of k, as PyTorch */
    if (!lua_int(L, idx, &v[0])) return 0;
    for (int i = 1; i < a->list_size && i < LSK_MAX_LIST; i++) v[i] = v[0];
    return sk_push_intlist(s, v, a->list_size) ? -1 : 1;
  }
  if (lt == LUA_TNUMBER && a->type == SK_T_INT) { /* t:view(2, 3): trailing integers are the list */
    int n = 0;
    int stop = flags & LSK_READ_ABSORB ? last : idx;
    for (int i = idx; i <= stop && n < LSK_MAX_LIST && lua_int(L, i, &v[n]); i++) n++;
    if (n == 0) return 0;
    int total = n; /* integers past the limit are this list's too: say so, not "too many arguments" */
    for (int64_t x; idx + total <= stop && lua_int(L, idx + total, &x);) total++;
    if (total > n)
      return snprintf(err, errlen, "argument '%s' has %d elements, at most %d are supported", a->name, total, LSK_MAX_LIST), -1;
    return sk_push_intlist(s, v, n) ? -1 : n;
  }
  if (lt == LUA_TNUMBER && a->type == SK_T_FLOAT) { /* float[N] x: N copies of x (float[]: one) */
    double d[LSK_MAX_LIST];
    int n = a->list_size > 1 && a->list_size <= LSK_MAX_LIST ? a->list_size : 1;
    for (int i = 0; i < n; i++) d[i] = lua_tonumber(L, idx);
    return sk_push_doublelist(s, d, n) ? -1 : 1;
  }
  if (lt != LUA_TTABLE) return 0;
  lua_Unsigned n = lua_rawlen(L, idx);
  if (n > (a->type == SK_T_TENSOR ? (lua_Unsigned)INT32_MAX / sizeof(SkTensor *) : LSK_MAX_LIST))
    return snprintf(err, errlen, "argument '%s' has %llu elements, at most %d are supported", a->name, (unsigned long long)n,
                    a->type == SK_T_TENSOR ? (int)(INT32_MAX / sizeof(SkTensor *)) : LSK_MAX_LIST), -1;
  if (a->type == SK_T_TENSOR) {
    SkTensor **ts = malloc((size_t)(n ? n : 1) * sizeof *ts);
    if (!ts) return snprintf(err, errlen, "out of memory"), -1;
    for (lua_Unsigned i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, (lua_Integer)i);
      SkTensor *t = lsk_test_tensor(L, -1);
      int none = !lua_toboolean(L, -1); /* nil or false stands for None in a Tensor?[] */
      lua_pop(L, 1);
      if (!t && !(a->elem_optional && none)) {
        for (lua_Unsigned j = 1; j < i; j++) sk_tensor_release(ts[j - 1]);
        free(ts);
        return 0;
      }
      ts[i - 1] = sk_tensor_retain(t);
    }
    return sk_push_tensorlist_owned(s, ts, (int)n) ? -1 : 1;
  }
  double dv[LSK_MAX_LIST];
  for (lua_Unsigned i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i);
    int ok = a->type == SK_T_INT ? lua_int(L, -1, &v[i - 1])
           : a->type == SK_T_BOOL ? (lua_isboolean(L, -1) ? (v[i - 1] = lua_toboolean(L, -1), 1) : 0)
           : a->type == SK_T_FLOAT ? (lua_type(L, -1) == LUA_TNUMBER ? (dv[i - 1] = lua_tonumber(L, -1), 1) : 0) : 0;
    lua_pop(L, 1);
    if (!ok) return 0;
  }
  int rc = a->type == SK_T_FLOAT ? sk_push_doublelist(s, dv, (int)n)
         : a->type == SK_T_BOOL ? sk_push_boollist(s, v, (int)n) : sk_push_intlist(s, v, (int)n);
  return rc ? -1 : 1;
}

static SkScalar lua_scalar(lua_State *L, int idx) {
  if (lua_isboolean(L, idx)) return sk_scalar_bool(lua_toboolean(L, idx));
  return lua_isinteger(L, idx) ? sk_scalar_int(lua_tointeger(L, idx)) : sk_scalar_float(lua_tonumber(L, idx));
}

int lsk_read_value(lua_State *L, int idx, int last, const SkArg *a, SkStack *s, int flags, char *err, size_t errlen) {
  int lt = lua_type(L, idx);
  if (lt == LUA_TNIL) return a->optional ? (sk_push_none(s) ? -1 : 1) : 0;
  if (a->is_list) return read_list(L, idx, last, a, s, flags, err, errlen);
  switch (a->type) {
  case SK_T_TENSOR: {
    SkTensor *t = lsk_test_tensor(L, idx);
    if (t) return sk_push_tensor(s, t) ? -1 : 1;
    if ((flags & LSK_READ_NUMBERS) && (lt == LUA_TNUMBER || lt == LUA_TBOOLEAN)) {
      SkTensor *w = sk_tensor_wrap_number(lua_scalar(L, idx));
      if (!w) return snprintf(err, errlen, "%s", sk_error_message()), -1;
      return sk_push_tensor_owned(s, w) ? -1 : 1;
    }
    return 0;
  }
  case SK_T_INT: {
    int64_t i;
    return lua_int(L, idx, &i) ? (sk_push_int(s, i) ? -1 : 1) : 0;
  }
  case SK_T_FLOAT: return lt == LUA_TNUMBER ? (sk_push_double(s, lua_tonumber(L, idx)) ? -1 : 1) : 0;
  case SK_T_BOOL: return lt == LUA_TBOOLEAN ? (sk_push_bool(s, lua_toboolean(L, idx)) ? -1 : 1) : 0;
  case SK_T_STR: return lt == LUA_TSTRING ? (sk_push_string(s, lua_tostring(L, idx)) ? -1 : 1) : 0;
  case SK_T_SCALAR:
    if (lt != LUA_TBOOLEAN && lt != LUA_TNUMBER) return 0;
    return sk_push_scalar(s, lua_scalar(L, idx)) ? -1 : 1;
  case SK_T_SCALAR_TYPE: {
    SkDType t;
    if (lt != LUA_TSTRING) return 0;
    if (lsk_to_dtype(L, idx, &t))
      return snprintf(err, errlen, "argument '%s': unknown dtype '%s' (expected bool, uint8, int8, int16, int32, int64, "
                      "float16, bfloat16, float32 or float64)", a->name, lua_tostring(L, idx)), -1;
    return sk_push_dtype(s, t) ? -1 : 1;
  }
  case SK_T_DEVICE: {
    SkDevice d;
    if (lt != LUA_TSTRING) return 0;
    if (sk_device_parse(lua_tostring(L, idx), &d)) return snprintf(err, errlen, "argument '%s': %s", a->name, sk_error_message()), -1;
    return sk_push_device(s, d) ? -1 : 1;
  }
  case SK_T_LAYOUT: case SK_T_MEMORY_FORMAT: {
    if (lt != LUA_TSTRING) return 0;
    int v = lsk_enum_value(a->type, lua_tostring(L, idx));
    if (v < 0) return snprintf(err, errlen, "argument '%s': unknown %s '%s' (expected %s)", a->name,
                               a->type == SK_T_LAYOUT ? "layout" : "memory format", lua_tostring(L, idx), lsk_expected(a)), -1;
    return sk_push_int(s, v) ? -1 : 1;
  }
  default: return 0; /* a Generator is only ever None (nil, above) */
  }
}
/* }==== */

/* {==== SkValue -> Lua ==== */
static void push_tensor(lua_State *L, SkTensor **slot, int take) {
  if (take) { lsk_push_tensor(L, *slot); *slot = NULL; }
  else if (!lsk_frame_push_tensor(L, *slot)) lsk_push_tensor(L, sk_tensor_retain(*slot));
}

void lsk_push_value(lua_State *L, SkValue *v, const SkArg *a, int take) {
  switch (v->tag) {
  case SK_VAL_TENSOR: push_tensor(L, &v->u.t, take); if (take) v->tag = SK_VAL_NONE; break;
  case SK_VAL_INT: {
    const char *const *names = a && a->type < sizeof types / sizeof types[0] ? types[a->type].names : NULL;
    int n = 0;
    while (names && names[n]) n++;
    if (names && v->u.i >= 0 && v->u.i < n) lua_pushstring(L, names[v->u.i]);
    else lua_pushinteger(L, v->u.i);
    break;
  }
  case SK_VAL_DOUBLE: lua_pushnumber(L, v->u.d); break;
  case SK_VAL_BOOL: lua_pushboolean(L, v->u.b); break;
  case SK_VAL_SCALAR:
    if (v->n == SK_SCALAR_FLOAT) lua_pushnumber(L, v->u.sb.f);
    else if (v->n == SK_SCALAR_BOOL) lua_pushboolean(L, (int)v->u.sb.i);
    else lua_pushinteger(L, v->u.sb.i);
    break;
  case SK_VAL_STRING: lua_pushstring(L, v->u.str); break;
  case SK_VAL_DTYPE: lua_pushstring(L, sk_dtype_name(v->u.dtype)); break;
  case SK_VAL_DEVICE: {
    char buf[48];
    sk_device_format(v->u.device, buf, sizeof buf);
    lua_pushstring(L, buf);
    break;
  }
  case SK_VAL_TENSORLIST:
    lua_createtable(L, v->n, 0);
    for (int i = 0; i < v->n; i++) {
      if (v->u.tensors[i]) push_tensor(L, &v->u.tensors[i], take);
      else lua_pushboolean(L, 0); /* None in a Tensor?[] */
      lua_rawseti(L, -2, i + 1);
    }
    break;
  case SK_VAL_INTLIST:
    lua_createtable(L, v->n, 0);
    for (int i = 0; i < v->n; i++) { lua_pushinteger(L, v->u.ints[i]); lua_rawseti(L, -2, i + 1); }
    break;
  case SK_VAL_BOOLLIST:
    lua_createtable(L, v->n, 0);
    for (int i = 0; i < v->n; i++) { lua_pushboolean(L, (int)v->u.ints[i]); lua_rawseti(L, -2, i + 1); }
    break;
  case SK_VAL_DOUBLELIST:
    lua_createtable(L, v->n, 0);
    for (int i = 0; i < v->n; i++) { lua_pushnumber(L, v->u.doubles[i]); lua_rawseti(L, -2, i + 1); }
    break;
  default: lua_pushnil(L); break;
  }
}

int lsk_push_value_direct(lua_State *L, const SkValue *v, const SkArg *a) {
  switch (v->tag) {
  case SK_VAL_TENSOR: return lsk_frame_push_tensor(L, v->u.t);
  case SK_VAL_INT:
    if (a && a->type < sizeof types / sizeof types[0] && types[a->type].names) return 0;
    lua_pushinteger(L, v->u.i);
    return 1;
  case SK_VAL_DOUBLE: lua_pushnumber(L, v->u.d); return 1;
  case SK_VAL_BOOL: lua_pushboolean(L, v->u.b); return 1;
  case SK_VAL_SCALAR:
  case SK_VAL_NONE: lsk_push_value(L, (SkValue *)v, a, LSK_PUSH_BORROW); return 1;
  default: return 0;
  }
}
/* }==== */
