/*
** sk_cpu_dnnl.c — oneDNN's set-up, and float32 convolutions on it, their primitives
** cached by shape
** A pass builds its primitive with every layout "any" (oneDNN picks its blocked layouts:
** forcing plain ones selects a reference kernel ~1600× slower), reorders the plain
** operands into those layouts and the result back, as PyTorch 1.13 does. The cache keys
** on the pass, the geometry, the operands' sizes and strides and the thread count (oneDNN
** fixes its threads when a primitive is made); it holds CACHE entries, the least recently
** used out first. An entry holds the primitive, its reorders and its scratchpad's layout
** (the scratchpad is allocated per call: "user" mode). One mutex guards the cache and the
** calls through it, so two Lua states never run one entry at once.
*/
#include "sk_cpu_dnnl.h"
#include "sk_cpu_isa.h"
#include "sk_device.h"
#include "sk_error.h"
#include "sk_parallel.h"

#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <string.h>

/* {==== Set-up ==== */
static dnnl_engine_t engine;
static int engine_ok;

static void setup_once(void) {
  SkCpuIsa l = sk_cpu_isa_level();
  if (l != SK_CPU_ISA_AVX512) dnnl_set_max_cpu_isa(l == SK_CPU_ISA_AVX2 ? dnnl_cpu_isa_avx2 : dnnl_cpu_isa_sse41);
  engine_ok = dnnl_engine_create(&engine, dnnl_cpu, 0) == dnnl_success;
}

void sk_cpu_dnnl_setup(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, setup_once);
}
/* }==== */

/* {==== The cache ==== */
#define CACHE 64
#define KEYN 64
enum { IN_A, IN_B, IN_W, IN_BIAS, NARGS }; /* argument slots, whichever way each goes */

typedef struct Arg {
  int used, written, dnnl_arg;
  dnnl_memory_desc_t user, want;
  dnnl_primitive_t reorder; /* user -> want (read) or want -> user (written); NULL: the same layout */
} Arg;

typedef struct Entry {
  int64_t key[KEYN];
  unsigned long stamp;
  dnnl_primitive_t prim;
  dnnl_memory_desc_t scratch;
  Arg arg[NARGS];
} Entry;

static Entry cache[CACHE];
static unsigned long clock_;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void entry_clear(Entry *e) {
  if (e->prim) dnnl_primitive_destroy(e->prim);
  for (int i = 0; i < NARGS; i++)
    if (e->arg[i].reorder) dnnl_primitive_destroy(e->arg[i].reorder);
  memset(e, 0, sizeof *e);
}

static void put_tensor(int64_t *k, int *n, const SkTensor *t) {
  k[(*n)++] = t ? t->ndim : -1;
  for (int i = 0; t && i < t->ndim; i++) { k[(*n)++] = t->sizes[i]; k[(*n)++] = t->strides[i]; }
}

static void make_key(int64_t *k, SkConvPass pass, const SkConvGeom *g, const SkTensor *a, const SkTensor *w,
                     const SkTensor *b, const SkTensor *bias) {
  int n = 0;
  memset(k, 0, KEYN * sizeof *k);
  k[n++] = pass;
  k[n++] = g->nsp;
  k[n++] = g->groups;
  k[n++] = sk_get_num_threads();
  for (int i = 0; i < g->nsp; i++) { k[n++] = g->stride[i]; k[n++] = g->pad[i]; k[n++] = g->dil[i]; }
  put_tensor(k, &n, a); /* at most 4 + 9 + 4·11 = 57 < KEYN */
  put_tensor(k, &n, w);
  put_tensor(k, &n, b);
  k[n++] = bias != NULL;
}
/* }==== */

/* {==== Building an entry ==== */
#define TRY(call) do { if ((call) != dnnl_success) goto fail; } while (0)

/* t's layout; the weight of a grouped convolution as [groups, Cb/groups, Ca/groups, k...]. */
static int user_md(dnnl_memory_desc_t *md, const SkTensor *t, int64_t groups) {
  dnnl_dims_t dims, strides;
  int nd = t->ndim;
  if (groups > 1) {
    dims[0] = groups, strides[0] = t->sizes[0] / groups * t->strides[0];
    dims[1] = t->sizes[0] / groups, strides[1] = t->strides[0];
    for (int i = 1; i < nd; i++) dims[i + 1] = t->sizes[i], strides[i + 1] = t->strides[i];
    nd++;
  } else
    for (int i = 0; i < nd; i++) dims[i] = t->sizes[i], strides[i] = t->strides[i];
  return dnnl_memory_desc_init_by_strides(md, nd, dims, dnnl_f32, strides) == dnnl_success ? 0 : -1;
}

static int any_md(dnnl_memory_desc_t *md, const dnnl_memory_desc_t *like) {
  return dnnl_memory_desc_init_by_tag(md, like->ndims, like->dims, dnnl_f32, dnnl_format_tag_any) == dnnl_success ? 0 : -1;
}

/* Fills arg's chosen layout from pd and makes its reorder when the layouts differ. */
static int arg_bind(Arg *arg, const_dnnl_primitive_desc_t pd, dnnl_query_t q, int index) {
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, q, index);
  if (!md) return -1;
  arg->want = *md;
  if (dnnl_memory_desc_equal(&arg->user, &arg->want)) return 0;
  dnnl_primitive_desc_t rpd = NULL;
  const dnnl_memory_desc_t *from = arg->written ? &arg->want : &arg->user, *to = arg->written ? &arg->user : &arg->want;
  if (dnnl_reorder_primitive_desc_create(&rpd, from, engine, to, engine, NULL) != dnnl_success) return -1;
  dnnl_status_t st = dnnl_primitive_create(&arg->reorder, rpd);
  dnnl_primitive_desc_destroy(rpd);
  return st == dnnl_success ? 0 : -1;
}

/* Returns 0 built, 1 not (the caller falls back). */
static int build(Entry *e, SkConvPass pass, const SkConvGeom *g, const SkTensor *a, const SkTensor *w,
                 const SkTensor *b, const SkTensor *bias) {
  dnnl_dims_t strides, dil, pl, pr;
  for (int i = 0; i < g->nsp; i++) {
    int64_t ext = g->dil[i] * (w->sizes[2 + i] - 1) + 1;
    strides[i] = g->stride[i];
    dil[i] = g->dil[i] - 1; /* oneDNN counts the gaps */
    pl[i] = g->pad[i];
    /* the right padding that makes b's size exact (floor division, output_padding) */
    pr[i] = (b->sizes[2 + i] - 1) * g->stride[i] + ext - a->sizes[2 + i] - g->pad[i];
  }
  Arg *A = &e->arg[IN_A], *B = &e->arg[IN_B], *W = &e->arg[IN_W], *C = &e->arg[IN_BIAS];
  A->used = B->used = W->used = 1;
  if (user_md(&A->user, a, 1) || user_md(&B->user, b, 1) || user_md(&W->user, w, g->groups)) return 1;
  if (bias) {
    C->used = 1;
    if (user_md(&C->user, bias, 1)) return 1;
  }
  dnnl_memory_desc_t am, bm, wm, cm;
  if (any_md(&am, &A->user) || any_md(&bm, &B->user) || any_md(&wm, &W->user) || (bias && any_md(&cm, &C->user)))
    return 1;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t fwd = NULL, pd = NULL;
  dnnl_status_t st = dnnl_success;
  int rc = -1;
  TRY(dnnl_primitive_attr_create(&attr));
  TRY(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
  dnnl_convolution_desc_t fd, bd;
  TRY(dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &am, &wm,
                                                 bias ? &cm : NULL, &bm, strides, dil, pl, pr));
  st = dnnl_primitive_desc_create(&fwd, &fd, pass == SK_CONV_FWD ? attr : NULL, engine, NULL);
  if (st != dnnl_success) goto fail;
  if (pass == SK_CONV_FWD) {
    pd = fwd, fwd = NULL;
    A->dnnl_arg = DNNL_ARG_SRC, W->dnnl_arg = DNNL_ARG_WEIGHTS, C->dnnl_arg = DNNL_ARG_BIAS, B->dnnl_arg = DNNL_ARG_DST;
    B->written = 1;
    if (arg_bind(A, pd, dnnl_query_src_md, 0) || arg_bind(W, pd, dnnl_query_weights_md, 0) ||
        (bias && arg_bind(C, pd, dnnl_query_weights_md, 1)) || arg_bind(B, pd, dnnl_query_dst_md, 0))
      goto fail;
  } else if (pass == SK_CONV_DATA) {
    TRY(dnnl_dilated_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct, &am, &wm, &bm, strides, dil, pl, pr));
    st = dnnl_primitive_desc_create(&pd, &bd, attr, engine, fwd);
    if (st != dnnl_success) goto fail;
    A->dnnl_arg = DNNL_ARG_DIFF_SRC, W->dnnl_arg = DNNL_ARG_WEIGHTS, B->dnnl_arg = DNNL_ARG_DIFF_DST;
    A->written = 1;
    if (arg_bind(B, pd, dnnl_query_diff_dst_md, 0) || arg_bind(W, pd, dnnl_query_weights_md, 0) ||
        arg_bind(A, pd, dnnl_query_diff_src_md, 0))
      goto fail;
  } else {
    TRY(dnnl_dilated_convolution_backward_weights_desc_init(&bd, dnnl_convolution_direct, &am, &wm, NULL, &bm, strides,
                                                            dil, pl, pr));
    st = dnnl_primitive_desc_create(&pd, &bd, attr, engine, fwd);
    if (st != dnnl_success) goto fail;
    A->dnnl_arg = DNNL_ARG_SRC, B->dnnl_arg = DNNL_ARG_DIFF_DST, W->dnnl_arg = DNNL_ARG_DIFF_WEIGHTS;
    W->written = 1;
    if (arg_bind(A, pd, dnnl_query_src_md, 0) || arg_bind(B, pd, dnnl_query_diff_dst_md, 0) ||
        arg_bind(W, pd, dnnl_query_diff_weights_md, 0))
      goto fail;
  }
  const dnnl_memory_desc_t *sm = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  if (sm) e->scratch = *sm;
  TRY(dnnl_primitive_create(&e->prim, pd));
  rc = 0;
fail:
  (void)st;
  if (rc) rc = 1; /* no oneDNN kernel for this shape (or no memory to build one): the loops run */
  if (fwd) dnnl_primitive_desc_destroy(fwd);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return rc;
}

static Entry *lookup(int *rc, SkConvPass pass, const SkConvGeom *g, const SkTensor *a, const SkTensor *w,
                     const SkTensor *b, const SkTensor *bias) {
  int64_t key[KEYN];
  make_key(key, pass, g, a, w, b, bias);
  Entry *e = NULL, *old = &cache[0];
  for (int i = 0; i < CACHE && !e; i++) {
    if (cache[i].prim && memcmp(cache[i].key, key, sizeof key) == 0) e = &cache[i];
    else if (cache[i].stamp < old->stamp) old = &cache[i];
  }
  if (!e) {
    e = old;
    entry_clear(e);
    if ((*rc = build(e, pass, g, a, w, b, bias))) { entry_clear(e); return NULL; }
    memcpy(e->key, key, sizeof key);
  }
  e->stamp = ++clock_;
  *rc = 0;
  return e;
}
/* }==== */

/* {==== Running ==== */
/* A memory in a layout oneDNN chose, on a buffer from sk's CPU cache: oneDNN's own would be
** malloc'ed, and past glibc's mmap threshold faulted in afresh on every call (a batch-32
** depthwise convolution spent three quarters of its time so). */
typedef struct Buffer { void *ptr; size_t n; } Buffer;
#define NO_BUFFER (-2) /* sk_cpu_alloc failed and recorded its error (out of memory) */
static int buffer_memory(dnnl_memory_t *m, const dnnl_memory_desc_t *md, Buffer *b) {
  b->n = dnnl_memory_desc_get_size(md);
  if (!(b->ptr = sk_cpu_alloc(b->n ? b->n : 1))) return NO_BUFFER;
  return dnnl_memory_create(m, md, engine, b->ptr) == dnnl_success ? 0 : -1;
}

/* run's rc stays -1 (oneDNN failed) until the end, except where a buffer could not be had */
#define BUFFER(call) do { int brc_ = (call); if (brc_) { rc = brc_; goto fail; } } while (0)
static int run(Entry *e, void *const data[NARGS]) {
  dnnl_stream_t s = NULL;
  dnnl_memory_t user[NARGS] = {NULL}, want[NARGS] = {NULL}, scratch = NULL;
  Buffer bufs[NARGS + 1] = {{NULL, 0}};
  dnnl_exec_arg_t args[NARGS + 1];
  int nargs = 0, rc = -1;
  TRY(dnnl_stream_create(&s, engine, dnnl_stream_default_flags));
  for (int i = 0; i < NARGS; i++) {
    Arg *x = &e->arg[i];
    if (!x->used) continue;
    TRY(dnnl_memory_create(&user[i], &x->user, engine, data[i]));
    if (x->reorder) BUFFER(buffer_memory(&want[i], &x->want, &bufs[i]));
    if (x->reorder && !x->written) {
      dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, user[i]}, {DNNL_ARG_TO, want[i]}};
      TRY(dnnl_primitive_execute(x->reorder, s, 2, r));
    }
    args[nargs].arg = x->dnnl_arg;
    args[nargs++].memory = x->reorder ? want[i] : user[i];
  }
  if (dnnl_memory_desc_get_size(&e->scratch)) {
    BUFFER(buffer_memory(&scratch, &e->scratch, &bufs[NARGS]));
    args[nargs].arg = DNNL_ARG_SCRATCHPAD;
    args[nargs++].memory = scratch;
  }
  TRY(dnnl_primitive_execute(e->prim, s, nargs, args));
  for (int i = 0; i < NARGS; i++)
    if (e->arg[i].used && e->arg[i].written && e->arg[i].reorder) {
      dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, want[i]}, {DNNL_ARG_TO, user[i]}};
      TRY(dnnl_primitive_execute(e->arg[i].reorder, s, 2, r));
    }
  TRY(dnnl_stream_wait(s));
  rc = 0;
fail:
  for (int i = 0; i < NARGS; i++) {
    if (user[i]) dnnl_memory_destroy(user[i]);
    if (want[i]) dnnl_memory_destroy(want[i]);
  }
  if (scratch) dnnl_memory_destroy(scratch);
  for (int i = 0; i <= NARGS; i++)
    if (bufs[i].ptr) sk_cpu_free(bufs[i].ptr, bufs[i].n ? bufs[i].n : 1);
  if (s) dnnl_stream_destroy(s);
  return rc;
}

int sk_cpu_dnnl_conv(SkConvPass pass, const SkConvGeom *g, const SkTensor *a, const SkTensor *w, const SkTensor *b,
                     const SkTensor *bias) {
  sk_cpu_dnnl_setup();
  if (!engine_ok) return 1;
  pthread_mutex_lock(&lock);
  int rc;
  Entry *e = lookup(&rc, pass, g, a, w, b, bias);
  if (e) {
    void *data[NARGS] = {sk_tensor_data(a), sk_tensor_data(b), sk_tensor_data(w), bias ? sk_tensor_data(bias) : NULL};
    rc = run(e, data);
  }
  pthread_mutex_unlock(&lock);
  if (rc == NO_BUFFER) return -1; /* the allocator's "out of memory allocating N bytes" stands */
  if (rc < 0) return sk_error("oneDNN failed to run a %s pass",
                              pass == SK_CONV_FWD ? "forward" : pass == SK_CONV_DATA ? "data-gradient" : "weight-gradient");
  return rc;
}
/* }==== */
