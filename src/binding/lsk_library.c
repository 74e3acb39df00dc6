/*
** lsk_library.c — what a Lua script registers at run time: ops, kernels,
** meta functions, structured families, fallbacks and backends
** Everything goes through the same C machinery as codegen's output: ops
** are SkOperators with copied schemas, Lua kernels are boxed kernels,
** structured families run sk_structured_boxed. lua/sk/library.lua builds
** the `sk.library` object on these primitives and owns the registrations.
** Invariants: a Lua function behind a kernel is referenced from the
** registry of the state that registered it, through a token that knows
** whether that state is still open; while any Lua kernel runs, nothing
** is registered or removed (the tables the dispatcher is reading stay put).
*/
#define _GNU_SOURCE /* dladdr */
#include "lsk.h"
#include "sk_cpu_fallback.h"
#include "sk_error.h"
#include "sk_host_backend.h"
#include "sk_kernels.h" /* the built-in structured ops (sk.structured_builtin) */
#include "sk_ops.h"
#include "sk_structured.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int running; /* Lua kernels, meta functions and fallbacks now on the C stack */

/* {==== Lua functions behind C callbacks ==== */
typedef struct StateToken { int alive, refs; } StateToken;

typedef struct LuaFn {
  lua_State *L;          /* main thread of the registering state */
  StateToken *token;
  int ref;
  int key;               /* the dispatch key it serves (for counters and messages) */
  const SkArg *args;     /* the arguments it is passed (a kernel's op, a family's out op), or NULL */
  char where[200];       /* "Lua kernel for 'myops::softplus' on CPU" */
} LuaFn;

static const char token_key = 0;

static StateToken *state_token(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &token_key);
  StateToken **ud = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return ud ? *ud : NULL;
}

static int token_gc(lua_State *L) {
  StateToken **ud = lua_touserdata(L, 1);
  (*ud)->alive = 0;
  if (--(*ud)->refs == 0) free(*ud);
  return 0;
}

static LuaFn *luafn_new(lua_State *L, int idx, const SkOperator *op, int key, const char *fmt, const char *a,
                        const char *b) {
  LuaFn *f = calloc(1, sizeof *f);
  if (!f) { lsk_raise(L, "out of memory"); return NULL; }
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  f->L = lua_tothread(L, -1);
  lua_pop(L, 1);
  f->token = state_token(L);
  f->token->refs++;
  lua_pushvalue(L, idx);
  f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  f->key = key;
  f->args = op ? op->schema.args : NULL;
  snprintf(f->where, sizeof f->where, fmt, a, b);
  return f;
}

static void luafn_free(void *p) {
  LuaFn *f = p;
  if (!f) return;
  if (f->token->alive) luaL_unref(f->L, LUA_REGISTRYINDEX, f->ref);
  if (--f->token->refs == 0) free(f->token);
  free(f);
}

/* The state to call f on: the one running the current op call, if it shares f's registry
** (f's own main thread does without looking). */
static lua_State *state_for(const LuaFn *f) {
  if (!f->token->alive) return NULL;
  lua_State *L = lsk_current_state();
  if (L == f->L || (L && state_token(L) == f->token)) return L;
  return f->L;
}

/* Calls the function of f with the values keep() and push() push, in protected
** mode: no longjmp crosses the C frames of the call (what they own would leak).
** When every value can be pushed without allocating (direct: the caller's own
** values, numbers, spare boxes), they are pushed here and the function is called
** with lua_pcall; else a C trampoline pushes them inside the protected call, so a
** memory error while pushing is an error value like any other.
** keep() pushes the first arguments and leaves them below the function's results
** (the boxes of a functional impl's outs, for lsk_frame_keep). nres counts them
** and the function's results, or is LUA_MULTRET. Results are left on L above its
** old top. Returns 0, or -1 with the error set. */
typedef int (*PushFn)(lua_State *L, void *ud, int direct); /* how many; direct: -1 when it would allocate */
typedef struct Protected { const LuaFn *f; PushFn keep, push; void *ud; int ncopy; } Protected;

/* The caller's Lua values arrive as arguments 2..ncopy+1: a tensor argument that
** is one of them is passed as that very value (no new userdata), as
** lsk_frame_push_tensor does for a frame of the running C function. */
/* The one layout of a callback's arguments: keep()'s values, the function, keep()'s
** values again, push()'s values. Returns how many arguments, nkeep set; -1 when direct
** and a value would allocate (the stack as it was; spare boxes taken hold their
** tensors, and the collector frees them). Inlined into both callers: called through one
** out-of-line copy, the direct path costs about 190 more instructions a structured call. */
static inline __attribute__((always_inline)) int push_call(lua_State *L, const LuaFn *f, PushFn keep, PushFn push, void *ud, int direct, int *nkeep) {
  int top = lua_gettop(L);
  *nkeep = keep ? keep(L, ud, direct) : 0;
  if (*nkeep < 0) return lua_settop(L, top), -1;
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
  for (int i = 1; i <= *nkeep; i++) lua_pushvalue(L, top + i);
  int n = push ? push(L, ud, direct) : 0;
  if (n < 0) return lua_settop(L, top), -1;
  return *nkeep + n;
}

static int trampoline(lua_State *L) {
  const Protected *p = lua_touserdata(L, 1);
  LskFrame copies;
  lsk_frame_enter(&copies, L, 2, 1 + p->ncopy);
  int base = lua_gettop(L), nkeep;
  int n = push_call(L, p->f, p->keep, p->push, p->ud, 0, &nkeep);
  lsk_frame_leave(&copies);
  lua_call(L, n, LUA_MULTRET);
  return lua_gettop(L) - base;
}

/* The direct call: 1 when the values were pushed and the call was made (status in *st). */
static int direct_call(lua_State *L, const LuaFn *f, PushFn keep, PushFn push, void *ud, int nres, int *st) {
  int nkeep;
  if (!lua_checkstack(L, 2 * SK_MAX_OUTPUTS + 8)) return 0;
  int n = push_call(L, f, keep, push, ud, 1, &nkeep);
  if (n < 0) return 0;
  LskFrame frame; /* the Lua function's own values are not the caller's: no lookups while it runs */
  lsk_frame_enter(&frame, L, 1, 0);
  *st = lua_pcall(L, n, nres == LUA_MULTRET ? nres : nres - nkeep, 0);
  lsk_frame_leave(&frame); /* restores the outer frame even when a frame inside was left by an error */
  return 1;
}

static int protected_call(lua_State *L, const LuaFn *f, PushFn keep, PushFn push, void *ud, int nres) {
  int st;
  if (!direct_call(L, f, keep, push, ud, nres, &st)) {
    const LskFrame *outer = lsk_frame;
    int ncopy = outer && outer->L == L && outer->last >= outer->first ? outer->last - outer->first + 1 : 0;
    if (ncopy && outer->last > lua_gettop(L)) ncopy = 0;
    if (!lua_checkstack(L, ncopy + 8)) return sk_error("%s: Lua stack overflow", f->where);
    Protected p = {f, keep, push, ud, ncopy};
    lua_pushcfunction(L, trampoline);
    lua_pushlightuserdata(L, &p);
    for (int i = 0; i < ncopy; i++) lua_pushvalue(L, outer->first + i); /* no allocation */
    LskFrame frame;
    lsk_frame_enter(&frame, L, 1, 0);
    st = lua_pcall(L, 1 + ncopy, nres, 0);
    lsk_frame_leave(&frame);
  }
  if (st == LUA_OK) return 0;
  const char *msg = lua_tostring(L, -1);
  sk_error("%s raised: %s", f->where, msg ? msg : "(an error object that is not a string)");
  lua_pop(L, 1);
  return -1;
}

/* Pushers for protected_call. */
/* n values a of the arguments spec (an op's schema args), tensors borrowed. */
typedef struct Args { const SkValue *a; int n; const SkArg *spec; } Args;
static int push_args(lua_State *L, void *ud, int direct) {
  const Args *x = ud;
  if (!direct) {
    luaL_checkstack(L, x->n + 4, "too many arguments");
    for (int i = 0; i < x->n; i++) lsk_push_value(L, (SkValue *)&x->a[i], &x->spec[i], LSK_PUSH_BORROW);
    return x->n;
  }
  if (!lua_checkstack(L, x->n + 4)) return -1;
  for (int i = 0; i < x->n; i++)
    if (!lsk_push_value_direct(L, &x->a[i], &x->spec[i])) return -1;
  return x->n;
}

/* Versions of the tensor arguments a callee may not write, to catch writes through sk ops. */
static void snapshot_versions(const SkOperator *op, const SkValue *a, int n, uint64_t *ver) {
  for (int i = 0; i < n; i++)
    ver[i] = a[i].tag == SK_VAL_TENSOR && !op->schema.args[i].is_write ? a[i].u.t->storage->version : 0;
}

static int check_versions(const SkOperator *op, const SkValue *a, int n, const uint64_t *ver, const char *where,
                          SkTensor *const *allowed, int nallowed) {
  for (int i = 0; i < n; i++) {
    if (a[i].tag != SK_VAL_TENSOR || op->schema.args[i].is_write || a[i].u.t->storage->version == ver[i]) continue;
    int shared = 0;
    for (int j = 0; j < nallowed; j++) shared |= allowed[j] && allowed[j]->storage == a[i].u.t->storage;
    if (!shared)
      return sk_error("%s wrote to argument '%s', which the schema does not mark as written (Tensor(a!))", where,
                      op->schema.args[i].name);
  }
  return 0;
}
/* }==== */

/* {==== Lua kernels (boxed) ==== */
/* Reads the `got` Lua results above top as op's returns onto rs, checking them against the schema:
** count, types, aliasing results being the very argument, and (for a backend key) the device. */
static int take_results(lua_State *L, SkOperator *op, int top, int got, const SkValue *a, int key, const char *where,
                        SkStack *rs) {
  const SkSchema *sc = &op->schema;
  if (got != sc->nrets)
    return sk_error("%s returned %d value%s, the schema says %d", where, got, got == 1 ? "" : "s", sc->nrets);
  for (int j = 0; j < got; j++) {
    char err[256];
    int r = lsk_read_value(L, top + 1 + j, top + 1 + j, &sc->rets[j], rs, 0, err, sizeof err);
    if (r == 0)
      return sk_error("%s returned %s as result %d, the schema says %s", where,
                      lsk_test_tensor(L, top + 1 + j) ? "a tensor" : luaL_typename(L, top + 1 + j), j + 1,
                      lsk_expected(&sc->rets[j]));
    if (r < 0) return sk_error("%s: %s", where, err);
    if (sc->rets[j].is_write && sc->rets[j].alias_of >= 0 && rs->v[j].u.t != a[sc->rets[j].alias_of].u.t)
      return sk_error("%s must return its argument '%s' as result %d (the schema says it is written and returned)", where,
                      sc->args[sc->rets[j].alias_of].name, j + 1);
    if (rs->v[j].tag == SK_VAL_TENSOR && !sc->rets[j].is_write && sk_key_is_backend(key) &&
        sk_device_key(rs->v[j].u.t->device) != key) {
      char d[48];
      sk_device_format(rs->v[j].u.t->device, d, sizeof d);
      return sk_error("%s returned a tensor on '%s' as result %d, expected one on '%s'", where, d, j + 1, sk_key_name(key));
    }
  }
  return 0;
}

/* The boxed convention: a kernel's results replace its arguments (those from base up). */
static int replace_args(SkStack *s, int base, const SkStack *rs) {
  sk_stack_truncate(s, base);
  for (int j = 0; j < rs->n; j++)
    if (sk_push_copy(s, &rs->v[j])) return -1;
  return 0;
}

static int lua_kernel_run(SkOperator *op, SkStack *s, const LuaFn *f) {
  lua_State *L = state_for(f);
  if (!L) return sk_error("%s: its Lua state was closed", f->where);
  const SkSchema *sc = &op->schema;
  int nargs = sc->nargs, base = s->n - nargs, top = lua_gettop(L);
  const SkValue *a = &s->v[base];
  uint64_t ver[64];
  if (nargs > 64) return sk_error("%s: too many arguments", f->where);
  snapshot_versions(op, a, nargs, ver);
  Args args = {a, nargs, sc->args};
  if (protected_call(L, f, NULL, push_args, &args, LUA_MULTRET)) { lua_settop(L, top); return -1; }
  SkStack rs;
  sk_stack_init(&rs);
  int rc = take_results(L, op, top, lua_gettop(L) - top, a, f->key, f->where, &rs);
  if (rc) lua_settop(L, top);
  else lsk_frame_keep(L, lua_gettop(L) - top);
  SkTensor *written[SK_MAX_OUTPUTS * 2];
  int nw = 0;
  for (int i = 0; i < nargs && nw < SK_MAX_OUTPUTS * 2; i++)
    if (sc->args[i].is_write && a[i].tag == SK_VAL_TENSOR) written[nw++] = a[i].u.t;
  if (!rc) rc = check_versions(op, a, nargs, ver, f->where, written, nw);
  if (!rc) {
    for (int i = 0; i < nargs; i++)
      if (sc->args[i].is_write && a[i].tag == SK_VAL_TENSOR) sk_tensor_bump_version(a[i].u.t);
    rc = replace_args(s, base, &rs);
  }
  sk_stack_free(&rs);
  return rc;
}

/* Every Lua callback counts as running from its first Lua API call to its last:
** a finalizer that runs meanwhile (any allocation may run one) cannot close the
** library whose kernel this is. */
static int lua_kernel(SkOperator *op, SkStack *s, void *ctx) {
  running++;
  int rc = lua_kernel_run(op, s, ctx);
  running--;
  return rc;
}
/* }==== */

/* {==== Lua meta functions and impls ==== */
/* A meta context is recognised as a tensor box is, by its size and a mark (its own
** address keyed with META_MARK): a script cannot write these bytes. */
typedef struct MetaRef { SkMeta *m; uintptr_t mark; } MetaRef;
#define META_MARK ((uintptr_t)0x5EC0A7E47ull)

static SkMeta *check_meta(lua_State *L) {
  MetaRef *r = lua_touserdata(L, 1);
  if (!r || lua_rawlen(L, 1) != sizeof *r || r->mark != ((uintptr_t)r ^ META_MARK))
    luaL_checkudata(L, 1, "sk.Meta"); /* not a context: raises its usual error */
  if (!r->m) lsk_raise(L, "meta context used after its meta function returned");
  return r->m;
}

/* m:set_output(i, sizes, dtype[, strides]) — i is 0-based, as in PyTorch. */
static int m_set_output(lua_State *L) {
  SkMeta *m = check_meta(L);
  lua_Integer i = luaL_checkinteger(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS];
  lua_Integer n = (lua_Integer)lua_rawlen(L, 3);
  if (n > SK_MAX_DIMS) return lsk_raise(L, "m:set_output: argument 'sizes' has %d dimensions, at most %d", (int)n, SK_MAX_DIMS);
  for (lua_Integer d = 1; d <= n; d++) {
    lua_rawgeti(L, 3, d);
    int ok;
    sizes[d - 1] = lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok) return lsk_raise(L, "m:set_output: argument 'sizes' must hold integers");
  }
  SkDType dt;
  if (lsk_to_dtype(L, 4, &dt)) return lsk_raise(L, "m:set_output: unknown dtype '%s'", luaL_checkstring(L, 4));
  int has_strides = lua_istable(L, 5);
  for (lua_Integer d = 1; has_strides && d <= n; d++) {
    lua_rawgeti(L, 5, d);
    strides[d - 1] = lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  if (i < 0 || i >= m->noutputs) return lsk_raise(L, "m:set_output: output index %d out of range [0, %d)", (int)i, m->noutputs);
  for (lua_Integer d = 0; d < n; d++)
    if (sizes[d] < 0) return lsk_raise(L, "m:set_output: negative size %d in dim %d", (int)sizes[d], (int)d);
  if (sk_meta_set_output(m, (int)i, (int)n, sizes, has_strides ? strides : NULL, dt)) return lsk_error(L, "m:set_output");
  return 0;
}

/* m:output(i): the out/self tensor of an out/in-place call, or what was set, or nil. */
static int m_output(lua_State *L) {
  SkMeta *m = check_meta(L);
  lua_Integer i = luaL_checkinteger(L, 2);
  if (i < 0 || i >= m->noutputs || !m->outputs[i]) return lua_pushnil(L), 1;
  lsk_push_tensor(L, sk_tensor_retain(m->outputs[i]));
  return 1;
}

static int m_variant(lua_State *L) {
  static const char *const names[] = {"functional", "inplace", "out"};
  lua_pushstring(L, names[check_meta(L)->variant]);
  return 1;
}

typedef struct MetaArgs { SkMeta *m; Args args; MetaRef *r; int mref; } MetaArgs;

/* Pushes the context object (one per state, anchored in the registry as st->meta_ref;
** a nested meta call makes its own), then the args. */
static int push_meta_args(lua_State *L, void *ud, int direct) {
  MetaArgs *x = ud;
  LskState *st = lsk_state(L);
  if (direct && st->meta_ref == LUA_NOREF) return -1;
  if (!direct) luaL_checkstack(L, x->args.n + 8, "too many arguments");
  lua_rawgeti(L, LUA_REGISTRYINDEX, st->meta_ref);
  MetaRef *r = lua_touserdata(L, -1);
  if (!r || r->m) {
    lua_pop(L, 1);
    if (direct) return -1; /* in use by an outer meta call: a new one allocates */
    int cached = r != NULL;
    r = lua_newuserdatauv(L, sizeof *r, 0);
    r->m = NULL;
    r->mark = (uintptr_t)r ^ META_MARK;
    luaL_setmetatable(L, "sk.Meta");
    lua_pushvalue(L, -1);
    if (!cached) st->meta_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    else x->mref = luaL_ref(L, LUA_REGISTRYINDEX); /* keeps it alive until it is invalidated */
  }
  int n = push_args(L, &x->args, direct);
  if (n < 0) return -1;
  r->m = x->m;
  x->r = r;
  return 1 + n;
}

static int lua_meta_run(SkMeta *m, const SkValue *a, int nargs, const LuaFn *f) {
  lua_State *L = state_for(f);
  if (!L) return sk_error("%s: its Lua state was closed", f->where);
  int top = lua_gettop(L);
  MetaArgs x = {m, {a, nargs, f->args}, NULL, LUA_NOREF};
  int rc = protected_call(L, f, NULL, push_meta_args, &x, 0);
  if (x.r) x.r->m = NULL;
  luaL_unref(L, LUA_REGISTRYINDEX, x.mref);
  lua_settop(L, top);
  for (int i = 0; i < m->noutputs && !rc; i++)
    if (!m->outputs[i]) rc = sk_error("%s did not declare output %d (call m:set_output(%d, sizes, dtype))", f->where, i, i);
  return rc;
}

static int lua_meta(SkMeta *m, const SkValue *a, int nargs, void *ud) {
  running++;
  int rc = lua_meta_run(m, a, nargs, ud);
  running--;
  return rc;
}

/* In-place and out impls write into fresh tensors that are copied over the
** caller's only when the impl succeeded: a Lua error never leaves them half-written.
** A functional impl's outs are the call's results: their boxes are kept (lsk_frame_keep). */
typedef struct ImplArgs { SkTensor *const *outs; int nouts; Args args; } ImplArgs;
static int push_impl_outs(lua_State *L, void *ud, int direct) {
  const ImplArgs *x = ud;
  LskState *st = lsk_state(L);
  if (direct && st->nspare < x->nouts) return -1;
  if (!direct) luaL_checkstack(L, 2 * x->nouts + x->args.n + 4, "too many arguments");
  for (int i = 0; i < x->nouts; i++) {
    SkTensor *t = sk_tensor_retain(x->outs[i]);
    if (!direct) lsk_push_tensor(L, t);
    else lsk_push_spare(L, st, t);
  }
  return x->nouts;
}
static int push_impl_args(lua_State *L, void *ud, int direct) { return push_args(L, &((ImplArgs *)ud)->args, direct); }

static int lua_impl_run(SkMeta *m, const SkValue *a, int nargs, SkTensor *const *outs, int nouts, const LuaFn *f) {
  lua_State *L = state_for(f);
  if (!L) return sk_error("%s: its Lua state was closed", f->where);
  int top = lua_gettop(L), rc = 0;
  SkTensor *proxy[SK_MAX_OUTPUTS] = {0};
  int use_proxy = m->variant != SK_VARIANT_FUNCTIONAL;
  for (int i = 0; i < nouts && use_proxy && !rc; i++)
    if (!(proxy[i] = sk_tensor_empty(outs[i]->ndim, outs[i]->sizes, outs[i]->dtype, outs[i]->device))) rc = -1;
  uint64_t ver[64];
  if (nargs > 64) rc = sk_error("%s: too many arguments", f->where);
  if (!rc) {
    for (int i = 0; i < nargs; i++) ver[i] = a[i].tag == SK_VAL_TENSOR ? a[i].u.t->storage->version : 0;
    ImplArgs x = {use_proxy ? proxy : outs, nouts, {a, nargs, f->args}};
    rc = protected_call(L, f, push_impl_outs, push_impl_args, &x, nouts);
    if (rc || use_proxy) lua_settop(L, top);
    else lsk_frame_keep(L, nouts);
    for (int i = 0; i < nargs && !rc; i++)
      if (a[i].tag == SK_VAL_TENSOR && a[i].u.t->storage->version != ver[i])
        rc = sk_error("%s wrote to input %d; an impl writes only its outputs", f->where, i + 1);
  }
  for (int i = 0; i < nouts && use_proxy && !rc; i++) {
    uint64_t v = outs[i]->storage->version; /* the structured wrapper bumps once, after the impl */
    rc = sk_copy_(outs[i], proxy[i], 0);
    outs[i]->storage->version = v;
  }
  for (int i = 0; i < nouts; i++) sk_tensor_release(proxy[i]);
  return rc;
}

static int lua_impl(SkMeta *m, const SkValue *a, int nargs, SkTensor *const *outs, int nouts, void *ud) {
  running++;
  int rc = lua_impl_run(m, a, nargs, outs, nouts, ud);
  running--;
  return rc;
}

static void family_release(SkStructuredFamily *fam) {
  luafn_free(fam->meta_ud);
  for (int k = 0; k < SK_KEY_NUM_RUNTIME; k++) luafn_free(fam->impl_ud[k]);
  free(fam);
}

/* The Meta kernel of an op with a Lua meta function and no structured family. */
static int meta_kernel(SkOperator *op, SkStack *s, void *ctx) { return sk_structured_run_meta(op, s, lua_meta, ctx); }
/* }==== */

/* {==== Fallbacks from Lua ==== */
typedef struct FallbackArgs { const SkOperator *op; int key; Args args; } FallbackArgs;
static int push_fallback_args(lua_State *L, void *ud, int direct) {
  const FallbackArgs *x = ud;
  if (direct) return -1; /* it makes tables */
  lua_createtable(L, 0, 3);
  lua_pushstring(L, x->op->qualname);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, x->op->schema.text);
  lua_setfield(L, -2, "schema");
  lua_pushstring(L, sk_key_name(x->key));
  lua_setfield(L, -2, "key");
  lua_createtable(L, x->args.n, 0);
  for (int i = 0; i < x->args.n; i++) {
    lsk_push_value(L, (SkValue *)&x->args.a[i], &x->args.spec[i], LSK_PUSH_BORROW);
    lua_rawseti(L, -2, i + 1);
  }
  return 2;
}

static int lua_fallback_run(SkOperator *op, SkStack *s, const LuaFn *f) {
  lua_State *L = state_for(f);
  if (!L) return sk_error("%s: its Lua state was closed", f->where);
  const SkSchema *sc = &op->schema;
  int nargs = sc->nargs, base = s->n - nargs, top = lua_gettop(L);
  if (sk_fallback_count(op, f->key)) return -1;
  LuaFn named = *f;
  snprintf(named.where, sizeof named.where, "Lua fallback for '%s' on %s", op->qualname, sk_key_name(f->key));
  FallbackArgs x = {op, f->key, {&s->v[base], nargs, sc->args}};
  if (protected_call(L, &named, NULL, push_fallback_args, &x, LUA_MULTRET)) { lua_settop(L, top); return -1; }
  SkStack rs;
  sk_stack_init(&rs);
  int rc = take_results(L, op, top, lua_gettop(L) - top, &s->v[base], f->key, named.where, &rs);
  if (rc) lua_settop(L, top);
  else lsk_frame_keep(L, lua_gettop(L) - top);
  if (!rc) rc = replace_args(s, base, &rs);
  sk_stack_free(&rs);
  return rc;
}

static int lua_fallback(SkOperator *op, SkStack *s, void *ctx) {
  running++;
  int rc = lua_fallback_run(op, s, ctx);
  running--;
  return rc;
}
/* }==== */

/* {==== Primitives for lua/sk/library.lua ==== */
/* Evaluates a registration with L as the current state, so its warnings reach L's warning function. */
#define registering(L, call)                                                                   \
  __extension__({                                                                              \
    LskFrame reg_frame_;                                                                       \
    lsk_frame_enter(&reg_frame_, (L), 1, 0);                                                   \
    int reg_rc_ = (call);                                                                      \
    lsk_frame_leave(&reg_frame_);                                                              \
    reg_rc_;                                                                                   \
  })
static void refuse_while_running(lua_State *L, const char *what) {
  if (running) lsk_raise(L, "%s: cannot change registrations while a Lua kernel, meta function or fallback is running", what);
}

static SkOperator *check_op(lua_State *L, int idx, const char *fname) {
  const char *name = luaL_checkstring(L, idx);
  SkOperator *op = sk_op_find(name);
  if (!op) lsk_raise(L, "%s: no operator '%s' (define it first with lib:define)", fname, name);
  return op;
}

static int check_key(lua_State *L, int idx, const char *fname) {
  const char *name = luaL_checkstring(L, idx);
  int k = sk_key_from_name(name);
  if (k <= 0 || k == SK_KEY_BACKEND_SELECT || k == SK_KEY_PLAN)
    lsk_raise(L, "%s: unknown dispatch key '%s' (expected CPU, CUDA, Meta, DefaultBackend, Math or a registered backend name)",
               fname, name);
  return k;
}

static int field_int(lua_State *L, int t, const char *k) {
  lua_getfield(L, t, k);
  int v = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

/* Reads one SkArg row (at idx) of sk.types.skarg into a; strings point into Lua and are copied by sk_op_define. */
static void read_arg(lua_State *L, int idx, SkArg *a) {
  memset(a, 0, sizeof *a);
  lua_getfield(L, idx, "name");
  a->name = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
  lua_getfield(L, idx, "default");
  a->default_text = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
  lua_pop(L, 2);
  a->type = (unsigned char)field_int(L, idx, "type");
  a->is_list = (unsigned char)field_int(L, idx, "is_list");
  a->optional = (unsigned char)field_int(L, idx, "optional");
  a->elem_optional = (unsigned char)field_int(L, idx, "elem_optional");
  a->kwarg_only = (unsigned char)field_int(L, idx, "kwarg_only");
  a->is_out = (unsigned char)field_int(L, idx, "is_out");
  a->is_write = (unsigned char)field_int(L, idx, "is_write");
  a->is_alias = (unsigned char)field_int(L, idx, "is_alias");
  a->list_size = (short)field_int(L, idx, "list_size");
  a->alias_of = (short)field_int(L, idx, "alias_of");
}

/* core.define(record) -> qualname: the record comes from sk.schema.parse. */
static int l_define(lua_State *L) {
  refuse_while_running(L, "lib:define");
  luaL_checktype(L, 1, LUA_TTABLE);
  SkArg args[64], rets[16];
  SkSchema sc;
  memset(&sc, 0, sizeof sc);
  lua_getfield(L, 1, "namespace"); sc.ns = lua_tostring(L, -1);
  lua_getfield(L, 1, "name"); sc.name = lua_tostring(L, -1);
  lua_getfield(L, 1, "overload"); sc.overload = lua_tostring(L, -1);
  lua_getfield(L, 1, "text"); sc.text = lua_tostring(L, -1);
  lua_getfield(L, 1, "kind");
  const char *kind = lua_tostring(L, -1);
  sc.kind = strcmp(kind, "inplace") == 0 ? SK_KIND_INPLACE : strcmp(kind, "out") == 0 ? SK_KIND_OUT
          : strcmp(kind, "mutable") == 0 ? SK_KIND_MUTABLE : SK_KIND_FUNCTIONAL;
  lua_getfield(L, 1, "c_args");
  sc.nargs = (int)luaL_len(L, -1);
  lua_getfield(L, 1, "c_rets");
  sc.nrets = (int)luaL_len(L, -1);
  if (sc.nargs > 64 || sc.nrets > 16) return lsk_raise(L, "lib:define: too many arguments or returns");
  for (int i = 0; i < sc.nargs; i++) {
    lua_rawgeti(L, -2, i + 1);
    read_arg(L, lua_gettop(L), &args[i]);
    lua_pop(L, 1);
  }
  for (int i = 0; i < sc.nrets; i++) {
    lua_rawgeti(L, -1, i + 1);
    read_arg(L, lua_gettop(L), &rets[i]);
    lua_pop(L, 1);
  }
  sc.args = args;
  sc.rets = rets;
  SkOperator *op = sk_op_define(&sc, NULL, 1);
  if (!op) return lsk_error(L, "lib:define");
  char name[160];
  lsk_ops_set_name(op, name, sizeof name);
  if (lsk_sets_add(name, op)) { sk_op_undefine(op); return lsk_error(L, "lib:define"); }
  lua_pushstring(L, op->qualname);
  return 1;
}

static int l_undefine(lua_State *L) {
  refuse_while_running(L, "lib:close");
  SkOperator *op = check_op(L, 1, "lib:close");
  if (sk_op_registrations(op)) return lsk_raise(L, "lib:close: operator '%s' still has kernels registered", op->qualname);
  lsk_sets_forget(op);
  if (sk_op_undefine(op)) return lsk_error(L, "lib:close");
  return 0;
}

/* core.op_registrations(op) -> number of kernels registered for it (all libraries). */
static int l_op_registrations(lua_State *L) {
  lua_pushinteger(L, sk_op_registrations(check_op(L, 1, "lib:close")));
  return 1;
}

/* Registers the Lua function at idx (its origin string at idx + 1) as the boxed
** kernel fn of op for key; pushes the registration id. The arguments are read
** before anything is allocated, so a Lua error there leaks nothing. */
static int register_luafn(lua_State *L, SkOperator *op, int key, SkBoxedFn fn, int idx, const char *what,
                          const char *where, const char *where_arg) {
  luaL_checktype(L, idx, LUA_TFUNCTION);
  const char *origin = luaL_optstring(L, idx + 1, "lua");
  LuaFn *f = luafn_new(L, idx, op, key, where, op->qualname, where_arg);
  SkKernel k = {NULL, fn, f, origin, 0};
  int id = registering(L, sk_op_register(op, key, &k, luafn_free));
  if (id < 0) { luafn_free(f); return lsk_error(L, what); }
  lua_pushinteger(L, id);
  return 1;
}

/* core.register_kernel(op, key, fn, origin) -> id */
static int l_register_kernel(lua_State *L) {
  refuse_while_running(L, "lib:impl");
  SkOperator *op = check_op(L, 1, "lib:impl");
  int key = check_key(L, 2, "lib:impl");
  return register_luafn(L, op, key, lua_kernel, 3, "lib:impl", "Lua kernel for '%s' on %s", sk_key_name(key));
}

static int l_register_meta(lua_State *L) {
  refuse_while_running(L, "lib:meta");
  SkOperator *op = check_op(L, 1, "lib:meta");
  if (op->schema.nrets > SK_MAX_OUTPUTS)
    return lsk_raise(L, "lib:meta: '%s' returns %d values; a meta function declares at most %d outputs", op->qualname,
                     op->schema.nrets, SK_MAX_OUTPUTS);
  return register_luafn(L, op, SK_KEY_META, meta_kernel, 2, "lib:meta", "meta function for '%s'%s", "");
}

static int l_deregister(lua_State *L) {
  refuse_while_running(L, "lib:close");
  SkOperator *op = check_op(L, 1, "lib:close");
  if (sk_op_deregister(op, (int)luaL_checkinteger(L, 2))) return lsk_error(L, "lib:close");
  return 0;
}

/* {==== Built-in meta functions and CPU kernels, to plug into lib:structured ==== */
static const char BUILTIN_MT[] = "sk.structured_builtin";

static const SkStructuredBuiltin *to_builtin(lua_State *L, int idx) {
  const SkStructuredBuiltin **b = luaL_testudata(L, idx, BUILTIN_MT);
  return b ? *b : NULL;
}

/* core.structured_builtin("aten::add.out") -> handle for lib:structured's meta and impls */
static int l_structured_builtin(lua_State *L) {
  const char *q = luaL_checkstring(L, 1);
  const SkStructuredBuiltin *b = sk_structured_builtin(q);
  if (!b) return lsk_raise(L, "sk.structured_builtin: '%s' is not a built-in structured out op", q);
  const SkStructuredBuiltin **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = b;
  luaL_setmetatable(L, BUILTIN_MT);
  return 1;
}

/* core.structured_builtins() -> { {out = "aten::max.dim_max", schema = "...", members = {"aten::max.dim"}}, ... }:
** every built-in structured out op, with the ops that delegate to it */
static int l_structured_builtins(lua_State *L) {
  lua_newtable(L);
  for (int i = 0; sk_structured_builtins[i].qualname; i++) {
    const char *q = sk_structured_builtins[i].qualname;
    lua_createtable(L, 0, 3);
    lua_pushstring(L, q);
    lua_setfield(L, -2, "out");
    lua_pushstring(L, sk_op_find(q)->schema.text);
    lua_setfield(L, -2, "schema");
    lua_newtable(L);
    for (int j = 0, n = 0; j < sk_op_count(); j++)
      if (sk_op_at(j)->out_sibling && strcmp(sk_op_at(j)->out_sibling, q) == 0) {
        lua_pushstring(L, sk_op_at(j)->qualname);
        lua_rawseti(L, -2, ++n);
      }
    lua_setfield(L, -2, "members");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int builtin_tostring(lua_State *L) {
  lua_pushfstring(L, "structured builtin '%s'", (*(const SkStructuredBuiltin **)luaL_checkudata(L, 1, BUILTIN_MT))->qualname);
  return 1;
}

/* 1 when schema s takes the arguments of the built-in's own op: its adapters read them by that schema. */
static int same_arguments(const SkSchema *s, const SkStructuredBuiltin *b) {
  const SkSchema *own = &sk_op_find(b->qualname)->schema;
  if (s->nargs != own->nargs || s->nrets != own->nrets) return 0;
  for (int i = 0; i < s->nargs; i++) {
    const SkArg *x = &s->args[i], *y = &own->args[i];
    if (x->type != y->type || x->is_list != y->is_list || x->optional != y->optional ||
        x->elem_optional != y->elem_optional || x->is_out != y->is_out || x->list_size != y->list_size)
      return 0;
  }
  return 1;
}

/* 1 when the tensors of key live in memory the CPU addresses (a built-in CPU kernel can run on them). */
static int key_is_host(int key) {
  int t = sk_key_device_type(key);
  return t >= 0 && sk_device_host_addressable(sk_device(t, 0));
}
/* }==== */

/* core.register_structured(members, meta, impls, origin) -> { {op, id}, ... }
** members: { {qualname, {key names}}, ... }, the out op first; the keys of each
** member come from sk.structured's one rule. meta and each impl: a Lua function
** or a built-in handle (an impl handle needs the meta of the same built-in). */
static int l_register_structured(lua_State *L) {
  refuse_while_running(L, "lib:structured");
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TTABLE);
  const char *origin = luaL_optstring(L, 4, "lua");
  const SkStructuredBuiltin *bmeta = to_builtin(L, 2);
  if (!bmeta) luaL_checktype(L, 2, LUA_TFUNCTION);
  struct { SkOperator *op; SkVariant v; int keys[SK_KEY_COUNT], nk; } members[3];
  int nm = (int)lua_rawlen(L, 1);
  if (nm < 1 || nm > 3) return lsk_raise(L, "lib:structured: internal: %d members", nm);
  for (int m = 0; m < nm; m++) {
    lua_rawgeti(L, 1, m + 1);
    lua_rawgeti(L, -1, 1);
    members[m].op = check_op(L, -1, "lib:structured");
    lua_rawgeti(L, -2, 2);
    members[m].nk = (int)lua_rawlen(L, -1);
    if (members[m].nk > SK_KEY_COUNT) return lsk_raise(L, "lib:structured: internal: too many keys");
    for (int i = 0; i < members[m].nk; i++) {
      lua_rawgeti(L, -1, i + 1);
      members[m].keys[i] = check_key(L, -1, "lib:structured");
      lua_pop(L, 1);
    }
    lua_pop(L, 3);
  }
  SkOperator *out = members[0].op;
  if (bmeta && !same_arguments(&out->schema, bmeta))
    return lsk_raise(L, "lib:structured: the built-in meta of '%s' reads the arguments of '%s', which '%s' does not take",
                     bmeta->qualname, sk_op_find(bmeta->qualname)->schema.text, out->schema.text);
  /* every impl is checked before the family exists: a Lua error leaks nothing */
  lua_pushnil(L);
  while (lua_next(L, 3)) {
    int key = check_key(L, -2, "lib:structured");
    if (!sk_key_is_backend(key) || key == SK_KEY_META)
      return lsk_raise(L, "lib:structured: impls are for backend keys, not '%s' (Meta and DefaultBackend come from meta)",
                        sk_key_name(key));
    const SkStructuredBuiltin *b = to_builtin(L, -1);
    if (b) {
      if (b != bmeta)
        return lsk_raise(L, "lib:structured: the built-in impl of '%s' needs the built-in meta of the same op", b->qualname);
      if (!b->cpu) return lsk_raise(L, "lib:structured: '%s' has no built-in CPU kernel", b->qualname);
      if (!key_is_host(key))
        return lsk_raise(L, "lib:structured: the built-in CPU kernel of '%s' runs only on CPU memory, not on '%s'",
                         b->qualname, sk_key_name(key));
    } else if (!lua_isfunction(L, -1))
      return lsk_raise(L, "lib:structured: impl for '%s' expected a function, got %s", sk_key_name(key), luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  SkStructuredFamily *fam = calloc(1, sizeof *fam);
  if (!fam) return lsk_raise(L, "out of memory");
  fam->out_op = out;
  fam->release = family_release;
  fam->refcount = 1; /* held here until the kernels take it */
  if (bmeta) {
    fam->meta = bmeta->meta;
    fam->iter = bmeta->iter;
    fam->pre_size = bmeta->pre_size;
  } else {
    fam->meta = lua_meta;
    fam->meta_ud = luafn_new(L, 2, out, SK_KEY_META, "meta function for '%s'%s", out->qualname, "");
  }
  lua_pushnil(L);
  while (lua_next(L, 3)) {
    int key = check_key(L, -2, "lib:structured");
    if (to_builtin(L, -1)) fam->impl[key] = bmeta->cpu;
    else {
      fam->impl[key] = lua_impl;
      fam->impl_ud[key] = luafn_new(L, lua_gettop(L), out, key, "impl of '%s' on %s", out->qualname, sk_key_name(key));
    }
    lua_pop(L, 1);
  }
  lua_newtable(L);
  int n = 0, rc = 0;
  for (int m = 0; m < nm && !rc; m++) {
    SkStructuredDesc d;
    rc = sk_structured_desc_init(&d, &members[m].op->schema, 1);
    if (!rc) fam->desc[members[m].v = d.variant] = d;
  }
  for (int m = 0; m < nm && !rc; m++) {
    for (int i = 0; i < members[m].nk && !rc; i++) {
      SkStructuredKernel *sk = sk_structured_kernel_new(fam, members[m].keys[i], members[m].v);
      if (!sk) { rc = -1; break; }
      SkKernel k = {NULL, sk_structured_boxed, sk, origin, 0};
      int id = registering(L, sk_op_register(members[m].op, members[m].keys[i], &k, sk_structured_kernel_free));
      if (id < 0) { sk_structured_kernel_free(sk); rc = -1; break; }
      lua_createtable(L, 2, 0);
      lua_pushstring(L, members[m].op->qualname);
      lua_rawseti(L, -2, 1);
      lua_pushinteger(L, id);
      lua_rawseti(L, -2, 2);
      lua_rawseti(L, -2, ++n);
    }
  }
  if (--fam->refcount == 0) family_release(fam);
  if (rc) {
    for (int i = n; i >= 1; i--) { /* undo what was registered */
      lua_rawgeti(L, -1, i);
      lua_rawgeti(L, -1, 1);
      lua_rawgeti(L, -2, 2);
      sk_op_deregister(sk_op_find(lua_tostring(L, -2)), (int)lua_tointeger(L, -1));
      lua_pop(L, 3);
    }
    return lsk_error(L, "lib:structured");
  }
  return 1;
}

static int l_register_fallback(lua_State *L) {
  refuse_while_running(L, "lib:fallback");
  int key = check_key(L, 1, "lib:fallback");
  int id;
  if (lua_islightuserdata(L, 2) && lua_touserdata(L, 2) == (void *)sk_cpu_fallback) {
    if (!sk_key_is_backend(key) || key == SK_KEY_CPU || key == SK_KEY_META)
      return lsk_raise(L, "lib:fallback: sk.cpu_fallback serves backends other than CPU and Meta, not '%s'", sk_key_name(key));
    id = registering(L, sk_cpu_fallback_register(key));
  }
  else {
    luaL_checktype(L, 2, LUA_TFUNCTION);
    const char *origin = luaL_optstring(L, 3, "lua"); /* read before f exists: an error here leaks nothing */
    LuaFn *f = luafn_new(L, 2, NULL, key, "Lua fallback on %s%s", sk_key_name(key), "");
    id = registering(L, sk_fallback_register(key, lua_fallback, f, origin, luafn_free));
    if (id < 0) luafn_free(f);
  }
  if (id < 0) return lsk_error(L, "lib:fallback");
  lua_pushinteger(L, id);
  return 1;
}

static int l_deregister_fallback(lua_State *L) {
  refuse_while_running(L, "lib:close");
  if (sk_fallback_deregister((int)luaL_checkinteger(L, 1))) return lsk_error(L, "lib:close");
  return 0;
}
/* }==== */

/* {==== sk.fallback ==== */
static int l_fallback_counts(lua_State *L) {
  int key = check_key(L, 1, "sk.fallback.counts");
  lua_newtable(L);
  for (int i = 0; i < sk_op_count(); i++) {
    SkOperator *op = sk_op_at(i);
    if (!sk_fallback_calls(op, key)) continue;
    lua_pushinteger(L, (lua_Integer)sk_fallback_calls(op, key));
    lua_setfield(L, -2, op->qualname);
  }
  return 1;
}

static int l_fallback_reset(lua_State *L) {
  int key = check_key(L, 1, "sk.fallback.reset");
  sk_fallback_reset(key);
  return 0;
}

static int l_fallback_rule(lua_State *L) {
  int key = check_key(L, 1, "sk.fallback.rule");
  SkOperator *op = check_op(L, 2, "sk.fallback.rule");
  static const char *const rules[] = {"default", "allow", "deny", NULL};
  sk_cpu_fallback_set_rule(op, key, luaL_checkoption(L, 3, NULL, rules));
  return 0;
}

static int l_fallback_allow_views(lua_State *L) {
  sk_cpu_fallback_allow_views(check_key(L, 1, "sk.fallback.allow_views"), lua_toboolean(L, 2));
  return 0;
}


typedef struct TwoStrings { const char *a, *b; } TwoStrings;
static int push_two_strings(lua_State *L, void *ud, int direct) {
  const TwoStrings *x = ud;
  if (direct) return -1;
  lua_pushstring(L, x->a);
  lua_pushstring(L, x->b);
  return 2;
}

/* A hook's error becomes a warning; the hook runs as a Lua callback (protected, counted as running). */
static void call_hook(lua_State *L, const LuaFn *f, PushFn push, void *ud, const char *what) {
  running++;
  int top = lua_gettop(L);
  if (protected_call(L, f, NULL, push, ud, 0)) sk_warn("%s raised: %s", what, sk_error_message());
  lua_settop(L, top);
  running--;
}

static LuaFn *log_fn;

static void log_to_lua(const SkOperator *op, int key, void *ud) {
  (void)ud;
  lua_State *L = state_for(log_fn);
  if (!L) return;
  TwoStrings x = {op->qualname, sk_key_name(key)};
  call_hook(L, log_fn, push_two_strings, &x, "the fallback log hook");
}

static int l_fallback_set_log(lua_State *L) {
  refuse_while_running(L, "sk.fallback.set_log");
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TFUNCTION);
  sk_cpu_fallback_set_log(NULL, NULL);
  luafn_free(log_fn);
  log_fn = NULL;
  if (lua_isnoneornil(L, 1)) return 0;
  log_fn = luafn_new(L, 1, NULL, 0, "the fallback log hook%s%s", "", "");
  sk_cpu_fallback_set_log(log_to_lua, NULL);
  return 0;
}

/* sk.fallback.call(op, ...): the CPU fallback for op, explicitly (from a kernel that lacks a case). */
static int l_fallback_call(lua_State *L) {
  SkOperator *op = check_op(L, 1, "sk.fallback.call");
  int last = lua_gettop(L), key = -1;
  LskOptions o;
  int opts = lsk_take_options(L, 2, &last, &o);
  int top = lua_gettop(L);
  for (int i = 2; i <= top && key < 0; i++) { /* the positional arguments, then the option values */
    if (i > last && i <= opts) continue;
    SkTensor *t = lsk_test_tensor(L, i);
    if (t && t->device.type != SK_DEVICE_CPU && t->device.type != SK_DEVICE_META) key = sk_device_key(t->device);
  }
  if (key < 0) return lsk_raise(L, "sk.fallback.call: no tensor argument is on a backend the CPU fallback serves");
  SkStack s;
  sk_stack_init(&s);
  char err[512];
  int bad;
  if (lsk_parse_args(L, op, 2, last, &o, &s, 1, &bad, NULL, err, sizeof err)) {
    sk_stack_free(&s);
    return lsk_raise(L, "sk.fallback.call: %s", err);
  }
  LskFrame frame;
  lsk_frame_enter(&frame, L, 2, last);
  int rc = sk_cpu_fallback_call(op, key, &s);
  lsk_frame_leave(&frame);
  if (rc) { sk_stack_free(&s); return lsk_error(L, "sk.fallback.call"); }
  int n = s.n;
  for (int i = 0; i < n; i++) lsk_push_value(L, &s.v[i], i < op->schema.nrets ? &op->schema.rets[i] : NULL, LSK_PUSH_TAKE);
  sk_stack_free(&s);
  return n;
}
/* }==== */

/* {==== Backends ==== */
typedef struct Observer { LuaFn *fn; } Observer;
static Observer observers[SK_DEVICE_MAX_TYPES];

typedef struct CopyArgs { int direction; size_t nbytes; } CopyArgs;
static int push_copy_args(lua_State *L, void *ud, int direct) {
  static const char *const dirs[] = {"to_cpu", "from_cpu", "within"};
  const CopyArgs *x = ud;
  if (direct) return -1; /* strings */
  lua_pushstring(L, dirs[x->direction]);
  lua_pushinteger(L, (lua_Integer)x->nbytes);
  return 2;
}

static void observe_copy(void *ud, int direction, size_t nbytes) {
  LuaFn *f = ud;
  lua_State *L = state_for(f);
  if (!L) return;
  CopyArgs x = {direction, nbytes};
  call_hook(L, f, push_copy_args, &x, "the copy hook of a backend");
}

static int device_type_of(lua_State *L, int idx, const char *fname) {
  SkDevice d;
  if (sk_device_parse(luaL_checkstring(L, idx), &d)) return lsk_error(L, fname);
  return d.type;
}

/* core.register_backend(name, on_copy|nil, cpu_fallback) */
static int l_register_backend(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  int cpu_fallback = lua_toboolean(L, 3);
  LuaFn *f = NULL;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TFUNCTION);
    f = luafn_new(L, 2, NULL, 0, "copy hook of backend '%s'%s", name, "");
  }
  int type;
  if (sk_host_backend_register(name, cpu_fallback, f ? observe_copy : NULL, f, &type)) {
    luafn_free(f);
    return lsk_error(L, "sk.backends.register");
  }
  observers[type].fn = f;
  lua_pushstring(L, name);
  return 1;
}

static int l_unregister_backend(lua_State *L) {
  refuse_while_running(L, "sk.backends.unregister");
  int type = device_type_of(L, 1, "sk.backends.unregister");
  if (sk_host_backend_unregister(type)) return lsk_error(L, "sk.backends.unregister");
  luafn_free(observers[type].fn);
  observers[type].fn = NULL;
  return 0;
}

static int l_backend_stats(lua_State *L) {
  SkHostBackendStats st;
  if (sk_host_backend_stats(device_type_of(L, 1, "sk.backends.stats"), &st)) return lsk_error(L, "sk.backends.stats");
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, (lua_Integer)st.allocated);
  lua_setfield(L, -2, "allocated");
  lua_pushinteger(L, (lua_Integer)st.copied_to_cpu);
  lua_setfield(L, -2, "copied_to_cpu");
  lua_pushinteger(L, (lua_Integer)st.copied_from_cpu);
  lua_setfield(L, -2, "copied_from_cpu");
  return 1;
}

/* sk.load_backend(path): a shared object exporting `int sk_backend_init(void)`. */
static int l_load_backend(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  Dl_info info;
  /* its symbols must see sk's: make this module's symbols global first */
  if (!dladdr((void *)l_load_backend, &info) || !dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
    return lsk_raise(L, "sk.load_backend: cannot make sk's symbols visible: %s", dlerror());
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return lsk_raise(L, "sk.load_backend: cannot load '%s': %s", path, dlerror());
  int (*init)(void) = (int (*)(void))dlsym(h, "sk_backend_init");
  if (!init) { dlclose(h); return lsk_raise(L, "sk.load_backend: '%s' has no sk_backend_init function", path); }
  if (init()) return lsk_error(L, "sk.load_backend"); /* kept loaded: it may have registered part of itself */
  return 0;
}
/* }==== */

void lsk_open_library(lua_State *L) {
  StateToken *tok = calloc(1, sizeof *tok);
  if (!tok) { lsk_raise(L, "out of memory"); return; }
  tok->alive = 1;
  tok->refs = 1;
  StateToken **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = tok;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, token_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &token_key);
  static const luaL_Reg meta_methods[] = {{"set_output", m_set_output}, {"output", m_output}, {"variant", m_variant}, {NULL, NULL}};
  luaL_newmetatable(L, "sk.Meta");
  luaL_newlib(L, meta_methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_newmetatable(L, BUILTIN_MT);
  lua_pushcfunction(L, builtin_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {
    {"define", l_define}, {"undefine", l_undefine}, {"op_registrations", l_op_registrations}, {"register_kernel", l_register_kernel},
    {"register_meta", l_register_meta}, {"deregister", l_deregister}, {"register_structured", l_register_structured},
    {"register_fallback", l_register_fallback}, {"deregister_fallback", l_deregister_fallback},
    {"fallback_counts", l_fallback_counts}, {"fallback_reset", l_fallback_reset}, {"fallback_rule", l_fallback_rule},
    {"fallback_allow_views", l_fallback_allow_views}, {"fallback_set_log", l_fallback_set_log},
    {"fallback_call", l_fallback_call}, {"register_backend", l_register_backend},
    {"unregister_backend", l_unregister_backend}, {"backend_stats", l_backend_stats}, {"load_backend", l_load_backend},
    {"structured_builtin", l_structured_builtin}, {"structured_builtins", l_structured_builtins}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  lua_pushlightuserdata(L, (void *)sk_cpu_fallback);
  lua_setfield(L, -2, "cpu_fallback");
}
