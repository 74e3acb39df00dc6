/*
** lsk.h — the Lua binding: tensors as userdata, ops as C closures
** The only layer that includes lua.h. Every C error value becomes one
** Lua error here, prefixed with the Lua-visible name of what was called.
*/
#ifndef LSK_H
#define LSK_H

#include "sk_dispatch.h"

#include <lauxlib.h>
#include <lua.h>

#define LSK_TENSOR_MT "sk.Tensor"

typedef struct LskOpEntry { const char *qualname; int function, method; } LskOpEntry;
extern const LskOpEntry lsk_op_entries[]; /* generated */

/* {==== Tensors ==== */
void lsk_push_tensor(lua_State *L, SkTensor *t);   /* takes the reference */
void lsk_gc_pay(lua_State *L);                      /* a collector step for the tensor memory made since the last */
SkTensor *lsk_check_tensor(lua_State *L, int idx, const char *fname, const char *arg);
SkTensor *lsk_test_tensor(lua_State *L, int idx);  /* NULL if not a live tensor */
void lsk_open_tensor(lua_State *L);                /* metatable + tensor functions into the table on top */
/* }==== */

/* {==== Ops ==== */
/* Pushes a C closure calling the overload set named `name` (functions or methods). */
void lsk_open_ops(lua_State *L);                   /* functions/methods tables into the table on top */
/* Calls op with the Lua arguments [first, top]; returns the number of results. */
int lsk_call_op(lua_State *L, SkOperator *op, int first, const char *fname);
/* Parses Lua args into s for op; 0 ok, else -1 with msg in err. */
int lsk_parse_args(lua_State *L, SkOperator *op, int first, int last, int opts, SkStack *s, int permissive,
                   int *bad_arg, char *err, size_t errlen);
/* Pushes stack value v as a Lua value (tensors: takes the reference). */
void lsk_push_value(lua_State *L, SkValue *v);
/* 1 when the value at idx is a trailing options table (a plain table with string keys). */
int lsk_is_options(lua_State *L, int idx);
/* Reads the Lua value at idx as schema argument a onto s: 1 ok, 0 wrong type, -1 error (msg in err). */
int lsk_read_value(lua_State *L, int idx, const SkArg *a, SkStack *s, char *err, size_t errlen);
/* Overload sets by Lua-visible name ("sk.add", "Tensor:add", "sk.ops.aten.add"). */
void lsk_sets_add(const char *fname, SkOperator *op);
void lsk_sets_forget(const SkOperator *op);
int lsk_push_set_function(lua_State *L, const char *fname); /* 0 when there is no such set */
void lsk_ops_set_name(const SkOperator *op, char *buf, size_t n);
/* The Lua calls into sk now on this thread's C stack, innermost first: Lua
** kernels run on the innermost one's state, and a tensor passed to a Lua
** kernel is given as the caller's own Lua value when it is one of [first, last]. */
typedef struct LskFrame { lua_State *L; int first, last; struct LskFrame *prev; } LskFrame;
extern _Thread_local LskFrame *lsk_frame;
static inline lua_State *lsk_current_state(void) { return lsk_frame ? lsk_frame->L : NULL; }
static inline void lsk_frame_enter(LskFrame *f, lua_State *L, int first, int last) {
  f->L = L; f->first = first; f->last = last; f->prev = lsk_frame; lsk_frame = f;
}
static inline void lsk_frame_leave(LskFrame *f) { lsk_frame = f->prev; }
/* Pushes the caller's Lua value holding t, if the innermost frame is on L and has one; 1 when pushed. */
int lsk_frame_push_tensor(lua_State *L, const SkTensor *t);
void lsk_open_library(lua_State *L);               /* library primitives into the table on top */
/* }==== */

/* Raises the current sk error as a Lua error "fname: message". */
int lsk_error(lua_State *L, const char *fname);

#endif
