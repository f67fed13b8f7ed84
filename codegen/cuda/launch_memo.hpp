// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A kernel's latest launch as the launch model chose it: what the diagnostics report, and what the next launch
// reuses when it has the same inputs. choose_launch is a pure function of the iteration counts, the loaded
// function (its occupancy, on its device), the row length, the private-copy candidates' element counts and the
// machine's overrides (fixed per machine), so a launch with the same counts, function, row length and elements
// gets the same choice: a pipeline that calls a kernel on
// arrays of one shape pays for the model once, not at every call.
//
// Calls may launch one kernel from several threads at once: the record is a sequence lock over relaxed atomics
// (a reader that sees the sequence move, or odd, computes the choice itself; a writer that finds another writing
// leaves the record to it), so a reader never takes a lock and never sees a torn record.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "codegen/cuda/launch_model.hpp"
#include "kiln/abi.hpp"
#include "runtime/cuda/module.hpp"

namespace kiln::codegen::cuda {

/// What a launch was and why: the diagnostics' "last launch".
struct LaunchRecord {
  std::uint64_t iterations = 0;
  LaunchChoice choice;
  const gpu::LoadedFunction* function = nullptr;  ///< the entry launched (the `__restrict__`-free one for overlaps)
  std::uint64_t elements[kMaxPrivateArrays] = {};  ///< the private-copy candidates' element counts
};

class LaunchMemo {
 public:
  /// The choice recorded for exactly these inputs, if the latest launch had them.
  /// `elements`: the private-copy candidates' element counts (kMaxPrivateArrays of them; unused ones 0).
  std::optional<LaunchChoice> find(const std::uint64_t* counts, int rank, const gpu::LoadedFunction* fn, std::int64_t row_length,
                                   const std::uint64_t* elements) const {
    const std::uint32_t s0 = seq_.load(std::memory_order_acquire);
    if (s0 & 1u) return std::nullopt;  // being written
    if (fn_.load(std::memory_order_relaxed) != fn || row_length_.load(std::memory_order_relaxed) != row_length)
      return std::nullopt;
    for (int d = 0; d < rank; ++d)
      if (counts_[d].load(std::memory_order_relaxed) != counts[d]) return std::nullopt;
    for (int a = 0; a < kMaxPrivateArrays; ++a)
      if (elements_[a].load(std::memory_order_relaxed) != elements[a]) return std::nullopt;
    LaunchChoice c;
    c.geometry.grid = {grid_[0].load(std::memory_order_relaxed), grid_[1].load(std::memory_order_relaxed), grid_[2].load(std::memory_order_relaxed)};
    c.geometry.block = {block_[0].load(std::memory_order_relaxed), block_[1].load(std::memory_order_relaxed),
                        block_[2].load(std::memory_order_relaxed)};
    c.per_thread = per_thread_.load(std::memory_order_relaxed);
    c.reason = static_cast<LaunchReason>(reason_.load(std::memory_order_relaxed));
    c.tiles = tiles_.load(std::memory_order_relaxed);
    c.private_mask = private_mask_.load(std::memory_order_relaxed);
    c.shared_bytes = shared_bytes_.load(std::memory_order_relaxed);
    c.private_reason = static_cast<PrivateReason>(private_reason_.load(std::memory_order_relaxed));
    c.block_iterations = block_iterations_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) != s0) return std::nullopt;  // written meanwhile: not one record
    return c;
  }

  /// Records a launch the model chose (left to the other writer when one is writing). `source`: the launch plan's
  /// launch that made it (launch_plan.hpp), or null.
  void record(const std::uint64_t* counts, int rank, const gpu::LoadedFunction* fn, std::int64_t row_length, const std::uint64_t* elements,
              const LaunchChoice& c, const void* source = nullptr) {
    std::uint32_t s = seq_.load(std::memory_order_relaxed);
    if ((s & 1u) || !seq_.compare_exchange_strong(s, s + 1, std::memory_order_relaxed)) return;
    std::atomic_thread_fence(std::memory_order_release);
    source_.store(source, std::memory_order_relaxed);
    fn_.store(fn, std::memory_order_relaxed);
    row_length_.store(row_length, std::memory_order_relaxed);
    for (int d = 0; d < kMaxRank; ++d) counts_[d].store(d < rank ? counts[d] : 1, std::memory_order_relaxed);
    for (int a = 0; a < kMaxPrivateArrays; ++a) elements_[a].store(elements[a], std::memory_order_relaxed);
    const unsigned g[3] = {c.geometry.grid.x, c.geometry.grid.y, c.geometry.grid.z};
    const unsigned b[3] = {c.geometry.block.x, c.geometry.block.y, c.geometry.block.z};
    for (int d = 0; d < 3; ++d) {
      grid_[d].store(g[d], std::memory_order_relaxed);
      block_[d].store(b[d], std::memory_order_relaxed);
    }
    per_thread_.store(c.per_thread, std::memory_order_relaxed);
    reason_.store(static_cast<int>(c.reason), std::memory_order_relaxed);
    tiles_.store(c.tiles, std::memory_order_relaxed);
    private_mask_.store(c.private_mask, std::memory_order_relaxed);
    shared_bytes_.store(c.shared_bytes, std::memory_order_relaxed);
    private_reason_.store(static_cast<int>(c.private_reason), std::memory_order_relaxed);
    block_iterations_.store(c.block_iterations, std::memory_order_relaxed);
    seq_.store(s + 2, std::memory_order_release);
  }

  /// The launch plan's launch the record came from, or null: a plan's repeated launch records nothing new when
  /// the record is already its own (a relaxed read; a record being written meanwhile is the other writer's).
  const void* source() const { return source_.load(std::memory_order_relaxed); }

  /// The latest launch, for diagnostics; none before the first (or while one is being recorded).
  std::optional<LaunchRecord> latest() const {
    for (int attempt = 0; attempt < 64; ++attempt) {
      const std::uint32_t s0 = seq_.load(std::memory_order_acquire);
      if (s0 == 0) return std::nullopt;
      if (s0 & 1u) continue;
      std::uint64_t counts[kMaxRank];
      for (int d = 0; d < kMaxRank; ++d) counts[d] = counts_[d].load(std::memory_order_relaxed);
      std::uint64_t elements[kMaxPrivateArrays];
      for (int a = 0; a < kMaxPrivateArrays; ++a) elements[a] = elements_[a].load(std::memory_order_relaxed);
      const gpu::LoadedFunction* fn = fn_.load(std::memory_order_relaxed);
      const std::optional<LaunchChoice> c = find(counts, kMaxRank, fn, row_length_.load(std::memory_order_relaxed), elements);
      if (!c || seq_.load(std::memory_order_acquire) != s0) continue;
      LaunchRecord r;
      r.function = fn;
      r.iterations = 1;
      for (int d = 0; d < kMaxRank; ++d) r.iterations *= counts[d];
      r.choice = *c;
      for (int a = 0; a < kMaxPrivateArrays; ++a) r.elements[a] = elements[a];
      return r;
    }
    return std::nullopt;
  }

 private:
  std::atomic<std::uint32_t> seq_{0};  ///< odd while a record is written; 0 before the first
  std::atomic<const gpu::LoadedFunction*> fn_{nullptr};
  std::atomic<std::int64_t> row_length_{0};
  std::atomic<std::uint64_t> counts_[kMaxRank] = {};  ///< unused dimensions hold 1
  std::atomic<std::uint64_t> elements_[kMaxPrivateArrays] = {};
  std::atomic<unsigned> private_mask_{0}, shared_bytes_{0};
  std::atomic<int> private_reason_{0};
  std::atomic<std::uint64_t> block_iterations_{0};
  std::atomic<unsigned> grid_[3] = {}, block_[3] = {};
  std::atomic<int> per_thread_{0}, reason_{0};
  std::atomic<bool> tiles_{false};
  std::atomic<const void*> source_{nullptr};
};

}  // namespace kiln::codegen::cuda
