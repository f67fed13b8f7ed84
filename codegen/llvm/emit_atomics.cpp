// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::atomic_* on array elements (ir::AtomicStmt; the rules are in ir/atomics.hpp). Each is one LLVM
// atomic instruction at `monotonic` order (C++'s relaxed), or a compare-exchange loop where atomicrmw has no
// operation with kiln's meaning: float min/max, which propagate NaN and order -0 below +0 (atomicrmw fmin/fmax
// are IEEE minNum/maxNum, which drop a NaN). The loop vectorizer never widens an atomic instruction and the
// lane planner (ir/lanes.hpp) refuses a body holding one, so each element is updated in its own atomic step.
#include "codegen/llvm/emitter.hpp"
#include "ir/atomics.hpp"

namespace kiln::codegen::cpu::detail {

void Emitter::atomic(const ir::AtomicStmt& a) {
  if (lanes_.width) internal_error("an atomic on " + a.array->name + " in lane mode: the lane planner refuses it");
  if (fs_->atomic_arrays.count(a.array.get()) || fs_->reduced_arrays.count(a.array.get()))
    internal_error("an atomic on " + a.array->name + ", an array reduction of its parfor: the verifier refuses it");
  const DType t = a.array->type.elem;
  if (!ir::atomic_allowed(a.op, t)) internal_error(std::string(ir::name_of(a.op)) + " on " + a.array->name);
  // The operands before the address, as store() does.
  llvm::Value* value = expr(a.value);
  llvm::Value* expected = a.expected ? expr(a.expected) : nullptr;
  llvm::Value* addr = element_address(a.array, a.indices);
  const llvm::Align align(size_of(t));
  const auto relaxed = llvm::AtomicOrdering::Monotonic;
  llvm::Type* bits = b_.getIntNTy(static_cast<unsigned>(size_of(t)) * 8);
  auto as_bits = [&](llvm::Value* v) { return is_float(t) ? b_.CreateBitCast(v, bits) : v; };
  auto from_bits = [&](llvm::Value* v) { return is_float(t) ? b_.CreateBitCast(v, value_type(t)) : v; };
  using Rmw = llvm::AtomicRMWInst::BinOp;
  auto rmw = [&](Rmw op, llvm::Value* v) -> llvm::Value* { return b_.CreateAtomicRMW(op, addr, v, align, relaxed); };

  llvm::Value* old = nullptr;
  switch (a.op) {
    case AtomicOp::Add: old = rmw(is_float(t) ? Rmw::FAdd : Rmw::Add, value); break;
    case AtomicOp::Sub: old = rmw(is_float(t) ? Rmw::FSub : Rmw::Sub, value); break;
    case AtomicOp::Min:
    case AtomicOp::Max: {
      const BinaryOp op = a.op == AtomicOp::Min ? BinaryOp::Min : BinaryOp::Max;
      if (!is_float(t)) {
        old = rmw(op == BinaryOp::Min ? Rmw::Min : Rmw::Max, value);  // signed, as kiln's integers are
        break;
      }
      old = atomic_rmw_loop(addr, t, [&](llvm::Value* seen) { return binary(op, t, seen, value); });
      break;
    }
    case AtomicOp::Exchange: old = from_bits(rmw(Rmw::Xchg, as_bits(value))); break;
    case AtomicOp::CompareExchange: {
      // Compares bit patterns, as ir/atomics.hpp defines it (and as cmpxchg does).
      llvm::Value* x = b_.CreateAtomicCmpXchg(addr, as_bits(expected), as_bits(value), align, relaxed, relaxed);
      old = from_bits(b_.CreateExtractValue(x, 0));
      break;
    }
  }
  llvm::AllocaInst* slot = entry_alloca(old->getType(), a.result->name);
  b_.CreateStore(old, slot);
  fs_->scalars[a.result.get()] = ScalarValue{slot, true};
}

}  // namespace kiln::codegen::cpu::detail
