/*
** sk_cuda_emu.cpp — the emulated CUDA runtime and cuBLAS (cuda_runtime.h, cublas_v2.h here)
** Invariants: `allocs` holds exactly the live cudaMalloc allocations, keyed by start,
** and `in_use` the sum of their sizes per device (what SK_CUDA_EMU_MEMORY limits);
** each has its own mapping whose last page is PROT_NONE, and its start is placed,
** 256-byte aligned, so that the first byte past its 256-rounded size is that guard page.
** Every failing call goes through fail(), which records the code as the last error (and
** the message cudaGetErrorString returns for it). `running` names what executes emulated
** device code (a kernel, a cuBLAS call) for the fault handler, which reports a guard-page
** hit and exits as a sanitizer does. A launch runs its blocks in order; within one, thread
** 0 starts as a fiber: if it returns without reaching __syncthreads, the block has no
** barrier (every thread must reach each one), so the other threads run as plain calls;
** else each thread is a fiber, all resumed in order once per barrier.
*/
#include "cuda_runtime.h"
#include "cublas_v2.h"

#include <map>
#include <memory>
#include <mutex>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

thread_local uint3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

struct Alloc {
  char *map;      /* the mapping: data pages, then the guard page */
  size_t map_len;
  char *ptr;      /* what cudaMalloc returned */
  size_t size;    /* what was asked */
  int device;
};

std::map<uintptr_t, Alloc> allocs;
std::map<int, size_t> in_use;                /* per device: the sizes of its live allocations */
std::mutex allocs_lock;                      /* guards allocs and in_use */

thread_local int current;                    /* the calling thread's device, as in CUDA */
thread_local cudaError_t last_error;
thread_local cudaError_t detail_code;
thread_local char detail[768];
thread_local const char *running;            /* emulated device code now executing, or NULL */

int device_count() {
  static int n = -1;
  if (n < 0) {
    const char *s = getenv("SK_CUDA_EMU_DEVICES");
    n = s && *s ? atoi(s) : 2;
    if (n < 0) n = 0;
  }
  return n;
}

/* SK_CUDA_EMU_MEMORY: bytes per device, 0 when unset (no limit); -1 when it is not a byte count.
** Read at each call, so a test can change it. */
long long memory_limit() {
  const char *s = getenv("SK_CUDA_EMU_MEMORY");
  if (!s || !*s) return 0;
  char *end;
  long long n = strtoll(s, &end, 10);
  return *end || n <= 0 ? -1 : n;
}

cudaError_t vfail(cudaError_t e, const char *fmt, va_list ap) {
  vsnprintf(detail, sizeof detail, fmt, ap);
  detail_code = e;
  last_error = e;
  return e;
}

cudaError_t fail(cudaError_t e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cudaError_t fail(cudaError_t e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(e, fmt, ap);
  va_end(ap);
  return e;
}

/* The live allocation holding p, or NULL; with `guard`, the one whose guard page holds p. */
const Alloc *find(const void *p, const Alloc **guard) {
  uintptr_t a = (uintptr_t)p;
  auto it = allocs.upper_bound(a);
  if (guard) *guard = NULL;
  if (it != allocs.end() && guard && a >= (uintptr_t)it->second.map) *guard = &it->second; /* below its start: unused head */
  if (it == allocs.begin()) return NULL;
  --it;
  const Alloc &al = it->second;
  if (a < (uintptr_t)al.ptr + al.size) return &al;
  if (guard && a < (uintptr_t)al.map + al.map_len) *guard = &al;
  return NULL;
}

/* What is wrong with [p, p + bytes) as device memory (of the current device when
** `same_device`), written to buf; 0 when nothing is. */
int describe(const void *p, size_t bytes, int same_device, char *buf, size_t n) {
  std::lock_guard<std::mutex> hold(allocs_lock);
  const Alloc *g;
  const Alloc *al = find(p, &g);
  if (!al) {
    if (g) snprintf(buf, n, "%p is outside the %zu-byte allocation at %p (device %d)", p, g->size, (void *)g->ptr, g->device);
    else snprintf(buf, n, "%p is a host pointer (in no live device allocation)", p);
    return 1;
  }
  if (same_device && al->device != current) {
    snprintf(buf, n, "%p is memory of device %d while device %d is current", p, al->device, current);
    return 1;
  }
  size_t left = (size_t)(al->ptr + al->size - (const char *)p);
  if (bytes > left) {
    snprintf(buf, n, "%zu bytes at %p run past the end of the %zu-byte allocation at %p (%zu bytes left)", bytes, p, al->size,
             (void *)al->ptr, left);
    return 1;
  }
  return 0;
}

int is_device(const void *p) {
  std::lock_guard<std::mutex> hold(allocs_lock);
  return find(p, NULL) != NULL;
}

/* {==== The fault handler: a guard page or a wild address touched by emulated device code ==== */
struct sigaction previous_segv;

void on_segv(int sig, siginfo_t *si, void *uc) {
  const Alloc *g = NULL;
  const Alloc *al = find(si->si_addr, &g);
  if (!running && !g) { /* not ours: the handler that was there decides */
    sigaction(SIGSEGV, &previous_segv, NULL);
    (void)sig; (void)uc;
    return;
  }
  char msg[512];
  if (g)
    snprintf(msg, sizeof msg, "sk CUDA emulation: %s touched %p, past the end of the %zu-byte device allocation at %p (device %d)\n",
             running ? running : "host code", si->si_addr, g->size, (void *)g->ptr, g->device);
  else
    snprintf(msg, sizeof msg, "sk CUDA emulation: %s touched %p, %s\n", running, si->si_addr,
             al ? "inside a device allocation (a protection fault)" : "which is in no device allocation");
  if (write(2, msg, strlen(msg)) < 0) _exit(86);
  _exit(86);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous_segv);
  });
}
/* }==== */

const char *kind_name(cudaMemcpyKind k) {
  switch (k) {
  case cudaMemcpyHostToHost: return "cudaMemcpyHostToHost";
  case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
  case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
  case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
  default: return "cudaMemcpyDefault";
  }
}

} // namespace

extern "C" {

cudaError_t sk_emu_fail(cudaError_t e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(e, fmt, ap);
  va_end(ap);
  return e;
}

cudaError_t sk_emu_check_device_pointer(const void *p, size_t bytes, const char *who) {
  char why[512];
  if (!describe(p, bytes, 1, why, sizeof why)) return cudaSuccess;
  return fail(cudaErrorInvalidDevicePointer, "%s: %s", who, why);
}

/* {==== Devices and errors ==== */
cudaError_t cudaGetDeviceCount(int *count) {
  *count = device_count();
  return *count ? cudaSuccess : fail(cudaErrorNoDevice, "no CUDA-capable device is detected (SK_CUDA_EMU_DEVICES=0)");
}

cudaError_t cudaGetDevice(int *device) {
  *device = current;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= device_count())
    return fail(cudaErrorInvalidDevice, "cudaSetDevice(%d): invalid device ordinal (the emulation has %d: SK_CUDA_EMU_DEVICES)",
                device, device_count());
  current = device;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; } /* kernels ran when launched */

cudaError_t cudaGetLastError(void) {
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}

const char *cudaGetErrorString(cudaError_t e) {
  if (e == detail_code && detail[0]) return detail;
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorInvalidDevicePointer: return "invalid device pointer";
  case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
  case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
  case cudaErrorNoDevice: return "no CUDA-capable device is detected";
  case cudaErrorInvalidDevice: return "invalid device ordinal";
  case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
  case cudaErrorLaunchFailure: return "unspecified launch failure";
  case cudaErrorNotSupported: return "operation not supported";
  }
  return "unrecognized error code";
}
/* }==== */

/* {==== Memory ==== */
cudaError_t cudaMalloc(void **ptr, size_t size) {
  if (!ptr) return fail(cudaErrorInvalidValue, "cudaMalloc: the result pointer is NULL");
  if (!device_count()) return fail(cudaErrorNoDevice, "cudaMalloc: no CUDA-capable device is detected");
  *ptr = NULL;
  if (size == 0) return cudaSuccess; /* as CUDA: success and a NULL pointer */
  long long limit = memory_limit();
  if (limit < 0)
    return fail(cudaErrorInvalidValue, "cudaMalloc: SK_CUDA_EMU_MEMORY='%s' is not a positive byte count", getenv("SK_CUDA_EMU_MEMORY"));
  install_handler();
  size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded = (size + 255) & ~(size_t)255;
  if (rounded < size) return fail(cudaErrorMemoryAllocation, "cudaMalloc: %zu bytes is too large", size);
  size_t len = (rounded + page - 1) / page * page + page;
  char *map = (char *)mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) return fail(cudaErrorMemoryAllocation, "cudaMalloc: out of memory mapping %zu bytes on device %d", size, current);
  if (mprotect(map + len - page, page, PROT_NONE)) {
    munmap(map, len);
    return fail(cudaErrorMemoryAllocation, "cudaMalloc: cannot protect the guard page");
  }
  /* Huge pages where the kernel can give them: an emulated grid-stride loop runs one thread's
  ** whole loop before the next, touching a byte per thread per grid stride, so on 4 KiB pages
  ** a large tensor costs a TLB miss per element (a reduction over 2^31 bytes: 88 ns an element
  ** against 38). Only a hint: the data are the same either way. */
  if (len - page >= ((size_t)2 << 20)) madvise(map, len - page, MADV_HUGEPAGE);
  std::lock_guard<std::mutex> hold(allocs_lock);
  size_t &used = in_use[current]; /* checked with the insertion under one lock */
  if (limit && (size > (size_t)limit || used > (size_t)limit - size)) {
    munmap(map, len);
    return fail(cudaErrorMemoryAllocation, "cudaMalloc: out of memory: %zu bytes asked on device %d, %zu of %lld in use (SK_CUDA_EMU_MEMORY)",
                size, current, used, limit);
  }
  used += size;
  Alloc al = {map, len, map + len - page - rounded, size, current};
  allocs[(uintptr_t)al.ptr] = al;
  *ptr = al.ptr;
  return cudaSuccess;
}

cudaError_t cudaFree(void *ptr) {
  if (!ptr) return cudaSuccess;
  Alloc al;
  {
    std::lock_guard<std::mutex> hold(allocs_lock);
    auto it = allocs.find((uintptr_t)ptr);
    if (it == allocs.end())
      return fail(cudaErrorInvalidValue, "cudaFree(%p): not the start of a live device allocation", ptr);
    al = it->second;
    allocs.erase(it);
    in_use[al.device] -= al.size;
  }
  munmap(al.map, al.map_len);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  if (!free_bytes || !total) return fail(cudaErrorInvalidValue, "cudaMemGetInfo: a result pointer is NULL");
  if (!device_count()) return fail(cudaErrorNoDevice, "cudaMemGetInfo: no CUDA-capable device is detected");
  long long limit = memory_limit();
  if (limit < 0)
    return fail(cudaErrorInvalidValue, "cudaMemGetInfo: SK_CUDA_EMU_MEMORY='%s' is not a positive byte count", getenv("SK_CUDA_EMU_MEMORY"));
  *total = limit ? (size_t)limit : (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
  std::lock_guard<std::mutex> hold(allocs_lock);
  size_t used = in_use[current];
  *free_bytes = used < *total ? *total - used : 0;
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpy: %d is not a cudaMemcpyKind", (int)kind);
  if (count == 0) return cudaSuccess;
  if (kind == cudaMemcpyDefault)
    kind = (cudaMemcpyKind)((is_device(src) ? 2 : 0) + (is_device(dst) ? 1 : 0));
  int dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  int src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  const void *ends[2] = {dst, src};
  int want[2] = {dst_dev, src_dev};
  for (int i = 0; i < 2; i++) {
    char why[512];
    const char *side = i ? "source" : "destination";
    if (want[i] && describe(ends[i], count, 0, why, sizeof why)) /* any device: memcpy works across devices (UVA) */
      return fail(cudaErrorInvalidValue, "cudaMemcpy(%s, %zu bytes): the %s: %s", kind_name(kind), count, side, why);
    if (!want[i] && is_device(ends[i]))
      return fail(cudaErrorInvalidValue, "cudaMemcpy(%s, %zu bytes): the %s %p is device memory, not host memory",
                  kind_name(kind), count, side, ends[i]);
  }
  running = "cudaMemcpy";
  memmove(dst, src, count);
  running = NULL;
  return cudaSuccess;
}
/* }==== */

} // extern "C"

/* {==== Launches (the template in cuda_runtime.h checks the arguments; C++ linkage) ==== */
/* AddressSanitizer is told of each switch between a fiber's stack and the host thread's
** (the sanitizer build of the emulation), so it keeps its shadow of both right. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define SWITCH_START(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define SWITCH_FINISH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#define SWITCH_START(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define SWITCH_FINISH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#endif
namespace {
/* A fiber's stack: 64 KiB (kernels keep small frames), a PROT_NONE page below it so an
** overflow faults instead of overwriting a neighbour. */
enum { FIBER_STACK = 64 * 1024 };
enum { FIBER_READY, FIBER_WAITING, FIBER_DONE };

struct Fiber {
  ucontext_t uc;
  char *map;   /* guard page, then the stack; kept for the next block and launch */
  int state;
};

/* The block running on this host thread. cur is the fiber running, -1 when a plain call
** runs (or none): __syncthreads there means thread 0 returned without reaching it. A fiber
** never moves once made (a ucontext_t points into itself). */
struct Block {
  ucontext_t home;
  const void *home_bottom = NULL; /* the host thread's stack, for SWITCH_START back to it */
  size_t home_size = 0;
  std::vector<std::unique_ptr<Fiber>> fibers;
  int cur = -1;
  void (*thread)(void *) = NULL;
  void *body = NULL;
  ~Block() {
    for (auto &f : fibers) munmap(f->map, FIBER_STACK + (size_t)sysconf(_SC_PAGESIZE));
  }
};
thread_local Block block;

struct Diverged {}; /* thrown by __syncthreads in a plain call, caught by run_block */

/* Thread i of the block in x, y, z order. */
uint3 coords(unsigned i) { return uint3{i % blockDim.x, i / blockDim.x % blockDim.y, i / (blockDim.x * blockDim.y)}; }
void set_thread(unsigned i) { threadIdx = coords(i); }

void fiber_main() {
  SWITCH_FINISH(NULL, &block.home_bottom, &block.home_size);
  block.thread(block.body);
  block.fibers[block.cur]->state = FIBER_DONE;
  SWITCH_START(NULL, block.home_bottom, block.home_size); /* NULL: this fiber's run ends; returns to uc_link: home */
}

/* Fiber i, ready to run the kernel from its start. */
cudaError_t start(unsigned i) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (block.fibers.size() <= i) {
    char *map = (char *)mmap(NULL, FIBER_STACK + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) return fail(cudaErrorMemoryAllocation, "the emulation cannot map a stack for thread %u", i);
    if (mprotect(map, page, PROT_NONE)) {
      munmap(map, FIBER_STACK + page);
      return fail(cudaErrorMemoryAllocation, "the emulation cannot protect the guard page of thread %u's stack", i);
    }
    block.fibers.emplace_back(new Fiber{});
    block.fibers.back()->map = map;
  }
  Fiber &f = *block.fibers[i];
  getcontext(&f.uc);
  f.uc.uc_stack.ss_sp = f.map + page;
  f.uc.uc_stack.ss_size = FIBER_STACK;
  f.uc.uc_link = &block.home;
  makecontext(&f.uc, fiber_main, 0);
  f.state = FIBER_READY;
  return cudaSuccess;
}

void resume(unsigned i) {
  block.cur = (int)i;
  set_thread(i);
  block.fibers[i]->state = FIBER_READY;
  void *save = NULL;
  SWITCH_START(&save, block.fibers[i]->map + sysconf(_SC_PAGESIZE), FIBER_STACK);
  swapcontext(&block.home, &block.fibers[i]->uc);
  SWITCH_FINISH(save, NULL, NULL);
  block.cur = -1;
}

cudaError_t diverged(const char *kernel, unsigned done, unsigned waiting) {
  uint3 d = coords(done), w = coords(waiting);
  return fail(cudaErrorLaunchFailure,
              "kernel '%s', block (%u, %u, %u): thread (%u, %u, %u) returned while thread (%u, %u, %u) waits at __syncthreads "
              "(every thread of a block must reach each barrier)",
              kernel, blockIdx.x, blockIdx.y, blockIdx.z, d.x, d.y, d.z, w.x, w.y, w.z);
}

cudaError_t run_block(const char *kernel, unsigned n) {
  if (cudaError_t e = start(0)) return e;
  resume(0);
  if (block.fibers[0]->state == FIBER_DONE) { /* no barrier in this block */
    unsigned i = 1;
    try {
      for (; i < n; i++) {
        set_thread(i);
        block.thread(block.body);
      }
    } catch (Diverged &) {
      return diverged(kernel, 0, i);
    }
    return cudaSuccess;
  }
  for (unsigned i = 1; i < n; i++) {
    if (cudaError_t e = start(i)) return e;
    resume(i);
  }
  for (;;) { /* every fiber has returned or waits at the same barrier */
    unsigned done = n, waiting = n;
    for (unsigned i = n; i-- > 0;) {
      if (block.fibers[i]->state == FIBER_DONE) done = i;
      else waiting = i;
    }
    if (waiting == n) return cudaSuccess;
    if (done < n) return diverged(kernel, done, waiting);
    for (unsigned i = 0; i < n; i++) resume(i);
  }
}
} // namespace

void __syncthreads(void) {
  if (block.cur < 0) throw Diverged();
  Fiber &f = *block.fibers[block.cur];
  f.state = FIBER_WAITING;
  void *save = NULL;
  SWITCH_START(&save, block.home_bottom, block.home_size);
  swapcontext(&f.uc, &block.home);
  SWITCH_FINISH(save, &block.home_bottom, &block.home_size);
}

cudaError_t sk_emu_run_blocks(const char *kernel, dim3 grid, dim3 b, void (*thread)(void *), void *body) {
  gridDim = uint3{grid.x, grid.y, grid.z};
  blockDim = uint3{b.x, b.y, b.z};
  block.thread = thread;
  block.body = body;
  cudaError_t e = cudaSuccess;
  for (unsigned bz = 0; bz < grid.z && !e; bz++)
    for (unsigned by = 0; by < grid.y && !e; by++)
      for (unsigned bx = 0; bx < grid.x && !e; bx++) {
        blockIdx = uint3{bx, by, bz};
        e = run_block(kernel, b.x * b.y * b.z);
      }
  running = NULL;
  return e;
}

cudaError_t sk_emu_launch_begin(const char *kernel, dim3 g, dim3 b) {
  unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
  const char *why = !device_count() ? "no CUDA-capable device is detected"
                    : threads == 0 || g.x == 0 || g.y == 0 || g.z == 0 ? "a dimension is 0"
                    : threads > 1024 ? "more than 1024 threads per block"
                    : b.x > 1024 || b.y > 1024 || b.z > 64 ? "a block dimension is over its limit (1024, 1024, 64)"
                    : g.x > 2147483647u || g.y > 65535 || g.z > 65535 ? "a grid dimension is over its limit (2^31-1, 65535, 65535)"
                    : NULL;
  if (why)
    return fail(cudaErrorInvalidConfiguration, "kernel '%s': invalid configuration (grid %u x %u x %u, block %u x %u x %u): %s",
                kernel, g.x, g.y, g.z, b.x, b.y, b.z, why);
  running = kernel;
  return cudaSuccess;
}

cudaError_t sk_emu_check_kernel_pointer(const char *kernel, int arg, int index, const void *p) {
  char why[512];
  if (!p || !describe(p, 1, 1, why, sizeof why)) return cudaSuccess;
  running = NULL;
  if (index < 0) return fail(cudaErrorInvalidDevicePointer, "kernel '%s', argument %d: %s", kernel, arg, why);
  return fail(cudaErrorInvalidDevicePointer, "kernel '%s', argument %d (its pointer %d): %s", kernel, arg, index, why);
}

/* }==== */

/* {==== cuBLAS ==== */
struct SkEmuCublas { int device; };

namespace {
thread_local cublasStatus_t blas_code;
thread_local char blas_detail[768];

cublasStatus_t blas_fail(cublasStatus_t s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cublasStatus_t blas_fail(cublasStatus_t s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(blas_detail, sizeof blas_detail, fmt, ap);
  va_end(ap);
  blas_code = s;
  return s;
}

float half_to_float(uint16_t h) {
  uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, bits;
  if (e == 31) bits = s | 0x7F800000u | (m << 13);
  else if (e) bits = s | ((e + 112) << 23) | (m << 13);
  else if (!m) bits = s;
  else { /* subnormal: normalize */
    e = 113;
    while (!(m & 1024)) { m <<= 1; e--; }
    bits = s | (e << 23) | ((m & 1023) << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) { /* round to nearest even, through the hardware-free path */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t s = (x >> 16) & 0x8000, e = (x >> 23) & 255, m = x & 0x7FFFFF;
  if (e == 255) return (uint16_t)(s | 0x7C00 | (m ? 0x200 : 0));
  int ne = (int)e - 112;
  if (ne >= 31) return (uint16_t)(s | 0x7C00);
  if (ne <= 0) {
    if (ne < -10) return (uint16_t)s;
    m |= 0x800000;
    int shift = 14 - ne;
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return (uint16_t)(s | r);
  }
  uint32_t r = ((uint32_t)ne << 10) | (m >> 13), rem = m & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
  return (uint16_t)(s | r);
}

double load(const char *p, cudaDataType_t t) {
  switch (t) {
  case CUDA_R_64F: { double v; memcpy(&v, p, 8); return v; }
  case CUDA_R_32F: { float v; memcpy(&v, p, 4); return v; }
  case CUDA_R_16F: { uint16_t h; memcpy(&h, p, 2); return half_to_float(h); }
  default: { uint16_t h; memcpy(&h, p, 2); uint32_t b = (uint32_t)h << 16; float v; memcpy(&v, &b, 4); return v; }
  }
}

void store(char *p, cudaDataType_t t, double v) {
  switch (t) {
  case CUDA_R_64F: memcpy(p, &v, 8); break;
  case CUDA_R_32F: { float f = (float)v; memcpy(p, &f, 4); break; }
  case CUDA_R_16F: { uint16_t h = float_to_half((float)v); memcpy(p, &h, 2); break; }
  default: {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    uint16_t h = (b & 0x7FFFFFFF) > 0x7F800000 ? (uint16_t)((b >> 16) | 64) : (uint16_t)((b + 0x7FFF + ((b >> 16) & 1)) >> 16);
    memcpy(p, &h, 2);
  }
  }
}

size_t type_size(cudaDataType_t t) { return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 2; }

/* A matrix of `rows` x `cols` (column major, leading dimension ld) in each of `batch` batches. */
cublasStatus_t check_matrix(const char *name, const void *p, int rows, int cols, int ld, long long stride, int batch,
                            cudaDataType_t t) {
  size_t es = type_size(t), bytes = ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * es;
  char why[512];
  for (int i = 0; i < batch; i++) {
    const char *q = (const char *)p + (ptrdiff_t)(i * stride) * (ptrdiff_t)es;
    if (describe(q, bytes, 1, why, sizeof why))
      return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "cublasGemmStridedBatchedEx: matrix %s of batch %d: %s", name, i, why);
  }
  return CUBLAS_STATUS_SUCCESS;
}
} // namespace

extern "C" {

cublasStatus_t cublasCreate(cublasHandle_t *handle) {
  if (!device_count()) return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasCreate: no CUDA-capable device is detected");
  *handle = new SkEmuCublas{current};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasSetMathMode: the handle is NULL");
  if (mode != CUBLAS_DEFAULT_MATH && mode != CUBLAS_TENSOR_OP_MATH && mode != CUBLAS_PEDANTIC_MATH)
    return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "cublasSetMathMode: %d is not a math mode", (int)mode);
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t s) {
  if (s == blas_code && blas_detail[0]) return blas_detail;
  switch (s) {
  case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
  case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
  case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  }
  return "unknown status";
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                          int n, int k, const void *alpha, const void *A, cudaDataType_t Atype, int lda,
                                          long long strideA, const void *B, cudaDataType_t Btype, int ldb,
                                          long long strideB, const void *beta, void *C, cudaDataType_t Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
  const char *f = "cublasGemmStridedBatchedEx";
  (void)algo;
  if (!handle) return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "%s: the handle is NULL", f);
  if (handle->device != current)
    return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: the handle belongs to device %d while device %d is current", f,
                     handle->device, current);
  int ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  int arows = ta ? k : m, brows = tb ? n : k;
  const char *bad = transa < CUBLAS_OP_N || transa > CUBLAS_OP_C ? "transa is not an operation"
                    : transb < CUBLAS_OP_N || transb > CUBLAS_OP_C ? "transb is not an operation"
                    : m < 0 ? "m < 0" : n < 0 ? "n < 0" : k < 0 ? "k < 0" : batchCount < 0 ? "batchCount < 0"
                    : lda < (arows > 1 ? arows : 1) ? "lda < max(1, rows of A)"
                    : ldb < (brows > 1 ? brows : 1) ? "ldb < max(1, rows of B)"
                    : ldc < (m > 1 ? m : 1) ? "ldc < max(1, m)"
                    : !alpha || !beta ? "alpha or beta is NULL" : NULL;
  if (bad)
    return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: %s (m %d, n %d, k %d, lda %d, ldb %d, ldc %d, batchCount %d)", f, bad, m,
                     n, k, lda, ldb, ldc, batchCount);
  int wide = computeType == CUBLAS_COMPUTE_64F;
  int types_ok = Atype == Btype && Btype == Ctype &&
                 (wide ? Ctype == CUDA_R_64F
                       : (computeType == CUBLAS_COMPUTE_32F || computeType == CUBLAS_COMPUTE_32F_PEDANTIC) && Ctype != CUDA_R_64F);
  if (!types_ok)
    return blas_fail(CUBLAS_STATUS_NOT_SUPPORTED, "%s: data types %d, %d, %d with compute type %d are not a supported combination",
                     f, (int)Atype, (int)Btype, (int)Ctype, (int)computeType);
  if (is_device(alpha) || is_device(beta))
    return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: alpha and beta must be host values (pointer mode host)", f);
  if (m == 0 || n == 0 || batchCount == 0) return CUBLAS_STATUS_SUCCESS;
  cublasStatus_t s = check_matrix("C", C, m, n, ldc, strideC, batchCount, Ctype);
  if (!s && k > 0) s = check_matrix("A", A, arows, ta ? m : k, lda, strideA, batchCount, Atype);
  if (!s && k > 0) s = check_matrix("B", B, brows, tb ? k : n, ldb, strideB, batchCount, Btype);
  if (s) return s;
  double al = wide ? *(const double *)alpha : *(const float *)alpha, be = wide ? *(const double *)beta : *(const float *)beta;
  size_t es = type_size(Ctype);
  running = f;
  for (int b = 0; b < batchCount; b++) {
    const char *pa = (const char *)A + (ptrdiff_t)(b * strideA) * (ptrdiff_t)es;
    const char *pb = (const char *)B + (ptrdiff_t)(b * strideB) * (ptrdiff_t)es;
    char *pc = (char *)C + (ptrdiff_t)(b * strideC) * (ptrdiff_t)es;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < m; i++) {
        double acc = 0;
        for (int l = 0; l < k; l++) {
          size_t ia = ta ? (size_t)i * lda + l : (size_t)l * lda + i, ib = tb ? (size_t)l * ldb + j : (size_t)j * ldb + l;
          acc += load(pa + ia * es, Atype) * load(pb + ib * es, Btype);
        }
        char *c = pc + ((size_t)j * ldc + i) * es;
        store(c, Ctype, al * acc + (be != 0 ? be * load(c, Ctype) : 0)); /* beta 0: C is not read, as in cuBLAS */
      }
  }
  running = NULL;
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
/* }==== */
