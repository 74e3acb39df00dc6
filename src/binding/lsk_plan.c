/*
** lsk_plan.c — sk.plan from Lua: record a function, replay it, read its plan
** core.plan_record(fn, device, examples...) runs fn once, protected, on meta stand-ins of the
** tensor examples (other examples are passed as they are and baked into the plan), and
** returns the plan userdata: p(...) replays it, p:stats() and p:graph() describe it.
** Invariant: the recorder is stopped on every way out of plan_record (fn's errors included).
*/
#include "lsk.h"
#include "sk_error.h"
#include "sk_plan.h"

#include <string.h>

#define LSK_PLAN_MT "sk.Plan"

typedef struct LskPlan {
  SkPlan *p;
  int nargs;
  unsigned char is_tensor[LSK_MAX_ARGS];
  int nres, list;                       /* fn's results: nres values, or one list of nres */
  unsigned char is_nil[LSK_MAX_RETURNS]; /* a result that was nil */
} LskPlan;

static LskPlan *check_plan(lua_State *L, int idx) {
  LskPlan *ud = luaL_checkudata(L, idx, LSK_PLAN_MT);
  if (!ud->p) lsk_raise(L, "sk.plan: the plan is closed");
  return ud;
}

/* The protected part of recording: [1] recorder, [2] fn, [3 ..] examples, [n] the plan's
** uservalue table of baked examples. Returns fn's results. */
static int record_body(lua_State *L) {
  SkPlanRecorder *r = lua_touserdata(L, 1);
  LskPlan *ud = lua_touserdata(L, 2);
  int nex = ud->nargs, first = 4;
  lua_pushvalue(L, 3);
  for (int i = 0; i < nex; i++) {
    SkTensor *t = lsk_test_tensor(L, first + i);
    if (t) {
      SkTensor *m = sk_plan_record_input(r, t);
      if (!m) return lsk_raise(L, "%s", sk_error_message());
      lsk_push_tensor(L, m);
    } else lua_pushvalue(L, first + i);
  }
  lua_call(L, nex, LUA_MULTRET);
  return lua_gettop(L) - (first + nex - 1);
}

static int l_plan_record(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int nex = lua_gettop(L) - 2;
  if (nex > LSK_MAX_ARGS) return lsk_raise(L, "sk.plan: at most %d examples", LSK_MAX_ARGS);
  SkDevice dev = SK_CPU;
  int have_dev = 0;
  if (lua_type(L, 2) == LUA_TSTRING) {
    if (sk_device_parse(lua_tostring(L, 2), &dev)) return lsk_raise(L, "sk.plan: %s", sk_error_message());
    have_dev = 1;
  }
  LskPlan *ud = lua_newuserdatauv(L, sizeof *ud, 1);
  memset(ud, 0, sizeof *ud);
  luaL_setmetatable(L, LSK_PLAN_MT);
  int udi = lua_gettop(L);
  lua_createtable(L, nex, 0); /* the baked examples */
  ud->nargs = nex;
  for (int i = 0; i < nex; i++) {
    SkTensor *t = lsk_test_tensor(L, 3 + i);
    ud->is_tensor[i] = t != NULL;
    if (t && !have_dev) dev = t->device, have_dev = 1;
    if (!t) {
      lua_pushvalue(L, 3 + i);
      lua_rawseti(L, -2, i + 1);
    }
  }
  lua_setiuservalue(L, udi, 1);
  SkPlanRecorder *r = sk_plan_record_begin(dev);
  if (!r) return lsk_raise(L, "%s", sk_error_message());
  int top = lua_gettop(L);
  lua_pushcfunction(L, record_body);
  lua_pushlightuserdata(L, r);
  lua_pushvalue(L, udi);
  lua_pushvalue(L, 1);
  for (int i = 0; i < nex; i++) lua_pushvalue(L, 3 + i);
  if (lua_pcall(L, 3 + nex, LUA_MULTRET, 0) != LUA_OK) {
    sk_plan_record_abort(r);
    return lua_error(L);
  }
  int nres = lua_gettop(L) - top, first = top + 1;
  if (nres == 1 && lua_type(L, first) == LUA_TTABLE && !lsk_test_tensor(L, first)) { /* one list of tensors */
    ud->list = 1;
    nres = (int)luaL_len(L, first);
    if (nres <= LSK_MAX_RETURNS && !lua_checkstack(L, nres + 4)) nres = LSK_MAX_RETURNS + 1;
    for (int i = 0; i < nres && nres <= LSK_MAX_RETURNS; i++) lua_rawgeti(L, first, i + 1);
    first++;
  }
  SkTensor *outs[LSK_MAX_RETURNS];
  if (nres > LSK_MAX_RETURNS) {
    sk_plan_record_abort(r);
    return lsk_raise(L, "sk.plan: fn returned %d results; a plan returns at most %d", nres, LSK_MAX_RETURNS);
  }
  int nt = 0;
  for (int i = 0; i < nres; i++) {
    if ((ud->is_nil[i] = lua_isnil(L, first + i))) continue;
    if (!(outs[nt++] = lsk_test_tensor(L, first + i))) {
      sk_plan_record_abort(r);
      return lsk_raise(L, "sk.plan: fn returned a %s as result %d; a plan returns tensors", luaL_typename(L, first + i),
                       i + 1);
    }
  }
  ud->nres = nres;
  if (!(ud->p = sk_plan_record_end(r, outs, nt))) return lsk_raise(L, "%s", sk_error_message());
  lua_settop(L, udi);
  return 1;
}

static int l_plan_call(lua_State *L) {
  LskPlan *ud = check_plan(L, 1);
  int n = lua_gettop(L) - 1, last = n + 1, outi[LSK_MAX_RETURNS] = {0}; /* outi: the stack index of each out */
  SkTensor *outs[LSK_MAX_RETURNS];
  LskOptions o;
  if (n > ud->nargs && lsk_take_options(L, 2, &last, &o)) { /* p(..., {out = ...}) */
    n = last - 1;
    for (int j = 0; j < o.n; j++)
      if (!o.name[j] || strcmp(o.name[j], "out"))
        return lsk_raise(L, "sk.plan: unexpected option '%s' (a plan's call takes only 'out')", o.name[j] ? o.name[j] : "?");
    int nout = ud->p->nout, given = o.out_list ? (int)lua_rawlen(L, o.out) : 1;
    if (given != nout)
      return lsk_raise(L, "sk.plan: out must be %d tensor%s (one per output)", nout, nout == 1 ? "" : "s");
    luaL_checkstack(L, nout, "sk.plan");
    for (int i = 0; i < nout; i++) { /* a list's elements on the stack (the options reader keeps an op's at most 4) */
      if (o.out_list) lua_rawgeti(L, o.out, i + 1);
      outi[i] = o.out_list ? lua_gettop(L) : o.out;
      if (!(outs[i] = lsk_test_tensor(L, outi[i]))) return lsk_raise(L, "sk.plan: out %d is not a tensor", i + 1);
    }
  }
  if (n != ud->nargs) return lsk_raise(L, "sk.plan: expected %d arguments, got %d", ud->nargs, n);
  LskState *st = lsk_state(L);
  lsk_call_entry(L, st);
  SkTensor *in[LSK_MAX_ARGS];
  int nin = 0;
  lua_getiuservalue(L, 1, 1);
  int baked = lua_gettop(L);
  for (int i = 0; i < n; i++) {
    if (ud->is_tensor[i]) {
      if (!(in[nin++] = lsk_test_tensor(L, 2 + i)))
        return lsk_raise(L, "sk.plan: argument %d must be a tensor, got %s", i + 1, luaL_typename(L, 2 + i));
      continue;
    }
    lua_rawgeti(L, baked, i + 1);
    if (!lua_rawequal(L, -1, 2 + i))
      return lsk_raise(L, "sk.plan: argument %d is %s, the plan was made for %s (numbers are baked into a plan)", i + 1,
                       luaL_tolstring(L, 2 + i, NULL), luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
  }
  SkTensor *res[LSK_MAX_RETURNS];
  LskFrame frame; /* Lua kernels of the plan run on this state */
  lsk_frame_enter(&frame, L, 2, n + 1);
  frame.st = st;
  int rc = sk_plan_run(ud->p, in, outi[0] ? outs : NULL, res);
  lsk_frame_leave(&frame);
  if (rc) return lsk_raise(L, "%s", sk_error_message());
  luaL_checkstack(L, ud->nres + 2, "sk.plan");
  if (ud->list) lua_createtable(L, ud->nres, 0);
  for (int i = 0, t = 0; i < ud->nres; i++) {
    if (ud->is_nil[i]) {
      lua_pushnil(L);
      if (ud->list) lua_rawseti(L, -2, i + 1);
      continue;
    }
    int k = t++;
    int same = 0; /* an output that is an input (fn wrote it in place) is the caller's own value */
    for (int j = 0, q = 0; j < n && !same; j++)
      if (ud->is_tensor[j] && in[q++] == res[k]) same = 2 + j;
    if (outi[0] || same) { /* the caller's own tensors come back */
      sk_tensor_release(res[k]);
      lua_pushvalue(L, same ? same : outi[k]);
    } else lsk_push_tensor(L, res[k]);
    if (ud->list) lua_rawseti(L, -2, i + 1);
  }
  return ud->list ? 1 : ud->nres;
}

/* p:matches(args...): whether a call with these arguments replays p (sk.plan's dynamic mode
** picks its plan by it), without raising. */
static int l_plan_matches(lua_State *L) {
  LskPlan *ud = check_plan(L, 1);
  int n = lua_gettop(L) - 1, ok = n == ud->nargs, nin = 0;
  SkTensor *in[LSK_MAX_ARGS];
  lua_getiuservalue(L, 1, 1);
  int baked = lua_gettop(L);
  for (int i = 0; ok && i < n; i++) {
    if (ud->is_tensor[i]) ok = (in[nin++] = lsk_test_tensor(L, 2 + i)) != NULL;
    else {
      lua_rawgeti(L, baked, i + 1);
      ok = lua_rawequal(L, -1, 2 + i);
      lua_pop(L, 1);
    }
  }
  lua_pushboolean(L, ok && !sk_plan_check_inputs(ud->p, in));
  return 1;
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static int l_plan_stats(lua_State *L) {
  const SkPlan *p = check_plan(L, 1)->p;
  int kinds[SK_PS_DEAD + 1] = {0}, steps[3] = {0};
  for (int i = 0; i < p->nst; i++) kinds[p->st[i].kind]++;
  int temps = 0;
  for (int i = 0; i < p->nstep; i++) steps[p->step[i].kind]++, temps += p->step[i].ntemps;
  lua_createtable(L, 0, 12);
  set_int(L, "arena_bytes", (lua_Integer)p->arena_bytes);
  set_int(L, "intermediate_bytes", (lua_Integer)p->intermediate_bytes);
  set_int(L, "eager_peak_bytes", (lua_Integer)sk_plan_eager_peak(p));
  set_int(L, "steps", p->nstep);
  set_int(L, "out_steps", steps[SK_STEP_OUT]);
  set_int(L, "write_steps", steps[SK_STEP_WRITE]);
  set_int(L, "unmanaged", steps[SK_STEP_UNMANAGED]);
  set_int(L, "intermediates", kinds[SK_PS_ARENA] - temps); /* the temporaries are arena buffers too */
  set_int(L, "constants", kinds[SK_PS_CONST]);
  set_int(L, "temporaries", temps);
  set_int(L, "inputs", p->nin);
  set_int(L, "outputs", p->nout);
  set_int(L, "values", p->nval);
  return 1;
}

static void push_ints(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) { lua_pushinteger(L, v[i]); lua_rawseti(L, -2, i + 1); }
}

/* p:graph(): {inputs = {value ids}, outputs = {value ids}, values = {...}, ops = {...}} (1-based ids) */
static int l_plan_graph(lua_State *L) {
  const SkPlan *p = check_plan(L, 1)->p;
  static const char *const skind[] = {"input", "const", "arena", "output", "unmanaged", "dead"};
  static const char *const stkind[] = {"out", "write", "unmanaged"};
  lua_createtable(L, 0, 4);
  lua_createtable(L, p->nin, 0);
  for (int i = 0; i < p->nin; i++) { lua_pushinteger(L, p->in_value[i] + 1); lua_rawseti(L, -2, i + 1); }
  lua_setfield(L, -2, "inputs");
  lua_createtable(L, p->nout, 0);
  for (int i = 0; i < p->nout; i++) { lua_pushinteger(L, p->out_value[i] + 1); lua_rawseti(L, -2, i + 1); }
  lua_setfield(L, -2, "outputs");
  lua_createtable(L, p->nval, 0);
  for (int v = 0; v < p->nval; v++) {
    const SkPlanValue *x = &p->val[v];
    const SkPlanStorage *b = &p->st[x->storage];
    lua_createtable(L, 0, 10);
    set_int(L, "buffer", x->storage + 1);
    lua_pushstring(L, skind[b->kind]);
    lua_setfield(L, -2, "kind");
    push_ints(L, x->ndim, x->sizes);
    lua_setfield(L, -2, "shape");
    push_ints(L, x->ndim, x->strides);
    lua_setfield(L, -2, "strides");
    lua_pushstring(L, sk_dtype_name(x->dtype));
    lua_setfield(L, -2, "dtype");
    set_int(L, "offset", (lua_Integer)((b->kind == SK_PS_ARENA ? (int64_t)b->offset : 0) + x->byte_offset));
    set_int(L, "nbytes", (lua_Integer)b->nbytes);
    set_int(L, "first", b->first + 1);
    set_int(L, "last", b->last + 1);
    lua_rawseti(L, -2, v + 1);
  }
  lua_setfield(L, -2, "values");
  lua_createtable(L, p->nstep, 0);
  for (int i = 0; i < p->nstep; i++) {
    const SkPlanStep *st = &p->step[i];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, st->op->qualname);
    lua_setfield(L, -2, "op");
    lua_pushstring(L, st->called->qualname);
    lua_setfield(L, -2, "called");
    lua_pushstring(L, stkind[st->kind]);
    lua_setfield(L, -2, "kind");
    lua_newtable(L); /* inputs: values read; outputs: values written or made */
    lua_newtable(L);
    int ni = 0, no = 0;
    for (int a = 0; a < st->nargs; a++) {
      const SkPlanArg *x = &st->args[a];
      int w = a < st->op->schema.nargs && st->op->schema.args[a].is_write;
      int n = x->v.tag == SK_VAL_TENSOR ? 1 : x->v.tag == SK_VAL_TENSORLIST ? x->v.n : 0;
      for (int j = 0; j < n; j++) {
        int v = x->v.tag == SK_VAL_TENSOR ? x->value : x->values[j];
        if (v < 0) continue;
        lua_pushinteger(L, v + 1);
        lua_rawseti(L, w ? -2 : -3, w ? ++no : ++ni);
      }
    }
    for (int r = 0; r < st->nres; r++)
      if (st->res[r] >= 0 && st->kind != SK_STEP_OUT) { lua_pushinteger(L, st->res[r] + 1); lua_rawseti(L, -2, ++no); }
    lua_setfield(L, -3, "outputs");
    lua_setfield(L, -2, "inputs");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "ops");
  return 1;
}

static int l_plan_close(lua_State *L) {
  LskPlan *ud = luaL_checkudata(L, 1, LSK_PLAN_MT);
  if (ud->p && ud->p->running) return lsk_raise(L, "sk.plan: the plan is running");
  sk_plan_free(ud->p);
  ud->p = NULL;
  return 0;
}

void lsk_open_plan(lua_State *L) {
  static const luaL_Reg methods[] = {{"stats", l_plan_stats}, {"graph", l_plan_graph}, {"matches", l_plan_matches},
                                     {"close", l_plan_close}, {NULL, NULL}};
  static const luaL_Reg metamethods[] = {{"__call", l_plan_call}, {"__gc", l_plan_close}, {"__close", l_plan_close},
                                         {NULL, NULL}};
  if (luaL_newmetatable(L, LSK_PLAN_MT)) {
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, l_plan_record);
  lua_setfield(L, -2, "plan_record");
}
