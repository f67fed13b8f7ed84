// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A compiled CUDA kernel: the program, its binary, a module per device it ran on, and the host function on the
// host executor with the device machine. One call: arguments to the device (host arrays copied in), the host
// function with its launches, written host arrays and the result back.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "codegen/cuda/arg_memory.hpp"
#include "codegen/cuda/device_machine.hpp"
#include "codegen/cuda/launch_plan.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/program.hpp"
#include "runtime/cuda/module.hpp"

namespace kiln::codegen::cuda {

/// Made by make_shared: a call's Future keeps it alive (codegen/cuda/deferred_scalars.hpp).
class Executable : public std::enable_shared_from_this<Executable> {
 public:
  Executable(std::shared_ptr<const Program> program, Binary binary, const CodegenOptions& opts, const CudaOptions& cuda);

  /// kiln's calling convention; argv[nparams] is a `const ArgMemory*` or null. Returns the status code.
  std::int32_t call(void* const* args, void* result, KernelStatus* status);
  /// An asynchronous call (argv[nparams] an ArgMemory with a stream) run by a launch plan recorded for these
  /// arguments' shapes (launch_plan.hpp); false, having done nothing, when none applies.
  bool repeat(void* const* args, void* result) const { return plans_->run(args, result); }
  /// Whether this program's asynchronous calls can be planned at all.
  bool plannable() const { return plans_->enabled(); }
  /// The kernels' launch plans and latest launches (DeviceMachine::describe), for kiln's diagnostics.
  std::string describe() const { return binary_.notes + machine_.describe() + plans_->describe(); }

  /// The module on `dev`, loaded on first use (from the CUBIN when the architecture matches, else from PTX
  /// for a newer device, else recompiled for an older one). `load_us` gets the time a first load took.
  const gpu::Module& module_for(gpu::Device& dev, double* load_us = nullptr);

 private:
  /// An asynchronous call (ArgMemory::stream): queued, results left on the device, failures deferred.
  std::int32_t call_async(void* const* args, void* result, CallState& call, const ArgMemory& memory);

  std::shared_ptr<const Program> program_;
  Binary binary_;
  CodegenOptions opts_;
  CudaOptions cuda_;
  DeviceMachine machine_;
  ir::Executor host_;  ///< the host function, run with machine_
  CallNeeds needs_;    ///< what each call needs (scratch, a status slot)
  std::uint32_t written_ = 0;  ///< bit i: the kernel stores to array parameter i
  std::uint32_t array_params_ = 0;  ///< bit i: parameter i is an array
  bool makes_arrays_ = false;  ///< the kernel returns a new array (alone or in a tuple)
  std::unique_ptr<LaunchPlans> plans_;
  std::mutex mutex_;           // guards modules_
  std::array<std::unique_ptr<gpu::Module>, 64> modules_;
  /// modules_ once loaded: every call looks its module up, so finding a loaded one takes no lock.
  std::array<std::atomic<const gpu::Module*>, 64> loaded_{};
};

}  // namespace kiln::codegen::cuda
