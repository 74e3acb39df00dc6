/*
** cublas_v2.h (emulation) — the cuBLAS calls sk's CUDA module makes, computed on the CPU
** Arguments are checked by cuBLAS's documented rules (sizes ≥ 0, leading dimensions
** ≥ max(1, rows), a handle used on its own device, matrices in live allocations of the
** current device); a failure returns CUBLAS_STATUS_INVALID_VALUE and
** cublasGetStatusString names the argument. Products accumulate in double.
*/
#ifndef SK_CUDA_EMU_CUBLAS_H
#define SK_CUDA_EMU_CUBLAS_H

#include "cuda_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_NOT_SUPPORTED = 15
} cublasStatus_t;

typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1, CUBLAS_PEDANTIC_MATH = 2 } cublasMath_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;
typedef enum { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14 } cudaDataType_t;
typedef enum {
  CUBLAS_COMPUTE_16F = 64,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_PEDANTIC = 69,
  CUBLAS_COMPUTE_64F = 70
} cublasComputeType_t;

typedef struct SkEmuCublas *cublasHandle_t;

cublasStatus_t cublasCreate(cublasHandle_t *handle); /* bound to the current device */
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
/* The message of the last failure when `status` is its code, else the code's generic text. */
const char *cublasGetStatusString(cublasStatus_t status);
/* C[i] = alpha op(A[i]) op(B[i]) + beta C[i], column major, i < batchCount; alpha and beta
** point to host values of the compute type (double for 64F, float otherwise). */
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                          int n, int k, const void *alpha, const void *A, cudaDataType_t Atype, int lda,
                                          long long strideA, const void *B, cudaDataType_t Btype, int ldb,
                                          long long strideB, const void *beta, void *C, cudaDataType_t Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo);

#ifdef __cplusplus
}
#endif

#endif
