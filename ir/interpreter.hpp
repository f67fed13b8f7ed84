// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The IR interpreter: the executable definition of kiln's semantics. Every pass and backend is tested
// against it. It uses the same calling convention as compiled kernels (kiln/abi.hpp).
//
// It is also the host executor of device targets: the host function of an offloaded kernel (passes/offload.hpp)
// runs here with the target's Machine, which says how array elements are reached, where arrays are allocated,
// what a launch does and how a failure stops the run. Without a Machine, arrays are host memory and a launch
// runs its parfor here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/stmt.hpp"
#include "kiln/abi.hpp"

namespace kiln::ir {

/// The state of one run: scalar and array slots (numbered by HostScope), the host memory the run owns, and the
/// Machine's per-run state.
struct Frame {
  std::vector<ScalarSlot> scalars;
  std::vector<ArrayDesc> arrays;
  std::vector<std::unique_ptr<void, decltype(&std::free)>> owned;  ///< host arrays allocated without a Machine
  void* machine_state = nullptr;                                   ///< Executor::run's `state`
  /// Set by a Machine that left values the scalar results read on their way (Executor::run's `pending`).
  bool results_pending = false;
};

/// A run whose scalar results wait for values still on their way from a device: its variables as the body
/// left them. The Machine puts the values in `scalars`, then Executor::finish computes the results.
struct PendingRun {
  std::vector<ScalarSlot> scalars;
  std::vector<ArrayDesc> arrays;
};

/// What the executor offers a Machine building a launch: the slots of variables in a Frame, and host
/// expressions (a launch's bounds) as closures.
class HostScope {
 public:
  virtual int scalar(const VarNode* v) = 0;
  virtual int array(const VarNode* v) = 0;
  virtual std::function<ScalarSlot(Frame&)> value(const Expr& e) = 0;

 protected:
  ~HostScope() = default;
};

/// An array an allocation site makes, named for the message of an allocation that fails: described only then,
/// since an allocation that succeeds (one per call of a kernel that returns an array) should build no string.
struct NewArray {
  const std::string& name;
  int rank;
  const std::int64_t* shape;
  /// "array y of shape (3,)"
  std::string text() const;
};

/// Where a function's arrays live and what runs its launches. Methods get the run's Frame (its
/// `machine_state` is what Executor::run was given).
class Machine {
 public:
  virtual ~Machine() = default;
  /// Copies `bytes` from the element at `element` (an address inside an array of the run) to `out`.
  virtual void read(Frame& fr, const void* element, void* out, std::size_t bytes) const = 0;
  /// Copies `bytes` from `in` to the element at `element`.
  virtual void write(Frame& fr, void* element, const void* in, std::size_t bytes) const = 0;
  /// Memory for an array of `bytes` (> 0) made at allocation site `site` (numbered per function, each site
  /// once): the previous array of a site that runs again is out of scope. `what` names the array for errors.
  virtual void* allocate(Frame& fr, int site, std::size_t bytes, const NewArray& what) const = 0;
  /// The closure that runs `launch` (built once, run each time the launch is reached).
  virtual std::function<void(Frame&)> launch(const LaunchStmt& launch, HostScope& scope) const = 0;
  /// The closure that runs `sort` (built once, run each time it is reached). This default sorts host memory
  /// (ir/sort_rows.hpp): a machine whose arrays live elsewhere overrides it.
  virtual std::function<void(Frame&)> sort(const SortStmt& sort, HostScope& scope) const;
  /// The closure that runs `scan`; this default scans host memory (ir/scan_rows.hpp).
  virtual std::function<void(Frame&)> scan(const ScanStmt& scan, HostScope& scope) const;
  /// Stops the run with a KernelStatus code; `message` does not name the kernel.
  [[noreturn]] virtual void fail(Frame& fr, std::int32_t code, const std::string& message) const = 0;
};

/// A function compiled into closures with every variable resolved to a slot, to run many times. Parfors run
/// sequentially in row-major index order, which is the meaning every parallel backend must reproduce (up to
/// floating-point reassociation of reductions). Out-of-bounds accesses fail with kIndexOutOfRange, a negative
/// or oversized allocation with kShapeMismatch; without a Machine, failures throw the kiln::Error of their
/// code (ir::throw_status) naming the kernel, and new arrays are filled with a poison value (NaN, or
/// 0x5A5A5A5A5A5A5A5A for integers) that uninitialized reads see.
class Executor {
 public:
  /// `machine` (may be null) must outlive the executor. Throws IRError for statements it cannot run (with a
  /// Machine: array-level statements and parfors outside launches, which the passes lower and offload).
  explicit Executor(const Function& f, const Machine* machine = nullptr);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Runs the function (`args` and `result` as in kiln/abi.hpp; a tuple's `result` is `void* outs[n]`). A
  /// returned host array passes to the caller (free with std::free); with a Machine, its descriptor is
  /// written and the memory stays the Machine's.
  void run(void* const* args, void* result, void* machine_state = nullptr) const;
  /// As run, but when the Machine sets Frame::results_pending, the scalar results are not computed (nor
  /// written): the run's variables go to `*pending` for finish(). Array results are handed over either way.
  /// Returns whether the results are pending.
  bool run(void* const* args, void* result, void* machine_state, PendingRun* pending) const;
  /// Writes the scalar results of a pending run (into `result`, as run would), from its variables.
  void finish(const PendingRun& run, void* result) const;

  struct Impl;

 private:
  /// Evaluates the scalar results on `fr` and writes them to `result`'s members.
  void write_scalar_members(Frame& fr, void* result) const;

  std::unique_ptr<Impl> impl_;
};

/// Compiles and runs `f` once on host memory.
void interpret(const Function& f, void* const* args, void* result);

}  // namespace kiln::ir
