/*
** sk_engine.c — backward: the graph from the roots, dependency counts, a ready
** queue newest-first (PyTorch's order), gradients summed per input slot.
** Runs on the calling thread, with the kernels' own parallelism: deterministic.
** Grad mode during the run is create_graph (formulas record for double backward).
*/
#include "sk_autograd.h"
#include "sk_error.h"
#include "sk_ops.h"

#include <stdlib.h>
#include <string.h>

typedef struct Task {
  SkNode *node;
  int deps;
  int needed;         /* leads to a requested input (autograd.grad), or any node (backward) */
  SkTensor **buf;     /* node->nin gradients, summed over the edges into each */
} Task;

typedef struct Run {
  Task *tasks;
  SkNode **order;     /* post-order: every node after the nodes its edges reach */
  int n;
  SkNode **heap;
  int nheap;
  SkEdge iedges[64];  /* the requested inputs' edges */
} Run;

#define VISITING ((void *)1)

static Task *task_of(const SkNode *n) { return (Task *)n->engine; }

/* t's gradient edge as it is now (sk_gradient_edge would make an accumulator or a view's node). */
static SkEdge peek_edge(const SkTensor *t) {
  SkEdge e = {NULL, 0};
  const SkAutogradMeta *m = t->autograd;
  if (m && m->grad_fn) e.fn = m->grad_fn, e.input_nr = m->output_nr;
  else if (m && m->requires_grad) e.fn = m->grad_acc;
  return e;
}

static void fmt_shape(char *buf, size_t len, int ndim, const int64_t *sizes) { sk_shape_str(ndim, sizes, buf, len); }

/* {==== Gradient validation: PyTorch's validate_outputs ==== */
static int expandable_to(const SkInputMeta *t, const SkTensor *g) {
  if (g->ndim < t->ndim) return 0;
  int lead = g->ndim - t->ndim;
  for (int i = 0; i < t->ndim; i++)
    if (t->sizes[i] != g->sizes[lead + i] && t->sizes[i] != 1) return 0;
  return 1;
}

/* g summed down to the target's shape (at::sum_to) */
static int sum_to(SkTensor **g, const SkInputMeta *t) {
  int64_t dims[SK_MAX_DIMS];
  int nd = 0, lead = (*g)->ndim - t->ndim;
  for (int i = 0; i < (*g)->ndim; i++)
    if (i < lead || (t->sizes[i - lead] == 1 && (*g)->sizes[i] != 1)) dims[nd++] = i;
  SkTensor *s = NULL, *v = NULL;
  SkIntList dl = {dims, nd}, sl = {t->sizes, t->ndim};
  if (nd && sk_sum_dim_IntList(&s, *g, dl, 1, -1)) return -1;
  int rc = sk_view(&v, s ? s : *g, sl);
  sk_tensor_release(s);
  if (rc) return -1;
  sk_tensor_release(*g);
  *g = v;
  return 0;
}

int sk_validate_grad(const SkNode *fn, const SkEdge *e, int index, SkTensor **g) {
  const SkInputMeta *t = &e->fn->in_meta[e->input_nr];
  if (!((*g)->ndim == t->ndim && memcmp((*g)->sizes, t->sizes, (size_t)t->ndim * sizeof t->sizes[0]) == 0)) {
    if (!expandable_to(t, *g)) {
      char got[128], want[128];
      fmt_shape(got, sizeof got, (*g)->ndim, (*g)->sizes);
      fmt_shape(want, sizeof want, t->ndim, t->sizes);
      return sk_error("Function %s returned an invalid gradient at index %d - got %s but expected shape compatible with %s",
                      sk_node_name(fn), index, got, want);
    }
    if (sum_to(g, t)) return -1;
  }
  if ((*g)->dtype != t->dtype) {
    SkTensor *c = NULL;
    if (sk_to_dtype(&c, *g, t->dtype, 0, 0, -1)) return -1;
    sk_tensor_release(*g);
    *g = c;
  }
  return 0;
}
/* }==== */

/* {==== The ready queue: a max-heap on sequence numbers ==== */
static void heap_push(Run *r, SkNode *n) {
  int i = r->nheap++;
  while (i > 0) {
    int p = (i - 1) / 2;
    if (r->heap[p]->seq >= n->seq) break;
    r->heap[i] = r->heap[p];
    i = p;
  }
  r->heap[i] = n;
}
static SkNode *heap_pop(Run *r) {
  SkNode *top = r->heap[0], *last = r->heap[--r->nheap];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= r->nheap) break;
    if (c + 1 < r->nheap && r->heap[c + 1]->seq > r->heap[c]->seq) c++;
    if (r->heap[c]->seq <= last->seq) break;
    r->heap[i] = r->heap[c];
    i = c;
  }
  if (r->nheap) r->heap[i] = last;
  return top;
}
/* }==== */

/* Post-order walk from the roots (iterative: graphs may be deep). */
static int discover(Run *r, int nroots, SkNode *const *roots) {
  int cap = 64, sp = 0, ocap = 64;
  struct Frame { SkNode *n; int next; } *stack = malloc((size_t)cap * sizeof *stack);
  r->order = malloc((size_t)ocap * sizeof *r->order);
  if (!stack || !r->order) { free(stack); return sk_error("out of memory"); }
  for (int k = 0; k < nroots; k++) {
    if (roots[k]->engine) {
      if (roots[k]->engine != VISITING && !r->n) goto busy;
      continue;
    }
    roots[k]->engine = VISITING;
    stack[sp].n = roots[k], stack[sp].next = 0, sp++;
    while (sp) {
      struct Frame *f = &stack[sp - 1];
      if (f->next < f->n->nedges) {
        SkNode *c = f->n->edges[f->next++].fn;
        if (!c || c->engine == VISITING) continue;
        if (c->engine) goto busy;
        c->engine = VISITING;
        if (sp == cap) {
          struct Frame *ns = realloc(stack, (size_t)(cap *= 2) * sizeof *stack);
          if (!ns) goto oom;
          stack = ns;
        }
        stack[sp].n = c, stack[sp].next = 0, sp++;
        continue;
      }
      if (r->n == ocap) {
        SkNode **no = realloc(r->order, (size_t)(ocap *= 2) * sizeof *no);
        if (!no) goto oom;
        r->order = no;
      }
      r->order[r->n++] = f->n;
      sp--;
    }
  }
  free(stack);
  return 0;
busy:
  free(stack);
  return sk_error("backward: the graph is being differentiated already (a backward call from a hook of another)");
oom:
  free(stack);
  return sk_error("out of memory");
}

static void run_free(Run *r) {
  for (int i = 0; i < r->n; i++) r->order[i]->engine = NULL;
  if (r->tasks)
    for (int i = 0; i < r->n; i++) {
      Task *t = &r->tasks[i];
      if (t->buf) for (int j = 0; j < t->node->nin; j++) sk_tensor_release(t->buf[j]);
      free(t->buf);
    }
  free(r->tasks);
  free(r->order);
  free(r->heap);
}

/* Adds g (taken) into slot i of t's buffer. */
static int buffer_add(Task *t, int i, SkTensor *g) {
  if (!t->buf[i]) { t->buf[i] = g; return 0; }
  SkTensor *sum = NULL;
  int rc = sk_add(&sum, t->buf[i], g, sk_scalar_int(1));
  sk_tensor_release(g);
  if (rc) return -1;
  sk_tensor_release(t->buf[i]);
  t->buf[i] = sum;
  return 0;
}

/* A hook's replacement is the gradient it was given in dtype, device and size (PyTorch's
** check_single_result: no broadcast, no conversion), on a leaf's accumulator as on any node. */
static int check_hook_result(const SkHook *h, const SkTensor *was, const SkTensor *got) {
  const char *name = h->name ? h->name : "hook";
  if (got->dtype != was->dtype)
    return sk_error("hook '%s' has changed the type of value (was %s got %s)", name, sk_dtype_name(was->dtype),
                    sk_dtype_name(got->dtype));
  if (got->device.type != was->device.type || got->device.index != was->device.index) {
    char a[32], b[32];
    sk_device_format(was->device, a, sizeof a);
    sk_device_format(got->device, b, sizeof b);
    return sk_error("hook '%s' has changed the type of value (was %s tensor got %s tensor)", name, a, b);
  }
  if (!sk_tensor_same_shape(got, was)) return sk_error("hook '%s' has changed the size of value", name);
  return 0;
}

static int run_hooks(SkHook *h, int slot_any, SkTensor **grads) {
  for (; h; h = h->next) {
    int s = slot_any ? 0 : h->slot;
    if (!grads[s]) continue;
    SkTensor *rep = NULL;
    if (h->fn(h->ctx, grads[s], &rep)) return -1;
    if (!rep) continue;
    if (check_hook_result(h, grads[s], rep)) { sk_tensor_release(rep); return -1; }
    sk_tensor_release(grads[s]);
    grads[s] = rep;
  }
  return 0;
}

/* An accumulator's leaf is known weakly, and its own hooks may drop its last reference (a
** Lua hook closing its tensor): it is held while they and the accumulator run. */
static int execute_node(Run *r, SkNode *n, const SkBackwardOpts *o);
static int execute(Run *r, SkNode *n, const SkBackwardOpts *o) {
  SkTensor *leaf = sk_node_is_accumulator(n) ? sk_tensor_retain(n->leaf) : NULL;
  int rc = execute_node(r, n, o);
  sk_tensor_release(leaf);
  return rc;
}

static int execute_node(Run *r, SkNode *n, const SkBackwardOpts *o) {
  Task *t = task_of(n);
  SkTensor **grads = t->buf;
  int is_acc = sk_node_is_accumulator(n);
  if (run_hooks(n->hooks, 0, grads)) return -1;
  if (is_acc && n->leaf && n->leaf->autograd && run_hooks(n->leaf->autograd->hooks, 1, grads)) return -1;
  for (int k = 0; k < o->ninputs; k++) { /* a requested gradient ends here */
    SkEdge e = r->iedges[k];
    if (e.fn == n && grads[e.input_nr] && !o->input_grads[k]) o->input_grads[k] = sk_tensor_retain(grads[e.input_nr]);
  }
  if (is_acc && o->ninputs) return 0; /* autograd.grad leaves .grad alone */
  int any = 0;
  for (int i = 0; i < n->nin; i++) any |= grads[i] != NULL;
  SkTensor **out = n->nedges ? calloc((size_t)n->nedges, sizeof *out) : NULL;
  if (n->nedges && !out) return sk_error("out of memory");
  int rc = any ? n->vt->apply(n, grads, out) : 0;
  if (!rc && !o->keep_graph && !is_acc) {
    if (n->vt->release && !n->released) n->vt->release(n);
    n->released = 1;
  }
  for (int i = 0; i < n->nedges; i++) {
    SkEdge *e = &n->edges[i];
    SkTensor *g = out[i];
    out[i] = NULL;
    if (rc || !e->fn) { sk_tensor_release(g); continue; }
    Task *c = task_of(e->fn);
    if (g && !c->needed) { sk_tensor_release(g); g = NULL; }
    if (g && sk_validate_grad(n, e, i, &g)) { sk_tensor_release(g); rc = -1; continue; }
    if (g && buffer_add(c, e->input_nr, g)) { rc = -1; continue; } /* buffer_add took g */
    if (--c->deps == 0 && c->needed) heap_push(r, e->fn);
  }
  free(out);
  return rc;
}

int sk_backward(int nroots, SkTensor *const *roots, SkTensor *const *grads, const SkBackwardOpts *o) {
  Run r = {0};
  SkNode *rootfn[64];
  SkEdge redge[64];
  if (nroots > 64 || o->ninputs > 64) return sk_error("backward: at most 64 outputs and 64 inputs at once");
  for (int i = 0; i < nroots; i++) {
    if (!sk_requires_grad(roots[i]) || sk_gradient_edge(roots[i], &redge[i]) || !redge[i].fn)
      return sk_error("element %d of tensors does not require grad and does not have a grad_fn", i);
    rootfn[i] = redge[i].fn;
    if (grads && grads[i] && !sk_tensor_same_shape(grads[i], roots[i])) {
      char a[128], b[128];
      return sk_error("Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a shape of %s.", i,
                      sk_shape_str(grads[i]->ndim, grads[i]->sizes, a, sizeof a), i,
                      sk_shape_str(roots[i]->ndim, roots[i]->sizes, b, sizeof b));
    }
    if ((!grads || !grads[i]) && roots[i]->numel != 1) return sk_error("grad can be implicitly created only for scalar outputs");
  }
  for (int i = 0; i < nroots; i++) sk_node_retain(rootfn[i]); /* an accumulator's first reference may be this one */
  int rc = discover(&r, nroots, rootfn);
  if (!rc && !(r.tasks = calloc((size_t)r.n, sizeof *r.tasks)) ) rc = sk_error("out of memory");
  if (!rc && !(r.heap = malloc((size_t)r.n * sizeof *r.heap))) rc = sk_error("out of memory");
  for (int i = 0; !rc && i < r.n; i++) {
    Task *t = &r.tasks[i];
    t->node = r.order[i];
    t->needed = o->ninputs == 0;
    if (!(t->buf = calloc((size_t)t->node->nin + 1, sizeof *t->buf))) rc = sk_error("out of memory");
    t->node->engine = t;
  }
  if (rc) {
    for (int i = 0; i < r.n; i++) if (r.order[i]->engine == VISITING) r.order[i]->engine = NULL;
    run_free(&r);
    for (int i = 0; i < nroots; i++) sk_node_release(rootfn[i]);
    return -1;
  }
  for (int i = 0; i < r.n; i++)
    for (int j = 0; j < r.order[i]->nedges; j++)
      if (r.order[i]->edges[j].fn) task_of(r.order[i]->edges[j].fn)->deps++;
  /* autograd.grad: only nodes that lead to a requested input run (post-order: children first) */
  for (int k = 0; k < o->ninputs; k++) {
    o->input_grads[k] = NULL;
    if (!sk_requires_grad(o->inputs[k])) { rc = sk_error("One of the differentiated Tensors does not require grad"); break; }
    SkEdge e = r.iedges[k] = peek_edge(o->inputs[k]);
    if (e.fn && e.fn->engine) task_of(e.fn)->needed = 1;
  }
  for (int i = 0; !rc && o->ninputs && i < r.n; i++) {
    Task *t = &r.tasks[i];
    for (int j = 0; j < t->node->nedges && !t->needed; j++)
      if (t->node->edges[j].fn && task_of(t->node->edges[j].fn)->needed) t->needed = 1;
  }
  int was = sk_set_grad_enabled(0); /* implicit root gradients carry no history */
  for (int i = 0; !rc && i < nroots; i++) {
    SkTensor *g = NULL;
    if (grads && grads[i]) g = sk_tensor_retain(grads[i]);
    else if (sk_ones_like(&g, roots[i], -1, -1, sk_device(-1, 0), -1, -1)) { rc = -1; break; }
    if (buffer_add(task_of(rootfn[i]), redge[i].input_nr, g)) rc = -1;
  }
  sk_set_grad_enabled(o->create_graph);
  for (int i = 0; !rc && i < r.n; i++)
    if (r.tasks[i].deps == 0 && r.tasks[i].needed) heap_push(&r, r.tasks[i].node);
  while (!rc && r.nheap) {
    SkNode *n = heap_pop(&r);
    if (execute(&r, n, o)) rc = -1;
  }
  sk_set_grad_enabled(was);
  for (int k = 0; !rc && k < o->ninputs; k++)
    if (!o->input_grads[k] && !o->allow_unused) {
      SkEdge e = r.iedges[k];
      if (!e.fn || !e.fn->engine)
        rc = sk_error("One of the differentiated Tensors appears to not have been used in the graph. Set "
                      "allow_unused=True if this is the desired behavior.");
    }
  if (rc) for (int k = 0; k < o->ninputs; k++) { sk_tensor_release(o->input_grads[k]); o->input_grads[k] = NULL; }
  run_free(&r);
  for (int i = 0; i < nroots; i++) sk_node_release(rootfn[i]);
  return rc;
}
