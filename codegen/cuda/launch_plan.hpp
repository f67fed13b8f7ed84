// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Launch plans: a repeated asynchronous call of a compiled CUDA variant without the host executor.
//
// Most host functions of a device-resident pipeline are a few checks of the arguments' extents, the result's
// allocation and one launch (`y(all) = x * a`, `return x * a`). Everything such a function computes on the host —
// the checks' outcomes, the allocations' sizes, the launches' bounds, geometry and the parameters other than
// pointers and scalar arguments — is then a function of the array arguments' shapes and strides alone. So the
// first asynchronous call with a set of shapes runs the host function on the executor as every call did, and
// records what it did (CallState::recorder): the allocations, and per launch the entry, the launch model's
// grid and block, and each kernel parameter's value or where it comes from (an argument's pointer, a scalar
// argument, an allocation of the call). A later call with the same shapes, strides and device does only what
// must be done per call: compare the shapes, check that no written argument overlaps another (any overlap:
// the executor's path, which copies, runs the `__restrict__`-free kernel or refuses, as before), take the
// allocations from the stream, patch the parameters and launch.
//
// Whether a host function qualifies is decided once per program (plan_refusal: every host expression must be a
// function of extents and constants; no reductions read back, kernel status, loops, branches, bindings, element
// accesses or sorts); the reason it does not is in the kernel's diagnostics. Plans are immutable once published
// (an append-only table of kMaxEntries), so calls on several threads share them without a lock.
//
// The typed path (kiln/device.hpp's AsyncKernel, KernelCore::call_typed) passes DeviceArgHeads, whose ranks and
// devices the plan compares too, and keeps the plan that ran (ArgMemory::ran): its next call goes straight to
// run_bound, which follows the plan's own copies of the function, geometry, context, driver and latest-launch
// record rather than the program's objects.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_options.hpp"
#include "codegen/cuda/launch_model.hpp"
#include "codegen/cuda/program.hpp"
#include "ir/interpreter.hpp"
#include "kiln/abi.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/module.hpp"

namespace kiln::cuda::detail {
struct StreamState;
}

namespace kiln::codegen::cuda {

/// Where a kernel parameter's value comes from at each call of a plan.
enum class PlanSource : std::uint8_t {
  Fixed,       ///< the recorded value (bounds, extents, strides, host values computed from extents)
  ArgData,     ///< argument `index`'s element pointer
  ArgScalar,   ///< scalar argument `index`
  Allocation,  ///< the device pointer of the call's allocation `index`, or (recording) an array found by its address
  Refused,     ///< a value no plan can reproduce (reduction scratch, kernel status)
};

struct PlanParamSource {
  PlanSource source = PlanSource::Refused;
  std::uint8_t index = 0;
};

class LaunchMemo;

/// One launch of a plan. What every repeated call reads comes first and together (a few cache lines); what the
/// kernel's latest-launch record needs, read only when another launch of the kernel came between, after it.
struct PlanLaunch {
  static constexpr std::size_t kMaxParams = 64;
  static constexpr std::size_t kMaxPatches = 16;
  struct Patch {
    std::uint8_t param;
    PlanParamSource from;
  };
  CUfunction function = nullptr;  ///< fn->fn
  unsigned grid[3] = {}, block[3] = {};
  std::uint8_t nvalues = 0, npatches = 0;
  Patch patches[kMaxPatches] = {};
  LaunchMemo* memo = nullptr;  ///< the kernel's latest launch (DeviceMachine::memo), set when the plan is published
  /// cuLaunchKernel's parameter array as far as it is fixed: parameter k at values[k], set when the plan is
  /// published (where it stays). A call copies it and points the patched parameters at its own values.
  void* params[kMaxParams] = {};
  std::uint64_t values[kMaxParams] = {};  ///< each parameter's 8 bytes: the recorded value (patched ones: unused)

  const gpu::LoadedFunction* fn = nullptr;
  std::size_t kernel = 0;  ///< GpuKernel index (the launch memo that diagnostics read)
  LaunchChoice choice;
  std::uint64_t counts[kMaxRank] = {};
  int rank = 1;
  std::int64_t rows = -1;  ///< the cooperative row length the choice was made for
};

/// A device allocation of a plan, made from the call's stream.
struct PlanAllocation {
  std::size_t bytes = 0;
  std::string what;  ///< "array y of shape (3,)", for the out-of-memory message
};

/// What one call recorded: the plan for its shapes, or why there is none.
struct PlanEntry {
  /// What a call compares first, together: a rank-1 array's fields are in its first 64 bytes.
  struct Array {
    std::uint8_t param = 0;
    std::uint8_t rank = 0;
    bool written = false;
    std::int64_t lo = 0, hi = 0;  ///< the bytes its elements may occupy, relative to its pointer; lo == hi: none
    std::int64_t shape[kMaxRank] = {}, strides[kMaxRank] = {};
  };
  static constexpr std::uint8_t kMaxPairs = 16, kManyPairs = 0xFF;
  // What every call reads comes first, in its first cache lines: the device, the driver's two functions a call makes
  // (copied from its table, which is several lines long), the lists, the pairs.
  int ordinal = -1;          ///< device's, compared at every call
  /// The pairs of arrays (indices into `arrays`) whose byte ranges a call compares: a written one with elements
  /// and another with elements. More than kMaxPairs: npairs is kManyPairs, and a call compares every such pair.
  std::uint8_t npairs = 0;
  CUcontext context = nullptr;  ///< device's, which a launch needs current
  decltype(&::cuCtxGetCurrent) current_context = nullptr;  ///< driver's
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;     ///< driver's
  std::vector<Array> arrays;
  std::vector<PlanAllocation> allocations;
  std::vector<PlanLaunch> launches;
  std::uint8_t pairs[kMaxPairs][2] = {};
  /// Calls run by the plan: by the general path's arguments, and by the typed path's (DeviceArgHeads).
  mutable std::atomic<std::uint64_t> runs{0}, typed_runs{0};
  gpu::Device* device = nullptr;
  int result = -1;    ///< the allocation handed over as the array result, or -1 (no result)
  int result_rank = 0;
  ArrayDesc result_desc{};  ///< its shape and strides
};

/// Filled by the executor's run of a call that may become a plan (CallState::recorder).
struct PlanRecorder {
  bool ok = true;
  struct Alloc {
    CUdeviceptr p;
    PlanAllocation a;
  };
  std::vector<Alloc> allocations;
  std::vector<PlanLaunch> launches;

  void allocation(CUdeviceptr p, std::size_t bytes, const ir::NewArray& what);
  /// `params[k]` points at parameter k's value; `from[k]` says where it comes from.
  void launch(std::size_t kernel, const gpu::LoadedFunction& fn, const LaunchChoice& choice, const std::uint64_t* counts,
              int rank, std::int64_t rows, const PlanParamSource* from, void* const* params, std::size_t n);
};

class DeviceMachine;

/// The plans of one compiled program.
class LaunchPlans {
 public:
  static constexpr std::size_t kMaxEntries = 16;

  /// `written` and `arrays`: bit i, parameter i is written / is an array. `machine` keeps the kernels' latest
  /// launches (for diagnostics), which the plans' launches update.
  LaunchPlans(const Program& program, std::uint32_t written, std::uint32_t arrays, const CudaOptions& opts,
              const DeviceMachine& machine);
  ~LaunchPlans();

  /// Why this program's calls cannot be planned, or "" when they can.
  const std::string& refusal() const { return refusal_; }
  bool enabled() const { return refusal_.empty(); }
  /// Whether a call with these arguments may record a plan (enabled, room left, none recorded for them yet).
  bool may_record(void* const* args, int device) const;
  /// Publishes what a call recorded for `args` (its result, if any, at `result`).
  void publish(const PlanRecorder& rec, void* const* args, gpu::Device& dev, const ArrayDesc* result);
  /// Runs the call when a plan matches `args` (argv[nparams] is its ArgMemory) and no written argument overlaps
  /// another; returns false, having done nothing, otherwise. With ArgMemory::heads the array arguments are
  /// DeviceArgHeads, whose ranks and devices are compared too (the typed path: KernelCore::call_typed), and the
  /// plan that ran is left in ArgMemory::ran.
  bool run(void* const* args, void* result) const;
  /// The typed path's repeat of one plan (an ArgMemory::ran): runs the call when `heads` match its ranks, shapes,
  /// strides and device, the stream records no graph and no written argument overlaps another; returns false,
  /// having done nothing, otherwise.
  static bool run_bound(const void* plan, void* const* heads, kiln::cuda::detail::StreamState& stream, void* result);
  /// Diagnostics: plans recorded, calls they ran, or why none.
  std::string describe() const;

 private:
  const PlanEntry* find(void* const* args, int device) const;
  /// find() for the typed path.
  const PlanEntry* find_heads(void* const* args, int device) const;

  std::size_t nparams_;
  std::vector<int> ranks_;  ///< per parameter: its array rank, 0 for a scalar
  std::vector<std::int64_t> esizes_;  ///< per parameter: its element's bytes
  std::uint32_t written_, arrays_;
  std::string refusal_;
  std::array<std::atomic<const PlanEntry*>, kMaxEntries> entries_{};
  std::atomic<std::size_t> n_{0};
  std::mutex publish_;  // guards appending to entries_
  const DeviceMachine* machine_;
};

/// Why `program`'s host function cannot be planned, or "" (see the head of this file).
std::string plan_refusal(const Program& program);

}  // namespace kiln::codegen::cuda
