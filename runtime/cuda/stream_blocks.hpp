// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream-ordered device memory that one stream gives back and takes again without the driver.
//
// A call that returns a new array allocates it (cuMemAllocAsync) and the array it replaces is freed
// (cuMemFreeAsync): two driver calls, each about as costly on the host as the kernel's launch, on the path of
// every call of a pipeline of small kernels. A block freed on a stream is kept instead, and the stream's next
// allocation of the same size takes it: the work queued before the free still comes first on that stream, so
// this is the reuse the stream-ordered pool itself would make (the caching allocators of PyTorch and CuPy keep
// memory per stream for the same reason). A few blocks are kept per stream; they go back to the pool when the
// stream is destroyed, when more are freed than it keeps, and when an allocation on any stream of the device
// finds the pool out of memory (then it is tried again).
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <mutex>

namespace kiln::gpu {

class Device;

class StreamBlocks {
 public:
  /// Blocks kept per stream: enough for the arrays a pipeline of calls passes along, few enough that memory a
  /// stream no longer needs does not wait long.
  static constexpr std::size_t kKept = 16;

  /// Registers with `dev`, whose allocations that run out of memory take the kept blocks back.
  StreamBlocks(Device& dev, CUstream stream);
  ~StreamBlocks();  ///< gives the kept blocks back (the stream must still exist)
  StreamBlocks(const StreamBlocks&) = delete;
  StreamBlocks& operator=(const StreamBlocks&) = delete;

  /// `bytes` (> 0) for work queued on the stream: a kept block of that size, else cuMemAllocAsync (after giving
  /// every kept block of the device back, if the pool is out of memory). Returns the driver's result; *p is set on success.
  CUresult allocate(std::size_t bytes, CUdeviceptr* p);
  /// Frees `p` (`bytes` long) at this point of the stream's work: kept for a later allocation, else
  /// cuMemFreeAsync.
  void free(CUdeviceptr p, std::size_t bytes) noexcept;
  /// Gives every kept block back to the pool (cuMemFreeAsync on the stream).
  void release() noexcept;
  /// The number of blocks kept now.
  std::size_t kept() const;

 private:
  struct Block {
    CUdeviceptr ptr;
    std::size_t bytes;
  };
  Device& dev_;
  CUstream stream_;
  mutable std::mutex mutex_;  // guards kept_, n_: arrays are freed on whatever thread drops them
  std::array<Block, kKept> kept_{};
  std::size_t n_ = 0;
};

}  // namespace kiln::gpu
