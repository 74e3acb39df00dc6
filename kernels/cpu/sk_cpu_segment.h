/*
** sk_cpu_segment.h — segment_reduce's checks and result shape, shared by its CPU and Meta kernels
*/
#ifndef SK_CPU_SEGMENT_H
#define SK_CPU_SEGMENT_H

#include "sk_tensor.h"

enum { SK_SEG_SUM, SK_SEG_MEAN, SK_SEG_MAX, SK_SEG_MIN, SK_SEG_PROD };
/* PyTorch's checks that need no values; *op, *axis (wrapped), the result's sizes (ndim of data)
** and *nseg, the segments per row. */
int sk_segment_check(const SkTensor *data, const char *reduce, const SkTensor *lengths, const SkTensor *indices,
                     const SkTensor *offsets, int64_t axis, int *op, int64_t *wrapped, int64_t *sizes, int64_t *nseg);

#endif
