// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/deferred_scalars.hpp"

#include <cstring>

#include <fmt/format.h>

#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {

DeferredScalars::DeferredScalars(std::shared_ptr<const void> keep, const ir::Executor& host, const ir::Function& f,
                                 ir::PendingRun run, std::vector<DeferredTotals> totals, gpu::Device& dev,
                                 gpu::HostSlots::Slot* slot, std::ptrdiff_t status_offset,
                                 std::function<void(const KernelStatus&)> report)
    : keep_(std::move(keep)),
      host_(host),
      kernel_(f.name),
      tuple_(f.returns_tuple()),
      members_(f.returns_tuple() ? f.tuple.size() : 1),
      run_(std::move(run)),
      totals_(std::move(totals)),
      dev_(dev),
      slot_(slot),
      status_offset_(status_offset),
      report_(std::move(report)) {}

DeferredScalars::~DeferredScalars() { dev_.host_slots().give_back(slot_); }

bool DeferredScalars::ready() const {
  std::lock_guard lock(mutex_);
  if (resolved_) return true;
  dev_.bind();  // the event is the device's: a thread with another context current must not query it there
  return gpu::driver().cuEventQuery(slot_->done) != CUDA_ERROR_NOT_READY;
}

ScalarSlot DeferredScalars::value(std::size_t member) {
  std::lock_guard lock(mutex_);
  if (!resolved_) {
    try {
      resolve();
    } catch (...) {
      error_ = std::current_exception();
    }
    resolved_ = true;
  }
  if (error_) std::rethrow_exception(error_);
  return values_.at(member);
}

void DeferredScalars::resolve() {
  dev_.bind();
  if (const CUresult r = gpu::driver().cuEventSynchronize(slot_->done); r != CUDA_SUCCESS)
    gpu::fail(r, fmt::format("kernel '{}' (waiting for its results)", kernel_));
  const char* host = static_cast<const char*>(slot_->host);
  if (status_offset_ >= 0) {
    KernelStatus status;
    std::memcpy(&status, host + status_offset_, sizeof status);
    if (status.code != 0) {
      if (report_) report_(status);
      throw DeviceError(fmt::format("kernel '{}' failed: {}", kernel_, status.message));
    }
  }
  for (const DeferredTotals& t : totals_)
    fold_totals(*t.kernel, t.slots, reinterpret_cast<const std::uint64_t*>(host + t.offset), run_.scalars);
  values_.assign(members_, ScalarSlot{});
  std::vector<void*> outs(members_);
  for (std::size_t i = 0; i < members_; ++i) outs[i] = &values_[i];
  host_.finish(run_, tuple_ ? static_cast<void*>(outs.data()) : outs[0]);
}

}  // namespace kiln::codegen::cuda
