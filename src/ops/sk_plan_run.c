/*
** sk_plan_run.c — sk.plan's replay: one kernel call per step over one arena
** See sk_plan.h. Each buffer has a root tensor for the replay: the arena (made once), a
** constant, the caller's input, a fresh output, or what an unmanaged step returned; every
** value is its root or a view of it, made once for the arena and constants and per replay
** for the rest. Steps call op->table[key] directly with their recorded arguments, grad off.
** Invariant: between replays the plan holds no caller memory (roots and per-replay views
** are dropped at the end of each run).
*/
#include "sk_plan.h"
#include "sk_iter.h"
#include "sk_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void shape_text(int ndim, const int64_t *v, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < ndim && len < n; i++) len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)v[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
}

/* Input i against the plan's value for it: dtype, device, shape, strides (of dims over 1). */
static int check_input(const SkPlan *p, int i, const SkTensor *t) {
  const SkPlanValue *x = &p->val[p->in_value[i]];
  char a[160], b[160];
  if (t->dtype != x->dtype)
    return sk_error("sk.plan: argument %d has dtype %s, the plan was made for %s", i + 1, sk_dtype_name(t->dtype),
                    sk_dtype_name(x->dtype));
  if (!sk_device_eq(t->device, p->device)) {
    sk_device_format(t->device, a, sizeof a);
    sk_device_format(p->device, b, sizeof b);
    return sk_error("sk.plan: argument %d is on %s, the plan was made for %s", i + 1, a, b);
  }
  if (t->ndim != x->ndim || memcmp(t->sizes, x->sizes, (size_t)t->ndim * sizeof(int64_t))) {
    shape_text(t->ndim, t->sizes, a, sizeof a);
    shape_text(x->ndim, x->sizes, b, sizeof b);
    return sk_error("sk.plan: argument %d has shape %s, the plan was made for %s", i + 1, a, b);
  }
  for (int d = 0; d < t->ndim; d++)
    if (t->sizes[d] > 1 && t->strides[d] != x->strides[d]) {
      shape_text(t->ndim, t->strides, a, sizeof a);
      shape_text(x->ndim, x->strides, b, sizeof b);
      return sk_error("sk.plan: argument %d has strides %s, the plan was made for %s (a plan is specialised to its "
                      "inputs' layout)", i + 1, a, b);
    }
  if (sk_grad_enabled() && sk_tensor_grad_flag(t))
    return sk_error("sk.plan: argument %d requires grad; a plan's results have no history (call the plan under "
                    "sk.no_grad())", i + 1);
  return 0;
}

/* The tensor of value v in this replay (a borrowed reference). */
static SkTensor *value_tensor(SkPlan *p, int v) {
  SkPlanValue *x = &p->val[v];
  if (x->t) return x->t;
  if (p->cur[v]) return p->cur[v];
  int s = x->storage;
  SkTensor *root = p->root[s];
  if (!root) return sk_error("sk.plan: internal error: buffer %d has no tensor at its use", s), NULL;
  int64_t isz = (int64_t)sk_dtype_size(x->dtype), at = p->base[s] + x->byte_offset;
  if (sk_plan_value_is(x, root, p->base[s])) return p->cur[v] = sk_tensor_retain(root);
  if (at % isz) return sk_error("sk.plan: a view of %s at byte %lld is not aligned to its dtype", sk_dtype_name(x->dtype), (long long)at), NULL;
  return p->cur[v] = sk_tensor_alias_as(root, x->dtype, x->ndim, x->sizes, x->strides, at / isz);
}

/* Tensors and lists are pushed borrowed: the plan keeps the lists (its pool) and the bound
** tensors for the whole call, so a replay step mallocs nothing. */
static int push_arg(SkPlan *p, SkStack *s, const SkPlanArg *a) {
  if (a->v.tag == SK_VAL_TENSOR) {
    SkTensor *t = value_tensor(p, a->value);
    return t ? sk_push_tensor_present(s, t) : -1;
  }
  if (a->v.tag == SK_VAL_TENSORLIST) {
    SkTensor **ts = a->v.u.tensors; /* the step's own slots, in the plan's pool */
    for (int j = 0; j < a->v.n; j++)
      if (!(ts[j] = a->values[j] < 0 ? NULL : value_tensor(p, a->values[j])) && a->values[j] >= 0) return -1;
    return sk_push_list_borrowed(s, SK_VAL_TENSORLIST, ts, a->v.n);
  }
  if (a->v.tag >= SK_VAL_INTLIST) return sk_push_list_borrowed(s, (SkValueTag)a->v.tag, a->v.u.ints, a->v.n);
  return sk_push_copy(s, &a->v);
}

/* The results of an unmanaged step become the roots of the buffers they make. */
static int take_results(SkPlan *p, const SkPlanStep *st, SkStack *s) {
  for (int i = 0; i < st->nres && i < s->n; i++) {
    int v = st->res[i];
    if (v < 0 || s->v[i].tag != SK_VAL_TENSOR) continue;
    const SkPlanValue *x = &p->val[v];
    SkTensor *t = s->v[i].u.t;
    if (t->dtype != x->dtype || t->ndim != x->ndim || memcmp(t->sizes, x->sizes, (size_t)x->ndim * sizeof(int64_t))) {
      char a[160], b[160];
      shape_text(t->ndim, t->sizes, a, sizeof a);
      shape_text(x->ndim, x->sizes, b, sizeof b);
      return sk_error("sk.plan: '%s' returned %s %s, its meta function said %s %s", st->op->qualname,
                      sk_dtype_name(t->dtype), a, sk_dtype_name(x->dtype), b);
    }
    int b = x->storage;
    sk_tensor_release(p->root[b]);
    p->root[b] = sk_tensor_retain(t);
    p->base[b] = t->offset * (int64_t)sk_dtype_size(t->dtype) - x->byte_offset;
  }
  return 0;
}

int sk_plan_spans(int ndim, const int64_t *sizes, const int64_t *strides, SkDType dtype, int64_t byte_offset,
                  size_t nbytes) {
  int64_t lo = 0, hi = -1;
  return byte_offset == 0 && !sk_span(ndim, sizes, strides, 0, &lo, &hi) && (size_t)(hi + 1) * sk_dtype_size(dtype) == nbytes;
}

/* The value that made buffer b, when it spans all of it (a tensor of its own), else NULL. */
static const SkPlanValue *whole_value(const SkPlan *p, int b) {
  const SkPlanStorage *st = &p->st[b];
  const SkPlanValue *c = st->creator >= 0 ? &p->val[st->creator] : NULL;
  return c && sk_plan_spans(c->ndim, c->sizes, c->strides, c->dtype, c->byte_offset, st->nbytes) ? c : NULL;
}

/* The caller's out i for output i: the output must be a whole buffer the steps write, and the
** out its exact tensor (dtype, shape, strides, device). */
static int bind_out(SkPlan *p, int i, SkTensor *o) {
  int v = p->out_value[i], b = p->val[v].storage;
  const SkPlanValue *c = whole_value(p, b);
  if (p->st[b].kind != SK_PS_OUTPUT || !c || c != &p->val[v])
    return sk_error("sk.plan: output %d is %s; it cannot be written into a caller's tensor", i + 1,
                    p->st[b].kind == SK_PS_INPUT ? "a view of an input" : p->st[b].kind == SK_PS_CONST ? "a view of a constant"
                    : p->st[b].kind == SK_PS_UNMANAGED ? "made by an op without an out variant" : "a view of an intermediate");
  if (p->root[b]) return sk_error("sk.plan: output %d is returned twice; give it one out", i + 1);
  char a[160], e[160];
  if (o->dtype != c->dtype || !sk_device_eq(o->device, p->device) || o->ndim != c->ndim ||
      memcmp(o->sizes, c->sizes, (size_t)c->ndim * sizeof(int64_t)) ||
      memcmp(o->strides, c->strides, (size_t)c->ndim * sizeof(int64_t))) {
    shape_text(o->ndim, o->sizes, a, sizeof a);
    shape_text(c->ndim, c->sizes, e, sizeof e);
    return sk_error("sk.plan: out %d is a %s tensor of shape %s, output %d is %s of shape %s (with the same strides and "
                    "device)", i + 1, sk_dtype_name(o->dtype), a, i + 1, sk_dtype_name(c->dtype), e);
  }
  p->root[b] = sk_tensor_retain(o);
  p->base[b] = o->offset * (int64_t)sk_dtype_size(o->dtype);
  return 0;
}

/* Tensors for the outputs' buffers: the caller's outs, else fresh ones (the value that made
** a buffer when it spans it, else bytes it is a view of). */
static int bind_outputs(SkPlan *p, SkTensor *const *outs) {
  for (int i = 0; outs && i < p->nout; i++)
    if (bind_out(p, i, outs[i])) return -1;
  for (int b = 0; b < p->nst; b++) {
    const SkPlanStorage *st = &p->st[b];
    if (st->kind != SK_PS_OUTPUT || p->root[b]) continue;
    const SkPlanValue *c = whole_value(p, b);
    int whole = c != NULL;
    int64_t n = (int64_t)st->nbytes;
    p->root[b] = whole ? sk_tensor_empty_strided(c->ndim, c->sizes, c->strides, c->dtype, p->device)
                       : sk_tensor_empty(1, &n, SK_DTYPE_UINT8, p->device);
    p->base[b] = 0;
    if (!p->root[b]) return -1;
  }
  return 0;
}

/* The caller's outs share no memory with an input, a captured tensor or each other: a step writes
** an out while a later step may still read what it overlaps (the replay does not order writes
** around reads; sk refuses, as PyTorch does for an out= overlapping a non-elementwise op's input).
** The constants are checked as the views the steps read (made once, p->val[v].t). */
static int check_outs_overlap(const SkPlan *p, SkTensor *const *in, SkTensor *const *outs) {
  for (int i = 0; i < p->nout; i++) {
    const SkTensor *o = outs[i];
    for (int j = 0; j < p->nin; j++)
      if (sk_tensor_may_overlap(o, in[j]))
        return sk_error("sk.plan: out %d overlaps the memory of argument %d; an out may share no memory with the "
                        "plan's inputs", i + 1, j + 1);
    for (int v = 0; v < p->nval; v++)
      if (p->st[p->val[v].storage].kind == SK_PS_CONST && sk_tensor_may_overlap(o, p->val[v].t))
        return sk_error("sk.plan: out %d overlaps the memory of a tensor the plan captured (a constant); an out may "
                        "share no memory with the plan's constants", i + 1);
    for (int j = 0; j < i; j++)
      if (sk_tensor_may_overlap(o, outs[j]))
        return sk_error("sk.plan: out %d overlaps the memory of out %d; each out needs memory of its own", i + 1, j + 1);
  }
  return 0;
}

static void unbind(SkPlan *p) {
  for (int v = 0; v < p->nval; v++) {
    sk_tensor_release(p->cur[v]);
    p->cur[v] = NULL;
  }
  for (int b = 0; b < p->nst; b++) {
    if (p->st[b].kind != SK_PS_INPUT) sk_tensor_release(p->root[b]);
    p->root[b] = NULL;
  }
}

/* sk_iter_temps' take while step `step` runs: its temporaries in the order they were noted (one
** that differs, which a kernel that decides at run time could ask for, is allocated instead). */
typedef struct { const SkPlan *p; int next, end; } Temps;

static SkTensor *take_temp(void *ctx, int ndim, const int64_t *sizes, SkDType dtype, SkDevice device) {
  Temps *tp = ctx;
  if (tp->next >= tp->end) return NULL;
  const SkPlanValue *x = &tp->p->val[tp->next];
  if (x->dtype != dtype || x->ndim != ndim || memcmp(x->sizes, sizes, (size_t)ndim * sizeof(int64_t)) ||
      !sk_device_eq(x->t->device, device))
    return NULL;
  tp->next++;
  return sk_tensor_retain(x->t);
}

int sk_plan_check_inputs(const SkPlan *p, SkTensor *const *in) {
  for (int i = 0; i < p->nin; i++)
    if (check_input(p, i, in[i])) return -1;
  return 0;
}

int sk_plan_run(SkPlan *p, SkTensor *const *in, SkTensor *const *outs, SkTensor **res) {
  if (p->running) return sk_error("sk.plan: this plan is already running (called from one of its own kernels)");
  if (sk_plan_check_inputs(p, in)) return -1;
  if (sk_grad_enabled())
    for (int b = 0; b < p->nst; b++)
      if (p->st[b].kind == SK_PS_CONST && sk_tensor_grad_flag(p->st[b].real))
        return sk_error("sk.plan: a tensor the plan captured requires grad; a plan's results have no history (call the "
                        "plan under sk.no_grad())");
  for (int b = 0; b < p->nst; b++)
    if (p->st[b].kind == SK_PS_INPUT) {
      p->root[b] = in[p->st[b].index];
      p->base[b] = in[p->st[b].index]->offset * (int64_t)sk_dtype_size(in[p->st[b].index]->dtype);
    }
  int rc = bind_outputs(p, outs);
  if (!rc && outs) rc = check_outs_overlap(p, in, outs);
  SkKeySet exclude = sk_tls_exclude;
  sk_tls_exclude |= SK_KEYSET(SK_KEY_AUTOGRAD);
  p->running = 1;
  SkStack s;
  sk_stack_init(&s);
  for (int i = 0; i < p->nstep && !rc; i++) {
    const SkPlanStep *st = &p->step[i];
    for (int a = 0; a < st->nargs && !rc; a++) rc = push_arg(p, &s, &st->args[a]);
    Temps temps = {p, st->temps, st->temps + st->ntemps};
    SkIterTemps hook = {NULL, take_temp, &temps};
    const SkIterTemps *outer = sk_iter_temps;
    if (st->ntemps) sk_iter_temps = &hook;
    if (!rc) rc = sk_call_boxed_key(st->op, p->key, &s);
    sk_iter_temps = outer;
    if (!rc && st->kind != SK_STEP_OUT) rc = take_results(p, st, &s);
    if (rc) { /* the op the user's code called is named once, as a direct call's binding names it */
      sk_error_drop_self(st->called->qualname);
      sk_error_context("sk.plan: step %d (%s, called as %s)", i + 1, st->op->qualname, st->called->qualname);
    }
    sk_stack_truncate(&s, 0);
  }
  sk_stack_free(&s);
  p->running = 0;
  sk_tls_exclude = exclude;
  for (int i = 0; i < p->nout && !rc; i++) {
    SkTensor *t = value_tensor(p, p->out_value[i]);
    if (!t) {
      rc = -1;
      while (i-- > 0) sk_tensor_release(res[i]);
      break;
    }
    res[i] = sk_tensor_retain(t);
  }
  unbind(p);
  return rc;
}

void sk_plan_free(SkPlan *p) {
  if (!p) return;
  for (int v = 0; v < p->nval; v++) sk_tensor_release(p->val[v].t);
  if (p->cur) unbind(p);
  for (int b = 0; b < p->nst; b++) {
    sk_tensor_release(p->st[b].anchor);
    sk_tensor_release(p->st[b].real);
  }
  sk_tensor_release(p->arena);
  sk_plan_pool_free(p); /* every array of the plan is in its pool */
  free(p);
}
