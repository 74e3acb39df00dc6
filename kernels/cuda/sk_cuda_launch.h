/*
** sk_cuda_launch.h — the one way kernels/cuda launches a kernel
** SK_LAUNCH(kernel, grid, block, args...) is an expression of type cudaError_t: the
** launch's own error (a bad configuration, a bad argument), as cudaGetLastError reads it.
** Under nvcc it is `kernel<<<grid, block>>>(args...)`; against the emulated runtime
** (kernels/cuda/emu, `make cuda-emu`) it runs the kernel on the CPU after checking the
** configuration and every device pointer the arguments carry. A parameter struct tells
** the emulation its pointers with a member `int pointers(const void **p) const` that
** stores at most 8 (the ones the kernel may dereference) and returns their count.
*/
#ifndef SK_CUDA_LAUNCH_H
#define SK_CUDA_LAUNCH_H

#include <cuda_runtime.h>

#ifdef SK_CUDA_EMU
#define SK_LAUNCH(kernel, grid, block, ...) \
  (sk_emu_launch(#kernel, kernel, dim3(grid), dim3(block), __VA_ARGS__), cudaGetLastError())
#else
#define SK_LAUNCH(kernel, grid, block, ...) (kernel<<<(grid), (block)>>>(__VA_ARGS__), cudaGetLastError())
#endif

#endif
