/*
** sk_cpu_kernels.h — the CPU kernels (impls of structured ops, and unstructured kernels)
** Structured impls: sk_cpu_<dispatch name>(const SkMeta *m, <all schema arguments>, SkTensor *out),
** called after the op's meta function succeeded with compute on. Iterator ops
** read and write the operands of m->iter (output 0, then inputs, all of the
** compute dtype), never `out` directly; the others write `out`, which has the
** shape and dtype the meta function declared (any strides). Every kernel
** checks before it writes: on error nothing has been written.
*/
#ifndef SK_CPU_KERNELS_H
#define SK_CPU_KERNELS_H

#include "sk_iter.h"
#include "sk_meta.h"
#include "sk_value.h"

/* {==== Binary (sk_cpu_binary.c) ==== */
int sk_cpu_add_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha, SkTensor *out);
int sk_cpu_sub_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha, SkTensor *out);
int sk_cpu_mul_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_div_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_div_out_mode(const SkMeta *m, const SkTensor *self, const SkTensor *other, const char *rounding_mode,
                        SkTensor *out);
int sk_cpu_remainder_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_pow_out(const SkMeta *m, const SkTensor *self, const SkTensor *exponent, SkTensor *out);
/* }==== */

/* {==== Comparison (sk_cpu_compare.c) ==== */
int sk_cpu_eq_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_ne_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_lt_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_le_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_gt_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_ge_out(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out);
/* }==== */

/* {==== Unary (sk_cpu_unary.c) ==== */
int sk_cpu_neg_out(const SkMeta *m, const SkTensor *self, SkTensor *out);
int sk_cpu_abs_out(const SkMeta *m, const SkTensor *self, SkTensor *out);
int sk_cpu_exp_out(const SkMeta *m, const SkTensor *self, SkTensor *out);
int sk_cpu_log_out(const SkMeta *m, const SkTensor *self, SkTensor *out);
int sk_cpu_sqrt_out(const SkMeta *m, const SkTensor *self, SkTensor *out);
int sk_cpu_tanh_out(const SkMeta *m, const SkTensor *self, SkTensor *out);
int sk_cpu_sigmoid_out(const SkMeta *m, const SkTensor *self, SkTensor *out);
int sk_cpu_clamp_out(const SkMeta *m, const SkTensor *self, SkScalar min, SkScalar max, SkTensor *out);
/* }==== */

/* {==== Reductions (sk_cpu_reduce.c) ==== */
int sk_cpu_sum_out(const SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int dtype, SkTensor *out);
int sk_cpu_mean_out(const SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, int dtype, SkTensor *out);
int sk_cpu_amax_out(const SkMeta *m, const SkTensor *self, SkIntList dim, int keepdim, SkTensor *out);
int sk_cpu_argmax_out(const SkMeta *m, const SkTensor *self, SkOptInt dim, int keepdim, SkTensor *out);
/* }==== */

/* {==== Matrix products (sk_cpu_blas.c) ==== */
int sk_cpu_mm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat2, SkTensor *out);
int sk_cpu_bmm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat2, SkTensor *out);
int sk_cpu_addmm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat1, const SkTensor *mat2, SkScalar beta,
                     SkScalar alpha, SkTensor *out);
/* }==== */

/* {==== Unstructured (sk_cpu_fill.c, sk_cpu_random.c) ==== */
int sk_cpu_fill_(SkTensor *self, SkScalar value);
int sk_cpu_where_out(const SkTensor *condition, const SkTensor *self, const SkTensor *other, SkTensor *out);
int sk_cpu_uniform_(SkTensor *self, double from, double to, void *generator);
int sk_cpu_normal_(SkTensor *self, double mean, double std, void *generator);
/* }==== */

#endif
