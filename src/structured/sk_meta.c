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
  m->pre = NULL;
  m->ninputs = m->nlists = m->alias_ok = 0;
  m->resized = 0;
}

static int check_one(const SkTensor *w, const char *wname, int resizing, const SkTensor *t, const char *name, int alias_ok) {
  if (!t) return 0;
  if (resizing && t->storage == w->storage)
    return sk_error("unsupported operation: the written-to tensor '%s' must be resized, but it shares its memory with "
                    "the input tensor '%s'; pass another out tensor", wname, name);
  if (!sk_tensor_may_overlap(w, t) || (alias_ok && sk_tensor_same_view(w, t))) return 0;
  return sk_error("unsupported operation: some elements of the input tensor '%s' and the written-to tensor '%s' refer to "
                  "a single memory location; clone() the input first", name, wname);
}

int sk_check_written(const SkTensor *w, const char *wname, int resizing, int n, const SkTensor *const *in,
                     const char *const *names, int alias_ok) {
  if (sk_tensor_has_internal_overlap(w))
    return sk_error("unsupported operation: more than one element of the written-to tensor '%s' refers to a single "
                    "memory location; clone() it first", wname);
  for (int i = 0; i < n; i++)
    if (check_one(w, wname, resizing, in[i], names[i], alias_ok)) return -1;
  return 0;
}

int sk_check_written_list(const SkTensor *w, const char *wname, int resizing, SkTensorList l, const char *name, int alias_ok) {
  for (int i = 0; i < l.n; i++)
    if (check_one(w, wname, resizing, l.data[i], name, alias_ok)) return -1;
  return 0;
}

/* The written checks of output i against what the op reads. */
static int check_output(const SkMeta *m, const SkTensor *w, int i, int resizing) {
  if (sk_check_written(w, m->out_names[i], resizing, m->ninputs, m->inputs, m->in_names, m->alias_ok)) return -1;
  for (int j = 0; j < m->nlists; j++)
    if (sk_check_written_list(w, m->out_names[i], resizing, m->lists[j], m->list_names[j], m->alias_ok)) return -1;
  for (int j = 0; j < m->noutputs; j++) /* two outs of one call may not share memory */
    if (j != i && m->outputs[j] && m->outputs[j] != w && sk_tensor_may_overlap(w, m->outputs[j]))
      return sk_error("unsupported operation: the outputs '%s' and '%s' refer to a single memory location", m->out_names[j],
                      m->out_names[i]);
  return 0;
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
    return check_output(m, t, i, 0);
  case SK_VARIANT_OUT:
    if (t->dtype != dtype)
      return sk_error("argument '%s' has dtype %s, expected %s", name, sk_dtype_name(t->dtype), sk_dtype_name(dtype));
    if (!sk_device_eq(t->device, m->device))
      return sk_device_format(t->device, da, sizeof da), sk_device_format(m->device, db, sizeof db),
             sk_error("argument '%s' is on %s, expected %s", name, da, db);
    if (t->ndim == ndim && memcmp(t->sizes, sizes, (size_t)ndim * sizeof *sizes) == 0) return check_output(m, t, i, 0);
    if (t->numel != 0)
      return sk_error("argument '%s' has shape %s, but the result has shape %s (only an out with 0 elements is resized)", name,
                      sk_shape_str(t->ndim, t->sizes, a, sizeof a), sk_shape_str(ndim, sizes, b, sizeof b));
    if (check_output(m, t, i, 1)) return -1;
    if (!(m->resized >> i & 1)) { /* put back by sk_meta_cleanup if the call fails */
      m->saved[i].ndim = t->ndim;
      m->saved[i].numel = t->numel;
      memcpy(m->saved[i].sizes, t->sizes, sizeof t->sizes);
      memcpy(m->saved[i].strides, t->strides, sizeof t->strides);
      m->resized |= 1u << i;
    }
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
  for (int i = 0; failed && i < m->noutputs; i++) /* a failed call leaves its outs as they were */
    if (m->resized >> i & 1) {
      SkTensor *t = m->outputs[i];
      t->ndim = m->saved[i].ndim;
      t->numel = m->saved[i].numel;
      memcpy(t->sizes, m->saved[i].sizes, sizeof t->sizes);
      memcpy(t->strides, m->saved[i].strides, sizeof t->strides);
    }
  m->resized = 0;
  if (m->variant == SK_VARIANT_FUNCTIONAL && failed)
    for (int i = 0; i < m->noutputs; i++) { sk_tensor_release(m->outputs[i]); m->outputs[i] = NULL; }
}

SkTensor *sk_meta_take_output(SkMeta *m, int i) {
  SkTensor *t = m->outputs[i];
  m->outputs[i] = NULL;
  return t;
}

/* As PyTorch: a 0-dim CPU tensor mixes with tensors of any device, so it decides only when nothing else does. */
static int cpu_scalar(const SkTensor *t) { return t->ndim == 0 && t->device.type == SK_DEVICE_CPU; }

SkDevice sk_meta_device_of(int n, const SkTensor *const *ts, SkDevice fallback) {
  const SkTensor *scalar = NULL;
  for (int i = 0; i < n; i++) {
    if (!ts[i] || (ts[i]->flags & SK_TENSOR_WRAPPED_NUMBER)) continue;
    if (!cpu_scalar(ts[i])) return ts[i]->device;
    if (!scalar) scalar = ts[i];
  }
  return scalar ? scalar->device : fallback;
}

int sk_meta_check_same_device(const char *op, SkDevice d, int n, const SkTensor *const *ts, const char *const *names) {
  for (int i = 0; i < n; i++) {
    const SkTensor *t = ts[i];
    if (!t || sk_device_eq(t->device, d)) continue;
    if (cpu_scalar(t)) continue; /* CPU scalars mix, as in PyTorch */
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
