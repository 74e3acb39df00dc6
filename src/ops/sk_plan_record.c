/*
** sk_plan_record.c — sk.plan's recorder: the Plan key's fallback turns calls into steps
** See sk_plan.h. While recording, every tensor an op sees is meta: inputs are stand-ins, and a
** real tensor fn captures (a weight, a wrapped number) becomes a constant whose meta shadow
** takes its place on the stack, so no data derived from the inputs ever exists and no kernel
** but Meta runs. Buffers are known by their meta storage (the recorder holds each one, so an
** address is never reused). Per call: a composite on the plan's backend runs with the key still
** on (its inner calls record); any other op runs its Meta kernel with the key off and leaves a
** step, or nothing for a view.
*/
#include "sk_plan.h"
#include "sk_error.h"
#include "sk_arena.h"
#include "sk_iter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct Slot { const SkStorage *key; int buffer; };

struct SkPlanRecorder {
  SkPlan *p;
  const SkOperator *composite; /* the outermost composite being decomposed, or NULL */
  SkKeySet include;          /* the thread's include set before recording */
  struct Slot *hash;         /* storage -> buffer, open addressing */
  int hcap, hn;
};

static _Thread_local SkPlanRecorder *rec;
_Thread_local unsigned sk_plan_meta_reads;

/* {==== The pool ==== */
/* Chunks a freed plan leaves for the next one (SPARE_BYTES at most) and the hash of the last
** recorder: re-planning at each run takes memory still in the cache, not malloc's large-block
** path. Plain statics, as sk_tensor.c's free lists: only the thread running Lua plans and frees. */
enum { SPARE_BYTES = 1 << 20, SPARE_SLOTS = 4096 };
static SkPlanChunk *spare;
static size_t spare_bytes;
static struct Slot *spare_hash;
static int spare_hcap;

__attribute__((destructor)) static void spares_release(void) {
  while (spare) {
    SkPlanChunk *c = spare;
    spare = c->next;
    free(c);
  }
  free(spare_hash);
}

/* A chunk of at least cap bytes: a spare one if one is that large. */
static SkPlanChunk *chunk_get(size_t cap) {
  for (SkPlanChunk **q = &spare; *q; q = &(*q)->next)
    if ((*q)->cap >= cap) {
      SkPlanChunk *d = *q;
      *q = d->next;
      spare_bytes -= d->cap;
      return d;
    }
  SkPlanChunk *d = malloc(sizeof *d + cap);
  if (d) d->cap = cap;
  return d;
}

void sk_plan_pool_free(SkPlan *p) {
  for (SkPlanChunk *c = p->pool, *next; c; c = next) {
    next = c->next;
    if (spare_bytes + c->cap <= SPARE_BYTES) {
      c->next = spare, spare = c;
      spare_bytes += c->cap;
    } else free(c);
  }
  p->pool = NULL;
}

/* n bytes from p's pool, aligned for any type (NULL with the error set). Chunks double from
** 4 KiB to 64 KiB; a block past a quarter of that gets a chunk of its own, behind the current. */
static void *pool_alloc(SkPlan *p, size_t n) {
  enum { FIRST = 4096 - sizeof(SkPlanChunk), MOST = 65536 - sizeof(SkPlanChunk) };
  n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
  SkPlanChunk *c = p->pool;
  if (!c || c->cap - c->used < n) {
    int own = n > MOST / 4;
    size_t cap = own ? n : !c ? FIRST : c->cap < MOST ? 2 * c->cap + sizeof *c : MOST;
    SkPlanChunk *d = chunk_get(cap > n ? cap : n); /* a block up to MOST / 4 may pass a small chunk */
    if (!d) return sk_error("sk.plan: out of memory"), NULL;
    d->used = 0;
    if (own && c) d->next = c->next, c->next = d;
    else d->next = c, p->pool = d;
    c = d;
  }
  void *m = (char *)c->data + c->used;
  c->used += n;
  return m;
}

/* n zeroed bytes from p's pool. */
static void *pool_zero(SkPlan *p, size_t n) {
  void *m = pool_alloc(p, n);
  return m ? memset(m, 0, n) : NULL;
}

/* Room for need elements in the array *a of *cap: a full one moves to a block twice as large in
** the pool (the old block stays there unused: at most as much again). Each caller clears the
** element it adds. */
static int grow(SkPlan *p, void **a, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int c = *cap ? *cap * 2 : 64;
  while (c < need) c *= 2;
  void *n = pool_alloc(p, (size_t)c * elem);
  if (!n) return -1;
  if (*cap) memcpy(n, *a, (size_t)*cap * elem);
  *a = n;
  *cap = c;
  return 0;
}
/* }==== */

/* {==== Buffers and values ==== */
/* Fibonacci hashing: the product's high bits, which every bit of the address stirs (its low
** bits would follow the address's low bits, and storages lie at regular strides). */
static size_t hash_ptr(const void *p, int cap) {
  return (size_t)(((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctz((unsigned)cap)));
}

static int find_storage(const SkPlanRecorder *r, const SkStorage *s) {
  if (!r->hcap) return -1;
  for (size_t i = hash_ptr(s, r->hcap);; i = (i + 1) & (size_t)(r->hcap - 1)) {
    if (!r->hash[i].key) return -1;
    if (r->hash[i].key == s) return r->hash[i].buffer;
  }
}

/* Kept at most half full; 256 slots at first (a small plan never grows it). */
static int hash_put(SkPlanRecorder *r, const SkStorage *s, int v) {
  if (2 * (r->hn + 1) > r->hcap) {
    int cap = r->hcap ? r->hcap * 2 : 256;
    struct Slot *h;
    if (!r->hcap && spare_hash) h = spare_hash, cap = spare_hcap, spare_hash = NULL;
    else h = calloc((size_t)cap, sizeof *h);
    if (!h) return sk_error("sk.plan: out of memory");
    for (int i = 0; i < r->hcap; i++)
      if (r->hash[i].key) {
        size_t j = hash_ptr(r->hash[i].key, cap);
        while (h[j].key) j = (j + 1) & (size_t)(cap - 1);
        h[j] = r->hash[i];
      }
    free(r->hash);
    r->hash = h, r->hcap = cap;
  }
  size_t i = hash_ptr(s, r->hcap);
  while (r->hash[i].key) i = (i + 1) & (size_t)(r->hcap - 1);
  r->hash[i] = (struct Slot){s, v};
  r->hn++;
  return 0;
}

/* A new buffer standing for the meta storage of t (held through t). */
static int new_storage(SkPlanRecorder *r, int kind, SkTensor *t) {
  SkPlan *p = r->p;
  if (grow(p, (void **)&p->st, &p->cst, p->nst + 1, sizeof *p->st) || hash_put(r, t->storage, p->nst)) return -1;
  SkPlanStorage *b = &p->st[p->nst];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->nbytes = t->storage->nbytes;
  b->first = b->last = -1;
  b->creator = b->values = -1;
  b->anchor = sk_tensor_retain(t);
  return p->nst++;
}

/* The value for meta tensor t on buffer b: one per geometry, so a value's index is its identity. */
static int value_on(SkPlan *p, int b, const SkTensor *t) {
  for (int v = p->st[b].values; v >= 0; v = p->val[v].next)
    if (sk_plan_value_is(&p->val[v], t, 0)) return v;
  int64_t *shape = pool_alloc(p, 2 * (size_t)t->ndim * sizeof(int64_t));
  if (!shape || grow(p, (void **)&p->val, &p->cval, p->nval + 1, sizeof *p->val)) return -1;
  SkPlanValue *x = &p->val[p->nval];
  x->t = NULL;
  x->storage = b;
  x->dtype = t->dtype;
  x->ndim = t->ndim;
  x->flags = t->flags & SK_TENSOR_WRAPPED_NUMBER;
  x->sizes = shape, x->strides = shape + t->ndim;
  memcpy(x->sizes, t->sizes, (size_t)t->ndim * sizeof(int64_t));
  memcpy(x->strides, t->strides, (size_t)t->ndim * sizeof(int64_t));
  x->byte_offset = t->offset * (int64_t)sk_dtype_size(t->dtype);
  if (p->st[b].creator < 0) p->st[b].creator = p->nval;
  x->next = p->st[b].values;
  p->st[b].values = p->nval;
  return p->nval++;
}

/* A constant: a buffer for real tensor t's storage, anchored by t itself until a capture
** gives it a meta shadow. */
static int new_const(SkPlanRecorder *r, SkTensor *t) {
  int b = new_storage(r, SK_PS_CONST, t);
  if (b < 0) return -1;
  r->p->st[b].real = sk_tensor_retain(t);
  r->p->st[b].written = 1;
  return b;
}

/* The value of a tensor on the stack: a meta one, or a wrapped number (map_tensors leaves those
** real). A meta storage no op made (a composite's own empty tensor) becomes an intermediate. */
static int value_of(SkPlanRecorder *r, SkTensor *t) {
  int b = find_storage(r, t->storage);
  if (b < 0 && (b = t->device.type == SK_DEVICE_META ? new_storage(r, SK_PS_ARENA, t) : new_const(r, t)) < 0) return -1;
  return value_on(r->p, b, t);
}

/* A real tensor on the stack becomes a constant: *slot is replaced by a meta tensor of the
** same geometry over the constant's shadow, made at its first capture: t's own meta twin when
** t spans its storage from its start (most weights), else a meta uint8 tensor the size of the
** storage, which views are made over. */
static int capture(SkPlanRecorder *r, SkTensor **slot, int owned) {
  SkTensor *t = *slot;
  /* a CPU 0-dim tensor (a wrapped number) goes with tensors of any device, as in eager */
  if (!sk_device_eq(t->device, r->p->device) && !(t->ndim == 0 && t->device.type == SK_DEVICE_CPU)) {
    char a[32], b[32];
    sk_device_format(t->device, a, sizeof a);
    sk_device_format(r->p->device, b, sizeof b);
    return sk_error("sk.plan: a tensor on %s is used in a plan for %s (pass it as an input, or make it on the plan's "
                    "device)", a, b);
  }
  int b = find_storage(r, t->storage);
  if (b < 0 && (b = new_const(r, t)) < 0) return -1;
  SkPlanStorage *c = &r->p->st[b];
  SkTensor *m = NULL;
  if (c->anchor->device.type != SK_DEVICE_META) {
    int64_t n = (int64_t)t->storage->nbytes;
    int whole = sk_plan_spans(t->ndim, t->sizes, t->strides, t->dtype, t->offset, t->storage->nbytes);
    SkTensor *shadow = whole ? sk_tensor_empty_strided(t->ndim, t->sizes, t->strides, t->dtype, SK_META)
                             : sk_tensor_empty(1, &n, SK_DTYPE_UINT8, SK_META);
    if (!shadow || hash_put(r, shadow->storage, b)) { /* its meta views find the constant too */
      sk_tensor_release(shadow);
      return -1;
    }
    sk_tensor_release(c->anchor);
    c->anchor = shadow;
    if (whole) m = sk_tensor_retain(shadow);
  }
  if (!m && !(m = sk_tensor_alias_as(c->anchor, t->dtype, t->ndim, t->sizes, t->strides, t->offset))) return -1;
  m->flags |= t->flags & SK_TENSOR_WRAPPED_NUMBER;
  if (owned) sk_tensor_release(t);
  *slot = m;
  return 0;
}
/* }==== */

/* {==== Steps ==== */
/* Copies argument v (its tensors as values) into a; what it copies is in the plan's pool. */
static int arg_record(SkPlanRecorder *r, SkPlanArg *a, SkValue *v) {
  a->v = *v;
  a->value = -1;
  a->values = NULL;
  switch (v->tag) {
  case SK_VAL_TENSOR:
    a->v.u.t = NULL;
    return (a->value = value_of(r, v->u.t)) < 0 ? -1 : 0;
  case SK_VAL_TENSORLIST: /* u.tensors: where replay puts the list's bound tensors */
    if (!(a->v.u.tensors = pool_alloc(r->p, ((size_t)v->n + 1) * sizeof *a->v.u.tensors)) ||
        !(a->values = pool_alloc(r->p, ((size_t)v->n + 1) * sizeof *a->values)))
      return -1;
    for (int j = 0; j < v->n; j++)
      if ((a->values[j] = v->u.tensors[j] ? value_of(r, v->u.tensors[j]) : -1) < 0 && v->u.tensors[j]) return -1;
    return 0;
  case SK_VAL_STRING: {
    size_t n = strlen(v->u.str) + 1;
    char *c = pool_alloc(r->p, n);
    if (!c) return -1;
    a->v.u.str = memcpy(c, v->u.str, n);
    return 0;
  }
  case SK_VAL_INTLIST: case SK_VAL_BOOLLIST: case SK_VAL_DOUBLELIST: {
    void *c = pool_alloc(r->p, (size_t)v->n * 8);
    if (!c) return -1;
    memcpy(c, v->tag == SK_VAL_DOUBLELIST ? (void *)v->u.doubles : (void *)v->u.ints, (size_t)v->n * 8);
    if (v->tag == SK_VAL_DOUBLELIST) a->v.u.doubles = c;
    else a->v.u.ints = c;
    return 0;
  }
  default: return 0;
  }
}

static SkPlanStep *new_step(SkPlan *p, int kind, SkOperator *op, SkOperator *called) {
  if (grow(p, (void **)&p->step, &p->cstep, p->nstep + 1, sizeof *p->step)) return NULL;
  SkPlanStep *st = &p->step[p->nstep++];
  memset(st, 0, sizeof *st);
  st->kind = kind, st->op = op, st->called = called;
  return st;
}

/* The out variant of functional op: its family's out op (or the op named ns::name.out)
** taking the functional's arguments, then one out per tensor result. */
static SkOperator *find_out_variant(const SkOperator *op) {
  SkOperator *o = op->out_sibling ? sk_op_find(op->out_sibling) : NULL;
  if (!o) {
    char q[160];
    snprintf(q, sizeof q, "%s::%s.out", op->schema.ns, op->schema.name);
    o = sk_op_find(q);
  }
  const SkSchema *f = &op->schema, *s = o ? &o->schema : NULL;
  if (!s || s->kind != SK_KIND_OUT || s->nargs != f->nargs + f->nrets) return NULL;
  for (int i = 0; i < f->nargs; i++)
    if (strcmp(s->args[i].name, f->args[i].name) || s->args[i].type != f->args[i].type ||
        s->args[i].is_list != f->args[i].is_list)
      return NULL;
  for (int i = 0; i < f->nrets; i++)
    if (!s->args[f->nargs + i].is_out || f->rets[i].type != SK_T_TENSOR || f->rets[i].is_list) return NULL;
  return o;
}

/* What the recorder needs of an op, worked out at its first call (op->ext[info_slot]): the out
** op is found again when the one found first is gone (its library closed). */
typedef struct OpInfo {
  SkOperator *out;
  int out_index;
  unsigned char view, writer, alloc, scalar_result;
  uint64_t writes, devices; /* bit i: argument i is written / is a Device (op->tensor_args: holds tensors) */
} OpInfo;
static int info_slot = -1;

static OpInfo *op_info(SkOperator *op) {
  OpInfo *in = op->ext[info_slot];
  if (in && (!in->out || sk_op_at(in->out_index) == in->out)) return in;
  if (!in && !(in = calloc(1, sizeof *in))) return sk_error("sk.plan: out of memory"), NULL;
  const SkSchema *sc = &op->schema;
  if (sc->nargs > 64) { /* the dispatcher's tensor mask, and these, have a bit per argument */
    free(in);
    op->ext[info_slot] = NULL;
    return sk_error("sk.plan: cannot record '%s': it has more than 64 arguments", op->qualname), NULL;
  }
  in->writes = in->devices = 0;
  for (int i = 0; i < sc->nargs; i++) {
    in->writes |= (uint64_t)sc->args[i].is_write << i;
    in->devices |= (uint64_t)(sc->args[i].type == SK_T_DEVICE && !sc->args[i].is_list) << i;
  }
  in->writer = in->writes != 0;
  in->view = sc->nrets > 0 && !in->writer;
  for (int i = 0; i < sc->nrets; i++) if (!sc->rets[i].is_alias || sc->rets[i].is_write) in->view = 0;
  /* empty and empty_strided make memory and nothing else: a buffer, no step */
  in->alloc = !strcmp(op->qualname, "aten::empty.memory_format") || !strcmp(op->qualname, "aten::empty_strided");
  in->scalar_result = 0; /* a bool, int or float result of tensors (allclose, equal) is read off their data */
  for (int i = 0; i < sc->nrets; i++) in->scalar_result |= sc->rets[i].type != SK_T_TENSOR && op->tensor_args != 0;
  in->out = in->writer || in->view ? NULL : find_out_variant(op);
  in->out_index = in->out ? in->out->index : -1;
  op->ext[info_slot] = in;
  return in;
}
/* }==== */

/* {==== The fallback ==== */
/* Every tensor on the stack becomes meta (constants captured), with grad refused; but a number
** the binding wrapped for this call stays real next to another tensor, as the Meta kernels take
** it in eager (what a capture would add, a meta twin and its buffer, costs more than the op's
** recording): its step records it as a constant. */
static int map_tensors(SkPlanRecorder *r, SkOperator *op, SkValue *a) {
  int grad = sk_grad_enabled(), others = 0;
  for (uint64_t m = op->tensor_args; m; m &= m - 1) {
    const SkValue *v = &a[__builtin_ctzll(m)];
    others += v->tag == SK_VAL_TENSORLIST || (v->tag == SK_VAL_TENSOR && v->u.t && !(v->u.t->flags & SK_TENSOR_WRAPPED_NUMBER));
  }
  for (uint64_t m = op->tensor_args; m; m &= m - 1) {
    int i = __builtin_ctzll(m);
    SkValue *v = &a[i];
    int n = v->tag == SK_VAL_TENSOR ? 1 : v->tag == SK_VAL_TENSORLIST ? v->n : 0;
    if (v->tag == SK_VAL_TENSORLIST && sk_value_own(v)) return -1; /* its slots may be replaced below */
    for (int j = 0; j < n; j++) {
      SkTensor **slot = v->tag == SK_VAL_TENSOR ? &v->u.t : &v->u.tensors[j];
      if (!*slot) continue;
      if (grad && sk_tensor_grad_flag(*slot))
        return sk_error("sk.plan: argument '%s' of '%s' requires grad; a plan records no autograd graph (make the "
                        "plan under sk.no_grad(), or detach the tensor)", op->schema.args[i].name, op->qualname);
      if ((*slot)->device.type == SK_DEVICE_META || (others && ((*slot)->flags & SK_TENSOR_WRAPPED_NUMBER))) continue;
      if (capture(r, slot, v->tag == SK_VAL_TENSORLIST || v->n != SK_VALUE_BORROWED)) return -1;
      if (v->tag == SK_VAL_TENSOR) sk_value_put_tensor(v, v->u.t, 0);
    }
  }
  return 0;
}

/* Device arguments of the plan's device (or None) become meta for the record-time call. A
** composite (other than to's family) that copies a tensor to a device with data does so to read
** it on the host, which a stand-in cannot give. */
static int meta_devices(SkPlanRecorder *r, SkOperator *op, uint64_t devices, SkValue *a) {
  for (uint64_t m = devices; m; m &= m - 1) {
    SkValue *v = &a[__builtin_ctzll(m)];
    const char *c = r->composite ? r->composite->schema.name : NULL;
    if (c && op->tensor_args && v->tag == SK_VAL_DEVICE && v->u.device.type != SK_DEVICE_META && strcmp(c, "to") &&
        strcmp(c, "_to_copy") && strcmp(c, "cpu") && strcmp(c, "cuda"))
      return sk_error("sk.plan: cannot record '%s': it reads the values of its arguments, which a plan does not have "
                      "while it records", r->composite->qualname);
    /* a factory given no device makes its tensor on the CPU, as in eager */
    SkDevice dev = v->tag == SK_VAL_DEVICE ? v->u.device : SK_CPU;
    if ((v->tag == SK_VAL_DEVICE || (v->tag == SK_VAL_NONE && !op->tensor_args)) && dev.type != SK_DEVICE_META &&
        !sk_device_eq(dev, r->p->device)) {
      char d[32], pd[32];
      sk_device_format(dev, d, sizeof d);
      sk_device_format(r->p->device, pd, sizeof pd);
      return sk_error("sk.plan: '%s' makes a tensor on %s inside a plan for %s (pass it as an input, or make it on the "
                      "plan's device)", op->qualname, d, pd);
    }
    if (v->tag == SK_VAL_NONE || v->tag == SK_VAL_DEVICE) {
      v->tag = SK_VAL_DEVICE;
      v->u.device = SK_META;
    }
  }
  return 0;
}

static void mark_written(SkPlan *p, int value) { p->st[p->val[value].storage].written = 1; }

/* The temporaries a step's kernel will make (sk_iter_temps' note, during its Meta call): each an
** arena buffer of its own, their values consecutive. */
typedef struct { SkPlanRecorder *r; int first, n; } Temps;

static int note_temp(void *ctx, int ndim, const int64_t *sizes, SkDType dtype) {
  Temps *tp = ctx;
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= sizes[d]; /* a meta output's sizes: no overflow */
  if (tp->r->p->device.type == SK_DEVICE_CPU && n * (int64_t)sk_dtype_size(dtype) <= SK_INLINE_BYTES)
    return 0; /* held inside its tensor: no allocation to plan (its take finds no match and makes it) */
  SkTensor *m = sk_tensor_empty(ndim, sizes, dtype, SK_META);
  int b = m ? new_storage(tp->r, SK_PS_ARENA, m) : -1, v = b < 0 ? -1 : value_on(tp->r->p, b, m);
  sk_tensor_release(m); /* the buffer holds its own reference */
  if (v < 0) return -1;
  tp->r->p->st[b].written = 1;
  if (!tp->n++) tp->first = v;
  return 0;
}

/* The call of a leaf op: its Meta kernel with the key off, then its step. */
static int record_leaf(SkPlanRecorder *r, SkOperator *op, const OpInfo *info, SkStack *s, int base) {
  SkPlan *p = r->p;
  const SkSchema *sc = &op->schema;
  int view = info->view, writer = info->writer;
  SkPlanArg *args = NULL;
  int nargs = sc->nargs, rc = 0;
  if (!view) {
    size_t n = (size_t)(nargs + sc->nrets + 1) * sizeof *args;
    if (!(args = pool_alloc(p, n))) return -1;
    memset(args, 0, n);
    for (int i = 0; i < nargs && !rc; i++) rc = arg_record(r, &args[i], &s->v[base + i]);
    /* a composite passes its meta stand-ins' device on: at replay that is the plan's */
    for (uint64_t m = info->devices; m; m &= m - 1) {
      SkValue *v = &args[__builtin_ctzll(m)].v;
      if (v->tag == SK_VAL_DEVICE && v->u.device.type == SK_DEVICE_META) v->u.device = p->device;
    }
  }
  /* what a step reads, some step (or the caller) made */
  for (uint64_t m = view ? 0 : op->tensor_args & ~info->writes; m && !rc; m &= m - 1) {
    int i = __builtin_ctzll(m), n = args[i].v.tag == SK_VAL_TENSOR ? 1 : args[i].v.tag == SK_VAL_TENSORLIST ? args[i].v.n : 0;
    for (int j = 0; j < n && !rc; j++) {
      int v = args[i].v.tag == SK_VAL_TENSOR ? args[i].value : args[i].values[j];
      if (v >= 0 && !p->st[p->val[v].storage].written)
        rc = sk_error("sk.plan: argument '%s' of '%s' is a tensor no op of the plan made (a meta tensor from outside "
                      "fn?); a plan reads only its inputs, captured tensors and what its ops make",
                      sc->args[i].name, op->qualname);
    }
  }
  if (!rc && info->devices) rc = meta_devices(r, op, info->devices, s->v + base);
  Temps temps = {r, 0, 0};
  if (!rc) {
    SkIterTemps hook = {note_temp, NULL, &temps};
    const SkIterTemps *outer = sk_iter_temps;
    if (!view && sk_device_host_addressable(p->device)) sk_iter_temps = &hook;
    sk_tls_include &= ~SK_KEYSET(SK_KEY_PLAN);
    rc = sk_call_boxed(op, s);
    sk_tls_include |= SK_KEYSET(SK_KEY_PLAN);
    sk_iter_temps = outer;
    if (rc) sk_error_context("sk.plan: cannot record '%s'", op->qualname);
  }
  int nres = s->n - base;
  if (!rc && writer) /* an out that the call resized would be resized at every replay */
    for (uint64_t m = info->writes; m; m &= m - 1) {
      int i = __builtin_ctzll(m);
      if (args[i].value >= 0) {
        const SkPlanValue *x = &p->val[args[i].value];
        for (int rr = 0; rr < nres; rr++) {
          const SkValue *v = &s->v[base + rr];
          if (v->tag == SK_VAL_TENSOR && v->u.t->storage == p->st[x->storage].anchor->storage &&
              (v->u.t->ndim != x->ndim || memcmp(v->u.t->sizes, x->sizes, (size_t)x->ndim * sizeof(int64_t)))) {
            rc = sk_error("sk.plan: '%s' would resize its argument '%s'; inside a plan an out must have its final "
                          "shape", op->qualname, sc->args[i].name);
            break;
          }
        }
      }
    }
  int alloc_only = !rc && !view && op->tensor_args == 0 && info->alloc;
  if (rc || view || alloc_only) { /* args (if any) stay in the pool until the plan goes */
    for (int i = 0; alloc_only && !rc && i < nres; i++)
      if (s->v[base + i].tag == SK_VAL_TENSOR) {
        int b = new_storage(r, SK_PS_ARENA, s->v[base + i].u.t);
        if (b < 0 || value_on(p, b, s->v[base + i].u.t) < 0) rc = -1;
        else p->st[b].written = 1;
      }
    return rc;
  }
  int fresh = 1; /* every tensor result is a new buffer (a functional op that returns an argument is no out op) */
  for (int i = 0; i < nres; i++)
    if (s->v[base + i].tag == SK_VAL_TENSOR && find_storage(r, s->v[base + i].u.t->storage) >= 0) fresh = 0;
  SkOperator *out = fresh ? info->out : NULL;
  SkPlanStep *st = new_step(p, writer ? SK_STEP_WRITE : out ? SK_STEP_OUT : SK_STEP_UNMANAGED, out ? out : op, op);
  if (!st) return -1;
  st->args = args;
  st->nargs = nargs;
  st->temps = temps.first, st->ntemps = temps.n;
  for (uint64_t m = info->writes; m; m &= m - 1) {
    int v = args[__builtin_ctzll(m)].value;
    if (v >= 0) mark_written(p, v);
  }
  st->nres = nres < 16 ? nres : 16;
  for (int i = 0; i < st->nres; i++) {
    st->res[i] = -1;
    SkValue *v = &s->v[base + i];
    if (v->tag != SK_VAL_TENSOR) continue;
    if (find_storage(r, v->u.t->storage) >= 0) continue; /* an alias of an argument */
    int b = new_storage(r, out ? SK_PS_ARENA : SK_PS_UNMANAGED, v->u.t);
    int x = b < 0 ? -1 : value_on(p, b, v->u.t);
    if (x < 0) return -1;
    p->st[b].written = 1;
    if (!out) {
      p->st[b].kind = SK_PS_UNMANAGED;
      p->st[b].index = p->nstep - 1;
    }
    st->res[i] = x;
    if (out) { /* the result is the out variant's out argument */
      SkPlanArg *o = &st->args[st->nargs++];
      o->v.tag = SK_VAL_TENSOR;
      o->value = x;
    }
  }
  return 0;
}

/* A composite on the plan's backend runs with the key on, so its inner calls are the steps.
** Its results must then lie on buffers those steps made (or on inputs and constants): one it
** filled outside the dispatcher would have no data at replay. Such a composite is undone and
** recorded as a leaf instead (its own kernel, as a step). */
static int composite_ok(SkPlanRecorder *r, const SkStack *s, int base) {
  for (int i = base; i < s->n; i++) {
    const SkValue *v = &s->v[i];
    int n = v->tag == SK_VAL_TENSOR ? 1 : v->tag == SK_VAL_TENSORLIST ? v->n : 0;
    for (int j = 0; j < n; j++) {
      const SkTensor *t = v->tag == SK_VAL_TENSOR ? v->u.t : v->u.tensors[j];
      int b = t ? find_storage(r, t->storage) : 0;
      if (t && (b < 0 || !r->p->st[b].written)) return 0;
    }
  }
  return 1;
}

static int record_composite(SkPlanRecorder *r, SkOperator *op, SkStack *s, int base, const OpInfo *info) {
  SkPlan *p = r->p;
  const SkOperator *outer = r->composite;
  if (!outer) r->composite = op;
  if (info->view) { /* its results alias its arguments (or what its inner steps make): nothing to undo */
    int rc = sk_call_kernel_boxed(op, &op->table[p->key], s);
    r->composite = outer;
    return rc;
  }
  int nstep = p->nstep, nval = p->nval, nst = p->nst, nargs = op->schema.nargs;
  unsigned reads = sk_plan_meta_reads;
  SkStack keep; /* the arguments, for a leaf call if the composite is undone */
  sk_stack_init(&keep);
  int rc = 0;
  for (int i = 0; i < nargs && !rc; i++) rc = sk_push_copy(&keep, &s->v[base + i]);
  if (!rc) rc = sk_call_kernel_boxed(op, &op->table[p->key], s);
  r->composite = outer;
  if (rc || (sk_plan_meta_reads == reads && composite_ok(r, s, base))) {
    sk_stack_free(&keep);
    return rc;
  }
  sk_stack_truncate(s, base);
  p->nstep = nstep, p->nval = nval;
  /* its buffers go (the hash still finds them: never reused), but for constants, which stay
  ** good: a number the composite was given (map_tensors leaves it real) is one, and the leaf
  ** step records it again */
  for (int i = nst; i < p->nst; i++)
    if (p->st[i].kind != SK_PS_CONST) p->st[i].kind = SK_PS_DEAD;
  for (int i = 0; i < p->nst; i++) { /* the undone values are the newest of their buffers' chains */
    if (p->st[i].creator >= nval) p->st[i].creator = -1;
    while (p->st[i].values >= nval) p->st[i].values = p->val[p->st[i].values].next;
  }
  if (sk_stack_reserve(s, nargs)) rc = -1;
  for (int i = 0; i < nargs && !rc; i++) s->v[s->n++] = keep.v[i];
  keep.n = rc ? keep.n : 0;
  sk_stack_free(&keep);
  return rc ? rc : record_leaf(r, op, info, s, base);
}

static int plan_fallback(SkOperator *op, SkStack *s, void *ctx) {
  (void)ctx;
  SkPlanRecorder *r = rec;
  if (!r) return sk_error("sk.plan: '%s' reached the recorder with no plan being recorded", op->qualname);
  int base = s->n - op->schema.nargs;
  if (map_tensors(r, op, s->v + base)) return -1;
  const SkKernel *k = &op->table[r->p->key];
  const OpInfo *info = op_info(op);
  if (!info) return -1;
  if (info->scalar_result)
    return sk_error("sk.plan: cannot record '%s': its result is a value computed from the data, not a tensor (compute it "
                    "outside the plan)", op->qualname);
  int composite = (k->source == SK_SRC_MATH || k->source == SK_SRC_DEFAULT_BACKEND) && !info->writer && op->tensor_args != 0;
  return composite ? record_composite(r, op, s, base, info) : record_leaf(r, op, info, s, base);
}
/* }==== */

/* {==== Begin and end ==== */
/* An aten op that returns views of its one tensor argument and takes no device: a view
** (sk_views.c, split, unbind), or a composite that calls a view or ops that copy (reshape,
** contiguous, flatten). Recording it would add nothing (a view is no step), so its calls skip
** the recorder; what it calls is recorded as ever, the Plan key being in the thread's include
** set. Its result is a meta view, or a view of a captured tensor, which capture() takes where
** an op or fn's return uses it. An op with a second tensor (narrow.Tensor_start, view_as)
** goes through the recorder, which makes that tensor meta before the op can read it. */
static int plain_view(const SkOperator *op) {
  const SkSchema *sc = &op->schema;
  int tensors = 0;
  if (strcmp(sc->ns, "aten") || sc->nrets == 0) return 0;
  for (int i = 0; i < sc->nargs; i++) {
    const SkArg *a = &sc->args[i];
    if (a->is_write || a->type == SK_T_DEVICE) return 0;
    tensors += a->type == SK_T_TENSOR ? (a->is_list ? 2 : 1) : 0;
  }
  for (int i = 0; i < sc->nrets; i++) if (!sc->rets[i].is_alias || sc->rets[i].is_write) return 0;
  return tensors == 1 && sc->args[0].type == SK_T_TENSOR && !sc->args[0].is_list;
}

int sk_plan_init(void) {
  static int done;
  if (done) return 0;
  if ((info_slot = sk_op_ext_slot(free)) < 0) return -1;
  if (sk_fallback_register(SK_KEY_PLAN, plan_fallback, NULL, "sk.plan", NULL) < 0) return -1;
  SkKernel skip = {NULL, sk_fallthrough, NULL, "sk.plan", 0};
  for (int i = 0; i < sk_op_count(); i++)
    if (plain_view(sk_op_at(i)) && sk_op_register(sk_op_at(i), SK_KEY_PLAN, &skip, NULL) < 0) return -1;
  done = 1;
  return 0;
}

SkPlanRecorder *sk_plan_record_begin(SkDevice device) {
  if (rec) return sk_error("sk.plan: called while another plan is being recorded"), NULL;
  if (device.type == SK_DEVICE_META)
    return sk_error("sk.plan: a plan replays on a device with data, not meta"), NULL;
  if (sk_plan_init()) return NULL;
  SkPlanRecorder *r = calloc(1, sizeof *r);
  SkPlan *p = r ? calloc(1, sizeof *p) : NULL;
  if (!p) { free(r); return sk_error("sk.plan: out of memory"), NULL; }
  p->device = device;
  p->key = sk_device_key(device);
  r->p = p;
  r->include = sk_tls_include;
  rec = r;
  sk_tls_include |= SK_KEYSET(SK_KEY_PLAN);
  return r;
}

SkTensor *sk_plan_record_input(SkPlanRecorder *r, const SkTensor *ex) {
  SkPlan *p = r->p;
  if (!sk_device_eq(ex->device, p->device)) {
    char a[32], b[32];
    sk_device_format(ex->device, a, sizeof a);
    sk_device_format(p->device, b, sizeof b);
    return sk_error("sk.plan: input %d is on %s, the plan is for %s", p->nin + 1, a, b), NULL;
  }
  SkTensor *m = sk_tensor_empty_strided(ex->ndim, ex->sizes, ex->strides, ex->dtype, SK_META);
  int *iv = m ? pool_alloc(p, (size_t)(p->nin + 1) * sizeof *iv) : NULL;
  if (!iv) { sk_tensor_release(m); return NULL; }
  if (p->nin) memcpy(iv, p->in_value, (size_t)p->nin * sizeof *iv);
  p->in_value = iv;
  int b = new_storage(r, SK_PS_INPUT, m), v = b < 0 ? -1 : value_on(p, b, m);
  if (v < 0) { sk_tensor_release(m); return NULL; }
  p->st[b].index = p->nin;
  p->st[b].written = 1;
  iv[p->nin++] = v;
  return m;
}

static void recorder_free(SkPlanRecorder *r) {
  sk_tls_include = r->include;
  rec = NULL;
  if (r->hcap && r->hcap <= SPARE_SLOTS && !spare_hash) { /* kept, cleared, for the next recorder */
    spare_hash = memset(r->hash, 0, (size_t)r->hcap * sizeof *r->hash);
    spare_hcap = r->hcap;
  } else free(r->hash);
  free(r);
}

void sk_plan_record_abort(SkPlanRecorder *r) {
  SkPlan *p = r->p;
  recorder_free(r);
  sk_plan_free(p);
}

/* The arena's items: the intermediates some step uses, which[k] the buffer of item k (one
** block with the items, freed with them); NULL with the error set. */
static SkArenaItem *arena_items(const SkPlan *p, int *n, int **which) {
  int na = 0;
  for (int i = 0; i < p->nst; i++) na += p->st[i].kind == SK_PS_ARENA && p->st[i].first >= 0;
  SkArenaItem *items = malloc(((size_t)na + 1) * (sizeof *items + sizeof **which));
  if (!items) return sk_error("sk.plan: out of memory"), NULL;
  *which = (int *)(items + na + 1);
  na = 0;
  for (int i = 0; i < p->nst; i++) {
    const SkPlanStorage *b = &p->st[i];
    if (b->kind != SK_PS_ARENA || b->first < 0) continue;
    items[na] = (SkArenaItem){b->nbytes, 64, b->first, b->last, 0};
    (*which)[na++] = i;
  }
  *n = na;
  return items;
}

size_t sk_plan_eager_peak(const SkPlan *p) {
  int n, *which;
  SkArenaItem *items = arena_items(p, &n, &which);
  size_t peak = items ? sk_arena_peak(n, items) : 0;
  free(items);
  return peak;
}

/* Live intervals, the arena and the headers of arena and constant values. */
static int finish(SkPlan *p) {
  for (int i = 0; i < p->nstep; i++) {
    const SkPlanStep *st = &p->step[i];
    for (int a = 0; a <= st->nargs; a++) {
      const SkPlanArg *x = a < st->nargs ? &st->args[a] : NULL;
      int n = !x ? st->nres : x->v.tag == SK_VAL_TENSOR ? 1 : x->v.tag == SK_VAL_TENSORLIST ? x->v.n : 0;
      for (int j = 0; j < n; j++) {
        int v = !x ? st->res[j] : x->v.tag == SK_VAL_TENSOR ? x->value : x->values[j];
        if (v < 0) continue;
        SkPlanStorage *b = &p->st[p->val[v].storage];
        if (b->first < 0) b->first = i;
        b->last = i;
      }
    }
    for (int k = 0; k < st->ntemps; k++) { /* a temporary lives while its step runs */
      SkPlanStorage *b = &p->st[p->val[st->temps + k].storage];
      b->first = b->last = i;
    }
  }
  int na;
  int *which;
  SkArenaItem *items = arena_items(p, &na, &which);
  if (!items) return -1;
  for (int k = 0; k < na; k++) p->intermediate_bytes += items[k].size;
  size_t total = 0;
  int rc = sk_arena_plan(na, items, &total);
  if (!rc) {
    for (int k = 0; k < na; k++) p->st[which[k]].offset = items[k].offset;
    p->arena_bytes = total;
  }
  free(items);
  if (rc) return -1;
  int64_t n = (int64_t)(total > 4096 ? total : 4096); /* at least a cached 64-byte aligned block */
  if (!(p->arena = sk_tensor_empty(1, &n, SK_DTYPE_UINT8, p->device))) return -1;
  for (int v = 0; v < p->nval; v++) {
    SkPlanValue *x = &p->val[v];
    const SkPlanStorage *b = &p->st[x->storage];
    if (b->kind != SK_PS_ARENA && b->kind != SK_PS_CONST) continue;
    int64_t isz = (int64_t)sk_dtype_size(x->dtype), at = (int64_t)(b->kind == SK_PS_ARENA ? b->offset : 0) + x->byte_offset;
    if (b->kind == SK_PS_CONST && sk_plan_value_is(x, b->real, 0) && (b->real->flags & SK_TENSOR_WRAPPED_NUMBER) == x->flags) {
      x->t = sk_tensor_retain(b->real); /* the captured tensor itself (a wrapped number, a weight) */
      continue;
    }
    x->t = sk_tensor_alias_as(b->kind == SK_PS_ARENA ? p->arena : b->real, x->dtype, x->ndim, x->sizes, x->strides, at / isz);
    if (!x->t) return -1;
    x->t->flags |= x->flags;
  }
  if (!(p->root = pool_zero(p, ((size_t)p->nst + 1) * sizeof *p->root)) ||
      !(p->base = pool_zero(p, ((size_t)p->nst + 1) * sizeof *p->base)) ||
      !(p->cur = pool_zero(p, ((size_t)p->nval + 1) * sizeof *p->cur)))
    return -1;
  return 0;
}

SkPlan *sk_plan_record_end(SkPlanRecorder *r, SkTensor *const *outs, int n) {
  SkPlan *p = r->p;
  int rc = 0;
  sk_tls_include = r->include; /* the outputs' values are looked up with the key off */
  if (!(p->out_value = pool_zero(p, ((size_t)n + 1) * sizeof *p->out_value))) rc = -1;
  int grad = sk_grad_enabled();
  for (int i = 0; i < n && !rc; i++) {
    SkTensor *t = outs[i], *m = NULL;
    if (t->device.type != SK_DEVICE_META) { /* a view of a tensor fn captured (views skip the recorder) */
      if (grad && sk_tensor_grad_flag(t)) {
        rc = sk_error("sk.plan: result %d of fn requires grad; a plan records no autograd graph (make the plan under "
                      "sk.no_grad(), or detach the tensor)", i + 1);
        break;
      }
      m = t;
      if (capture(r, &m, 0)) { rc = -1; break; }
      t = m;
    }
    int b = find_storage(r, t->storage); /* a meta result, or a captured tensor (an out= fn wrote) */
    if (b < 0 || p->st[b].kind == SK_PS_DEAD)
      rc = sk_error("sk.plan: result %d of fn was not made by the ops of the plan (fn returns the tensors its ops make)",
                    i + 1);
    else if ((p->out_value[i] = value_on(p, b, t)) < 0) rc = -1;
    else if (p->st[b].kind == SK_PS_ARENA) p->st[b].kind = SK_PS_OUTPUT;
    else if (!p->st[b].written)
      rc = sk_error("sk.plan: result %d of fn has no data in the plan (it was made outside the ops fn calls)", i + 1);
    p->nout = i + 1;
    sk_tensor_release(m);
  }
  for (int i = 0; i < p->nst; i++) { /* the meta stand-ins go; constants stay */
    sk_tensor_release(p->st[i].anchor);
    p->st[i].anchor = NULL;
  }
  recorder_free(r);
  if (!rc) rc = finish(p);
  if (rc) {
    sk_plan_free(p);
    return NULL;
  }
  return p;
}
/* }==== */
