/*
** lsk_dlpack.c — DLPack from Lua: t:to_dlpack() and sk.from_dlpack(capsule)
** A capsule is a full userdata (metatable "sk.DLPackCapsule") holding one DLManagedTensor*,
** PyTorch's PyCapsule rule in Lua: the pointer is consumed once. Whoever consumes it
** (sk.from_dlpack, or a C host that reads the box and stores NULL in it) takes over its
** deleter; a capsule never consumed runs the deleter when it is collected or closed.
** sk.from_dlpack also takes a light userdata from a C host, whose deleter it then owns.
** sk_dlpack.c does the conversions.
*/
#include "lsk.h"
#include "sk_dlpack.h"
#include "sk_error.h"

#include <dlpack/dlpack.h>

#define CAPSULE_MT "sk.DLPackCapsule"

/* __gc and __close: the deleter of a capsule nobody consumed */
static int capsule_free(lua_State *L) {
  DLManagedTensor **box = luaL_checkudata(L, 1, CAPSULE_MT);
  DLManagedTensor *m = *box;
  *box = NULL;
  if (m && m->deleter) m->deleter(m);
  return 0;
}

static int capsule_tostring(lua_State *L) {
  DLManagedTensor **box = luaL_checkudata(L, 1, CAPSULE_MT);
  lua_pushfstring(L, "DLPack capsule (%s)", *box ? "unconsumed" : "consumed");
  return 1;
}

static int l_to_dlpack(lua_State *L) {
  SkTensor *t = lsk_check_tensor(L, 1, "Tensor:to_dlpack", "self");
  DLManagedTensor **box = lua_newuserdatauv(L, sizeof *box, 0); /* made empty first: a memory error leaks nothing */
  *box = NULL;
  luaL_setmetatable(L, CAPSULE_MT);
  if (sk_to_dlpack(t, box)) return lsk_raise(L, "Tensor:to_dlpack: %s", sk_error_message());
  return 1;
}

static int l_from_dlpack(lua_State *L) {
  DLManagedTensor **box = luaL_testudata(L, 1, CAPSULE_MT), *m = box ? *box : lua_touserdata(L, 1);
  if (!box && (lua_type(L, 1) != LUA_TLIGHTUSERDATA || !m))
    return lsk_raise(L, "sk.from_dlpack: argument 'capsule' must be a DLPack capsule (Tensor:to_dlpack) or a "
                      "DLManagedTensor pointer (a light userdata), not a %s", luaL_typename(L, 1));
  if (!m)
    return lsk_raise(L, "sk.from_dlpack: from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                      "consumed only once, so you might have already constructed a tensor from it once.");
  lsk_call_entry(L, lsk_state(L)); /* the push below takes a spare box: no memory error while C owns t */
  SkTensor *t;
  if (sk_from_dlpack(m, &t)) return lsk_raise(L, "sk.from_dlpack: %s", sk_error_message());
  if (box) *box = NULL; /* consumed: t's storage now runs the deleter */
  if (!lsk_push_spare(L, lsk_state(L), t)) lsk_push_tensor(L, t);
  return 1;
}

void lsk_open_dlpack(lua_State *L) {
  static const luaL_Reg capsule_mt[] = {
    {"__gc", capsule_free}, {"__close", capsule_free}, {"__tostring", capsule_tostring}, {NULL, NULL}};
  if (luaL_newmetatable(L, CAPSULE_MT)) luaL_setfuncs(L, capsule_mt, 0);
  lua_pop(L, 1);
  lua_pushcfunction(L, l_to_dlpack);
  lua_setfield(L, -2, "to_dlpack");
  lua_pushcfunction(L, l_from_dlpack);
  lua_setfield(L, -2, "from_dlpack");
}
