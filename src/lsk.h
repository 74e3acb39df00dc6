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
/* }==== */

/* Raises the current sk error as a Lua error "fname: message". */
int lsk_error(lua_State *L, const char *fname);

#endif
