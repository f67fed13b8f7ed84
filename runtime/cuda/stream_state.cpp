// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cuda/stream_state.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "kiln/error.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::cuda::detail {

StreamState::StreamState(int d) : device(d) {
  gpu::Device& dev = gpu::device(d);
  dev.bind();
  gpu::check(gpu::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "creating a CUDA stream");
  blocks_ = std::make_unique<gpu::StreamBlocks>(dev, stream);
}

StreamState::~StreamState() {
  if (!gpu::driver_available()) return;
  // Unchecked slots go back unread: nobody synchronized the stream after their calls, so nobody asked.
  gpu::Device& dev = gpu::device(device);
  blocks_.reset();  // the kept blocks go back to the pool while the stream exists
  dev.bind();
  gpu::driver().cuStreamSynchronize(stream);
  for (const DeferredCheck& c : checks) {
    if (!c.release) continue;
    try {
      dev.clear_status_slot(c.slot);
      dev.release_status_slot(c.slot);
    } catch (...) {
      // A slot that cannot be cleared is not reused.
    }
  }
  gpu::driver().cuStreamDestroy(stream);
}

CUresult StreamState::allocate(std::size_t bytes, CUdeviceptr* p) {
  if (!recording) return blocks_->allocate(bytes, p);
  gpu::device(device).bind();
  const CUresult r = gpu::driver().cuMemAllocAsync(p, bytes, stream);
  if (r == CUDA_SUCCESS) {
    std::lock_guard lock(recorded_mutex_);
    recorded_.push_back(*p);
    nrecorded_.store(recorded_.size(), std::memory_order_release);
  }
  return r;
}

void StreamState::free(CUdeviceptr p, std::size_t bytes) noexcept {
  bool recorded = recording != nullptr;
  if (nrecorded_.load(std::memory_order_acquire) > 0) {
    std::lock_guard lock(recorded_mutex_);
    if (const auto at = std::find(recorded_.begin(), recorded_.end(), p); at != recorded_.end()) {
      recorded_.erase(at);
      nrecorded_.store(recorded_.size(), std::memory_order_release);
      recorded = true;
    }
  }
  if (!recorded) return blocks_->free(p, bytes);
  try {
    gpu::device(device).bind();
    gpu::driver().cuMemFreeAsync(p, stream);
  } catch (...) {
    // Freeing cannot be reported from a destructor; the memory goes with the context.
  }
}

CUdeviceptr StreamState::status_slot() {
  gpu::Device& dev = gpu::device(device);
  const CUdeviceptr slot = dev.status_slot();
  if (recording) recording->checks.push_back({slot, nullptr, nullptr, false});
  return slot;
}

void StreamState::defer(CUdeviceptr slot, std::function<void(const KernelStatus&)> report) {
  if (recording) {
    // The graph owns the slot (status_slot put it there); its launches hand the check to their stream.
    for (DeferredCheck& c : recording->checks)
      if (c.slot == slot) c.report = std::move(report);
    return;
  }
  std::lock_guard lock(mutex);
  checks.push_back({slot, std::move(report), nullptr, true});
}

void StreamState::synchronize() {
  gpu::Device& dev = gpu::device(device);
  dev.bind();
  const CUresult r = gpu::driver().cuStreamSynchronize(stream);
  if (r != CUDA_SUCCESS) {
    std::vector<DeferredCheck> dropped;
    {
      std::lock_guard lock(mutex);
      dropped.swap(checks);
    }
    // The context is unusable after a fault; the slots are not reused.
    gpu::check(r, fmt::format("synchronizing a CUDA stream on device {} ({} asynchronous kernel calls unchecked)", device, dropped.size()));
  }
  check_deferred();
}

void StreamState::check_deferred() {
  std::vector<DeferredCheck> pending;
  {
    std::lock_guard lock(mutex);
    pending.swap(checks);
  }
  if (pending.empty()) return;
  gpu::Device& dev = gpu::device(device);
  dev.bind();
  std::optional<KernelStatus> failed;
  const DeferredCheck* culprit = nullptr;
  std::vector<CUdeviceptr> seen;
  for (const DeferredCheck& c : pending) {
    // A graph launched twice hands in its slots twice; one read answers both.
    if (std::find(seen.begin(), seen.end(), c.slot) == seen.end()) {
      seen.push_back(c.slot);
      KernelStatus status;
      gpu::check(gpu::driver().cuMemcpyDtoHAsync(&status, c.slot, sizeof status, dev.stream()), "reading a kernel status");
      gpu::check(gpu::driver().cuStreamSynchronize(dev.stream()), "reading a kernel status");
      if (status.code != 0) {
        if (!failed) failed = status, culprit = &c;
        dev.clear_status_slot(c.slot);
      }
    }
    if (c.release) dev.release_status_slot(c.slot);
  }
  if (failed && culprit->report) culprit->report(*failed);
  if (failed) throw DeviceError(fmt::format("an asynchronous CUDA kernel failed: {}", failed->message));
}

GraphState::~GraphState() {
  if (!gpu::driver_available()) return;
  gpu::Device& dev = gpu::device(device);
  dev.bind();
  if (exec) gpu::driver().cuGraphExecDestroy(exec);
  if (graph) gpu::driver().cuGraphDestroy(graph);
  for (const DeferredCheck& c : checks) dev.release_status_slot(c.slot);
}

}  // namespace kiln::cuda::detail
