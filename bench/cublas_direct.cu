/*
** bench/cublas_direct.cu — cuBLAS gemm called directly: the baseline of bench_cuda.lua
** Usage: cublas_direct N float32|float16|bfloat16 -> prints TFLOP/s of an N^3 gemm.
** The same call as sk's matmul (kernels/cuda/sk_cuda_kernels.cu, gemm): cublasGemmStridedBatchedEx
** with one batch, pedantic math (TF32 off), the same compute types, on inputs drawn like sk.rand
** (uniform [0, 1)): a gemm on zeros runs faster than on data and would flatter the baseline.
** Any failure prints why on stderr and exits 1, so the benchmark row fails instead of vanishing.
*/
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const char *why) {
  fprintf(stderr, "cublas_direct: %s failed: %s\n", what, why);
  exit(1);
}
static void cuda(cudaError_t e, const char *what) { if (e != cudaSuccess) fail(what, cudaGetErrorString(e)); }
static void blas(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS) { char b[32]; snprintf(b, sizeof b, "status %d", (int)s); fail(what, b); }
}

/* n values uniform in [0, 1) in dtype t, copied to a new device buffer. */
static void *random_matrix(size_t n, cudaDataType_t t, uint64_t seed) {
  size_t isz = t == CUDA_R_32F ? 4 : 2;
  char *h = (char *)malloc(n * isz);
  if (!h) fail("malloc", "out of memory");
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    float v = (float)(seed >> 40) * 0x1p-24f;
    if (t == CUDA_R_32F) ((float *)h)[i] = v;
    else if (t == CUDA_R_16F) ((__half *)h)[i] = __float2half(v);
    else ((__nv_bfloat16 *)h)[i] = __float2bfloat16(v);
  }
  void *d;
  cuda(cudaMalloc(&d, n * isz), "cudaMalloc");
  cuda(cudaMemcpy(d, h, n * isz, cudaMemcpyHostToDevice), "cudaMemcpy");
  free(h);
  return d;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8192;
  const char *dt = argc > 2 ? argv[2] : "float32";
  cudaDataType_t t = !strcmp(dt, "float16") ? CUDA_R_16F : !strcmp(dt, "bfloat16") ? CUDA_R_16BF : CUDA_R_32F;
  if (t == CUDA_R_32F && strcmp(dt, "float32")) fail("parsing the dtype", dt);
  cublasComputeType_t c = t == CUDA_R_32F ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  size_t nn = (size_t)n * n;
  void *a = random_matrix(nn, t, 1), *b = random_matrix(nn, t, 2), *d = random_matrix(nn, t, 3);
  cublasHandle_t h;
  blas(cublasCreate(&h), "cublasCreate");
  blas(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  float one = 1, zero = 0;
  cudaEvent_t e0, e1;
  cuda(cudaEventCreate(&e0), "cudaEventCreate");
  cuda(cudaEventCreate(&e1), "cudaEventCreate");
  float best = 1e30f;
  for (int r = 0; r < 4; r++) { /* the first run warms up */
    cuda(cudaEventRecord(e0), "cudaEventRecord");
    blas(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, t, n, nn, a, t, n, nn, &zero, d, t, n,
                                    nn, 1, c, CUBLAS_GEMM_DEFAULT), "cublasGemmStridedBatchedEx");
    cuda(cudaEventRecord(e1), "cudaEventRecord");
    cuda(cudaEventSynchronize(e1), "cudaEventSynchronize");
    float ms;
    cuda(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    if (r > 0 && ms < best) best = ms;
  }
  printf("%.3f\n", 2.0 * n * n * (double)n / (best * 1e-3) / 1e12);
  return 0;
}
