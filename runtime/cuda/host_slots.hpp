// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Page-locked host memory for values an asynchronous call copies back without waiting for them (the totals
// behind a kiln::cuda::Future): fixed slots, each with an event recorded after its copies. A slot given back
// is reused only once that event has completed, so a copy still in flight never lands in another's values.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace kiln::gpu {

class Device;

class HostSlots {
 public:
  /// What one slot holds: an asynchronous call's reduction totals and its kernel status.
  static constexpr std::size_t kBytes = 2048;

  struct Slot {
    void* host = nullptr;  ///< kBytes of page-locked memory
    CUevent done = nullptr;  ///< recorded after the copies into `host`
  };

  explicit HostSlots(Device& dev) : dev_(dev) {}
  ~HostSlots();
  HostSlots(const HostSlots&) = delete;
  HostSlots& operator=(const HostSlots&) = delete;

  /// A slot whose earlier copies have all landed. Throws DeviceError when page-locked memory runs out.
  Slot* take();
  /// The holder is done with `s`; its event must already be recorded after the last copy into it.
  void give_back(Slot* s) noexcept;

 private:
  Device& dev_;
  std::mutex mutex_;
  std::vector<void*> pages_;
  std::vector<Slot*> all_, free_, retiring_;
};

}  // namespace kiln::gpu
