/*
** sk_structured.c — the structured runtime's steps, and structured families as boxed kernels
** Invariant: on return the stack holds the op's results (success) or the
** arguments untouched (failure); nothing the call allocated survives a
** failure, and the caller's out/self are written only by a successful impl.
*/
#include "sk_structured.h"
#include "sk_error.h"
#include "sk_iter.h"

#include <stdlib.h>
#include <string.h>

/* {==== The descriptor and the steps ==== */
int sk_structured_desc_init(SkStructuredDesc *d, const SkSchema *s, int device_check) {
  memset(d, 0, sizeof *d);
  d->name = s->name;
  d->variant = s->kind == SK_KIND_OUT ? SK_VARIANT_OUT : s->kind == SK_KIND_INPLACE ? SK_VARIANT_INPLACE
                                                                                    : SK_VARIANT_FUNCTIONAL;
  d->nargs = d->nin = s->nargs;
  d->device_check = device_check;
  int nouts = 0;
  for (int i = 0; i < s->nargs; i++) {
    const SkArg *a = &s->args[i];
    if (a->type != SK_T_TENSOR) continue;
    if (a->is_list) {
      if (d->nlists == SK_META_MAX_LISTS)
        return sk_error("'%s' has more than %d Tensor[] arguments; a structured op takes at most %d", s->name,
                        SK_META_MAX_LISTS, SK_META_MAX_LISTS);
      d->list_arg[d->nlists] = (short)i;
      d->list_names[d->nlists++] = a->name;
      continue;
    }
    if (d->ntensors == SK_STRUCTURED_MAX_TENSORS)
      return sk_error("'%s' has more than %d tensor arguments; a structured op takes at most %d", s->name,
                      SK_STRUCTURED_MAX_TENSORS, SK_STRUCTURED_MAX_TENSORS);
    if (a->is_out) {
      if (nouts == SK_MAX_OUTPUTS)
        return sk_error("'%s' has more than %d outputs; a structured op declares at most %d", s->name, SK_MAX_OUTPUTS,
                        SK_MAX_OUTPUTS);
      if (!nouts) d->nin = i;
      d->out_tensor[nouts++] = (short)d->ntensors;
    }
    d->tensor_arg[d->ntensors] = (short)i;
    d->tensor_names[d->ntensors++] = a->name;
  }
  if (d->ntensors - nouts - (d->variant == SK_VARIANT_INPLACE) > SK_META_MAX_INPUTS)
    return sk_error("'%s' reads more than %d tensors; a structured op reads at most %d", s->name, SK_META_MAX_INPUTS,
                    SK_META_MAX_INPUTS);
  if (d->variant == SK_VARIANT_OUT) d->nouts = nouts;
  else if (d->variant == SK_VARIANT_INPLACE) d->nouts = 1, d->out_tensor[0] = 0; /* self, tensor 0 */
  else d->nouts = s->nrets;
  for (int i = 0; i < d->ntensors; i++) { /* what the op reads: every tensor it does not write */
    int written = 0;
    for (int k = 0; k < (d->variant == SK_VARIANT_FUNCTIONAL ? 0 : d->nouts); k++) written |= d->out_tensor[k] == i;
    if (!written) d->in_tensor[d->nreads++] = (short)i;
  }
  if (d->nouts > SK_MAX_OUTPUTS)
    return sk_error("'%s' has %d outputs; a structured op declares at most %d", s->name, d->nouts, SK_MAX_OUTPUTS);
  if (d->variant == SK_VARIANT_INPLACE && (d->ntensors == 0 || d->tensor_arg[0] != 0))
    return sk_error("'%s': an in-place structured op writes its first argument, a Tensor", s->name);
  if (d->variant == SK_VARIANT_OUT && nouts == 0) return sk_error("'%s': an out op has a Tensor(a!) out", s->name);
  return 0;
}

/* }==== */

/* {==== Boxed families ==== */
SkStructuredKernel *sk_structured_kernel_new(SkStructuredFamily *f, int key, SkVariant v) {
  SkStructuredKernel *k = malloc(sizeof *k);
  if (!k) return sk_error("out of memory"), NULL;
  k->family = f;
  k->key = key;
  k->variant = v;
  f->refcount++;
  return k;
}

void sk_structured_kernel_free(void *ctx) {
  SkStructuredKernel *k = ctx;
  if (--k->family->refcount == 0 && k->family->release) k->family->release(k->family);
  free(k);
}

/* Replaces the arguments on s (from base) by the results of a successful call. */
static int push_results(SkOperator *op, SkStack *s, int base, SkMeta *m) {
  SkTensor *res[SK_MAX_OUTPUTS];
  int n = m->noutputs;
  for (int i = 0; i < n; i++)
    res[i] = m->variant == SK_VARIANT_FUNCTIONAL ? sk_meta_take_output(m, i) : sk_tensor_retain(m->outputs[i]);
  sk_stack_truncate(s, base);
  int rc = 0;
  for (int i = 0; i < n && i < op->schema.nrets; i++) rc |= sk_push_tensor_owned(s, res[i]);
  for (int i = op->schema.nrets; i < n; i++) sk_tensor_release(res[i]);
  return rc ? -1 : 0;
}

/* One boxed call of a family member: the steps over the values on the stack. */
static int run_boxed(SkOperator *op, SkStack *s, const SkStructuredFamily *f, const SkStructuredDesc *d, int key) {
  int base = s->n - d->nargs;
  const SkValue *a = &s->v[base];
  const SkTensor *ts[SK_STRUCTURED_MAX_TENSORS];
  SkTensorList ls[SK_META_MAX_LISTS];
  for (int i = 0; i < d->ntensors; i++) ts[i] = a[d->tensor_arg[i]].tag == SK_VAL_TENSOR ? a[d->tensor_arg[i]].u.t : NULL;
  for (int i = 0; i < d->nlists; i++) ls[i] = sk_value_tensorlist(&a[d->list_arg[i]]);
  SkStructuredCall c;
  SkTensorIter it;
  _Alignas(16) unsigned char pre[SK_STRUCTURED_PRE_MAX];
  int rc = sk_structured_begin(&c, d, key, ts, ls, f->iter ? &it : NULL);
  if (f->pre_size) {
    memset(pre, 0, f->pre_size);
    c.m.pre = pre;
  }
  if (!rc) rc = f->meta(&c.m, a, d->nin, f->meta_ud);
  if (!rc && c.m.compute) {
    if (!f->impl[key]) rc = sk_error("internal: no impl of '%s' for %s", op->qualname, sk_key_name(key));
    else rc = f->impl[key](&c.m, a, d->nin, c.m.outputs, c.m.noutputs, f->impl_ud[key]);
  } else if (!rc && key == SK_KEY_DEFAULT_BACKEND) {
    /* through the dispatched out op: its own wrapper checks, writes and bumps */
    SkStack os;
    sk_stack_init(&os);
    for (int i = 0; i < d->nin && !rc; i++) rc = sk_push_copy(&os, &a[i]);
    for (int i = 0; i < c.m.noutputs && !rc; i++) rc = sk_push_tensor(&os, c.m.outputs[i]);
    if (!rc) rc = sk_call_boxed(f->out_op, &os);
    sk_stack_free(&os);
  }
  rc = sk_structured_end(&c, rc);
  return rc ? rc : push_results(op, s, base, &c.m);
}

int sk_structured_boxed(SkOperator *op, SkStack *s, void *ctx) {
  const SkStructuredKernel *k = ctx;
  return run_boxed(op, s, k->family, &k->family->desc[k->variant], k->key);
}

/* The descriptor of an op with a meta function but no family: built on its first call,
** kept in the structured runtime's slot of the op's data (freed with the op). */
static const SkStructuredDesc *desc_of(SkOperator *op) {
  static int slot = -1;
  if (slot < 0 && (slot = sk_op_ext_slot(free)) < 0) return NULL;
  if (op->ext[slot]) return op->ext[slot];
  SkStructuredDesc *d = malloc(sizeof *d);
  if (!d) return sk_error("out of memory"), NULL;
  if (sk_structured_desc_init(d, &op->schema, 1)) { free(d); return NULL; }
  return op->ext[slot] = d;
}

int sk_structured_run_meta(SkOperator *op, SkStack *s, SkStructuredMetaFn meta, void *ud) {
  const SkStructuredDesc *d = desc_of(op);
  if (!d) return -1;
  SkStructuredFamily f;
  memset(&f, 0, sizeof f);
  f.meta = meta;
  f.meta_ud = ud;
  return run_boxed(op, s, &f, d, SK_KEY_META);
}
/* }==== */
