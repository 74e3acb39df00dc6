/*
** sk_meta.c — output allocation, the in-place check and the out resize rule
** sk does better than PyTorch's deprecated behaviour here: a non-empty out
** of the wrong shape is an error, never silently resized.
*/
#include "sk_meta.h"
#include "sk_error.h"
#include "sk_iter.h"

#include <string.h>

void sk_meta_init(SkMeta *m, const char *op, SkVariant v, SkDevice device, int compute, int noutputs) {
  m->op = op;
  m->variant = v;
  m->compute = compute;
  m->device = device;
  m->noutputs = noutputs;
  for (int i = 0; i < SK_MAX_OUTPUTS; i++) { m->outputs[i] = NULL; m->out_names[i] = "out"; }
  if (v == SK_VARIANT_INPLACE) m->out_names[0] = "self";
  m->iter = NULL;
}

int sk_meta_set_output(SkMeta *m, int i, int ndim, const int64_t *sizes, const int64_t *strides, SkDType dtype) {
  char a[128], b[128], da[32], db[32];
  if (i < 0 || i >= m->noutputs) return sk_error("internal: output %d of %d", i, m->noutputs);
  SkTensor *t = m->outputs[i];
  const char *name = m->out_names[i];
  switch (m->variant) {
  case SK_VARIANT_FUNCTIONAL:
    if (t) return sk_error("internal: output %d set twice", i);
    m->outputs[i] = strides ? sk_tensor_empty_strided(ndim, sizes, strides, dtype, m->device)
                            : sk_tensor_empty(ndim, sizes, dtype, m->device);
    return m->outputs[i] ? 0 : -1;
  case SK_VARIANT_INPLACE:
    if (t->ndim != ndim || memcmp(t->sizes, sizes, (size_t)ndim * sizeof *sizes) != 0)
      return sk_error("output with shape %s doesn't match the broadcast shape %s (an in-place op cannot change the shape of 'self')",
                      sk_shape_str(t->ndim, t->sizes, a, sizeof a), sk_shape_str(ndim, sizes, b, sizeof b));
    if (t->dtype != dtype)
      return sk_error("argument 'self' has dtype %s, but the in-place result has dtype %s", sk_dtype_name(t->dtype), sk_dtype_name(dtype));
    if (!sk_device_eq(t->device, m->device))
      return sk_device_format(t->device, da, sizeof da), sk_device_format(m->device, db, sizeof db),
             sk_error("argument 'self' is on %s, but the result is on %s", da, db);
    return 0;
  case SK_VARIANT_OUT:
    if (t->dtype != dtype)
      return sk_error("argument '%s' has dtype %s, expected %s", name, sk_dtype_name(t->dtype), sk_dtype_name(dtype));
    if (!sk_device_eq(t->device, m->device))
      return sk_device_format(t->device, da, sizeof da), sk_device_format(m->device, db, sizeof db),
             sk_error("argument '%s' is on %s, expected %s", name, da, db);
    if (t->ndim == ndim && memcmp(t->sizes, sizes, (size_t)ndim * sizeof *sizes) == 0) return 0;
    if (t->numel != 0)
      return sk_error("argument '%s' has shape %s, but the result has shape %s (only an out with 0 elements is resized)", name,
                      sk_shape_str(t->ndim, t->sizes, a, sizeof a), sk_shape_str(ndim, sizes, b, sizeof b));
    if (sk_tensor_resize(t, ndim, sizes)) return -1;
    if (strides && sk_numel(ndim, sizes) > 0) memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
    return 0;
  }
  return sk_error("internal: bad variant");
}

int sk_meta_finish(SkMeta *m) {
  if (m->iter && sk_iter_write_back(m->iter)) return -1;
  if (m->variant != SK_VARIANT_FUNCTIONAL)
    for (int i = 0; i < m->noutputs; i++)
      if (m->outputs[i]) sk_tensor_bump_version(m->outputs[i]);
  return 0;
}

void sk_meta_cleanup(SkMeta *m, int failed) {
  if (m->iter) sk_iter_release(m->iter);
  if (m->variant == SK_VARIANT_FUNCTIONAL && failed)
    for (int i = 0; i < m->noutputs; i++) { sk_tensor_release(m->outputs[i]); m->outputs[i] = NULL; }
}

SkTensor *sk_meta_take_output(SkMeta *m, int i) {
  SkTensor *t = m->outputs[i];
  m->outputs[i] = NULL;
  return t;
}

SkDevice sk_meta_device_of(int n, const SkTensor *const *ts, SkDevice fallback) {
  for (int i = 0; i < n; i++)
    if (ts[i] && !(ts[i]->flags & SK_TENSOR_WRAPPED_NUMBER)) return ts[i]->device;
  return fallback;
}

int sk_meta_check_same_device(const char *op, SkDevice d, int n, const SkTensor *const *ts, const char *const *names) {
  for (int i = 0; i < n; i++) {
    const SkTensor *t = ts[i];
    if (!t || sk_device_eq(t->device, d)) continue;
    if (t->ndim == 0 && t->device.type == SK_DEVICE_CPU) continue; /* CPU scalars mix, as in PyTorch */
    char a[32], b[32];
    sk_device_format(d, a, sizeof a);
    sk_device_format(t->device, b, sizeof b);
    return sk_error("expected all tensors to be on the same device, but found at least two devices, %s and %s "
                    "(argument '%s' of %s)", a, b, names[i], op);
  }
  return 0;
}

SkDevice sk_meta_device_of_list(SkTensorList l, SkDevice fallback) {
  return sk_meta_device_of(l.n, (const SkTensor *const *)l.data, fallback);
}

int sk_meta_check_list_device(const char *op, SkDevice d, SkTensorList l, const char *name) {
  for (int i = 0; i < l.n; i++) {
    const char *names[1] = {name};
    if (sk_meta_check_same_device(op, d, 1, (const SkTensor *const *)&l.data[i], names)) return -1;
  }
  return 0;
}
