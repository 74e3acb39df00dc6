/*
** bench/bench_dispatch.c — boxed against unboxed kernels, from C
** The same CPU add.Tensor kernel is called unboxed (the generated fast path),
** then registered in boxed form (its typed pointer behind the generated
** unbox adapter) so every call boxes the arguments onto a stack and back.
*/
#include "sk_error.h"
#include "sk_ops.h"

#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

int main(void) {
  if (sk_ops_init()) return 1;
  int64_t one = 1;
  SkTensor *a = sk_tensor_empty(1, &one, SK_DTYPE_FLOAT32, SK_CPU), *b = sk_tensor_empty(1, &one, SK_DTYPE_FLOAT32, SK_CPU);
  *(float *)sk_tensor_data(a) = 1;
  *(float *)sk_tensor_data(b) = 2;
  int n = 1000000;
  double unboxed = per_call(a, b, n);
  SkKernel k = {NULL, boxed_from_unboxed, sk_op_add_Tensor->table[SK_KEY_CPU].unboxed, "bench", 0};
  sk_set_warn_handler(NULL, NULL);
  int id = sk_op_register(sk_op_add_Tensor, SK_KEY_CPU, &k, NULL);
  double boxed = per_call(a, b, n);
  sk_op_deregister(sk_op_add_Tensor, id);
  printf("%-44s %10.1f ns/call\n", "C: sk_add, 1-element, unboxed kernel", unboxed);
  printf("%-44s %10.1f ns/call\n", "C: sk_add, 1-element, same kernel boxed", boxed);
  printf("%-44s %10.1f %%       target < 10\n", "boxed overhead", 100 * (boxed - unboxed) / unboxed);
  sk_tensor_release(a);
  sk_tensor_release(b);
  return 0;
}
