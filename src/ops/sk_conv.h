/*
** sk_conv.h — the geometry of a convolution, checked once and shared by the meta
** functions (src/ops/sk_conv.c) and the CPU kernels (kernels/cpu/sk_cpu_conv.c)
** A convolution relates an "a" tensor [N, Ca, a...] and a "b" tensor [N, Cb, b...]
** through weight [Cb, Ca/groups, k...]: the forward computes b from a, its data
** gradient a from b, its weight gradient the weight from a and b. A transposed
** convolution (weight [Cin, Cout/groups, k...]) is the same relation with its input
** as b and its output as a, so one set of kernels serves both.
*/
#ifndef SK_CONV_H
#define SK_CONV_H

#include "sk_tensor.h"
#include "sk_value.h"

#define SK_CONV_MAX_SPATIAL 3

typedef struct SkConvGeom {
  int nsp;                                 /* spatial dims, 1..3 */
  int transposed;
  int64_t groups;
  int64_t stride[SK_CONV_MAX_SPATIAL], pad[SK_CONV_MAX_SPATIAL], dil[SK_CONV_MAX_SPATIAL];
  int64_t outpad[SK_CONV_MAX_SPATIAL];     /* transposed only */
} SkConvGeom;

/* Checks a convolution's arguments with PyTorch's messages (bias may be NULL; bias_sizes,
** when given, stands for it) and fills g and the output's sizes (input->ndim of them). */
int sk_conv_check(SkConvGeom *g, const SkTensor *input, const SkTensor *weight, const SkTensor *bias,
                  SkIntList bias_sizes, SkIntList stride, SkIntList padding, SkIntList dilation, int transposed,
                  SkIntList output_padding, int64_t groups, int64_t *out_sizes);

#endif
