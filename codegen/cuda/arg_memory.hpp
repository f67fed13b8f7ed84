// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Where the array arguments of a call live. The frontend passes it to a CUDA kernel as argv[nparams] (one
// past the arguments), so that the calling convention of kiln/abi.hpp stays the same for every backend.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "kiln/abi.hpp"

namespace kiln::cuda::detail {
struct StreamState;    // runtime/cuda/stream_state.hpp
class PendingScalars;  // kiln/device.hpp
}

namespace kiln::codegen::cuda {
/// A launch plan the typed path ran, and how to run it again with other DeviceArgHeads (LaunchPlans::run_bound):
/// it checks what selects it and returns false, having done nothing, when they do not match.
struct PlanHandle {
  const void* plan = nullptr;
  bool (*run)(const void* plan, void* const* heads, kiln::cuda::detail::StreamState& stream, void* result) = nullptr;
};

struct ArgMemory {
  std::uint32_t device_arrays = 0;  ///< bit i: argument i is a DeviceArray (a device address, no copies)
  int device = -1;                  ///< the device those arrays live on; -1: none (run on the current device)
  /// Bit i: array argument i shares memory with another array argument, one of the two written by the kernel
  /// (what the frontend's overlap check found: frontend/argument_overlap.hpp); all bits: not known. A launch
  /// whose arrays are arguments without a bit here runs the `__restrict__` kernel without comparing them again.
  std::uint32_t shared = ~0u;
  /// An asynchronous call (kernel.async(stream)): queued on this stream, every array argument a DeviceArray,
  /// array results left on the device, failures deferred to the stream's synchronization. Null: synchronous.
  kiln::cuda::detail::StreamState* stream = nullptr;
  /// An asynchronous call: throws the kiln::Error for a failed kernel's status, as a synchronous call would
  /// (the compiled variant's; copied only when a kernel of the call may fail).
  const std::function<void(const KernelStatus&)>* report = nullptr;
  /// An asynchronous call: where it leaves scalar results still on their way from the device (CallPlacement).
  std::shared_ptr<kiln::cuda::detail::PendingScalars>* pending = nullptr;
  /// The typed path (KernelCore::call_typed): each array argument is a DeviceArgHead, whose rank and device nothing
  /// has compared yet; a launch plan compares them with its own (LaunchPlans::run).
  bool heads = false;
  /// The typed path: where the launch plan that ran the call leaves itself (PlanHandle), or null.
  PlanHandle* ran = nullptr;
};

}  // namespace kiln::codegen::cuda
