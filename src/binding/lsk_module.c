/*
** lsk_module.c — luaopen_sk_core: the C half of `require "sk"`
** Registers the generated ops once per process, then gives each Lua state
** the metatable, the op closures, and the runtime controls.
*/
#include "lsk.h"
#include "sk_autograd.h"
#include "sk_cpu_isa.h"
#include "sk_cuda.h"
#include "sk_error.h"
#include "sk_kernels.h"
#include "sk_ops.h"
#include "sk_parallel.h"
#include "sk_random.h"

#include <stdio.h>
#include <string.h>

static int ops_ready;

static int l_manual_seed(lua_State *L) { sk_manual_seed((uint64_t)luaL_checkinteger(L, 1)); return 0; }
static int l_set_num_threads(lua_State *L) {
  int ok;
  lua_Integer n = lua_tointegerx(L, 1, &ok);
  if (!ok) return lsk_raise(L, "sk.set_num_threads: argument 'n' expected an integer, got %s", luaL_typename(L, 1));
  if (n < 1 || n > SK_MAX_THREADS)
    return lsk_raise(L, "sk.set_num_threads: argument 'n' must be between 1 and %d, got %I", SK_MAX_THREADS, (lua_Integer)n);
  if (sk_set_num_threads((int)n)) return lsk_error(L, "sk.set_num_threads");
  return 0;
}
static int l_get_num_threads(lua_State *L) { lua_pushinteger(L, sk_get_num_threads()); return 1; }
static int l_cpu_isa(lua_State *L) { lua_pushstring(L, sk_cpu_isa()); return 1; }
static int l_empty_cache(lua_State *L) { (void)L; sk_cpu_empty_cache(); return 0; }
static int l_cached_bytes(lua_State *L) { lua_pushinteger(L, (lua_Integer)sk_cpu_cached_bytes()); return 1; }

/* sk.memory_stats(): the CPU allocator's counters (sk_device.h), named as sk.cuda.memory_stats's */
static int l_memory_stats(lua_State *L) {
  SkCpuMemoryStats st;
  sk_cpu_memory_stats(&st);
  const struct { const char *k; uint64_t v; } f[] = {
    {"allocated", st.allocated}, {"peak_allocated", st.peak_allocated}, {"cached", st.cached},
    {"num_allocs", st.num_allocs}, {"num_frees", st.num_frees}, {"num_cache_hits", st.num_cache_hits},
    {"num_ooms", st.num_ooms}};
  lua_createtable(L, 0, (int)(sizeof f / sizeof f[0]));
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) { lua_pushinteger(L, (lua_Integer)f[i].v); lua_setfield(L, -2, f[i].k); }
  return 1;
}

/* sk.dispatch_table("aten::add.Tensor") -> { {key=, source=, origin=, boxed=}, ... } */
static int l_dispatch_table(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  SkOperator *op = sk_op_find(name);
  if (!op) return lsk_raise(L, "sk.dispatch_table: unknown operator '%s'", name);
  SkKernelInfo info[SK_KEY_NUM_RUNTIME];
  int n = sk_op_table(op, info, SK_KEY_NUM_RUNTIME);
  lua_createtable(L, 0, n);
  for (int i = 0; i < n; i++) {
    int k = info[i].key; /* backend slots without a registered backend are not shown */
    if (k >= SK_KEY_BACKEND0 && k <= SK_KEY_BACKEND_LAST && !sk_device_type(sk_key_device_type(k))) continue;
    lua_createtable(L, 0, 3);
    lua_pushstring(L, sk_source_name(info[i].source));
    lua_setfield(L, -2, "source");
    lua_pushstring(L, info[i].origin ? info[i].origin : "?");
    lua_setfield(L, -2, "origin");
    lua_pushboolean(L, info[i].boxed);
    lua_setfield(L, -2, "boxed");
    lua_setfield(L, -2, info[i].key == SK_KEY_UNDEFINED ? "Undefined" : sk_key_name(info[i].key));
  }
  lua_pushstring(L, op->schema.text);
  return 2;
}

/* sk.call("aten::add.Tensor", ...) calls one op directly, by name. */
static int l_call(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  SkOperator *op = sk_op_find(name);
  if (!op) return lsk_raise(L, "sk.call: unknown operator '%s'", name);
  return lsk_call_op(L, op, 2, name);
}

/* Tensor:to(dtype, device or tensor, options): one method for PyTorch's three overloads. */
static int l_to(lua_State *L) {
  SkDType dt;
  int is_dtype = lsk_to_dtype(L, 2, &dt) == 0;
  SkOperator *op = sk_op_find(lsk_test_tensor(L, 2) ? "aten::to.other" : is_dtype ? "aten::to.dtype" : "aten::to.device");
  return lsk_call_op(L, op, 1, "Tensor:to");
}

/* -t: Lua passes the operand twice; neg takes one. Both call the op in this
** C frame, so its errors point at the line that wrote the operator. */
static int l_unm(lua_State *L) {
  lua_settop(L, 1);
  return lsk_call_function(L, lua_upvalueindex(1));
}

/* a // b: floor_divide, PyTorch's __floordiv__. */
static int l_idiv(lua_State *L) {
  lua_settop(L, 2);
  return lsk_call_function(L, lua_upvalueindex(1));
}

/* core.op_function("myops", "softplus"): the overload set sk.ops.myops.softplus, or nil. */
static int l_op_function(lua_State *L) {
  char name[200];
  snprintf(name, sizeof name, "sk.ops.%s.%s", luaL_checkstring(L, 1), luaL_checkstring(L, 2));
  if (!lsk_push_set_function(L, name)) lua_pushnil(L);
  return 1;
}

/* {==== sk.cuda ==== */
static int l_cuda_is_available(lua_State *L) {
  lua_pushboolean(L, sk_cuda_is_available());
  if (!sk_cuda_is_available()) { sk_cuda(); lua_pushstring(L, sk_error_message()); return 2; }
  return 1;
}

static const SkCudaApi *check_cuda(lua_State *L, const char *fname) {
  const SkCudaApi *c = sk_cuda();
  if (!c) lsk_error(L, fname);
  return c;
}

static int l_cuda_device_count(lua_State *L) {
  lua_pushinteger(L, sk_cuda_is_available() ? sk_cuda()->device_count() : 0);
  return 1;
}

static int l_cuda_synchronize(lua_State *L) {
  const SkCudaApi *c = check_cuda(L, "sk.cuda.synchronize");
  if (c->synchronize((int)luaL_optinteger(L, 1, -1))) return lsk_error(L, "sk.cuda.synchronize");
  return 0;
}

static int l_cuda_empty_cache(lua_State *L) {
  if (sk_cuda_is_available()) sk_cuda()->empty_cache();
  (void)L;
  return 0;
}

static int l_cuda_memory_stats(lua_State *L) {
  const SkCudaApi *c = check_cuda(L, "sk.cuda.memory_stats");
  SkCudaMemoryStats st;
  if (c->memory_stats((int)luaL_optinteger(L, 1, 0), &st)) return lsk_error(L, "sk.cuda.memory_stats");
  lua_createtable(L, 0, 7);
  const struct { const char *k; uint64_t v; } f[] = {
    {"allocated", st.allocated}, {"reserved", st.reserved}, {"cached", st.cached}, {"peak_allocated", st.peak_allocated},
    {"num_allocs", st.num_allocs}, {"num_cache_hits", st.num_cache_hits}, {"num_ooms", st.num_ooms}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) { lua_pushinteger(L, (lua_Integer)f[i].v); lua_setfield(L, -2, f[i].k); }
  return 1;
}

/* Before an allocator's one retry: a full collection gives dead tensors' memory back.
** Handlers hold no lua_State: they act on the state whose call is running now. */
static void collect_garbage(void *ud) {
  (void)ud;
  lua_State *L = lsk_current_state();
  if (L) lua_gc(L, LUA_GCCOLLECT);
}
/* }==== */

static void warn_to_lua(const char *msg, void *ud) {
  (void)ud;
  lua_State *L = lsk_current_state();
  if (!L) { fprintf(stderr, "sk warning: %s\n", msg); return; }
  lua_warning(L, "sk: ", 1);
  lua_warning(L, msg, 0);
}

int luaopen_sk_core(lua_State *L);
int luaopen_sk_core(lua_State *L) {
  if (!ops_ready) {
    if (sk_ops_init()) return lsk_raise(L, "sk: cannot register the built-in ops: %s", sk_error_message());
    if (sk_autograd_init()) return lsk_raise(L, "sk: cannot register the autograd kernels: %s", sk_error_message());
    sk_device_set_ready(SK_DEVICE_CUDA, sk_cuda_ready); /* naming a cuda device loads the module */
    ops_ready = 1;
  }
  sk_set_warn_handler(warn_to_lua, NULL);
  sk_set_memory_pressure_handler(collect_garbage, NULL);
  static const luaL_Reg fns[] = {
    {"manual_seed", l_manual_seed}, {"set_num_threads", l_set_num_threads}, {"get_num_threads", l_get_num_threads},
    {"empty_cache", l_empty_cache}, {"cpu_isa", l_cpu_isa}, {"cached_bytes", l_cached_bytes}, {"memory_stats", l_memory_stats}, {"dispatch_table", l_dispatch_table},
    {"call", l_call}, {"op_function", l_op_function}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lsk_open_tensor(L);
  lsk_open_errors(L);
  lsk_open_plan(L);
  lsk_open_ops(L);
  lua_pushcfunction(L, l_to);
  lua_setfield(L, -2, "to");
  lua_getfield(L, -1, "functions");
  lua_getfield(L, -1, "neg");
  lua_pushcclosure(L, l_unm, 1);
  lua_setfield(L, -3, "unm");
  lua_getfield(L, -1, "bitwise_not"); /* ~t, with the same one-operand adapter */
  lua_pushcclosure(L, l_unm, 1);
  lua_setfield(L, -3, "bnot");
  lua_getfield(L, -1, "floor_divide");
  lua_pushcclosure(L, l_idiv, 1);
  lua_setfield(L, -3, "idiv");
  lua_pop(L, 1);
  lua_newtable(L);
  lsk_open_library(L);
  lua_setfield(L, -2, "lib");
  lsk_open_autograd(L);
  lua_setfield(L, -2, "autograd");
  lsk_open_io(L);
  lua_setfield(L, -2, "io");
  static const luaL_Reg cuda_fns[] = {
    {"is_available", l_cuda_is_available}, {"device_count", l_cuda_device_count}, {"synchronize", l_cuda_synchronize},
    {"empty_cache", l_cuda_empty_cache}, {"memory_stats", l_cuda_memory_stats}, {NULL, NULL}};
  luaL_newlib(L, cuda_fns);
  lua_setfield(L, -2, "cuda");
  return 1;
}
