/*
** sk_pad.c — padding: constant_pad_nd, reflection_pad{1,2,3}d, replication_pad{1,2,3}d,
** _pad_circular and pad (F.pad's front door)
** `pad` lists (left, right) pairs from the last dim backwards, as PyTorch's; a negative
** entry crops. constant_pad_nd is one fill and one copy (DefaultBackend; its gradient is
** constant_pad_nd of grad with the pads negated). The other modes gather each padded dim
** with index_select over a source index computed on the tensor's own device:
**   reflect    n-1 - |n-1 - |i||      (PyTorch requires each pad < n)
**   replicate  clamp(i, 0, n-1)
**   circular   i mod n                (PyTorch requires each pad <= n)
** for i in [-left, n + right), so a negative pad crops the padded result, and autograd
** runs through index_select.
*/
#include "sk_kernels.h"
#include "sk_composite_util.h"

#include <string.h>

#define T(call) SK_TAPE_STEP(tp, call)

enum { PAD_REFLECT, PAD_REPLICATE, PAD_CIRCULAR };
static const char *const mode_names[] = {"reflect", "replicate", "circular"};
static const char *const op_names[][3] = {{"reflection_pad1d", "reflection_pad2d", "reflection_pad3d"},
                                          {"replication_pad1d", "replication_pad2d", "replication_pad3d"},
                                          {"_pad_circular", "_pad_circular", "_pad_circular"}};

/* The checks every mode shares: an even pad list, no longer than twice the dims, and no
** output dim made negative by cropping. */
static int check_pad(const char *op, const SkTensor *self, SkIntList pad) {
  if (pad.n % 2) return sk_error("%s: Length of pad must be even but instead it equals %d", op, pad.n);
  if (pad.n / 2 > self->ndim)
    return sk_error("%s: Length of pad should be no more than twice the number of dimensions of the input. "
                    "Pad length is %d while the input has %d dimensions.", op, pad.n, self->ndim);
  for (int i = 0; i < pad.n / 2; i++) {
    int d = self->ndim - 1 - i;
    int64_t l = pad.data[2 * i], r = pad.data[2 * i + 1], n = self->sizes[d];
    /* |pads| beyond 2^61 are refused first, so the sum below cannot overflow */
    if (l > INT64_MAX / 4 || l < -(INT64_MAX / 4) || r > INT64_MAX / 4 || r < -(INT64_MAX / 4) || n + l + r < 0)
      return sk_error("%s: The input size %lld, plus negative padding %lld and %lld resulted in a negative output "
                      "size, which is invalid. Check dimension %d of your input.", op, (long long)n, (long long)l,
                      (long long)r, d);
  }
  return 0;
}

/* {==== constant_pad_nd ==== */
int sk_default_constant_pad_nd(SkTensor **result, const SkTensor *self, SkIntList pad, SkScalar value) {
  if (check_pad("constant_pad_nd", self, pad)) return -1;
  int64_t sizes[SK_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  for (int i = 0; i < pad.n / 2; i++) sizes[self->ndim - 1 - i] += pad.data[2 * i] + pad.data[2 * i + 1];
  SkTensor *out = NULL;
  if (sk_new_full(&out, self, (SkIntList){sizes, self->ndim}, value, -1, -1, sk_device(-1, 0), -1)) return -1;
  /* the region of out that self's kept part lands in, and that part */
  SkTensor *dst = sk_tensor_retain(out), *src = sk_tensor_retain((SkTensor *)self);
  int rc = 0;
  for (int i = 0; i < pad.n / 2 && !rc; i++) {
    int d = self->ndim - 1 - i;
    int64_t l = pad.data[2 * i], r = pad.data[2 * i + 1], n = self->sizes[d];
    int64_t keep = n + (l < 0 ? l : 0) + (r < 0 ? r : 0);
    if (keep < 0) keep = 0; /* both pads crop past each other: nothing of self is kept */
    SkTensor *a = NULL, *b = NULL;
    rc = sk_narrow(&a, dst, d, l > 0 ? l : 0, keep);
    if (!rc) rc = sk_narrow(&b, src, d, l < 0 ? -l : 0, keep);
    sk_tensor_release(dst);
    sk_tensor_release(src);
    dst = a, src = b;
  }
  if (!rc && dst->numel) rc = sk_copy_(dst, src, 0);
  sk_tensor_release(dst);
  sk_tensor_release(src);
  if (rc) { sk_tensor_release(out); return -1; }
  *result = out;
  return 0;
}
/* }==== */

/* {==== reflect, replicate, circular ==== */
/* The source index along one dim of size n for outputs [-l, n + r) (int64, on dev). */
static SkTensor *source_index(SkTape *tp, int mode, int64_t n, int64_t left, int64_t right, SkDevice dev) {
  SkTensor *i = T(sk_arange_start_step(&r, sk_scalar_int(-left), sk_scalar_int(n + right), sk_scalar_int(1), SK_DTYPE_INT64, -1,
                                       dev, -1));
  switch (mode) {
  case PAD_REFLECT: {
    SkTensor *m = T(sk_abs(&r, T(sk_sub_Scalar(&r, T(sk_abs(&r, i)), sk_scalar_int(n - 1), sk_scalar_int(1)))));
    return T(sk_neg(&r, T(sk_sub_Scalar(&r, m, sk_scalar_int(n - 1), sk_scalar_int(1)))));
  }
  case PAD_REPLICATE: return T(sk_clamp(&r, i, sk_scalar_int(0), sk_scalar_int(n - 1)));
  default: return T(sk_remainder_Scalar(&r, i, sk_scalar_int(n)));
  }
}

/* Pads the last pad.n/2 dims of self in `mode`; k = pad.n/2 is 1, 2 or 3 for the named ops */
static int pad_gather(SkTensor **result, const SkTensor *self, SkIntList pad, int mode, int named) {
  int k = pad.n / 2;
  const char *op = op_names[mode][(k >= 1 && k <= 3 ? k : 1) - 1];
  if (named && !(self->ndim == k + 1 || self->ndim == k + 2)) {
    char buf[128];
    return sk_error("%s: Expected %dD or %dD (batch mode) tensor for input, but got: %s", op, k + 1, k + 2,
                    sk_shape_str(self->ndim, self->sizes, buf, sizeof buf));
  }
  if (check_pad(op, self, pad)) return -1;
  for (int i = 0; i < k; i++) {
    int d = self->ndim - 1 - i;
    int64_t l = pad.data[2 * i], r = pad.data[2 * i + 1], n = self->sizes[d];
    char buf[128];
    if (n == 0 && (l || r))
      return sk_error("%s: Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero "
                      "dimensions for input, but got: %s", op, k + 1, k + 2, sk_shape_str(self->ndim, self->sizes, buf, sizeof buf));
    if (mode == PAD_REFLECT && (l >= n || r >= n))
      return sk_error("%s: Argument #%d: Padding size should be less than the corresponding input dimension, but got: "
                      "padding (%lld, %lld) at dimension %d of input %s", op, 4 + 2 * i, (long long)l, (long long)r, d,
                      sk_shape_str(self->ndim, self->sizes, buf, sizeof buf));
    if (mode == PAD_CIRCULAR && (l > n || r > n))
      return sk_error("%s: Padding value causes wrapping around more than once.", op);
  }
  SkTape tape = {{NULL}, 0, 0, {0}}, *tp = &tape;
  const SkTensor *x = self;
  for (int i = 0; i < k && !tp->rc; i++) {
    int d = self->ndim - 1 - i;
    int64_t left = pad.data[2 * i], right = pad.data[2 * i + 1];
    if (!left && !right) continue;
    x = T(sk_index_select(&r, x, d, source_index(tp, mode, self->sizes[d], left, right, self->device)));
  }
  if (!tp->rc) *result = sk_tape_take(tp, (SkTensor *)x);
  return sk_tape_free(tp);
}

/* The named ops take exactly 2k pads for a (k+1)- or (k+2)-dim input */
#define NAMED_PAD(name, mode)                                                                  \
  int sk_math_##name(SkTensor **result, const SkTensor *self, SkIntList padding) {             \
    return pad_gather(result, self, padding, mode, 1);                                         \
  }
NAMED_PAD(reflection_pad1d, PAD_REFLECT)
NAMED_PAD(reflection_pad2d, PAD_REFLECT)
NAMED_PAD(reflection_pad3d, PAD_REFLECT)
NAMED_PAD(replication_pad1d, PAD_REPLICATE)
NAMED_PAD(replication_pad2d, PAD_REPLICATE)
NAMED_PAD(replication_pad3d, PAD_REPLICATE)

int sk_math__pad_circular(SkTensor **result, const SkTensor *self, SkIntList pad) {
  return pad_gather(result, self, pad, PAD_CIRCULAR, 0);
}

/* F.pad: "constant" pads any dims with value (0 when None); the other modes pad the last 1,
** 2 or 3 dims of a tensor with one or two dims more (a batch dim is optional). */
int sk_math_pad(SkTensor **result, const SkTensor *self, SkIntList pad, const char *mode, SkOptDouble value) {
  if (!mode || !strcmp(mode, "constant"))
    return sk_constant_pad_nd(result, self, pad, sk_scalar_float(value.has ? value.v : 0));
  int m = -1;
  for (int i = 0; i < 3; i++) if (!strcmp(mode, mode_names[i])) m = i;
  if (m < 0) return sk_error("pad: Unrecognised padding mode %s (expected 'constant', 'reflect', 'replicate' or 'circular')", mode);
  if (value.has && value.v != 0) return sk_error("pad: Padding mode \"%s\" doesn't take in value argument", mode);
  int k = pad.n / 2;
  if (pad.n % 2 || k < 1 || k > 3 || !(self->ndim == k + 1 || self->ndim == k + 2))
    return sk_error("pad: Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now (mode '%s' pads "
                    "the last 1, 2 or 3 dims of a 2-5 dim input with 2, 4 or 6 pads; got %d pads for a %d-dim input)",
                    mode, pad.n, self->ndim);
  return pad_gather(result, self, pad, m, m != PAD_CIRCULAR);
}
/* }==== */
