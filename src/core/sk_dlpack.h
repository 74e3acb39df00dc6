/*
** sk_dlpack.h — tensors to and from DLPack 0.6's DLManagedTensor (dlpack/dlpack.h)
** Export lends: the DLManagedTensor holds a view of the tensor's storage, and pins that
** storage's memory (resize_ refuses to move it), until its deleter runs. Import borrows the producer's memory: the tensor's storage calls the producer's
** deleter when its last view goes. Both deleters release sk tensors, so they run on the
** thread that runs sk (tensor refcounts are not atomic).
*/
#ifndef SK_DLPACK_H
#define SK_DLPACK_H

#include "sk_tensor.h"

struct DLManagedTensor;

/* A DLManagedTensor over t's elements: data at the first element, byte_offset 0, strides
** in elements; the caller (the consumer) calls its deleter exactly once. Refuses bool
** (DLPack 0.6 has no bool), meta tensors and tensors that require grad. */
int sk_to_dlpack(SkTensor *t, struct DLManagedTensor **out);
/* A tensor viewing m's memory; on success the tensor owns m (its deleter runs when the
** storage goes), on failure m stays the caller's. */
int sk_from_dlpack(struct DLManagedTensor *m, SkTensor **out);

#endif
