/*
** sk_cuda_module.c — the CUDA module's entry: device hooks, init, the API the core loads
** Built only when nvcc is found, into build/sk/cuda.so next to core.so.
** Copies are synchronous on the default stream; kernels run on the default
** stream of the current device, which the device guard sets per call.
*/
#include "sk_cuda.h"
#include "sk_cuda_alloc.h"
#include "sk_backend.h"
#include "sk_error.h"
#include "sk_tensor.h"

#include <cuda_runtime.h>

int sk_ops_cuda_register(void); /* generated: the structured CUDA wrappers */

static int check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return 0;
  cudaGetLastError();
  return sk_error("CUDA error in %s: %s", what, cudaGetErrorString(e));
}

/* {==== Device hooks ==== */
static void *hook_alloc(void *ud, size_t n, SkDevice d) { (void)ud; return sk_cuda_alloc(d.index, n); }
static void hook_free(void *ud, void *p, size_t n, SkDevice d) { (void)ud; (void)n; sk_cuda_free(d.index, p); }

static int copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, const char *what) {
  return n ? check(cudaMemcpy(dst, src, n, kind), what) : 0;
}
static int hook_from_cpu(void *ud, void *dst, const void *src, size_t n, SkDevice d) {
  (void)ud; (void)d;
  return copy(dst, src, n, cudaMemcpyHostToDevice, "a copy to the device");
}
static int hook_to_cpu(void *ud, void *dst, const void *src, size_t n, SkDevice d) {
  (void)ud; (void)d;
  return copy(dst, src, n, cudaMemcpyDeviceToHost, "a copy from the device");
}
static int hook_same(void *ud, void *dst, const void *src, size_t n, SkDevice d) {
  (void)ud; (void)d;
  return copy(dst, src, n, cudaMemcpyDeviceToDevice, "a copy on the device");
}
static int hook_set_device(void *ud, int index, int *previous) {
  (void)ud;
  if (check(cudaGetDevice(previous), "cudaGetDevice")) return -1;
  return *previous == index ? 0 : check(cudaSetDevice(index), "cudaSetDevice");
}
int sk_cuda_copy_tensor(SkTensor *dst, const SkTensor *src); /* sk_cuda_kernels.cu */
/* copy_ on one device: its kernel runs on the tensors' device, then the caller's is current again */
static int hook_copy_tensor(void *ud, SkTensor *dst, const SkTensor *src) {
  (void)ud;
  SkDeviceGuard g;
  if (sk_device_guard_enter(&g, dst->device)) return -1;
  int rc = sk_cuda_copy_tensor(dst, src);
  sk_device_guard_exit(&g);
  return rc;
}
/* }==== */

static int ndevices, device_type;

static int init(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || n == 0) {
    cudaGetLastError();
    return sk_error(e == cudaErrorInsufficientDriver ? "no driver (%s)" : "no device (%s)", cudaGetErrorString(e));
  }
  if (e != cudaSuccess) { cudaGetLastError(); return sk_error("no driver (%s)", cudaGetErrorString(e)); }
  ndevices = n;
  /* ops without a CUDA kernel run on the CPU, counted per op */
  SkBackend b = {"cuda",
                 {.alloc = hook_alloc, .free = hook_free, .copy_from_cpu = hook_from_cpu, .copy_to_cpu = hook_to_cpu,
                  .copy_same = hook_same, .set_device = hook_set_device, .device_memory = 1,
                  .copy_tensor = hook_copy_tensor},
                 SK_BACKEND_FALLBACK_CPU};
  if (sk_backend_register(&b, &device_type)) return -1;
  return sk_ops_cuda_register();
}

static int device_count(void) { return ndevices; }

static int synchronize(int device) {
  if (device >= 0) {
    SkDeviceGuard g;
    if (sk_device_guard_enter(&g, sk_device(device_type, device))) return -1;
    int rc = check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    sk_device_guard_exit(&g);
    return rc;
  }
  for (int d = 0; d < ndevices; d++) if (synchronize(d)) return -1;
  return 0;
}

static const SkCudaApi api = {SK_CUDA_API_VERSION, init, device_count, synchronize, sk_cuda_alloc_empty_cache,
                              sk_cuda_alloc_stats};

const SkCudaApi *sk_cuda_module(void);
const SkCudaApi *sk_cuda_module(void) { return &api; }
