// The host side of a CUDA kernel: its sequential skeleton (lets, assigns, sequential loops, ifs,
// allocations, checks outside parfors) runs here, on host scalars, and each top-level parfor is a launch.
// Scalars reach the device as kernel parameters and come back through reduction results; loads and
// stores of device arrays outside parfors are element copies.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "codegen/cuda/program.hpp"
#include "kiln/abi.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/module.hpp"

namespace kiln::codegen::cuda {

/// One call on one device: where it runs, the module's functions, and the device memory it owns.
class CallState {
 public:
  CallState(gpu::Device& dev, const gpu::Module& module, const Program& prog, KernelStatus* status);
  CallState(const CallState&) = delete;
  CallState& operator=(const CallState&) = delete;
  ~CallState();  ///< frees the call's device memory (stream-ordered)

  gpu::Device& dev;
  const gpu::Module& module;
  KernelStatus* status;
  /// Scratch for reduction partials and results, and the device copy of KernelStatus (when any kernel may fail).
  gpu::Scratch scratch, device_status;
  /// CUDA kernels launched since the last synchronization (for errors that surface there).
  std::vector<std::string> pending;

  /// Stream-ordered device memory owned by the call; null for 0 bytes. OOM is a DeviceError.
  CUdeviceptr alloc(std::size_t bytes, const std::string& what);
  void release(CUdeviceptr p) noexcept;
  /// Waits for the stream; a failure names the kernels launched since the last wait.
  void synchronize(const std::string& kernel);
  /// Throws DeviceError unless r is CUDA_SUCCESS. An error from an earlier launch can surface in any later
  /// driver call, so the message names the kernels launched since the last wait too.
  void check(CUresult r, const std::string& what) const;

 private:
  std::vector<CUdeviceptr> owned_;
};

/// Thrown through the skeleton when a check or a device kernel fails: `status` holds code and message.
struct KernelFailed {
  std::int32_t code;
};

class HostProgram {
 public:
  /// Throws CompileError for statements the host cannot run.
  HostProgram(std::shared_ptr<const Program> program, const CudaOptions& opts);
  ~HostProgram();
  HostProgram(const HostProgram&) = delete;
  HostProgram& operator=(const HostProgram&) = delete;

  /// Runs the kernel with its arguments on the device (`args` as in kiln/abi.hpp, every array a device
  /// ArrayDesc). Writes the result's members (a single result is one member; ir::Function::tuple) to
  /// `outs[i]`: a scalar of its type, or the device ArrayDesc of an array. Throws KernelFailed (status
  /// filled in) or DeviceError.
  void run(CallState& call, void* const* args, void* const* outs) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::codegen::cuda
