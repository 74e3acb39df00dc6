/*
** bench/bench_dispatch.c — boxed against unboxed kernels, from C
** The same CPU add.Tensor kernel is called unboxed (the generated fast path),
** then through the boxed convention, then registered in boxed form (its
** typed pointer behind the generated unbox adapter) so every call boxes
** the arguments onto a stack and back. The three loops run in interleaved
** rounds and each keeps its best round, so clock and cache drift between
** rounds hits all three alike instead of biasing the ratio.
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

/* The boxed form of an unboxed kernel: ctx is the typed pointer. */
static int boxed_from_unboxed(SkOperator *op, SkStack *s, void *ctx) { return op->unbox(ctx, op, s); }

static int unboxed_call(const SkTensor *a, const SkTensor *b) {
  SkTensor *r = NULL;
  if (sk_add(&r, a, b, sk_scalar_int(1))) return -1;
  sk_tensor_release(r);
  return 0;
}

/* The boxed calling convention: arguments on a stack, sk_call_boxed, result off the stack. */
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

/* One round of n calls; ns per call, or -1 on an error. */
static double round_ns(CallFn f, const SkTensor *a, const SkTensor *b, int n) {
  double t0 = now();
  for (int i = 0; i < n; i++)
    if (f(a, b)) { printf("error: %s\n", sk_error_message()); return -1; }
  return (now() - t0) / n * 1e9;
}

int main(int argc, char **argv) {
  if (sk_ops_init()) return 1;
  int64_t one = 1;
  SkTensor *a = sk_tensor_empty(1, &one, SK_DTYPE_FLOAT32, SK_CPU), *b = sk_tensor_empty(1, &one, SK_DTYPE_FLOAT32, SK_CPU);
  *(float *)sk_tensor_data(a) = 1;
  *(float *)sk_tensor_data(b) = 2;
  int n = argc > 1 ? atoi(argv[1]) : 200000, rounds = argc > 2 ? atoi(argv[2]) : 25;
  SkKernel k = {NULL, boxed_from_unboxed, sk_op_add_Tensor->table[SK_KEY_CPU].unboxed, "bench", 0};
  SkKernel kb = {NULL, sk_op_add_Tensor->table[SK_KEY_CPU].boxed, NULL, "bench", 0};
  sk_set_warn_handler(quiet, NULL);
  double best[4] = {1e9, 1e9, 1e9, 1e9};
  for (int r = 0; r < rounds; r++) {
    double t[4];
    t[0] = round_ns(unboxed_call, a, b, n);
    t[1] = round_ns(boxed_call, a, b, n);
    int id = sk_op_register(sk_op_add_Tensor, SK_KEY_CPU, &k, NULL);
    t[2] = round_ns(unboxed_call, a, b, n);
    sk_op_deregister(sk_op_add_Tensor, id);
    id = sk_op_register(sk_op_add_Tensor, SK_KEY_CPU, &kb, NULL);
    t[3] = round_ns(unboxed_call, a, b, n);
    sk_op_deregister(sk_op_add_Tensor, id);
    for (int i = 0; i < 4; i++) {
      if (t[i] < 0) return 1;
      if (t[i] < best[i]) best[i] = t[i];
    }
  }
  printf("%-52s %8.1f ns/call\n", "C: add.Tensor unboxed call, unboxed kernel", best[0]);
  printf("%-52s %8.1f ns/call  %+.1f %%  target < 10 %%\n", "C: add.Tensor boxed call (stack), unboxed kernel", best[1],
         100 * (best[1] - best[0]) / best[0]);
  printf("%-52s %8.1f ns/call  %+.1f %%\n", "C: add.Tensor unboxed call, kernel in boxed form", best[2],
         100 * (best[2] - best[0]) / best[0]);
  printf("%-52s %8.1f ns/call  %+.1f %%\n", "C: add.Tensor unboxed call, generated boxed kernel", best[3],
         100 * (best[3] - best[0]) / best[0]);
  sk_tensor_release(a);
  sk_tensor_release(b);
  return 0;
}
