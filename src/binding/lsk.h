/*
** lsk.h — the Lua binding: tensors as userdata, ops as C closures
** The only layer that includes lua.h. Every C error value becomes one
** Lua error here, prefixed with the Lua-visible name of what was called.
*/
#ifndef LSK_H
#define LSK_H

#include "sk_dispatch.h"
#include "sk_meta.h"

#include <lauxlib.h>
#include <lua.h>

#define LSK_TENSOR_MT "sk.Tensor"

typedef struct LskOpEntry { const char *qualname; int function, method; } LskOpEntry;
extern const LskOpEntry lsk_op_entries[]; /* generated */

/* {==== Module state: one per lua_State, nothing of it is process-wide ==== */
#define LSK_SPARE_BOXES 4
typedef struct LskHeld LskHeld;
struct SkNode;
typedef struct LskState {
  size_t gc_debt;      /* bytes of tensors made since the last collector step */
  size_t gc_live;      /* bytes held by this state's live tensor boxes */
  size_t gc_limit;     /* a full collection once gc_live passes it */
  /* registry references (integer keys: no hash lookup) of the state's Lua objects */
  int mt_ref;          /* the tensor metatable */
  int meta_ref;        /* the reusable meta context of Lua meta functions (lsk_library.c), or LUA_NOREF */
  int spare[LSK_SPARE_BOXES]; /* registry slots of closed boxes made ahead (lsk_call_entry) */
  int nspare;          /* how many of them hold one */
  /* Lua values that C objects hold (lsk_held.c) */
  int held_ref;        /* their tables */
  LskHeld *held;       /* the live records */
  LskHeld *dead;       /* the records whose owners went (a list through them: no cap), dropped at the next op call */
  LskHeld **recs;      /* by id (nrecs slots) */
  int nrecs;
  int cycle_ended;     /* a collector cycle ended since the last lsk_held_update */
  int closing;         /* the state is closing: an owner that goes frees its record at once */
  const char *dtype_names[SK_DTYPE_COUNT]; /* the interned name strings (anchored: lsk_to_dtype) */
  char hidden[256];    /* source prefix of sk's own Lua files (errors skip their frames) */
} LskState;
LskState *lsk_state(lua_State *L);                 /* the innermost frame on L knows it: no lookup within a call */
void lsk_push_state(lua_State *L);                 /* the LskState userdata (an upvalue of sk's closures) */
/* }==== */

/* Limits of the binding; sk.schema refuses schemas beyond them when they are defined. */
#define LSK_MAX_ARGS 64
#define LSK_MAX_RETURNS 16
#define LSK_MAX_LIST 64      /* elements of an int[], float[] or bool[] value */
#define LSK_MAX_OPTIONS 64

/* {==== Tensors ==== */
void lsk_push_tensor(lua_State *L, SkTensor *t);   /* takes the reference */
SkTensor *lsk_check_tensor(lua_State *L, int idx, const char *fname, const char *arg);
SkTensor *lsk_test_tensor(lua_State *L, int idx);  /* NULL if not a live tensor */
int lsk_is_closed_tensor(lua_State *L, int idx);
/* Pushes t, a result of an op call on st's state (takes the reference): as the box
** kept for t among the values [lo, hi] of L's stack, else in a new box. */
void lsk_push_result(lua_State *L, LskState *st, SkTensor *t, int lo, int hi);
/* An op call's entry from Lua, before anything is read or owned (a memory error or a
** finalizer run here leaves nothing of C behind, and finalizers see no half-made call):
** pays the collector for the tensor memory made (see lsk_tensor.c) and refills the
** spare boxes, those of pushes that must not allocate (a Lua callback called with no
** C trampoline, lsk_library.c). lsk_push_spare pushes t in one (taking the
** reference), 0 when none is left. */
void lsk_call_entry(lua_State *L, LskState *st);
int lsk_push_spare(lua_State *L, LskState *st, SkTensor *t);
void lsk_open_tensor(lua_State *L);                /* metatable + tensor functions into the table on top */
/* }==== */

/* {==== Ops ==== */
/* Pushes a C closure calling the overload set named `name` (functions or methods). */
void lsk_open_ops(lua_State *L);                   /* functions/methods tables into the table on top */
/* Calls the op function (an overload set's closure) at fn, which must not be on the
** stack (an upvalue), with all values on the stack, in the caller's C frame. */
int lsk_call_function(lua_State *L, int fn);
/* Calls op with the Lua arguments [first, top]; returns the number of results. */
int lsk_call_op(lua_State *L, SkOperator *op, int first, const char *fname);
/* A trailing options table, read once per call: each (key, value) is pushed on the
** Lua stack (anchored for the call); `out = {t1, t2}` is spread one value per out. */
typedef struct LskOptions {
  int n, out, out_j, out_list, nouts;   /* out: stack index of opts.out or 0, out_j its entry; out_list: it is a list */
  const char *name[LSK_MAX_OPTIONS];    /* NULL for a key that is not a string */
  int idx[LSK_MAX_OPTIONS];             /* stack index of each value */
  int outs[SK_MAX_OUTPUTS];             /* stack indices of opts.out[1..] */
} LskOptions;
/* Reads the trailing options table (the value at *last when it is a table whose first key
** is a string) into o, and takes it off the arguments (*last - 1); returns its index, or 0
** when there is none. Raises (before anything is owned) when there are too many options. */
int lsk_take_options_table(lua_State *L, int *last, LskOptions *o); /* the table at *last */
static inline int lsk_take_options(lua_State *L, int first, int *last, LskOptions *o) {
  o->n = o->nouts = o->out = o->out_list = 0;
  return *last >= first && lua_type(L, *last) == LUA_TTABLE ? lsk_take_options_table(L, last, o) : 0;
}
/* Parses Lua args into s for op, running no Lua code; 0 ok, else -1 with msg in err.
** srcs (or NULL) gets the Lua stack index each argument came from (0: a default).
** errlen 0: the message of a mismatch is not written (an overload search formats only the
** one it reports, by parsing that overload again). */
int lsk_parse_args(lua_State *L, SkOperator *op, int first, int last, const LskOptions *o, SkStack *s, int permissive,
                   int *bad_arg, int *srcs, char *err, size_t errlen);
/* Overload sets by Lua-visible name ("sk.add", "Tensor:add", "sk.ops.aten.add"). */
int lsk_sets_add(const char *fname, SkOperator *op); /* -1 with the error set */
void lsk_sets_forget(const SkOperator *op);
int lsk_push_set_function(lua_State *L, const char *fname); /* 0 when there is no such set */
void lsk_ops_set_name(const SkOperator *op, char *buf, size_t n);
/* The Lua calls into sk now on this thread's C stack, innermost first: Lua
** kernels run on the innermost one's state, and a tensor passed to a Lua
** kernel is given as the caller's own Lua value when it is one of [first, last]
** (the boxes there are read once, on the first such push: a frame's values do
** not change while its C function runs). A frame also holds the module state
** of its L once known (lsk_state; frames on one thread share it).
** An op call's frame takes kept boxes (keeps): the boxes a Lua callback of the
** call saw of its results (a structured impl's functional outs, a Lua kernel's
** results) stay on L's stack, at [kept_lo, kept_hi] (at most LSK_MAX_KEPT), and the
** call returns such a result as that very box (lsk_push_result). */
#define LSK_FRAME_BOXES 16
#define LSK_MAX_KEPT 16
typedef struct LskFrame {
  lua_State *L;
  int first, last;
  int nboxes;                         /* boxes read of [first, last], -1 before the first push */
  int keeps;                          /* 0: a frame that keeps no box */
  int kept_lo, kept_hi;               /* the kept values; kept_hi 0: none */
  LskState *st;
  struct LskFrame *prev;
  const void *boxes[LSK_FRAME_BOXES]; /* the box at first + i, or NULL */
} LskFrame;
extern _Thread_local LskFrame *lsk_frame SK_TLS_MODEL; /* as the dispatcher's key sets: no __tls_get_addr call per use */
static inline lua_State *lsk_current_state(void) { return lsk_frame ? lsk_frame->L : NULL; }
static inline void lsk_frame_enter(LskFrame *f, lua_State *L, int first, int last) {
  f->L = L; f->first = first; f->last = last; f->prev = lsk_frame;
  f->nboxes = -1; f->keeps = f->kept_hi = 0; f->kept_lo = 1; /* [1, 0]: none */
  f->st = lsk_frame && lsk_frame->L == L ? lsk_frame->st : NULL;
  lsk_frame = f;
}
static inline void lsk_frame_leave(LskFrame *f) { lsk_frame = f->prev; }
/* Pushes the caller's Lua value holding t, if the innermost frame is on L and has one; 1 when pushed. */
int lsk_frame_push_tensor(lua_State *L, const SkTensor *t);
/* After a callback of the innermost frame's op call left `n` values on L's top:
** leaves the boxes among them there when that frame takes them (see above), else pops them. */
void lsk_frame_keep(lua_State *L, int n);
void lsk_open_library(lua_State *L);               /* library primitives into the table on top */
void lsk_open_autograd(lua_State *L);              /* pushes the table of autograd primitives (lsk_autograd.c) */
/* }==== */

/* {==== Lua values that C objects hold (lsk_held.c) ====
** A hook's function, a Lua function node's {backward, ctx}: pinned, or traced from the tensor
** box through which their owner is reached while it is the only way there, so that a value
** holding that box is a cycle the collector frees. */
void lsk_held_open(lua_State *L);
/* A record of the value on top of the stack (popped); raises on a memory error, owning nothing. */
LskHeld *lsk_held_new(lua_State *L, const char *fname);
/* Its owner is node (NULL: the tensor itself, a leaf's hook), reached through the box at index box. */
void lsk_held_track(lua_State *L, LskHeld *h, int box, struct SkNode *node);
void lsk_held_push(lua_State *L, const LskHeld *h);  /* its value (nil once nothing holds it) */
void lsk_held_release(LskHeld *h);                    /* its owner went: anywhere, no Lua call made */
/* Drops the values whose owners went (st->dead) and, after a collector cycle, traces again
** what is sole: the next op call's entry does it. */
void lsk_held_update(lua_State *L, LskState *st);
/* The box at index box was used (lsk_tensor.c's test_box): the values hanging on it are pinned.
** Makes no allocation: it may run anywhere a tensor is read. -1 when there was no stack room
** (nothing pinned: the caller keeps the box marked). */
int lsk_held_box_used(lua_State *L, int box);
/* The tensor of a box without counting as a use (NULL if none); carries >= 0 sets whether
** values hang on it. */
SkTensor *lsk_box_peek(lua_State *L, int idx, int carries);
/* }==== */

/* {==== Values by schema type (lsk_value.c): the one pair of conversions ==== */
enum { LSK_READ_NUMBERS = 1, /* a number or boolean may stand for a Tensor (a wrapped number) */
       LSK_READ_ABSORB = 2 };/* an int list may be given as the integers [idx, last] */
/* Reads the Lua value at idx as argument or return a onto s: how many Lua values
** were used (>= 1), 0 when it is the wrong type, -1 on an error (message in err). */
int lsk_read_value(lua_State *L, int idx, int last, const SkArg *a, SkStack *s, int flags, char *err, size_t errlen);
enum { LSK_PUSH_BORROW, /* tensors are retained; a tensor the caller passed is its own Lua value */
       LSK_PUSH_TAKE }; /* v's tensor references move to Lua (v is left without them) */
/* Pushes v, a value of argument or return a (NULL: known by its tag alone), as a Lua value. */
void lsk_push_value(lua_State *L, SkValue *v, const SkArg *a, int take);
/* As lsk_push_value with LSK_PUSH_BORROW when that allocates nothing (nil, booleans,
** numbers, integers that are not names, a tensor of the innermost frame); else pushes
** nothing and returns 0. No Lua error. */
int lsk_push_value_direct(lua_State *L, const SkValue *v, const SkArg *a);
/* The dtype the string at idx names (0), or -1 (not a string, or no dtype of that name). */
int lsk_to_dtype(lua_State *L, int idx, SkDType *out);
const char *lsk_expected(const SkArg *a);       /* "an integer or a list of integers" */
const char *lsk_got(lua_State *L, int idx);      /* "tensor", "closed tensor" or the Lua type */
int lsk_enum_value(int type, const char *name); /* a Layout or MemoryFormat name's value, or -1 */
/* }==== */

/* {==== Errors (lsk_error.c) ==== */
/* Pushes "source:line: " of the user's frame: the first one that is neither C nor sk's own Lua. */
void lsk_where(lua_State *L);
int lsk_tensor_index(lua_State *L); /* the tensor __index: a frame lsk_where passes over */
/* Raises a Lua error at the user's line (lua_pushfstring formats). */
int lsk_raise(lua_State *L, const char *fmt, ...);
/* An error with no position: for core functions whose Lua caller adds the context (sk.load's file). */
int lsk_raise_plain(lua_State *L, const char *fmt, ...);
/* Raises the current sk error as a Lua error "fname: message". */
int lsk_error(lua_State *L, const char *fname);
void lsk_open_io(lua_State *L);                    /* pushes core.io: mappings, bulk reads/writes, bytes (lsk_io.c) */
void lsk_open_dlpack(lua_State *L);                /* to_dlpack, from_dlpack into the table on top (lsk_dlpack.c) */
void lsk_open_zip(lua_State *L);                   /* zip_read, zip_write into the table on top (lsk_zip.c) */
void lsk_open_plan(lua_State *L);                  /* core.plan_record and the plan metatable (lsk_plan.c) */
void lsk_open_errors(lua_State *L);                /* core.raise, core.hide_source */
/* }==== */

#endif
