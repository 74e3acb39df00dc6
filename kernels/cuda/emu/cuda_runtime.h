/*
** cuda_runtime.h (emulation) — the part of the CUDA runtime that sk's CUDA module uses, on the CPU
** `make cuda-emu` compiles kernels/cuda against this folder instead of the toolkit, so
** the module's host logic, launch arguments and kernel arithmetic run where there is no
** GPU. Only the calls the module makes exist; each checks the rules a real GPU enforces
** (or crashes on) and fails with an error code whose cudaGetErrorString names the problem
** and, at kernel time, the kernel. Invariants: device memory is only ever memory that
** cudaMalloc mapped (apart from the host heap, a guard page after each allocation); every
** allocation belongs to one device; kernels run on the calling host thread (SK_LAUNCH in
** sk_cuda_launch.h), one block at a time, in order; the threads of a block run as
** cooperative fibers that switch only at __syncthreads (a block that never reaches one runs
** its threads as plain calls, in order).
*/
#ifndef SK_CUDA_EMU_RUNTIME_H
#define SK_CUDA_EMU_RUNTIME_H

#define SK_CUDA_EMU 1 /* sk_cuda_launch.h launches through sk_emu_launch */

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The codes are CUDA's own numbers, so messages that print them read the same. */
typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotSupported = 801
} cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

/* SK_CUDA_EMU_DEVICES devices (default 2; 0 makes cudaGetDeviceCount fail with cudaErrorNoDevice). */
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);     /* the calling thread's current device */
cudaError_t cudaSetDevice(int device);
/* On the current device. SK_CUDA_EMU_MEMORY=bytes limits what each device holds: beyond it
** (the sizes asked, summed over live allocations) cudaMalloc fails with cudaErrorMemoryAllocation. */
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
/* The current device's total (SK_CUDA_EMU_MEMORY, else the host's physical memory) and what is not in use. */
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);          /* the last error, reset to cudaSuccess */
/* The message of the last error when `error` is its code (it names the problem), else the code's generic text. */
const char *cudaGetErrorString(cudaError_t error);

/* {==== The emulation's own (used by the launch helper and the cuBLAS emulation) ==== */
/* Records `error` as the last error with its message; returns it. */
cudaError_t sk_emu_fail(cudaError_t error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 when p lies inside a live allocation of the current device; otherwise records an
** error whose message says what p is (host memory, freed, another device), prefixed by `who`. */
cudaError_t sk_emu_check_device_pointer(const void *p, size_t bytes, const char *who);
/* }==== */

#ifdef __cplusplus
}

/* {==== Kernels on the host ==== */
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct uint3 { unsigned x, y, z; };
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
struct alignas(16) float4 { float x, y, z, w; };

/* __shared__ storage is one object per host thread: the block running on that thread owns
** it (its fibers share it), and the next block finds what the last one left, as no kernel may
** assume otherwise. Static __shared__ arrays only: dynamic shared memory is not emulated. */
#define __shared__ static thread_local

/* The running emulated thread's coordinates (thread-local: one launch per host thread; the
** scheduler sets threadIdx before it resumes a fiber). Plain structs: a thread_local of a
** type with a constructor makes every read, in every kernel's index arithmetic, a call. */
extern thread_local uint3 threadIdx, blockIdx, blockDim, gridDim;

/* A barrier for the threads of one block: each waits until every thread of the block has
** reached it. A thread that returns while others wait at one fails the launch, naming the
** kernel (on a GPU it is undefined behaviour). */
void __syncthreads(void);

/* The steps of a launch: the configuration check, the argument checks, then every block:
** thread(body) runs one emulated thread, the coordinates already set. */
cudaError_t sk_emu_launch_begin(const char *kernel, dim3 grid, dim3 block);
cudaError_t sk_emu_check_kernel_pointer(const char *kernel, int arg, int index, const void *p);
cudaError_t sk_emu_run_blocks(const char *kernel, dim3 grid, dim3 block, void (*thread)(void *), void *body);

namespace sk_emu {
/* A kernel argument's device pointers: a raw pointer is one; a struct that lists its own
** (`int pointers(const void **p) const`, at most MAX_POINTERS; sk_cuda_launch.h) gives
** those; anything else has none. */
enum { MAX_POINTERS = 8 };
template <typename T>
auto check_arg(const char *kernel, int arg, const T &a, int) -> decltype(a.pointers((const void **)0), cudaError_t()) {
  const void *p[MAX_POINTERS];
  int n = a.pointers(p);
  for (int i = 0; i < n; i++)
    if (cudaError_t e = sk_emu_check_kernel_pointer(kernel, arg, i, p[i])) return e;
  return cudaSuccess;
}
template <typename T> cudaError_t check_arg(const char *kernel, int arg, T *const &a, int) {
  return sk_emu_check_kernel_pointer(kernel, arg, -1, (const void *)a);
}
template <typename T> cudaError_t check_arg(const char *, int, const T &, long) { return cudaSuccess; }

/* The arguments already converted to the kernel's parameter types, as a real launch copies them. */
template <typename... P>
cudaError_t run(const char *kernel, void (*k)(P...), dim3 grid, dim3 block, typename std::decay<P>::type... args) {
  if (cudaError_t e = sk_emu_launch_begin(kernel, grid, block)) return e;
  cudaError_t bad = cudaSuccess;
  int arg = 0;
  ((bad = bad ? bad : check_arg(kernel, arg, args, 0), arg++), ...);
  if (bad) return bad; /* the check recorded it */
  auto body = [&] { k(args...); };
  return sk_emu_run_blocks(kernel, grid, block, [](void *b) { (*static_cast<decltype(body) *>(b))(); }, &body);
}
} // namespace sk_emu

/* What SK_LAUNCH calls: the launch's error is also the last error, as on a GPU. */
template <typename... P, typename... A>
void sk_emu_launch(const char *kernel, void (*k)(P...), dim3 grid, dim3 block, A &&...args) {
  sk_emu::run<P...>(kernel, k, grid, block, std::forward<A>(args)...);
}
/* }==== */
#endif

#endif
