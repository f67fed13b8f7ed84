// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A SortStmt is a call of the runtime's radix sort (runtime/sort.hpp says why it is runtime code); a failure
// (no memory for its scratch) leaves through the failure path like a failed allocation.
#include "codegen/llvm/emitter.hpp"

namespace kiln::codegen::cpu::detail {

llvm::FunctionCallee Emitter::rt_sort() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64t = b_.getInt64Ty();
  llvm::FunctionCallee c = mod_.getOrInsertFunction(
      "kiln_rt_sort", llvm::FunctionType::get(b_.getInt32Ty(), {ptr, b_.getInt32Ty(), ptr, ptr, i64t, i64t, ptr}, false));
  llvm::cast<llvm::Function>(c.getCallee())->setDoesNotThrow();
  return c;
}

void Emitter::sort(const ir::SortStmt& s) {
  const int rank = s.keys->type.rank;
  const ArrayValue keys = array(s.keys.get());  // a copy: array() may rehash fs_->arrays
  llvm::Value* rows = i64(1);
  for (int k = 0; k + 1 < rank; ++k) rows = b_.CreateMul(rows, keys.shape[k]);
  llvm::Value* positions = s.positions ? array(s.positions.get()).data
                                       : llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx_, 0));
  llvm::Value* code = b_.CreateCall(
      rt_sort(), {fs_->status, b_.getInt32(static_cast<std::int32_t>(s.keys->type.elem)), keys.data, positions, rows,
                  keys.shape[rank - 1], b_.CreateGlobalString(s.keys->name, "sort.name")});
  fail_if(b_.CreateICmpNE(code, b_.getInt32(0)));
}

}  // namespace kiln::codegen::cpu::detail
