/*
** sk_iter.h — TensorIterator: broadcasting, type promotion, coalescing, loops
** Operands are outputs first, then inputs. After a build with compute on
** the CPU, every input has the compute dtype (the common dtype; a cast copy
** is made when it differs) and every output the dtype the kernel writes
** (compute dtype, or bool for comparisons); an output of another dtype is
** computed into a temporary and copied back by sk_iter_write_back(). On
** other devices operands keep their dtypes: those kernels convert.
** Strides are in bytes, dims coalesced, dim 0 the fastest.
*/
#ifndef SK_ITER_H
#define SK_ITER_H

#include "sk_meta.h"
#include "sk_dispatch.h" /* SK_THREAD_LOCAL */

#define SK_ITER_MAX_OPERANDS 8

typedef struct SkIterConfig {
  int promote_inputs;            /* inputs take the common dtype */
  int int_to_float;              /* integer/bool common dtype becomes float32 (true division, exp...) */
  int safe_cast_to_output;       /* common dtype must cast to an out/self's dtype */
  int bool_output;               /* comparisons: outputs default to bool */
  int check_overlap;             /* partial overlap between input and output is an error */
  int nullary_dtype;             /* -1, or the dtype of an output with no inputs */
  unsigned keep_dtype_mask;      /* inputs (bit i) left out of type promotion and never cast */
} SkIterConfig;

typedef struct SkTensorIter {
  int nout, nin;
  SkTensor *ops[SK_ITER_MAX_OPERANDS];          /* owned refs: what the loops see */
  SkTensor *write_back[SK_MAX_OUTPUTS];         /* caller outputs behind temporaries */
  const char *names[SK_ITER_MAX_OPERANDS];
  SkDType common_dtype;                         /* dtype of the computation */
  int full_ndim;
  int64_t full_shape[SK_MAX_DIMS];              /* broadcast shape, C order */
  int ndim;                                     /* coalesced */
  int64_t shape[SK_MAX_DIMS];                   /* coalesced, dim 0 fastest */
  int64_t strides[SK_MAX_DIMS][SK_ITER_MAX_OPERANDS];
  char *data[SK_ITER_MAX_OPERANDS];
  int64_t numel;
} SkTensorIter;

/* The temporaries a build makes for a host kernel (inputs cast to the common dtype, outputs of
** another dtype than the kernel writes), handed to whoever installed this thread's hook (sk.plan
** serves them from its arena): a build without compute (a Meta call) calls note for each one a
** host kernel would make, in the order a build with compute asks take for them; take's NULL
** means "allocate it". NULL: no hook (the usual case). */
typedef struct SkIterTemps {
  int (*note)(void *ctx, int ndim, const int64_t *sizes, SkDType dtype);
  SkTensor *(*take)(void *ctx, int ndim, const int64_t *sizes, SkDType dtype, SkDevice device);
  void *ctx;
} SkIterTemps;
extern SK_THREAD_LOCAL const SkIterTemps *sk_iter_temps SK_TLS_MODEL;

/* Inner loop: n elements, operand k at data[k] advancing strides[k] bytes. */
typedef void (*SkLoopFn)(char **data, const int64_t *strides, int64_t n, void *ctx);

/* Attaches an iterator to a meta context before the meta function runs. */
static inline void sk_meta_use_iter(SkMeta *m, SkTensorIter *it) {
  for (int k = 0; k < SK_ITER_MAX_OPERANDS; k++) it->ops[k] = NULL;
  for (int k = 0; k < SK_MAX_OUTPUTS; k++) it->write_back[k] = NULL;
  it->nout = it->nin = 0;
  m->iter = it;
}

SkIterConfig sk_iter_config(void);
/* Builds over inputs[0..nin); outputs come from the meta context. */
int sk_iter_build(SkTensorIter *it, SkMeta *m, const SkIterConfig *cfg, int nout, int nin,
                  const SkTensor *const *inputs, const char *const *names);
/* The common building blocks of PyTorch's TensorIteratorBase. */
int sk_iter_binary_op(SkMeta *m, const SkTensor *a, const SkTensor *b);
int sk_iter_binary_float_op(SkMeta *m, const SkTensor *a, const SkTensor *b);
int sk_iter_comparison_op(SkMeta *m, const SkTensor *a, const SkTensor *b);
int sk_iter_unary_op(SkMeta *m, const SkTensor *a);
int sk_iter_unary_float_op(SkMeta *m, const SkTensor *a);

/* Runs fn over all elements, in parallel past the grain size. */
void sk_iter_for_each(const SkTensorIter *it, SkLoopFn fn, void *ctx);
/* 1 when every operand is contiguous with its element size (a flat loop). */
int sk_iter_is_flat(const SkTensorIter *it);
int sk_iter_write_back(SkTensorIter *it);
void sk_iter_release(SkTensorIter *it);

/* Result type of PyTorch: dimensioned tensors > zero-dim tensors > wrapped numbers. */
SkDType sk_result_type(int n, const SkTensor *const *ts);
/* dst <- src with dtype conversion and broadcasting of src; CPU only. */
int sk_copy_cpu(SkTensor *dst, const SkTensor *src);

#endif
