/*
** sk.h — the public header for C users of sk and out-of-tree backends
** One include gives what a backend needs: errors, tensors, devices, the
** backend record, the dispatcher, the meta context and TensorIterator (to write host-memory
** kernels) and the generated dispatched C API (sk_add_out,
** sk_empty_memory_format, sk_to_device, ... and the typedefs sk_fn_<op>
** that unboxed kernels must match). sk's own kernels and meta functions
** (the generated sk_kernels.h) are not part of it.
**
** Writing a backend as a shared object (examples/backend_c/sk_cbackend.c):
**
**   1. Register the backend's record (sk_backend.h): its name, its hooks
**      (allocate, free and copy contiguous bytes; alloc returns NULL after
**      sk_error() on failure) and its fallback policy. The record gives it a
**      device type and dispatch key, `empty`, and on host memory `fill_`:
**
**        SkBackend b = {"mybackend", {.alloc = my_alloc, .free = my_free, .copy_from_cpu = my_from_cpu,
**                                     .copy_to_cpu = my_to_cpu, .copy_same = my_same},
**                       SK_BACKEND_FALLBACK_CPU};   (or _NONE: ops without a kernel raise)
**        int type;
**        if (sk_backend_register(&b, &type)) return -1;
**
**   2. Register kernels under the device's dispatch key. An unboxed kernel
**      has the exact signature of the generated typedef (here sk_fn_add_out):
**
**        SkKernel k = {(void *)my_add_out, NULL, NULL, "mybackend", 0};
**        int id = sk_op_register(sk_op_find("aten::add.out"), sk_device_key(sk_device(type, 0)), &k, NULL);
**
**      A boxed kernel sets .boxed (an SkBoxedFn) and .ctx instead; it may
**      hand a call to the CPU fallback with sk_cpu_fallback_call() from
**      "sk_cpu_fallback.h". An `<op>.out` kernel gives the
**      functional and in-place variants of a structured op through
**      DefaultBackend. Kernels report errors as values: return -1 after
**      sk_error(...); they never longjmp or abort.
**
**   3. Export the entry point; return non-zero after sk_error() on failure:
**
**        int sk_backend_init(void);
**
**   4. Build without linking against sk (its symbols resolve at load time):
**
**        cc -shared -fPIC -I$PREFIX/include/sk -o mybackend.so mybackend.c   (after make install)
**
**   5. Load it from Lua, once per process (a second load finds the device
**      name taken and raises "backend 'mybackend' is already registered"):
**
**        sk.load_backend("path/to/mybackend.so")
**        local t = sk.empty({3}, {device = "mybackend"})
*/
#ifndef SK_H
#define SK_H

#include "sk_error.h"
#include "sk_tensor.h"
#include "sk_device.h"
#include "sk_dispatch.h"
#include "sk_backend.h"
#include "sk_meta.h"
#include "sk_iter.h"
#include "sk_ops.h"

#endif
