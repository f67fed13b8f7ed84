// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Devices: the primary context of each, kiln's stream on it, its limits, and small reusable device buffers.
// Everything is created on first use and lives until the process ends.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda/stream_blocks.hpp"

namespace kiln::gpu {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_grid[3] = {0, 0, 0};
  /// Shared memory a block may have without opting in, an SM's, and what the system reserves per block.
  int shared_per_block = 48 * 1024, shared_per_sm = 0, shared_reserved = 0;
  int max_blocks_per_sm = 32;
  /// Shared memory a block may ask for (cuFuncSetAttribute's opt-in limit); 0 where the driver does not say.
  int shared_per_block_optin = 0;
  std::size_t memory_bytes = 0;
  /// "sm_90" for compute capability 9.0.
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

class Device;
class HostSlots;

/// A device buffer borrowed from a device's scratch pool; returned to the pool on destruction. Work queued
/// on the device's stream that uses it stays ordered before any later user of the same buffer, since every
/// user queues on that one stream.
class Scratch {
 public:
  Scratch() = default;
  Scratch(Scratch&& o) noexcept : device_(o.device_), ptr_(o.ptr_), bytes_(o.bytes_) { o.device_ = nullptr; }
  Scratch& operator=(Scratch&& o) noexcept;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();
  CUdeviceptr ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  friend class Device;
  Device* device_ = nullptr;
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

class Device {
 public:
  explicit Device(int ordinal);  ///< retains the primary context; throws DeviceError
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  CUcontext context() const { return ctx_; }
  /// kiln's stream on this device: every kernel call queues its copies and launches here.
  CUstream stream() const { return stream_; }
  /// Makes this device's context current on the calling thread (cheap when it already is).
  void bind() const;

  /// A device buffer of at least `bytes` (rounded up to 4 KiB), reused across calls.
  Scratch scratch(std::size_t bytes);

  /// Zeroed device memory for one KernelStatus, for kernels whose failure is checked later than their launch
  /// (asynchronous calls and graphs, runtime/cuda/stream_state.hpp). It is not stream-ordered, so a graph can
  /// keep it across replays; give it back, zeroed, with release_status_slot.
  CUdeviceptr status_slot();
  void release_status_slot(CUdeviceptr p) noexcept;
  /// Zeroes a status slot again after its failure was reported (waits for the copy).
  void clear_status_slot(CUdeviceptr p);

  /// kiln's device memory on this device (kiln::cuda::memory_stats): every allocation kiln makes is counted.
  void count_alloc(std::size_t bytes) noexcept;
  void count_free(std::size_t bytes) noexcept;
  std::int64_t in_use_bytes() const { return in_use_.load(std::memory_order_relaxed); }
  std::int64_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }
  std::uint64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
  void reset_peak() noexcept { peak_.store(in_use_bytes(), std::memory_order_relaxed); }
  /// Copies between host and device memory kiln queued on this device (arguments, results, values read back).
  void count_transfer() noexcept { transfers_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t transfers() const { return transfers_.load(std::memory_order_relaxed); }
  /// The device's default memory pool, which cuMemAllocAsync draws from.
  CUmemoryPool pool() const { return pool_; }
  /// Page-locked slots for values asynchronous calls copy back without waiting (made on first use).
  HostSlots& host_slots();

  /// The memory freed on kiln's own stream and kept for its next allocations (runtime/cuda/stream_blocks.hpp).
  StreamBlocks& blocks() { return *blocks_; }
  /// Every stream's kept blocks, which an allocation that runs out of memory gives back to the pool.
  void add_stream_blocks(StreamBlocks* b);
  void remove_stream_blocks(StreamBlocks* b) noexcept;
  /// Gives every stream's kept blocks back to the pool; returns how many there were.
  std::size_t release_stream_blocks() noexcept;

 private:
  friend class Scratch;
  void give_back(CUdeviceptr p, std::size_t bytes) noexcept;

  DeviceInfo info_;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  CUmemoryPool pool_ = nullptr;
  std::mutex mutex_;  // guards free_ and free_slots_
  std::vector<std::pair<CUdeviceptr, std::size_t>> free_;
  std::vector<CUdeviceptr> free_slots_;
  std::unique_ptr<HostSlots> host_slots_;
  std::mutex blocks_mutex_;  // guards all_blocks_
  std::vector<StreamBlocks*> all_blocks_;
  std::unique_ptr<StreamBlocks> blocks_;
  std::atomic<std::int64_t> in_use_{0}, peak_{0};
  std::atomic<std::uint64_t> allocations_{0}, transfers_{0};
};

/// Number of CUDA devices; 0 when there is no driver. Never throws.
int device_count() noexcept;

/// The device with this ordinal, initialized on first use. Throws DeviceError (no driver, bad ordinal).
Device& device(int ordinal);

/// The calling thread's device: set_current_device(), else KILN_CUDA_DEVICE, else 0.
int current_device();
void set_current_device(int ordinal);

}  // namespace kiln::gpu
