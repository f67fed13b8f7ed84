// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A kiln::cuda::Stream's state: the CUDA stream, and the checks deferred to its next synchronization.
//
// A synchronous call reads its kernels' status after each launch that may fail. An asynchronous call cannot
// (reading means waiting), so its kernels write their status to a slot that the stream checks when it is
// synchronized: the first failure is then thrown as the kiln::Error the synchronous call would have thrown.
// While the stream records a graph (kiln::cuda::capture) the slots go to the graph, which hands them to the
// stream it is launched on at each launch.
#pragma once

#include <cuda.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/abi.hpp"
#include "runtime/cuda/stream_blocks.hpp"

namespace kiln::cuda::detail {

/// A kernel status slot to read at a synchronization, and how to report its failure.
struct DeferredCheck {
  CUdeviceptr slot = 0;
  std::function<void(const KernelStatus&)> report;  ///< throws the kernel's kiln::Error
  std::shared_ptr<void> keep;  ///< whoever owns the slot (a graph), kept alive until the check
  bool release = true;         ///< give the slot back to the device after the check (not a graph's)
};

struct GraphState;

struct StreamState {
  explicit StreamState(int device);
  ~StreamState();
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  const int device;
  CUstream stream = nullptr;

  /// Stream-ordered device memory for work queued on this stream: freed blocks are kept for the next
  /// allocation of their size (runtime/cuda/stream_blocks.hpp). While a graph is recorded, straight from the
  /// driver: the graph's own allocation and free nodes, since a kept block would be replayed into after
  /// another user took it; such a block also goes straight back to the driver when it is freed, whenever that
  /// is (the graph's allocation must be freed for the graph to run again). `allocate` returns the driver's
  /// result.
  CUresult allocate(std::size_t bytes, CUdeviceptr* p);
  void free(CUdeviceptr p, std::size_t bytes) noexcept;

  /// A slot for a call's kernels that may fail, zeroed: the recording graph's while capturing, else the device's.
  CUdeviceptr status_slot();
  /// The slot of a call that was queued: checked at the next synchronize().
  void defer(CUdeviceptr slot, std::function<void(const KernelStatus&)> report);
  /// Waits for the stream, then reports the first failure among the deferred checks (clearing them all).
  void synchronize();
  /// Reports the deferred checks' first failure; the stream must be idle (after a context synchronization).
  void check_deferred();

  /// The graph being recorded on this stream, or null (kiln::cuda::capture sets it).
  GraphState* recording = nullptr;

  std::mutex mutex;  // guards checks
  std::vector<DeferredCheck> checks;

 private:
  std::unique_ptr<gpu::StreamBlocks> blocks_;
  std::mutex recorded_mutex_;  // guards recorded_
  std::vector<CUdeviceptr> recorded_;  ///< allocated while a graph was recorded, not yet freed
  std::atomic<std::size_t> nrecorded_{0};  ///< recorded_.size(): a free looks there (under the lock) only if any
};

/// A captured graph: its executable form, and the status slots of its calls (owned for the graph's life).
struct GraphState {
  int device = 0;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::size_t nodes = 0;
  std::vector<DeferredCheck> checks;  ///< release = false: the graph keeps its slots
  std::vector<std::shared_ptr<const void>> arrays;  ///< its calls' array arguments, which every replay uses
  ~GraphState();
};

}  // namespace kiln::cuda::detail
