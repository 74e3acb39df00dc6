/*
** sk_cpu_linalg_expm.c — linalg.matrix_exp: scaling and squaring with a Padé approximant
** Higham's algorithm (SIAM J. Matrix Anal. Appl. 26(4), 2005): the degree m in {3, 5, 7, 9, 13}
** is the least whose θ_m bounds ‖A‖₁; past θ_13, A is scaled by 2^-s to below it. r_m(A) =
** (V - U)⁻¹ (V + U), U the odd and V the even part of the numerator, is then squared s times.
** Every matrix is computed in float64 (float32 input too: the result rounds once) with BLAS
** gemm and LAPACK gesv, one matrix per thread (sk_cpu_linalg.h). A matrix with NaN or inf
** gives NaN.
*/
#include "sk_kernels.h"
#include "sk_cpu_linalg.h"
#include "sk_cpu_util.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

static const double theta[5] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                                2.097847961257068e0, 5.371920351148152e0};
static const int degree[5] = {3, 5, 7, 9, 13};
static const double b3[] = {120, 60, 12, 1};
static const double b5[] = {30240, 15120, 3360, 420, 30, 1};
static const double b7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
static const double b9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1};
static const double b13[] = {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
                             129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920., 40840800.,
                             960960., 16380., 182., 1.};

static void mm(int64_t n, const double *a, const double *b, double *c) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a, (int)n, b, (int)n, 0.0, c, (int)n);
}

/* y = Σ c_i P_i (+ c0 I), over the nz powers P_i */
static void combo(int64_t n, double *y, double c0, int nz, const double *const *p, const double *c) {
  int64_t nn = n * n;
  for (int64_t e = 0; e < nn; e++) {
    double v = 0;
    for (int i = 0; i < nz; i++) v += c[i] * p[i][e];
    y[e] = v;
  }
  for (int64_t i = 0; i < n; i++) y[i * n + i] += c0;
}

/* exp of the n x n column-major A (overwritten) into X; w holds 6 n² doubles and n ints. */
static void expm(int64_t n, double *A, double *X, double *w, lapack_int *piv) {
  int64_t nn = n * n;
  double *A2 = w, *A4 = w + nn, *A6 = w + 2 * nn, *U = w + 3 * nn, *V = w + 4 * nn, *T = w + 5 * nn;
  double norm = 0;
  for (int64_t j = 0; j < n; j++) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += fabs(A[j * n + i]);
    norm = s > norm || isnan(s) ? s : norm;
  }
  if (!isfinite(norm)) {
    for (int64_t e = 0; e < nn; e++) X[e] = NAN;
    return;
  }
  int d = 0, s = 0;
  while (d < 4 && norm > theta[d]) d++;
  if (norm > theta[4]) {
    s = (int)ceil(log2(norm / theta[4]));
    double f = ldexp(1.0, -s);
    for (int64_t e = 0; e < nn; e++) A[e] *= f;
  }
  int deg = degree[d];
  mm(n, A, A, A2);
  if (deg >= 5) mm(n, A2, A2, A4);
  if (deg >= 7) mm(n, A4, A2, A6);
  if (deg == 13) {
    const double *pu[3] = {A6, A4, A2}, *pv[3] = {A6, A4, A2};
    const double cu[3] = {b13[13], b13[11], b13[9]}, cv[3] = {b13[12], b13[10], b13[8]};
    combo(n, T, 0.0, 3, pu, cu);
    mm(n, A6, T, U);                                   /* A6 (b13 A6 + b11 A4 + b9 A2) */
    const double cu2[3] = {b13[7], b13[5], b13[3]};
    combo(n, T, b13[1], 3, pu, cu2);
    for (int64_t e = 0; e < nn; e++) T[e] += U[e];
    mm(n, A, T, U);                                    /* U = A [...] */
    combo(n, T, 0.0, 3, pv, cv);
    mm(n, A6, T, V);
    const double cv2[3] = {b13[6], b13[4], b13[2]};
    combo(n, T, b13[0], 3, pv, cv2);
    for (int64_t e = 0; e < nn; e++) V[e] += T[e];
  } else {
    const double *c = deg == 3 ? b3 : deg == 5 ? b5 : deg == 7 ? b7 : b9;
    double *A8 = X; /* X is free until the solve */
    if (deg == 9) mm(n, A4, A4, A8);
    const double *p[4] = {A2, A4, A6, A8};
    int np = (deg - 1) / 2;
    double co[4], ce[4];
    for (int i = 0; i < np; i++) co[i] = c[2 * i + 3], ce[i] = c[2 * i + 2];
    combo(n, T, c[1], np, p, co);
    mm(n, A, T, U);
    combo(n, V, c[0], np, p, ce);
  }
  for (int64_t e = 0; e < nn; e++) {
    double u = U[e], v = V[e];
    X[e] = v + u;  /* right-hand side */
    T[e] = v - u;
  }
  LAPACKE_dgesv_work(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n, T, (lapack_int)n, piv, X, (lapack_int)n);
  for (int i = 0; i < s; i++) {
    mm(n, X, X, T);
    memcpy(X, T, (size_t)nn * sizeof *X);
  }
}

static int run_expm(const SkLinJob *j, int64_t b, char *s) {
  int64_t n = j->n, nn = n * n;
  if (n == 0) return 0;
  double *A = (double *)s, *X = A + nn, *w = X + nn;
  lapack_int *piv = sk_cpu_lin_ints(j, s, 8 * nn);
  if (j->a.dbl) {
    sk_cpu_lin_load(&j->a, b, n, n, A, n);
  } else {
    float *f = (float *)X;
    sk_cpu_lin_load(&j->a, b, n, n, f, n);
    for (int64_t e = nn - 1; e >= 0; e--) A[e] = f[e];
  }
  expm(n, A, X, w, piv);
  if (!j->a.dbl) {
    float *f = (float *)A;
    for (int64_t e = 0; e < nn; e++) f[e] = (float)X[e];
    sk_cpu_lin_store(&j->out, b, n, n, f, n, 0, 0);
  } else {
    sk_cpu_lin_store(&j->out, b, n, n, X, n, 0, 0);
  }
  return 0;
}

int sk_cpu_linalg_matrix_exp(SkTensor **result, const SkTensor *self) {
  const char *fn = "linalg.matrix_exp";
  SkTensor *r = NULL;
  if (sk_meta_kernel_linalg_matrix_exp(&r, self) || sk_cpu_from_meta(&r, 1)) {
    sk_tensor_release(r);
    return -1;
  }
  SkLinJob j;
  int64_t bs[SK_MAX_DIMS];
  int nb;
  int64_t batch = sk_cpu_lin_job_init(&j, self, bs, &nb);
  j.dbl = 1; /* the scratch is float64 whatever the dtype */
  if (sk_cpu_lin_check_size(j.n, j.n, fn) || sk_cpu_lin_scratch(&j, 8 * j.n * j.n, j.n, fn)) {
    sk_tensor_release(r);
    return -1;
  }
  j.run = run_expm;
  sk_cpu_lin_mat_init(&j.out, r, 2, bs, nb, 0);
  if (sk_cpu_lin_go(&j, batch, fn)) {
    sk_tensor_release(r);
    return -1;
  }
  *result = r;
  return 0;
}
