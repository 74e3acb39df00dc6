/*
** sk_cbackend.c — an out-of-tree backend "cdev" in C, loaded with sk.load_backend
** Its tensors live in host memory it allocates itself (malloc/free, counted
** in `allocated`). Its backend record (sk_backend.h) gives it empty and fill_;
** it registers add.out for float32 (strided, broadcasting) and a boxed mul.out
** that hands the call to the CPU fallback. Its fallback policy is none: every
** other op on "cdev" has no kernel and says so.
** Build against an installed sk: cc -shared -fPIC -I/usr/local/include/sk -o sk_cbackend.so sk_cbackend.c
*/
#include "sk.h"
#include "sk_cpu_fallback.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sk_backend_init(void); /* the one exported symbol */

static size_t allocated; /* bytes of live cdev storages */

/* {==== Device hooks: host memory, plain copies ==== */
static void *cdev_alloc(void *ud, size_t n, SkDevice d) {
  (void)ud; (void)d;
  void *p = malloc(n ? n : 1);
  if (!p) return sk_error("cdev: out of memory allocating %zu bytes (%zu in use)", n, allocated), NULL;
  allocated += n;
  return p;
}

static void cdev_free(void *ud, void *p, size_t n, SkDevice d) {
  (void)ud; (void)d;
  allocated -= n;
  free(p);
}

static int cdev_copy(void *ud, void *dst, const void *src, size_t n, SkDevice d) {
  (void)ud; (void)d;
  if (n) memcpy(dst, src, n);
  return 0;
}
/* }==== */

/* {==== Kernels ==== */
/* Inner loop of add: data[0] = out, data[1] = self, data[2] = other; strides in bytes. */
static void add_loop(char **data, const int64_t *strides, int64_t n, void *ctx) {
  float alpha = *(const float *)ctx;
  char *o = data[0];
  const char *a = data[1], *b = data[2];
  for (int64_t i = 0; i < n; i++, o += strides[0], a += strides[1], b += strides[2])
    *(float *)o = *(const float *)a + alpha * *(const float *)b;
}

/* add.out: out = self + alpha * other, float32 only. The iterator broadcasts,
** walks any strides, checks overlap and resizes an empty out. */
static int cdev_add_out(const SkTensor *self, const SkTensor *other, SkScalar alpha, SkTensor *out) {
  static const char *const names[] = {"self", "other", "out"};
  const SkTensor *const ts[] = {self, other, out};
  for (int i = 0; i < 3; i++)
    if (ts[i]->dtype != SK_DTYPE_FLOAT32)
      return sk_error("cdev add.out supports float32 tensors only (argument '%s' is %s)", names[i],
                      sk_dtype_name(ts[i]->dtype));
  if (sk_meta_check_same_device("add", out->device, 3, ts, names)) return -1;
  SkMeta m;
  SkTensorIter it;
  sk_meta_init(&m, "add", SK_VARIANT_OUT, out->device, 1, 1);
  sk_meta_use_iter(&m, &it);
  m.outputs[0] = out;
  float a = (float)sk_scalar_to_double(alpha);
  int rc = sk_iter_binary_op(&m, self, other);
  if (!rc) sk_iter_for_each(&it, add_loop, &a);
  if (!rc) rc = sk_meta_finish(&m); /* bumps out's version */
  sk_meta_cleanup(&m, rc != 0);
  return rc;
}

/* mul.out, boxed: this backend has no multiply, so it sends the call to the
** CPU fallback explicitly (counted in sk.fallback.counts("cdev")). */
static int cdev_mul_out(SkOperator *op, SkStack *stack, void *ctx) {
  return sk_cpu_fallback_call(op, (int)(intptr_t)ctx, stack);
}
/* }==== */

/* {==== Registration ==== */
int sk_backend_init(void) {
  /* the record: host memory, so it gets the generic empty and the CPU's fill_; no fallback, so
  ** an op without a kernel raises */
  SkBackend b = {"cdev",
                 {.alloc = cdev_alloc, .free = cdev_free, .copy_from_cpu = cdev_copy, .copy_to_cpu = cdev_copy,
                  .copy_same = cdev_copy},
                 SK_BACKEND_FALLBACK_NONE};
  int type;
  if (sk_backend_register(&b, &type)) return -1;
  int key = sk_device_key(sk_device(type, 0));
  struct { const char *op; SkKernel k; } regs[] = {
    {"aten::add.out", {(void *)cdev_add_out, NULL, NULL, "sk_cbackend", 0}},
    {"aten::mul.out", {NULL, cdev_mul_out, (void *)(intptr_t)key, "sk_cbackend", 0}},
  };
  enum { NREGS = sizeof regs / sizeof regs[0] };
  SkOperator *ops[NREGS];
  int ids[NREGS], n = 0;
  for (; n < NREGS; n++) {
    ops[n] = sk_op_find(regs[n].op);
    ids[n] = ops[n] ? sk_op_register(ops[n], key, &regs[n].k, NULL) : sk_error("cdev: unknown operator '%s'", regs[n].op);
    if (ids[n] < 0) break;
  }
  if (n == NREGS) return 0;
  /* undo what was registered: the process keeps no half-made backend */
  while (n-- > 0) sk_op_deregister(ops[n], ids[n]);
  sk_backend_unregister(type);
  return -1;
}
/* }==== */
