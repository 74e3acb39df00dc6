/*
** sk_cpu_dnnl.h — what the CPU kernels run on oneDNN (sk_cpu_dnnl.c): its set-up and
** the three passes of a float32 convolution
*/
#ifndef SK_CPU_DNNL_H
#define SK_CPU_DNNL_H

#include "sk_conv.h"

/* Caps oneDNN's instruction set at sk.cpu_isa()'s level; once, before its first kernel. */
void sk_cpu_dnnl_setup(void);

/* The passes over the tensors of sk_conv.h: FWD b = conv(a, w) (+ bias), DATA a from b
** (the data gradient, or a transposed convolution), WEIGHTS w from a and b. */
typedef enum { SK_CONV_FWD, SK_CONV_DATA, SK_CONV_WEIGHTS } SkConvPass;

/* One pass on oneDNN: a, w, b contiguous float32 (bias too, or NULL; FWD only), the one
** the pass writes allocated. Returns 0 done, 1 when oneDNN has no kernel for the shape
** (nothing was written: the caller's loops run), -1 on an error. */
int sk_cpu_dnnl_conv(SkConvPass pass, const SkConvGeom *g, const SkTensor *a, const SkTensor *w, const SkTensor *b,
                     const SkTensor *bias);

#endif
