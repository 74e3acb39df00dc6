/*
** sk_dispatch.h — dispatch keys, operators, kernels and computed dispatch tables
** Runtime keys are ordered by priority: the highest key in a call's key set
** picks the kernel. Alias keys (DefaultBackend, Math) exist only at
** registration and fill backend slots when computing a table.
** Invariant: op->table[k] always equals compute_entry(op, k) for the
** current registrations and fallbacks; it is recomputed on every change.
*/
#ifndef SK_DISPATCH_H
#define SK_DISPATCH_H

#include "sk_value.h"

/* A backend's key follows from its device type: the compiled-in rows of
** SK_COMPILED_BACKENDS in order, then the run-time slots, then Meta (the
** highest backend key, so a call with a meta tensor is a Meta call). */
typedef enum SkKey {
  SK_KEY_UNDEFINED,
#define SK_X_KEY(e, name) SK_KEY_##e,
  SK_COMPILED_BACKENDS(SK_X_KEY)
#undef SK_X_KEY
  SK_KEY_BACKEND0, SK_KEY_BACKEND_LAST = SK_KEY_BACKEND0 + SK_MAX_RUNTIME_BACKENDS - 1, /* backends registered at run time */
  SK_KEY_META,
  SK_KEY_BACKEND_SELECT,
  SK_KEY_AUTOGRAD,       /* in a call's key set when a tensor argument requires grad and grad mode is on */
  SK_KEY_PLAN,           /* sk.plan's recorder: in sk_tls_include while a plan is recorded, never registered by users */
  SK_KEY_NUM_RUNTIME,
  SK_KEY_DEFAULT_BACKEND = SK_KEY_NUM_RUNTIME, /* CompositeExplicitAutograd */
  SK_KEY_MATH,                                 /* CompositeImplicitAutograd */
  SK_KEY_COUNT
} SkKey;

typedef uint32_t SkKeySet;
#define SK_KEYSET(k) ((SkKeySet)1u << (k))

static inline int sk_key_is_backend(int k) { return k >= SK_KEY_CPU && k <= SK_KEY_META; }
const char *sk_key_name(int key);           /* "CPU", "npu", "DefaultBackend"... */
int sk_key_from_name(const char *name);     /* -1 when unknown */

/* {==== Schemas (parsed in Lua; codegen emits them as static data) ==== */
/* In the order of the rows of lua/sk/types.lua, the one table of schema types
** (the generated binding table asserts each value). Layout and MemoryFormat are
** boxed as SK_VAL_INT (their PyTorch enum values); a Generator is always None. */
typedef enum SkBaseType {
  SK_T_TENSOR, SK_T_INT, SK_T_FLOAT, SK_T_BOOL, SK_T_STR, SK_T_SCALAR, SK_T_SCALAR_TYPE,
  SK_T_LAYOUT, SK_T_DEVICE, SK_T_MEMORY_FORMAT, SK_T_GENERATOR
} SkBaseType;

typedef struct SkArg {
  const char *name;
  unsigned char type;          /* SkBaseType */
  unsigned char is_list, optional, elem_optional, kwarg_only, is_out, is_write, is_alias;
  short list_size;             /* N of int[N], else 0 */
  short alias_of;              /* for returns: index of the argument it aliases, else -1 */
  const char *default_text;    /* NULL when required */
} SkArg;

enum { SK_KIND_FUNCTIONAL, SK_KIND_INPLACE, SK_KIND_OUT, SK_KIND_MUTABLE };

typedef struct SkSchema {
  const char *ns, *name, *overload, *text;
  int nargs, nrets, kind;
  const SkArg *args, *rets;
} SkSchema;
/* }==== */

typedef struct SkOperator SkOperator;

/* Per-op data of layers above the dispatcher (the binding's parsed defaults,
** the CPU fallback's counters and rules): each takes a slot, whose free
** function releases its data with the op. Returns the slot, or -1 and an error. */
#define SK_OP_EXT_SLOTS 8
int sk_op_ext_slot(void (*free_fn)(void *));

#define SK_TENSOR_POS 4

/* A boxed kernel: arguments on the stack on entry, results on return. */
typedef int (*SkBoxedFn)(SkOperator *op, SkStack *stack, void *ctx);
/* Calls a typed function pointer with a boxed stack (generated per built-in op). */
typedef int (*SkUnboxFn)(void *fn, SkOperator *op, SkStack *stack);

enum { SK_FALLBACK_DEFAULT, SK_FALLBACK_ALLOW, SK_FALLBACK_DENY };

enum { SK_SRC_NONE, SK_SRC_DIRECT, SK_SRC_DEFAULT_BACKEND, SK_SRC_MATH, SK_SRC_FALLBACK };

typedef struct SkKernel {
  void *unboxed;        /* typed C function, or NULL */
  SkBoxedFn boxed;      /* boxed function, or NULL */
  void *ctx;            /* passed to boxed */
  const char *origin;   /* who registered it ("codegen", a library name...); registering copies it */
  int source;           /* SK_SRC_* */
} SkKernel;

typedef struct SkRegistration {
  int id, key;
  SkKernel kernel;
  void (*ctx_free)(void *ctx);
  struct SkRegistration *next; /* older registration for the same key */
} SkRegistration;

struct SkOperator {
  SkSchema schema;
  char qualname[128];           /* "aten::add.Tensor" */
  const char *out_sibling;      /* structured out op of the family, for error hints */
  SkUnboxFn unbox;              /* NULL for ops defined at run time */
  int index;
  uint64_t tensor_args;         /* bit i: argument i holds tensors (Tensor, Tensor?, Tensor[]) */
  /* Positions of the tensor arguments when they are at most SK_TENSOR_POS plain
  ** tensors (no lists), the last repeated to fill the array; otherwise
  ** ntensor_pos is SK_TENSOR_POS + 1. */
  unsigned char ntensor_pos, tensor_pos[SK_TENSOR_POS];
  SkKeySet always;              /* BackendSelect, for factories that have such a kernel */
  SkKeySet fallthrough;         /* keys skipped for this op (BackendSelect when it has none) */
  SkKernel table[SK_KEY_NUM_RUNTIME];
  SkRegistration *regs[SK_KEY_COUNT];
  int owns_schema;              /* schema strings were copied (ops defined at run time) */
  void *ext[SK_OP_EXT_SLOTS];   /* upper layers' data of this op (sk_op_ext_slot), freed with it */
};

/* {==== Registry ==== */
/* Defines an op; the schema strings are copied when `copy` is set. */
SkOperator *sk_op_define(const SkSchema *schema, SkUnboxFn unbox, int copy);
SkOperator *sk_op_find(const char *qualname); /* "aten::add.Tensor" or "add.Tensor" */
int sk_op_count(void);
SkOperator *sk_op_at(int i);
int sk_op_registrations(const SkOperator *op); /* kernels registered for op, over all keys */
/* Removes an op defined at run time (no registrations may remain). */
int sk_op_undefine(SkOperator *op);
void sk_op_set_out_sibling(SkOperator *op, const char *qualname);

/* Returns a registration id (> 0) or -1. Same (op, key) twice: warns, newer wins. */
int sk_op_register(SkOperator *op, int key, const SkKernel *k, void (*ctx_free)(void *));
/* A kernel whose boxed function is sk_fallthrough makes calls of op skip key (and its
** fallback): PyTorch's makeFallthrough. sk_fallthrough itself is never called. */
int sk_fallthrough(SkOperator *op, SkStack *s, void *ctx);
int sk_op_deregister(SkOperator *op, int id);
int sk_fallback_register(int key, SkBoxedFn fn, void *ctx, const char *origin, void (*ctx_free)(void *));
int sk_fallback_deregister(int id);
int sk_fallback_active(int key);
/* How many kernels and fallbacks are registered for key, over all ops. */
int sk_key_registrations(int key);
/* }==== */

/* {==== Calling ==== */
#ifdef __cplusplus /* the CUDA module includes this header from C++ */
#define SK_THREAD_LOCAL thread_local
#define SK_TLS_MODEL
#else
#define SK_THREAD_LOCAL _Thread_local
#define SK_TLS_MODEL __attribute__((tls_model("initial-exec")))
#endif
extern SK_THREAD_LOCAL SkKeySet sk_tls_include SK_TLS_MODEL, sk_tls_exclude SK_TLS_MODEL;
/* Grad mode: on unless Autograd is in this thread's exclude set. */
static inline int sk_grad_enabled(void) { return !(sk_tls_exclude & SK_KEYSET(SK_KEY_AUTOGRAD)); }

static inline int sk_highest_key(SkKeySet ks) { return ks ? 31 - __builtin_clz(ks) : 0; }
/* Device type -> dispatch key (see SkKey): compiled type t has key t + 1, run-time type t key t. */
static inline int sk_device_key(SkDevice d) {
  int t = (uint16_t)d.type;
  return t < SK_DEVICE_META ? t + 1 : t == SK_DEVICE_META ? SK_KEY_META : t;
}
/* The device type of a backend key (not Meta), or -1. */
static inline int sk_key_device_type(int key) {
  return key >= SK_KEY_CPU && key < SK_KEY_BACKEND0 ? key - 1 : key >= SK_KEY_BACKEND0 && key <= SK_KEY_BACKEND_LAST ? key : -1;
}
/* A tensor that requires grad adds the Autograd key; grad mode off excludes it (sk_tls_exclude). */
static inline SkKeySet sk_tensor_keyset(const SkTensor *t) {
  return SK_KEYSET(sk_device_key(t->device)) | (sk_tensor_grad_flag(t) ? SK_KEYSET(SK_KEY_AUTOGRAD) : 0);
}

/* The kernel for a call with key set ks, or NULL with the "no kernel" error. */
const SkKernel *sk_dispatch_miss(SkOperator *op, SkKeySet ks);
static inline const SkKernel *sk_dispatch_lookup(SkOperator *op, SkKeySet ks) {
  ks = (ks | sk_tls_include | op->always) & ~(sk_tls_exclude | op->fallthrough);
  const SkKernel *k = &op->table[sk_highest_key(ks)];
  return k->unboxed || k->boxed ? k : sk_dispatch_miss(op, ks);
}
/* Key set of the tensors in a boxed argument list a, any op (lists included). */
SkKeySet sk_stack_keyset_any(const SkOperator *op, const SkValue *a);
static inline SkKeySet sk_value_keyset(const SkValue *v) {
  return v->tag == SK_VAL_TENSOR ? SK_KEYSET(sk_device_key(sk_device(v->dev & SK_VALUE_DEV_TYPE, 0))) |
                                       (SkKeySet)(v->dev >> 7) << SK_KEY_AUTOGRAD : 0;
}
/* Key set of the tensors in a boxed argument list starting at base. Unrolled
** for up to SK_TENSOR_POS plain tensor arguments (unused positions repeat the
** last one, so one pair of lookups covers 1-2 tensors and two pairs 3-4): a
** loop over the argument mask cost about 3 ns more per call (measured with
** bench/bench_dispatch.c). */
static inline SkKeySet sk_stack_keyset(const SkOperator *op, const SkStack *s, int base) {
  const SkValue *a = s->v + base;
  const unsigned char *p = op->tensor_pos;
  unsigned n = op->ntensor_pos;
  if (n == 0) return 0;
  if (n > SK_TENSOR_POS) return sk_stack_keyset_any(op, a);
  SkKeySet ks = sk_value_keyset(a + p[0]) | sk_value_keyset(a + p[1]);
  if (n > 2) ks |= sk_value_keyset(a + p[2]) | sk_value_keyset(a + p[3]);
  return ks;
}
int sk_call_boxed_short(SkOperator *op, SkStack *s); /* the error for too few values */
/* Boxed call: args at the top nargs slots of s; replaced by the results. */
static inline int sk_call_kernel_boxed(SkOperator *op, const SkKernel *k, SkStack *s);
static inline int sk_call_boxed(SkOperator *op, SkStack *s) {
  if (s->n < op->schema.nargs) return sk_call_boxed_short(op, s);
  const SkKernel *k = sk_dispatch_lookup(op, sk_stack_keyset(op, s, s->n - op->schema.nargs));
  return k ? sk_call_kernel_boxed(op, k, s) : -1;
}
int sk_call_boxed_key(SkOperator *op, int key, SkStack *s);
static inline int sk_call_kernel_boxed(SkOperator *op, const SkKernel *k, SkStack *s) {
  return k->boxed ? k->boxed(op, s, k->ctx) : op->unbox(k->unboxed, op, s);
}
/* Checks a boxed kernel's results against the schema (count and types). */
int sk_check_returns(SkOperator *op, const SkStack *s, int base, const char *where);
/* }==== */

/* {==== Introspection ==== */
typedef struct SkKernelInfo { int key; int source; const char *origin; int boxed; } SkKernelInfo;
/* Fills info for each runtime key with a kernel; returns the count. */
int sk_op_table(const SkOperator *op, SkKernelInfo *info, int cap);
const char *sk_source_name(int source);
/* }==== */

#endif
