/*
** sk_linalg.h — the rules of sk.linalg's ops that layers above the ops share (the backward
** formulas of src/autograd read the same vector rule as the meta functions).
*/
#ifndef SK_LINALG_H
#define SK_LINALG_H

#include "sk_tensor.h"

/* PyTorch's linalg_solve_is_vector_rhs: B (b_ndim dims of b_sizes) is a (batch of) vector(s)
** against the (batch of) square matrices A. */
int sk_linalg_solve_is_vector(const SkTensor *A, int b_ndim, const int64_t *b_sizes);

#endif
