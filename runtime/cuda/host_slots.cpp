// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cuda/host_slots.hpp"

#include <fmt/format.h>

#include "kiln/error.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::gpu {

HostSlots::~HostSlots() {
  const DriverApi& d = driver();
  for (Slot* s : all_) {
    if (s->done) d.cuEventDestroy(s->done);
    delete s;
  }
  for (void* p : pages_) d.cuMemFreeHost(p);
}

HostSlots::Slot* HostSlots::take() {
  std::lock_guard lock(mutex_);
  // Slots given back become free once their copies have landed (CUDA_ERROR_NOT_READY: still in flight).
  for (std::size_t i = 0; i < retiring_.size();) {
    if (driver().cuEventQuery(retiring_[i]->done) == CUDA_ERROR_NOT_READY) {
      ++i;
      continue;
    }
    free_.push_back(retiring_[i]);
    retiring_[i] = retiring_.back();
    retiring_.pop_back();
  }
  if (free_.empty()) {
    // A page of slots at a time: page-locking is slow (a system call), so it happens once per 32 slots.
    constexpr std::size_t kSlotsPerPage = 32;
    dev_.bind();
    void* page = nullptr;
    const CUresult r = driver().cuMemHostAlloc(&page, kBytes * kSlotsPerPage, 0);
    if (r != CUDA_SUCCESS)
      throw DeviceError(fmt::format("cannot allocate {} bytes of page-locked host memory for asynchronous results on CUDA "
                                    "device {}: {}",
                                    kBytes * kSlotsPerPage, dev_.info().ordinal, error_text(r)));
    pages_.push_back(page);
    for (std::size_t k = 0; k < kSlotsPerPage; ++k) {
      auto* s = new Slot{static_cast<char*>(page) + k * kBytes, nullptr};
      all_.push_back(s);
      check(driver().cuEventCreate(&s->done, CU_EVENT_DISABLE_TIMING), "creating an event for asynchronous results");
      free_.push_back(s);
    }
  }
  Slot* s = free_.back();
  free_.pop_back();
  return s;
}

void HostSlots::give_back(Slot* s) noexcept {
  std::lock_guard lock(mutex_);
  retiring_.push_back(s);
}

}  // namespace kiln::gpu
