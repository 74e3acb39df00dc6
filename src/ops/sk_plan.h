/*
** sk_plan.h — sk.plan: a function recorded once on Meta tensors, replayed over one arena
** Recording runs the function with the Plan key in this thread's include set: every dispatched
** call reaches the recorder (sk_plan_record.c), which runs the op's Meta kernel for the shapes
** and keeps a step: a functional op as its out variant into a new buffer, a writer as itself,
** an op without an out variant as an "unmanaged" step that makes its result at replay. Views
** are no steps, only new geometry over a buffer; composites on the plan's backend decompose
** into the ops they call. Replay (sk_plan_run.c) calls each step's kernel for the plan's
** backend directly, its arguments prebuilt, its intermediates at fixed offsets in one arena, and
** so are the temporaries its kernel makes on the host (sk_iter_temps: casts to the common dtype),
** which the Meta call reports while recording.
** Invariant: two arena buffers whose live intervals (first to last step using them)
** intersect never share a byte; a plan keeps every tensor it captured alive.
*/
#ifndef SK_PLAN_H
#define SK_PLAN_H

#include "sk_dispatch.h"

#include <stddef.h>
#include <string.h>

enum { SK_PS_INPUT, SK_PS_CONST, SK_PS_ARENA, SK_PS_OUTPUT, SK_PS_UNMANAGED, SK_PS_DEAD /* undone while recording */ };
enum { SK_STEP_OUT, SK_STEP_WRITE, SK_STEP_UNMANAGED };

/* One buffer: an input's storage, a captured tensor's, an intermediate's. */
typedef struct SkPlanStorage {
  int kind, index;      /* INPUT: the input's position; UNMANAGED: its defining step */
  size_t nbytes;
  int first, last;      /* live interval in steps (-1: used by none) */
  int written;          /* a step makes or writes it (an intermediate nothing writes has no data) */
  size_t offset;        /* ARENA: byte offset in the arena */
  int creator;          /* the value that made it (OUTPUT: the fresh tensor of each replay) */
  int values;           /* recording: its newest value (a chain through SkPlanValue.next), -1 none */
  SkTensor *anchor;     /* recording: a meta tensor on the storage that stands for it (keeps it alive) */
  SkTensor *real;       /* CONST: the captured tensor */
} SkPlanStorage;

/* One view of a buffer that a step reads or writes, or that fn returns. */
typedef struct SkPlanValue {
  int storage;
  SkDType dtype;
  int ndim;
  unsigned flags;       /* SK_TENSOR_WRAPPED_NUMBER of a captured number */
  int64_t *sizes, *strides; /* ndim each, in the plan's pool */
  int64_t byte_offset;  /* from the buffer's start (INPUT: from the input's own offset) */
  int next;             /* recording: the next older value on its buffer, -1 none */
  SkTensor *t;          /* ARENA, CONST: made once; others per replay */
} SkPlanValue;

/* One recorded argument: a copy of the value, or the values of its tensors. */
typedef struct SkPlanArg {
  SkValue v;            /* its lists and strings are in the plan's pool; tensors are not held here (a
                        ** Tensor[]'s u.tensors: slots replay fills with the bound tensors) */
  int value;            /* SK_VAL_TENSOR: the value */
  int *values;          /* SK_VAL_TENSORLIST: one value per element (-1: None) */
} SkPlanArg;

typedef struct SkPlanStep {
  int kind;             /* SK_STEP_* */
  SkOperator *op;       /* the op replayed: the out variant of a functional op */
  SkOperator *called;   /* the op fn called */
  int nargs;
  SkPlanArg *args;      /* in the plan's pool */
  int nres, res[16];    /* UNMANAGED: the values its results make (-1: not a tensor) */
  int temps, ntemps;    /* the values of its kernel's temporaries (consecutive), arena buffers live at it only */
} SkPlanStep;

/* The plan's pool: its arrays and what its steps and values own (arguments, copied lists and
** strings, shapes), bump-allocated from chunks freed with the plan, never one block at a time. */
typedef struct SkPlanChunk {
  struct SkPlanChunk *next;
  size_t used, cap;
  max_align_t data[];
} SkPlanChunk;

typedef struct SkPlan {
  SkDevice device;
  int key;              /* the backend key steps replay at */
  int nin, nout;
  int *in_value, *out_value;
  SkPlanStorage *st;
  int nst, cst;
  SkPlanValue *val;
  int nval, cval;
  SkPlanStep *step;
  int nstep, cstep;
  SkTensor *arena;      /* uint8, arena_bytes, or NULL */
  size_t arena_bytes, intermediate_bytes;
  SkPlanChunk *pool;    /* the newest chunk first */
  int views, running;
  /* replay state: a root tensor and base byte offset per buffer, a tensor per value */
  SkTensor **root;
  int64_t *base;
  SkTensor **cur;
} SkPlan;

typedef struct SkPlanRecorder SkPlanRecorder;

/* A composite that works on Meta tensors by standing in for values they lack (a 0-dim value
** read as 0, a check of indices skipped) asks sk_values_absent: while a plan records, such a
** composite is not decomposed (what it did with the stand-in value would be baked into the
** plan) but kept as one step that runs whole, on the real values, at each replay. */
extern _Thread_local unsigned sk_plan_meta_reads;
/* Whether t has no values to read (a Meta tensor), noting the read for a plan being recorded:
** the test a composite makes before it reads values, for a check or a shape. */
static inline int sk_values_absent(const SkTensor *t) {
  if (t->device.type != SK_DEVICE_META) return 0;
  sk_plan_meta_reads++;
  return 1;
}

/* 1 while this thread records a plan. */
static inline int sk_plan_recording(void) { return (sk_tls_include & SK_KEYSET(SK_KEY_PLAN)) != 0; }
/* Registers the recorder's fallback (once). */
int sk_plan_init(void);
/* Starts recording on this thread for a plan that replays on device (not meta). */
SkPlanRecorder *sk_plan_record_begin(SkDevice device);
/* The meta tensor standing for input i, shaped like example (a new reference). */
SkTensor *sk_plan_record_input(SkPlanRecorder *r, const SkTensor *example);
/* Stops recording and makes the plan of the outputs outs[n] (meta tensors fn returned); the
** recorder is freed either way. */
SkPlan *sk_plan_record_end(SkPlanRecorder *r, SkTensor *const *outs, int n);
void sk_plan_record_abort(SkPlanRecorder *r);

/* Whether a view starting at byte 0 with this geometry covers all nbytes of its storage (a
** tensor of its own rather than a view into a larger buffer). */
int sk_plan_spans(int ndim, const int64_t *sizes, const int64_t *strides, SkDType dtype, int64_t byte_offset,
                  size_t nbytes);
/* Whether t is value x, its buffer starting at byte base of t's storage (same dtype, shape,
** strides and place). */
static inline int sk_plan_value_is(const SkPlanValue *x, const SkTensor *t, int64_t base) {
  return t->dtype == x->dtype && t->ndim == x->ndim && t->offset * (int64_t)sk_dtype_size(t->dtype) == base + x->byte_offset &&
         !memcmp(t->sizes, x->sizes, (size_t)x->ndim * sizeof(int64_t)) &&
         !memcmp(t->strides, x->strides, (size_t)x->ndim * sizeof(int64_t));
}
/* The most intermediate bytes an eager run would hold at once, each freed after its last use
** (sk_arena_peak of the plan's intermediates; computed when asked, not while planning). */
size_t sk_plan_eager_peak(const SkPlan *p);
/* Whether inputs in[p->nin] are what p was made for (dtype, device, shape, strides, grad). */
int sk_plan_check_inputs(const SkPlan *p, SkTensor *const *in);
/* Replays p on inputs in[p->nin] (checked against the plan), writing its outputs into
** outs[p->nout] when given (else into fresh tensors): res[p->nout] get new references. */
int sk_plan_run(SkPlan *p, SkTensor *const *in, SkTensor *const *outs, SkTensor **res);
void sk_plan_free(SkPlan *p);
/* Frees p's pool (its chunks kept for the next plan, up to a bound). */
void sk_plan_pool_free(SkPlan *p);

#endif
