/*
** test_cuda_emu.cpp — the CUDA emulation's rules, each broken once (make cuda-emu-spec)
** Built against kernels/cuda/emu alone: every case asserts the error code and the words
** of its message; the guard page is hit in a child process, which must exit 86.
*/
#include "sk_cuda_launch.h"
#include <cublas_v2.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void expect(const char *what, int ok) {
  if (!ok) { printf("FAIL %s\n", what); failures++; }
}

/* e is `code` and its message holds `words`. */
static void expect_error(const char *what, cudaError_t e, cudaError_t code, const char *words) {
  cudaGetLastError();
  const char *msg = cudaGetErrorString(e);
  if (e != code || !strstr(msg, words)) {
    printf("FAIL %s: error %d '%s', wanted %d with '%s'\n", what, (int)e, msg, (int)code, words);
    failures++;
  }
}

struct Pair {
  float *a, *b;
  int pointers(const void **p) const { p[0] = a; p[1] = b; return 2; }
};

__global__ void scale(float *x, int n, float s) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= s;
}
__global__ void add_pair(Pair p, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p.a[i] += p.b[i];
}
/* Each block sums its blockDim.x (a power of 2, at most 256) elements: a tree in shared memory. */
__global__ void block_sum(const float *x, float *sums) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * blockDim.x + t];
  for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
    __syncthreads();
    if (t < k) s[t] += s[t + k];
  }
  if (t == 0) sums[blockIdx.x] = s[0];
}
/* A 2-D block: each thread reads what the next one (in x, y order) wrote before the barrier. */
__global__ void rotate(float *x) {
  __shared__ float s[64];
  unsigned t = threadIdx.y * blockDim.x + threadIdx.x, n = blockDim.x * blockDim.y;
  s[t] = (float)(t * 10 + blockIdx.x);
  __syncthreads();
  x[blockIdx.x * n + t] = s[(t + 1) % n];
}
__global__ void early_return(float *x) {
  if (threadIdx.x == 3) return;
  __syncthreads();
  x[threadIdx.x] = 0;
}
__global__ void late_barrier(float *x) { /* thread 0 never reaches the barrier the others wait at */
  if (threadIdx.x > 0) __syncthreads();
  x[threadIdx.x] = 0;
}

int main(void) {
  int n = 0;
  expect("two devices by default", cudaGetDeviceCount(&n) == cudaSuccess && n == 2);
  expect_error("cudaSetDevice out of range", cudaSetDevice(2), cudaErrorInvalidDevice, "invalid device ordinal");

  float host[300], *d = NULL, *d1 = NULL;
  for (int i = 0; i < 300; i++) host[i] = (float)i;
  expect("cudaMalloc", cudaMalloc((void **)&d, sizeof host) == cudaSuccess && (uintptr_t)d % 256 == 0);
  expect("copy in", cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
  expect("launch", SK_LAUNCH(scale, 2, 128, d, 300, 2.0f) == cudaSuccess);
  float back[300];
  expect("copy out", cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess && back[299] == 598.0f);

  /* copies: the kind against the pointers, and the bounds */
  expect_error("host pointer as the destination of HostToDevice", cudaMemcpy(back, host, 4, cudaMemcpyHostToDevice),
               cudaErrorInvalidValue, "cudaMemcpyHostToDevice, 4 bytes): the destination: ");
  expect_error("device pointer as the destination of DeviceToHost", cudaMemcpy(d, d, 4, cudaMemcpyDeviceToHost),
               cudaErrorInvalidValue, "the destination");
  expect_error("past the end", cudaMemcpy(back, d + 299, 8, cudaMemcpyDeviceToHost), cudaErrorInvalidValue,
               "run past the end of the 1200-byte allocation");

  /* launches: configuration, pointers, devices, barriers */
  expect_error("0 threads", SK_LAUNCH(scale, 1, 0, d, 300, 1.0f), cudaErrorInvalidConfiguration, "kernel 'scale'");
  expect_error("2048 threads", SK_LAUNCH(scale, 1, 2048, d, 300, 1.0f), cudaErrorInvalidConfiguration,
               "more than 1024 threads per block");
  expect_error("grid y over 65535", SK_LAUNCH(scale, dim3(1, 70000), 32, d, 300, 1.0f), cudaErrorInvalidConfiguration,
               "grid dimension");
  expect_error("host pointer argument", SK_LAUNCH(scale, 1, 32, host, 300, 1.0f), cudaErrorInvalidDevicePointer,
               "kernel 'scale', argument 0: ");
  expect_error("host pointer in a struct", SK_LAUNCH(add_pair, 1, 32, Pair{d, host}, 300), cudaErrorInvalidDevicePointer,
               "kernel 'add_pair', argument 0 (its pointer 1): ");

  /* barriers and shared memory: threads of a block see each other's writes; blocks do not mix */
  float *x = NULL, *sums = NULL, ones[512], got[64];
  for (int i = 0; i < 512; i++) ones[i] = (float)(i % 7);
  expect("buffers", cudaMalloc((void **)&x, sizeof ones) == cudaSuccess && cudaMalloc((void **)&sums, sizeof got) == cudaSuccess);
  cudaMemcpy(x, ones, sizeof ones, cudaMemcpyHostToDevice);
  expect("block_sum", SK_LAUNCH(block_sum, 2, 256, x, sums) == cudaSuccess);
  cudaMemcpy(got, sums, 8, cudaMemcpyDeviceToHost);
  float want0 = 0, want1 = 0;
  for (int i = 0; i < 256; i++) { want0 += ones[i]; want1 += ones[256 + i]; }
  expect("block sums", got[0] == want0 && got[1] == want1);
  expect("rotate", SK_LAUNCH(rotate, 2, dim3(8, 4), sums) == cudaSuccess);
  cudaMemcpy(got, sums, sizeof got, cudaMemcpyDeviceToHost);
  int rotated = 1;
  for (int b = 0; b < 2; b++)
    for (int t = 0; t < 32; t++) rotated &= got[b * 32 + t] == (float)((t + 1) % 32 * 10 + b);
  expect("rotate through shared memory in a 2-D block", rotated);
  expect_error("a thread returns before the barrier", SK_LAUNCH(early_return, 1, 32, x), cudaErrorLaunchFailure,
               "kernel 'early_return', block (0, 0, 0): thread (3, 0, 0) returned while thread (0, 0, 0) waits at __syncthreads");
  expect_error("thread 0 skips the barrier", SK_LAUNCH(late_barrier, 1, 32, x), cudaErrorLaunchFailure,
               "kernel 'late_barrier', block (0, 0, 0): thread (0, 0, 0) returned while thread (1, 0, 0) waits at __syncthreads");
  expect("block_sum again after a failed launch", SK_LAUNCH(block_sum, 2, 128, x, sums) == cudaSuccess);
  cudaMemcpy(got, sums, 8, cudaMemcpyDeviceToHost);
  want0 = want1 = 0;
  for (int i = 0; i < 128; i++) { want0 += ones[i]; want1 += ones[128 + i]; }
  expect("block sums of 128", got[0] == want0 && got[1] == want1);
  expect("free buffers", cudaFree(x) == cudaSuccess && cudaFree(sums) == cudaSuccess);

  expect("device 1", cudaSetDevice(1) == cudaSuccess && cudaMalloc((void **)&d1, 64) == cudaSuccess);
  expect_error("memory of another device", SK_LAUNCH(scale, 1, 32, d, 300, 1.0f), cudaErrorInvalidDevicePointer,
               "memory of device 0 while device 1 is current");
  cudaSetDevice(0);

  /* cuBLAS: argument rules and a product */
  cublasHandle_t h;
  expect("cublasCreate", cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  float one = 1, zero = 0;
  cublasStatus_t s = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 0, &one, d, CUDA_R_32F, 0, 0, d, CUDA_R_32F,
                                                1, 0, &zero, d, CUDA_R_32F, 2, 0, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  expect("lda 0 refused", s == CUBLAS_STATUS_INVALID_VALUE && strstr(cublasGetStatusString(s), "lda < max(1, rows of A)"));
  s = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, host, CUDA_R_32F, 2, 0, d, CUDA_R_32F, 2, 0,
                                 &zero, d + 8, CUDA_R_32F, 2, 0, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  expect("host matrix refused", s == CUBLAS_STATUS_INVALID_VALUE && strstr(cublasGetStatusString(s), "matrix A of batch 0"));
  /* d[0..3] = 0 1 2 3 (x2 = 0 2 4 6): A = B = [[0, 4], [2, 6]] column major; C = A B = [[8, 24], [12, 44]] */
  s = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d, CUDA_R_32F, 2, 0, d, CUDA_R_32F, 2, 0,
                                 &zero, d + 8, CUDA_R_32F, 2, 0, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  cudaMemcpy(back, d + 8, 16, cudaMemcpyDeviceToHost);
  expect("gemm", s == CUBLAS_STATUS_SUCCESS && back[0] == 8 && back[1] == 12 && back[2] == 24 && back[3] == 44);

  /* an overflow inside a kernel hits the guard page: the checker reports it and exits 86 */
  pid_t pid = fork();
  if (pid == 0) {
    fclose(stderr); /* the report is expected; keep the test's output clean */
    SK_LAUNCH(scale, 1, 32, d, 320 + 1024, 1.0f);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  expect("guard page", WIFEXITED(status) && WEXITSTATUS(status) == 86);

  expect("free", cudaFree(d) == cudaSuccess && cudaFree(d1) == cudaSuccess);
  expect_error("double free", cudaFree(d), cudaErrorInvalidValue, "not the start of a live device allocation");
  printf(failures ? "test_cuda_emu: %d failed\n" : "test_cuda_emu: all passed\n", failures);
  return failures != 0;
}
