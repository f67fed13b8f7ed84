// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cuda/stream_blocks.hpp"

#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::gpu {

StreamBlocks::StreamBlocks(Device& dev, CUstream stream) : dev_(dev), stream_(stream) { dev_.add_stream_blocks(this); }

StreamBlocks::~StreamBlocks() {
  dev_.remove_stream_blocks(this);
  if (driver_available()) release();
}

CUresult StreamBlocks::allocate(std::size_t bytes, CUdeviceptr* p) {
  {
    std::lock_guard lock(mutex_);
    // The most recently freed first: its lines may still be in the L2 cache.
    for (std::size_t i = n_; i-- > 0;) {
      if (kept_[i].bytes != bytes) continue;
      *p = kept_[i].ptr;
      kept_[i] = kept_[--n_];
      return CUDA_SUCCESS;
    }
  }
  dev_.bind();
  CUresult r = driver().cuMemAllocAsync(p, bytes, stream_);
  if (r == CUDA_ERROR_OUT_OF_MEMORY && dev_.release_stream_blocks() > 0) r = driver().cuMemAllocAsync(p, bytes, stream_);
  return r;
}

void StreamBlocks::free(CUdeviceptr p, std::size_t bytes) noexcept {
  if (!p) return;
  {
    std::lock_guard lock(mutex_);
    if (n_ < kKept) {
      kept_[n_++] = {p, bytes};
      return;
    }
  }
  try {
    dev_.bind();
    driver().cuMemFreeAsync(p, stream_);
  } catch (...) {
    // Freeing cannot be reported from a destructor; the memory goes with the context.
  }
}

void StreamBlocks::release() noexcept {
  std::array<Block, kKept> all;
  std::size_t n = 0;
  {
    std::lock_guard lock(mutex_);
    all = kept_;
    n = n_;
    n_ = 0;
  }
  if (n == 0) return;
  try {
    dev_.bind();
    for (std::size_t i = 0; i < n; ++i) driver().cuMemFreeAsync(all[i].ptr, stream_);
  } catch (...) {
    // As in free().
  }
}

std::size_t StreamBlocks::kept() const {
  std::lock_guard lock(mutex_);
  return n_;
}

}  // namespace kiln::gpu
