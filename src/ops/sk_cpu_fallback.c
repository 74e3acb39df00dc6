/*
** sk_cpu_fallback.c — copy to the CPU, redispatch, copy back
** Invariant: every CPU copy made here is released on every path; the
** caller's tensors are written only after the CPU op succeeded.
*/
#include "sk_cpu_fallback.h"
#include "sk_error.h"
#include "sk_meta.h"
#include "sk_kernels.h"
#include "sk_ops.h"

#include <stdint.h>
#include <stdlib.h>

static unsigned char allow_views[SK_KEY_NUM_RUNTIME];
static unsigned char allow_list_active[SK_KEY_NUM_RUNTIME];
static SkFallbackLogFn log_fn;
static void *log_ud;

void sk_cpu_fallback_allow_views(int key, int allow) { allow_views[key] = allow != 0; }
void sk_cpu_fallback_set_log(SkFallbackLogFn fn, void *ud) { log_fn = fn; log_ud = ud; }

/* {==== Per-op state: counters and rules, in the fallback's slot of the op's data ==== */
typedef struct OpState {
  uint64_t calls[SK_KEY_NUM_RUNTIME];
  unsigned char rule[SK_KEY_NUM_RUNTIME]; /* SK_FALLBACK_{DEFAULT,ALLOW,DENY} */
} OpState;
static int slot = -1;

static OpState *state(const SkOperator *op) { return slot < 0 ? NULL : op->ext[slot]; }
static OpState *state_made(SkOperator *op) {
  if (slot < 0 && (slot = sk_op_ext_slot(free)) < 0) return NULL;
  if (!op->ext[slot] && !(op->ext[slot] = calloc(1, sizeof(OpState)))) return sk_error("out of memory"), NULL;
  return op->ext[slot];
}
static int rule_of(const SkOperator *op, int key) { const OpState *st = state(op); return st ? st->rule[key] : SK_FALLBACK_DEFAULT; }

uint64_t sk_fallback_calls(const SkOperator *op, int key) { const OpState *st = state(op); return st ? st->calls[key] : 0; }
int sk_fallback_count(SkOperator *op, int key) {
  OpState *st = state_made(op);
  if (!st) return -1;
  st->calls[key]++;
  return 0;
}
void sk_fallback_reset(int key) {
  for (int i = 0; i < sk_op_count(); i++) {
    OpState *st = state(sk_op_at(i));
    if (st) st->calls[key] = 0;
  }
}

void sk_cpu_fallback_set_rule(SkOperator *op, int key, int rule) {
  OpState *st = rule == SK_FALLBACK_DEFAULT ? state(op) : state_made(op);
  if (st) st->rule[key] = (unsigned char)rule;
  allow_list_active[key] = 0;
  for (int i = 0; i < sk_op_count(); i++) allow_list_active[key] |= rule_of(sk_op_at(i), key) == SK_FALLBACK_ALLOW;
}

void sk_cpu_fallback_forget_key(int key) {
  allow_views[key] = 0;
  allow_list_active[key] = 0;
  for (int i = 0; i < sk_op_count(); i++) {
    OpState *st = state(sk_op_at(i));
    if (st) { st->calls[key] = 0; st->rule[key] = SK_FALLBACK_DEFAULT; }
  }
}
/* }==== */

int sk_cpu_fallback_register(int key) {
  return sk_fallback_register(key, sk_cpu_fallback, (void *)(intptr_t)key, "sk.cpu_fallback", NULL);
}

static int is_view(const SkOperator *op) {
  for (int i = 0; i < op->schema.nrets; i++)
    if (op->schema.rets[i].is_alias && !op->schema.rets[i].is_write) return 1;
  return 0;
}

/* A CPU copy of t (t itself, retained, when it is not on the backend's device). */
static SkTensor *to_cpu(SkTensor *t, SkDevice dev) {
  if (!t || !sk_device_eq(t->device, dev)) return sk_tensor_retain(t);
  SkTensor *c = NULL;
  return sk_to_device(&c, t, SK_CPU, -1, 0, 0, -1) ? NULL : c;
}

static SkTensor *to_dev(SkTensor *t, SkDevice dev) {
  if (!t || t->device.type != SK_DEVICE_CPU) return sk_tensor_retain(t);
  SkTensor *c = NULL;
  return sk_to_device(&c, t, dev, -1, 0, 0, -1) ? NULL : c;
}

typedef SkTensor *(*MoveFn)(SkTensor *t, SkDevice dev); /* to_cpu or to_dev */

/* Pushes t moved by mv. */
static int push_moved(SkStack *s, SkTensor *t, MoveFn mv, SkDevice dev) {
  SkTensor *c = mv(t, dev);
  return c ? sk_push_tensor_owned(s, c) : -1;
}

/* Pushes list value v with each tensor moved by mv. */
static int push_moved_list(SkStack *s, const SkValue *v, MoveFn mv, SkDevice dev) {
  SkTensor **l = calloc((size_t)(v->n ? v->n : 1), sizeof *l);
  if (!l) return sk_error("out of memory");
  for (int j = 0; j < v->n; j++)
    if (v->u.tensors[j] && !(l[j] = mv(v->u.tensors[j], dev))) {
      for (int k = 0; k < j; k++) sk_tensor_release(l[k]);
      free(l);
      return -1;
    }
  return sk_push_tensorlist_owned(s, l, v->n);
}

/* The backend device of this call: that of the first tensor (or Device argument) with the key. */
static int find_device(const SkValue *a, int n, int key, SkDevice *dev) {
  for (int i = 0; i < n; i++) {
    if (a[i].tag == SK_VAL_TENSOR && sk_device_key(a[i].u.t->device) == key) { *dev = a[i].u.t->device; return 1; }
    if (a[i].tag == SK_VAL_TENSORLIST)
      for (int j = 0; j < a[i].n; j++)
        if (a[i].u.tensors[j] && sk_device_key(a[i].u.tensors[j]->device) == key) { *dev = a[i].u.tensors[j]->device; return 1; }
    if (a[i].tag == SK_VAL_DEVICE && a[i].u.device.type >= 0 && sk_device_key(a[i].u.device) == key) { *dev = a[i].u.device; return 1; }
  }
  return 0;
}

static int run(SkOperator *op, int key, SkStack *s) {
  const SkSchema *sc = &op->schema;
  int nargs = sc->nargs, base = s->n - nargs;
  const SkValue *a = &s->v[base];
  int rule = rule_of(op, key);
  if (rule == SK_FALLBACK_DENY || (allow_list_active[key] && rule != SK_FALLBACK_ALLOW))
    return sk_error("'%s' may not run through the CPU fallback on '%s' (%s)", op->qualname, sk_key_name(key),
                    rule == SK_FALLBACK_DENY ? "denied" : "not in the allow list");
  if (is_view(op) && !allow_views[key])
    return sk_error("view op '%s' cannot run through the CPU fallback on '%s': its result would not alias its input "
                    "(implement it for '%s', or allow views with sk.fallback.allow_views)", op->qualname, sk_key_name(key),
                    sk_key_name(key));
  SkDevice dev = SK_CPU;
  if (!find_device(a, nargs, key, &dev)) return sk_error("'%s': the CPU fallback for '%s' found no argument on it", op->qualname, sk_key_name(key));
  for (int i = 0; i < nargs; i++) { /* the device rule of every wrapper: one device, CPU 0-dim tensors aside */
    const char *name = op->schema.args[i].name;
    if (a[i].tag == SK_VAL_TENSOR && sk_meta_check_same_device(op->schema.name, dev, 1, (const SkTensor *const *)&a[i].u.t, &name))
      return -1;
    if (a[i].tag == SK_VAL_TENSORLIST && sk_meta_check_list_device(op->schema.name, dev, sk_value_tensorlist(&a[i]), name))
      return -1;
  }
  if (log_fn) log_fn(op, key, log_ud);
  if (sk_fallback_count(op, key)) return -1;

  /* 1. CPU copies of the arguments, in one pass */
  SkStack cs;
  sk_stack_init(&cs);
  int rc = 0;
  for (int i = 0; i < nargs && !rc; i++) {
    const SkValue *v = &a[i];
    if (v->tag == SK_VAL_TENSOR && sc->args[i].is_out && sk_device_eq(v->u.t->device, dev)) {
      /* an out is only written: a fresh CPU tensor of its shape, no copy of its contents */
      SkTensor *c = sk_tensor_empty(v->u.t->ndim, v->u.t->sizes, v->u.t->dtype, SK_CPU);
      rc = c ? sk_push_tensor_owned(&cs, c) : -1;
    } else if (v->tag == SK_VAL_TENSOR) rc = push_moved(&cs, v->u.t, to_cpu, dev);
    else if (v->tag == SK_VAL_TENSORLIST) rc = push_moved_list(&cs, v, to_cpu, dev);
    else if (v->tag == SK_VAL_DEVICE && sk_device_eq(v->u.device, dev)) rc = sk_push_device(&cs, SK_CPU);
    else rc = sk_push_copy(&cs, v);
  }
  /* 2. keep the CPU versions of mutated arguments, then run on the CPU */
  SkTensor *written[SK_MAX_OUTPUTS * 2] = {0};
  int wi[SK_MAX_OUTPUTS * 2], nw = 0;
  for (int i = 0; i < nargs && !rc; i++)
    if (sc->args[i].is_write && a[i].tag == SK_VAL_TENSOR && nw < SK_MAX_OUTPUTS * 2 && a[i].u.t != cs.v[i].u.t) {
      written[nw] = sk_tensor_retain(cs.v[i].u.t);
      wi[nw++] = i;
    }
  if (!rc) rc = sk_call_boxed_key(op, SK_KEY_CPU, &cs);
  /* 3. write mutated arguments back (an out the CPU op resized is resized first) */
  for (int j = 0; j < nw && !rc; j++) {
    SkTensor *orig = a[wi[j]].u.t;
    if (!sk_tensor_same_shape(orig, written[j])) rc = sk_tensor_resize(orig, written[j]->ndim, written[j]->sizes);
    if (!rc) rc = sk_copy_(orig, written[j], 0);
  }
  for (int j = 0; j < nw; j++) sk_tensor_release(written[j]);
  /* 4. results: aliases are the original tensors; the rest move back to the device */
  SkStack rs;
  sk_stack_init(&rs);
  for (int j = 0; j < cs.n && !rc; j++) {
    const SkArg *r = j < sc->nrets ? &sc->rets[j] : NULL;
    SkValue *v = &cs.v[j];
    if (r && r->is_write && r->alias_of >= 0) rc = sk_push_tensor(&rs, a[r->alias_of].u.t);
    else if (v->tag == SK_VAL_TENSOR) rc = push_moved(&rs, v->u.t, to_dev, dev);
    else if (v->tag == SK_VAL_TENSORLIST) rc = push_moved_list(&rs, v, to_dev, dev);
    else rc = sk_push_copy(&rs, v);
  }
  sk_stack_free(&cs);
  if (!rc) {
    sk_stack_truncate(s, base);
    for (int j = 0; j < rs.n && !rc; j++) rc = sk_push_copy(s, &rs.v[j]);
  }
  sk_stack_free(&rs);
  if (rc) return sk_error_context("%s through the CPU fallback for '%s'", op->qualname, sk_key_name(key));
  return 0;
}

int sk_cpu_fallback(SkOperator *op, SkStack *s, void *ctx) { return run(op, (int)(intptr_t)ctx, s); }

int sk_cpu_fallback_call(SkOperator *op, int key, SkStack *s) {
  if (!sk_key_is_backend(key) || key == SK_KEY_CPU || key == SK_KEY_META)
    return sk_error("the CPU fallback serves backends other than CPU and Meta, not '%s'", sk_key_name(key));
  return run(op, key, s);
}
