/*
** sk_cpu_fallback.h — the boxed CPU fallback: any backend runs the ops it lacks on the CPU
** Tensor arguments (and tensors in lists) on the backend's device are
** copied to the CPU, the op is redispatched to CPU, mutated arguments are
** written back, aliasing results are the original tensors, and other
** results move back to the backend's device. Counted per op and key.
*/
#ifndef SK_CPU_FALLBACK_H
#define SK_CPU_FALLBACK_H

#include "sk_dispatch.h"

#include <stdint.h>

/* The boxed fallback; ctx is the dispatch key it serves, as (void *)(intptr_t)key. */
int sk_cpu_fallback(SkOperator *op, SkStack *s, void *ctx);
/* Registers it for key; returns the registration id (see sk_fallback_deregister). */
int sk_cpu_fallback_register(int key);
/* Runs op's arguments on s through the CPU fallback for key, whatever the table says. */
int sk_cpu_fallback_call(SkOperator *op, int key, SkStack *s);

/* Policy per key: view ops are refused unless allowed; a DENY rule refuses an op;
** once any op of a key has an ALLOW rule, only allowed ops fall back. */
void sk_cpu_fallback_allow_views(int key, int allow);
void sk_cpu_fallback_set_rule(SkOperator *op, int key, int rule);
/* Forgets the policy and counters of key (its backend was unregistered). */
void sk_cpu_fallback_forget_key(int key);
/* Calls of op served by a fallback on key (this one, or a Lua fallback that counts itself). */
uint64_t sk_fallback_calls(const SkOperator *op, int key);
int sk_fallback_count(SkOperator *op, int key); /* -1 and an error when out of memory */
void sk_fallback_reset(int key);
/* Called before each fallback call (NULL to remove). */
typedef void (*SkFallbackLogFn)(const SkOperator *op, int key, void *ud);
void sk_cpu_fallback_set_log(SkFallbackLogFn fn, void *ud);

#endif
