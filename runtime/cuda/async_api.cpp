// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln/device.hpp's asynchronous side: streams, events, graphs, the stream-ordered pool and memory statistics.
#include <algorithm>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "kiln/device.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/stream_state.hpp"

namespace kiln::cuda {
namespace {

/// Every live Stream, so that cuda::synchronize(device) reports their deferred failures too.
struct Registry {
  std::mutex mutex;
  std::vector<std::weak_ptr<detail::StreamState>> streams;

  void add(const std::shared_ptr<detail::StreamState>& s) {
    std::lock_guard lock(mutex);
    std::erase_if(streams, [](const auto& w) { return w.expired(); });
    streams.push_back(s);
  }
  std::vector<std::shared_ptr<detail::StreamState>> on(int device) {
    std::lock_guard lock(mutex);
    std::vector<std::shared_ptr<detail::StreamState>> out;
    for (const auto& w : streams)
      if (auto s = w.lock(); s && s->device == device) out.push_back(std::move(s));
    return out;
  }
};

Registry& registry() {
  static Registry& r = *new Registry;  // never destroyed: Streams may outlive static destruction
  return r;
}

gpu::Device& bound(int ordinal) {
  gpu::Device& d = gpu::device(ordinal);
  d.bind();
  return d;
}

void same_device(int stream_device, int other, const char* what) {
  if (stream_device != other)
    throw DeviceError(fmt::format("{} on CUDA device {} used with a stream of device {}: streams, events and graphs "
                                  "work on one device",
                                  what, other, stream_device));
}

}  // namespace

void synchronize(int ordinal) {
  bound(ordinal);
  gpu::check(gpu::driver().cuCtxSynchronize(), fmt::format("synchronizing CUDA device {}", ordinal));
  for (const auto& s : registry().on(ordinal)) s->check_deferred();
}

// ---- Stream -------------------------------------------------------------------------------------------

Stream::Stream(int device) : state_(std::make_shared<detail::StreamState>(device)), handle_(state_->stream), device_(device) {
  registry().add(state_);
}

void Stream::synchronize() const { state_->synchronize(); }

void Stream::wait(const Event& e) const {
  same_device(device_, e.device(), "an event");
  bound(device_);
  gpu::check(gpu::driver().cuStreamWaitEvent(state_->stream, static_cast<CUevent>(e.handle()), 0), "making a CUDA stream wait for an event");
}

// ---- Event --------------------------------------------------------------------------------------------

Event::Event(int device) : device_(device) {
  bound(device);
  CUevent e = nullptr;
  gpu::check(gpu::driver().cuEventCreate(&e, CU_EVENT_DEFAULT), "creating a CUDA event");
  handle_ = std::shared_ptr<void>(e, [](void* p) {
    if (gpu::driver_available()) gpu::driver().cuEventDestroy(static_cast<CUevent>(p));
  });
}

void Event::record(const Stream& s) {
  same_device(s.device(), device_, "an event");
  bound(device_);
  gpu::check(gpu::driver().cuEventRecord(static_cast<CUevent>(handle()), static_cast<CUstream>(s.handle())), "recording a CUDA event");
}

void Event::synchronize() const {
  bound(device_);
  gpu::check(gpu::driver().cuEventSynchronize(static_cast<CUevent>(handle())), "waiting for a CUDA event");
}

bool Event::done() const {
  bound(device_);
  const CUresult r = gpu::driver().cuEventQuery(static_cast<CUevent>(handle()));
  if (r == CUDA_ERROR_NOT_READY) return false;
  gpu::check(r, "querying a CUDA event");
  return true;
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  bound(start.device_);
  float ms = 0;
  gpu::check(gpu::driver().cuEventElapsedTime(&ms, static_cast<CUevent>(start.handle()), static_cast<CUevent>(end.handle())),
             "timing between two CUDA events");
  return ms;
}

// ---- Graph --------------------------------------------------------------------------------------------

namespace detail {

Graph capture_graph(const Stream& s, const std::function<void()>& work) {
  StreamState& st = *s.state();
  if (st.recording) throw DeviceError("kiln::cuda::capture: the stream is already recording a graph (captures do not nest)");
  bound(st.device);
  auto graph = std::make_shared<GraphState>();
  graph->device = st.device;
  // Relaxed: kiln may allocate a status slot (cuMemAlloc) while the stream records; other streams are unaffected.
  gpu::check(gpu::driver().cuStreamBeginCapture(st.stream, CU_STREAM_CAPTURE_MODE_RELAXED), "starting a CUDA graph capture");
  st.recording = graph.get();
  try {
    work();
  } catch (...) {
    st.recording = nullptr;
    CUgraph partial = nullptr;
    gpu::driver().cuStreamEndCapture(st.stream, &partial);
    if (partial) gpu::driver().cuGraphDestroy(partial);
    throw;
  }
  st.recording = nullptr;
  gpu::check(gpu::driver().cuStreamEndCapture(st.stream, &graph->graph), "ending a CUDA graph capture");
  gpu::check(gpu::driver().cuGraphGetNodes(graph->graph, nullptr, &graph->nodes), "counting a CUDA graph's nodes");
  gpu::check(gpu::driver().cuGraphInstantiate(&graph->exec, graph->graph, 0), "instantiating a CUDA graph");
  Graph g;
  g.state_ = std::move(graph);
  return g;
}

void* device_alloc_async(std::size_t bytes, const std::shared_ptr<StreamState>& stream) {
  if (bytes == 0) return nullptr;
  gpu::Device& d = gpu::device(stream->device);
  CUdeviceptr p = 0;
  const CUresult r = stream->allocate(bytes, &p);
  if (r != CUDA_SUCCESS)
    throw DeviceError(fmt::format("{} {} bytes on CUDA device {} ({}): {}",
                                  r == CUDA_ERROR_OUT_OF_MEMORY ? "out of device memory allocating" : "cannot allocate", bytes,
                                  stream->device, d.info().name, gpu::error_text(r)));
  d.count_alloc(bytes);
  return reinterpret_cast<void*>(p);
}

bool recording(const StreamState& stream) { return stream.recording != nullptr; }

void keep_while_recording(const std::shared_ptr<StreamState>& stream, std::shared_ptr<const void> memory) {
  if (stream && stream->recording && memory) stream->recording->arrays.push_back(std::move(memory));
}

void device_free_async(void* p, std::size_t bytes, const std::shared_ptr<StreamState>& stream) noexcept {
  if (!p || !gpu::driver_available()) return;
  try {
    stream->free(reinterpret_cast<CUdeviceptr>(p), bytes);
    gpu::device(stream->device).count_free(bytes);
  } catch (...) {
    // Freeing cannot be reported from a destructor; the memory goes with the context.
  }
}

}  // namespace detail

void Graph::launch(const Stream& s) const {
  if (!state_) throw DeviceError("kiln::cuda::Graph::launch: an empty graph (make one with kiln::cuda::capture)");
  same_device(s.device(), state_->device, "a graph");
  bound(state_->device);
  gpu::check(gpu::driver().cuGraphLaunch(state_->exec, static_cast<CUstream>(s.handle())), "launching a CUDA graph");
  detail::StreamState& st = *s.state();
  std::lock_guard lock(st.mutex);
  for (const detail::DeferredCheck& c : state_->checks) st.checks.push_back({c.slot, c.report, state_, false});
}

std::size_t Graph::nodes() const { return state_ ? state_->nodes : 0; }

// ---- memory -------------------------------------------------------------------------------------------

MemoryStats memory_stats(int device) {
  gpu::Device& d = bound(device);
  MemoryStats m;
  m.in_use_bytes = d.in_use_bytes();
  m.peak_bytes = d.peak_bytes();
  m.allocations = d.allocations();
  m.host_transfers = d.transfers();
  cuuint64_t reserved = 0;
  gpu::check(gpu::driver().cuMemPoolGetAttribute(d.pool(), CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved), "reading the memory pool's size");
  m.pool_reserved_bytes = static_cast<std::int64_t>(reserved);
  return m;
}

void reset_memory_peak(int device) { gpu::device(device).reset_peak(); }

}  // namespace kiln::cuda
