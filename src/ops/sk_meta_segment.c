/*
** sk_meta_segment.c — segment_reduce's Meta kernel: its shape comes from lengths' or offsets'
** shape, not their values (sk_segment_check in sk_cpu_segment.c)
*/
#include "sk_kernels.h"
#include "sk_cpu_segment.h"

int sk_meta_kernel_segment_reduce(SkTensor **result, const SkTensor *data, const char *reduce, const SkTensor *lengths,
                                  const SkTensor *indices, const SkTensor *offsets, int64_t axis, int unsafe, SkScalar initial) {
  (void)unsafe, (void)initial;
  int op;
  int64_t ax, sizes[SK_MAX_DIMS], nseg;
  if (sk_segment_check(data, reduce, lengths, indices, offsets, axis, &op, &ax, sizes, &nseg)) return -1;
  *result = sk_tensor_empty(data->ndim, sizes, data->dtype, SK_META);
  return *result ? 0 : -1;
}
