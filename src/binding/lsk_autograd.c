/*
** lsk_autograd.c — autograd from Lua: requires_grad, .grad, backward and autograd.grad,
** grad mode, graph nodes (grad_fn), hooks. The engine and the nodes are src/autograd's;
** a Lua hook runs on the lua_State of the backward call that reaches it, under lua_pcall,
** and its error comes back as the engine's error value. The Lua values nodes own (hook
** functions, a Lua function's backward and ctx) are held through lsk_held.c.
*/
#include "lsk.h"
#include "sk_autograd.h"
#include "sk_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODE_MT "sk.Node"

/* {==== Nodes as Lua values ==== */
static void push_node(lua_State *L, SkNode *n) {
  if (!n) { lua_pushnil(L); return; }
  SkNode **u = lua_newuserdatauv(L, sizeof *u, 0);
  *u = sk_node_retain(n);
  luaL_setmetatable(L, NODE_MT);
}
static SkNode *check_node(lua_State *L, int i) { return *(SkNode **)luaL_checkudata(L, i, NODE_MT); }
static int node_gc(lua_State *L) {
  SkNode **u = luaL_checkudata(L, 1, NODE_MT);
  sk_node_release(*u);
  *u = NULL;
  return 0;
}
static int node_name(lua_State *L) { lua_pushstring(L, sk_node_name(check_node(L, 1))); return 1; }
static int node_next(lua_State *L) {
  SkNode *n = check_node(L, 1);
  lua_createtable(L, n->nedges, 0);
  for (int i = 0; i < n->nedges; i++) {
    lua_createtable(L, 2, 0);
    push_node(L, n->edges[i].fn);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, n->edges[i].input_nr);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}
static int node_eq(lua_State *L) {
  lua_pushboolean(L, check_node(L, 1) == check_node(L, 2));
  return 1;
}
static int node_tostring(lua_State *L) {
  lua_pushfstring(L, "<%s>", sk_node_name(check_node(L, 1)));
  return 1;
}
/* }==== */

/* {==== Hooks ====
** A Lua hook runs on the lua_State of the backward call that reaches it, under lua_pcall. */
typedef struct LuaHook { LskHeld *held; char name[96]; } LuaHook;
static _Thread_local lua_State *backward_L;

static void lua_hook_free(void *ctx) {
  LuaHook *h = ctx;
  lsk_held_release(h->held);
  free(h);
}

static int lua_hook_run(void *ctx, SkTensor *grad, SkTensor **out) {
  LuaHook *h = ctx;
  lua_State *L = backward_L;
  if (!L) return sk_error("a tensor hook ran outside a backward call from Lua");
  if (!lua_checkstack(L, 4)) return sk_error("register_hook: Lua stack overflow");
  lsk_held_push(L, h->held);
  lsk_push_tensor(L, sk_tensor_retain(grad));
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    sk_error("hook: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)");
    lua_pop(L, 1);
    return -1;
  }
  SkTensor *r = lsk_test_tensor(L, -1);
  int ok = lua_isnil(L, -1) || r;
  if (r) *out = sk_tensor_retain(r);
  lua_pop(L, 1);
  return ok ? 0 : sk_error("hook: a hook returns a tensor or nil");
}
/* }==== */

/* {==== Nodes of Lua functions (sk.autograd.Function, lib:autograd) ====
** The backward function and the ctx table are one held value {backward, ctx} while the node
** lives. What ctx:save_for_backward saved is kept in C as any node's saved values (version
** checks, freed after backward, outputs without a cycle): ctx keeps no tensor of its own. */
typedef struct LuaFnNode {
  SkNode base;
  LskHeld *held;
  int materialize;
  int nargs;          /* forward arguments: backward returns one gradient for each */
  int *edge_of;       /* argument i -> its edge, or -1 when it is not a tensor */
  int nsaved;
  SkSaved *saved;
  char name[64];
} LuaFnNode;

/* The gradient backward gets for output i: what reached it, else (materialize) zeros shaped
** as that output, whether it had history or not (non-differentiable, an integer), else nil.
** A non-tensor output gets nil. */
static int push_output_grad(lua_State *L, LuaFnNode *n, SkTensor *const *grads, int i) {
  SkTensor *g = NULL;
  if ((grads[i] || n->materialize) && sk_grad_or_zeros(&g, grads[i], &n->base.in_meta[i])) return -1;
  if (g) lsk_push_tensor(L, g);
  else lua_pushnil(L);
  return 0;
}

static int luafn_apply(SkNode *n_, SkTensor *const *grads, SkTensor **out) {
  LuaFnNode *n = (LuaFnNode *)n_;
  lua_State *L = backward_L;
  if (!L) return sk_error("%s: a Lua backward ran outside a backward call from Lua", n->name);
  if (!lua_checkstack(L, n->base.nin + n->nsaved + 8)) return sk_error("%s: Lua stack overflow", n->name);
  int top = lua_gettop(L);
  lsk_held_push(L, n->held);
  if (!lua_istable(L, -1)) { lua_settop(L, top); return sk_error("%s: its backward is gone (its output was closed)", n->name); }
  lua_rawgeti(L, -1, 1);
  lua_rawgeti(L, -2, 2);
  lua_remove(L, -3);
  lua_pushvalue(L, -1);
  lua_insert(L, -3); /* ctx, backward, ctx: ctx stays below the call's results */
  int base = top + 1;
  /* ctx.saved_tensors: unpacked now (a freed graph or a modified value is an error here), and
  ** cleared after the call: under create_graph an unpacked output's grad_fn is this node, a
  ** cycle through C (node -> held ctx -> tensor -> node) that no collector could free */
  lua_createtable(L, n->nsaved, 0);
  for (int i = 0; i < n->nsaved; i++) {
    SkTensor *t = NULL;
    if (sk_saved_unpack(&n->saved[i], n_, &t)) { lua_settop(L, top); return -1; }
    if (t) lsk_push_tensor(L, t);
    else lua_pushboolean(L, 0);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "saved_tensors");
  for (int i = 0; i < n->base.nin; i++)
    if (push_output_grad(L, n, grads, i)) { lua_settop(L, top); return -1; }
  int called = lua_pcall(L, 1 + n->base.nin, LUA_MULTRET, 0);
  if (called != LUA_OK)
    sk_error("%s: %s", n->name, lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)");
  lua_pushliteral(L, "saved_tensors"); /* an existing key: neither allocates nor calls a metamethod */
  lua_pushnil(L);
  lua_rawset(L, base);
  if (called != LUA_OK) { lua_settop(L, top); return -1; }
  int nr = lua_gettop(L) - base, rc = 0;
  if (nr != n->nargs) rc = sk_error("function %s returned an incorrect number of gradients (expected %d, got %d)", n->name, n->nargs, nr);
  for (int i = 0; !rc && i < nr; i++) {
    int idx = base + 1 + i;
    if (lua_isnil(L, idx) || (lua_isboolean(L, idx) && !lua_toboolean(L, idx))) continue;
    SkTensor *g = lsk_test_tensor(L, idx);
    if (!g) rc = sk_error("function %s returned %s as gradient %d: expected a tensor or nil", n->name, lsk_got(L, idx), i + 1);
    else if (n->edge_of[i] < 0)
      rc = sk_error("function %s returned a gradient different than None at position %d, but the corresponding forward "
                    "input was not a Variable", n->name, i + 1);
    else out[n->edge_of[i]] = sk_tensor_retain(g);
  }
  if (rc) for (int i = 0; i < n->base.nedges; i++) { sk_tensor_release(out[i]); out[i] = NULL; }
  lua_settop(L, top);
  return rc;
}
static void luafn_release(SkNode *n_) {
  LuaFnNode *n = (LuaFnNode *)n_;
  for (int i = 0; i < n->nsaved; i++) sk_saved_reset(&n->saved[i]);
}
static void luafn_destroy(SkNode *n_) {
  LuaFnNode *n = (LuaFnNode *)n_;
  lsk_held_release(n->held);
  free(n->saved);
  free(n->edge_of);
}
static const SkNodeVT luafn_vt = {"LuaFunction", luafn_apply, luafn_release, luafn_destroy};

/* core.autograd.function_node(name, backward, ctx, args, nargs, outputs, saved, dirty, nondiff, materialize)
** args: the forward arguments (a list with holes, nargs long); outputs: the tensors forward
** returned (a new tensor object replaces one that is an argument unless it is marked dirty);
** saved: what ctx:save_for_backward got. Gives the outputs their history; returns the outputs. */
static int l_function_node(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_checktype(L, 4, LUA_TTABLE);
  int nargs = (int)luaL_checkinteger(L, 5);
  luaL_checktype(L, 6, LUA_TTABLE);
  luaL_checktype(L, 7, LUA_TTABLE);
  luaL_checktype(L, 8, LUA_TTABLE);
  luaL_checktype(L, 9, LUA_TTABLE);
  int materialize = lua_toboolean(L, 10);
  int nout = (int)lua_rawlen(L, 6), nsaved = (int)lua_rawlen(L, 7);
  if (nargs < 0 || nargs > 64 || nout > 64 || nsaved > 64) return lsk_raise(L, "%s: too many arguments, outputs or saved tensors (at most 64)", name);
  SkTensor *ins[64];
  int nedges = 0, edge_of[64];
  for (int i = 0; i < nargs; i++) {
    lua_rawgeti(L, 4, i + 1);
    SkTensor *t = lsk_test_tensor(L, -1);
    lua_pop(L, 1);
    edge_of[i] = t ? nedges : -1;
    if (t) ins[nedges++] = t;
  }
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, 2);
  LskHeld *held = lsk_held_new(L, name);
  LuaFnNode *n = (LuaFnNode *)sk_node_new(sizeof *n, &luafn_vt, nedges, nout);
  if (!n) { lsk_held_release(held); return lsk_error(L, name); }
  n->held = held;
  snprintf(n->name, sizeof n->name, "%s", name);
  n->base.name = n->name;
  n->materialize = materialize;
  n->nargs = nargs;
  n->edge_of = malloc(((size_t)nargs + 1) * sizeof *n->edge_of);
  n->saved = calloc((size_t)nsaved + 1, sizeof *n->saved);
  int rc = n->edge_of && n->saved ? 0 : sk_error("out of memory");
  if (!rc) memcpy(n->edge_of, edge_of, (size_t)nargs * sizeof *edge_of);
  for (int i = 0; !rc && i < nedges; i++) rc = sk_node_set_edge(&n->base, i, ins[i]);
  if (rc) { sk_node_release(&n->base); return lsk_error(L, name); }
  /* the outputs: history for the differentiable ones; an argument returned as is becomes a view */
  int ntensors = 0;
  for (int o = 0; o < nout; o++) {
    lua_rawgeti(L, 6, o + 1);
    ntensors += lsk_test_tensor(L, -1) != NULL;
    lua_pop(L, 1);
  }
  lua_createtable(L, nout, 0);
  int res = lua_gettop(L);
  for (int o = 0; !rc && o < nout; o++) {
    lua_rawgeti(L, 6, o + 1);
    SkTensor *t = lsk_test_tensor(L, -1);
    if (!t) { lua_rawseti(L, res, o + 1); continue; }
    lua_pushvalue(L, -1);
    int dirty = lua_rawget(L, 8) != LUA_TNIL, nondiff;
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    nondiff = lua_rawget(L, 9) != LUA_TNIL;
    lua_pop(L, 1);
    int is_input = 0, self_edge = 0;
    for (int i = 0; i < nedges; i++)
      if (ins[i] == t) is_input = 1, self_edge = i;
    if (is_input && !dirty) {
      SkTensor *a = sk_tensor_alias(t, t->ndim, t->sizes, t->strides, t->offset);
      if (!a) { rc = -1; break; }
      lua_pop(L, 1);
      lsk_push_tensor(L, a);
      t = a;
    }
    if (dirty && t->base && ntensors > 1) /* CopySlices gives the view's region one output's gradient */
      rc = sk_error("If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
                    "return more than one Tensor. This is not supported by the current autograd engine. You should "
                    "either make sure the input is not a view (using .clone() for example) or make your Function only "
                    "return one Tensor (potentially splitting it into two Functions: one doing the inplace that returns "
                    "a single Tensor and a second one that does the other operations). You can ask on the forum "
                    "https://discuss.pytorch.org/ if you need help to do this change.");
    else if (!nondiff && sk_dtype_is_floating(t->dtype)) {
      if (dirty && sk_check_inplace(t)) rc = sk_error("a leaf Variable that requires grad has been used in an in-place operation.");
      else rc = dirty ? sk_rebase_history_at(t, o, self_edge, &n->base) : sk_set_history(t, o, &n->base);
    } else sk_node_set_output_meta(&n->base, o, t);
    lua_rawseti(L, res, o + 1);
  }
  /* saved values: an output is kept as one (no cycle through its history) */
  for (int i = 0; !rc && i < nsaved; i++) {
    lua_rawgeti(L, 7, i + 1);
    SkTensor *t = lsk_test_tensor(L, -1);
    lua_pop(L, 1);
    int out_nr = -1;
    for (int o = 0; t && o < nout && out_nr < 0; o++) {
      lua_rawgeti(L, res, o + 1);
      if (lsk_test_tensor(L, -1) == t) out_nr = o;
      lua_pop(L, 1);
    }
    rc = sk_saved_save(&n->saved[i], t, out_nr >= 0, out_nr);
  }
  n->nsaved = nsaved;
  sk_node_release(&n->base);
  if (rc) return lsk_error(L, name);
  /* {backward, ctx} hang on the first output the node is the history of */
  for (int o = 0; o < nout; o++) {
    lua_rawgeti(L, res, o + 1);
    SkTensor *t = lsk_test_tensor(L, -1);
    int carrier = t && t->autograd && t->autograd->grad_fn == &n->base;
    if (carrier) lsk_held_track(L, held, -1, &n->base);
    lua_pop(L, 1);
    if (carrier) break;
  }
  return 1;
}
/* }==== */

#define SELF(fname) SkTensor *t = lsk_check_tensor(L, 1, fname, "self")

static int l_requires_grad(lua_State *L) { SELF("Tensor:requires_grad"); lua_pushboolean(L, sk_requires_grad(t) != 0); return 1; }
static int l_requires_grad_(lua_State *L) {
  SELF("Tensor:requires_grad_");
  int flag = lua_isnone(L, 2) ? 1 : lua_toboolean(L, 2);
  if (sk_set_requires_grad(t, flag)) return lsk_error(L, "Tensor:requires_grad_");
  lua_settop(L, 1);
  return 1;
}
static int l_is_leaf(lua_State *L) { SELF("Tensor:is_leaf"); lua_pushboolean(L, sk_is_leaf(t)); return 1; }
static int l_get_grad(lua_State *L) {
  SELF("Tensor.grad");
  if (t->autograd && t->autograd->grad) lsk_push_tensor(L, sk_tensor_retain(t->autograd->grad));
  else lua_pushnil(L);
  return 1;
}
static int l_set_grad(lua_State *L) {
  SELF("Tensor.grad");
  SkTensor *g = lua_isnil(L, 2) ? NULL : lsk_check_tensor(L, 2, "Tensor.grad", "value");
  if (g && !(g->ndim == t->ndim && memcmp(g->sizes, t->sizes, (size_t)t->ndim * sizeof t->sizes[0]) == 0))
    return lsk_raise(L, "Tensor.grad: assigned grad has data of a different size");
  if (g && g->dtype != t->dtype) return lsk_raise(L, "Tensor.grad: assigned grad has data of a different type");
  sk_set_grad(t, g);
  return 0;
}
static int l_detach(lua_State *L) {
  SELF("Tensor:detach");
  SkTensor *d = sk_detach(t);
  if (!d) return lsk_error(L, "Tensor:detach");
  lsk_push_tensor(L, d);
  return 1;
}
static int l_detach_(lua_State *L) {
  SELF("Tensor:detach_");
  if (sk_detach_(t)) return lsk_error(L, "Tensor:detach_");
  lua_settop(L, 1);
  return 1;
}
static int l_grad_fn(lua_State *L) {
  SELF("Tensor:grad_fn");
  SkEdge e;
  if (sk_requires_grad(t) && !sk_is_leaf(t) && sk_gradient_edge(t, &e)) return lsk_error(L, "Tensor:grad_fn");
  push_node(L, t->autograd ? t->autograd->grad_fn : NULL);
  return 1;
}
static int l_saved_bytes(lua_State *L) { lua_pushinteger(L, (lua_Integer)sk_saved_bytes()); return 1; }
static int l_is_grad_enabled(lua_State *L) { lua_pushboolean(L, sk_grad_enabled()); return 1; }
static int l_set_grad_enabled(lua_State *L) {
  luaL_checktype(L, 1, LUA_TBOOLEAN);
  lua_pushboolean(L, sk_set_grad_enabled(lua_toboolean(L, 1)));
  return 1;
}

static void hook_free(SkHook *h) {
  h->ctx_free(h->ctx);
  free(h);
}

/* h on t: a leaf's own (*owner NULL), else on its grad_fn's slot (*owner that node). */
static int add_hook(lua_State *L, SkTensor *t, const char *fname, SkHook *h, SkNode **owner) {
  *owner = NULL;
  if (sk_is_leaf(t)) {
    SkAutogradMeta *m = sk_autograd_meta(t);
    if (!m) { hook_free(h); return lsk_error(L, fname); }
    h->next = m->hooks;
    m->hooks = h;
    return 0;
  }
  SkEdge e;
  if (sk_gradient_edge(t, &e)) { hook_free(h); return lsk_error(L, fname); }
  sk_node_add_hook(e.fn, e.input_nr, h);
  *owner = e.fn;
  return 0;
}

static int l_register_hook(lua_State *L) {
  SELF("Tensor:register_hook");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (!sk_requires_grad(t)) return lsk_raise(L, "Tensor:register_hook: cannot register a hook on a tensor that doesn't require gradient");
  lua_Debug ar;
  lua_pushvalue(L, 2);
  lua_getinfo(L, ">S", &ar);
  lua_pushvalue(L, 2);
  LskHeld *held = lsk_held_new(L, "Tensor:register_hook");
  SkHook *h = calloc(1, sizeof *h);
  LuaHook *lh = malloc(sizeof *lh);
  if (!h || !lh) { free(h); free(lh); lsk_held_release(held); return lsk_raise(L, "Tensor:register_hook: out of memory"); }
  lh->held = held;
  snprintf(lh->name, sizeof lh->name, "%s:%d", ar.short_src, ar.linedefined); /* a Lua function's name: where it is */
  h->fn = lua_hook_run;
  h->ctx = lh;
  h->ctx_free = lua_hook_free;
  h->name = lh->name;
  SkNode *owner;
  add_hook(L, t, "Tensor:register_hook", h, &owner);
  lsk_held_track(L, held, 1, owner);
  return 0;
}

static int l_retain_grad(lua_State *L) {
  SELF("Tensor:retain_grad");
  if (!sk_requires_grad(t)) return lsk_raise(L, "Tensor:retain_grad: can't retain_grad on Tensor that has requires_grad=False");
  if (sk_retain_grad(t)) return lsk_error(L, "Tensor:retain_grad");
  return 0;
}

/* Tensors of the list table at idx (nil entries allowed when `holes`), into v; returns the count. */
static int tensor_list(lua_State *L, int idx, SkTensor **v, int cap, int holes, const char *fname, const char *what) {
  if (lsk_test_tensor(L, idx)) { v[0] = lsk_test_tensor(L, idx); return 1; }
  if (!lua_istable(L, idx)) return lsk_raise(L, "%s: '%s' expected a tensor or a list of tensors, got %s", fname, what, lsk_got(L, idx));
  int n = (int)lua_rawlen(L, idx);
  if (n > cap) return lsk_raise(L, "%s: '%s' has more than %d tensors", fname, what, cap);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, idx, i + 1);
    v[i] = lsk_test_tensor(L, -1);
    if (!v[i] && !(holes && lua_isnil(L, -1)))
      return lsk_raise(L, "%s: '%s'[%d] expected a tensor, got %s", fname, what, i + 1, lsk_got(L, -1));
    lua_pop(L, 1);
  }
  return n;
}

/* core.autograd.run(outputs, grad_outputs|nil, inputs|nil, retain_graph, create_graph, allow_unused, fname) */
static int l_run(lua_State *L) {
  const char *fname = luaL_optstring(L, 7, "backward");
  SkTensor *outs[64], *gouts[64] = {0}, *ins[64];
  int n = tensor_list(L, 1, outs, 64, 0, fname, "tensors");
  int ng = lua_isnil(L, 2) ? 0 : tensor_list(L, 2, gouts, 64, 1, fname, "grad_tensors");
  int ni = lua_isnil(L, 3) ? 0 : tensor_list(L, 3, ins, 64, 0, fname, "inputs");
  if (!lua_isnil(L, 3) && ni == 0) return lsk_raise(L, "%s: 'inputs' argument to backward() cannot be empty.", fname);
  if (ng && ng != n) return lsk_raise(L, "%s: got %d tensors and %d gradients", fname, n, ng);
  SkTensor *res[64] = {0};
  SkBackwardOpts o = {lua_toboolean(L, 4), lua_toboolean(L, 5), ni, ins, res, lua_toboolean(L, 6)};
  lua_State *prev = backward_L;
  backward_L = L;
  int rc = sk_backward(n, outs, gouts, &o);
  backward_L = prev;
  if (rc) return lsk_error(L, fname);
  if (!ni) return 0;
  lua_createtable(L, ni, 0);
  for (int i = 0; i < ni; i++) {
    if (res[i]) lsk_push_tensor(L, res[i]);
    else lua_pushboolean(L, 0); /* a hole Lua lists keep: false for "no gradient" */
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

void lsk_open_autograd(lua_State *L) {
  lsk_held_open(L);
  static const luaL_Reg node_methods[] = {{"name", node_name}, {"next_functions", node_next}, {NULL, NULL}};
  static const luaL_Reg node_mt[] = {{"__gc", node_gc}, {"__eq", node_eq}, {"__tostring", node_tostring}, {NULL, NULL}};
  if (luaL_newmetatable(L, NODE_MT)) {
    luaL_newlib(L, node_methods);
    lua_setfield(L, -2, "__index");
    luaL_setfuncs(L, node_mt, 0);
  }
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {
    {"requires_grad", l_requires_grad}, {"requires_grad_", l_requires_grad_}, {"is_leaf", l_is_leaf},
    {"get_grad", l_get_grad}, {"set_grad", l_set_grad}, {"detach", l_detach}, {"detach_", l_detach_},
    {"grad_fn", l_grad_fn}, {"is_grad_enabled", l_is_grad_enabled}, {"set_grad_enabled", l_set_grad_enabled},
    {"register_hook", l_register_hook}, {"retain_grad", l_retain_grad}, {"run", l_run},
    {"function_node", l_function_node}, {"saved_bytes", l_saved_bytes}, {NULL, NULL}};
  luaL_newlib(L, fns);
}
