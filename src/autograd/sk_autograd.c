/*
** sk_autograd.c — tensor metadata, nodes, history, saved values, the built-in nodes
** (AccumulateGrad, AsStridedBackward for views, CopySlices for in-place writes
** through views, NotImplemented) and the Autograd fallback for ops without a formula.
*/
#include "sk_autograd.h"
#include "sk_error.h"
#include "sk_ops.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

static uint64_t next_seq;

/* {==== Metadata ==== */
static void hooks_free(SkHook *h) {
  while (h) {
    SkHook *next = h->next;
    if (h->ctx_free) h->ctx_free(h->ctx);
    free(h);
    h = next;
  }
}

static int retain_run(void *ctx, SkTensor *grad, SkTensor **out);

static void meta_free(SkAutogradMeta *m) {
  if (m->grad_acc) m->grad_acc->leaf = NULL; /* the accumulator knows its leaf weakly */
  if (m->retains_grad && m->grad_fn) /* the retain hook knows this tensor weakly */
    for (SkHook *h = m->grad_fn->hooks; h; h = h->next)
      if (h->fn == retain_run && h->ctx == m) h->ctx = NULL;
  sk_tensor_release(m->grad);
  sk_node_release(m->grad_fn);
  hooks_free(m->hooks);
  free(m);
}

SkAutogradMeta *sk_autograd_meta(SkTensor *t) {
  if (!t->autograd && !(t->autograd = calloc(1, sizeof *t->autograd))) return sk_error("out of memory"), NULL;
  return t->autograd;
}

static void update_flag(SkTensor *t) {
  const SkAutogradMeta *m = t->autograd;
  if (m && (m->requires_grad || m->grad_fn)) t->flags |= SK_TENSOR_REQUIRES_GRAD;
  else t->flags &= ~(unsigned)SK_TENSOR_REQUIRES_GRAD;
}

int sk_set_requires_grad(SkTensor *t, int flag) {
  if (flag && !sk_dtype_is_floating(t->dtype)) return sk_error("only Tensors of floating point dtype can require gradients");
  if (!sk_is_leaf(t)) {
    if (flag) return 0;
    return sk_error("you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  }
  if (!flag && !t->autograd) return 0;
  SkAutogradMeta *m = sk_autograd_meta(t);
  if (!m) return -1;
  m->requires_grad = flag != 0;
  update_flag(t);
  return 0;
}

void sk_set_grad(SkTensor *t, SkTensor *grad) {
  if (!grad && !t->autograd) return;
  SkAutogradMeta *m = sk_autograd_meta(t);
  if (m) sk_tensor_assign(&m->grad, grad);
}

/* A plain alias of t's data: no base, no autograd (what detach and saved outputs hold). */
static SkTensor *plain_alias(const SkTensor *t) {
  SkTensor *a = sk_tensor_alias(t, t->ndim, t->sizes, t->strides, t->offset);
  if (!a) return NULL;
  sk_tensor_release(a->base);
  a->base = NULL;
  a->flags = t->flags & SK_TENSOR_WRAPPED_NUMBER;
  return a;
}

SkTensor *sk_detach(const SkTensor *t) { return plain_alias(t); }

int sk_detach_(SkTensor *t) {
  if (t->base && sk_requires_grad(t->base))
    return sk_error("Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                    "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                    "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                    "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
  SkAutogradMeta *m = t->autograd;
  if (!m) return 0;
  sk_node_release(m->grad_fn);
  m->grad_fn = NULL;
  m->output_nr = 0;
  m->requires_grad = 0;
  update_flag(t);
  return 0;
}
/* }==== */

/* {==== Nodes ====
** One allocation: the node (its type's struct), then its edges, then its input metadata.
** Freeing is iterative: a node whose last reference goes is queued, and the outermost
** release frees the queue, so a chain of a million nodes needs no deep C stack. */
SkNode *sk_node_new(size_t size, const SkNodeVT *vt, int nedges, int nin) {
  size_t head = (size + 15) & ~(size_t)15, eb = ((size_t)nedges * sizeof(SkEdge) + 15) & ~(size_t)15;
  SkNode *n = calloc(1, head + eb + (size_t)nin * sizeof(SkInputMeta));
  if (!n) return sk_error("out of memory"), NULL;
  n->refcount = 1;
  n->vt = vt;
  n->seq = __atomic_fetch_add(&next_seq, 1, __ATOMIC_RELAXED);
  n->nedges = nedges;
  n->nin = nin;
  n->edges = (SkEdge *)((char *)n + head);
  n->in_meta = (SkInputMeta *)((char *)n + head + eb);
  return n;
}

static void node_free(SkNode *n) {
  if (!n->released && n->vt->release) n->vt->release(n);
  if (n->vt->destroy) n->vt->destroy(n);
  for (int i = 0; i < n->nedges; i++) sk_node_release(n->edges[i].fn);
  hooks_free(n->hooks);
  if (n->leaf && n->leaf->autograd && n->leaf->autograd->grad_acc == n) n->leaf->autograd->grad_acc = NULL;
  free(n);
}

static _Thread_local struct { SkNode **v; int n, cap, draining; } dying;

void sk_node_release(SkNode *n) {
  if (!n || --n->refcount) return;
  if (dying.n == dying.cap) {
    int cap = dying.cap ? 2 * dying.cap : 64;
    SkNode **v = realloc(dying.v, (size_t)cap * sizeof *v);
    if (!v) { node_free(n); return; } /* out of memory: recursion it is */
    dying.v = v;
    dying.cap = cap;
  }
  dying.v[dying.n++] = n;
  if (dying.draining) return;
  dying.draining = 1;
  while (dying.n) node_free(dying.v[--dying.n]);
  dying.draining = 0;
}

static void record_meta(SkInputMeta *im, const SkTensor *t) {
  im->defined = 1;
  im->ndim = t->ndim;
  im->dtype = t->dtype;
  im->device = t->device;
  memcpy(im->sizes, t->sizes, (size_t)t->ndim * sizeof t->sizes[0]);
}

int sk_node_set_edge(SkNode *n, int i, const SkTensor *t) {
  SkEdge e = {NULL, 0};
  if (t && sk_requires_grad(t) && sk_gradient_edge((SkTensor *)t, &e)) return -1;
  n->edges[i].fn = sk_node_retain(e.fn);
  n->edges[i].input_nr = e.input_nr;
  return 0;
}

void sk_node_set_output_meta(SkNode *n, int nr, const SkTensor *t) { record_meta(&n->in_meta[nr], t); }

int sk_set_history(SkTensor *t, int nr, SkNode *n) {
  SkAutogradMeta *m = sk_autograd_meta(t);
  if (!m) return -1;
  record_meta(&n->in_meta[nr], t);
  sk_node_retain(n);
  sk_node_release(m->grad_fn);
  m->grad_fn = n;
  m->output_nr = nr;
  if (t->base) m->view_version = t->storage->version;
  update_flag(t);
  return 0;
}

int sk_node_add_hook(SkNode *n, int slot, SkHook *h) {
  h->slot = slot;
  h->next = NULL;
  SkHook **p = &n->hooks;
  while (*p) p = &(*p)->next;
  *p = h;
  return 0;
}

/* ctx is the tensor's meta (NULL once the tensor went) */
static int retain_run(void *ctx, SkTensor *grad, SkTensor **out) {
  (void)out;
  SkAutogradMeta *m = ctx;
  if (!m) return 0;
  if (!m->grad) return sk_clone(&m->grad, grad, 0);
  SkTensor *sum = NULL;
  if (sk_add(&sum, m->grad, grad, sk_scalar_int(1))) return -1;
  sk_tensor_release(m->grad);
  m->grad = sum;
  return 0;
}

int sk_retain_grad(SkTensor *t) {
  SkAutogradMeta *m = t->autograd;
  if (sk_is_leaf(t) || m->retains_grad) return 0;
  SkHook *h = calloc(1, sizeof *h);
  if (!h) return sk_error("out of memory");
  h->fn = retain_run;
  h->ctx = m;
  m->retains_grad = 1;
  return sk_node_add_hook(m->grad_fn, m->output_nr, h);
}
/* }==== */

/* {==== AccumulateGrad ==== */
static int accumulate_apply(SkNode *n, SkTensor *const *grads, SkTensor **out) {
  (void)out;
  SkTensor *g = grads[0], *leaf = n->leaf;
  SkAutogradMeta *m = leaf ? leaf->autograd : NULL;
  if (!g || !m) return 0; /* a leaf nobody holds any more: its .grad could not be read */
  if (!m->grad) {
    /* steal the buffer's gradient when nothing else holds it and it is laid out as a fresh tensor */
    if (sk_grad_enabled() || (g->refcount == 1 && !g->base && g->storage->refcount == 1 && sk_tensor_is_contiguous(g) &&
                              !sk_requires_grad(g))) {
      m->grad = sk_tensor_retain(g);
      return 0;
    }
    return sk_clone(&m->grad, g, 0);
  }
  if (sk_grad_enabled() || sk_requires_grad(m->grad)) { /* create_graph: grad = grad + new, recorded */
    SkTensor *sum = NULL;
    if (sk_add(&sum, m->grad, g, sk_scalar_int(1))) return -1;
    sk_tensor_release(m->grad);
    m->grad = sum;
    return 0;
  }
  return sk_add_(m->grad, g, sk_scalar_int(1));
}
const SkNodeVT sk_accumulate_vt = {"AccumulateGrad", accumulate_apply, NULL, NULL};
/* }==== */

/* {==== Views: AsStridedBackward and CopySlices ====
** Both keep the geometry of a view relative to its base's and write a view's
** gradient into a buffer laid out as the base. */
typedef struct Geometry { int ndim; int64_t offset; int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS]; } Geometry;

static void geometry_of(Geometry *g, const SkTensor *t, int64_t base_offset) {
  g->ndim = t->ndim;
  g->offset = t->offset - base_offset;
  memcpy(g->sizes, t->sizes, sizeof g->sizes);
  memcpy(g->strides, t->strides, sizeof g->strides);
}

/* A zeroed buffer laid out as base, and the view's region of it. */
static int base_buffer(const Geometry *base, const Geometry *view, const SkTensor *like, SkTensor **buf, SkTensor **slice) {
  for (int d = 0; d < base->ndim; d++)
    if (base->strides[d] < 0) return sk_error("autograd: a view of a base with negative strides is not supported");
  *buf = sk_tensor_empty_strided(base->ndim, base->sizes, base->strides, like->dtype, like->device);
  if (!*buf) return -1;
  if (sk_zero_(*buf)) goto fail;
  *slice = sk_tensor_alias(*buf, view->ndim, view->sizes, view->strides, view->offset);
  if (!*slice) goto fail;
  if (sk_tensor_has_internal_overlap(*slice)) {
    sk_tensor_release(*slice);
    sk_error("autograd: an in-place write through a view with overlapping elements (an expand) is not supported");
    goto fail;
  }
  return 0;
fail:
  sk_tensor_release(*buf);
  *buf = NULL;
  return -1;
}

typedef struct AsStridedNode { SkNode base; Geometry view, root; } AsStridedNode;

static int as_strided_apply(SkNode *n, SkTensor *const *grads, SkTensor **out) {
  AsStridedNode *a = (AsStridedNode *)n;
  SkTensor *g = grads[0], *buf = NULL, *slice = NULL;
  if (!g) return 0;
  if (base_buffer(&a->root, &a->view, g, &buf, &slice)) return -1;
  int rc = sk_copy_(slice, g, 0);
  sk_tensor_release(slice);
  if (rc) { sk_tensor_release(buf); return -1; }
  out[0] = buf;
  return 0;
}
static const SkNodeVT as_strided_vt = {"AsStridedBackward0", as_strided_apply, NULL, NULL};

/* The view t's grad_fn made from its base's history: the gradient of t lands in its region. */
static int regenerate_view(SkTensor *t) {
  SkTensor *b = t->base;
  AsStridedNode *a = (AsStridedNode *)sk_node_new(sizeof *a, &as_strided_vt, 1, 1);
  if (!a) return -1;
  geometry_of(&a->view, t, b->offset);
  geometry_of(&a->root, b, b->offset);
  int rc = sk_node_set_edge(&a->base, 0, b);
  if (!rc) rc = sk_set_history(t, 0, &a->base);
  if (!rc) t->autograd->view_version = t->storage->version;
  sk_node_release(&a->base);
  return rc;
}

/* fn wrote in place into a view: its output out_nr is the view, its edge self_edge the view's
** base's history before (a generated node's: 0 and 0; a Lua function's: any). */
typedef struct CopySlicesNode {
  SkNode base;
  Geometry view, root;
  SkNode *fn;
  int out_nr, self_edge;
  SkInputMeta view_meta;
} CopySlicesNode;

static int copy_slices_apply(SkNode *n, SkTensor *const *grads, SkTensor **out) {
  CopySlicesNode *c = (CopySlicesNode *)n;
  SkTensor *g = grads[0], *buf = NULL, *slice = NULL;
  if (!g) return 0;
  if (c->fn->released)
    return sk_error("Trying to backward through the graph a second time (or directly access saved tensors after they "
                    "have already been freed). Saved intermediate values of the graph are freed when you call "
                    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                    "graph a second time or if you need to access saved tensors after calling backward.");
  if (base_buffer(&c->root, &c->view, g, &buf, &slice)) return -1;
  /* buf = g; the view's region goes through the in-place op's node, as the gradient of its
  ** output out_nr (its other outputs get none) */
  int nout = c->fn->nedges, se = c->self_edge, rc = sk_copy_(buf, g, 0);
  SkTensor **res = calloc((size_t)nout + 1, sizeof *res), **gin = calloc((size_t)c->fn->nin, sizeof *gin);
  if (!res || !gin) rc = sk_error("out of memory");
  if (!rc) rc = sk_clone(&gin[c->out_nr], slice, 0);
  if (!rc) rc = c->fn->vt->apply(c->fn, gin, res);
  if (!rc && res[se]) {
    SkEdge e = {NULL, 0};
    SkNode probe = {0};
    probe.in_meta = &c->view_meta;
    probe.nin = 1;
    e.fn = &probe;
    rc = sk_validate_grad(c->fn, &e, se, &res[se]);
    if (!rc) rc = sk_copy_(slice, res[se], 0);
  } else if (!rc) rc = sk_zero_(slice);
  if (gin) sk_tensor_release(gin[c->out_nr]);
  free(gin);
  sk_tensor_release(slice);
  if (res) {
    if (!rc) { out[se] = buf; buf = NULL; }
    for (int i = 0; i < nout; i++) {
      if (i != se && !rc) out[i] = res[i];
      else sk_tensor_release(res[i]);
    }
    free(res);
  }
  sk_tensor_release(buf);
  return rc;
}
static void copy_slices_release(SkNode *n) {
  SkNode *fn = ((CopySlicesNode *)n)->fn;
  if (!fn->released && fn->vt->release) fn->vt->release(fn);
  fn->released = 1;
}
static void copy_slices_destroy(SkNode *n) { sk_node_release(((CopySlicesNode *)n)->fn); }
static const SkNodeVT copy_slices_vt = {"CopySlices", copy_slices_apply, copy_slices_release, copy_slices_destroy};

int sk_rebase_history(SkTensor *self, SkNode *n) { return sk_rebase_history_at(self, 0, 0, n); }

int sk_rebase_history_at(SkTensor *self, int out_nr, int self_edge, SkNode *n) {
  SkTensor *b = self->base;
  if (!b) return sk_set_history(self, out_nr, n);
  record_meta(&n->in_meta[out_nr], self);
  /* the base's history now goes through the op: its gradient's view region is the op's */
  CopySlicesNode *c = (CopySlicesNode *)sk_node_new(sizeof *c, &copy_slices_vt, n->nedges, 1);
  if (!c) return -1;
  geometry_of(&c->view, self, b->offset);
  geometry_of(&c->root, b, b->offset);
  record_meta(&c->view_meta, self);
  c->fn = sk_node_retain(n);
  c->out_nr = out_nr;
  c->self_edge = self_edge;
  int rc = sk_node_set_edge(&c->base, self_edge, b);
  for (int i = 0; i < n->nedges; i++)
    if (i != self_edge) c->base.edges[i].fn = sk_node_retain(n->edges[i].fn), c->base.edges[i].input_nr = n->edges[i].input_nr;
  if (!rc) rc = sk_set_history(b, 0, &c->base);
  sk_node_release(&c->base);
  if (rc) return -1;
  /* the view's own grad_fn is made again from the base's when it is next used */
  SkAutogradMeta *m = self->autograd;
  if (m) {
    sk_node_release(m->grad_fn);
    m->grad_fn = NULL;
    update_flag(self);
  }
  return 0;
}

int sk_gradient_edge(SkTensor *t, SkEdge *e) {
  SkAutogradMeta *m = t->autograd;
  e->fn = NULL;
  e->input_nr = 0;
  if (t->base && sk_requires_grad(t->base) && !(m && m->requires_grad) &&
      (!m || !m->grad_fn || m->view_version != t->storage->version)) {
    if (regenerate_view(t)) return -1;
    m = t->autograd;
  }
  if (!m) return 0;
  if (m->grad_fn) { e->fn = m->grad_fn; e->input_nr = m->output_nr; return 0; }
  if (!m->requires_grad) return 0;
  if (!m->grad_acc) {
    SkNode *acc = sk_node_new(sizeof(SkNode), &sk_accumulate_vt, 0, 1);
    if (!acc) return -1;
    record_meta(&acc->in_meta[0], t);
    acc->leaf = t;
    acc->refcount = 0; /* the edge that takes it holds the first reference */
    m->grad_acc = acc;
  }
  e->fn = m->grad_acc;
  return 0;
}
/* }==== */

/* {==== Saved values ==== */
static int64_t saved_bytes;
int64_t sk_saved_bytes(void) { return __atomic_load_n(&saved_bytes, __ATOMIC_RELAXED); }

int sk_saved_save(SkSaved *s, const SkTensor *t, int is_output, int output_nr) {
  s->output_nr = -1;
  s->grad_fn = NULL;
  s->charge = 0;
  if (!t) { s->data = NULL; return 0; }
  s->version = t->storage->version;
  s->charge = t->storage->nbytes;
  __atomic_fetch_add(&saved_bytes, (int64_t)s->charge, __ATOMIC_RELAXED);
  if (!(s->data = plain_alias(t))) return -1;
  if (is_output) s->output_nr = output_nr;
  else if (sk_requires_grad(t)) {
    SkEdge e;
    if (sk_gradient_edge((SkTensor *)t, &e)) { sk_saved_reset(s); return -1; }
    s->grad_fn = sk_node_retain(e.fn);
    s->fn_output_nr = e.input_nr;
  }
  return 0;
}

static const char *const backward_twice =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward.";

int sk_saved_unpack(SkSaved *s, SkNode *owner, SkTensor **out) {
  *out = NULL;
  if (owner->released) return sk_error("%s", backward_twice);
  SkTensor *d = s->data;
  if (!d) return 0;
  if (d->storage->version != s->version) {
    char shape[128], which[160] = "";
    const SkNode *fn = s->output_nr >= 0 ? owner : s->grad_fn;
    if (fn && !sk_node_is_accumulator(fn))
      snprintf(which, sizeof which, ", which is output %d of %s,", s->output_nr >= 0 ? s->output_nr : s->fn_output_nr,
               sk_node_name(fn));
    return sk_error("one of the variables needed for gradient computation has been modified by an inplace operation: "
                    "[%s %s]%s is at version %llu; expected version %llu instead. Hint: the operation that failed to "
                    "compute its gradient used this value, which was changed in place after it was saved.",
                    sk_dtype_name(d->dtype), sk_shape_str(d->ndim, d->sizes, shape, sizeof shape), which,
                    (unsigned long long)d->storage->version, (unsigned long long)s->version);
  }
  SkNode *fn = s->output_nr >= 0 ? owner : s->grad_fn;
  if (fn && sk_grad_enabled()) { /* double backward: the value with its history (a leaf's: its accumulator) */
    SkTensor *a = plain_alias(d);
    SkAutogradMeta *m = a ? sk_autograd_meta(a) : NULL;
    if (!m) { sk_tensor_release(a); return -1; }
    m->grad_fn = sk_node_retain(fn);
    m->output_nr = s->output_nr >= 0 ? s->output_nr : s->fn_output_nr;
    update_flag(a);
    *out = a;
    return 0;
  }
  *out = sk_tensor_retain(d);
  return 0;
}

void sk_saved_reset(SkSaved *s) {
  __atomic_fetch_sub(&saved_bytes, (int64_t)s->charge, __ATOMIC_RELAXED);
  s->charge = 0;
  sk_tensor_release(s->data);
  s->data = NULL;
  sk_node_release(s->grad_fn);
  s->grad_fn = NULL;
}
/* }==== */

/* {==== What generated kernels and nodes share ==== */
int sk_fresh_result(SkTensor **result, const SkTensor *input) {
  SkTensor *r = *result;
  if (r != input) return 0;
  SkTensor *a = sk_tensor_alias(r, r->ndim, r->sizes, r->strides, r->offset);
  if (!a) return -1;
  sk_tensor_release(r);
  *result = a;
  return 0;
}

int sk_intlist_copy(int64_t **dst, int *n, SkIntList l) {
  *dst = NULL;
  *n = l.n;
  if (!l.data) return 0;
  if (!(*dst = malloc(((size_t)l.n + 1) * sizeof **dst))) return sk_error("out of memory");
  if (l.n) memcpy(*dst, l.data, (size_t)l.n * sizeof **dst);
  return 0;
}

int sk_list_sizes(int64_t **dst, int *n, SkTensorList l) {
  int total = 0;
  for (int i = 0; i < l.n; i++) total += 1 + (l.data[i] ? l.data[i]->ndim : 0);
  if (!(*dst = malloc(((size_t)total + 1) * sizeof **dst))) return sk_error("out of memory");
  *n = total;
  int64_t *p = *dst;
  for (int i = 0; i < l.n; i++) {
    const SkTensor *t = l.data[i];
    *p++ = t ? t->ndim : 0;
    for (int d = 0; t && d < t->ndim; d++) *p++ = t->sizes[d];
  }
  return 0;
}

void sk_tensorlist_free(SkTensorList *l) {
  for (int i = 0; i < l->n; i++) sk_tensor_release((SkTensor *)l->data[i]);
  free((void *)l->data);
  l->data = NULL;
  l->n = 0;
}

int sk_grad_or_zeros(SkTensor **out, SkTensor *g, const SkInputMeta *m) {
  if (g || !m->defined) { *out = sk_tensor_retain(g); return 0; } /* None stays None */
  return sk_zeros(out, (SkIntList){m->sizes, m->ndim}, (int)m->dtype, -1, m->device, -1);
}
/* }==== */

/* {==== Errors of the generated kernels ==== */
int sk_check_inplace(const SkTensor *self) {
  const SkAutogradMeta *m = self->autograd;
  if (m && m->multi_view && m->grad_fn)
    return sk_error("Output %d of %s is a view and is being modified inplace. This view is the output of a function that "
                    "returns multiple views. Such functions do not allow the output views to be modified inplace. You "
                    "should replace the inplace operation by an out-of-place one.", m->output_nr, sk_node_name(m->grad_fn));
  if (m && m->requires_grad && !m->grad_fn)
    return sk_error("a leaf Variable that requires grad is being used in an in-place operation.");
  const SkTensor *b = self->base;
  if (b && b->autograd && b->autograd->requires_grad && !b->autograd->grad_fn)
    return sk_error("a view of a leaf Variable that requires grad is being used in an in-place operation.");
  return 0;
}

int sk_error_out_requires_grad(const char *op) {
  return sk_error("%s(): functions with out=... arguments don't support automatic differentiation, but one of the "
                  "arguments requires grad.", op);
}
/* }==== */

/* {==== NotImplemented and the Autograd fallback ====
** An op with no formula (no derivatives.yaml entry, not a Math composite) runs below
** Autograd; its floating outputs get a node whose backward raises, as PyTorch's. */
typedef struct NotImplementedNode { SkNode base; const SkOperator *op; } NotImplementedNode;

static int not_implemented_apply(SkNode *n, SkTensor *const *grads, SkTensor **out) {
  (void)grads; (void)out;
  return sk_error("derivative for %s is not implemented", ((NotImplementedNode *)n)->op->qualname);
}
static const SkNodeVT not_implemented_vt = {"NotImplemented", not_implemented_apply, NULL, NULL};

static int value_requires_grad(const SkValue *v) {
  if (v->tag == SK_VAL_TENSOR) return sk_requires_grad(v->u.t);
  if (v->tag == SK_VAL_TENSORLIST)
    for (int j = 0; j < v->n; j++) if (sk_requires_grad(v->u.tensors[j])) return 1;
  return 0;
}

/* Ops whose outputs carry no gradient though they are floating: they take only the shape,
** dtype or device of their input (PyTorch's DONT_REQUIRE_DERIVATIVE), or draw random numbers. */
static const char *const no_derivative[] = {
  "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "bernoulli", "normal_", "uniform_",
  "random_", "bernoulli_", "new_empty_strided", NULL};
static int has_no_derivative(const SkSchema *sc) {
  for (int i = 0; no_derivative[i]; i++) if (strcmp(sc->name, no_derivative[i]) == 0) return 1;
  return 0;
}

static int fallback(SkOperator *op, SkStack *s, void *ctx) {
  (void)ctx;
  const SkSchema *sc = &op->schema;
  if (has_no_derivative(sc) && sc->kind == SK_KIND_FUNCTIONAL) {
    int was = sk_set_grad_enabled(0);
    int rc = sk_call_boxed(op, s);
    sk_set_grad_enabled(was);
    return rc;
  }
  int base = s->n - sc->nargs, nin = 0;
  SkTensor *ins[64];
  for (int i = 0; i < sc->nargs; i++) {
    const SkValue *v = &s->v[base + i];
    if (sc->kind == SK_KIND_OUT && value_requires_grad(v)) {
      char name[160];
      snprintf(name, sizeof name, "%s", sc->name);
      return sk_error_out_requires_grad(name);
    }
    if (v->tag == SK_VAL_TENSOR && sk_requires_grad(v->u.t) && nin < 64) ins[nin++] = v->u.t;
    else if (v->tag == SK_VAL_TENSORLIST)
      for (int j = 0; j < v->n && nin < 64; j++) if (sk_requires_grad(v->u.tensors[j])) ins[nin++] = v->u.tensors[j];
    if (v->tag == SK_VAL_TENSOR && sc->args[i].is_write && sk_check_inplace(v->u.t)) return -1;
  }
  for (int i = 0; i < nin; i++) sk_tensor_retain(ins[i]); /* the call may drop the stack's references */
  SkTensor *written[16];
  int nw = 0;
  for (int i = 0; i < sc->nargs && nw < 16; i++)
    if (sc->args[i].is_write && s->v[base + i].tag == SK_VAL_TENSOR) written[nw++] = sk_tensor_retain(s->v[base + i].u.t);
  int was = sk_set_grad_enabled(0);
  int rc = sk_call_boxed(op, s);
  sk_set_grad_enabled(was);
  for (int r = 0; !rc && nin && r < s->n - base; r++) {
    SkValue *v = &s->v[base + r];
    if (v->tag != SK_VAL_TENSOR || !sk_dtype_is_floating(v->u.t->dtype)) continue;
    int w = 0;
    while (w < nw && written[w] != v->u.t) w++;
    if (w == nw) /* a functional result that is an input: its own tensor object, as a view */
      for (int i = 0; i < nin && !rc; i++)
        if (ins[i] == v->u.t) {
          SkTensor *a = sk_tensor_alias(v->u.t, v->u.t->ndim, v->u.t->sizes, v->u.t->strides, v->u.t->offset);
          if (!a) { rc = -1; break; }
          sk_tensor_release(v->u.t);
          sk_value_set_tensor(v, a);
        }
    if (rc) break;
    NotImplementedNode *ni = (NotImplementedNode *)sk_node_new(sizeof *ni, &not_implemented_vt, nin, 1);
    if (!ni) { rc = -1; break; }
    ni->op = op;
    for (int i = 0; i < nin && !rc; i++) rc = sk_node_set_edge(&ni->base, i, ins[i]);
    if (!rc) rc = w < nw ? sk_rebase_history(v->u.t, &ni->base) : sk_set_history(v->u.t, 0, &ni->base);
    sk_node_release(&ni->base);
    sk_value_put_tensor(v, v->u.t, v->n); /* its key set now has Autograd */
  }
  for (int i = 0; i < nin; i++) sk_tensor_release(ins[i]);
  for (int i = 0; i < nw; i++) sk_tensor_release(written[i]);
  return rc;
}

int sk_autograd_init(void) {
  static int done;
  if (done) return 0;
  sk_autograd_meta_free = meta_free;
  if (sk_fallback_register(SK_KEY_AUTOGRAD, fallback, NULL, "autograd", NULL) < 0) return -1;
  if (sk_autograd_gen_init()) return -1;
  done = 1;
  return 0;
}
/* }==== */
