// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parfor bodies run in lanes (ir/lanes.hpp): `width` consecutive iterations of the innermost index at once,
// each lane computing what its scalar iteration computes, in the same order (no operation is reassociated,
// and library functions run lane by lane), so results are bitwise those of the scalar loop. Values that
// differ between lanes are vectors; the rest, such as an inner loop's index and the loads it makes at that
// index, stay scalars and are broadcast where they meet a vector.
//
// Control flow that differs between lanes runs under a mask: both arms of an `if`, each with the lanes that
// take it (an arm no lane takes is skipped), assignments merged by the mask, loads and stores masked so
// that a lane touches only the elements its scalar iteration touches. Accesses at a subscript that steps
// by one from lane to lane along the unit-stride axis are contiguous vector loads and stores; others are
// gathers and scatters (in lane order, as the scalar loop writes).
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "codegen/llvm/emitter.hpp"
#include "ir/analysis.hpp"

namespace kiln::codegen::cpu::detail {

unsigned Emitter::lane_count(const ir::LanePlan& plan) const {
  // One vector register of the widest float type the body computes with.
  return std::max(2u, vector_bits_ / static_cast<unsigned>(std::max(plan.float_bits, 32)));
}

llvm::Value* Emitter::lanes_loop(const ir::ParforStmt& p, const ir::LanePlan& plan, llvm::Value* lo, llvm::Value* hi,
                                 unsigned w) {
  llvm::Value* width = i64(w);
  llvm::Value* count = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(hi, lo), i64(0));
  llvm::Value* groups = b_.CreateUDiv(count, width, "groups");
  llvm::Value* end = b_.CreateAdd(lo, b_.CreateMul(groups, width, "", false, true), "lanes.end", false, true);
  std::vector<llvm::Constant*> steps;
  for (unsigned k = 0; k < w; ++k) steps.push_back(b_.getInt64(k));
  llvm::Constant* step = llvm::ConstantVector::get(steps);

  // Each reduction accumulates one partial per lane, from the identity; after the groups the partials fold
  // into the reduction's variable in lane order, and the remaining iterations continue from there. The
  // order is fixed by the chunk's range, which the runtime draws from fixed blocks, so the result does not
  // depend on the thread count.
  struct Partial {
    const ir::Reduction* reduction;
    ScalarValue scalar;
    llvm::AllocaInst* lanes;
  };
  std::vector<Partial> partials;
  for (const auto& r : p.reductions) {
    const DType t = r.var->type.elem;
    llvm::Constant* identity = llvm::cast<llvm::Constant>(reduction_identity(r.op, t));
    llvm::AllocaInst* slot = entry_alloca(llvm::FixedVectorType::get(value_type(t), w), r.var->name + ".lanes");
    b_.CreateStore(llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(w), identity), slot);
    partials.push_back({&r, scalar(r.var.get()), slot});
    fs_->scalars[r.var.get()] = ScalarValue{slot, true};
  }

  const ir::VarNode* index = plan.index.get();
  const Lanes outer = lanes_;
  llvm::MDNode* const group = fs_->access_group;
  const bool scalar = fs_->scalar_loop;
  loop(i64(0), groups, index->name + ".lanes", nullptr, [&](llvm::Value* g) {
    llvm::Value* first = b_.CreateAdd(lo, b_.CreateMul(g, width, "", false, true), "", false, true);
    llvm::Value* lanes = b_.CreateAdd(b_.CreateVectorSplat(w, first), step, index->name, false, true);
    fs_->scalars[index] = ScalarValue{lanes, false};
    lanes_ = Lanes{w, &plan, nullptr};
    fs_->access_group = nullptr;  // the lanes already are the vectorization: nothing for the vectorizer here
    fs_->scalar_loop = false;
    stmt(p.body);
    lanes_ = outer;
    fs_->access_group = group;
    fs_->scalar_loop = scalar;
  });

  llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
  b_.setFastMathFlags(base_fmf_);
  for (const Partial& part : partials) {
    const ir::Reduction& r = *part.reduction;
    const DType t = r.var->type.elem;
    fs_->scalars[r.var.get()] = part.scalar;
    llvm::Value* lanes = b_.CreateLoad(part.lanes->getAllocatedType(), part.lanes);
    llvm::Value* total = read(r.var.get());
    for (unsigned k = 0; k < w; ++k) total = combine(r.op, t, total, b_.CreateExtractElement(lanes, std::uint64_t{k}));
    b_.CreateStore(total, part.scalar.value);
  }
  return end;
}

// The iterations after the whole groups, in groups of w lanes masked to the range: one copy of the body in
// lanes instead of a narrower group and a scalar loop (a product tile's body was emitted three times: four
// vectors of lanes, one vector, and scalar; the last two only run for the last column block's few leftover
// columns). Each lane still computes exactly its scalar iteration. A lane past the range computes on values
// it never stores (its loads read zero, its stores are masked), so its variables need no merge (Lanes::tail);
// its sequential loops are neither vectorized nor unrolled (lanes_body), as the scalar loop's were.
void Emitter::tail_lanes(const ir::ParforStmt& p, const ir::LanePlan& plan, llvm::Value* lo, llvm::Value* hi, unsigned w) {
  llvm::Value* width = i64(w);
  llvm::Value* count = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(hi, lo), i64(0));
  llvm::Value* groups = b_.CreateUDiv(b_.CreateAdd(count, i64(w - 1)), width, "tail.groups");
  std::vector<llvm::Constant*> steps;
  for (unsigned k = 0; k < w; ++k) steps.push_back(b_.getInt64(k));
  llvm::Constant* step = llvm::ConstantVector::get(steps);
  const ir::VarNode* index = plan.index.get();
  const Lanes outer = lanes_;
  llvm::MDNode* const group = fs_->access_group;
  const bool scalar = fs_->scalar_loop, rest = fs_->lanes_body;
  loop(i64(0), groups, index->name + ".tail", nullptr, [&](llvm::Value* g) {
    llvm::Value* first = b_.CreateAdd(lo, b_.CreateMul(g, width, "", false, true), "", false, true);
    llvm::Value* lanes = b_.CreateAdd(b_.CreateVectorSplat(w, first), step, index->name, false, true);
    fs_->scalars[index] = ScalarValue{lanes, false};
    llvm::Value* inside = b_.CreateICmpSLT(lanes, b_.CreateVectorSplat(w, hi), "tail.mask");
    lanes_ = Lanes{w, &plan, inside, inside};
    fs_->access_group = nullptr;
    fs_->scalar_loop = false;
    fs_->lanes_body = true;
    stmt(p.body);
    lanes_ = outer;
    fs_->access_group = group;
    fs_->scalar_loop = scalar;
    fs_->lanes_body = rest;
  }, false, true);
}

llvm::Value* Emitter::splat(llvm::Value* v) {
  if (!lanes_.width || v->getType()->isVectorTy()) return v;
  return b_.CreateVectorSplat(lanes_.width, v);
}

void Emitter::match_lanes(std::initializer_list<llvm::Value**> values) {
  if (!lanes_.width) return;
  bool vector = false;
  for (llvm::Value** v : values) vector |= (*v)->getType()->isVectorTy();
  if (vector)
    for (llvm::Value** v : values) *v = splat(*v);
}

llvm::Type* Emitter::shaped_like(llvm::Type* scalar, llvm::Value* like) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
    return llvm::FixedVectorType::get(scalar, vt->getNumElements());
  return scalar;
}

llvm::Value* Emitter::any_lane(llvm::Value* mask) { return b_.CreateOrReduce(mask); }

// A select, not an `and`: a lane outside the mask may hold poison in `cond` (a value it never computed), which
// `and` would carry into the mask.
llvm::Value* Emitter::narrowed_mask(llvm::Value* cond) {
  cond = splat(cond);
  return lanes_.mask ? b_.CreateLogicalAnd(lanes_.mask, cond) : cond;
}

llvm::Value* Emitter::per_lane(llvm::ArrayRef<llvm::Value*> args,
                               const std::function<llvm::Value*(llvm::ArrayRef<llvm::Value*>)>& call) {
  llvm::Value* out = nullptr;
  for (unsigned k = 0; k < lanes_.width; ++k) {
    std::vector<llvm::Value*> lane;
    for (llvm::Value* a : args) lane.push_back(b_.CreateExtractElement(a, std::uint64_t{k}));
    llvm::Value* r = call(lane);
    if (!out) out = llvm::PoisonValue::get(llvm::FixedVectorType::get(r->getType(), lanes_.width));
    out = b_.CreateInsertElement(out, r, std::uint64_t{k});
  }
  return out;
}

llvm::Value* Emitter::contiguous_address(const ir::Var& var, const std::vector<ir::Expr>& indices,
                                         const std::vector<llvm::Value*>& idx) {
  if (idx.empty()) return nullptr;
  const size_t last = idx.size() - 1;
  for (size_t d = 0; d < last; ++d)
    if (idx[d]->getType()->isVectorTy()) return nullptr;
  auto* unit = llvm::dyn_cast<llvm::ConstantInt>(array(var.get()).stride[last]);
  if (!unit || !unit->isOne() || ir::lane_stride(*lanes_.plan, indices[last]) != 1) return nullptr;
  std::vector<llvm::Value*> first = idx;
  first[last] = b_.CreateExtractElement(idx[last], std::uint64_t{0});
  return address_of(var, first);
}

llvm::Value* Emitter::lane_load(const ir::LoadExpr& l) {
  const DType t = l.array->type.elem;
  llvm::Type* mt = memory_type(t);
  const llvm::Align align(size_of(t));
  std::vector<llvm::Value*> idx;
  for (const auto& i : l.indices) idx.push_back(expr(i));
  const bool uniform = std::none_of(idx.begin(), idx.end(), [](llvm::Value* v) { return v->getType()->isVectorTy(); });
  llvm::Instruction* access = nullptr;
  llvm::Value* value = nullptr;
  if (uniform) {
    // One element for every lane: loaded once, if some lane runs here.
    llvm::Value* addr = address_of(l.array, idx);
    if (!lanes_.mask || lanes_.mask == lanes_.tail) {  // the tail's lane 0 runs
      value = access = b_.CreateAlignedLoad(mt, addr, align);
    } else {
      llvm::BasicBlock* from = b_.GetInsertBlock();
      auto* some = llvm::BasicBlock::Create(ctx_, "lanes.load", fs_->fn);
      auto* join = llvm::BasicBlock::Create(ctx_, "lanes.loaded", fs_->fn);
      b_.CreateCondBr(any_lane(lanes_.mask), some, join);
      b_.SetInsertPoint(some);
      access = b_.CreateAlignedLoad(mt, addr, align);
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      llvm::PHINode* phi = b_.CreatePHI(mt, 2);
      phi->addIncoming(access, some);
      phi->addIncoming(llvm::Constant::getNullValue(mt), from);  // a defined value (never used by a lane)
      value = phi;
    }
  } else {
    auto* vt = llvm::FixedVectorType::get(mt, lanes_.width);
    // Lanes outside the mask read zero rather than poison, so that no later value or mask of theirs is poison.
    llvm::Value* zero = llvm::Constant::getNullValue(vt);
    if (llvm::Value* addr = contiguous_address(l.array, l.indices, idx)) {
      if (lanes_.mask) access = b_.CreateMaskedLoad(vt, addr, align, lanes_.mask, zero);
      else access = b_.CreateAlignedLoad(vt, addr, align);
    } else {
      for (auto& i : idx) i = splat(i);
      llvm::Value* all = lanes_.mask ? lanes_.mask : b_.getAllOnesMask(vt->getElementCount());
      access = b_.CreateMaskedGather(vt, address_of(l.array, idx), align, all, zero);
    }
    value = access;
  }
  tag_access(access, l.array.get());
  return from_memory(value, t);
}

void Emitter::lane_store(const ir::StoreStmt& s) {
  const DType t = s.array->type.elem;
  const llvm::Align align(size_of(t));
  llvm::Value* v = splat(to_memory(expr(s.value), t));  // the value before the address, as the interpreter does
  std::vector<llvm::Value*> idx;
  for (const auto& i : s.indices) idx.push_back(expr(i));
  if (std::none_of(idx.begin(), idx.end(), [](llvm::Value* x) { return x->getType()->isVectorTy(); }))
    internal_error("every lane stores to one element of " + s.array->name + " (ir::plan_lanes refuses such bodies)");
  llvm::Instruction* access = nullptr;
  if (llvm::Value* addr = contiguous_address(s.array, s.indices, idx)) {
    if (lanes_.mask) access = b_.CreateMaskedStore(v, addr, align, lanes_.mask);
    else access = b_.CreateAlignedStore(v, addr, align);
  } else {
    for (auto& i : idx) i = splat(i);
    auto* vt = llvm::cast<llvm::FixedVectorType>(v->getType());
    llvm::Value* all = lanes_.mask ? lanes_.mask : b_.getAllOnesMask(vt->getElementCount());
    access = b_.CreateMaskedScatter(v, address_of(s.array, idx), align, all);  // lane order: the last lane wins
  }
  tag_access(access, s.array.get());
}

llvm::Value* Emitter::expr_under(const ir::Expr& e, llvm::Value* mask) {
  llvm::Value* const outer = lanes_.mask;
  lanes_.mask = mask;
  llvm::Value* v = expr(e);
  lanes_.mask = outer;
  return v;
}

// As in scalar code, only the chosen operand is evaluated for a lane: an operand that may fault (a load) is
// evaluated under the mask of the lanes that choose it. A select that is the same in every lane is scalar
// code (a value is a vector exactly where ir::varies says it differs between lanes, which `if` relies on).
llvm::Value* Emitter::lane_select(const ir::SelectExpr& e) {
  const ir::LanePlan& plan = *lanes_.plan;
  if (!ir::varies(plan, e.cond) && !ir::varies(plan, e.a) && !ir::varies(plan, e.b)) return select(e);
  llvm::Value* cond = expr(e.cond);
  llvm::Value* a = nullptr;
  llvm::Value* b = nullptr;
  if (ir::is_speculatable(e.a) && ir::is_speculatable(e.b)) {
    a = expr(e.a);
    b = expr(e.b);
  } else {
    cond = splat(cond);
    a = expr_under(e.a, narrowed_mask(cond));
    b = expr_under(e.b, narrowed_mask(b_.CreateNot(cond)));
  }
  match_lanes({&cond, &a, &b});
  return b_.CreateSelect(cond, a, b);
}

llvm::Value* Emitter::lane_logical(const ir::BinaryExpr& e) {
  if (!ir::varies(*lanes_.plan, e.a) && !ir::varies(*lanes_.plan, e.b)) return logical(e);  // as lane_select
  const bool is_and = e.op == BinaryOp::And;
  llvm::Value* lhs = expr(e.a);
  llvm::Value* rhs = nullptr;
  if (ir::is_speculatable(e.b)) {
    rhs = expr(e.b);
  } else {
    lhs = splat(lhs);
    rhs = expr_under(e.b, narrowed_mask(is_and ? lhs : b_.CreateNot(lhs)));
  }
  match_lanes({&lhs, &rhs});
  return is_and ? b_.CreateLogicalAnd(lhs, rhs) : b_.CreateLogicalOr(lhs, rhs);
}

void Emitter::lane_if(const ir::IfStmt& s) {
  llvm::Value* cond = splat(expr(s.cond));
  llvm::Value* const outer = lanes_.mask;
  auto arm = [&](const ir::Stmt& body, llvm::Value* mask, const char* name) {
    auto* run = llvm::BasicBlock::Create(ctx_, std::string("lanes.") + name, fs_->fn);
    auto* join = llvm::BasicBlock::Create(ctx_, std::string("lanes.") + name + ".end", fs_->fn);
    b_.CreateCondBr(any_lane(mask), run, join);  // an arm no lane takes is skipped
    b_.SetInsertPoint(run);
    lanes_.mask = mask;
    stmt(body);
    lanes_.mask = outer;
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  };
  llvm::Value* then_mask = narrowed_mask(cond);
  llvm::Value* else_mask = s.else_body ? narrowed_mask(b_.CreateNot(cond)) : nullptr;
  arm(s.then_body, then_mask, "then");
  if (s.else_body) arm(s.else_body, else_mask, "else");
}

void Emitter::lane_for(const ir::ForStmt& f, llvm::Value* begin, llvm::Value* end) {
  begin = splat(begin);
  end = splat(end);
  llvm::Value* const outer = lanes_.mask;
  llvm::Value* lo = begin;
  llvm::Value* hi = end;
  if (outer) {  // lanes that do not run here do not widen the range
    lo = b_.CreateSelect(outer, begin, llvm::ConstantInt::get(begin->getType(), std::numeric_limits<std::int64_t>::max()));
    hi = b_.CreateSelect(outer, end, llvm::ConstantInt::get(end->getType(), std::numeric_limits<std::int64_t>::min()));
  }
  lo = b_.CreateIntMinReduce(lo, true);
  hi = b_.CreateIntMaxReduce(hi, true);
  const bool scalar = fs_->scalar_loop;
  fs_->scalar_loop = false;
  loop(lo, hi, f.index->name, nullptr, [&](llvm::Value* j) {
    fs_->scalars[f.index.get()] = ScalarValue{j, false};
    llvm::Value* at = splat(j);
    lanes_.mask = narrowed_mask(b_.CreateAnd(b_.CreateICmpSGE(at, begin), b_.CreateICmpSLT(at, end)));
    stmt(f.body);
    lanes_.mask = outer;
  });
  fs_->scalar_loop = scalar;
}

void Emitter::lane_assign(const ScalarValue& slot, const ir::VarNode* var, llvm::Value* value) {
  llvm::Type* type = llvm::cast<llvm::AllocaInst>(slot.value)->getAllocatedType();
  if (!type->isVectorTy()) {
    // ir::plan_lanes makes a variable assigned a varying value, or assigned under a mask, varying.
    if (value->getType()->isVectorTy() || lanes_.mask) internal_error("lanes differ in uniform variable " + var->name);
    b_.CreateStore(value, slot.value);
    return;
  }
  value = splat(value);
  if (lanes_.mask && lanes_.mask != lanes_.tail) value = b_.CreateSelect(lanes_.mask, value, b_.CreateLoad(type, slot.value));
  b_.CreateStore(value, slot.value);
}

}  // namespace kiln::codegen::cpu::detail
