/*
** sk_dispatch.c — the operator registry and dispatch-table computation
** Each (op, key) holds a stack of registrations, newest first; the table
** slot takes the newest. Tables are recomputed for one op on each of its
** (de)registrations, and for all ops when a fallback changes.
*/
#include "sk_dispatch.h"
#include "sk_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local SkKeySet sk_tls_include __attribute__((tls_model("initial-exec"))), sk_tls_exclude __attribute__((tls_model("initial-exec")));

static SkOperator **ops;
static int nops, capops;
static SkRegistration *fallbacks[SK_KEY_NUM_RUNTIME];
static int next_id = 1;

/* {==== Keys ==== */
_Static_assert((int)SK_KEY_BACKEND0 == (int)SK_DEVICE_FIRST_CUSTOM && (int)SK_KEY_CPU == (int)SK_DEVICE_CPU + 1,
               "keys follow device types (sk_device_key)");
_Static_assert(SK_KEY_COUNT <= 32, "a key set is 32 bits");

static const char *const fixed_key_names[SK_KEY_COUNT] = {
  [SK_KEY_UNDEFINED] = "Undefined",
#define SK_X_KEY(e, name) [SK_KEY_##e] = #e,
  SK_COMPILED_BACKENDS(SK_X_KEY)
#undef SK_X_KEY
  [SK_KEY_META] = "Meta", [SK_KEY_BACKEND_SELECT] = "BackendSelect",
  [SK_KEY_AUTOGRAD] = "Autograd", [SK_KEY_PLAN] = "Plan",
  [SK_KEY_DEFAULT_BACKEND] = "DefaultBackend", [SK_KEY_MATH] = "Math",
};

const char *sk_key_name(int key) {
  if (key >= SK_KEY_BACKEND0 && key <= SK_KEY_BACKEND_LAST) {
    static const char *const slots[SK_MAX_RUNTIME_BACKENDS] = {"Backend0", "Backend1", "Backend2", "Backend3",
                                                               "Backend4", "Backend5", "Backend6", "Backend7"};
    const SkDeviceType *t = sk_device_type(sk_key_device_type(key));
    return t ? t->name : slots[key - SK_KEY_BACKEND0];
  }
  return key >= 0 && key < SK_KEY_COUNT ? fixed_key_names[key] : "?";
}

int sk_key_from_name(const char *name) {
  for (int k = 1; k < SK_KEY_COUNT; k++)
    if (strcmp(sk_key_name(k), name) == 0) return k;
  if (strcmp(name, "CompositeExplicitAutograd") == 0) return SK_KEY_DEFAULT_BACKEND;
  if (strcmp(name, "CompositeImplicitAutograd") == 0) return SK_KEY_MATH;
  for (int t = 0; t < SK_DEVICE_MAX_TYPES; t++) { /* device names: "cpu", "cuda", "meta", "npu" */
    const SkDeviceType *dt = sk_device_type(t);
    if (dt && strcmp(dt->name, name) == 0) return sk_device_key(sk_device(t, 0));
  }
  return -1;
}

const char *sk_source_name(int source) {
  static const char *const names[] = {"none", "direct", "DefaultBackend", "Math", "fallback"};
  return (unsigned)source < 5 ? names[source] : "?";
}
/* }==== */

/* {==== Table computation ==== */
static void compute_entry(SkOperator *op, int key) {
  SkKernel *slot = &op->table[key];
  memset(slot, 0, sizeof *slot);
  const SkRegistration *r = op->regs[key];
  int source = SK_SRC_DIRECT;
  /* Composite kernels also fill Undefined, so factories without tensor arguments find them. */
  if (!r && (sk_key_is_backend(key) || key == SK_KEY_UNDEFINED)) {
    if ((r = op->regs[SK_KEY_DEFAULT_BACKEND])) source = SK_SRC_DEFAULT_BACKEND;
    else if ((r = op->regs[SK_KEY_MATH])) source = SK_SRC_MATH;
  }
  /* A Math kernel is its own autograd: it decomposes into ops that record
  ** (PyTorch's CompositeImplicitAutograd); DefaultBackend's needs a formula. */
  if (!r && key == SK_KEY_AUTOGRAD && (r = op->regs[SK_KEY_MATH])) source = SK_SRC_MATH;
  if (!r && (r = fallbacks[key])) source = SK_SRC_FALLBACK;
  if (!r) return;
  *slot = r->kernel;
  slot->source = source;
}

int sk_fallthrough(SkOperator *op, SkStack *s, void *ctx) {
  (void)s, (void)ctx;
  return sk_error("internal error: the fallthrough kernel of '%s' was called", op->qualname);
}

static void compute_table(SkOperator *op) {
  for (int k = 0; k < SK_KEY_NUM_RUNTIME; k++) compute_entry(op, k);
  int bs = op->regs[SK_KEY_BACKEND_SELECT] != NULL;
  op->always = bs ? SK_KEYSET(SK_KEY_BACKEND_SELECT) : 0;
  op->fallthrough = bs ? 0 : SK_KEYSET(SK_KEY_BACKEND_SELECT);
  for (int k = 0; k < SK_KEY_NUM_RUNTIME; k++)
    if (op->regs[k] && op->regs[k]->kernel.boxed == sk_fallthrough) {
      op->fallthrough |= SK_KEYSET(k);
      memset(&op->table[k], 0, sizeof op->table[k]);
    }
}
/* }==== */

/* {==== Registry ==== */
static char *dupstr(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void free_schema_copy(SkSchema *s) {
  for (int i = 0; i < s->nargs; i++) { free((char *)s->args[i].name); free((char *)s->args[i].default_text); }
  for (int i = 0; i < s->nrets; i++) free((char *)s->rets[i].name);
  free((SkArg *)s->args);
  free((SkArg *)s->rets);
  free((char *)s->ns); free((char *)s->name); free((char *)s->overload); free((char *)s->text);
}

static int copy_schema(SkSchema *dst, const SkSchema *src) {
  memset(dst, 0, sizeof *dst);
  dst->nargs = src->nargs;
  dst->nrets = src->nrets;
  dst->kind = src->kind;
  SkArg *args = calloc((size_t)src->nargs + 1, sizeof *args), *rets = calloc((size_t)src->nrets + 1, sizeof *rets);
  dst->args = args;
  dst->rets = rets;
  dst->ns = dupstr(src->ns); dst->name = dupstr(src->name);
  dst->overload = dupstr(src->overload); dst->text = dupstr(src->text);
  int ok = args && rets && dst->ns && dst->name && dst->overload && dst->text;
  for (int i = 0; ok && i < src->nargs; i++) {
    args[i] = src->args[i];
    args[i].name = dupstr(src->args[i].name);
    args[i].default_text = dupstr(src->args[i].default_text);
    ok = args[i].name && (!src->args[i].default_text || args[i].default_text);
  }
  for (int i = 0; ok && i < src->nrets; i++) {
    rets[i] = src->rets[i];
    rets[i].name = dupstr(src->rets[i].name);
    ok = !src->rets[i].name || rets[i].name;
  }
  if (!ok) { free_schema_copy(dst); return sk_error("out of memory"); }
  return 0;
}

static void format_qualname(char *buf, size_t n, const SkSchema *s) {
  snprintf(buf, n, "%s::%s%s%s", s->ns, s->name, s->overload[0] ? "." : "", s->overload);
}

SkOperator *sk_op_find(const char *qualname) {
  const char *sep = strstr(qualname, "::");
  char full[160];
  if (!sep) { snprintf(full, sizeof full, "aten::%s", qualname); qualname = full; }
  for (int i = 0; i < nops; i++)
    if (ops[i] && strcmp(ops[i]->qualname, qualname) == 0) return ops[i];
  return NULL;
}

SkOperator *sk_op_define(const SkSchema *schema, SkUnboxFn unbox, int copy) {
  char qn[128];
  format_qualname(qn, sizeof qn, schema);
  if (strlen(qn) >= sizeof qn - 1) return sk_error("operator name '%s' is too long", qn), NULL;
  if (sk_op_find(qn)) return sk_error("operator '%s' is already defined", qn), NULL;
  if (nops == capops) {
    int cap = capops ? capops * 2 : 256;
    SkOperator **n = realloc(ops, (size_t)cap * sizeof *n);
    if (!n) return sk_error("out of memory"), NULL;
    ops = n;
    capops = cap;
  }
  SkOperator *op = calloc(1, sizeof *op);
  if (!op) return sk_error("out of memory"), NULL;
  if (copy) {
    if (copy_schema(&op->schema, schema)) { free(op); return NULL; }
  } else op->schema = *schema;
  memcpy(op->qualname, qn, strlen(qn) + 1);
  for (int i = 0; i < schema->nargs && i < 64; i++)
    if (schema->args[i].type == SK_T_TENSOR) {
      op->tensor_args |= (uint64_t)1 << i;
      if (schema->args[i].is_list || op->ntensor_pos == SK_TENSOR_POS) op->ntensor_pos = SK_TENSOR_POS + 1;
      if (op->ntensor_pos < SK_TENSOR_POS + 1) op->tensor_pos[op->ntensor_pos++] = (unsigned char)i;
    }
  for (int j = op->ntensor_pos; j > 0 && j < SK_TENSOR_POS; j++) op->tensor_pos[j] = op->tensor_pos[j - 1];
  op->unbox = unbox;
  op->index = nops;
  op->owns_schema = copy;
  ops[nops++] = op;
  compute_table(op);
  return op;
}

SkKeySet sk_stack_keyset_any(const SkOperator *op, const SkValue *a) {
  SkKeySet ks = 0;
  for (uint64_t m = op->tensor_args; m; m &= m - 1) {
    const SkValue *v = &a[__builtin_ctzll(m)];
    if (v->tag == SK_VAL_TENSOR) ks |= sk_value_keyset(v);
    else if (v->tag == SK_VAL_TENSORLIST)
      for (int j = 0; j < v->n; j++)
        if (v->u.tensors[j]) ks |= sk_tensor_keyset(v->u.tensors[j]);
  }
  return ks;
}

int sk_op_registrations(const SkOperator *op) {
  int n = 0;
  for (int k = 0; k < SK_KEY_COUNT; k++)
    for (const SkRegistration *r = op->regs[k]; r; r = r->next) n++;
  return n;
}

static void (*ext_free[SK_OP_EXT_SLOTS])(void *);
static int next_ext;

int sk_op_ext_slot(void (*free_fn)(void *)) {
  if (next_ext == SK_OP_EXT_SLOTS) return sk_error("internal: all %d per-op data slots are taken", SK_OP_EXT_SLOTS);
  ext_free[next_ext] = free_fn;
  return next_ext++;
}

static void ext_release(SkOperator *op) {
  for (int i = 0; i < next_ext; i++)
    if (op->ext[i] && ext_free[i]) { ext_free[i](op->ext[i]); op->ext[i] = NULL; }
}

int sk_op_undefine(SkOperator *op) {
  for (int k = 0; k < SK_KEY_COUNT; k++)
    if (op->regs[k]) return sk_error("operator '%s' still has kernels registered", op->qualname);
  for (int i = 0; i < nops; i++)
    if (ops[i] == op) {
      memmove(&ops[i], &ops[i + 1], (size_t)(nops - i - 1) * sizeof *ops);
      nops--;
      break;
    }
  for (int i = 0; i < nops; i++) ops[i]->index = i;
  if (op->owns_schema) free_schema_copy(&op->schema);
  ext_release(op);
  free(op);
  return 0;
}

int sk_op_count(void) { return nops; }
SkOperator *sk_op_at(int i) { return i >= 0 && i < nops ? ops[i] : NULL; }
void sk_op_set_out_sibling(SkOperator *op, const char *qualname) { op->out_sibling = qualname; }

/* A registration owns a copy of its kernel's origin: callers (a Lua library
** building the name) need not keep theirs alive. */
static SkRegistration *registration_new(int key, const SkKernel *k, void (*ctx_free)(void *)) {
  SkRegistration *r = calloc(1, sizeof *r);
  char *origin = k->origin ? strdup(k->origin) : NULL;
  if (!r || (k->origin && !origin)) {
    free(r);
    free(origin);
    sk_error("out of memory");
    return NULL;
  }
  r->id = next_id++;
  r->key = key;
  r->kernel = *k;
  r->kernel.origin = origin;
  r->ctx_free = ctx_free;
  return r;
}

static void registration_free(SkRegistration *r) {
  if (r->ctx_free) r->ctx_free(r->kernel.ctx);
  free((char *)r->kernel.origin);
  free(r);
}

int sk_op_register(SkOperator *op, int key, const SkKernel *k, void (*ctx_free)(void *)) {
  if (key <= SK_KEY_UNDEFINED || key >= SK_KEY_COUNT) return sk_error("invalid dispatch key %d", key);
  if (!k->unboxed && !k->boxed) return sk_error("a kernel needs a boxed or an unboxed function");
  if (k->unboxed && !k->boxed && !op->unbox)
    return sk_error("operator '%s' was defined at run time and takes boxed kernels only", op->qualname);
  SkRegistration *r = registration_new(key, k, ctx_free);
  if (!r) return -1;
  if (op->regs[key])
    sk_warn("overriding the %s kernel of '%s' (registered by %s) with one from %s; removing the new one restores it",
            sk_key_name(key), op->qualname, op->regs[key]->kernel.origin ? op->regs[key]->kernel.origin : "?",
            k->origin ? k->origin : "?");
  r->next = op->regs[key];
  op->regs[key] = r;
  compute_table(op);
  return r->id;
}

int sk_op_deregister(SkOperator *op, int id) {
  for (int k = 0; k < SK_KEY_COUNT; k++)
    for (SkRegistration **p = &op->regs[k]; *p; p = &(*p)->next)
      if ((*p)->id == id) {
        SkRegistration *r = *p;
        *p = r->next;
        compute_table(op);
        registration_free(r);
        return 0;
      }
  return sk_error("no registration %d on '%s'", id, op->qualname);
}

static void recompute_all(void) {
  for (int i = 0; i < nops; i++) compute_table(ops[i]);
}

int sk_fallback_register(int key, SkBoxedFn fn, void *ctx, const char *origin, void (*ctx_free)(void *)) {
  if (!sk_key_is_backend(key) && key != SK_KEY_AUTOGRAD && key != SK_KEY_PLAN)
    return sk_error("fallbacks are registered for backend keys and Autograd, not '%s'", sk_key_name(key));
  SkKernel k = {NULL, fn, ctx, origin, 0};
  SkRegistration *r = registration_new(key, &k, ctx_free);
  if (!r) return -1;
  if (fallbacks[key]) sk_warn("overriding the fallback for %s", sk_key_name(key));
  r->next = fallbacks[key];
  fallbacks[key] = r;
  recompute_all();
  return r->id;
}

int sk_fallback_deregister(int id) {
  for (int k = 0; k < SK_KEY_NUM_RUNTIME; k++)
    for (SkRegistration **p = &fallbacks[k]; *p; p = &(*p)->next)
      if ((*p)->id == id) {
        SkRegistration *r = *p;
        *p = r->next;
        recompute_all();
        registration_free(r);
        return 0;
      }
  return sk_error("no fallback registration %d", id);
}

int sk_key_registrations(int key) {
  int n = fallbacks[key] != NULL;
  for (int i = 0; i < nops; i++)
    for (const SkRegistration *r = ops[i]->regs[key]; r; r = r->next) n++;
  return n;
}

int sk_fallback_active(int key) { return key >= 0 && key < SK_KEY_NUM_RUNTIME && fallbacks[key] != NULL; }
/* }==== */

/* {==== Calling ==== */
const SkKernel *sk_dispatch_miss(SkOperator *op, SkKeySet ks) {
  int key = sk_highest_key(ks);
  if (key == SK_KEY_UNDEFINED) {
    char ex[128] = "";
    size_t len = 0;
    for (int k = 1; k < SK_KEY_NUM_RUNTIME && len < sizeof ex; k++)
      if (sk_tls_exclude & SK_KEYSET(k)) len += (size_t)snprintf(ex + len, sizeof ex - len, "%s%s", len ? ", " : "", sk_key_name(k));
    if (len) return sk_error("no kernel for '%s': every key of its arguments is excluded on this thread (%s)", op->qualname, ex), NULL;
    return sk_error("'%s' has no tensor arguments to dispatch on (pass a device)", op->qualname), NULL;
  }
  char have[256] = "";
  size_t len = 0;
  for (int k = 1; k < SK_KEY_COUNT && len < sizeof have; k++)
    if (op->regs[k]) len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", len ? ", " : "", sk_key_name(k));
  char hint[320] = "";
  if (sk_key_is_backend(key) && op->out_sibling && op->schema.kind != SK_KIND_OUT)
    snprintf(hint, sizeof hint, "; implement '%s' for '%s' to get it through DefaultBackend", op->out_sibling, sk_key_name(key));
  else if (sk_key_is_backend(key) && op->schema.kind == SK_KIND_OUT && !sk_fallback_active(key))
    snprintf(hint, sizeof hint, "; implementing this out op for '%s' also gives its functional and in-place variants "
             "(through DefaultBackend), or register a fallback such as sk.cpu_fallback", sk_key_name(key));
  sk_error("no kernel for '%s' on backend '%s' (registered for: %s; %s)%s", op->qualname, sk_key_name(key),
           len ? have : "nothing", sk_fallback_active(key) ? "a fallback is registered" : "no fallback", hint);
  return NULL;
}

int sk_call_boxed_short(SkOperator *op, SkStack *s) {
  return sk_error("'%s' expects %d arguments on the stack, got %d", op->qualname, op->schema.nargs, s->n);
}

int sk_call_boxed_key(SkOperator *op, int key, SkStack *s) {
  const SkKernel *k = &op->table[key];
  if (!k->boxed && !k->unboxed) return sk_dispatch_miss(op, SK_KEYSET(key)) ? 0 : -1;
  return sk_call_kernel_boxed(op, k, s);
}

/* A None result is a Tensor? one, or an element of a tuple of tensors that is not written
** (PyTorch's undefined tensor: convolution_backward's where output_mask is false). */
static int value_matches(const SkArg *a, const SkValue *v, int nrets) {
  if (v->tag == SK_VAL_NONE) return a->optional || (nrets > 1 && a->type == SK_T_TENSOR && !a->is_list && !a->is_write);
  if (a->is_list) {
    switch (a->type) {
    case SK_T_TENSOR: return v->tag == SK_VAL_TENSORLIST;
    case SK_T_INT: return v->tag == SK_VAL_INTLIST;
    case SK_T_FLOAT: return v->tag == SK_VAL_DOUBLELIST;
    case SK_T_BOOL: return v->tag == SK_VAL_BOOLLIST;
    default: return 0;
    }
  }
  switch (a->type) {
  case SK_T_TENSOR: return v->tag == SK_VAL_TENSOR;
  case SK_T_INT: return v->tag == SK_VAL_INT;
  case SK_T_FLOAT: return v->tag == SK_VAL_DOUBLE;
  case SK_T_BOOL: return v->tag == SK_VAL_BOOL;
  case SK_T_SCALAR: return v->tag == SK_VAL_SCALAR;
  case SK_T_STR: return v->tag == SK_VAL_STRING;
  case SK_T_SCALAR_TYPE: return v->tag == SK_VAL_DTYPE;
  case SK_T_DEVICE: return v->tag == SK_VAL_DEVICE;
  default: return 1;
  }
}

int sk_check_returns(SkOperator *op, const SkStack *s, int base, const char *where) {
  int got = s->n - base;
  if (got != op->schema.nrets)
    return sk_error("%s for '%s' returned %d value%s, the schema says %d", where, op->qualname, got,
                    got == 1 ? "" : "s", op->schema.nrets);
  for (int i = 0; i < got; i++)
    if (!value_matches(&op->schema.rets[i], &s->v[base + i], op->schema.nrets))
      return sk_error("%s for '%s' returned %s as result %d, the schema says %s", where, op->qualname,
                      sk_value_tag_name(s->v[base + i].tag), i + 1,
                      op->schema.rets[i].is_list ? "a list" : op->schema.rets[i].type == SK_T_TENSOR ? "Tensor" : "a value");
  return 0;
}
/* }==== */

int sk_op_table(const SkOperator *op, SkKernelInfo *info, int cap) {
  int n = 0;
  for (int k = 0; k < SK_KEY_NUM_RUNTIME && n < cap; k++) {
    const SkKernel *e = &op->table[k];
    if ((!e->boxed && !e->unboxed) || k == SK_KEY_PLAN) continue; /* the recorder's fallback is sk.plan's own */
    info[n].key = k;
    info[n].source = e->source;
    info[n].origin = e->origin;
    info[n].boxed = e->unboxed == NULL;
    n++;
  }
  return n;
}

/* The registry lives as long as the module: free it when the module is unloaded. */
__attribute__((destructor)) static void registry_free(void) {
  for (int i = 0; i < nops; i++) {
    SkOperator *op = ops[i];
    for (int k = 0; k < SK_KEY_COUNT; k++)
      while (op->regs[k]) { SkRegistration *r = op->regs[k]; op->regs[k] = r->next; registration_free(r); }
    if (op->owns_schema) free_schema_copy(&op->schema);
    ext_release(op);
    free(op);
  }
  for (int k = 0; k < SK_KEY_NUM_RUNTIME; k++)
    while (fallbacks[k]) { SkRegistration *r = fallbacks[k]; fallbacks[k] = r->next; registration_free(r); }
  free(ops);
  ops = NULL;
  nops = capops = 0;
}
