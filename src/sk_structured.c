/*
** sk_structured.c — the structured wrapper as one boxed kernel
** Invariant: on return the stack holds the op's results (success) or the
** arguments untouched (failure); nothing the call allocated survives a
** failure, and the caller's out/self are written only by a successful impl.
*/
#include "sk_structured.h"
#include "sk_error.h"

#include <stdlib.h>

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

/* The tensor arguments among the first n (lists apart), with their names. */
static int tensor_args(const SkOperator *op, const SkValue *a, int n, int skip, const SkTensor **ts, const char **names) {
  int k = 0;
  for (int i = 0; i < n && k < SK_META_MAX_INPUTS; i++)
    if (i != skip && a[i].tag == SK_VAL_TENSOR) { ts[k] = a[i].u.t; names[k++] = op->schema.args[i].name; }
  return k;
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

int sk_structured_boxed(SkOperator *op, SkStack *s, void *ctx) {
  const SkStructuredKernel *k = ctx;
  SkStructuredFamily *f = k->family;
  int nargs = op->schema.nargs, base = s->n - nargs;
  const SkValue *a = &s->v[base];
  int nin = k->variant == SK_VARIANT_OUT ? nargs - f->nouts : nargs;
  int backend = sk_key_is_backend(k->key) && k->key != SK_KEY_META;
  /* the same device rule and written checks as the generated wrappers */
  const SkTensor *ts[SK_META_MAX_INPUTS], *all[SK_META_MAX_INPUTS];
  const char *names[SK_META_MAX_INPUTS], *all_names[SK_META_MAX_INPUTS];
  int nall = tensor_args(op, a, nargs, -1, all, all_names);
  SkDevice dev = k->key == SK_KEY_META ? SK_META : sk_meta_device_of(nall, all, SK_CPU);
  if (sk_meta_check_same_device(op->schema.name, dev, nall, all, all_names)) return -1;
  for (int i = 0; i < nargs; i++)
    if (a[i].tag == SK_VAL_TENSORLIST && sk_meta_check_list_device(op->schema.name, dev, sk_value_tensorlist(&a[i]),
                                                                   op->schema.args[i].name)) return -1;
  int nouts = k->variant == SK_VARIANT_INPLACE ? 1 : f->nouts;
  if (nouts > SK_MAX_OUTPUTS)
    return sk_error("'%s' has %d outputs; a structured op or a meta function declares at most %d", op->qualname, nouts,
                    SK_MAX_OUTPUTS);
  /* what the variant writes is a tensor the caller gave (an optional out left None is not one) */
  for (int i = 0; i < (k->variant == SK_VARIANT_FUNCTIONAL ? 0 : nouts); i++) {
    int j = k->variant == SK_VARIANT_OUT ? nin + i : 0;
    if (a[j].tag != SK_VAL_TENSOR) return sk_error("argument '%s' must be a tensor to write into", op->schema.args[j].name);
  }
  SkMeta m;
  sk_meta_init(&m, op->schema.name, k->variant, dev, backend, nouts);
  if (k->variant != SK_VARIANT_FUNCTIONAL) {
    sk_meta_set_inputs(&m, tensor_args(op, a, nin, k->variant == SK_VARIANT_INPLACE ? 0 : -1, ts, names), ts, names);
    for (int i = 0; i < nin; i++)
      if (a[i].tag == SK_VAL_TENSORLIST) sk_meta_add_input_list(&m, sk_value_tensorlist(&a[i]), op->schema.args[i].name);
  }
  if (k->variant == SK_VARIANT_OUT)
    for (int i = 0; i < f->nouts; i++) {
      m.outputs[i] = a[nin + i].u.t;
      m.out_names[i] = op->schema.args[nin + i].name;
    }
  else if (k->variant == SK_VARIANT_INPLACE) m.outputs[0] = a[0].u.t;
  SkDeviceGuard g = {0, 0, 0};
  int rc = sk_device_guard_enter(&g, dev);
  if (!rc) rc = f->meta(&m, a, nin, f->meta_ud);
  if (!rc && backend) {
    if (!f->impl[k->key]) rc = sk_error("internal: no impl of '%s' for %s", op->qualname, sk_key_name(k->key));
    else rc = f->impl[k->key](&m, a, nin, m.outputs, m.noutputs, f->impl_ud[k->key]);
    if (!rc) rc = sk_meta_finish(&m);
  } else if (!rc && k->key == SK_KEY_DEFAULT_BACKEND) {
    /* through the dispatched out op: its own wrapper checks, writes and bumps */
    SkStack os;
    sk_stack_init(&os);
    for (int i = 0; i < nin && !rc; i++) rc = sk_push_copy(&os, &a[i]);
    for (int i = 0; i < m.noutputs && !rc; i++) rc = sk_push_tensor(&os, m.outputs[i]);
    if (!rc) rc = sk_call_boxed(f->out_op, &os);
    sk_stack_free(&os);
  } else if (!rc) rc = sk_meta_finish(&m);
  sk_device_guard_exit(&g);
  if (!rc) rc = push_results(op, s, base, &m);
  sk_meta_cleanup(&m, rc != 0);
  return rc;
}

int sk_structured_run_meta(SkOperator *op, SkStack *s, SkStructuredMetaFn meta, void *ud) {
  int nargs = op->schema.nargs, nouts = 0;
  for (int i = 0; i < nargs; i++) nouts += op->schema.args[i].is_out;
  SkVariant v = op->schema.kind == SK_KIND_OUT ? SK_VARIANT_OUT : op->schema.kind == SK_KIND_INPLACE ? SK_VARIANT_INPLACE
                                                                                                       : SK_VARIANT_FUNCTIONAL;
  SkStructuredFamily f = {1, NULL, v == SK_VARIANT_FUNCTIONAL ? op->schema.nrets : nouts, meta, ud, {0}, {0}, NULL};
  SkStructuredKernel k = {&f, SK_KEY_META, v};
  return sk_structured_boxed(op, s, &k);
}
