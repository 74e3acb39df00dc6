/*
** sk_fold.c — im2col and col2im (F.unfold and F.fold): sliding blocks of a (N, C, H, W) image
** as the columns of (N, C·kh·kw, L), and their sum back into the image
** One index does both: for block l and kernel position k, the position of its element in the
** zero-padded plane (Hp·Wp), built on the tensor's device from an arange viewed with
** Tensor.unfold. im2col gathers the padded image at it, col2im scatter-adds the columns into
** a padded plane and crops the padding; each is the other's adjoint, so autograd runs through
** gather and scatter_add, and every backend and dtype is served.
*/
#include "sk_kernels.h"
#include "sk_composite_util.h"

#include <string.h>

#define T(call) SK_TAPE_STEP(tp, call)
#define LIST(...) ((SkIntList){(const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)})

typedef struct Blocks { int64_t k[2], d[2], p[2], s[2], in[2], pad[2], out[2]; } Blocks;

/* PyTorch's im2col/col2im shape checks on the 2-element lists; fills the geometry of the
** blocks over an image of spatial size in[] */
static int check_blocks(const char *op, Blocks *b, SkIntList k, SkIntList d, SkIntList p, SkIntList s) {
  const SkIntList lists[4] = {k, d, p, s};
  static const char *const names[4] = {"kernel_size", "dilation", "padding", "stride"};
  for (int i = 0; i < 4; i++)
    if (lists[i].n != 2) return sk_error("%s: argument '%s' must have 2 elements, got %d", op, names[i], lists[i].n);
  for (int i = 0; i < 2; i++) b->k[i] = k.data[i], b->d[i] = d.data[i], b->p[i] = p.data[i], b->s[i] = s.data[i];
  if (b->k[0] <= 0 || b->k[1] <= 0)
    return sk_error("%s: kernel size should be greater than zero, but got kernel_height: %lld kernel_width: %lld", op,
                    (long long)b->k[0], (long long)b->k[1]);
  if (b->s[0] <= 0 || b->s[1] <= 0)
    return sk_error("%s: stride should be greater than zero, but got stride_height: %lld stride_width: %lld", op,
                    (long long)b->s[0], (long long)b->s[1]);
  if (b->d[0] <= 0 || b->d[1] <= 0)
    return sk_error("%s: dilation should be greater than zero, but got dilation_height: %lld dilation_width: %lld", op,
                    (long long)b->d[0], (long long)b->d[1]);
  if (b->p[0] < 0 || b->p[1] < 0)
    return sk_error("%s: padding should be non-negative, but got pad_height: %lld pad_width: %lld", op,
                    (long long)b->p[0], (long long)b->p[1]);
  for (int i = 0; i < 2; i++) /* each bounded so the sums below stay far from overflow */
    if (b->k[i] > (1LL << 31) || b->d[i] > (1LL << 31) || b->p[i] > (1LL << 40) || b->s[i] > (1LL << 40))
      return sk_error("%s: kernel_size, dilation, padding or stride %lld is too large", op,
                      (long long)(b->k[i] > b->d[i] ? b->k[i] : b->d[i]));
  return 0;
}

/* the blocks' count per spatial dim over in[] (may be <= 0: the caller reports it) */
static void count_blocks(Blocks *b) {
  for (int i = 0; i < 2; i++) {
    b->pad[i] = b->in[i] + 2 * b->p[i];
    b->out[i] = (b->pad[i] - (b->d[i] * (b->k[i] - 1) + 1)) / b->s[i] + 1;
    if (b->pad[i] < b->d[i] * (b->k[i] - 1) + 1) b->out[i] = 0;
  }
}

/* (kh·kw·oh·ow) int64 positions in the padded plane, kernel position outer, on dev */
static SkTensor *block_index(SkTape *tp, const Blocks *b, SkDevice dev) {
  int64_t flat = -1, ek0 = b->d[0] * (b->k[0] - 1) + 1, ek1 = b->d[1] * (b->k[1] - 1) + 1;
  SkTensor *pos = T(sk_reshape(&r, T(sk_arange(&r, sk_scalar_int(b->pad[0] * b->pad[1]), SK_DTYPE_INT64, -1, dev, -1)),
                               LIST(b->pad[0], b->pad[1])));
  SkTensor *w = T(sk_unfold(&r, T(sk_unfold(&r, pos, 0, ek0, b->s[0])), 1, ek1, b->s[1])); /* (oh, ow, ek0, ek1) */
  w = T(sk_slice(&r, T(sk_slice(&r, w, 2, (SkOptInt){0, 0}, (SkOptInt){0, 0}, b->d[0])), 3, (SkOptInt){0, 0},
                 (SkOptInt){0, 0}, b->d[1]));
  return T(sk_reshape(&r, T(sk_permute(&r, w, LIST(2, 3, 0, 1))), LIST(flat)));
}

int sk_math_im2col(SkTensor **result, const SkTensor *self, SkIntList kernel_size, SkIntList dilation, SkIntList padding,
                   SkIntList stride) {
  char buf[128];
  Blocks b;
  if (check_blocks("im2col", &b, kernel_size, dilation, padding, stride)) return -1;
  int nd = self->ndim;
  if ((nd != 3 && nd != 4) || self->sizes[nd - 3] == 0 || self->sizes[nd - 2] == 0 || self->sizes[nd - 1] == 0)
    return sk_error("im2col: Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                    "dimensions for input, but got: %s", sk_shape_str(nd, self->sizes, buf, sizeof buf));
  b.in[0] = self->sizes[nd - 2], b.in[1] = self->sizes[nd - 1];
  count_blocks(&b);
  if (b.out[0] < 1 || b.out[1] < 1)
    return sk_error("im2col: Given input with spatial size (%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), "
                    "padding=(%lld, %lld), calculated shape of the array of sliding blocks as (%lld, %lld), but its "
                    "components must be at least one.", (long long)b.in[0], (long long)b.in[1], (long long)b.k[0],
                    (long long)b.k[1], (long long)b.d[0], (long long)b.d[1], (long long)b.p[0], (long long)b.p[1],
                    (long long)b.out[0], (long long)b.out[1]);
  int64_t n = nd == 4 ? self->sizes[0] : 1, c = self->sizes[nd - 3], kk = b.k[0] * b.k[1], l = b.out[0] * b.out[1];
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  SkTensor *x = T(sk_constant_pad_nd(&r, self, LIST(b.p[1], b.p[1], b.p[0], b.p[0]), sk_scalar_int(0)));
  x = T(sk_reshape(&r, x, LIST(n, c, b.pad[0] * b.pad[1])));
  SkTensor *idx = T(sk_expand(&r, T(sk_reshape(&r, block_index(tp, &b, self->device), LIST(1, 1, kk * l))), LIST(n, c, kk * l), 0));
  SkTensor *cols = T(sk_gather(&r, x, 2, idx, 0));
  cols = nd == 4 ? T(sk_reshape(&r, cols, LIST(n, c * kk, l))) : T(sk_reshape(&r, cols, LIST(c * kk, l)));
  if (!tp->rc) *result = sk_tape_take(tp, cols);
  return sk_tape_free(tp);
}

int sk_math_col2im(SkTensor **result, const SkTensor *self, SkIntList output_size, SkIntList kernel_size,
                   SkIntList dilation, SkIntList padding, SkIntList stride) {
  char buf[128];
  Blocks b;
  if (check_blocks("col2im", &b, kernel_size, dilation, padding, stride)) return -1;
  if (output_size.n != 2) return sk_error("col2im: argument 'output_size' must have 2 elements, got %d", output_size.n);
  int nd = self->ndim;
  if ((nd != 2 && nd != 3) || self->sizes[nd - 2] == 0 || self->sizes[nd - 1] == 0)
    return sk_error("col2im: Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                    "dimensions for input, but got: %s", sk_shape_str(nd, self->sizes, buf, sizeof buf));
  int64_t kk = b.k[0] * b.k[1], rows = self->sizes[nd - 2];
  if (rows % kk)
    return sk_error("col2im: Expected size of input's dimension %d to be divisible by the product of kernel_size, but got "
                    "input.size(%d)=%lld and kernel_size=(%lld, %lld).", nd - 2, nd - 2, (long long)rows,
                    (long long)b.k[0], (long long)b.k[1]);
  if (output_size.data[0] <= 0 || output_size.data[1] <= 0 || output_size.data[0] > (1LL << 40) || output_size.data[1] > (1LL << 40))
    return sk_error("col2im: output_size must be positive and below 2^40, got (%lld, %lld)", (long long)output_size.data[0],
                    (long long)output_size.data[1]);
  b.in[0] = output_size.data[0], b.in[1] = output_size.data[1];
  count_blocks(&b);
  int64_t l = b.out[0] > 0 && b.out[1] > 0 ? b.out[0] * b.out[1] : 0;
  if (l != self->sizes[nd - 1])
    return sk_error("col2im: Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), "
                    "padding=(%lld, %lld), stride=(%lld, %lld), expected size of input's dimension %d to match the "
                    "calculated number of sliding blocks %lld * %lld = %lld, but got input.size(%d)=%lld.",
                    (long long)b.in[0], (long long)b.in[1], (long long)b.k[0], (long long)b.k[1], (long long)b.d[0],
                    (long long)b.d[1], (long long)b.p[0], (long long)b.p[1], (long long)b.s[0], (long long)b.s[1], nd - 1,
                    (long long)(b.out[0] > 0 ? b.out[0] : 0), (long long)(b.out[1] > 0 ? b.out[1] : 0), (long long)l,
                    nd - 1, (long long)self->sizes[nd - 1]);
  int64_t n = nd == 3 ? self->sizes[0] : 1, c = rows / kk, hw = b.pad[0] * b.pad[1];
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape; /* in opmath: a half type's overlaps sum in float32, rounded once */
  SkDType dt = self->dtype;
  SkTensor *cols = T(sk_reshape(&r, sk_tape_opmath(tp, self, dt), LIST(n, c, kk * l)));
  SkTensor *idx = T(sk_expand(&r, T(sk_reshape(&r, block_index(tp, &b, self->device), LIST(1, 1, kk * l))), LIST(n, c, kk * l), 0));
  SkTensor *img = T(sk_scatter_add(&r, T(sk_new_zeros(&r, self, LIST(n, c, hw), sk_opmath_dtype(dt), -1, sk_device(-1, 0), -1)),
                                   2, idx, cols));
  img = T(sk_reshape(&r, img, LIST(n, c, b.pad[0], b.pad[1])));
  img = T(sk_constant_pad_nd(&r, img, LIST(-b.p[1], -b.p[1], -b.p[0], -b.p[0]), sk_scalar_int(0)));
  if (nd == 2) img = T(sk_squeeze_dim(&r, img, 0));
  return sk_tape_result(tp, sk_tape_round(tp, img, dt), result);
}
