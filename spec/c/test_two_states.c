/*
** test_two_states.c — two lua_States in one process, each with its own sk
** The module's handlers (warnings, memory pressure) and its per-state data
** must never point at a closed state: open two, close the newest, and use
** the other (valgrind, run by make memcheck, sees any stale pointer).
*/
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>
#include <stdlib.h>

static int run(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) == LUA_OK) return 0;
  fprintf(stderr, "test_two_states: %s\n", lua_tostring(L, -1));
  return 1;
}

/* The module comes from $SK_BUILD (the Makefile's build folder), build/ by default. */
static lua_State *open_sk(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  const char *dir = getenv("SK_BUILD");
  lua_pushstring(L, dir && *dir ? dir : "build");
  lua_setglobal(L, "SK_BUILD");
  if (run(L, "package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path\n"
             "package.cpath = SK_BUILD .. '/?.so;' .. package.cpath\n"
             "sk = require 'sk'\n")) return NULL;
  return L;
}

/* Registers a kernel twice (a warning from the dispatcher) and computes. */
static const char *work =
  "local lib = sk.library('two')\n"
  "lib:define('f(Tensor self) -> Tensor')\n"
  "lib:impl('f', 'CPU', function(t) return t + 1 end)\n"
  "lib:impl('f', 'CPU', function(t) return t + 2 end)\n"
  "local r = sk.ops.two.f(sk.ones(2)):sum():item()\n"
  "lib:close()\n"
  "assert(r == 6, r)\n"
  "for _ = 1, 50 do local _ = sk.ones(512, 512) * 2 end\n";

int main(void) {
  int fails = 0;
  lua_State *a = open_sk(), *b = open_sk();
  if (!a || !b) return 1;
  fails += run(b, work);
  lua_close(b); /* the newest state goes first */
  fails += run(a, work);
  lua_State *c = open_sk();
  if (!c) return 1;
  lua_close(a);
  fails += run(c, work);
  fails += run(c, "local t = sk.ones(3); collectgarbage(); assert(t:sum():item() == 3)");
  lua_close(c);
  printf("%d passed, %d failed\n", 4 - fails, fails);
  return fails != 0;
}
