// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA target as an ir::Machine: the host function of an offloaded kernel (passes/offload.hpp) runs on the
// one host executor (ir/interpreter.hpp), and this says what its memory and launches are on a device. Arrays
// are device memory: element reads and writes outside kernels are copies, allocations stream-ordered device
// allocations, and a launch binds the kernel's parameters from the host's scalars and arrays, picks the
// geometry and folds the reductions' totals into the host's variables.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/cuda/launch_memo.hpp"
#include "codegen/cuda/launch_model.hpp"
#include "codegen/cuda/launch_plan.hpp"
#include "codegen/cuda/program.hpp"
#include "codegen/cuda/small_list.hpp"
#include "ir/interpreter.hpp"
#include "kiln/abi.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/host_slots.hpp"
#include "runtime/cuda/module.hpp"
#include "runtime/cuda/stream_state.hpp"

namespace kiln::codegen::cuda {

/// Where a launch's reductions put their totals in the host's variables: (value slot, index slot or -1) each.
using ReductionSlots = std::vector<std::pair<int, int>>;

/// Combines a launch's reduction totals (as the kernel left them in its result slots) into the host's
/// variables, as the host executor defines it: `var = var (op) total`, argmin/argmax by their clauses.
void fold_totals(const GpuKernel& gk, const ReductionSlots& slots, const std::uint64_t* totals,
                 std::vector<ScalarSlot>& scalars);

/// A launch of an asynchronous call whose totals are copied back without waiting: they are folded into the
/// run's variables when its kiln::cuda::Future is read.
struct DeferredTotals {
  const GpuKernel* kernel;
  ReductionSlots slots;
  std::size_t offset;  ///< of the totals in the call's host slot
};

/// What every call of a program needs besides its arguments, found once per program.
struct CallNeeds {
  explicit CallNeeds(const Program& prog);
  std::size_t scratch_bytes = 0;  ///< the largest reduction scratch among its kernels
  bool may_fail = false;          ///< whether a kernel can fail (the call then needs a status slot)
};

/// One call on one device: where it runs, the module's functions, and the device memory it owns.
class CallState {
 public:
  /// `async`: the stream of an asynchronous call (ArgMemory::stream); null for a synchronous call, which runs
  /// on the device's own stream.
  CallState(gpu::Device& dev, const gpu::Module& module, const CallNeeds& needs, KernelStatus* status,
            kiln::cuda::detail::StreamState* async = nullptr);
  CallState(const CallState&) = delete;
  CallState& operator=(const CallState&) = delete;
  ~CallState();  ///< frees the call's device memory (stream-ordered)

  gpu::Device& dev;
  const gpu::Module& module;
  KernelStatus* status;
  kiln::cuda::detail::StreamState* async;  ///< null: a synchronous call
  CUstream stream;                         ///< where the call's copies and launches are queued
  /// Scratch for reduction partials and results, and the device copy of KernelStatus (when any kernel may
  /// fail; an asynchronous call's is a status slot, checked when its stream is synchronized).
  CUdeviceptr scratch = 0, device_status = 0;
  /// CUDA kernels launched since the last synchronization (for errors that surface there): names that
  /// outlive the call (the module's).
  SmallList<const std::string*, 8> pending;
  /// Per allocation site of the host function: its current array (freed when the site runs again).
  SmallList<CUdeviceptr, 4> sites;

  /// Whether the caller takes scalar results as futures (an asynchronous call through kernel.async).
  bool may_defer = false;
  /// The kernel arguments that share memory with another one, one of the two written (ArgMemory::shared):
  /// a launch compares the byte ranges of its arrays only when one of them is such an argument or not an argument.
  std::uint32_t shared_arguments = ~0u;
  /// Set when the call may become a launch plan (launch_plan.hpp): its allocations and launches are recorded here.
  PlanRecorder* recorder = nullptr;
  /// Totals copied back without waiting, into `host` (page-locked; the call's until handed to a Future).
  std::vector<DeferredTotals> deferred;
  gpu::HostSlots::Slot* host = nullptr;
  std::size_t host_used = 0;
  /// `bytes` of the host slot for values copied back without waiting, or null when they do not fit; room
  /// for the kernels' KernelStatus is kept until it is asked for (`status`).
  void* host_bytes(std::size_t bytes, bool status = false);

  /// Stream-ordered device memory owned by the call (memory the stream freed before, if it kept a block of
  /// this size: runtime/cuda/stream_blocks.hpp); null for 0 bytes. OOM is a DeviceError naming `what`.
  CUdeviceptr alloc(std::size_t bytes, std::string_view what);
  /// As alloc, for an array of the host function (described only if the allocation fails).
  CUdeviceptr alloc(std::size_t bytes, const ir::NewArray& what);
  /// Frees memory of the call at this point of its stream.
  void release(CUdeviceptr p) noexcept;
  /// Hands memory of the call to its caller (an asynchronous call's array result); false if the call does not own p.
  bool adopt(CUdeviceptr p) noexcept;
  /// Waits for the stream; a failure names the kernels launched since the last wait. While the stream
  /// records a graph nothing can wait: that is a DeviceError saying why.
  void synchronize(const std::string& kernel);
  /// Throws DeviceError unless r is CUDA_SUCCESS. An error from an earlier launch can surface in any later
  /// driver call, so the message names the kernels launched since the last wait too.
  void check(CUresult r, std::string_view what) const {
    if (r != CUDA_SUCCESS) [[unlikely]]
      fail(r, what);
  }
  [[noreturn]] void fail(CUresult r, std::string_view what) const;

 private:
  /// The driver's result for `bytes` of stream-ordered memory at *p (owned by the call on success).
  CUresult try_alloc(std::size_t bytes, CUdeviceptr* p);
  void free_at_stream(CUdeviceptr p, std::size_t bytes) noexcept;

  gpu::Scratch scratch_, status_;  // a synchronous call's: the device's shared buffers, safe on its one stream
  SmallList<std::pair<CUdeviceptr, std::size_t>, 4> owned_;
};

/// The DeviceError of an allocation of `bytes` on `dev` that failed with `r`; `what` names the array.
[[noreturn]] void throw_alloc_failed(const gpu::Device& dev, CUresult r, std::size_t bytes, std::string_view what);

/// Thrown through the host executor when a check or a device kernel fails: `status` holds code and message.
struct KernelFailed {
  std::int32_t code;
};

/// The device side of every call of one program; a run's Frame::machine_state is its CallState.
class DeviceMachine final : public ir::Machine {
 public:
  DeviceMachine(std::shared_ptr<const Program> program, const CudaOptions& opts);

  void read(ir::Frame& fr, const void* element, void* out, std::size_t bytes) const override;
  void write(ir::Frame& fr, void* element, const void* in, std::size_t bytes) const override;
  void* allocate(ir::Frame& fr, int site, std::size_t bytes, const ir::NewArray& what) const override;
  std::function<void(ir::Frame&)> launch(const ir::LaunchStmt& launch, ir::HostScope& scope) const override;
  /// Sorts with the radix kernels of sort_kernels.hpp (defined there).
  std::function<void(ir::Frame&)> sort(const ir::SortStmt& sort, ir::HostScope& scope) const override;
  /// Scans in one pass with the kernel of scan_kernels.hpp (defined there).
  std::function<void(ir::Frame&)> scan(const ir::ScanStmt& scan, ir::HostScope& scope) const override;
  [[noreturn]] void fail(ir::Frame& fr, std::int32_t code, const std::string& message) const override;

 private:
  std::shared_ptr<const Program> prog_;
  /// Launches whose totals only the scalar results read (ir::result_only_launches): an asynchronous call
  /// leaves those on their way.
  std::vector<const ir::LaunchStmt*> result_only_;
  bool sync_each_;  ///< CudaOptions::sync_each_launch
  LaunchOverrides overrides_;  ///< CudaOptions::waves, row_threads, coarsen_waves and contraction
  int sort_items_;             ///< CudaOptions::sort_items
  int sort_match_;             ///< CudaOptions::sort_match
  /// Each sort's tile and why (sort_items_reason), in the order sort() made them: for diagnostics.
  mutable std::vector<std::string> sort_plans_;
  int scan_tile_kib_;          ///< CudaOptions::scan_tile_kib
  /// Each single-pass scan's form and why (scan_form_reason), in the order scan() made them: for diagnostics.
  mutable std::vector<std::string> scan_plans_;
  /// Each kernel's latest launch as the launch model chose it: for diagnostics, and reused by the next launch
  /// with the same inputs (launch_memo.hpp).
  std::unique_ptr<LaunchMemo[]> last_;

 public:
  /// Per kernel: its strategy and why (GpuKernel::plan), and its latest launch with the model's reason.
  std::string describe() const;
  /// Kernel `kernel`'s latest launch, which launch plans update (launch_plan.hpp).
  LaunchMemo& memo(std::size_t kernel) const { return last_[kernel]; }
};

}  // namespace kiln::codegen::cuda
