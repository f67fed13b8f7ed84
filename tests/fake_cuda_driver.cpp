// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A stand-in for libcuda.so.1 that runs no kernel: every driver function kiln calls (runtime/cuda/driver.hpp),
// with "device" memory in host memory and two devices that look like H100s (compute capability 9.0, 132 SMs).
// Loaded through KILN_CUDA_DRIVER, it lets a machine without a GPU exercise kiln's CUDA call path on the host:
// the argument checks, the host function, the launches' parameters, the memory kiln allocates, reuses and
// frees. It counts the calls of each driver function (kiln_fake_cuda_calls), so a test can say how many
// driver calls a steady-state kernel call makes, and a benchmark can time kiln's host cost per call against
// a bare cuLaunchKernel of the same stand-in. Kernels do not run: what they would compute is not there.
#include <cuda.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

struct Counter {
  const char* name;
  std::atomic<unsigned long long> calls{0};
  Counter* next = nullptr;
  explicit Counter(const char* n);
};

std::atomic<Counter*> g_counters{nullptr};
std::atomic<long long> g_live{0};  // device allocations not yet freed
std::atomic<int> g_fail_allocations{0};  // the next this many cuMemAlloc(Async) calls run out of memory

bool out_of_memory() {
  int n = g_fail_allocations.load();
  while (n > 0 && !g_fail_allocations.compare_exchange_weak(n, n - 1)) {
  }
  return n > 0;
}

// The last launch's geometry, stream and (when asked for) first parameters: a test's view of what kiln asked for.
constexpr int kCapturedParams = 16;
std::atomic<int> g_capture_params{0};
struct LastLaunch {
  std::mutex mutex;
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  CUstream stream = nullptr;
  unsigned long long params[kCapturedParams] = {};
} g_last;

Counter::Counter(const char* n) : name(n) {
  next = g_counters.load();
  while (!g_counters.compare_exchange_weak(next, this)) {
  }
}

// Counts one call of `fn` (its unversioned name: the argument is not macro-expanded by # and ##).
#define FAKE_COUNT(fn)                  \
  static Counter counter_##fn{#fn};     \
  counter_##fn.calls.fetch_add(1, std::memory_order_relaxed)

// A driver function that only counts its calls and succeeds; one that destroys a handle.
#define FAKE_SUCCEEDS(fn, ...)                                    \
  CUresult CUDAAPI fn(__VA_ARGS__) {                              \
    static Counter counter{#fn};                                  \
    counter.calls.fetch_add(1, std::memory_order_relaxed);        \
    return CUDA_SUCCESS;                                          \
  }
#define FAKE_DESTROYS(fn, Handle)                                 \
  CUresult CUDAAPI fn(Handle h) {                                 \
    static Counter counter{#fn};                                  \
    counter.calls.fetch_add(1, std::memory_order_relaxed);        \
    delete_handle(h);                                             \
    return CUDA_SUCCESS;                                          \
  }

constexpr int kDevices = 2;
struct FakeContext {
  int device;
};
FakeContext g_contexts[kDevices] = {{0}, {1}};
thread_local CUcontext t_current = nullptr;

// Opaque handles: distinct addresses that kiln only passes back.
template <class H>
H new_handle() {
  return reinterpret_cast<H>(new long long(0));
}
template <class H>
void delete_handle(H h) {
  delete reinterpret_cast<long long*>(h);
}

void* device_memory(std::size_t bytes) {
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  if (p) g_live.fetch_add(1, std::memory_order_relaxed);
  return p;
}
void free_device_memory(void* p) {
  if (!p) return;
  g_live.fetch_sub(1, std::memory_order_relaxed);
  std::free(p);
}

CUdeviceptr dptr(void* p) { return reinterpret_cast<CUdeviceptr>(p); }
void* hptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

CUresult allocate(CUdeviceptr* p, std::size_t bytes) {
  if (out_of_memory()) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = dptr(device_memory(bytes));
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

}  // namespace

extern "C" {

/// How often `name` (unversioned, e.g. "cuMemAlloc") was called since the last reset.
__attribute__((visibility("default"))) unsigned long long kiln_fake_cuda_calls(const char* name) {
  for (Counter* c = g_counters.load(); c; c = c->next)
    if (std::strcmp(c->name, name) == 0) return c->calls.load();
  return 0;
}
/// Every driver call since the last reset.
__attribute__((visibility("default"))) unsigned long long kiln_fake_cuda_all_calls() {
  unsigned long long n = 0;
  for (Counter* c = g_counters.load(); c; c = c->next) n += c->calls.load();
  return n;
}
__attribute__((visibility("default"))) void kiln_fake_cuda_reset() {
  for (Counter* c = g_counters.load(); c; c = c->next) c->calls.store(0);
}
/// The grid, block and stream of the last cuLaunchKernel.
__attribute__((visibility("default"))) void kiln_fake_cuda_last_launch(unsigned* grid, unsigned* block, void** stream) {
  std::lock_guard lock(g_last.mutex);
  std::memcpy(grid, g_last.grid, sizeof g_last.grid);
  std::memcpy(block, g_last.block, sizeof g_last.block);
  *stream = g_last.stream;
}
/// From now on, each launch keeps the 8 bytes of its first `n` parameters (at most 16; the kernels must have them).
__attribute__((visibility("default"))) void kiln_fake_cuda_capture_params(int n) { g_capture_params.store(n); }
/// The parameters the last launch kept (kiln_fake_cuda_capture_params).
__attribute__((visibility("default"))) void kiln_fake_cuda_last_params(unsigned long long* out, int n) {
  std::lock_guard lock(g_last.mutex);
  for (int k = 0; k < n && k < kCapturedParams; ++k) out[k] = g_last.params[k];
}
/// The next `n` device allocations fail with CUDA_ERROR_OUT_OF_MEMORY.
__attribute__((visibility("default"))) void kiln_fake_cuda_fail_allocations(int n) { g_fail_allocations.store(n); }
/// Device allocations (cuMemAlloc, cuMemAllocAsync) not yet freed.
__attribute__((visibility("default"))) long long kiln_fake_cuda_live_allocations() { return g_live.load(); }

FAKE_SUCCEEDS(cuInit, unsigned int)
CUresult CUDAAPI cuDriverGetVersion(int* v) {
  FAKE_COUNT(cuDriverGetVersion);
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetCount(int* n) {
  FAKE_COUNT(cuDeviceGetCount);
  *n = kDevices;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  FAKE_COUNT(cuDeviceGet);
  if (ordinal < 0 || ordinal >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice) {
  FAKE_COUNT(cuDeviceGetName);
  std::strncpy(name, "kiln fake CUDA device", static_cast<std::size_t>(len));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  FAKE_COUNT(cuDeviceGetAttribute);
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice) {
  FAKE_COUNT(cuDeviceTotalMem);
  *bytes = std::size_t{80} << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  FAKE_COUNT(cuDevicePrimaryCtxRetain);
  *c = reinterpret_cast<CUcontext>(&g_contexts[d]);
  return CUDA_SUCCESS;
}
FAKE_SUCCEEDS(cuDevicePrimaryCtxRelease, CUdevice)
CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  FAKE_COUNT(cuCtxSetCurrent);
  t_current = c;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* c) {
  FAKE_COUNT(cuCtxGetCurrent);
  *c = t_current;
  return CUDA_SUCCESS;
}
FAKE_SUCCEEDS(cuCtxSetLimit, CUlimit, size_t)
FAKE_SUCCEEDS(cuCtxSynchronize)
CUresult CUDAAPI cuStreamCreate(CUstream* s, unsigned int) {
  FAKE_COUNT(cuStreamCreate);
  *s = new_handle<CUstream>();
  return CUDA_SUCCESS;
}
FAKE_DESTROYS(cuStreamDestroy, CUstream)
FAKE_SUCCEEDS(cuStreamSynchronize, CUstream)
CUresult CUDAAPI cuEventCreate(CUevent* e, unsigned int) {
  FAKE_COUNT(cuEventCreate);
  *e = new_handle<CUevent>();
  return CUDA_SUCCESS;
}
FAKE_DESTROYS(cuEventDestroy, CUevent)
FAKE_SUCCEEDS(cuEventRecord, CUevent, CUstream)
FAKE_SUCCEEDS(cuEventSynchronize, CUevent)
CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent, CUevent) {
  FAKE_COUNT(cuEventElapsedTime);
  *ms = 0;
  return CUDA_SUCCESS;
}
FAKE_SUCCEEDS(cuEventQuery, CUevent)
FAKE_SUCCEEDS(cuStreamWaitEvent, CUstream, CUevent, unsigned int)
CUresult CUDAAPI cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  FAKE_COUNT(cuMemAlloc);
  return allocate(p, bytes);
}
CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  FAKE_COUNT(cuMemFree);
  free_device_memory(hptr(p));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* p, size_t bytes, CUstream) {
  FAKE_COUNT(cuMemAllocAsync);
  return allocate(p, bytes);
}
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr p, CUstream) {
  FAKE_COUNT(cuMemFreeAsync);
  free_device_memory(hptr(p));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream) {
  FAKE_COUNT(cuMemcpyHtoDAsync);
  std::memcpy(hptr(dst), src, n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream) {
  FAKE_COUNT(cuMemcpyDtoHAsync);
  std::memcpy(dst, hptr(src), n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  FAKE_COUNT(cuMemcpyDtoDAsync);
  std::memmove(hptr(dst), hptr(src), n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream) {
  FAKE_COUNT(cuMemsetD8Async);
  std::memset(hptr(p), v, n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) {
  FAKE_COUNT(cuMemsetD8);
  std::memset(hptr(p), v, n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D* m, CUstream) {
  FAKE_COUNT(cuMemcpy2DAsync);
  const char* src = m->srcMemoryType == CU_MEMORYTYPE_HOST ? static_cast<const char*>(m->srcHost)
                                                           : static_cast<const char*>(hptr(m->srcDevice));
  char* dst = m->dstMemoryType == CU_MEMORYTYPE_HOST ? static_cast<char*>(m->dstHost) : static_cast<char*>(hptr(m->dstDevice));
  for (std::size_t r = 0; r < m->Height; ++r) std::memcpy(dst + r * m->dstPitch, src + r * m->srcPitch, m->WidthInBytes);
  return CUDA_SUCCESS;
}
FAKE_SUCCEEDS(cuStreamBeginCapture, CUstream, CUstreamCaptureMode)
CUresult CUDAAPI cuStreamEndCapture(CUstream, CUgraph* g) {
  FAKE_COUNT(cuStreamEndCapture);
  *g = new_handle<CUgraph>();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamIsCapturing(CUstream, CUstreamCaptureStatus* s) {
  FAKE_COUNT(cuStreamIsCapturing);
  *s = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec* e, CUgraph, unsigned long long) {
  FAKE_COUNT(cuGraphInstantiate);
  *e = new_handle<CUgraphExec>();
  return CUDA_SUCCESS;
}
FAKE_SUCCEEDS(cuGraphLaunch, CUgraphExec, CUstream)
FAKE_DESTROYS(cuGraphExecDestroy, CUgraphExec)
FAKE_DESTROYS(cuGraphDestroy, CUgraph)
CUresult CUDAAPI cuGraphGetNodes(CUgraph, CUgraphNode*, size_t* n) {
  FAKE_COUNT(cuGraphGetNodes);
  *n = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* p, CUdevice d) {
  FAKE_COUNT(cuDeviceGetDefaultMemPool);
  static long long pools[kDevices];
  *p = reinterpret_cast<CUmemoryPool>(&pools[d]);
  return CUDA_SUCCESS;
}
FAKE_SUCCEEDS(cuMemPoolSetAttribute, CUmemoryPool, CUmemPool_attribute, void*)
CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool, CUmemPool_attribute, void* v) {
  FAKE_COUNT(cuMemPoolGetAttribute);
  *static_cast<cuuint64_t*>(v) = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostAlloc(void** p, size_t bytes, unsigned int) {
  FAKE_COUNT(cuMemHostAlloc);
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuMemFreeHost(void* p) {
  FAKE_COUNT(cuMemFreeHost);
  std::free(p);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
  FAKE_COUNT(cuMemGetInfo);
  *free = *total = std::size_t{80} << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleLoadData(CUmodule* m, const void*) {
  FAKE_COUNT(cuModuleLoadData);
  *m = new_handle<CUmodule>();
  return CUDA_SUCCESS;
}
FAKE_DESTROYS(cuModuleUnload, CUmodule)
CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule, const char*) {
  FAKE_COUNT(cuModuleGetFunction);
  static long long functions;  // every kernel is the same no-op
  *f = reinterpret_cast<CUfunction>(&functions);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernel(CUfunction, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                                unsigned int bz, unsigned int, CUstream stream, void** params, void**) {
  FAKE_COUNT(cuLaunchKernel);
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || bx * by * bz > 1024 || !params)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g_last.mutex);
  g_last.grid[0] = gx, g_last.grid[1] = gy, g_last.grid[2] = gz;
  g_last.block[0] = bx, g_last.block[1] = by, g_last.block[2] = bz;
  g_last.stream = stream;
  // Every parameter kiln passes lives in an 8-byte slot; a test that asks for n reads that many.
  for (int k = 0; k < g_capture_params.load(std::memory_order_relaxed) && k < kCapturedParams; ++k)
    std::memcpy(&g_last.params[k], params[k], sizeof g_last.params[k]);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block, CUfunction, CUoccupancyB2DSize, size_t, int) {
  FAKE_COUNT(cuOccupancyMaxPotentialBlockSize);
  *min_grid = 264;
  *block = 1024;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction, int threads, size_t) {
  FAKE_COUNT(cuOccupancyMaxActiveBlocksPerMultiprocessor);
  *blocks = threads > 0 ? 2048 / threads : 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncGetAttribute(int* v, CUfunction_attribute, CUfunction) {
  FAKE_COUNT(cuFuncGetAttribute);
  *v = 1024;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  FAKE_COUNT(cuFuncSetAttribute);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorName(CUresult r, const char** s) {
  *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_INVALID_VALUE";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorString(CUresult r, const char** s) {
  *s = r == CUDA_SUCCESS ? "no error" : "an error of kiln's fake CUDA driver";
  return CUDA_SUCCESS;
}

}  // extern "C"
