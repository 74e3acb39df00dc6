/*
** lsk_error.c — Lua errors at the user's line
** Every error the binding raises names what the user called and points at
** its caller, as luaL_error does, except that frames of sk's own Lua files
** (lua/sk/ *.lua) are skipped: `t:cuda()` or `t[i]` report the line that
** wrote them, not sk's internals. A C caller (pcall) gives no position.
*/
#include "lsk.h"
#include "sk_error.h"

#include <string.h>

void lsk_where(lua_State *L) {
  LskState *st = lsk_state(L);
  size_t nh = st ? strlen(st->hidden) : 0;
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Slf", &ar)) break;
    lua_CFunction cf = lua_tocfunction(L, -1);
    lua_pop(L, 1);
    if (*ar.what == 'C' ? cf == lsk_tensor_index : nh && strncmp(ar.source, st->hidden, nh) == 0) continue;
    if (ar.currentline > 0) { lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline); return; }
    break;
  }
  lua_pushliteral(L, "");
}

int lsk_raise(lua_State *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lsk_where(L);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_concat(L, 2);
  return lua_error(L);
}

int lsk_raise_plain(lua_State *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return lua_error(L);
}

/* fname names the op once: a core message starting (or a context ending) with its own name loses it. */
int lsk_error(lua_State *L, const char *fname) {
  sk_error_drop_self(fname);
  return lsk_raise(L, "%s: %s", fname, sk_error_message());
}

/* core.raise(msg): error(msg) at the user's line, for sk's own Lua files. */
static int l_raise(lua_State *L) {
  const char *msg = luaL_tolstring(L, 1, NULL);
  return lsk_raise(L, "%s", msg);
}

/* core.hide_source(prefix): frames whose source starts with prefix are sk's own. */
static int l_hide_source(lua_State *L) {
  size_t n;
  const char *p = luaL_checklstring(L, 1, &n);
  LskState *st = lsk_state(L);
  if (n >= sizeof st->hidden) return lsk_raise(L, "sk.core.hide_source: path too long");
  memcpy(st->hidden, p, n + 1);
  return 0;
}

void lsk_open_errors(lua_State *L) {
  lua_pushcfunction(L, l_raise);
  lua_setfield(L, -2, "raise");
  lua_pushcfunction(L, l_hide_source);
  lua_setfield(L, -2, "hide_source");
}
