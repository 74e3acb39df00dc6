/*
** examples/dlpack/exchange.c — a C host and sk exchanging tensors through DLPack, no copy.
** The host makes a float array, hands it to Lua as a DLManagedTensor* (a light userdata):
** sk.from_dlpack views it, the Lua code doubles it in place, and the host sees the change.
** Lua returns t:to_dlpack() of a tensor of its own, a capsule (a userdata holding the
** DLManagedTensor*): the host consumes it, taking the pointer and storing NULL in its place
** (PyTorch's "used_dltensor" rename), reads it and calls its deleter.
** Deleters run on the thread that runs sk (its refcounts are not atomic).
**   cc -I/usr/include/lua5.4 -o exchange examples/dlpack/exchange.c -llua5.4
**   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" ./exchange
*/
#include <dlpack/dlpack.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>

static int deleted; /* how often the producer's deleter ran */

static void host_deleter(DLManagedTensor *m) {
  deleted++;
  free(m->dl_tensor.data);
  free(m->dl_tensor.shape);
  free(m);
}

/* A 1-d float32 tensor of n elements owned by the host. */
static DLManagedTensor *host_tensor(int n) {
  DLManagedTensor *m = calloc(1, sizeof *m);
  float *data = malloc(n * sizeof *data);
  int64_t *shape = malloc(sizeof *shape);
  for (int i = 0; i < n; i++) data[i] = (float)(i + 1);
  shape[0] = n;
  m->dl_tensor = (DLTensor){.data = data, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1},
                            .shape = shape, .strides = NULL, .byte_offset = 0};
  m->deleter = host_deleter;
  return m;
}

static const char *script =
  "local sk = require 'sk'\n"
  "local capsule = ...\n"
  "local t = sk.from_dlpack(capsule)  -- the host's memory, viewed\n"
  "t:mul_(2)\n"
  "return sk.arange(5, {dtype = 'int64'}):to_dlpack()\n";

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  DLManagedTensor *mine = host_tensor(4);
  const float *values = mine->dl_tensor.data;
  if (luaL_loadstring(L, script) != LUA_OK) { fprintf(stderr, "%s\n", lua_tostring(L, -1)); return 1; }
  lua_pushlightuserdata(L, mine);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) { fprintf(stderr, "%s\n", lua_tostring(L, -1)); return 1; }
  printf("C sees sk's doubling: %g %g %g %g\n", values[0], values[1], values[2], values[3]);

  DLManagedTensor **capsule = luaL_checkudata(L, -1, "sk.DLPackCapsule"), *theirs = *capsule;
  *capsule = NULL; /* consumed: the capsule's __gc no longer runs the deleter */
  const DLTensor *d = &theirs->dl_tensor;
  if (d->ndim != 1 || d->dtype.code != kDLInt || d->dtype.bits != 64) { fprintf(stderr, "unexpected tensor\n"); return 1; }
  const int64_t *v = (const int64_t *)((const char *)d->data + d->byte_offset);
  printf("sk's arange in C:");
  for (int64_t i = 0; i < d->shape[0]; i++) printf(" %lld", (long long)v[i * (d->strides ? d->strides[0] : 1)]);
  printf("\n");
  theirs->deleter(theirs); /* done with it: sk releases its tensor */

  lua_close(L); /* the collector frees sk's view of the host's array: the deleter runs */
  printf(deleted == 1 ? "producer's deleter ran once\n" : "producer's deleter ran %d times\n", deleted);
  return deleted == 1 ? 0 : 1;
}
