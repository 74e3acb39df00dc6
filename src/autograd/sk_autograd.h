/*
** sk_autograd.h — reverse-mode autograd: tensor metadata, graph nodes, saved values, grad mode
** The layer above the op library: its kernels sit at the Autograd key, record a
** node and call the op again below the key (grad mode off for the call).
** Invariants:
** - A tensor has SK_TENSOR_REQUIRES_GRAD exactly when its meta says it requires
**   grad: a leaf with requires_grad, or a tensor with a grad_fn.
** - A node holds strong references along its next edges (towards the leaves) and
**   to what it saved; a tensor holds its grad_fn. An AccumulateGrad node and its leaf
**   know each other weakly (each clears the other's pointer when it goes). Saved
**   values are plain aliases of their data (no meta, no base). So references never
**   form a cycle, not even leaf -> .grad (made with create_graph) -> its graph -> the
**   nodes that saved the leaf, the one PyTorch warns about.
** - Grad mode off and "below Autograd" are one thing: SK_KEY_AUTOGRAD in sk_tls_exclude.
*/
#ifndef SK_AUTOGRAD_H
#define SK_AUTOGRAD_H

#include "sk_dispatch.h"

typedef struct SkNode SkNode;

/* Where a gradient goes: input slot `input_nr` of node fn (NULL: nowhere). */
typedef struct SkEdge { SkNode *fn; int input_nr; } SkEdge;

/* Shape, dtype and device of one forward output, which its gradient must match
** (a broadcast gradient is summed down to it: PyTorch's validate_outputs). */
typedef struct SkInputMeta {
  int defined;                  /* 0: the output was None (an op's undefined result) */
  int ndim;
  SkDType dtype;
  SkDevice device;
  int64_t sizes[SK_MAX_DIMS];
} SkInputMeta;

/* A pre-hook on one input slot of a node (tensor:register_hook, retain_grad):
** it may replace the gradient (*out, a new reference) or leave it (*out NULL); a
** replacement of another size, dtype or device is refused (the engine's check_hook_result). */
typedef struct SkHook {
  int (*fn)(void *ctx, SkTensor *grad, SkTensor **out);
  void *ctx;
  void (*ctx_free)(void *ctx);
  const char *name;             /* for errors (NULL: "hook"); lives as long as ctx */
  int slot;
  struct SkHook *next;
} SkHook;

typedef struct SkNodeVT {
  const char *name;
  /* grads[nin] (NULL: no gradient reached that output) -> out[nedges] (new references or NULL) */
  int (*apply)(SkNode *n, SkTensor *const *grads, SkTensor **out);
  void (*release)(SkNode *n);  /* drops what it saved (after a backward that does not keep the graph) */
  void (*destroy)(SkNode *n);  /* frees what the node owns beyond the base (NULL: nothing) */
} SkNodeVT;

struct SkNode {
  int64_t refcount;
  const SkNodeVT *vt;
  const char *name;             /* NULL: vt->name (a Lua function's node names itself) */
  uint64_t seq;                 /* creation order: the engine runs newer nodes first */
  int nedges, nin;
  int released;                 /* saved values dropped: a second backward is an error */
  SkEdge *edges;                /* nedges next edges (towards the inputs of the forward op) */
  SkInputMeta *in_meta;         /* nin: the forward outputs this node takes gradients of */
  SkHook *hooks;
  SkTensor *leaf;               /* AccumulateGrad: the leaf (weak; NULL once it went) */
  void *engine;                 /* the engine's per-run data while a backward runs */
};

/* {==== Metadata of a tensor ==== */
/* A view (t->base set) whose grad_fn was made at storage version view_version: after an
** in-place write through the base or another view it is made again (AsStridedBackward
** from the base's history), as PyTorch's lazily regenerated view grad_fn. */
typedef struct SkAutogradMeta {
  int requires_grad;            /* a leaf that requires grad */
  int retains_grad;
  SkTensor *grad;
  SkNode *grad_fn;              /* strong */
  int output_nr;
  SkNode *grad_acc;             /* weak: the AccumulateGrad node while it lives */
  uint64_t view_version;
  int multi_view;               /* one of several views an op returned (split, unbind): no in-place */
  SkHook *hooks;                /* a leaf's hooks, run by its accumulator */
} SkAutogradMeta;

SkAutogradMeta *sk_autograd_meta(SkTensor *t);  /* creates it; NULL on out of memory */
/* A view of a tensor that requires grad requires grad (sk_tensor_grad_flag). */
static inline int sk_requires_grad(const SkTensor *t) { return t && sk_tensor_grad_flag(t); }
static inline int sk_is_leaf(const SkTensor *t) { return !t->autograd || !t->autograd->grad_fn; }
/* A leaf's flag; refused for a non-floating dtype and for a non-leaf that is asked to stop. */
int sk_set_requires_grad(SkTensor *t, int flag);
void sk_set_grad(SkTensor *t, SkTensor *grad);  /* t.grad = grad (retained; NULL clears) */
/* The gradient edge of t: (grad_fn, output_nr), a leaf's accumulator, or none.
** A view whose base was modified in place since gets its grad_fn made again first. */
int sk_gradient_edge(SkTensor *t, SkEdge *e);
/* t's graph cut off: a new tensor over the same data (shares the version counter). */
SkTensor *sk_detach(const SkTensor *t);
int sk_detach_(SkTensor *t);                    /* in place: no grad_fn, no requires_grad */
/* }==== */

/* {==== Nodes ==== */
SkNode *sk_node_new(size_t size, const SkNodeVT *vt, int nedges, int nin);
extern const SkNodeVT sk_accumulate_vt;
static inline int sk_node_is_accumulator(const SkNode *n) { return n->vt == &sk_accumulate_vt; }
static inline const char *sk_node_name(const SkNode *n) { return n->name ? n->name : n->vt->name; }
static inline SkNode *sk_node_retain(SkNode *n) { if (n) n->refcount++; return n; }
void sk_node_release(SkNode *n);                /* iterative: a long chain frees without recursion */
/* Next edge i of n from tensor t (none when t does not require grad). */
int sk_node_set_edge(SkNode *n, int i, const SkTensor *t);
/* t becomes output `nr` of n (records its metadata, gives it n as grad_fn). */
int sk_set_history(SkTensor *t, int nr, SkNode *n);
/* Output `nr` of n is t, which gets no history (non-differentiable, or not floating): its
** metadata is recorded all the same, so that backward can be given zeros shaped as it. */
void sk_node_set_output_meta(SkNode *n, int nr, const SkTensor *t);
/* An in-place op's node n replaces self's history; a view's base gets a CopySlices node. */
int sk_rebase_history(SkTensor *self, SkNode *n);
/* The same for n's output out_nr, written in place into its input of edge self_edge (a Lua
** function's node: any output, any argument). */
int sk_rebase_history_at(SkTensor *self, int out_nr, int self_edge, SkNode *n);
int sk_node_add_hook(SkNode *n, int slot, SkHook *h);  /* takes h */
/* A non-leaf's .grad is kept by the next backward passes (a hook on its grad_fn, which knows
** the tensor weakly: the tensor's end clears it). A leaf keeps its .grad anyway. */
int sk_retain_grad(SkTensor *t);
/* }==== */

/* {==== Saved values ==== */
/* What a node saved: a plain alias of its data (no meta, no base), with the history it had
** when saved: the saving node for an output, else the input's grad_fn or its accumulator
** (strong: upstream, so no cycle forms, even when the input is later written in place and
** given a history that leads back to the saving node). */
typedef struct SkSaved {
  SkTensor *data;
  uint64_t version;
  int output_nr;                /* an output of the saving node: its index, else -1 */
  SkNode *grad_fn;              /* an input's grad_fn when saved, or NULL */
  int fn_output_nr;
  size_t charge;                /* its storage's bytes, counted in sk_saved_bytes */
} SkSaved;
int sk_saved_save(SkSaved *s, const SkTensor *t, int is_output, int output_nr);
/* Bytes of the storages graphs hold as saved values now (all threads): the binding's collector
** pacing counts them, as a graph is reachable only through the small box of its output. */
int64_t sk_saved_bytes(void);
/* The value to use in a formula (a new reference in *out; NULL when nothing was saved):
** errors when the graph was freed or the tensor was modified in place since. */
int sk_saved_unpack(SkSaved *s, SkNode *owner, SkTensor **out);
void sk_saved_reset(SkSaved *s);
/* }==== */

/* {==== Grad mode ==== */
/* Sets grad mode and returns the previous one (restore with the same call). */
static inline int sk_set_grad_enabled(int on) {
  int was = sk_grad_enabled();
  if (on) sk_tls_exclude &= ~SK_KEYSET(SK_KEY_AUTOGRAD);
  else sk_tls_exclude |= SK_KEYSET(SK_KEY_AUTOGRAD);
  return was;
}
/* }==== */

/* {==== The engine (sk_engine.c) ==== */
typedef struct SkBackwardOpts {
  int keep_graph, create_graph;
  int ninputs;                  /* autograd.grad: the tensors whose gradients are returned, else 0 */
  SkTensor *const *inputs;
  SkTensor **input_grads;       /* ninputs results (new references or NULL) */
  int allow_unused;
} SkBackwardOpts;
/* Runs backward from roots with their gradients (NULL: ones for a one-element root). */
int sk_backward(int nroots, SkTensor *const *roots, SkTensor *const *grads, const SkBackwardOpts *o);
/* The node's gradient of one output, made to match what the edge expects. */
int sk_validate_grad(const SkNode *fn, const SkEdge *e, int index, SkTensor **g);
/* }==== */

/* {==== What generated kernels and nodes share ==== */
/* A functional result that is one of its inputs becomes a tensor object of its own (a view). */
int sk_fresh_result(SkTensor **result, const SkTensor *input);
/* *dst = a copy of l (NULL for None); freed with free(). */
int sk_intlist_copy(int64_t **dst, int *n, SkIntList l);
/* *dst = (ndim, sizes...) of each tensor of l, one after the other (x.sizes() of a Tensor[] in a formula). */
int sk_list_sizes(int64_t **dst, int *n, SkTensorList l);
/* Releases a returned list's tensors and its array; it becomes empty. */
void sk_tensorlist_free(SkTensorList *l);
/* The gradient g of an output (retained), or zeros shaped as that output when none reached it
** (NULL when that output was None). */
int sk_grad_or_zeros(SkTensor **out, SkTensor *g, const SkInputMeta *m);
/* }==== */

/* {==== Generated and hand-written kernels ==== */
int sk_autograd_init(void);                      /* the Autograd fallback, generated kernels, hooks */
int sk_autograd_gen_init(void);                  /* generated: every derivatives.yaml kernel */
/* Errors for the generated kernels. */
int sk_check_inplace(const SkTensor *self);
int sk_error_out_requires_grad(const char *op);
/* }==== */

#endif
