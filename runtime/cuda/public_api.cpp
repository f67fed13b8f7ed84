// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln/device.hpp on top of the driver: device selection, streams, device and pinned memory, copies.
#include <string>

#include <fmt/format.h>

#include "kiln/device.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::cuda {
namespace {

gpu::Device& bound(int ordinal) {
  gpu::Device& d = gpu::device(ordinal);
  d.bind();
  return d;
}

CUstream stream_of(const Stream* s, const gpu::Device& d) {
  if (!s) return d.stream();
  if (s->device() != d.info().ordinal)
    throw DeviceError(fmt::format("a copy on device {} was queued on a stream of device {}", d.info().ordinal, s->device()));
  return static_cast<CUstream>(s->handle());
}

CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

/// Without a stream, copies run on the device's own stream (after the synchronous calls' work) and are finished on
/// return. They are not ordered after work queued on a user's kiln::cuda::Stream: that needs the stream's
/// synchronize(), an Event, or the copy on that stream (docs/gpu.md, "Asynchronous execution").
void finish(const Stream* s, const gpu::Device& d, const char* what) {
  if (!s) gpu::check(gpu::driver().cuStreamSynchronize(d.stream()), what);
}

}  // namespace

bool available() { return gpu::device_count() > 0; }

std::string unavailable_reason() {
  std::string why;
  return gpu::driver_available(&why) ? std::string() : why;
}

int device_count() { return gpu::device_count(); }
void set_device(int ordinal) { gpu::set_current_device(ordinal); }
int current_device() { return gpu::current_device(); }

DeviceProperties properties(int ordinal) {
  const gpu::DeviceInfo& i = gpu::device(ordinal).info();
  return DeviceProperties{i.name, i.cc_major, i.cc_minor, i.sm_count, i.memory_bytes};
}

namespace detail {

void* device_alloc(std::size_t bytes, int device) {
  if (bytes == 0) return nullptr;
  bound(device);
  CUdeviceptr p = 0;
  const CUresult r = gpu::driver().cuMemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS)
    throw DeviceError(fmt::format("allocating {} bytes on CUDA device {}: {}", bytes, device, gpu::error_text(r)));
  gpu::device(device).count_alloc(bytes);
  return reinterpret_cast<void*>(p);
}

void device_free(void* p, std::size_t bytes, int device) noexcept {
  if (!p || !gpu::driver_available()) return;
  try {
    bound(device).count_free(bytes);
    gpu::driver().cuMemFree(dptr(p));
  } catch (...) {
    // Freeing cannot be reported from a destructor; the memory goes with the context.
  }
}

void copy_to_device(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream) {
  if (bytes == 0) return;
  gpu::Device& d = bound(device);
  d.count_transfer();
  gpu::check(gpu::driver().cuMemcpyHtoDAsync(dptr(dst), src, bytes, stream_of(stream, d)), "copying to CUDA device");
  finish(stream, d, "copying to CUDA device");
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream) {
  if (bytes == 0) return;
  gpu::Device& d = bound(device);
  d.count_transfer();
  gpu::check(gpu::driver().cuMemcpyDtoHAsync(dst, dptr(src), bytes, stream_of(stream, d)), "copying from CUDA device");
  finish(stream, d, "copying from CUDA device");
}

void copy_on_device(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream) {
  if (bytes == 0) return;
  gpu::Device& d = bound(device);
  gpu::check(gpu::driver().cuMemcpyDtoDAsync(dptr(dst), dptr(src), bytes, stream_of(stream, d)), "copying on CUDA device");
  finish(stream, d, "copying on CUDA device");
}

namespace {

void copy_runs(void* dst, const void* src, std::size_t run_bytes, std::size_t runs, std::size_t pitch, bool to_device,
               int device, const Stream* stream) {
  if (run_bytes == 0 || runs == 0) return;
  gpu::Device& d = bound(device);
  CUDA_MEMCPY2D m{};
  m.srcMemoryType = to_device ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  m.dstMemoryType = to_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  if (to_device) {
    m.srcHost = src;
    m.dstDevice = dptr(dst);
  } else {
    m.srcDevice = dptr(src);
    m.dstHost = dst;
  }
  m.srcPitch = m.dstPitch = runs > 1 ? pitch : run_bytes;  // one run: any pitch >= its width will do
  m.WidthInBytes = run_bytes;
  m.Height = runs;
  const char* what = to_device ? "copying a slab to CUDA device" : "copying a slab from CUDA device";
  d.count_transfer();
  gpu::check(gpu::driver().cuMemcpy2DAsync(&m, stream_of(stream, d)), what);
  finish(stream, d, what);
}

}  // namespace

void copy_runs_to_device(void* dst, const void* src, std::size_t run_bytes, std::size_t runs, std::size_t pitch, int device,
                         const Stream* stream) {
  copy_runs(dst, src, run_bytes, runs, pitch, true, device, stream);
}

void copy_runs_to_host(void* dst, const void* src, std::size_t run_bytes, std::size_t runs, std::size_t pitch, int device,
                       const Stream* stream) {
  copy_runs(dst, src, run_bytes, runs, pitch, false, device, stream);
}

void* pinned_alloc(std::size_t bytes) {
  bound(current_device());
  void* p = nullptr;
  // PORTABLE: usable with every context, so a buffer serves any device.
  const CUresult r = gpu::driver().cuMemHostAlloc(&p, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE);
  if (r != CUDA_SUCCESS)
    throw DeviceError(fmt::format("allocating {} bytes of pinned host memory: {}", bytes, gpu::error_text(r)));
  return p;
}

void pinned_free(void* p) noexcept {
  if (p && gpu::driver_available()) gpu::driver().cuMemFreeHost(p);
}

}  // namespace detail
}  // namespace kiln::cuda
