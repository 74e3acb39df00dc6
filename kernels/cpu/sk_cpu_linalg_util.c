/*
** sk_cpu_linalg_util.c — what sk.linalg's LAPACK kernels share: batches, copies, jobs, errors
** See sk_cpu_linalg.h. A matrix is copied between a tensor (any strides, its batch broadcast
** to the call's) and a column-major scratch buffer; a job runs one routine per matrix,
** threaded over the batch; LAPACK's info becomes PyTorch's error texts.
*/
#include "sk_kernels.h"
#include "sk_cpu_linalg.h"
#include "sk_parallel.h"
#include "sk_checked.h"

#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {==== Matrices of a batch ====
** A SkLinMat names one operand: its data, its matrix strides (rs, cs: element (i, j) lies at
** i·rs + j·cs) and where each batch index's matrix starts. The batch is the call's (bsizes[nb]),
** broadcast: a batch dim the operand lacks or has as 1 does not move it. */

/* t's last `inner` dims are the matrix (inner 1: a column vector, 0: one value per matrix),
** its leading dims broadcast to the batch bsizes[nb]; trans swaps the matrix strides. */
void sk_cpu_lin_mat_init(SkLinMat *M, const SkTensor *t, int inner, const int64_t *bsizes, int nb, int trans) {
  M->data = sk_tensor_data(t);
  M->dbl = t->dtype == SK_DTYPE_FLOAT64;
  int64_t rs = inner >= 2 ? t->strides[t->ndim - 2] : inner == 1 ? t->strides[t->ndim - 1] : 0;
  int64_t cs = inner >= 2 ? t->strides[t->ndim - 1] : 0;
  M->rs = trans ? cs : rs;
  M->cs = trans ? rs : cs;
  M->nb = nb;
  int tb = t->ndim - inner;
  for (int d = 0; d < nb; d++) {
    int td = d - (nb - tb);
    M->bsizes[d] = bsizes[d];
    M->bstrides[d] = td >= 0 && t->sizes[td] != 1 ? t->strides[td] : 0;
  }
}

/* A's matrices are row-major (unit column stride): their transposes copy straight into LAPACK's
** column-major scratch, where A itself needs the tiled transposing copy. */
int sk_cpu_lin_row_major(const SkTensor *A) {
  return A->strides[A->ndim - 1] == 1 && A->strides[A->ndim - 2] != 1;
}

/* Element offset of batch index b's matrix. */
int64_t sk_cpu_lin_offset(const SkLinMat *M, int64_t b) {
  int64_t off = 0;
  for (int d = M->nb - 1; d >= 0; d--) {
    off += (b % M->bsizes[d]) * M->bstrides[d];
    b /= M->bsizes[d];
  }
  return off;
}

/* The copies run in 32 x 32 tiles: a row-major matrix goes to LAPACK's column-major layout
** (and back) transposed, and untiled one of the two sides would miss the cache on every
** element (8 ms of a 27 ms 1024² solve). tri > 0 writes zeros below the diagonal, tri < 0 above
** it, unit writes ones on it (unpacking triangular factors). */
#define TILE 32
/* load_<sfx> and store_<sfx> for element type T, one pair per LAPACK dtype */
#define SK_LIN_COPIES(T, sfx)                                                                                   \
  static void load_##sfx(const T *s, int64_t rs, int64_t cs, int64_t r, int64_t c, T *d, int64_t ld) {          \
    if (rs == 1) { /* column-major already */                                                                   \
      for (int64_t j = 0; j < c; j++) memcpy(d + j * ld, s + j * cs, (size_t)r * sizeof(T));                   \
      return;                                                                                                   \
    }                                                                                                           \
    for (int64_t jb = 0; jb < c; jb += TILE)                                                                    \
      for (int64_t ib = 0; ib < r; ib += TILE) {                                                                \
        int64_t je = jb + TILE < c ? jb + TILE : c, ie = ib + TILE < r ? ib + TILE : r;                         \
        for (int64_t j = jb; j < je; j++)                                                                       \
          for (int64_t i = ib; i < ie; i++) d[j * ld + i] = s[i * rs + j * cs];                                 \
      }                                                                                                         \
  }                                                                                                             \
  static void store_##sfx(T *d, int64_t rs, int64_t cs, int64_t r, int64_t c, const T *s, int64_t ld, int tri,  \
                          int unit) {                                                                           \
    if (rs == 1 && !tri && !unit) {                                                                             \
      for (int64_t j = 0; j < c; j++) memcpy(d + j * cs, s + j * ld, (size_t)r * sizeof(T));                   \
      return;                                                                                                   \
    }                                                                                                           \
    for (int64_t ib = 0; ib < r; ib += TILE)                                                                    \
      for (int64_t jb = 0; jb < c; jb += TILE) {                                                                \
        int64_t je = jb + TILE < c ? jb + TILE : c, ie = ib + TILE < r ? ib + TILE : r;                         \
        for (int64_t i = ib; i < ie; i++)                                                                       \
          for (int64_t j = jb; j < je; j++) {                                                                   \
            T v = s[j * ld + i];                                                                                \
            if ((tri > 0 && i > j) || (tri < 0 && i < j)) v = 0;                                                \
            else if (unit && i == j) v = 1;                                                                     \
            d[i * rs + j * cs] = v;                                                                             \
          }                                                                                                     \
      }                                                                                                         \
  }
SK_LIN_COPIES(float, f32)
SK_LIN_COPIES(double, f64)
#undef SK_LIN_COPIES

/* Copies the r x c matrix b of M into the column-major buf (leading dimension ld). */
void sk_cpu_lin_load(const SkLinMat *M, int64_t b, int64_t r, int64_t c, void *buf, int64_t ld) {
  int64_t off = sk_cpu_lin_offset(M, b);
  if (M->dbl) load_f64((const double *)M->data + off, M->rs, M->cs, r, c, buf, ld);
  else load_f32((const float *)M->data + off, M->rs, M->cs, r, c, buf, ld);
}

/* Copies the column-major r x c buf into matrix b of M (tri, unit: see above). */
void sk_cpu_lin_store(const SkLinMat *M, int64_t b, int64_t r, int64_t c, const void *buf, int64_t ld, int tri, int unit) {
  int64_t off = sk_cpu_lin_offset(M, b);
  if (M->dbl) store_f64((double *)M->data + off, M->rs, M->cs, r, c, buf, ld, tri, unit);
  else store_f32((float *)M->data + off, M->rs, M->cs, r, c, buf, ld, tri, unit);
}

/* Matrix b of M where its layout already is LAPACK's column-major one (unit row stride, column
** stride at least r and within LAPACK's int): a routine writes its r x c result there, with
** *ld, and no copy follows; NULL when M has another layout. */
void *sk_cpu_lin_direct(const SkLinMat *M, int64_t b, int64_t r, int64_t c, lapack_int *ld) {
  int64_t need = r > 1 ? r : 1;
  if ((r > 1 && M->rs != 1) || (c > 1 && (M->cs < need || M->cs > INT_MAX))) return NULL;
  *ld = (lapack_int)(c > 1 ? M->cs : need);
  return M->data + (size_t)sk_cpu_lin_offset(M, b) * (M->dbl ? 8 : 4);
}

/* One value per matrix (info, det, sign, rank ...) of an output of the batch. */
void sk_cpu_lin_put(const SkTensor *t, const SkLinMat *M, int64_t b, double v) {
  int64_t off = sk_cpu_lin_offset(M, b);
  char *p = (char *)sk_tensor_data(t);
  if (t->dtype == SK_DTYPE_INT32) ((int32_t *)p)[off] = (int32_t)v;
  else if (t->dtype == SK_DTYPE_INT64) ((int64_t *)p)[off] = (int64_t)v;
  else if (t->dtype == SK_DTYPE_FLOAT64) ((double *)p)[off] = v;
  else ((float *)p)[off] = (float)v;
}

double sk_cpu_lin_at(const void *buf, int dbl, int64_t i) {
  return dbl ? ((const double *)buf)[i] : (double)((const float *)buf)[i];
}

/* The batch of t: its dims but the last `inner`, and their product. */
int64_t sk_cpu_lin_batch(const SkTensor *t, int inner, int64_t *bsizes, int *nb) {
  *nb = t->ndim - inner;
  int64_t n = 1;
  for (int d = 0; d < *nb; d++) {
    bsizes[d] = t->sizes[d];
    n *= t->sizes[d]; /* a product of an existing tensor's sizes: fits */
  }
  return n;
}

/* LAPACK takes int sizes; a matrix side over INT_MAX (or a scratch over size_t) is refused. */
int sk_cpu_lin_check_size(int64_t r, int64_t c, const char *fn) {
  int64_t n;
  size_t bytes;
  if (r > INT_MAX || c > INT_MAX || sk_mul_overflow(r > 0 ? r : 1, c > 0 ? c : 1, &n) || sk_nbytes(n, 8, &bytes))
    return sk_error("%s: a %lld x %lld matrix is too large for LAPACK", fn, (long long)r, (long long)c);
  return 0;
}
/* }==== */

/* {==== Threads ====
** Batches run over sk_parallel_for, grain ~2^18 multiply-adds; a failed scratch allocation in a
** chunk is recorded and reported after the loop. */
static int64_t grain_for(int64_t n) {
  int64_t work = n * n * n + 1;
  return work >= ((int64_t)1 << 18) ? 1 : ((int64_t)1 << 18) / work;
}

/* A lone large matrix: OpenBLAS's threads while it runs (restored to one after). */
static int blas_threads_begin(int64_t batch, int64_t n) {
  int t = sk_get_num_threads();
  if (batch != 1 || n < 192 || t <= 1 || sk_in_parallel_region()) {
    if (!sk_in_parallel_region() && openblas_get_num_threads() != 1) openblas_set_num_threads(1);
    return 0;
  }
  openblas_set_num_threads(t);
  return 1;
}
static void blas_threads_end(int on) {
  if (on) openblas_set_num_threads(1);
}
/* }==== */

/* {==== Errors from info ====
** PyTorch's _linalg_check_errors texts, chosen by the api name; a batch names its element. */
int sk_cpu_lin_info_error(const char *api, int32_t info, int64_t batch_index, int is_matrix) {
  char pre[64] = "";
  if (!is_matrix) snprintf(pre, sizeof pre, "(Batch element %lld): ", (long long)batch_index);
  if (info < 0 && info != SK_LIN_INFO_COMPLEX && !(info == SK_LIN_INFO_NONFINITE && strstr(api, "svd")))
    return sk_error("%s: %sArgument %d has illegal value. Most certainly there is a bug in the implementation calling "
                    "the backend library.", api, pre, -info);
  if (strstr(api, "inv"))
    return sk_error("%s: %sThe diagonal element %d is zero, the inversion could not be completed because the input "
                    "matrix is singular.", api, pre, info);
  if (strstr(api, "solve"))
    return sk_error("%s: %sThe solver failed because the input matrix is singular.", api, pre);
  if (strstr(api, "cholesky"))
    return sk_error("%s: %sThe factorization could not be completed because the input is not positive-definite (the "
                    "leading minor of order %d is not positive-definite).", api, pre, info);
  if (info == SK_LIN_INFO_COMPLEX)
    return sk_error("%s: %sthe matrix has complex eigenvalues, and sk has no complex dtypes: %s supports only real "
                    "eigenvalues", api, pre, api);
  if (info == SK_LIN_INFO_NONFINITE && strstr(api, "svd"))
    return sk_error("%s: %sThe algorithm failed to converge because the input matrix contained non-finite values.", api, pre);
  if (strstr(api, "svd"))
    return sk_error("%s: %sThe algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                    "repeated singular values (error code: %d).", api, pre, info - 1);
  if (strstr(api, "eig") || strstr(api, "syevd"))
    return sk_error("%s: %sThe algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                    "repeated eigenvalues (error code: %d).", api, pre, info);
  if (strstr(api, "lstsq"))
    return sk_error("%s: %sThe least squares solution could not be computed because the input matrix does not have "
                    "full rank (error code: %d).", api, pre, info);
  if (strstr(api, "lu_factor"))
    return sk_error("%s: %sU[%d,%d] is zero and using it on lu_solve would result in a division by zero. If you still "
                    "want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                    "linalg.lu_factor_ex(A, pivot)", api, pre, info, info);
  return sk_error("%s: %sUnknown error code: %d.", api, pre, info);
}

/* The first nonzero info of the batch (in batch order) as an error; 0 when all are 0. */
int sk_cpu_lin_check_info(const SkTensor *info, const char *api, int is_matrix) {
  int64_t bs[SK_MAX_DIMS] = {0};
  int nb;
  int64_t n = sk_cpu_lin_batch(info, 0, bs, &nb);
  SkLinMat M;
  sk_cpu_lin_mat_init(&M, info, 0, bs, nb, 0);
  const int32_t *p = sk_tensor_data(info);
  for (int64_t b = 0; b < n; b++) {
    int32_t v = p[sk_cpu_lin_offset(&M, b)];
    if (v) return sk_cpu_lin_info_error(api, v, b, is_matrix);
  }
  return 0;
}

int sk_cpu__linalg_check_errors(const SkTensor *info, const char *api_name, int is_matrix) {
  if (info->dtype != SK_DTYPE_INT32)
    return sk_error("_linalg_check_errors: info must be an int32 tensor, got %s", sk_dtype_name(info->dtype));
  return sk_cpu_lin_check_info(info, api_name, is_matrix);
}
/* }==== */

/* {==== Per-matrix jobs ====
** A SkLinJob is one op over a batch: run(job, b, scratch) does matrix b in the scratch (job->bytes
** per thread). The driver cuts the batch across threads. */

static void job_range(void *ctx, int64_t begin, int64_t end) {
  SkLinJob *j = ctx;
  char *scratch = NULL; /* cache-line aligned: LAPACK's vector loads then never straddle lines */
  if (posix_memalign((void **)&scratch, 64, j->bytes ? j->bytes : 1)) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t b = begin; b < end; b++) j->run(j, b, scratch);
  free(scratch);
}

/* LAPACKE's high-level drivers scan whole input arrays for NaN and then refuse to run (info
** -k): that reads the uninitialized columns orgqr is about to set, and turns a NaN matrix into
** an "illegal argument". sk checks what it needs itself (sk_cpu_linalg_spectral.c), so the scan
** is off, set once before the first job. */
static void lapacke_setup(void) {
  static int done;
  if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
    LAPACKE_set_nancheck(0);
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
  }
}

int sk_cpu_lin_go(SkLinJob *j, int64_t batch, const char *fn) {
  if (batch == 0) return 0;
  lapacke_setup();
  int on = blas_threads_begin(batch, j->n);
  sk_parallel_for(0, batch, grain_for(j->n), job_range, j);
  blas_threads_end(on);
  if (j->failed) return sk_error("%s: out of memory for LAPACK's workspace", fn);
  return 0;
}

/* Scratch of `elems` elements of the job's dtype plus `ints` LAPACK ints. */
int sk_cpu_lin_scratch(SkLinJob *j, int64_t elems, int64_t ints, const char *fn) {
  size_t a, b;
  if (sk_nbytes(elems, j->dbl ? 8 : 4, &a) || sk_nbytes(ints, sizeof(lapack_int), &b) || a > SIZE_MAX - b - 64)
    return sk_error("%s: workspace too large", fn);
  j->bytes = a + b + 64;
  return 0;
}
lapack_int *sk_cpu_lin_ints(const SkLinJob *j, char *scratch, int64_t elems) {
  return (lapack_int *)(scratch + (size_t)elems * (j->dbl ? 8 : 4) + (16 - ((size_t)elems * (j->dbl ? 8 : 4)) % 16) % 16);
}
/* }==== */

/* Sets up a job over A's batch with its r x c matrices; returns the batch count. */
int64_t sk_cpu_lin_job_init(SkLinJob *j, const SkTensor *A, int64_t *bs, int *nb) {
  memset(j, 0, sizeof *j);
  j->dbl = A->dtype == SK_DTYPE_FLOAT64;
  j->r = A->sizes[A->ndim - 2];
  j->c = A->sizes[A->ndim - 1];
  j->n = j->r > j->c ? j->r : j->c;
  int64_t batch = sk_cpu_lin_batch(A, 2, bs, nb);
  sk_cpu_lin_mat_init(&j->a, A, 2, bs, *nb, 0);
  return batch;
}


/* sk_cpu_lin_go with an info per matrix (j->infos, zeroed): the first nonzero one, in batch
** order, is the error. */
int sk_cpu_lin_go_checked(SkLinJob *j, int64_t batch, const char *fn, int is_matrix) {
  if (batch == 0) return 0;
  j->infos = calloc((size_t)batch, sizeof *j->infos);
  if (!j->infos) return sk_error("%s: out of memory", fn);
  int rc = sk_cpu_lin_go(j, batch, fn);
  for (int64_t b = 0; !rc && b < batch; b++)
    if (j->infos[b]) rc = sk_cpu_lin_info_error(fn, j->infos[b], b, is_matrix);
  free(j->infos);
  j->infos = NULL;
  return rc;
}
