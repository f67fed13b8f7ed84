// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln/device.hpp in a kiln built without the CUDA toolkit headers: no device exists, and every operation
// that needs one reports why.
#include "kiln/device.hpp"
#include "runtime/cuda/memory_totals.hpp"

namespace kiln::cuda {
namespace {

[[noreturn]] void unavailable() {
  throw DeviceError("no CUDA driver/GPU: this kiln was built without the CUDA toolkit (KILN_ENABLE_CUDA)");
}

}  // namespace

bool available() { return false; }
std::string unavailable_reason() { return "no CUDA driver/GPU: this kiln was built without the CUDA toolkit"; }
int device_count() { return 0; }
void set_device(int) { unavailable(); }
int current_device() { return 0; }
DeviceProperties properties(int) { unavailable(); }
void synchronize(int) { unavailable(); }
Stream::Stream(int device) : device_(device) { unavailable(); }
void Stream::synchronize() const { unavailable(); }
void Stream::wait(const Event&) const { unavailable(); }
Event::Event(int device) : device_(device) { unavailable(); }
void Event::record(const Stream&) { unavailable(); }
void Event::synchronize() const { unavailable(); }
bool Event::done() const { unavailable(); }
float Event::elapsed_ms(const Event&, const Event&) { unavailable(); }
void Graph::launch(const Stream&) const { unavailable(); }
std::size_t Graph::nodes() const { return 0; }
MemoryStats memory_stats(int) { unavailable(); }
void reset_memory_peak(int) { unavailable(); }

namespace detail {
void* device_alloc(std::size_t, int) { unavailable(); }
void device_free(void*, std::size_t, int) noexcept {}
void* device_alloc_async(std::size_t, const std::shared_ptr<StreamState>&) { unavailable(); }
void device_free_async(void*, std::size_t, const std::shared_ptr<StreamState>&) noexcept {}
bool recording(const StreamState&) { return false; }
void keep_while_recording(const std::shared_ptr<StreamState>&, std::shared_ptr<const void>) {}
Graph capture_graph(const Stream&, const std::function<void()>&) { unavailable(); }
void copy_to_device(void*, const void*, std::size_t, int, const Stream*) { unavailable(); }
void copy_to_host(void*, const void*, std::size_t, int, const Stream*) { unavailable(); }
void copy_on_device(void*, const void*, std::size_t, int, const Stream*) { unavailable(); }
void copy_runs_to_device(void*, const void*, std::size_t, std::size_t, std::size_t, int, const Stream*) { unavailable(); }
void copy_runs_to_host(void*, const void*, std::size_t, std::size_t, std::size_t, int, const Stream*) { unavailable(); }
void* pinned_alloc(std::size_t) { unavailable(); }
void pinned_free(void*) noexcept {}
}  // namespace detail
}  // namespace kiln::cuda

namespace kiln::gpu {
MemoryTotals memory_totals() noexcept { return {}; }
void reset_memory_peaks() noexcept {}
}  // namespace kiln::gpu
