/*
** bench/bench_dispatch.c — boxed against unboxed kernels, from C
** The same CPU add.Tensor kernel is called unboxed (the generated fast path),
** then registered in boxed form (its typed pointer behind the generated
** unbox adapter) so every call boxes the arguments onto a stack and back.
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

static double per_call(SkTensor *a, SkTensor *b, int n) {
  double best = 1e9;
  for (int round = 0; round < 5; round++) {
    double t0 = now();
    for (int i = 0; i < n; i++) {
      SkTensor *r = NULL;
      if (sk_add(&r, a, b, sk_scalar_int(1))) { printf("error: %s\n", sk_error_message()); return -1; }
      sk_tensor_release(r);
    }
    double dt = (now() - t0) / n;
    if (dt < best) best = dt;
  }
  return best * 1e9;
}

/* The boxed calling convention: arguments on a stack, sk_call_boxed, result off the stack. */
static double per_boxed_call(SkTensor *a, SkTensor *b, int n) {
  double best = 1e9;
  for (int round = 0; round < 5; round++) {
    double t0 = now();
    for (int i = 0; i < n; i++) {
      SkStack s;
      sk_stack_init(&s);
      sk_push_tensor_borrowed(&s, a); /* a C caller keeps its tensors alive across the call */
      sk_push_tensor_borrowed(&s, b);
      sk_push_scalar(&s, sk_scalar_int(1));
      if (sk_call_boxed(sk_op_add_Tensor, &s)) { printf("error: %s\n", sk_error_message()); return -1; }
      sk_stack_free(&s);
    }
    double dt = (now() - t0) / n;
    if (dt < best) best = dt;
  }
  return best * 1e9;
}

int main(int argc, char **argv) {
  if (sk_ops_init()) return 1;
  int64_t one = 1;
  SkTensor *a = sk_tensor_empty(1, &one, SK_DTYPE_FLOAT32, SK_CPU), *b = sk_tensor_empty(1, &one, SK_DTYPE_FLOAT32, SK_CPU);
  *(float *)sk_tensor_data(a) = 1;
  *(float *)sk_tensor_data(b) = 2;
  int n = argc > 1 ? atoi(argv[1]) : 1000000;
  double unboxed = per_call(a, b, n);
  double boxed_call = per_boxed_call(a, b, n);
  SkKernel k = {NULL, boxed_from_unboxed, sk_op_add_Tensor->table[SK_KEY_CPU].unboxed, "bench", 0};
  sk_set_warn_handler(quiet, NULL);
  int id = sk_op_register(sk_op_add_Tensor, SK_KEY_CPU, &k, NULL);
  double boxed = per_call(a, b, n);
  sk_op_deregister(sk_op_add_Tensor, id);
  printf("%-52s %8.1f ns/call\n", "C: add.Tensor unboxed call, unboxed kernel", unboxed);
  printf("%-52s %8.1f ns/call  %+.1f %%  target < 10 %%\n", "C: add.Tensor boxed call (stack), unboxed kernel", boxed_call,
         100 * (boxed_call - unboxed) / unboxed);
  printf("%-52s %8.1f ns/call  %+.1f %%\n", "C: add.Tensor unboxed call, kernel in boxed form", boxed,
         100 * (boxed - unboxed) / unboxed);
  sk_tensor_release(a);
  sk_tensor_release(b);
  return 0;
}
