/*
** sk_grad_helpers.h — the functions backward formulas call beyond the ops (PyTorch's FunctionsManual)
** codegen reads this file: every prototype `int sk_grad_NAME(SkTensor **out, ...);` on one
** line is a function NAME that a derivatives.yaml formula may call, with the parameter types
** it reads (const SkTensor * = Tensor, SkIntList = int[], int64_t = int, int = bool,
** double = float, SkScalar = Scalar, SkOptInt = int?, const char * = str). Each is written
** with the dispatched ops, so it records under create_graph (double backward) like any formula.
*/
#ifndef SK_GRAD_HELPERS_H
#define SK_GRAD_HELPERS_H

#include "sk_autograd.h"

int sk_grad_maybe_multiply(SkTensor **out, const SkTensor *grad, SkScalar s);
int sk_grad_rsub(SkTensor **out, const SkTensor *self, SkScalar s);
int sk_grad_rdiv(SkTensor **out, const SkTensor *self, SkScalar s);
int sk_grad_sum_to(SkTensor **out, const SkTensor *grad, SkIntList sizes);
int sk_grad_sum_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, SkIntList dim, int keepdim);
int sk_grad_mean_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, SkIntList dim, int keepdim);
int sk_grad_amax_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result, SkIntList dim, int keepdim);
int sk_grad_value_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, const SkTensor *indices, int keepdim);
int sk_grad_var_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkIntList dim, SkScalar correction, int keepdim);
int sk_grad_std_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result, SkIntList dim, SkScalar correction, int keepdim);
int sk_grad_logsumexp_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result, SkIntList dim, int keepdim);
int sk_grad_cumprod_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, int64_t dim, const SkTensor *result);
int sk_grad_cumsum_backward(SkTensor **out, const SkTensor *grad, int64_t dim);
int sk_grad_prod_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, int64_t dim, int keepdim);
int sk_grad_prod_all_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self);
int sk_grad_max_all_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result);
int sk_grad_norm_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkScalar p, const SkTensor *result, SkIntList dim, int keepdim);
int sk_grad_threshold_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkScalar threshold);
int sk_grad_where_take(SkTensor **out, const SkTensor *condition, const SkTensor *grad, int when);
int sk_grad_clamp_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkScalar min, SkScalar max);
int sk_grad_clamp_tensor_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *min, const SkTensor *max);
int sk_grad_clamp_bound_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *bound, const SkTensor *other, int is_min);
int sk_grad_max_min_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *other, int is_max);
int sk_grad_pow_scalar_backward(SkTensor **out, const SkTensor *grad, SkScalar self, const SkTensor *exponent, const SkTensor *result);
int sk_grad_div_mode_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *other, const char *rounding_mode, int for_self);
int sk_grad_pow_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkScalar exponent);
int sk_grad_pow_backward_self(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *exponent);
int sk_grad_pow_backward_exponent(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *exponent, const SkTensor *result);
int sk_grad_gelu_double_backward(SkTensor **out, const SkTensor *grad, const SkTensor *grad_output, const SkTensor *self, const char *approximate);
int sk_grad_silu_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self);
int sk_grad_permute_backwards(SkTensor **out, const SkTensor *grad, SkIntList dims);
int sk_grad_roll_backward(SkTensor **out, const SkTensor *grad, SkIntList shifts, SkIntList dims);
int sk_grad_repeat_backward(SkTensor **out, const SkTensor *grad, SkIntList repeats, SkIntList sizes);
int sk_grad_diag_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t diagonal);
int sk_grad_unsqueeze_to(SkTensor **out, const SkTensor *grad, int64_t dim, SkIntList sizes);
int sk_grad_select_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, int64_t index);
int sk_grad_slice_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, SkOptInt start, SkOptInt end, int64_t step);
int sk_grad_diagonal_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t offset, int64_t dim1, int64_t dim2);
int sk_grad_narrow_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, int64_t start, int64_t length);
int sk_grad_constant_pad_nd_backward(SkTensor **out, const SkTensor *grad, SkIntList pad);
int sk_grad_as_strided_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkIntList size, SkIntList stride, SkOptInt storage_offset);
int sk_grad_unfold_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, int64_t dimension, int64_t size, int64_t step);
int sk_grad_softmax_backward_data_output(SkTensor **out, const SkTensor *grad, const SkTensor *grad_output, int64_t dim, const SkTensor *output);
int sk_grad_log_softmax_backward_data_grad_output(SkTensor **out, const SkTensor *grad, const SkTensor *output, int64_t dim);
int sk_grad_log_softmax_backward_data_output(SkTensor **out, const SkTensor *grad, const SkTensor *grad_output, int64_t dim, const SkTensor *output);
int sk_grad_index_select_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, const SkTensor *index);
int sk_grad_index_reduce_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *source, const char *reduce, int include_self, const SkTensor *result);
int sk_grad_gather_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, int64_t dim, const SkTensor *index);
int sk_grad_embedding_backward(SkTensor **out, const SkTensor *grad, const SkTensor *indices, SkIntList weight_sizes, int64_t padding_idx);
int sk_grad_cat_backward(SkTensorList *out, const SkTensor *grad, SkIntList sizes, int64_t dim);
int sk_grad_stack_backward(SkTensorList *out, const SkTensor *grad, SkIntList sizes, int64_t dim);
int sk_grad_split_backward(SkTensor **out, SkTensorList grads, int64_t dim);
int sk_grad_unbind_backward(SkTensor **out, SkTensorList grads, int64_t dim);
int sk_grad_index_backward(SkTensor **out, const SkTensor *grad, SkIntList sizes, SkTensorList indices);
int sk_grad_index_put_self_backward(SkTensor **out, const SkTensor *grad, SkTensorList indices, int accumulate);
int sk_grad_masked_select_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *mask);
int sk_grad_nll_loss_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *target, const SkTensor *weight, int64_t reduction, int64_t ignore_index, const SkTensor *total_weight);
int sk_grad_binary_cross_entropy_target_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *target, const SkTensor *weight, const char *reduction);
/* convolution_backward's own gradients, for grad_output, input, weight (NULL where mask is 0). */
int sk_grad_convolution_double_backward(SkTensorList *out, const SkTensor *ggI, const SkTensor *ggW, const SkTensor *ggb, const SkTensor *grad_output, const SkTensor *weight, const SkTensor *input, SkIntList stride, SkIntList padding, SkIntList dilation, int transposed, SkIntList output_padding, int64_t groups, SkIntList mask);
/* native_batch_norm_backward's own gradients, for input, weight, grad_out (PyTorch's batchnorm_double_backward). */
int sk_grad_batchnorm_double_backward(SkTensorList *out, const SkTensor *input, const SkTensor *gamma, const SkTensor *ggI, const SkTensor *ggG, const SkTensor *ggB, const SkTensor *gO, const SkTensor *running_mean, const SkTensor *running_var, int training, double eps, const SkTensor *save_mean, const SkTensor *save_invstd, SkIntList mask);
/* native_group_norm's gradients for input, weight, bias: the input's through native_layer_norm_backward over [N, group, C/group·HxW] rows. */
int sk_grad_group_norm_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *input, const SkTensor *mean, const SkTensor *rstd, const SkTensor *weight, int64_t N, int64_t C, int64_t HxW, int64_t group, double eps, SkIntList mask);
/* native_layer_norm_backward's own gradients, for grad_out, input, weight (NULL where mask is 0). */
int sk_grad_layer_norm_double_backward(SkTensorList *out, const SkTensor *ggI, const SkTensor *ggW, const SkTensor *ggB, const SkTensor *grad_out, const SkTensor *input, SkIntList normalized_shape, const SkTensor *mean, const SkTensor *rstd, const SkTensor *weight, SkIntList mask);
/* max_pool's (and adaptive_max_pool's, max_unpool's) gather: grad at indices over the last dim spatial dims. */
int sk_grad_max_pool_double_backward(SkTensor **out, const SkTensor *grad, const SkTensor *indices, int64_t dim);
/* _adaptive_avg_pool{dim}d(grad) to grad_output's spatial sizes. */
int sk_grad_adaptive_avg_pool_double_backward(SkTensor **out, const SkTensor *grad, const SkTensor *grad_output, int64_t dim);
int sk_grad_cummaxmin_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *indices, int64_t dim);
int sk_grad_logcumsumexp_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result, int64_t dim);
int sk_grad_evenly_distribute_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *value);
int sk_grad_scatter_reduce_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *self, int64_t dim, const SkTensor *index, const SkTensor *src, const char *reduce, int include_self, const SkTensor *result);
int sk_grad_segment_reduce_backward(SkTensor **out, const SkTensor *grad, const SkTensor *result, const SkTensor *data, const char *reduce, const SkTensor *lengths, const SkTensor *offsets, int64_t axis, SkScalar initial);

/* {==== Pointwise ops of issue 13 (PyTorch's FunctionsManual formulas) ==== */
/* xlogy.Tensor's self: grad * xlogy(self != 0, other). */
int sk_grad_xlogy_self_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *other);
/* copysign's self: grad * result / self, 0 where self == 0. */
int sk_grad_copysign_tensor_self_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result);
/* fmax / fmin: grad to self where self wins (self >= other, <= for fmin, or other NaN), else to other. */
int sk_grad_fmax_fmin_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *other, int is_max, int to_self);
/* polygamma(n, x)'s x: grad * polygamma(n + 1, x). */
int sk_grad_polygamma_backward(SkTensor **out, const SkTensor *grad, int64_t n, const SkTensor *self);
/* logit: grad / (x (1 - x)); outside [eps, 1 - eps] 0, or NaN outside [0, 1] without eps. */
int sk_grad_logit_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, SkOptDouble eps);
/* sinc: grad * (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x == 0. */
int sk_grad_sinc_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self);
/* special_i1 / special_i1e: PyTorch's i1_backward / i1e_backward. */
int sk_grad_i1_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result);
int sk_grad_i1e_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self, const SkTensor *result);
/* }==== */

/* {==== sk.linalg (sk_grad_linalg.c): PyTorch's formulas for real input ==== */
/* linalg.matrix_exp's backward (PyTorch's linalg_matrix_exp_differential): the upper-right block
** of exp([[Aᵀ, G], [0, Aᵀ]]) when adjoint, of exp([[A, G], [0, A]]) else. */
int sk_grad_linalg_matrix_exp_differential(SkTensor **out, const SkTensor *self, const SkTensor *grad, int adjoint);
/* solve (gA, gB; B_sizes tell a vector B), solve_triangular (gA keeps A's triangle), lstsq (through pinv) */
int sk_grad_linalg_solve_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *A, const SkTensor *result, SkIntList B_sizes, int left, SkIntList mask);
int sk_grad_linalg_solve_triangular_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *self, const SkTensor *result, int upper, int left, int unitriangular, SkIntList mask);
int sk_grad_linalg_lstsq_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *self, const SkTensor *b, SkIntList mask);
/* cholesky (symmetric gA), lu (P·L·U, any shape), lu_factor (the factorization of A again), lu_solve (gLU, gB), qr */
int sk_grad_cholesky_backward(SkTensor **out, const SkTensor *grad, int upper, const SkTensor *L);
int sk_grad_linalg_lu_backward(SkTensor **out, const SkTensor *gL, const SkTensor *gU, const SkTensor *P, const SkTensor *L, const SkTensor *U, int pivot);
int sk_grad_lu_factor_ex_backward(SkTensor **out, const SkTensor *grad, const SkTensor *A, int pivot);
int sk_grad_linalg_lu_solve_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *LU, const SkTensor *pivots, const SkTensor *result, int left, int adjoint, SkIntList mask);
/* householder_product (gInput, gTau), through the inverses of the reflectors */
int sk_grad_householder_product_backward(SkTensorList *out, const SkTensor *grad, const SkTensor *result, const SkTensor *input, const SkTensor *tau, SkIntList mask);
int sk_grad_linalg_qr_backward(SkTensor **out, const SkTensor *gQ, const SkTensor *gR, const SkTensor *Q, const SkTensor *R, const char *mode);
/* eig / eigh (real eigenvalues), eigvals (eig again), svd */
int sk_grad_linalg_eig_backward(SkTensor **out, const SkTensor *gL, const SkTensor *gV, const SkTensor *L, const SkTensor *V, int is_hermitian);
int sk_grad_linalg_eigvals_backward(SkTensor **out, const SkTensor *grad, const SkTensor *self);
int sk_grad_svd_backward(SkTensor **out, const SkTensor *gU, const SkTensor *gS, const SkTensor *gVh, const SkTensor *U, const SkTensor *S, const SkTensor *Vh, int full_matrices, int compute_uv);
/* }==== */

#endif
