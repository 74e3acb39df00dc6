/*
** lsk_dlpack.c — DLPack from Lua: t:to_dlpack() and sk.from_dlpack(capsule)
** A capsule is a light userdata holding a DLManagedTensor* (what a C host passes
** through the Lua stack); sk_dlpack.c does the conversions.
*/
#include "lsk.h"
#include "sk_dlpack.h"
#include "sk_error.h"

static int l_to_dlpack(lua_State *L) {
  SkTensor *t = lsk_check_tensor(L, 1, "Tensor:to_dlpack", "self");
  struct DLManagedTensor *m;
  if (sk_to_dlpack(t, &m)) return lsk_raise(L, "Tensor:to_dlpack: %s", sk_error_message());
  lua_pushlightuserdata(L, m);
  return 1;
}

static int l_from_dlpack(lua_State *L) {
  if (lua_type(L, 1) != LUA_TLIGHTUSERDATA || !lua_touserdata(L, 1))
    return lsk_raise(L, "sk.from_dlpack: argument 'capsule' must be a DLManagedTensor pointer (a light userdata), not a %s",
                      luaL_typename(L, 1));
  lsk_call_entry(L, lsk_state(L)); /* the push below takes a spare box: no memory error while C owns t */
  SkTensor *t;
  if (sk_from_dlpack(lua_touserdata(L, 1), &t)) return lsk_raise(L, "sk.from_dlpack: %s", sk_error_message());
  if (!lsk_push_spare(L, lsk_state(L), t)) lsk_push_tensor(L, t);
  return 1;
}

void lsk_open_dlpack(lua_State *L) {
  lua_pushcfunction(L, l_to_dlpack);
  lua_setfield(L, -2, "to_dlpack");
  lua_pushcfunction(L, l_from_dlpack);
  lua_setfield(L, -2, "from_dlpack");
}
