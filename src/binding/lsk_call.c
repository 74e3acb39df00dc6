/*
** lsk_call.c — Lua arguments -> boxed stack -> dispatcher -> Lua results
** One generic path for every op, built-in or defined at run time: the
** schema says how to read each argument. An overload set (all ops of one
** name) tries each schema in order, first strictly, then letting numbers
** stand for tensors (wrapped numbers, as PyTorch does for `2 - t`).
** A trailing plain table with string keys holds optional arguments.
*/
#include "lsk.h"
#include "sk_autograd.h"
#include "sk_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {==== Defaults ====
** Each op's defaults are parsed from the schema text once, into one block
** kept in the binding's slot of the op's data (freed with it): pushing a default is a copy. */
typedef struct Defaults {
  int nargs;
  SkValue v[];                /* tag NONE and n = -1: no default */
} Defaults;

/* Elements of a list default: "[1, 2]" or, for int[N] x=1, N copies of one value. */
static int list_default_len(const SkArg *a, const char *d) {
  if (d[0] != '[') return a->list_size ? a->list_size : 1;
  int n = 0;
  for (const char *p = d + 1; *p && *p != ']'; p++)
    if (*p != ' ' && (p == d + 1 || p[-1] == ',' || p[-1] == ' ') && *p != ',') n++;
  return n;
}

static int bool_text(const char *p) { return strncmp(p, "True", 4) == 0; }

/* Parses the default of a into v; list and string payloads go to *pool (sized by defaults_of).
** The schema was checked when it was defined (sk.schema.check_limits): texts parse. */
static void parse_default(const SkArg *a, SkValue *v, char **pool) {
  const char *d = a->default_text;
  v->n = 0;
  v->tag = SK_VAL_NONE;
  if (strcmp(d, "None") == 0) return;
  if (a->is_list) {
    int n = list_default_len(a, d);
    if (n > LSK_MAX_LIST) n = LSK_MAX_LIST;
    int64_t *ints = (int64_t *)*pool;
    double *dbl = (double *)*pool;
    const char *p = d[0] == '[' ? d + 1 : d;
    for (int i = 0; i < n; i++) {
      while (*p == ' ' || *p == ',') p++;
      char *end = (char *)p;
      if (a->type == SK_T_FLOAT) dbl[i] = strtod(p, &end);
      else if (a->type == SK_T_BOOL) { ints[i] = bool_text(p); end = (char *)p + strcspn(p, ",]"); }
      else ints[i] = strtoll(p, &end, 10);
      if (d[0] == '[') p = end; /* else every element repeats the one value */
    }
    *pool += (size_t)n * sizeof(int64_t);
    v->tag = a->type == SK_T_FLOAT ? SK_VAL_DOUBLELIST : a->type == SK_T_BOOL ? SK_VAL_BOOLLIST : SK_VAL_INTLIST;
    if (a->type == SK_T_FLOAT) v->u.doubles = dbl;
    else v->u.ints = ints;
    v->n = n;
    return;
  }
  switch (a->type) {
  case SK_T_INT: v->tag = SK_VAL_INT; v->u.i = strtoll(d, NULL, 10); break;
  case SK_T_FLOAT: v->tag = SK_VAL_DOUBLE; v->u.d = strtod(d, NULL); break;
  case SK_T_BOOL: v->tag = SK_VAL_BOOL; v->u.b = strcmp(d, "True") == 0; break;
  case SK_T_SCALAR:
    v->tag = SK_VAL_SCALAR;
    {
      SkScalar x = strpbrk(d, ".eE") || strstr(d, "inf") || strstr(d, "nan") ? sk_scalar_float(strtod(d, NULL))
                 : strcmp(d, "True") == 0 || strcmp(d, "False") == 0 ? sk_scalar_bool(d[0] == 'T')
                 : sk_scalar_int(strtoll(d, NULL, 10));
      v->n = (int)x.kind;
      v->u.sb = x.v;
    }
    break;
  case SK_T_STR: { /* "mean" or 'mean' without its quotes */
    size_t len = strlen(d);
    char *str = *pool;
    if (len >= 2 && (d[0] == '"' || d[0] == '\'')) { memcpy(str, d + 1, len - 2); str[len - 2] = 0; }
    else memcpy(str, d, len + 1);
    *pool += (len + 8) & ~(size_t)7; /* keeps the next payload 8-byte aligned */
    v->tag = SK_VAL_STRING;
    v->u.str = str;
    break;
  }
  case SK_T_SCALAR_TYPE: {
    SkDType t;
    if (sk_dtype_from_name(d, &t) == 0) { v->tag = SK_VAL_DTYPE; v->u.dtype = t; }
    break;
  }
  case SK_T_DEVICE: { /* "cpu" or 'cpu' */
    char name[48];
    size_t len = strlen(d);
    snprintf(name, sizeof name, "%.*s", len >= 2 ? (int)len - 2 : 0, d + 1);
    if (sk_device_parse(name, &v->u.device) == 0) v->tag = SK_VAL_DEVICE;
    break;
  }
  case SK_T_LAYOUT: case SK_T_MEMORY_FORMAT: v->tag = SK_VAL_INT; v->u.i = lsk_enum_value(a->type, d); break;
  default: break; /* sk.types allows no other default */
  }
}

static const Defaults *defaults_of(SkOperator *op) {
  static int slot = -1; /* the binding's per-op data slot: the parsed defaults, one malloc block */
  if (slot < 0 && (slot = sk_op_ext_slot(free)) < 0) return NULL;
  if (op->ext[slot]) return op->ext[slot];
  const SkSchema *sc = &op->schema;
  size_t pool = 0;
  for (int i = 0; i < sc->nargs; i++)
    if (sc->args[i].default_text) {
      const SkArg *a = &sc->args[i];
      int n = a->is_list ? list_default_len(a, a->default_text) : 0;
      pool += (size_t)(n < LSK_MAX_LIST ? n : LSK_MAX_LIST) * sizeof(int64_t) + strlen(a->default_text) + 1 + 8;
    }
  Defaults *d = malloc(sizeof *d + (size_t)sc->nargs * sizeof(SkValue) + pool);
  if (!d) return NULL;
  d->nargs = sc->nargs;
  char *p = (char *)&d->v[sc->nargs];
  for (int i = 0; i < sc->nargs; i++) {
    if (sc->args[i].default_text) parse_default(&sc->args[i], &d->v[i], &p);
    else { d->v[i].tag = SK_VAL_NONE; d->v[i].n = -1; }
  }
  op->ext[slot] = d;
  return d;
}

static int push_default(const SkValue *v, SkStack *s) {
  switch (v->tag) {
  case SK_VAL_INTLIST: return sk_push_intlist(s, v->u.ints, v->n);
  case SK_VAL_BOOLLIST: return sk_push_boollist(s, v->u.ints, v->n);
  case SK_VAL_DOUBLELIST: return sk_push_doublelist(s, v->u.doubles, v->n);
  default:
    if (sk_stack_reserve(s, 1)) return -1;
    s->v[s->n] = *v;
    if (v->tag != SK_VAL_SCALAR) s->v[s->n].n = 0; /* a Scalar keeps its kind there */
    s->n++;
    return 0;
  }
}
/* }==== */

/* Reads the Lua value at idx (and, for a list that absorbs, up to last) as argument a:
** nil is its default when it has one. Returns like lsk_read_value. */
static int read_arg(lua_State *L, int idx, int last, const SkArg *a, const SkValue *dflt, SkStack *s, int flags, char *err,
                    size_t errlen) {
  if (a->type == SK_T_TENSOR && !a->is_list) { /* the common case without a call: a tensor where a tensor goes */
    SkTensor *t = lsk_test_tensor(L, idx);
    if (t) return sk_push_tensor(s, t) ? -1 : 1;
  }
  if (dflt->n >= 0 && lua_isnil(L, idx)) return push_default(dflt, s) ? -1 : 1;
  return lsk_read_value(L, idx, last, a, s, flags, err, errlen);
}

/* {==== Options ==== */
_Static_assert(LSK_MAX_OPTIONS <= 64, "lsk_parse_args marks the options used in a uint64_t");
int lsk_take_options_table(lua_State *L, int *last, LskOptions *o) {
  int opts = *last;
  /* each (key, value) stays on the stack, so what the call reads stays alive */
  luaL_checkstack(L, 2 * LSK_MAX_OPTIONS + SK_MAX_OUTPUTS + 16, "too many options");
  lua_pushnil(L);
  if (!lua_next(L, opts)) return 0;
  if (lua_type(L, -2) != LUA_TSTRING) { lua_pop(L, 2); return 0; } /* a list: an argument, not options */
  (*last)--;
  do {
    if (o->n == LSK_MAX_OPTIONS) lsk_raise(L, "too many options (at most %d)", LSK_MAX_OPTIONS);
    o->name[o->n] = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    o->idx[o->n] = lua_gettop(L);
    if (o->name[o->n] && strcmp(o->name[o->n], "out") == 0) o->out = lua_gettop(L), o->out_j = o->n;
    o->n++;
    lua_pushvalue(L, -2);
  } while (lua_next(L, opts));
  if (o->out && lua_type(L, o->out) == LUA_TTABLE && !lsk_test_tensor(L, o->out)) { /* out = {t1, t2}: one per out */
    o->out_list = 1;
    lua_Unsigned n = lua_rawlen(L, o->out);
    for (lua_Unsigned k = 1; k <= n && k <= SK_MAX_OUTPUTS; k++) {
      lua_rawgeti(L, o->out, (lua_Integer)k);
      o->outs[o->nouts++] = lua_gettop(L);
    }
  }
  return opts;
}

/* The number of out arguments of sc. */
static int count_outs(const SkSchema *sc) {
  int n = 0;
  for (int j = 0; j < sc->nargs; j++) n += sc->args[j].is_out;
  return n;
}

/* The stack index of the option for argument i, or 0: opts[name]; for the k-th
** out argument also opts.out (one out) or opts.out[k] (several). -1: opts.out
** holds another number of tensors than sc has outs, so sc cannot take it. */
static int option_index(const LskOptions *o, const SkSchema *sc, int i, uint64_t *used) {
  const SkArg *a = &sc->args[i];
  for (int j = 0; j < o->n; j++)
    if (o->name[j] && strcmp(o->name[j], a->name) == 0) return *used |= (uint64_t)1 << j, o->idx[j];
  if (!a->is_out || !o->out) return 0;
  *used |= (uint64_t)1 << o->out_j;
  int k = 0, nouts = count_outs(sc);
  for (int j = 0; j < i; j++) k += sc->args[j].is_out;
  if ((o->out_list ? o->nouts : 1) != nouts) return -1;
  return o->out_list ? o->outs[k] : o->out;
}

/* The index of the option named like argument a, or -1. */
static int option_named(const LskOptions *o, const SkArg *a) {
  for (int j = 0; j < o->n; j++)
    if (o->name[j] && strcmp(o->name[j], a->name) == 0) return j;
  return -1;
}
/* }==== */

/* The rank of an overload that read a value of its type but refused it (an unknown dtype
** name, a list too long): above every mismatch, so a search reports that reason. */
#define BAD_VALUE (LSK_MAX_ARGS + 1)

int lsk_parse_args(lua_State *L, SkOperator *op, int first, int last, const LskOptions *o, SkStack *s, int permissive,
                   int *bad_arg, int *srcs, char *err, size_t errlen) {
  const SkSchema *sc = &op->schema;
  int pos = first, base = s->n;
  *bad_arg = -1;
  const Defaults *dflt = defaults_of(op);
  if (!dflt) { snprintf(err, errlen, "out of memory"); return -1; }
  int npos = 0;
  uint64_t used = 0; /* the options an argument took */
  for (int i = 0; i < sc->nargs; i++) if (!sc->args[i].kwarg_only) npos = i + 1;
  for (int i = 0; i < sc->nargs; i++) {
    const SkArg *a = &sc->args[i];
    int got = 0;
    if (srcs) srcs[i] = 0;
    if (!a->kwarg_only && pos <= last) {
      int flags = (permissive ? LSK_READ_NUMBERS : 0) | (i == npos - 1 ? LSK_READ_ABSORB : 0);
      if (o && option_named(o, a) >= 0) { /* an overload whose earlier argument takes this value is not the one */
        *bad_arg = i;
        if (errlen) snprintf(err, errlen, "argument '%s' given by position (%d) and by option", a->name, pos - first + 1);
        goto fail;
      }
      got = read_arg(L, pos, last, a, &dflt->v[i], s, flags, err, errlen);
      if (got > 0) { if (srcs) srcs[i] = pos; pos += got; continue; }
      *bad_arg = got == 0 ? i : BAD_VALUE;
      if (got == 0 && errlen) snprintf(err, errlen, "argument '%s' (position %d) expected %s, got %s", a->name, pos - first + 1,
                                       lsk_expected(a), lsk_got(L, pos));
      goto fail;
    }
    int oi = o ? option_index(o, sc, i, &used) : 0;
    if (oi < 0) {
      *bad_arg = i;
      if (errlen) snprintf(err, errlen, "option 'out' expected %d tensor%s, got %d", count_outs(sc),
                           count_outs(sc) == 1 ? "" : "s (a list)", o->out_list ? o->nouts : 1);
      goto fail;
    }
    if (oi && !lua_isnil(L, oi)) {
      got = read_arg(L, oi, oi, a, &dflt->v[i], s, permissive ? LSK_READ_NUMBERS : 0, err, errlen);
      if (got > 0) { if (srcs) srcs[i] = oi; continue; }
      *bad_arg = got == 0 ? i : BAD_VALUE;
      if (got == 0 && errlen) snprintf(err, errlen, "option '%s' expected %s, got %s", a->name, lsk_expected(a), lsk_got(L, oi));
      goto fail;
    }
    if (dflt->v[i].n >= 0) { if (push_default(&dflt->v[i], s)) goto oom; continue; }
    if (a->optional) { if (sk_push_none(s)) goto oom; continue; }
    *bad_arg = i;
    if (errlen) snprintf(err, errlen, "missing argument '%s'", a->name);
    goto fail;
  }
  if (pos <= last) {
    *bad_arg = npos > 0 ? npos - 1 : 0; /* ranks below a type mismatch at the next argument of another overload */
    if (errlen) snprintf(err, errlen, "too many arguments (expected at most %d, got %d)", npos, last - first + 1);
    goto fail;
  }
  for (int j = 0; o && j < o->n; j++) { /* every option must name an argument */
    if (used >> j & 1) continue;
    const char *k = o->name[j];
    int found = 0;
    for (int i = 0; k && i < sc->nargs && !found; i++)
      found = strcmp(sc->args[i].name, k) == 0 || (sc->args[i].is_out && strcmp(k, "out") == 0);
    if (!found) {
      *bad_arg = sc->nargs;
      if (errlen) snprintf(err, errlen, "unexpected option '%s'", k ? k : "(a key that is not a string)");
      goto fail;
    }
  }
  return 0;
oom:
  snprintf(err, errlen, "%s", sk_error_message());
fail:
  sk_stack_truncate(s, base);
  return -1;
}

/* Calls op on the parsed stack and pushes its results; aliasing returns push the argument itself. */
_Thread_local LskFrame *lsk_frame SK_TLS_MODEL;

/* srcs[i]: the Lua stack index argument i came from. What pushing the results
** needs of op is read before the call: a finalizer run by an allocation
** there may close the library that defined op. A result tensor a Lua callback
** of the call saw as a box is returned as that box (lsk_frame_keep). */
static int call_parsed(lua_State *L, LskState *st, SkOperator *op, SkStack *s, int first, int last, const int *srcs,
                       const char *fname) {
  const SkSchema *sc = &op->schema;
  int alias_src[LSK_MAX_RETURNS] = {0};
  for (int i = 0; i < sc->nrets && i < LSK_MAX_RETURNS; i++)
    if (sc->rets[i].alias_of >= 0 && sc->rets[i].is_write) alias_src[i] = srcs[sc->rets[i].alias_of];
  LskFrame frame;
  lsk_frame_enter(&frame, L, first, last);
  frame.st = st;
  frame.keeps = 1;
  int rc = sk_call_boxed(op, s);
  lsk_frame_leave(&frame);
  if (rc) { sk_stack_free(s); return lsk_error(L, fname); }
  int n = s->n;
  if (!lua_checkstack(L, n + 2)) { sk_stack_free(s); return lsk_raise(L, "%s: too many results", fname); }
  for (int i = 0; i < n; i++) {
    if (i < LSK_MAX_RETURNS && alias_src[i]) lua_pushvalue(L, alias_src[i]);
    else if (s->v[i].tag == SK_VAL_TENSOR) {
      lsk_push_result(L, st, s->v[i].u.t, frame.kept_lo, frame.kept_hi);
      s->v[i].tag = SK_VAL_NONE;
    } else lsk_push_value(L, &s->v[i], i < sc->nrets ? &sc->rets[i] : NULL, LSK_PUSH_TAKE);
  }
  sk_stack_free(s);
  return n;
}

int lsk_call_op(lua_State *L, SkOperator *op, int first, const char *fname) {
  LskState *st = lsk_state(L);
  lsk_call_entry(L, st);
  int last = lua_gettop(L);
  LskOptions o;
  lsk_take_options(L, first, &last, &o);
  SkStack s;
  sk_stack_init(&s);
  char err[512];
  int bad, srcs[LSK_MAX_ARGS];
  if (lsk_parse_args(L, op, first, last, &o, &s, 0, &bad, srcs, err, sizeof err) &&
      lsk_parse_args(L, op, first, last, &o, &s, 1, &bad, srcs, err, sizeof err)) {
    sk_stack_free(&s);
    return lsk_raise(L, "%s: %s", fname, err);
  }
  return call_parsed(L, st, op, &s, first, last, srcs, fname);
}

/* {==== Overload sets ====
** An overload set is every op of one Lua-visible name; the closure calling it
** holds a reference (a full userdata upvalue), and so does the table of names
** while the set has ops. When its last op goes (a library closed), the set
** leaves the table: closures kept from before say "this op was removed", and
** an op defined later under the same name gets a new set. No caps. */
typedef struct OverloadSet {
  int refs, n, cap;
  SkOperator **ops;
  char fname[];          /* "sk.add" or "Tensor:add" for messages */
} OverloadSet;
static int call_set_options(lua_State *L, OverloadSet *set, LskState *st, int last, LskOptions *opts);

static OverloadSet **sets; /* the table of names */
static int nsets, capsets;

static void set_release(OverloadSet *set) {
  if (--set->refs) return;
  free(set->ops);
  free(set);
}

/* The option requires_grad of a factory (an op with a dtype argument, as PyTorch's
** TensorOptions): taken out of o; -1 when absent, else its truth. Other ops refuse it. */
static int take_requires_grad(lua_State *L, const OverloadSet *set, LskOptions *o) {
  for (int j = 0; j < o->n; j++) {
    if (!o->name[j] || strcmp(o->name[j], "requires_grad") != 0) continue;
    int factory = 1;
    for (int i = 0; i < set->n && factory; i++) {
      const SkSchema *sc = &set->ops[i]->schema;
      int has = 0;
      for (int a = 0; a < sc->nargs; a++) has |= strcmp(sc->args[a].name, "dtype") == 0 && sc->args[a].type == SK_T_SCALAR_TYPE;
      factory = has;
    }
    if (!factory) return lsk_raise(L, "%s: unexpected option 'requires_grad' (only factories take it; use t:requires_grad_())", set->fname);
    if (lua_type(L, o->idx[j]) != LUA_TBOOLEAN) return lsk_raise(L, "%s: option 'requires_grad' expected a boolean, got %s", set->fname, lsk_got(L, o->idx[j]));
    int v = lua_toboolean(L, o->idx[j]);
    o->n--;
    if (o->out && o->out_j == o->n) o->out_j = j;
    o->name[j] = o->name[o->n];
    o->idx[j] = o->idx[o->n];
    return v;
  }
  return -1;
}

/* Calls set with the Lua values on the stack as its arguments. */
static int call_set_with(lua_State *L, OverloadSet *set, LskState *st) {
  lsk_call_entry(L, st); /* first: what finalizers do is seen below */
  if (set->n == 0) return lsk_raise(L, "%s: this op was removed (its library was closed)", set->fname);
  int last = lua_gettop(L);
  LskOptions o;
  if (lsk_take_options(L, 1, &last, &o) && o.n) {
    int rg = take_requires_grad(L, set, &o);
    if (rg >= 0) {
      int n = call_set_options(L, set, st, last, &o), top = lua_gettop(L);
      for (int i = top - n + 1; rg && i <= top; i++) {
        SkTensor *t = lsk_test_tensor(L, i);
        if (t && sk_set_requires_grad(t, 1)) return lsk_error(L, set->fname);
      }
      return n;
    }
  }
  return call_set_options(L, set, st, last, &o);
}

/* {==== Out variants ====
** With `out`, the overload is chosen as without it, among the functional
** overloads, and its out variant (same arguments, then the outs) is called:
** sk.max(a, b, {out = c}) is max.out, sk.max(a, 0, {out = {v, i}}) max.dim_max,
** as in PyTorch. Out overloads with no functional twin are matched directly. */

/* Whether out has the arguments of f, then outs only. */
static int is_out_variant(const SkSchema *out, const SkSchema *f) {
  if (out->nargs != f->nargs + count_outs(out)) return 0;
  for (int i = 0, j = 0; i < out->nargs; i++) {
    const SkArg *a = &out->args[i];
    if (a->is_out) continue;
    const SkArg *b = &f->args[j++];
    if (a->type != b->type || a->is_list != b->is_list || a->optional != b->optional || strcmp(a->name, b->name) != 0) return 0;
  }
  return 1;
}

/* Whether option name k names an out of some overload of set (or is `out`). */
static int names_an_out(const OverloadSet *set, const char *k) {
  if (!k) return 0;
  if (strcmp(k, "out") == 0) return 1;
  for (int i = 0; i < set->n; i++)
    for (int j = 0; j < set->ops[i]->schema.nargs; j++)
      if (set->ops[i]->schema.args[j].is_out && strcmp(k, set->ops[i]->schema.args[j].name) == 0) return 1;
  return 0;
}

/* The functional overload of set the arguments pick when the outs are left out, or NULL. */
static SkOperator *functional_match(lua_State *L, const OverloadSet *set, int last, const LskOptions *opts, SkStack *s) {
  LskOptions f = *opts;
  f.n = 0;
  f.out = f.out_list = f.nouts = 0;
  for (int j = 0; j < opts->n; j++)
    if (!names_an_out(set, opts->name[j])) f.name[f.n] = opts->name[j], f.idx[f.n++] = opts->idx[j];
  char err[1];
  for (int permissive = 0; permissive < 2; permissive++)
    for (int i = 0; i < set->n; i++) {
      SkOperator *op = set->ops[i];
      int bad;
      if (op->schema.kind == SK_KIND_OUT || lsk_parse_args(L, op, 1, last, &f, s, permissive, &bad, NULL, err, 0)) continue;
      sk_stack_free(s);
      return op;
    }
  return NULL;
}
/* }==== */

/* call_set_with after the options were read */
static int call_set_options(lua_State *L, OverloadSet *set, LskState *st, int last, LskOptions *opts) {
  /* an option named `out`, or named like an out argument of one of the overloads, picks the out overloads */
  int want_out = opts->out != 0;
  for (int k = 0; k < opts->n && !want_out; k++) want_out = names_an_out(set, opts->name[k]);
  SkStack s;
  sk_stack_init(&s);
  char err[512];
  err[0] = 0;
  int best = -2, best_op = 0, best_permissive = 0, srcs[LSK_MAX_ARGS];
  SkOperator *f = want_out && set->n > 1 ? functional_match(L, set, last, opts, &s) : NULL;
  int variant = -1; /* f's out variant in set */
  for (int i = 0; f && i < set->n && variant < 0; i++)
    if (set->ops[i]->schema.kind == SK_KIND_OUT && is_out_variant(&set->ops[i]->schema, &f->schema)) variant = i;
  for (int permissive = 0; permissive < 2; permissive++)
    for (int i = 0; i < set->n; i++) {
      SkOperator *op = set->ops[i];
      if ((op->schema.kind == SK_KIND_OUT) != want_out && set->n > 1) continue;
      if (variant >= 0 && i != variant) continue;
      int bad;
      if (lsk_parse_args(L, op, 1, last, opts, &s, permissive, &bad, srcs, err, 0) == 0)
        return call_parsed(L, st, op, &s, 1, last, srcs, set->fname);
      if (bad > best) best = bad, best_op = i, best_permissive = permissive;
    }
  if (best == -2) { sk_stack_free(&s); return lsk_raise(L, "%s: no variant of this op takes an 'out' option", set->fname); }
  if (f && variant < 0) {
    sk_stack_free(&s);
    return lsk_raise(L, "%s: %s%s%s has no out variant (its arguments take no 'out' option)", set->fname, f->schema.name,
                     f->schema.overload[0] ? "." : "", f->schema.overload);
  }
  int bad; /* the message of the overload that came nearest */
  if (lsk_parse_args(L, set->ops[best_op], 1, last, opts, &s, best_permissive, &bad, srcs, err, sizeof err) == 0)
    return call_parsed(L, st, set->ops[best_op], &s, 1, last, srcs, set->fname); /* what failed was memory */
  sk_stack_free(&s);
  return lsk_raise(L, "%s: %s", set->fname, err);
}

static int call_set(lua_State *L) {
  return call_set_with(L, *(OverloadSet **)lua_touserdata(L, lua_upvalueindex(1)), lua_touserdata(L, lua_upvalueindex(2)));
}

int lsk_call_function(lua_State *L, int fn) {
  if (lua_tocfunction(L, fn) != call_set) return lsk_raise(L, "internal: not an op function");
  lua_getupvalue(L, fn, 1);
  OverloadSet *set = *(OverloadSet **)lua_touserdata(L, -1);
  lua_getupvalue(L, fn, 2);
  LskState *st = lua_touserdata(L, -1);
  lua_pop(L, 2); /* both stay alive: fn holds them, and fn is an upvalue of the caller */
  return call_set_with(L, set, st);
}

static OverloadSet *find_set(const char *fname) {
  for (int i = 0; i < nsets; i++) if (strcmp(sets[i]->fname, fname) == 0) return sets[i];
  return NULL;
}

/* Adds op to the set `fname`, creating it; NULL with the error set on out of memory. */
static OverloadSet *add_to_set(const char *fname, SkOperator *op) {
  OverloadSet *set = find_set(fname);
  if (!set) {
    if (nsets == capsets) {
      int cap = capsets ? 2 * capsets : 512;
      OverloadSet **n = realloc(sets, (size_t)cap * sizeof *n);
      if (!n) return sk_error("out of memory"), NULL;
      sets = n;
      capsets = cap;
    }
    size_t len = strlen(fname);
    if (!(set = calloc(1, sizeof *set + len + 1))) return sk_error("out of memory"), NULL;
    memcpy(set->fname, fname, len + 1);
    set->refs = 1; /* the table's */
    sets[nsets++] = set;
  }
  for (int i = 0; i < set->n; i++) if (set->ops[i] == op) return set; /* a second Lua state reuses sets */
  if (set->n == set->cap) {
    int cap = set->cap ? 2 * set->cap : 4;
    SkOperator **n = realloc(set->ops, (size_t)cap * sizeof *n);
    if (!n) return sk_error("out of memory"), NULL;
    set->ops = n;
    set->cap = cap;
  }
  set->ops[set->n++] = op;
  return set;
}

static int set_gc(lua_State *L) {
  OverloadSet **h = lua_touserdata(L, 1);
  if (*h) set_release(*h);
  *h = NULL;
  return 0;
}

static const char set_mt_key = 0;

/* Pushes a closure calling set (upvalues: a handle holding a reference, the module state). */
static void push_set_closure(lua_State *L, OverloadSet *set) {
  OverloadSet **h = lua_newuserdatauv(L, sizeof *h, 0);
  *h = NULL;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &set_mt_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, set_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &set_mt_key);
  }
  lua_setmetatable(L, -2);
  *h = set;
  set->refs++;
  lsk_push_state(L);
  lua_pushcclosure(L, call_set, 2);
}

/* Pushes into the table at `tbl` the closure `name` calling its set. */
static void register_in(lua_State *L, int tbl, const char *prefix, const char *name, SkOperator *op) {
  char fname[200];
  snprintf(fname, sizeof fname, "%s%s", prefix, name);
  OverloadSet *set = add_to_set(fname, op);
  if (!set) { lsk_error(L, "sk"); return; }
  if (lua_getfield(L, tbl, name) != LUA_TNIL) { lua_pop(L, 1); return; }
  lua_pop(L, 1);
  push_set_closure(L, set);
  lua_setfield(L, tbl, name);
}

int lsk_sets_add(const char *fname, SkOperator *op) { return add_to_set(fname, op) ? 0 : -1; }

int lsk_push_set_function(lua_State *L, const char *fname) {
  OverloadSet *set = find_set(fname);
  if (!set || set->n == 0) return 0;
  push_set_closure(L, set);
  return 1;
}

void lsk_sets_forget(const SkOperator *op) {
  int keep = 0;
  for (int i = 0; i < nsets; i++) {
    OverloadSet *set = sets[i];
    int k = 0;
    for (int j = 0; j < set->n; j++) if (set->ops[j] != op) set->ops[k++] = set->ops[j];
    int emptied = k == 0 && set->n > 0;
    set->n = k;
    if (emptied) set_release(set); /* retired: the name is free for a new set */
    else sets[keep++] = set;
  }
  nsets = keep;
}

/* The set name of op under sk.ops: "sk.ops.aten.add". */
void lsk_ops_set_name(const SkOperator *op, char *buf, size_t n) {
  snprintf(buf, n, "sk.ops.%s.%s", op->schema.ns, op->schema.name);
}

void lsk_open_ops(lua_State *L) {
  int t = lua_gettop(L);
  lua_newtable(L); /* functions */
  lua_newtable(L); /* methods */
  for (const LskOpEntry *e = lsk_op_entries; e->qualname; e++) {
    SkOperator *op = sk_op_find(e->qualname);
    if (!op) continue;
    if (e->function || op->schema.kind == SK_KIND_OUT) register_in(L, t + 1, "sk.", op->schema.name, op);
    if (e->method) register_in(L, t + 2, "Tensor:", op->schema.name, op);
    char name[200];
    lsk_ops_set_name(op, name, sizeof name);
    if (!add_to_set(name, op)) lsk_error(L, "sk");
  }
  lua_setfield(L, t, "methods");
  lua_setfield(L, t, "functions");
}
/* }==== */

__attribute__((destructor)) static void sets_free(void) {
  for (int i = 0; i < nsets; i++) set_release(sets[i]);
  free(sets);
  sets = NULL;
  nsets = capsets = 0;
}
