/*
** bench/bench_dispatch.c — boxed against unboxed calls and kernels, from C
** One CPU add.Tensor on 1-element tensors, reached four ways:
**   unboxed call, generated kernel      the typed fast path (the baseline)
**   boxed call, generated kernel        arguments on a stack, sk_call_boxed,
**                                       the kernel's direct boxed entry
**   boxed call, unboxed-only kernel     the kernel registered typed only: the
**                                       generic generated adapter unboxes
**   unboxed call, boxed-only kernel     the kernel registered boxed only: the
**                                       typed entry boxes, the kernel unboxes
** The loops run in interleaved rounds and each keeps its best round, so clock
** drift between rounds hits all of them alike instead of biasing a ratio.
*/
#include "sk_error.h"
#include "sk_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void quiet(const char *msg, void *ud) { (void)msg; (void)ud; } /* the override warning is expected */

static int unboxed_call(const SkTensor *a, const SkTensor *b) {
  SkTensor *r = NULL;
  if (sk_add(&r, a, b, sk_scalar_int(1))) return -1;
  sk_tensor_release(r);
  return 0;
}

static int boxed_call(const SkTensor *a, const SkTensor *b) {
  SkStack s;
  sk_stack_init(&s);
  sk_push_tensor_borrowed(&s, a); /* a C caller keeps its tensors alive across the call */
  sk_push_tensor_borrowed(&s, b);
  sk_push_scalar(&s, sk_scalar_int(1));
  int rc = sk_call_boxed(sk_op_add_Tensor, &s);
  sk_stack_free(&s);
  return rc;
}

typedef int (*CallFn)(const SkTensor *, const SkTensor *);

/* One round of n calls with kernel k registered for CPU (NULL: the generated
** one); ns per call, or -1 on an error. */
static double round_ns(CallFn f, const SkKernel *k, const SkTensor *a, const SkTensor *b, int n) {
  int id = k ? sk_op_register(sk_op_add_Tensor, SK_KEY_CPU, k, NULL) : 0;
  if (id < 0) return -1;
  double t0 = now();
  for (int i = 0; i < n; i++)
    if (f(a, b)) { printf("error: %s\n", sk_error_message()); return -1; }
  double dt = (now() - t0) / n * 1e9;
  if (k) sk_op_deregister(sk_op_add_Tensor, id);
  return dt;
}

int main(int argc, char **argv) {
  if (sk_ops_init()) return 1;
  sk_set_warn_handler(quiet, NULL);
  int64_t one = 1;
  SkTensor *a = sk_tensor_empty(1, &one, SK_DTYPE_FLOAT32, SK_CPU), *b = sk_tensor_empty(1, &one, SK_DTYPE_FLOAT32, SK_CPU);
  *(float *)sk_tensor_data(a) = 1;
  *(float *)sk_tensor_data(b) = 2;
  int n = argc > 1 ? atoi(argv[1]) : 200000, rounds = argc > 2 ? atoi(argv[2]) : 25;
  const SkKernel *gen = &sk_op_add_Tensor->table[SK_KEY_CPU];
  SkKernel typed_only = {gen->unboxed, NULL, NULL, "bench", 0}, boxed_only = {NULL, gen->boxed, NULL, "bench", 0};
  static const char *const names[] = {"unboxed call, generated kernel", "boxed call, generated kernel",
                                      "boxed call, unboxed-only kernel", "unboxed call, boxed-only kernel"};
  const CallFn fns[] = {unboxed_call, boxed_call, boxed_call, unboxed_call};
  const SkKernel *ks[] = {NULL, NULL, &typed_only, &boxed_only};
  double best[4] = {1e9, 1e9, 1e9, 1e9};
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < 4; i++) {
      double t = round_ns(fns[i], ks[i], a, b, n);
      if (t < 0) return 1;
      if (t < best[i]) best[i] = t;
    }
  printf("C: add.Tensor, 1 element: %-34s %8.1f ns/call\n", names[0], best[0]);
  for (int i = 1; i < 4; i++)
    printf("C: add.Tensor, 1 element: %-34s %8.1f ns/call  %+5.1f %%  target < 10 %%\n", names[i], best[i],
           100 * (best[i] - best[0]) / best[0]);
  sk_tensor_release(a);
  sk_tensor_release(b);
  return 0;
}
