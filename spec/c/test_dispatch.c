/*
** spec/c/test_dispatch.c — the dispatcher and the generated adapters, from C
** Links the core, kernels and generated ops without Lua (which also shows
** the C layers never reach up). Prints "N passed, M failed".
*/
#include "sk_backend.h"
#include "sk_cpu_fallback.h"
#include "sk_error.h"
#include "sk_iter.h"
#include "sk_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_check.h"

static int warnings;
static char last_warning[512];
static void count_warning(const char *msg, void *ud) {
  (void)ud;
  warnings++;
  snprintf(last_warning, sizeof last_warning, "%s", msg);
}

static SkTensor *vec(int n, const float *v) {
  int64_t size = n;
  SkTensor *t = sk_tensor_empty(1, &size, SK_DTYPE_FLOAT32, SK_CPU);
  memcpy(sk_tensor_data(t), v, (size_t)n * sizeof *v);
  return t;
}

static float at(const SkTensor *t, int i) { return ((const float *)sk_tensor_data(t))[i]; }

/* A boxed kernel for add.Tensor: returns a fresh [42] whatever the arguments. */
static int boxed_forty_two(SkOperator *op, SkStack *s, void *ctx) {
  (void)op;
  (*(int *)ctx)++;
  sk_stack_truncate(s, s->n - 3);
  float v = 42;
  return sk_push_tensor_owned(s, vec(1, &v));
}

/* A broken boxed kernel: returns nothing. */
static int boxed_returns_nothing(SkOperator *op, SkStack *s, void *ctx) {
  (void)op; (void)ctx;
  sk_stack_truncate(s, s->n - 3);
  return 0;
}

/* A fallback that counts and reports the op. */
static char fallback_saw[128];
static int counting_fallback(SkOperator *op, SkStack *s, void *ctx) {
  (void)s;
  (*(int *)ctx)++;
  snprintf(fallback_saw, sizeof fallback_saw, "%s", op->qualname);
  return sk_error("fallback reached for %s", op->qualname);
}

/* Pushes ctx as an int: which kernel a boxed call reached. */
static int which_kernel(SkOperator *op, SkStack *s, void *ctx) {
  sk_stack_truncate(s, s->n - op->schema.nargs);
  return sk_push_int(s, (int64_t)(intptr_t)ctx);
}
/* Defines ns::name with the given tensor arguments (list / optional flags) and
** boxed kernels on CPU (1) and Meta (2); returns the op or NULL. */
static SkOperator *keyset_op(const char *name, int nargs, const SkArg *args) {
  static const SkArg ret[] = {{"", SK_T_INT, 0, 0, 0, 0, 0, 0, 0, 0, -1, NULL}};
  SkSchema sc = {"test", name, "", name, nargs, 1, SK_KIND_FUNCTIONAL, args, ret};
  SkOperator *op = sk_op_define(&sc, NULL, 1);
  SkKernel cpu = {NULL, which_kernel, (void *)1, "test", 0}, meta = {NULL, which_kernel, (void *)2, "test", 0};
  if (!op || sk_op_register(op, SK_KEY_CPU, &cpu, NULL) < 0 || sk_op_register(op, SK_KEY_META, &meta, NULL) < 0) return NULL;
  return op;
}
/* The kernel a boxed call with these tensor values reaches (NULL pushes None; a
** list of n tensors when list_n >= 0 is pushed first). */
static int64_t reached(SkOperator *op, int list_n, SkTensor *const *list, int n, SkTensor *const *ts) {
  SkStack s;
  sk_stack_init(&s);
  if (list_n >= 0) sk_push_tensorlist(&s, list, list_n);
  for (int i = 0; i < n; i++) sk_push_tensor_borrowed(&s, ts[i]);
  int64_t r = sk_call_boxed(op, &s) == 0 && s.n == 1 && s.v[0].tag == SK_VAL_INT ? s.v[0].u.i : -1;
  sk_stack_free(&s);
  return r;
}
static int undefine(SkOperator *op) {
  while (op->regs[SK_KEY_CPU]) sk_op_deregister(op, op->regs[SK_KEY_CPU]->id);
  while (op->regs[SK_KEY_META]) sk_op_deregister(op, op->regs[SK_KEY_META]->id);
  return sk_op_undefine(op);
}

static void *host_alloc(void *ud, size_t n, SkDevice d) { (void)ud; (void)d; return malloc(n ? n : 1); }
static void host_free(void *ud, void *p, size_t n, SkDevice d) { (void)ud; (void)n; (void)d; free(p); }
static int host_copy(void *ud, void *dst, const void *src, size_t n, SkDevice d) {
  (void)ud; (void)d;
  if (n) memcpy(dst, src, n);
  return 0;
}
static int releases;
static void count_release(void *ud) { (void)ud; releases++; }
static int device_copies, host_copies;
static int counted_host_copy(void *ud, void *dst, const void *src, size_t n, SkDevice d) {
  host_copies++;
  return host_copy(ud, dst, src, n, d);
}
static int device_copy(void *ud, SkTensor *dst, const SkTensor *src) {
  (void)ud;
  device_copies++;
  return sk_copy_cpu(dst, src); /* the device's own kernel, were it a device */
}

static const SkKernelInfo *info_for(const SkKernelInfo *info, int n, int key) {
  for (int i = 0; i < n; i++) if (info[i].key == key) return &info[i];
  return NULL;
}

int main(void) {
  sk_set_warn_handler(count_warning, NULL);
  CHECK(sk_ops_init() == 0, "ops register");
  float av[] = {1, 2, 3}, bv[] = {10, 20, 30};
  SkTensor *a = vec(3, av), *b = vec(3, bv), *r = NULL;
  SkScalar one = sk_scalar_int(1);

  /* {==== unboxed call of an unboxed kernel ==== */
  CHECK(sk_add(&r, a, b, sk_scalar_int(2)) == 0 && at(r, 2) == 63, "sk_add unboxed");
  sk_tensor_release(r);
  /* }==== */

  /* {==== boxed call of an unboxed kernel (the generated unbox adapter) ==== */
  SkStack s;
  sk_stack_init(&s);
  sk_push_tensor(&s, a);
  sk_push_tensor(&s, b);
  sk_push_scalar(&s, one);
  CHECK(sk_call_boxed(sk_op_add_Tensor, &s) == 0 && s.n == 1 && s.v[0].tag == SK_VAL_TENSOR && at(s.v[0].u.t, 0) == 11,
        "boxed call through the unbox adapter");
  sk_stack_free(&s);
  /* an in-place op called boxed returns self itself */
  sk_push_tensor(&s, a);
  sk_push_tensor(&s, b);
  sk_push_scalar(&s, one);
  uint64_t v0 = a->storage->version;
  CHECK(sk_call_boxed(sk_op_add__Tensor, &s) == 0 && s.v[0].u.t == a && at(a, 0) == 11 && a->storage->version == v0 + 1,
        "boxed in-place returns self and bumps the version once");
  sk_stack_free(&s);
  /* }==== */

  /* {==== borrowed lists: stack values that own neither their array nor their tensors ==== */
  {
    int64_t dims[2] = {1, 0};
    SkTensor *ts[2] = {a, b};
    int ra = a->refcount, rb = b->refcount;
    CHECK(sk_push_list_borrowed(&s, SK_VAL_INTLIST, dims, 2) == 0 && sk_push_list_borrowed(&s, SK_VAL_TENSORLIST, ts, 2) == 0 &&
          s.v[0].u.ints == dims && s.v[1].u.tensors == ts && s.v[1].n == 2, "borrowed lists point at the caller's arrays");
    sk_stack_truncate(&s, 0);
    CHECK(a->refcount == ra && b->refcount == rb && ts[0] == a && dims[0] == 1, "dropping them frees and releases nothing");
    sk_push_list_borrowed(&s, SK_VAL_TENSORLIST, ts, 2);
    CHECK(sk_value_own(&s.v[0]) == 0 && s.v[0].u.tensors != ts && s.v[0].u.tensors[1] == b && a->refcount == ra + 1 &&
          b->refcount == rb + 1, "sk_value_own copies the array and takes a reference per tensor");
    sk_stack_free(&s);
    CHECK(a->refcount == ra && b->refcount == rb, "the owned copy is released with the stack");
    sk_push_list_borrowed(&s, SK_VAL_INTLIST, dims, 2);
    sk_stack_truncate(&s, 0);
    sk_push_intlist(&s, dims, 2); /* the slot again: an owned copy, freed with the stack (valgrind sees a leak if not) */
    CHECK(s.v[0].dev == 0 && s.v[0].u.ints != dims && s.v[0].u.ints[0] == 1, "a push clears the borrowed mark");
    sk_stack_free(&s);
  }
  /* }==== */

  /* {==== unboxed call of a boxed kernel (the generated box adapter); override and restore ==== */
  int calls = 0;
  SkKernel k = {NULL, boxed_forty_two, &calls, "test", 0};
  int w0 = warnings;
  int id = sk_op_register(sk_op_add_Tensor, SK_KEY_CPU, &k, NULL);
  CHECK(id > 0 && warnings == w0 + 1 && strstr(last_warning, "overriding the CPU kernel of 'aten::add.Tensor'"),
        "registering over a kernel warns");
  r = NULL;
  CHECK(sk_add(&r, a, b, one) == 0 && calls == 1 && r && r->numel == 1 && at(r, 0) == 42, "unboxed call reaches the boxed kernel");
  sk_tensor_release(r);
  SkKernelInfo info[SK_KEY_NUM_RUNTIME];
  int n = sk_op_table(sk_op_add_Tensor, info, SK_KEY_NUM_RUNTIME);
  const SkKernelInfo *cpu = info_for(info, n, SK_KEY_CPU);
  CHECK(cpu && cpu->boxed && strcmp(cpu->origin, "test") == 0, "the table shows the boxed override");
  CHECK(sk_op_deregister(sk_op_add_Tensor, id) == 0, "deregister");
  r = NULL;
  CHECK(sk_add(&r, a, b, one) == 0 && calls == 1 && at(r, 0) == 21, "removing the override restores the generated kernel");
  sk_tensor_release(r);
  /* }==== */

  /* {==== a boxed kernel breaking the schema ==== */
  SkKernel bad = {NULL, boxed_returns_nothing, NULL, "bad", 0};
  id = sk_op_register(sk_op_add_Tensor, SK_KEY_CPU, &bad, NULL);
  r = NULL;
  CHECK(sk_add(&r, a, b, one) == -1 && r == NULL &&
        strstr(sk_error_message(), "kernel for 'aten::add.Tensor' returned 0 values, the schema says 1"),
        "a kernel returning the wrong count is an error");
  sk_op_deregister(sk_op_add_Tensor, id);
  /* }==== */

  /* {==== table sources ==== */
  n = sk_op_table(sk_op_add_Tensor, info, SK_KEY_NUM_RUNTIME);
  CHECK(info_for(info, n, SK_KEY_CPU)->source == SK_SRC_DIRECT, "add.Tensor CPU is direct");
  CHECK(info_for(info, n, SK_KEY_CUDA)->source == SK_SRC_DEFAULT_BACKEND, "add.Tensor CUDA comes from DefaultBackend");
  CHECK(info_for(info, n, SK_KEY_META)->source == SK_SRC_DIRECT, "add.Tensor Meta is generated");
  n = sk_op_table(sk_op_zeros, info, SK_KEY_NUM_RUNTIME);
  CHECK(info_for(info, n, SK_KEY_CPU)->source == SK_SRC_MATH && info_for(info, n, SK_KEY_UNDEFINED), "zeros comes from Math, Undefined too");
  n = sk_op_table(sk_op_empty_memory_format, info, SK_KEY_NUM_RUNTIME);
  CHECK(info_for(info, n, SK_KEY_BACKEND_SELECT) != NULL, "empty has a BackendSelect kernel");
  /* }==== */

  /* {==== thread-local sets: exclude CPU, include Meta ==== */
  sk_tls_exclude = SK_KEYSET(SK_KEY_CPU);
  CHECK(sk_uniform_(a, 0, 1, NULL) == -1 && strstr(sk_error_message(), "excluded on this thread (CPU)"), "TLS exclude hides CPU");
  sk_tls_exclude = 0;
  int64_t two = 2;
  SkTensor *mt = sk_tensor_empty(1, &two, SK_DTYPE_FLOAT32, SK_META), *zero = sk_tensor_wrap_number(sk_scalar_int(0));
  sk_tls_include = SK_KEYSET(SK_KEY_META);
  r = NULL;
  CHECK(sk_mul(&r, zero, zero) == 0 && r->device.type == SK_DEVICE_META, "TLS include sends CPU scalars to Meta");
  sk_tls_include = 0;
  sk_tensor_release(r);
  r = NULL;
  CHECK(sk_add(&r, mt, zero, one) == 0 && r->device.type == SK_DEVICE_META && r->numel == 2, "a meta tensor with a CPU scalar runs on Meta");
  sk_tensor_release(r);
  sk_tensor_release(mt);
  sk_tensor_release(zero);
  /* }==== */

  /* {==== boxed key sets: unrolled (up to 4 plain tensors) and general (more, or lists) ==== */
  {
    static const SkArg T = {"t", SK_T_TENSOR, 0, 0, 0, 0, 0, 0, 0, 0, -1, NULL};
    static const SkArg OPT = {"t", SK_T_TENSOR, 0, 1, 0, 0, 0, 0, 0, 0, -1, NULL};
    static const SkArg LIST = {"ts", SK_T_TENSOR, 1, 0, 0, 0, 0, 0, 0, 0, -1, NULL};
    const SkArg five_args[] = {T, T, T, T, T}, opt_args[] = {OPT, T}, list_args[] = {LIST, T};
    SkOperator *five = keyset_op("five", 5, five_args), *opt = keyset_op("opt", 2, opt_args), *lst = keyset_op("lst", 2, list_args);
    CHECK(five && opt && lst, "define ops with 5 tensors, an optional tensor, a tensor list");
    int64_t one_i = 1;
    SkTensor *c = a, *m = sk_tensor_empty(1, &one_i, SK_DTYPE_FLOAT32, SK_META);
    SkTensor *const cccc_m[] = {c, c, c, c, m}, *const ccccc[] = {c, c, c, c, c}, *const none_m[] = {NULL, m},
                    *const m_c[] = {m, c}, *const none_c[] = {NULL, c}, *const cm[] = {c, m}, *const cc[] = {c, c};
    CHECK(reached(five, -1, NULL, 5, cccc_m) == 2 && reached(five, -1, NULL, 5, ccccc) == 1, "the fifth tensor's key counts");
    CHECK(reached(opt, -1, NULL, 2, none_m) == 2 && reached(opt, -1, NULL, 2, m_c) == 2 && reached(opt, -1, NULL, 2, none_c) == 1,
          "an absent optional tensor adds no key");
    CHECK(reached(lst, 2, cm, 1, &c) == 2 && reached(lst, 2, cc, 1, &c) == 1 && reached(lst, 0, NULL, 1, &m) == 2,
          "tensors in a list count");
    CHECK(undefine(five) == 0 && undefine(opt) == 0 && undefine(lst) == 0, "undefine them");
    sk_tensor_release(m);
  }
  /* }==== */

  /* {==== a backend registered at run time: no kernel, then a fallback ==== */
  SkDeviceHooks hooks = {.alloc = host_alloc, .free = host_free};
  int npu;
  CHECK(sk_device_register("npu", &hooks, &npu) == 0, "register a device type");
  int64_t three = 3;
  SkTensor *x = sk_tensor_empty(1, &three, SK_DTYPE_FLOAT32, sk_device(npu, 0));
  int key = sk_device_key(x->device);
  CHECK(sk_uniform_(x, 0, 1, NULL) == -1 &&
        strstr(sk_error_message(), "no kernel for 'aten::uniform_' on backend 'npu' (registered for: CPU, Meta; no fallback)"),
        "no kernel names op, backend, what exists and the fallback state");
  r = NULL;
  CHECK(sk_add(&r, x, x, one) == -1 && strstr(sk_error_message(), "no kernel for 'aten::add.out' on backend 'npu'"),
        "add.Tensor reaches add.out through DefaultBackend");
  int fb_calls = 0;
  int fid = sk_fallback_register(key, counting_fallback, &fb_calls, "test", NULL);
  CHECK(fid > 0, "register a fallback");
  CHECK(sk_uniform_(x, 0, 1, NULL) == -1 && fb_calls == 1 && strcmp(fallback_saw, "aten::uniform_") == 0, "the fallback runs");
  n = sk_op_table(sk_op_uniform_, info, SK_KEY_NUM_RUNTIME);
  CHECK(info_for(info, n, key) && info_for(info, n, key)->source == SK_SRC_FALLBACK, "the table shows the fallback");
  CHECK(sk_fallback_deregister(fid) == 0 && sk_uniform_(x, 0, 1, NULL) == -1 && fb_calls == 1, "fallback removed");
  sk_tensor_release(x);
  CHECK(sk_device_unregister(npu) == 0, "unregister the device type");
  /* }==== */

  /* {==== backend records: policies, what a run-time record gets, compiled-in rows, all or nothing ==== */
  {
    SkBackend rec = {"rec",
                     {.alloc = host_alloc, .free = host_free, .copy_from_cpu = host_copy, .copy_to_cpu = host_copy,
                      .copy_same = host_copy, .release = count_release},
                     SK_BACKEND_FALLBACK_CPU};
    int t;
    CHECK(sk_backend_register(&rec, &t) == 0 && t >= SK_DEVICE_FIRST_CUSTOM, "register a run-time record");
    int rk = sk_device_key(sk_device(t, 0));
    CHECK(sk_fallback_active(rk) && sk_key_registrations(rk) == 3, "its fallback (the policy), empty and fill_");
    SkTensor *z = NULL, *p = NULL;
    SkIntList size = {&three, 1};
    CHECK(sk_full(&z, size, sk_scalar_float(1.5), -1, -1, sk_device(t, 0), -1) == 0 && z->device.type == t &&
          ((float *)sk_tensor_data(z))[2] == 1.5f, "full allocates through the hooks and fills with the CPU's fill_");
    CHECK(sk_mul(&p, z, z) == 0 && p->device.type == t && ((float *)sk_tensor_data(p))[1] == 2.25f &&
          sk_fallback_calls(sk_op_mul_out, rk) == 1, "an op without a kernel runs on the CPU fallback, counted");
    sk_tensor_release(p);
    sk_tensor_release(z);
    SkKernel extra = {NULL, counting_fallback, &fb_calls, "test", 0};
    int eid = sk_op_register(sk_op_mul_out, rk, &extra, NULL);
    CHECK(sk_backend_unregister(t) == -1 && strstr(sk_error_message(), "backend 'rec' still has kernels or a fallback"),
          "unregistering is refused while another's kernel remains");
    CHECK(sk_op_deregister(sk_op_mul_out, eid) == 0 && sk_backend_unregister(t) == 0 && sk_key_registrations(rk) == 0 &&
          !sk_device_type(t) && releases == 1, "then it removes its own registrations, the type, and releases the hooks");
    SkBackend dev = {"devmem",
                     {.alloc = host_alloc, .free = host_free, .copy_from_cpu = host_copy, .copy_to_cpu = host_copy,
                      .copy_same = host_copy, .device_memory = 1},
                     SK_BACKEND_FALLBACK_NONE};
    CHECK(sk_backend_register(&dev, &t) == 0 && sk_key_registrations(sk_device_key(sk_device(t, 0))) == 1 &&
          !sk_fallback_active(sk_device_key(sk_device(t, 0))), "device memory, no fallback: empty only");
    CHECK(sk_backend_unregister(t) == 0, "unregister it");
    SkBackend dc = {"devcopy",
                    {.alloc = host_alloc, .free = host_free, .copy_from_cpu = counted_host_copy,
                     .copy_to_cpu = counted_host_copy, .copy_same = counted_host_copy, .copy_tensor = device_copy},
                    SK_BACKEND_FALLBACK_NONE};
    CHECK(sk_backend_register(&dc, &t) == 0, "register a record with a copy_tensor hook");
    int64_t sz[2] = {2, 3};
    SkTensor *u = NULL, *ut = NULL, *w = NULL;
    SkIntList shape = {sz, 2};
    CHECK(sk_zeros(&u, shape, SK_DTYPE_FLOAT32, -1, sk_device(t, 0), -1) == 0 &&
          sk_zeros(&w, shape, SK_DTYPE_INT64, -1, sk_device(t, 0), -1) == 0, "two tensors on it");
    host_copies = device_copies = 0;
    CHECK(sk_copy_(w, u, 0) == 0 && device_copies == 1 && host_copies == 0, "a converting copy_ on one device uses the hook");
    int64_t perm[2] = {1, 0};
    SkIntList dims = {perm, 2};
    int64_t sz_t[2] = {3, 2};
    SkIntList shape_t = {sz_t, 2};
    SkTensor *w2 = NULL;
    CHECK(sk_permute(&ut, u, dims) == 0 && sk_zeros(&w2, shape_t, SK_DTYPE_FLOAT32, -1, sk_device(t, 0), -1) == 0 &&
          sk_copy_(w2, ut, 0) == 0 && device_copies == 2 && host_copies == 0, "so does a strided one, with no host transfer");
    sk_tensor_release(u);
    sk_tensor_release(ut);
    sk_tensor_release(w);
    sk_tensor_release(w2);
    CHECK(sk_backend_unregister(t) == 0, "unregister it");
    SkBackend badname = {"Bad!", rec.hooks, SK_BACKEND_FALLBACK_CPU};
    CHECK(sk_backend_register(&badname, &t) == -1 && strstr(sk_error_message(), "must use lowercase letters") && releases == 1,
          "a refused record keeps nothing and leaves hooks.ud to the caller");
    SkBackend cpu_row = {"cpu", rec.hooks, SK_BACKEND_FALLBACK_NONE};
    CHECK(sk_backend_register(&cpu_row, &t) == -1 && strstr(sk_error_message(), "backend 'cpu' is already registered"),
          "the CPU's row is static");
    SkBackend cuda = {"cuda",
                      {.alloc = host_alloc, .free = host_free, .copy_from_cpu = host_copy, .copy_to_cpu = host_copy,
                       .copy_same = host_copy, .device_memory = 1},
                      SK_BACKEND_FALLBACK_CPU};
    CHECK(sk_backend_register(&cuda, &t) == 0 && t == SK_DEVICE_CUDA && sk_device_type(t)->hooks.alloc == host_alloc &&
          sk_fallback_active(SK_KEY_CUDA) && sk_key_registrations(SK_KEY_CUDA) == 2 &&
          sk_op_empty_memory_format->table[SK_KEY_CUDA].unboxed != NULL,
          "a compiled-in row gets its hooks, its fallback and empty (the fallback's move to it needs one)");
    CHECK(sk_backend_register(&cuda, &t) == -1 && strstr(sk_error_message(), "backend 'cuda' is already registered"),
          "once");
    CHECK(sk_backend_unregister(SK_DEVICE_CUDA) == -1 && strstr(sk_error_message(), "not a registered run-time backend"),
          "a compiled-in row stays");
  }
  /* }==== */

  sk_tensor_release(a);
  sk_tensor_release(b);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
