// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Expressions. The arithmetic follows ir/semantics.hpp exactly: integers wrap (no nsw/nuw on user
// arithmetic), division and shifts are total, float min/max propagate NaN, float-to-int casts saturate.
#include <algorithm>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/TargetParser/Triple.h>

#include "codegen/llvm/emitter.hpp"
#include "kiln/half.hpp"
#include "ir/analysis.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cpu::detail {

namespace detail_bits = kiln::detail;

llvm::Value* Emitter::expr(const ir::Expr& e) {
  switch (e->kind) {
    case ir::ExprKind::Const: return constant(e->as<ir::ConstExpr>());
    case ir::ExprKind::VarRef: return read(e->as<ir::VarRefExpr>().var.get());
    case ir::ExprKind::Load: return lanes_.width ? lane_load(e->as<ir::LoadExpr>()) : load(e->as<ir::LoadExpr>());
    case ir::ExprKind::Dim: {
      const auto& d = e->as<ir::DimExpr>();
      llvm::Value* extent = array(d.array.get()).shape[d.axis];
      if (!extent) internal_error("the extent of " + d.array->name + " was not captured");
      return extent;
    }
    case ir::ExprKind::Unary: return unary(e->as<ir::UnaryExpr>());
    case ir::ExprKind::Binary: {
      const auto& bin = e->as<ir::BinaryExpr>();
      if (bin.op == BinaryOp::And || bin.op == BinaryOp::Or) return lanes_.width ? lane_logical(bin) : logical(bin);
      llvm::Value* a = expr(bin.a);  // left before right, as written
      llvm::Value* b = expr(bin.b);
      match_lanes({&a, &b});
      return ir::is_comparison(bin.op) ? compare(bin.op, bin.a->type, a, b) : binary(bin.op, bin.type, a, b);
    }
    case ir::ExprKind::Select: return lanes_.width ? lane_select(e->as<ir::SelectExpr>()) : select(e->as<ir::SelectExpr>());
    case ir::ExprKind::Cast: {
      const auto& c = e->as<ir::CastExpr>();
      return cast(c.type, c.a->type, expr(c.a));
    }
    case ir::ExprKind::Call: return call(e->as<ir::CallExpr>());
  }
  internal_error("unknown expression kind");
}

llvm::Value* Emitter::constant(const ir::ConstExpr& c) {
  llvm::Type* t = value_type(c.type);
  if (c.type == DType::F16) return b_.getInt16(detail_bits::f32_to_f16_bits(static_cast<float>(c.f)));
  if (c.type == DType::BF16) return b_.getInt16(detail_bits::f32_to_bf16_bits(static_cast<float>(c.f)));
  if (is_float(c.type)) return llvm::ConstantFP::get(t, c.f);  // f32 constants are exact in double
  if (c.type == DType::Bool) return b_.getInt1(c.i != 0);
  // Constants hold their value wrapped to the type's width: the low bits are the value.
  const llvm::APInt v(64, static_cast<std::uint64_t>(c.i));
  const unsigned bits = t->getIntegerBitWidth();
  return llvm::ConstantInt::get(t, bits < 64 ? v.trunc(bits) : v);
}

llvm::Value* Emitter::unary(const ir::UnaryExpr& u) {
  llvm::Value* a = expr(u.a);
  switch (u.op) {
    case UnaryOp::Neg: return is_float(u.type) ? b_.CreateFNeg(a) : b_.CreateSub(llvm::ConstantInt::get(a->getType(), 0), a);
    case UnaryOp::Not: return b_.CreateNot(a);
    case UnaryOp::BitNot: return b_.CreateNot(a);
  }
  internal_error("unknown unary operator");
}

llvm::Value* Emitter::binary(BinaryOp op, DType t, llvm::Value* a, llvm::Value* b) {
  if (is_float(t)) {
    switch (op) {
      case BinaryOp::Add: return b_.CreateFAdd(a, b);
      case BinaryOp::Sub: return b_.CreateFSub(a, b);
      case BinaryOp::Mul: return b_.CreateFMul(a, b);
      case BinaryOp::Div: return b_.CreateFDiv(a, b);
      case BinaryOp::Mod: return b_.CreateFRem(a, b);  // frem is C fmod: the result has the dividend's sign
      case BinaryOp::Min: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, a, b);
      case BinaryOp::Max: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a, b);
      default: break;
    }
  } else {
    const unsigned bits = a->getType()->getScalarSizeInBits();
    const bool is_signed = is_signed_int(t);
    switch (op) {
      case BinaryOp::Add: return b_.CreateAdd(a, b);
      case BinaryOp::Sub: return b_.CreateSub(a, b);
      case BinaryOp::Mul: return b_.CreateMul(a, b);
      case BinaryOp::Div: case BinaryOp::Mod: return int_divide(op, a, b, is_signed);
      case BinaryOp::Min: return b_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
      case BinaryOp::Max: return b_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
      case BinaryOp::BitAnd: return b_.CreateAnd(a, b);
      case BinaryOp::BitOr: return b_.CreateOr(a, b);
      case BinaryOp::BitXor: return b_.CreateXor(a, b);
      // The count is taken modulo the width, so no shift is ever poison.
      case BinaryOp::Shl: return b_.CreateShl(a, b_.CreateAnd(b, llvm::ConstantInt::get(b->getType(), bits - 1)));
      case BinaryOp::Shr: {
        llvm::Value* count = b_.CreateAnd(b, llvm::ConstantInt::get(b->getType(), bits - 1));
        return is_signed ? b_.CreateAShr(a, count) : b_.CreateLShr(a, count);  // arithmetic on signed types only
      }
      default: break;
    }
  }
  internal_error("binary operator " + std::string(ir::name_of(op)) + " on " + std::string(name_of(t)));
}

// x / 0 == 0, x % 0 == x, MIN / -1 == MIN, MIN % -1 == 0. The hardware divides by a safe divisor (1 where
// b is 0 or, for signed types, -1) and selects fix-ups afterwards, so the code stays branch-free and
// vectorizable.
llvm::Value* Emitter::int_divide(BinaryOp op, llvm::Value* a, llvm::Value* b, bool is_signed) {
  llvm::Type* t = a->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* is_zero = b_.CreateICmpEQ(b, zero);
  if (!is_signed) {
    llvm::Value* safe = b_.CreateSelect(is_zero, one, b);
    if (op == BinaryOp::Mod) return b_.CreateSelect(is_zero, a, b_.CreateURem(a, safe));
    return b_.CreateSelect(is_zero, zero, b_.CreateUDiv(a, safe));
  }
  llvm::Value* is_minus_one = b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(t, -1));
  llvm::Value* safe = b_.CreateSelect(b_.CreateOr(is_zero, is_minus_one), one, b);
  if (op == BinaryOp::Mod) return b_.CreateSelect(is_zero, a, b_.CreateSRem(a, safe));  // x % 1 == 0 covers -1
  llvm::Value* q = b_.CreateSelect(is_minus_one, b_.CreateSub(zero, a), b_.CreateSDiv(a, safe));
  return b_.CreateSelect(is_zero, zero, q);
}

llvm::Value* Emitter::compare(BinaryOp op, DType t, llvm::Value* a, llvm::Value* b) {
  using P = llvm::CmpInst::Predicate;
  P p = P::BAD_ICMP_PREDICATE;
  if (is_float(t)) {
    // Ordered comparisons are false on NaN; `une` makes NaN != x true.
    switch (op) {
      case BinaryOp::Eq: p = P::FCMP_OEQ; break;
      case BinaryOp::Ne: p = P::FCMP_UNE; break;
      case BinaryOp::Lt: p = P::FCMP_OLT; break;
      case BinaryOp::Le: p = P::FCMP_OLE; break;
      case BinaryOp::Gt: p = P::FCMP_OGT; break;
      case BinaryOp::Ge: p = P::FCMP_OGE; break;
      default: break;
    }
    return b_.CreateFCmp(p, a, b);
  }
  // Bool orders false < true, which is unsigned order on i1 (signed i1 would make true == -1).
  const bool is_signed = is_signed_int(t);
  switch (op) {
    case BinaryOp::Eq: p = P::ICMP_EQ; break;
    case BinaryOp::Ne: p = P::ICMP_NE; break;
    case BinaryOp::Lt: p = is_signed ? P::ICMP_SLT : P::ICMP_ULT; break;
    case BinaryOp::Le: p = is_signed ? P::ICMP_SLE : P::ICMP_ULE; break;
    case BinaryOp::Gt: p = is_signed ? P::ICMP_SGT : P::ICMP_UGT; break;
    case BinaryOp::Ge: p = is_signed ? P::ICMP_SGE : P::ICMP_UGE; break;
    default: break;
  }
  return b_.CreateICmp(p, a, b);
}

// And/Or evaluate their right operand only when needed. A right operand without loads cannot fault, so
// it is computed unconditionally (select form, which optimizes and vectorizes well); one with a load
// gets a branch, since the left operand may be what keeps the load in bounds.
llvm::Value* Emitter::logical(const ir::BinaryExpr& e) {
  const bool is_and = e.op == BinaryOp::And;
  llvm::Value* lhs = expr(e.a);
  if (ir::is_speculatable(e.b)) {
    llvm::Value* rhs = expr(e.b);
    return is_and ? b_.CreateLogicalAnd(lhs, rhs) : b_.CreateLogicalOr(lhs, rhs);
  }
  llvm::BasicBlock* from = b_.GetInsertBlock();
  auto* rhs_bb = llvm::BasicBlock::Create(ctx_, is_and ? "and.rhs" : "or.rhs", fs_->fn);
  auto* join = llvm::BasicBlock::Create(ctx_, is_and ? "and.end" : "or.end", fs_->fn);
  if (is_and) b_.CreateCondBr(lhs, rhs_bb, join);
  else b_.CreateCondBr(lhs, join, rhs_bb);
  b_.SetInsertPoint(rhs_bb);
  llvm::Value* rhs = expr(e.b);
  llvm::BasicBlock* rhs_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* phi = b_.CreatePHI(b_.getInt1Ty(), 2);
  phi->addIncoming(b_.getInt1(!is_and), from);
  phi->addIncoming(rhs, rhs_end);
  return phi;
}

// Only the chosen operand is evaluated; as with And/Or, operands without loads are evaluated both.
llvm::Value* Emitter::select(const ir::SelectExpr& e) {
  llvm::Value* cond = expr(e.cond);
  if (ir::is_speculatable(e.a) && ir::is_speculatable(e.b)) {
    llvm::Value* a = expr(e.a);
    llvm::Value* b = expr(e.b);
    return b_.CreateSelect(cond, a, b);
  }
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "sel.then", fs_->fn);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "sel.else", fs_->fn);
  auto* join = llvm::BasicBlock::Create(ctx_, "sel.end", fs_->fn);
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  llvm::Value* a = expr(e.a);
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(else_bb);
  llvm::Value* b = expr(e.b);
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* phi = b_.CreatePHI(a->getType(), 2);
  phi->addIncoming(a, then_end);
  phi->addIncoming(b, else_end);
  return phi;
}

llvm::Value* Emitter::cast(DType to, DType from, llvm::Value* v) {
  if (to == from) return v;
  // f16 and bf16 convert through f32 (exact from them; rounded once to nearest-even to them).
  if (is_half(from)) return cast(to, DType::F32, half_to_f32(from, v));
  if (is_half(to)) return f32_to_half(to, cast(DType::F32, from, v));
  llvm::Type* t = shaped_like(value_type(to), v);
  if (to == DType::Bool) {
    // x != 0; for floats unordered, so NaN converts to true.
    if (is_float(from)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from == DType::Bool) return is_float(to) ? b_.CreateUIToFP(v, t) : b_.CreateZExt(v, t);
  // Narrowing wraps; widening extends by the source's signedness.
  if (is_int(from) && is_int(to)) return is_unsigned(from) ? b_.CreateZExtOrTrunc(v, t) : b_.CreateSExtOrTrunc(v, t);
  if (is_int(from)) return is_unsigned(from) ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t);
  if (is_int(to)) {
    if ((to == DType::I32 || to == DType::I64) && fs_ && fs_->scalar_loop && llvm::Triple(mod_.getTargetTriple()).isX86())
      return x86_float_to_int(to, from, v);
    const auto sat = is_unsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat;
    return b_.CreateIntrinsic(sat, {t, v->getType()}, {v});  // NaN -> 0
  }
  return b_.CreateFPCast(v, t);
}

// fptosi.sat lowers on x86 to two compares and a conditional move around the conversion, all on the path
// to the result: in a histogram's `hist[int(x * bins)] += 1` that doubles the time per element. The
// conversion instruction itself returns the integer minimum for every input it cannot convert (NaN, out
// of range), so one compare of the result, with a rarely taken branch to the fix-up, gives the same
// saturating result. Target intrinsics and branches stop loop vectorization, so this is only used in
// loops that cannot vectorize anyway (FunctionState::scalar_loop).
llvm::Value* Emitter::x86_float_to_int(DType to, DType from, llvm::Value* v) {
  const bool wide = to == DType::I64;
  llvm::Intrinsic::ID id = from == DType::F64 ? (wide ? llvm::Intrinsic::x86_sse2_cvttsd2si64 : llvm::Intrinsic::x86_sse2_cvttsd2si)
                                              : (wide ? llvm::Intrinsic::x86_sse_cvttss2si64 : llvm::Intrinsic::x86_sse_cvttss2si);
  llvm::Type* vec = llvm::FixedVectorType::get(v->getType(), from == DType::F64 ? 2 : 4);
  llvm::Value* lanes = b_.CreateInsertElement(llvm::PoisonValue::get(vec), v, std::uint64_t{0});
  llvm::Value* converted = b_.CreateIntrinsic(id, {}, {lanes});
  llvm::Type* t = converted->getType();
  const unsigned bits = t->getIntegerBitWidth();
  llvm::Constant* min = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(bits));
  llvm::Constant* max = llvm::ConstantInt::get(t, llvm::APInt::getSignedMaxValue(bits));
  llvm::BasicBlock* from_bb = b_.GetInsertBlock();
  auto* fixup = llvm::BasicBlock::Create(ctx_, "cvt.fixup", fs_->fn);
  auto* done = llvm::BasicBlock::Create(ctx_, "cvt.done", fs_->fn);
  b_.CreateCondBr(b_.CreateICmpEQ(converted, min), fixup, done, llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
  // The minimum: NaN gives 0, too large gives the maximum, the rest (too small, or exactly the minimum)
  // is the minimum.
  b_.SetInsertPoint(fixup);
  llvm::Value* zero = llvm::ConstantFP::get(v->getType(), 0.0);
  llvm::Value* fixed = b_.CreateSelect(b_.CreateFCmpUNO(v, v), llvm::ConstantInt::get(t, 0),
                                       b_.CreateSelect(b_.CreateFCmpOGT(v, zero), max, min));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::PHINode* result = b_.CreatePHI(t, 2);
  result->addIncoming(converted, from_bb);
  result->addIncoming(fixed, fixup);
  return result;
}

llvm::Value* Emitter::element_address(const ir::Var& var, const std::vector<ir::Expr>& indices) {
  std::vector<llvm::Value*> idx;
  for (const auto& i : indices) idx.push_back(expr(i));
  return address_of(var, idx);
}

// In lane mode an index may be a vector: the address is then a vector of pointers, one per lane.
llvm::Value* Emitter::address_of(const ir::Var& var, const std::vector<llvm::Value*>& idx) {
  const ArrayValue& a = array(var.get());
  // In-range indices keep the offset well inside the allocation, so the address arithmetic cannot
  // overflow (nsw, inbounds): this is what lets SCEV see the access as affine in the loop index.
  llvm::Value* offset = nullptr;
  for (size_t d = 0; d < idx.size(); ++d) {
    llvm::Value* term = idx[d];
    auto* unit = llvm::dyn_cast<llvm::ConstantInt>(a.stride[d]);
    if (!unit || !unit->isOne()) {
      llvm::Value* stride = a.stride[d];
      match_lanes({&term, &stride});
      term = b_.CreateMul(term, stride, "", false, true);
    }
    if (offset) match_lanes({&offset, &term});
    offset = offset ? b_.CreateAdd(offset, term, "", false, true) : term;
  }
  return b_.CreateInBoundsGEP(memory_type(var->type.elem), a.data, offset);
}

llvm::Value* Emitter::load(const ir::LoadExpr& l) {
  const DType t = l.array->type.elem;
  llvm::Value* addr = element_address(l.array, l.indices);
  llvm::LoadInst* v = b_.CreateAlignedLoad(memory_type(t), addr, llvm::Align(size_of(t)));
  tag_access(v, l.array.get());
  return from_memory(v, t);
}

void Emitter::tag_access(llvm::Instruction* access, const ir::VarNode* array) {
  if (fs_->access_group && !fs_->reduced_arrays.count(array))
    access->setMetadata(llvm::LLVMContext::MD_access_group, fs_->access_group);
  // An allocation shares memory with no other array: accesses to it are in its scope and noalias with the
  // other allocations; a parameter's are noalias with every allocation. A binding may name any array, so its
  // accesses claim nothing. LLVM then keeps a row of a matrix product's result in registers across the
  // loads of its operands, without run-time overlap tests.
  if (array->kind == ir::VarKind::Binding || !all_alloc_scopes_) return;
  if (const auto it = alloc_scope_.find(array); it != alloc_scope_.end()) {
    access->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second);
    if (llvm::MDNode* others = alloc_noalias_.at(array)) access->setMetadata(llvm::LLVMContext::MD_noalias, others);
  } else if (array->kind == ir::VarKind::Param) {
    access->setMetadata(llvm::LLVMContext::MD_noalias, all_alloc_scopes_);
  }
}

void Emitter::make_alias_scopes() {
  struct Allocations : ir::IRVisitor {
    std::vector<const ir::VarNode*> all;
    void visit(const ir::AllocateStmt& a) override {
      if (std::find(all.begin(), all.end(), a.array.get()) == all.end()) all.push_back(a.array.get());
    }
  } allocs;
  allocs.walk(fn_.body);
  if (allocs.all.empty()) return;
  llvm::MDBuilder md(ctx_);
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain("kiln." + fn_.name);
  std::vector<llvm::Metadata*> scopes;
  for (const ir::VarNode* a : allocs.all) {
    llvm::MDNode* scope = md.createAnonymousAliasScope(domain, a->name);
    scopes.push_back(scope);
    alloc_scope_[a] = llvm::MDNode::get(ctx_, {scope});
  }
  all_alloc_scopes_ = llvm::MDNode::get(ctx_, scopes);
  for (std::size_t k = 0; k < allocs.all.size(); ++k) {
    std::vector<llvm::Metadata*> others;
    for (std::size_t j = 0; j < scopes.size(); ++j)
      if (j != k) others.push_back(scopes[j]);
    alloc_noalias_[allocs.all[k]] = others.empty() ? nullptr : llvm::MDNode::get(ctx_, others);
  }
}

}  // namespace kiln::codegen::cpu::detail
