/*
** bench/blas_direct.c — sgemm called directly, as the matmul baselines
** A tiny Lua module: require("blas_direct").sgemm(n, reps, threads, lib) -> seconds per n x n x n
** call, lib "dnnl" (oneDNN, what sk's float32 matmul calls; on OpenMP's threads) or "openblas"
** (the default); .now() -> wall-clock seconds.
*/
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <lauxlib.h>
#include <lua.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* OpenBLAS on `threads` (default 1) of its own, then back to 1: sk runs it on one thread
** per piece of a product and counts on that. oneDNN runs on `threads` OpenMP threads. */
static void call(int dnnl, int n, const float *a, const float *b, float *c) {
  if (dnnl) dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

static int sgemm(lua_State *L) {
  int n = (int)luaL_checkinteger(L, 1), reps = (int)luaL_checkinteger(L, 2), threads = (int)luaL_optinteger(L, 3, 1);
  int dnnl = strcmp(luaL_optstring(L, 4, "openblas"), "dnnl") == 0;
  float *a = malloc(sizeof(float) * (size_t)n * (size_t)n), *b = malloc(sizeof(float) * (size_t)n * (size_t)n),
        *c = malloc(sizeof(float) * (size_t)n * (size_t)n);
  if (!a || !b || !c) return luaL_error(L, "out of memory");
  for (long i = 0; i < (long)n * n; i++) { a[i] = (float)(i % 7) * 0.1f; b[i] = (float)(i % 5) * 0.2f; c[i] = 0; }
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
  call(dnnl, n, a, b, c);
  double t0 = now();
  for (int r = 0; r < reps; r++) call(dnnl, n, a, b, c);
  double dt = (now() - t0) / reps;
  openblas_set_num_threads(1);
  free(a); free(b); free(c);
  lua_pushnumber(L, dt);
  return 1;
}

static int l_now(lua_State *L) { lua_pushnumber(L, now()); return 1; }

int luaopen_blas_direct(lua_State *L);
int luaopen_blas_direct(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, sgemm);
  lua_setfield(L, -2, "sgemm");
  lua_pushcfunction(L, l_now);
  lua_setfield(L, -2, "now");
  return 1;
}
