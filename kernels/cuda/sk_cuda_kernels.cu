/*
** sk_cuda_kernels.cu — CUDA out kernels: pointwise, fill, random, reductions, matmul
** Pointwise kernels walk the TensorIterator's coalesced shape (dim 0 fastest)
** with 32-bit indexing when it fits; operands keep their dtypes and are
** converted on load and store by the host's element functions (sk_elem.h;
** compute in double for floating dtypes, int64 for integers). A contiguous
** float32 path uses float4 loads. Random numbers use the CPU's Philox
** counters per logical element, so a seed gives the same values on both
** devices. Reductions are block trees in shared memory, in a fixed order.
*/
extern "C" {
#include "sk_kernels.h"
#include "sk_cuda.h"
#include "sk_elem.h"
#include "sk_error.h"
#include "sk_random.h"
}

#include "sk_cuda_launch.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define MAX_OPS 4

static int check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return 0;
  cudaGetLastError();
  return sk_error("CUDA error in %s: %s", what, cudaGetErrorString(e));
}

/* {==== Pointwise ==== */
enum Op { ADD, SUB, MUL, DIV, NEG, ABS, EXP, LOG, SQRT, TANH, SIGMOID, EQ, NE, LT, LE, GT, GE };

/* An input that is a CPU 0-dim tensor (a wrapped number, sk.tensor(2.0)) is read on the
** host and passed by value (bit k of by_value; value/ivalue[k]): the device cannot read it. */
struct Elem {
  int ndim, nops, op, integer;  /* integer: compute in int64 */
  int dtype[MAX_OPS];
  char *data[MAX_OPS];          /* NULL for an operand passed by value */
  int64_t shape[SK_MAX_DIMS];
  int64_t strides[SK_MAX_DIMS][MAX_OPS];
  double alpha;
  int64_t ialpha;
  unsigned by_value;
  double value[MAX_OPS];
  int64_t ivalue[MAX_OPS];
  int pointers(const void **p) const {
    int n = 0;
    for (int k = 0; k < nops; k++) if (!(by_value >> k & 1)) p[n++] = data[k];
    return n;
  }
};

__device__ static double apply(int op, double a, double b, double alpha) {
  switch (op) {
  case ADD: return a + alpha * b;
  case SUB: return a - alpha * b;
  case MUL: return a * b;
  case DIV: return a / b;
  case NEG: return -a;
  case ABS: return fabs(a);
  case EXP: return exp(a);
  case LOG: return log(a);
  case SQRT: return sqrt(a);
  case TANH: return tanh(a);
  case SIGMOID: return 1.0 / (1.0 + exp(-a));
  case EQ: return a == b;
  case NE: return a != b;
  case LT: return a < b;
  case LE: return a <= b;
  case GT: return a > b;
  default: return a >= b;
  }
}

__device__ static int64_t apply_int(int op, int64_t a, int64_t b, int64_t alpha) {
  switch (op) {
  case ADD: return (int64_t)((uint64_t)a + (uint64_t)alpha * (uint64_t)b);
  case SUB: return (int64_t)((uint64_t)a - (uint64_t)alpha * (uint64_t)b);
  case MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
  case NEG: return (int64_t)(0 - (uint64_t)a);
  case ABS: return a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
  case EQ: return a == b;
  case NE: return a != b;
  case LT: return a < b;
  case LE: return a <= b;
  case GT: return a > b;
  default: return a >= b;
  }
}

__device__ static double operand(const Elem &e, char *const *p, int k) {
  return e.by_value >> k & 1 ? e.value[k] : sk_elem_load_double(p[k], (SkDType)e.dtype[k]);
}
__device__ static int64_t operand_int(const Elem &e, char *const *p, int k) {
  return e.by_value >> k & 1 ? e.ivalue[k] : sk_elem_load_int64(p[k], (SkDType)e.dtype[k]);
}

template <typename I>
__global__ void elementwise(Elem e, I n) {
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
    char *p[MAX_OPS];
    for (int k = 0; k < e.nops; k++) p[k] = e.data[k];
    I rem = i; /* the outermost dim's index is what is left: no division for it */
    for (int d = 0; d + 1 < e.ndim; d++) {
      I idx = rem % (I)e.shape[d];
      rem /= (I)e.shape[d];
      for (int k = 0; k < e.nops; k++) p[k] += idx * e.strides[d][k];
    }
    if (e.ndim)
      for (int k = 0; k < e.nops; k++) p[k] += rem * e.strides[e.ndim - 1][k];
    if (e.integer) {
      int64_t a = operand_int(e, p, 1), b = e.nops > 2 ? operand_int(e, p, 2) : 0;
      sk_elem_store_int64(p[0], (SkDType)e.dtype[0], apply_int(e.op, a, b, e.ialpha));
    } else {
      double a = operand(e, p, 1), b = e.nops > 2 ? operand(e, p, 2) : 0;
      sk_elem_store_double(p[0], (SkDType)e.dtype[0], apply(e.op, a, b, e.alpha));
    }
  }
}

/* out = a + alpha * b etc. on contiguous float32: four elements per load. */
__global__ void binary_f32x4(float *o, const float *a, const float *b, int op, float alpha, int64_t n) {
  int64_t n4 = n / 4;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
    float4 x = ((const float4 *)a)[i], y = ((const float4 *)b)[i], r;
    if (op == ADD) { r.x = x.x + alpha * y.x; r.y = x.y + alpha * y.y; r.z = x.z + alpha * y.z; r.w = x.w + alpha * y.w; }
    else if (op == SUB) { r.x = x.x - alpha * y.x; r.y = x.y - alpha * y.y; r.z = x.z - alpha * y.z; r.w = x.w - alpha * y.w; }
    else if (op == MUL) { r.x = x.x * y.x; r.y = x.y * y.y; r.z = x.z * y.z; r.w = x.w * y.w; }
    else { r.x = x.x / y.x; r.y = x.y / y.y; r.z = x.z / y.z; r.w = x.w / y.w; }
    ((float4 *)o)[i] = r;
  }
  if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4) {
    int64_t i = n4 * 4 + threadIdx.x;
    float x = a[i], y = b[i];
    o[i] = op == ADD ? x + alpha * y : op == SUB ? x - alpha * y : op == MUL ? x * y : x / y;
  }
}

static int grid_for(int64_t n) {
  int64_t g = (n + 255) / 256;
  return (int)(g > 65535 * 8 ? 65535 * 8 : g < 1 ? 1 : g);
}

static int run_elementwise(const SkMeta *m, int op, double alpha, int64_t ialpha) {
  const SkTensorIter *it = m->iter;
  if (it->numel == 0) return 0;
  int nops = it->nout + it->nin;
  if (nops > MAX_OPS) return sk_error("internal: too many operands for a CUDA pointwise kernel");
  int flat = it->ndim == 1, same = 1;
  for (int k = 0; k < nops; k++) {
    flat &= it->strides[0][k] == 4;
    same &= it->ops[k]->dtype == SK_DTYPE_FLOAT32;
  }
  if (flat && same && nops == 3 && op <= DIV && ((uintptr_t)it->data[0] | (uintptr_t)it->data[1] | (uintptr_t)it->data[2]) % 16 == 0) {
    return check(SK_LAUNCH(binary_f32x4, grid_for(it->numel / 4 + 1), 256, (float *)it->data[0], (const float *)it->data[1],
                           (const float *)it->data[2], op, (float)alpha, it->numel),
                 "a pointwise kernel");
  }
  Elem e;
  e.ndim = it->ndim;
  e.nops = nops;
  e.op = op;
  e.alpha = alpha;
  e.ialpha = ialpha;
  /* integers in int64 (comparisons too: int64 beyond 2^53 is not exact in double); DIV and the transcendental ops in double */
  e.integer = !sk_dtype_is_floating(it->common_dtype) && op != DIV && (op < EXP || op >= EQ);
  e.by_value = 0;
  for (int k = 0; k < nops; k++) {
    e.dtype[k] = it->ops[k]->dtype;
    e.data[k] = it->data[k];
    if (k >= it->nout && it->ops[k]->device.type == SK_DEVICE_CPU) { /* a CPU 0-dim input (sk_structured_begin allows no other) */
      e.by_value |= 1u << k;
      e.value[k] = sk_elem_load_double(it->data[k], (SkDType)e.dtype[k]);
      e.ivalue[k] = sk_elem_load_int64(it->data[k], (SkDType)e.dtype[k]);
      e.data[k] = NULL;
    }
  }
  for (int d = 0; d < it->ndim; d++) {
    e.shape[d] = it->shape[d];
    for (int k = 0; k < nops; k++) e.strides[d][k] = it->strides[d][k];
  }
  /* 32-bit indices only where the whole grid-stride loop fits: an index reaches at most
  ** numel - 1 + grid * block before the loop test stops it */
  int grid = grid_for(it->numel);
  if (it->numel + (int64_t)grid * 256 <= INT32_MAX)
    return check(SK_LAUNCH(elementwise<int32_t>, grid, 256, e, (int32_t)it->numel), "a pointwise kernel");
  return check(SK_LAUNCH(elementwise<int64_t>, grid, 256, e, it->numel), "a pointwise kernel");
}

extern "C" {
#define BINARY_ALPHA(name, OP)                                                                                \
  int sk_cuda_##name(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkScalar alpha, SkTensor *out) { \
    (void)self; (void)other; (void)out;                                                                       \
    return run_elementwise(m, OP, sk_scalar_to_double(alpha), sk_scalar_to_int(alpha));                       \
  }
BINARY_ALPHA(add_out, ADD)
BINARY_ALPHA(sub_out, SUB)
#define BINARY(name, OP)                                                                                      \
  int sk_cuda_##name(const SkMeta *m, const SkTensor *self, const SkTensor *other, SkTensor *out) {           \
    (void)self; (void)other; (void)out;                                                                       \
    return run_elementwise(m, OP, 1, 1);                                                                      \
  }
BINARY(mul_out, MUL)
BINARY(div_out, DIV)
BINARY(eq_out, EQ)
BINARY(ne_out, NE)
BINARY(lt_out, LT)
BINARY(le_out, LE)
BINARY(gt_out, GT)
BINARY(ge_out, GE)
#define UNARY(name, OP)                                                                                       \
  int sk_cuda_##name(const SkMeta *m, const SkTensor *self, SkTensor *out) {                                  \
    (void)self; (void)out;                                                                                    \
    return run_elementwise(m, OP, 1, 1);                                                                      \
  }
UNARY(neg_out, NEG)
/* PyTorch's abs has no bool loop, on the CPU or CUDA */
int sk_cuda_abs_out(const SkMeta *m, const SkTensor *self, SkTensor *out) {
  (void)out;
  if (self->dtype == SK_DTYPE_BOOL) return sk_error("\"abs_cuda\" not implemented for 'Bool'");
  return run_elementwise(m, ABS, 1, 1);
}
UNARY(exp_out, EXP)
UNARY(log_out, LOG)
UNARY(sqrt_out, SQRT)
UNARY(tanh_out, TANH)
UNARY(sigmoid_out, SIGMOID)
}
/* }==== */

/* {==== Fill and random (one element per logical index) ==== */
struct Walk {
  int ndim, dtype;
  char *data;
  int64_t sizes[SK_MAX_DIMS], strides[SK_MAX_DIMS]; /* C order, strides in bytes */
  int pointers(const void **p) const { p[0] = data; return 1; }
};

static Walk walk_of(const SkTensor *t) {
  Walk w;
  w.ndim = t->ndim;
  w.dtype = t->dtype;
  w.data = (char *)sk_tensor_data(t);
  for (int d = 0; d < t->ndim; d++) { w.sizes[d] = t->sizes[d]; w.strides[d] = t->strides[d] * (int64_t)sk_dtype_size(t->dtype); }
  return w;
}

/* The address of logical index i (< numel): the outermost dim's index is what is left, with
** no division (a 64-bit division per dim is most of a pointwise kernel's arithmetic). */
__device__ static char *at(const Walk &w, int64_t i) {
  char *p = w.data;
  for (int d = w.ndim - 1; d > 0; d--) { p += (i % w.sizes[d]) * w.strides[d]; i /= w.sizes[d]; }
  return w.ndim ? p + i * w.strides[0] : p;
}

__global__ void fill_kernel(Walk w, int64_t n, double v, int64_t iv, int integer) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    if (integer) sk_elem_store_int64(at(w, i), (SkDType)w.dtype, iv); else sk_elem_store_double(at(w, i), (SkDType)w.dtype, v);
}

/* The same draws as kernels/cpu/sk_cpu_random.c. */
__global__ void random_kernel(Walk w, int64_t n, uint64_t seed, uint64_t base, double a, double b, int normal) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    uint32_t r[4];
    sk_philox(seed, base + (uint64_t)i, r);
    int wide = w.dtype == SK_DTYPE_FLOAT64;
    double u1 = wide ? (double)((((uint64_t)r[0] << 32) | r[1]) >> 11) * 0x1p-53 : (double)(r[0] >> 8) * 0x1p-24, v;
    if (!normal) v = a + b * u1;
    else {
      double n1 = wide ? u1 + 0x1p-53 : ((double)r[0] + 1) * 0x1p-32;
      double n2 = wide ? (double)((((uint64_t)r[2] << 32) | r[3]) >> 11) * 0x1p-53 : (double)r[1] * 0x1p-32;
      v = a + b * sqrt(-2 * log(n1)) * cos(6.283185307179586476925 * n2);
    }
    sk_elem_store_double(at(w, i), (SkDType)w.dtype, v);
  }
}

extern "C" int sk_cuda_fill_(SkTensor *self, SkScalar value) {
  if (sk_scalar_check(value, self->dtype)) return -1;
  if (self->numel == 0) return 0;
  int integer = !sk_dtype_is_floating(self->dtype);
  return check(SK_LAUNCH(fill_kernel, grid_for(self->numel), 256, walk_of(self), self->numel, sk_scalar_to_double(value),
                         sk_scalar_to_int(value), integer),
               "fill_");
}

static int fill_random(SkTensor *self, const char *op, int normal, double a, double b) {
  if (self->numel == 0) return 0;
  uint64_t seed, base;
  sk_random_get_state(&seed, &base);
  base = sk_random_reserve((uint64_t)self->numel);
  return check(SK_LAUNCH(random_kernel, grid_for(self->numel), 256, walk_of(self), self->numel, seed, base, a, b, normal), op);
}

/* The argument checks are Meta's (sk_factories.c): one set for every backend. */
extern "C" int sk_cuda_uniform_(SkTensor *self, double from, double to, void *generator) {
  if (sk_meta_kernel_uniform_(self, from, to, generator)) return -1;
  return fill_random(self, "uniform_", 0, from, to - from);
}

extern "C" int sk_cuda_normal_(SkTensor *self, double mean, double std, void *generator) {
  if (sk_meta_kernel_normal_(self, mean, std, generator)) return -1;
  return fill_random(self, "normal_", 1, mean, std);
}
/* }==== */

/* {==== Reductions: block trees, deterministic ====
** The input splits into kept dims (one per output) and reduced dims (size-1 dims dropped,
** reduced dims merged where memory allows), each walked in logical (C) order, so argmax's
** index is the flat logical index over the reduced dims. A block is RED_THREADS threads in
** (x, y): in rows mode x lanes share one output (coalesced when the reduced dims are
** innermost), in columns mode x lanes take adjacent outputs and y lanes share them
** (coalesced when the kept dims are innermost). Each lane folds a fixed, strided set of the
** reduced elements; the lanes of an output then meet in a shared-memory tree. Few outputs
** and a long reduction take two passes: gridDim.y blocks per output each write a partial,
** and a second launch folds the partials in order. The order of every fold depends only on
** the shapes, never on timing: no atomics, the same result on every run. Accumulators are
** the CPU's: double for floating values, wrapping uint64 for integer sums (exact int64),
** int64 for integer extrema; sum and mean read each element converted to out's dtype first,
** as the CPU reads self cast to it; NaN wins amax and argmax; argmax keeps the first index. */
#define RED_THREADS 256
#define RED_LANE_MIN 32     /* elements a lane folds at least before a reduction is split */
#define RED_TARGET 512      /* blocks the split aims for */
enum Red { SUM, MEAN, PROD, AMAX, AMIN, ARGMAX, ARGMIN };
#define RED_SUMS(k) ((k) == SUM || (k) == MEAN || (k) == PROD) /* these convert elements to out's dtype */
#define RED_MIN(k) ((k) == AMIN || (k) == ARGMIN)

/* A value (by `integer`) and argmax's index; idx -1: no element yet (argmax's identity). */
struct Acc {
  union { double f; int64_t i; } v;
  int64_t idx;
};

struct Reduce {
  int kind, integer, in_dtype, out_dtype, through, rows; /* through: convert elements to out_dtype first */
  int nkept, nred;
  const char *in;             /* the elements; NULL in pass 2 */
  const Acc *parts_in;        /* pass 2: nparts partials per output, output-major */
  Acc *parts_out;             /* pass 1: gridDim.y partials per output; NULL: write out */
  char *out;
  int64_t nout, count, nparts;
  int64_t kept_sizes[SK_MAX_DIMS], kept_strides[SK_MAX_DIMS], out_strides[SK_MAX_DIMS]; /* strides in bytes */
  int64_t red_sizes[SK_MAX_DIMS], red_strides[SK_MAX_DIMS];
  int pointers(const void **p) const { p[0] = in; p[1] = parts_in; p[2] = parts_out; p[3] = out; return 4; }
};

__device__ static Acc acc_init(const Reduce &r) {
  Acc a;
  a.idx = -1;
  if (r.integer) a.v.i = r.kind == PROD ? 1 : RED_SUMS(r.kind) ? 0 : RED_MIN(r.kind) ? INT64_MAX : INT64_MIN;
  else a.v.f = r.kind == PROD ? 1 : RED_SUMS(r.kind) ? 0 : RED_MIN(r.kind) ? INFINITY : -INFINITY;
  return a;
}

/* b beyond a: greater for the max kinds, less for the min ones (floating: NaN handled by the callers). */
__device__ static int beyond(const Reduce &r, const Acc &b, const Acc &a) {
  if (r.integer) return RED_MIN(r.kind) ? b.v.i < a.v.i : b.v.i > a.v.i;
  return RED_MIN(r.kind) ? b.v.f < a.v.f : b.v.f > a.v.f;
}

/* a (+)= b: associative and commutative (the arg kinds order ties by index), so any tree order
** gives the same extremum; sums and products depend on the order, which the shapes fix. */
__device__ static void acc_combine(const Reduce &r, Acc &a, const Acc &b) {
  if (r.kind == SUM || r.kind == MEAN) {
    if (r.integer) a.v.i = (int64_t)((uint64_t)a.v.i + (uint64_t)b.v.i);
    else a.v.f += b.v.f;
  } else if (r.kind == PROD) {
    if (r.integer) a.v.i = (int64_t)((uint64_t)a.v.i * (uint64_t)b.v.i);
    else a.v.f *= b.v.f;
  } else if (r.kind == AMAX || r.kind == AMIN) { /* NaN wins */
    if (r.integer) { if (beyond(r, b, a)) a.v.i = b.v.i; }
    else if (a.v.f == a.v.f && (beyond(r, b, a) || b.v.f != b.v.f)) a.v.f = b.v.f;
  } else if (b.idx >= 0) { /* ARGMAX, ARGMIN: NaN wins, then the first index */
    int take;
    if (a.idx < 0) take = 1;
    else if (r.integer) take = beyond(r, b, a) || (b.v.i == a.v.i && b.idx < a.idx);
    else {
      int an = a.v.f != a.v.f, bn = b.v.f != b.v.f;
      take = an || bn ? bn && (!an || b.idx < a.idx) : beyond(r, b, a) || (b.v.f == a.v.f && b.idx < a.idx);
    }
    if (take) a = b;
  }
}

/* Element j (flat over the reduced dims) of the output whose input starts at base. */
__device__ static Acc element(const Reduce &r, const char *base, int64_t j) {
  Acc e;
  e.idx = j;
  int64_t rem = j;
  for (int d = r.nred - 1; d > 0; d--) {
    base += (rem % r.red_sizes[d]) * r.red_strides[d];
    rem /= r.red_sizes[d];
  }
  base += rem * r.red_strides[0];
  SkDType t = (SkDType)r.in_dtype;
  int64_t cast; /* 8 bytes, aligned: room for any dtype */
  if (r.through) { /* as the copy kernel converts */
    SkDType o = (SkDType)r.out_dtype;
    if (!sk_dtype_is_floating(t) && !sk_dtype_is_floating(o)) sk_elem_store_int64(&cast, o, sk_elem_load_int64(base, t));
    else sk_elem_store_double(&cast, o, sk_elem_load_double(base, t));
    base = (const char *)&cast;
    t = o;
  }
  if (r.integer) e.v.i = sk_elem_load_int64(base, t);
  else e.v.f = sk_elem_load_double(base, t);
  return e;
}

__global__ void reduce_kernel(Reduce r) {
  __shared__ Acc tree[RED_THREADS];
  unsigned tid = threadIdx.y * blockDim.x + threadIdx.x;
  unsigned lane = r.rows ? threadIdx.x : threadIdx.y, nlanes = r.rows ? blockDim.x : blockDim.y, step = r.rows ? 1 : blockDim.x;
  int64_t o = r.rows ? (int64_t)blockIdx.x * blockDim.y + threadIdx.y : (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  Acc a = acc_init(r);
  if (o < r.nout) {
    if (r.parts_in)
      for (int64_t j = lane; j < r.nparts; j += nlanes) acc_combine(r, a, r.parts_in[o * r.nparts + j]);
    else {
      const char *base = r.in;
      int64_t rem = o;
      for (int d = r.nkept - 1; d >= 0; d--) {
        base += (rem % r.kept_sizes[d]) * r.kept_strides[d];
        rem /= r.kept_sizes[d];
      }
      int64_t stride = (int64_t)nlanes * gridDim.y; /* block slice blockIdx.y takes lanes' runs in turn */
      for (int64_t j = (int64_t)blockIdx.y * nlanes + lane; j < r.count; j += stride) acc_combine(r, a, element(r, base, j));
    }
  }
  tree[tid] = a;
  for (unsigned s = nlanes / 2; s > 0; s >>= 1) { /* nlanes is a power of 2; every thread reaches every barrier */
    __syncthreads();
    if (lane < s) acc_combine(r, tree[tid], tree[tid + s * step]);
  }
  if (lane != 0 || o >= r.nout) return;
  a = tree[tid];
  if (r.parts_out) { r.parts_out[o * gridDim.y + blockIdx.y] = a; return; }
  char *dst = r.out;
  int64_t rem = o;
  for (int d = r.nkept - 1; d >= 0; d--) {
    dst += (rem % r.kept_sizes[d]) * r.out_strides[d];
    rem /= r.kept_sizes[d];
  }
  SkDType t = (SkDType)r.out_dtype;
  if (r.kind == ARGMAX || r.kind == ARGMIN) sk_elem_store_int64(dst, t, a.idx);
  else if (r.integer) sk_elem_store_int64(dst, t, a.v.i);
  else sk_elem_store_double(dst, t, r.kind == MEAN ? a.v.f / (double)r.count : a.v.f); /* mean of none: 0/0, NaN */
}

/* The least power of 2 >= n, and the greatest <= n (1 for n < 1), either at most cap. */
static unsigned pow2_at_least(int64_t n, unsigned cap) {
  unsigned p = 1;
  while (p < cap && p < n) p <<= 1;
  return p;
}
static unsigned pow2_at_most(int64_t n, unsigned cap) {
  unsigned p = 1;
  while (p < cap && 2 * (int64_t)p <= n) p <<= 1;
  return p;
}

static int run_reduce(const SkTensor *self, int64_t mask, SkTensor *out, int kind) {
  if (out->numel == 0) return 0;
  Reduce r;
  r.kind = kind;
  r.in_dtype = self->dtype;
  r.out_dtype = out->dtype;
  r.through = RED_SUMS(kind) && self->dtype != out->dtype;
  r.integer = !sk_dtype_is_floating(RED_SUMS(kind) ? out->dtype : self->dtype);
  r.in = (const char *)sk_tensor_data(self);
  r.parts_in = NULL;
  r.parts_out = NULL;
  r.out = (char *)sk_tensor_data(out);
  r.nout = out->numel;
  r.nkept = r.nred = 0;
  r.count = 1;
  r.nparts = 0;
  int64_t isz = (int64_t)sk_dtype_size(self->dtype), osz = (int64_t)sk_dtype_size(out->dtype);
  /* out holds the kept dims in order, the reduced ones as size 1 under keepdim: kept dim d is
  ** out's dim d (keepdim) or its k-th; it is walked with out's own strides (an out= may be any view) */
  int keep = out->ndim == self->ndim, k = 0;
  for (int d = 0; d < self->ndim; d++) {
    int64_t n = self->sizes[d], st = self->strides[d] * isz;
    if (mask >> d & 1) {
      r.count *= n;
      if (n == 1) continue;
      if (r.nred && r.red_strides[r.nred - 1] == st * n) { /* merges with the reduced dim before it */
        r.red_sizes[r.nred - 1] *= n;
        r.red_strides[r.nred - 1] = st;
      } else {
        r.red_sizes[r.nred] = n;
        r.red_strides[r.nred++] = st;
      }
    } else {
      int od = keep ? d : k++;
      if (n == 1) continue;
      r.kept_sizes[r.nkept] = n;
      r.kept_strides[r.nkept] = st;
      r.out_strides[r.nkept++] = out->strides[od] * osz;
    }
  }
  if (!r.nred) { r.red_sizes[0] = 1; r.red_strides[0] = isz; r.nred = 1; }
  /* columns when the outputs' innermost dim is contiguous and the reduced one is not (the CPU's rule) */
  r.rows = !(r.nkept && r.kept_strides[r.nkept - 1] == isz && r.red_strides[r.nred - 1] != isz);
  /* lanes: a power of 2 no more than the reduced extent (each has an element), a warp's
  ** worth unless the outputs are too few to fill the block; outputs: adjacent, up to a warp
  ** in columns mode */
  dim3 block;
  unsigned lanes = pow2_at_most(r.count, RED_THREADS);
  if (r.rows) {
    block.y = pow2_at_least(r.nout, RED_THREADS / (lanes < 32 ? lanes : 32));
    block.x = lanes < RED_THREADS / block.y ? lanes : RED_THREADS / block.y;
  } else {
    block.x = pow2_at_least(r.nout, 32);
    block.y = lanes < RED_THREADS / block.x ? lanes : RED_THREADS / block.x;
  }
  unsigned nlanes = r.rows ? block.x : block.y;
  int64_t per_block = r.rows ? block.y : block.x, grid = (r.nout + per_block - 1) / per_block;
  int64_t split = (r.count + (int64_t)nlanes * RED_LANE_MIN - 1) / ((int64_t)nlanes * RED_LANE_MIN);
  int64_t room = (RED_TARGET + grid - 1) / grid;
  if (split > room) split = room;
  if (grid > INT32_MAX) return sk_error("CUDA reduction: %lld outputs are too many", (long long)r.nout);
  if (split <= 1) return check(SK_LAUNCH(reduce_kernel, dim3((unsigned)grid), block, r), "a reduction");
  /* two passes: split partials per output, then one tree per output over them */
  int64_t nparts = r.nout * split;
  int64_t words = nparts * (int64_t)(sizeof(Acc) / sizeof(int64_t));
  SkTensor *parts = sk_tensor_empty(1, &words, SK_DTYPE_INT64, out->device);
  if (!parts) return -1;
  Reduce r2 = r;
  r.parts_out = (Acc *)sk_tensor_data(parts);
  int rc = check(SK_LAUNCH(reduce_kernel, dim3((unsigned)grid, (unsigned)split), block, r), "a reduction (pass 1)");
  if (!rc) {
    r2.in = NULL;
    r2.parts_in = r.parts_out;
    r2.nparts = split;
    r2.rows = 1;
    dim3 b2(pow2_at_most(split, RED_THREADS));
    b2.y = RED_THREADS / b2.x;
    rc = check(SK_LAUNCH(reduce_kernel, dim3((unsigned)((r.nout + b2.y - 1) / b2.y)), b2, r2), "a reduction (pass 2)");
  }
  sk_tensor_release(parts);
  return rc;
}

extern "C" {
/* The reductions with a dtype argument (its meta chose out's dtype), and those without. */
#define REDUCE_DTYPE(name, KIND)                                                                          \
  int sk_cuda_##name(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, int dtype, SkTensor *out) { \
    (void)m; (void)keepdim; (void)dtype;                                                                  \
    return run_reduce(self, dim_mask, out, KIND);                                                         \
  }
#define REDUCE(name, KIND)                                                                                \
  int sk_cuda_##name(const SkMeta *m, const SkTensor *self, int64_t dim_mask, int keepdim, SkTensor *out) { \
    (void)m; (void)keepdim;                                                                               \
    return run_reduce(self, dim_mask, out, KIND);                                                         \
  }
REDUCE_DTYPE(sum_out, SUM)
REDUCE_DTYPE(mean_out, MEAN)
REDUCE_DTYPE(prod_out, PROD)
REDUCE(amax_out, AMAX)
REDUCE(amin_out, AMIN)
REDUCE(argmax_out, ARGMAX)
REDUCE(argmin_out, ARGMIN)
}
/* }==== */

/* {==== Matrix products on cuBLAS (TF32 off: float32 computes in float32) ==== */
static cublasHandle_t handles[64];

static int handle_for(int device, cublasHandle_t *h) {
  if (device < 0 || device >= 64) return sk_error("CUDA device %d out of range", device);
  if (!handles[device]) {
    if (cublasCreate(&handles[device]) != CUBLAS_STATUS_SUCCESS) return sk_error("cannot create a cuBLAS handle");
    cublasSetMathMode(handles[device], CUBLAS_PEDANTIC_MATH);
  }
  *h = handles[device];
  return 0;
}

/* One cuBLAS call in its own column-major terms: C[b] (m x n, ldc) = alpha * op(A[b]) op(B[b]) + beta * C[b]. */
typedef struct Operand { const void *data; cublasOperation_t op; int64_t ld, stride; } Operand;

static int gemm(int device, SkDType dt, int64_t batch, int64_t m, int64_t n, int64_t k, Operand a, Operand b, void *c,
                int64_t ldc, int64_t stridec, double alpha, double beta) {
  if (batch == 0 || m == 0 || n == 0) return 0;
  cublasHandle_t h = NULL;
  if (handle_for(device, &h)) return -1;
  cudaDataType_t t;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (dt) {
  case SK_DTYPE_FLOAT32: t = CUDA_R_32F; compute = CUBLAS_COMPUTE_32F_PEDANTIC; break;
  case SK_DTYPE_FLOAT64: t = CUDA_R_64F; compute = CUBLAS_COMPUTE_64F; break;
  case SK_DTYPE_FLOAT16: t = CUDA_R_16F; break;
  case SK_DTYPE_BFLOAT16: t = CUDA_R_16BF; break;
  default: return sk_error("CUDA matmul supports float16, bfloat16, float32 and float64, not %s", sk_dtype_name(dt));
  }
  float af = (float)alpha, bf = (float)beta;
  const void *pa = dt == SK_DTYPE_FLOAT64 ? (const void *)&alpha : (const void *)&af;
  const void *pb = dt == SK_DTYPE_FLOAT64 ? (const void *)&beta : (const void *)&bf;
  cublasStatus_t s = cublasGemmStridedBatchedEx(h, a.op, b.op, (int)m, (int)n, (int)k, pa, a.data, t, (int)a.ld, a.stride,
                                                b.data, t, (int)b.ld, b.stride, pb, c, t, (int)ldc, stridec, (int)batch,
                                                compute, CUBLAS_GEMM_DEFAULT);
  return s == CUBLAS_STATUS_SUCCESS ? 0 : sk_error("cuBLAS gemm failed: %s", cublasGetStatusString(s));
}

/* {==== Copies on the device: the kernels' own, not the dispatched copy_ (kernels call no op) ==== */
/* dst[i] = src[i] for every logical index i of dst: the bytes when the dtypes agree, else
** converted as the host converts (sk_elem.h): through int64 between integral dtypes, so
** values beyond 2^53 stay exact, else through double. */
__global__ void copy_kernel(Walk dst, Walk src, int64_t n, int isz) {
  int same = dst.dtype == src.dtype;
  int integral = !sk_dtype_is_floating((SkDType)dst.dtype) && !sk_dtype_is_floating((SkDType)src.dtype);
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    char *d = at(dst, i);
    const char *p = at(src, i);
    if (same) for (int b = 0; b < isz; b++) d[b] = p[b];
    else if (integral) sk_elem_store_int64(d, (SkDType)dst.dtype, sk_elem_load_int64(p, (SkDType)src.dtype));
    else sk_elem_store_double(d, (SkDType)dst.dtype, sk_elem_load_double(p, (SkDType)src.dtype));
  }
}

/* dst = src broadcast to dst's shape and converted to its dtype; both on the current device. */
static int copy_broadcast(SkTensor *dst, const SkTensor *src) {
  if (dst->numel == 0) return 0;
  if (sk_tensor_same_view(dst, src)) return 0; /* dst is src (addmm_: out is self) */
  Walk w = walk_of(dst), from = w;
  int64_t isz = (int64_t)sk_dtype_size(src->dtype);
  from.dtype = src->dtype;
  from.data = (char *)sk_tensor_data(src);
  for (int d = 0; d < dst->ndim; d++) { /* src's dims align to dst's last ones; size-1 and missing dims repeat */
    int sd = d - (dst->ndim - src->ndim);
    from.strides[d] = sd >= 0 && src->sizes[sd] != 1 ? src->strides[sd] * isz : 0;
  }
  return check(SK_LAUNCH(copy_kernel, grid_for(dst->numel), 256, w, from, dst->numel, (int)sk_dtype_size(dst->dtype)),
               "a copy on the device");
}

/* The device hook behind copy_ between tensors of one CUDA device (any strides and dtypes):
** copy_'s own checks (broadcast, overlap) ran before. */
extern "C" int sk_cuda_copy_tensor(SkTensor *dst, const SkTensor *src) { return copy_broadcast(dst, src); }

/* A contiguous version of t (t itself, retained, when it already is). */
static SkTensor *dense(const SkTensor *t) {
  if (sk_tensor_is_contiguous(t)) return sk_tensor_retain((SkTensor *)t);
  SkTensor *c = sk_tensor_empty(t->ndim, t->sizes, t->dtype, t->device);
  if (c && copy_broadcast(c, t)) { sk_tensor_release(c); return NULL; }
  return c;
}
/* }==== */

/* Whether cuBLAS can read the row-major matrix [r, c] in t's last two dims in place with its
** rows contiguous (rows = 1; *ld the row stride) or its columns contiguous (rows = 0; *ld the
** column stride); 0 too when the leading dimension passes int. A dim of size 1 may have any stride. */
static int laid_out(const SkTensor *t, int rows, int64_t *ld) {
  int inner = t->ndim - (rows ? 1 : 2), outer = t->ndim - (rows ? 2 : 1);
  int64_t need = t->sizes[inner] > 1 ? t->sizes[inner] : 1;
  if (t->sizes[inner] > 1 && t->strides[inner] != 1) return 0;
  *ld = t->sizes[outer] == 1 ? need : t->strides[outer];
  return *ld >= need && *ld <= INT32_MAX;
}

/* x as an operand of a column-major product whose result is laid out by `rows` (1: out's rows
** are contiguous, so cuBLAS computes out^T = b^T a^T; 0: out = a b): op N where x is laid out
** as the result, op T where it is the other way; 0 when x must be copied first. */
static int operand(const SkTensor *x, int rows, int batched, Operand *o) {
  int64_t ld;
  o->data = sk_tensor_data(x);
  o->stride = batched && x->sizes[0] > 1 ? x->strides[0] : 0;
  if (laid_out(x, rows, &ld)) o->op = CUBLAS_OP_N;
  else if (laid_out(x, !rows, &ld)) o->op = CUBLAS_OP_T;
  else return 0;
  o->ld = ld;
  return 1;
}

/* out[b] = alpha * a[b] @ b[b] + beta * out[b] ([n, k] @ [k, p]), reading each operand in place when
** cuBLAS can (transposes through its op flags and leading dimensions), else from a dense copy. */
static int batched(const SkTensor *a, const SkTensor *b, SkTensor *out, int64_t batch, double alpha, double beta) {
  int is3 = out->ndim == 3;
  int64_t n = a->sizes[a->ndim - 2], k = a->sizes[a->ndim - 1], p = b->sizes[b->ndim - 1], ldc;
  SkTensor *da = NULL, *db = NULL, *tmp = NULL;
  int rows = laid_out(out, 1, &ldc), rc = -1;
  if (!rows && !laid_out(out, 0, &ldc)) { /* out is written through a dense temporary */
    if (!(tmp = dense(out))) return -1;
    rows = laid_out(tmp, 1, &ldc);
  }
  SkTensor *c = tmp ? tmp : out;
  Operand oa, ob;
  int ready = operand(a, rows, is3, &oa) || ((da = dense(a)) && operand(da, rows, is3, &oa));
  ready = ready && (operand(b, rows, is3, &ob) || ((db = dense(b)) && operand(db, rows, is3, &ob)));
  if (ready) {
    int64_t stridec = is3 && batch > 1 ? c->strides[0] : 0;
    rc = rows ? gemm(out->device.index, out->dtype, batch, p, n, k, ob, oa, sk_tensor_data(c), ldc, stridec, alpha, beta)
              : gemm(out->device.index, out->dtype, batch, n, p, k, oa, ob, sk_tensor_data(c), ldc, stridec, alpha, beta);
  }
  if (!rc && tmp) rc = copy_broadcast(out, tmp);
  sk_tensor_release(da);
  sk_tensor_release(db);
  sk_tensor_release(tmp);
  return rc;
}

extern "C" {
int sk_cuda_mm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat2, SkTensor *out) {
  (void)m;
  return batched(self, mat2, out, 1, 1, 0);
}
int sk_cuda_bmm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat2, SkTensor *out) {
  (void)m;
  return batched(self, mat2, out, self->sizes[0], 1, 0);
}
int sk_cuda_addmm_out(const SkMeta *m, const SkTensor *self, const SkTensor *mat1, const SkTensor *mat2, SkScalar beta,
                      SkScalar alpha, SkTensor *out) {
  (void)m;
  double b = sk_scalar_to_double(beta);
  if (b != 0 && copy_broadcast(out, self)) return -1; /* out = self broadcast, then out = alpha*mat1@mat2 + beta*out */
  return batched(mat1, mat2, out, 1, sk_scalar_to_double(alpha), b);
}
}
/* }==== */
