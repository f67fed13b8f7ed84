// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The scalar results of an asynchronous CUDA call whose reduction totals are still on their way: the
// kiln::cuda::Future behind `kernel.async(stream)`'s scalars. The call queued copies of the totals (and of its
// kernels' status) into a page-locked host slot and recorded the slot's event; reading a value waits for that
// event only, folds the totals into the host function's variables and computes the results on the host
// executor, as a synchronous call would have at its end.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/cuda/device_machine.hpp"
#include "ir/interpreter.hpp"
#include "kiln/device.hpp"
#include "runtime/cuda/host_slots.hpp"

namespace kiln::codegen::cuda {

class DeferredScalars final : public kiln::cuda::detail::PendingScalars {
 public:
  /// `keep` owns `host` (and the kernels' GpuKernel records); `status_offset` is where the call's KernelStatus
  /// was copied in the slot (-1: no kernel of the call can fail); `report` throws a failed kernel's kiln::Error.
  DeferredScalars(std::shared_ptr<const void> keep, const ir::Executor& host, const ir::Function& f, ir::PendingRun run,
                  std::vector<DeferredTotals> totals, gpu::Device& dev, gpu::HostSlots::Slot* slot, std::ptrdiff_t status_offset,
                  std::function<void(const KernelStatus&)> report);
  ~DeferredScalars() override;
  DeferredScalars(const DeferredScalars&) = delete;
  DeferredScalars& operator=(const DeferredScalars&) = delete;

  ScalarSlot value(std::size_t member) override;
  bool ready() const override;

 private:
  void resolve();  ///< with mutex_ held

  std::shared_ptr<const void> keep_;
  const ir::Executor& host_;
  std::string kernel_;
  bool tuple_;
  std::size_t members_;
  ir::PendingRun run_;
  std::vector<DeferredTotals> totals_;
  gpu::Device& dev_;
  gpu::HostSlots::Slot* slot_;
  std::ptrdiff_t status_offset_;
  std::function<void(const KernelStatus&)> report_;

  mutable std::mutex mutex_;
  bool resolved_ = false;
  std::vector<ScalarSlot> values_;
  std::exception_ptr error_;
};

}  // namespace kiln::codegen::cuda
