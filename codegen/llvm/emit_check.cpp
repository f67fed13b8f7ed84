// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Run-time checks: when the condition is false the kernel records the failure in its KernelStatus
// (kiln_rt_fail formats the message) and leaves through the failure path, which frees the function's
// allocations. In a parfor chunk that ends the chunk; the caller looks at the status after the parfor.
#include <llvm/IR/MDBuilder.h>

#include "codegen/llvm/emitter.hpp"

namespace kiln::codegen::cpu::detail {

void Emitter::check(const ir::CheckStmt& c) {
  llvm::Value* ok = expr(c.cond);
  auto* failed = llvm::BasicBlock::Create(ctx_, "check.failed", fs_->fn);
  auto* cont = llvm::BasicBlock::Create(ctx_, "check.ok", fs_->fn);
  b_.CreateCondBr(ok, cont, failed, llvm::MDBuilder(ctx_).createLikelyBranchWeights());

  // The message's values are computed only on failure, as the interpreter does.
  b_.SetInsertPoint(failed);
  const auto n = static_cast<std::int64_t>(c.args.size());
  llvm::Value* values = llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (n > 0) {
    llvm::AllocaInst* buffer = entry_alloca(llvm::ArrayType::get(b_.getInt64Ty(), static_cast<std::uint64_t>(n)), "check.values");
    for (std::int64_t k = 0; k < n; ++k) {
      const ir::Expr& a = c.args[static_cast<size_t>(k)];
      b_.CreateStore(cast(DType::I64, a->type, expr(a)),
                     b_.CreateConstInBoundsGEP2_64(buffer->getAllocatedType(), buffer, 0, static_cast<std::uint64_t>(k)));
    }
    values = buffer;
  }
  llvm::Constant* message = b_.CreateGlobalString(c.message, "check.message");
  b_.CreateCall(rt_fail(), {fs_->status, b_.getInt32(static_cast<std::uint32_t>(c.code)), message, values,
                            b_.getInt32(static_cast<std::uint32_t>(n))});
  b_.CreateBr(fail_block());
  b_.SetInsertPoint(cont);
}

}  // namespace kiln::codegen::cpu::detail
