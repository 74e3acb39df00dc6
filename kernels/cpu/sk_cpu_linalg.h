/*
** sk_cpu_linalg.h — the batch machinery of sk.linalg's LAPACK kernels (sk_cpu_linalg*.c)
** Each matrix of a batch is copied into a column-major scratch buffer of its dtype (LAPACK's
** layout; float32 runs LAPACKE_s*, float64 LAPACKE_d*), the routine runs there, and the result
** is copied out. Copies go through the tensors' own strides, so any input layout (transposed,
** expanded, a batch broadcast against another operand's) and any out= layout work without a
** contiguous copy first. info is LAPACK's (0 ok, > 0 the 1-based failing index), int32.
** Threads: a batch of small matrices runs in parallel over its matrices, each LAPACK call on one
** thread (OpenBLAS's pool stays at one thread, as in sk_cpu_blas.c); a lone large matrix gets
** OpenBLAS's threads for the duration of its call instead.
*/
#ifndef SK_CPU_LINALG_H
#define SK_CPU_LINALG_H

#include "sk_kernels.h"

#include <lapacke.h>
#include <stdint.h>

#define SK_LIN_INFO_COMPLEX INT32_MIN /* eig: a complex eigenvalue (sk has no complex dtypes) */
#define SK_LIN_INFO_NONFINITE (-4)    /* svd: NaN or inf in A (gesdd's own code in LAPACK 3.10+) */

/* One operand: its data, its matrix strides (element (i, j) at i·rs + j·cs) and where each
** batch index's matrix starts. The batch is the call's (bsizes[nb]), broadcast: a batch dim
** the operand lacks or has as 1 does not move it. */
typedef struct SkLinMat {
  char *data;
  int dbl;                      /* float64, else float32 */
  int64_t rs, cs;
  int nb;                       /* call's batch dims */
  int64_t bsizes[SK_MAX_DIMS];  /* call's batch sizes */
  int64_t bstrides[SK_MAX_DIMS]; /* this operand's stride per call batch dim (0: broadcast) */
} SkLinMat;

/* t's last `inner` dims are the matrix (inner 1: a column vector, 0: one value per matrix), its
** leading dims broadcast to the batch bsizes[nb]; trans swaps the matrix strides. */
void sk_cpu_lin_mat_init(SkLinMat *M, const SkTensor *t, int inner, const int64_t *bsizes, int nb, int trans);
int64_t sk_cpu_lin_offset(const SkLinMat *M, int64_t b); /* element offset of matrix b */
/* Copies the r x c matrix b of M into the column-major buf (leading dimension ld). */
void sk_cpu_lin_load(const SkLinMat *M, int64_t b, int64_t r, int64_t c, void *buf, int64_t ld);
/* Copies the column-major buf into matrix b; tri > 0 writes zeros below the diagonal, tri < 0
** above it, unit ones on it. */
void sk_cpu_lin_store(const SkLinMat *M, int64_t b, int64_t r, int64_t c, const void *buf, int64_t ld, int tri, int unit);
/* Matrix b of M as LAPACK's r x c column-major output in place (leading dimension *ld), or NULL
** when M's layout is not that one and the result goes through scratch and sk_cpu_lin_store. */
void *sk_cpu_lin_direct(const SkLinMat *M, int64_t b, int64_t r, int64_t c, lapack_int *ld);
void sk_cpu_lin_put(const SkTensor *t, const SkLinMat *M, int64_t b, double v); /* one value per matrix */
double sk_cpu_lin_at(const void *buf, int dbl, int64_t i);
/* The batch of t (its dims but the last `inner`) into bsizes[*nb]; returns the matrix count. */
int64_t sk_cpu_lin_batch(const SkTensor *t, int inner, int64_t *bsizes, int *nb);
int sk_cpu_lin_check_size(int64_t r, int64_t c, const char *fn); /* LAPACK's int sizes */

/* PyTorch's _linalg_check_errors text for one info (batch_index named unless is_matrix). */
int sk_cpu_lin_info_error(const char *api, int32_t info, int64_t batch_index, int is_matrix);
/* The first nonzero element of an int32 info tensor as that error; 0 when none. */
int sk_cpu_lin_check_info(const SkTensor *info, const char *api, int is_matrix);

/* One op over a batch: run(job, b, scratch) does matrix b in its thread's scratch. */
typedef struct SkLinJob SkLinJob;
struct SkLinJob {
  int (*run)(const SkLinJob *j, int64_t b, char *scratch);
  int64_t n, r, c;     /* matrix sizes (square order; B's rows and columns) */
  int dbl;
  size_t bytes;        /* scratch per thread */
  int64_t lwork;       /* a driver's queried workspace, in elements */
  SkLinMat a, b, out, out2, out3;
  const SkTensor *t_info, *t_v1, *t_v2;
  int flag1, flag2, flag3, flag4;
  int32_t *infos;      /* per matrix, for sk_cpu_lin_go_checked */
  int failed;          /* a chunk's malloc failed */
};

/* A's matrices are row-major: a kernel that can work on Aᵀ loads that (a straight copy). */
int sk_cpu_lin_row_major(const SkTensor *A);
/* A job over A's batch of r x c matrices (n the larger side); returns the matrix count. */
int64_t sk_cpu_lin_job_init(SkLinJob *j, const SkTensor *A, int64_t *bs, int *nb);
/* Scratch per thread: elems of the job's dtype, then ints LAPACK ints (sk_cpu_lin_ints). */
int sk_cpu_lin_scratch(SkLinJob *j, int64_t elems, int64_t ints, const char *fn);
lapack_int *sk_cpu_lin_ints(const SkLinJob *j, char *scratch, int64_t elems);
int sk_cpu_lin_go(SkLinJob *j, int64_t batch, const char *fn);
/* As sk_cpu_lin_go, with j->infos: the first nonzero info is raised under fn's name. */
int sk_cpu_lin_go_checked(SkLinJob *j, int64_t batch, const char *fn, int is_matrix);

#endif
