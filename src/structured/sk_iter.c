/*
** sk_iter.c — TensorIterator
** Build: broadcast shape → result type → outputs declared through the meta
** context → (compute only) overlap checks, cast temporaries, byte strides,
** dimension reordering and coalescing. Loops walk rows of dim 0.
*/
#include "sk_iter.h"
#include "sk_error.h"
#include "sk_parallel.h"

#include <string.h>

/* {==== Result type ==== */
static int promote_opt(int a, SkDType b) { return a < 0 ? (int)b : (int)sk_dtype_promote((SkDType)a, b); }

static int combine_categories(int higher, int lower) {
  if (higher >= 0 && sk_dtype_is_floating((SkDType)higher)) return higher;
  if (higher == SK_DTYPE_BOOL || (lower >= 0 && sk_dtype_is_floating((SkDType)lower)))
    return higher < 0 ? lower : lower < 0 ? higher : (int)sk_dtype_promote((SkDType)higher, (SkDType)lower);
  return higher >= 0 ? higher : lower;
}

SkDType sk_result_type(int n, const SkTensor *const *ts) {
  int dim = -1, zero = -1, wrapped = -1;
  for (int i = 0; i < n; i++) {
    const SkTensor *t = ts[i];
    if (!t) continue;
    if (t->flags & SK_TENSOR_WRAPPED_NUMBER)
      wrapped = promote_opt(wrapped, sk_dtype_is_floating(t->dtype) ? SK_DTYPE_FLOAT32 : (SkDType)t->dtype);
    else if (t->ndim == 0) zero = promote_opt(zero, t->dtype);
    else dim = promote_opt(dim, t->dtype);
  }
  int r = combine_categories(dim, combine_categories(zero, wrapped));
  return r < 0 ? SK_DTYPE_FLOAT32 : (SkDType)r;
}
/* }==== */

/* {==== Shapes and strides ==== */
static int broadcast_shape(int n, const SkTensor *const *ts, const char *const *names, int *ndim, int64_t *shape) {
  int nd = 0;
  for (int i = 0; i < n; i++) if (ts[i]->ndim > nd) nd = ts[i]->ndim;
  for (int d = 0; d < nd; d++) shape[d] = 1;
  for (int i = 0; i < n; i++) {
    const SkTensor *t = ts[i];
    for (int d = 0; d < t->ndim; d++) {
      int64_t s = t->sizes[d], *o = &shape[nd - t->ndim + d];
      if (s == *o || s == 1) continue;
      if (*o == 1) { *o = s; continue; }
      char a[128], b[128];
      return sk_error("argument '%s' (shape %s) is not broadcastable to shape %s", names[i],
                      sk_shape_str(t->ndim, t->sizes, a, sizeof a), sk_shape_str(nd, shape, b, sizeof b));
    }
  }
  *ndim = nd;
  return 0;
}

/* Byte strides of every operand over the full shape, dim 0 fastest; then reorder and coalesce. */
/* The common case: every operand contiguous with the full shape is one flat dim. */
static int setup_flat(SkTensorIter *it, int nops) {
  int64_t n = sk_numel(it->full_ndim, it->full_shape);
  for (int k = 0; k < nops; k++) {
    const SkTensor *t = it->ops[k];
    if (t->numel != n || !sk_tensor_is_contiguous(t) || (n > 1 && t->ndim != it->full_ndim)) return 0;
  }
  for (int k = 0; k < nops; k++) {
    it->data[k] = sk_tensor_data(it->ops[k]);
    it->strides[0][k] = n > 1 ? (int64_t)sk_dtype_size(it->ops[k]->dtype) : 0;
  }
  it->ndim = 1;
  it->shape[0] = n;
  it->numel = n;
  return 1;
}

static void setup_strides(SkTensorIter *it, int nops) {
  int nd = it->full_ndim;
  if (setup_flat(it, nops)) return;
  for (int k = 0; k < nops; k++) {
    const SkTensor *t = it->ops[k];
    int64_t sz = (int64_t)sk_dtype_size(t->dtype);
    it->data[k] = sk_tensor_data(t);
    for (int d = 0; d < nd; d++) {
      int td = d - (nd - t->ndim);
      int64_t st = td < 0 || t->sizes[td] == 1 ? 0 : t->strides[td] * sz;
      it->strides[nd - 1 - d][k] = st;
    }
  }
  for (int d = 0; d < nd; d++) it->shape[nd - 1 - d] = it->full_shape[d];
  /* Reorder: a dim whose strides are smaller (first operand deciding) moves toward dim 0. */
  for (int i = 1; i < nd; i++)
    for (int j = i; j > 0; j--) {
      int swap = 0;
      for (int k = 0; k < nops; k++) {
        int64_t a = it->strides[j - 1][k], b = it->strides[j][k];
        if (a == 0 || b == 0 || a == b) continue;
        swap = a > b;
        break;
      }
      if (!swap) break;
      int64_t tmp[SK_ITER_MAX_OPERANDS];
      memcpy(tmp, it->strides[j], sizeof tmp);
      memcpy(it->strides[j], it->strides[j - 1], sizeof tmp);
      memcpy(it->strides[j - 1], tmp, sizeof tmp);
      int64_t s = it->shape[j]; it->shape[j] = it->shape[j - 1]; it->shape[j - 1] = s;
    }
  /* Coalesce adjacent dims that walk memory as one. */
  int out = 0;
  for (int d = 1; d < nd; d++) {
    int ok = 1;
    for (int k = 0; k < nops && ok; k++)
      ok = it->shape[out] == 1 || it->shape[d] == 1 || it->strides[d][k] == it->shape[out] * it->strides[out][k];
    if (ok) {
      if (it->shape[out] == 1) memcpy(it->strides[out], it->strides[d], sizeof it->strides[d]);
      it->shape[out] *= it->shape[d];
    } else {
      out++;
      it->shape[out] = it->shape[d];
      memcpy(it->strides[out], it->strides[d], sizeof it->strides[d]);
    }
  }
  it->ndim = nd ? out + 1 : 1;
  if (!nd) { it->shape[0] = 1; for (int k = 0; k < nops; k++) it->strides[0][k] = 0; }
  it->numel = 1;
  for (int d = 0; d < it->ndim; d++) it->numel *= it->shape[d];
}
/* }==== */

SkIterConfig sk_iter_config(void) {
  SkIterConfig c = {1, 0, 1, 0, 1, -1, 0};
  return c;
}

SK_THREAD_LOCAL const SkIterTemps *sk_iter_temps SK_TLS_MODEL;

static SkTensor *temporary(int ndim, const int64_t *sizes, SkDType dtype, SkDevice device) {
  SkTensor *t = sk_iter_temps && sk_iter_temps->take ? sk_iter_temps->take(sk_iter_temps->ctx, ndim, sizes, dtype, device) : NULL;
  return t ? t : sk_tensor_empty(ndim, sizes, dtype, device);
}

static SkTensor *cast_copy(const SkTensor *t, SkDType dtype) {
  SkTensor *c = temporary(t->ndim, t->sizes, dtype, t->device);
  if (c && sk_copy_cpu(c, t)) { sk_tensor_release(c); return NULL; }
  return c;
}

/* Whether input j becomes a cast copy on the host. */
static int cast_input(const SkIterConfig *cfg, int j, const SkTensor *t, SkDType common) {
  return cfg->promote_inputs && !(cfg->keep_dtype_mask >> j & 1) && t->dtype != common;
}

/* A build without compute: the temporaries a host kernel would make, to the hook. */
static int note_temporaries(const SkTensorIter *it, SkMeta *m, const SkIterConfig *cfg, SkDType kernel_out,
                            const SkTensor *const *inputs) {
  const SkIterTemps *h = sk_iter_temps;
  for (int i = 0; i < it->nout; i++) {
    const SkTensor *o = m->outputs[i];
    if (o->dtype != kernel_out && h->note(h->ctx, o->ndim, o->sizes, kernel_out)) return -1;
  }
  for (int j = 0; j < it->nin; j++)
    if (cast_input(cfg, j, inputs[j], it->common_dtype) && h->note(h->ctx, inputs[j]->ndim, inputs[j]->sizes, it->common_dtype))
      return -1;
  return 0;
}

int sk_iter_build(SkTensorIter *it, SkMeta *m, const SkIterConfig *cfg, int nout, int nin,
                  const SkTensor *const *inputs, const char *const *names) {
  if (nout + nin > SK_ITER_MAX_OPERANDS) return sk_error("internal: too many iterator operands");
  it->nout = nout;
  it->nin = nin;
  if (nin > 0) {
    if (broadcast_shape(nin, inputs, names, &it->full_ndim, it->full_shape)) return -1;
    const SkTensor *promoted[SK_ITER_MAX_OPERANDS];
    int np = 0;
    for (int j = 0; j < nin; j++) if (!(cfg->keep_dtype_mask >> j & 1)) promoted[np++] = inputs[j];
    it->common_dtype = sk_result_type(np, promoted);
  } else {
    const SkTensor *o = sk_meta_maybe_output(m, 0);
    if (!o) return sk_error("internal: a nullary iterator needs an output");
    it->full_ndim = o->ndim;
    memcpy(it->full_shape, o->sizes, sizeof o->sizes);
    it->common_dtype = cfg->nullary_dtype >= 0 ? (SkDType)cfg->nullary_dtype : o->dtype;
  }
  if (cfg->int_to_float && !sk_dtype_is_floating(it->common_dtype)) it->common_dtype = SK_DTYPE_FLOAT32;
  SkDType kernel_out = cfg->bool_output ? SK_DTYPE_BOOL : it->common_dtype;
  m->alias_ok = cfg->check_overlap; /* elementwise: an output may be the very view of an input */
  for (int i = 0; i < nout; i++) {
    const SkTensor *given = sk_meta_maybe_output(m, i);
    SkDType target = given ? given->dtype : kernel_out;
    if (given && cfg->safe_cast_to_output && sk_check_cast(kernel_out, given->dtype, m->out_names[i])) return -1;
    if (sk_meta_set_output(m, i, it->full_ndim, it->full_shape, NULL, target)) return -1;
  }
  if (!m->compute) return sk_iter_temps && sk_iter_temps->note ? note_temporaries(it, m, cfg, kernel_out, inputs) : 0;
  /* Cast temporaries are made in host memory only; device-memory kernels convert as they load and store. */
  int host = sk_device_host_addressable(m->device);

  for (int i = 0; i < nout; i++) {
    SkTensor *o = m->outputs[i];
    /* an out or self was checked against the op's inputs by sk_meta_set_output; a caller that
    ** registered no inputs (sk_meta_set_inputs) gets the iterator's inputs checked here */
    if (m->variant != SK_VARIANT_FUNCTIONAL && !m->ninputs && !m->nlists &&
        sk_check_written(o, m->out_names[i], 0, nin, inputs, names, cfg->check_overlap))
      return -1;
    if (o->dtype != kernel_out && host) {
      it->ops[i] = temporary(o->ndim, o->sizes, kernel_out, o->device);
      if (!it->ops[i]) return -1;
      it->write_back[i] = o;
    } else it->ops[i] = sk_tensor_retain(o);
    it->names[i] = m->out_names[i];
  }
  for (int j = 0; j < nin; j++) {
    const SkTensor *t = inputs[j];
    int cast = host && cast_input(cfg, j, t, it->common_dtype);
    SkTensor *use = cast ? cast_copy(t, it->common_dtype) : sk_tensor_retain((SkTensor *)t);
    if (!use) return -1;
    it->ops[nout + j] = use;
    it->names[nout + j] = names[j];
  }
  setup_strides(it, nout + nin);
  return 0;
}

/* {==== Standard configurations ==== */
static const char *const ab_names[] = {"self", "other"};

int sk_iter_binary_op(SkMeta *m, const SkTensor *a, const SkTensor *b) {
  SkIterConfig c = sk_iter_config();
  const SkTensor *in[] = {a, b};
  return sk_iter_build(m->iter, m, &c, 1, 2, in, ab_names);
}

int sk_iter_binary_float_op(SkMeta *m, const SkTensor *a, const SkTensor *b) {
  SkIterConfig c = sk_iter_config();
  c.int_to_float = 1;
  const SkTensor *in[] = {a, b};
  return sk_iter_build(m->iter, m, &c, 1, 2, in, ab_names);
}

int sk_iter_comparison_op(SkMeta *m, const SkTensor *a, const SkTensor *b) {
  SkIterConfig c = sk_iter_config();
  c.bool_output = 1;
  const SkTensor *in[] = {a, b};
  return sk_iter_build(m->iter, m, &c, 1, 2, in, ab_names);
}

int sk_iter_unary_op(SkMeta *m, const SkTensor *a) {
  SkIterConfig c = sk_iter_config();
  return sk_iter_build(m->iter, m, &c, 1, 1, &a, ab_names);
}

int sk_iter_unary_float_op(SkMeta *m, const SkTensor *a) {
  SkIterConfig c = sk_iter_config();
  c.int_to_float = 1;
  return sk_iter_build(m->iter, m, &c, 1, 1, &a, ab_names);
}
/* }==== */

/* {==== Loops ==== */
typedef struct { const SkTensorIter *it; SkLoopFn fn; void *ctx; int nops; } RunCtx;

static void run_range(void *p, int64_t begin, int64_t end) {
  const RunCtx *rc = p;
  const SkTensorIter *it = rc->it;
  if (it->ndim == 1) { /* one row: no index arithmetic */
    char *ptr[SK_ITER_MAX_OPERANDS];
    for (int k = 0; k < rc->nops; k++) ptr[k] = it->data[k] + begin * it->strides[0][k];
    rc->fn(ptr, it->strides[0], end - begin, rc->ctx);
    return;
  }
  int64_t idx[SK_MAX_DIMS], rem = begin;
  for (int d = 0; d < it->ndim; d++) { idx[d] = rem % it->shape[d]; rem /= it->shape[d]; }
  char *ptr[SK_ITER_MAX_OPERANDS];
  int64_t pos = begin;
  while (pos < end) {
    for (int k = 0; k < rc->nops; k++) {
      char *q = it->data[k];
      for (int d = 0; d < it->ndim; d++) q += idx[d] * it->strides[d][k];
      ptr[k] = q;
    }
    int64_t n = it->shape[0] - idx[0];
    if (n > end - pos) n = end - pos;
    rc->fn(ptr, it->strides[0], n, rc->ctx);
    pos += n;
    idx[0] += n;
    for (int d = 0; d < it->ndim - 1 && idx[d] == it->shape[d]; d++) { idx[d] = 0; idx[d + 1]++; }
  }
}

void sk_iter_for_each(const SkTensorIter *it, SkLoopFn fn, void *ctx) {
  RunCtx rc = {it, fn, ctx, it->nout + it->nin};
  if (it->numel == 0) return;
  if (it->numel < SK_GRAIN) run_range(&rc, 0, it->numel);
  else sk_parallel_for(0, it->numel, SK_GRAIN, run_range, &rc);
}

int sk_iter_is_flat(const SkTensorIter *it) {
  if (it->ndim != 1) return 0;
  for (int k = 0; k < it->nout + it->nin; k++)
    if (it->strides[0][k] != (int64_t)sk_dtype_size(it->ops[k]->dtype)) return 0;
  return 1;
}
/* }==== */

int sk_iter_write_back(SkTensorIter *it) {
  for (int i = 0; i < it->nout; i++)
    if (it->write_back[i] && sk_copy_cpu(it->write_back[i], it->ops[i])) return -1;
  return 0;
}

void sk_iter_release(SkTensorIter *it) {
  for (int k = 0; k < SK_ITER_MAX_OPERANDS; k++) { sk_tensor_release(it->ops[k]); it->ops[k] = NULL; }
}

/* {==== Copy with conversion ==== */
typedef struct { SkDType dt, st; size_t dsz, ssz; } CopyCtx;

static void copy_loop(char **data, const int64_t *strides, int64_t n, void *p) {
  const CopyCtx *c = p;
  char *d = data[0];
  const char *s = data[1];
  if (c->dt == c->st) {
    if (strides[0] == (int64_t)c->dsz && strides[1] == (int64_t)c->ssz) { memcpy(d, s, (size_t)n * c->dsz); return; }
    for (int64_t i = 0; i < n; i++, d += strides[0], s += strides[1]) memcpy(d, s, c->dsz);
    return;
  }
  if (c->dt == SK_DTYPE_FLOAT32 && c->st == SK_DTYPE_FLOAT64) {
    for (int64_t i = 0; i < n; i++, d += strides[0], s += strides[1]) *(float *)d = (float)*(const double *)s;
    return;
  }
  if (c->dt == SK_DTYPE_FLOAT64 && c->st == SK_DTYPE_FLOAT32) {
    for (int64_t i = 0; i < n; i++, d += strides[0], s += strides[1]) *(double *)d = *(const float *)s;
    return;
  }
  for (int64_t i = 0; i < n; i++, d += strides[0], s += strides[1]) sk_convert_element(d, c->dt, s, c->st);
}

int sk_copy_cpu(SkTensor *dst, const SkTensor *src) {
  SkTensorIter it;
  memset(it.ops, 0, sizeof it.ops);
  it.nout = 1;
  it.nin = 1;
  const SkTensor *ts[] = {dst, src};
  static const char *const nm[] = {"self", "src"};
  if (broadcast_shape(2, ts, nm, &it.full_ndim, it.full_shape)) return -1;
  if (!sk_tensor_same_shape(dst, src) && (it.full_ndim != dst->ndim ||
      memcmp(it.full_shape, dst->sizes, (size_t)dst->ndim * sizeof dst->sizes[0]) != 0)) {
    char a[128], b[128];
    return sk_error("argument 'src' (shape %s) is not broadcastable to shape %s",
                    sk_shape_str(src->ndim, src->sizes, a, sizeof a), sk_shape_str(dst->ndim, dst->sizes, b, sizeof b));
  }
  it.ops[0] = dst;
  it.ops[1] = (SkTensor *)src;
  setup_strides(&it, 2);
  CopyCtx c = {dst->dtype, src->dtype, sk_dtype_size(dst->dtype), sk_dtype_size(src->dtype)};
  sk_iter_for_each(&it, copy_loop, &c);
  return 0;
}
/* }==== */
