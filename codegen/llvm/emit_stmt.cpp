// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Statements: locals live in entry-block allocas (mem2reg makes them SSA), loops have a phi induction
// variable, allocations go through kiln_rt_alloc into per-site slots that every exit frees.
#include "codegen/llvm/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/printer.hpp"
#include "ir/reductions.hpp"
#include "ir/verifier.hpp"

namespace kiln::codegen::cpu::detail {

void Emitter::stmt(const ir::Stmt& s) {
  switch (s->kind) {
    case ir::StmtKind::Block:
      for (const auto& x : s->as<ir::BlockStmt>().stmts) stmt(x);
      return;
    case ir::StmtKind::Let: {
      const auto& l = s->as<ir::LetStmt>();
      llvm::Value* init = expr(l.init);
      // In lane mode a variable that differs between lanes lives in a vector slot.
      if (lanes_.width && lanes_.plan->varying.count(l.var.get())) init = splat(init);
      llvm::AllocaInst* slot = entry_alloca(init->getType(), l.var->name);
      b_.CreateStore(init, slot);
      fs_->scalars[l.var.get()] = ScalarValue{slot, true};
      return;
    }
    case ir::StmtKind::Assign: return assign(s->as<ir::AssignStmt>());
    case ir::StmtKind::Store: return store(s->as<ir::StoreStmt>());
    case ir::StmtKind::Atomic: return atomic(s->as<ir::AtomicStmt>());
    case ir::StmtKind::For: {
      const auto& f = s->as<ir::ForStmt>();
      llvm::Value* begin = expr(f.begin);
      llvm::Value* end = expr(f.end);
      if (begin->getType()->isVectorTy() || end->getType()->isVectorTy()) return lane_for(f, begin, end);
      // A loop of its own: whether it vectorizes does not depend on the enclosing parfor's updates.
      const bool scalar = fs_->scalar_loop;
      fs_->scalar_loop = false;
      loop(
          begin, end, f.index->name, nullptr,
          [&](llvm::Value* i) {
            fs_->scalars[f.index.get()] = ScalarValue{i, false};
            stmt(f.body);
          },
          // The few iterations left after a parfor's groups of lanes (fewer than a group): unrolled, their
          // loops only multiplied the code to compile (covariance's product tiles compiled in 355.7 M instructions
          // with LLVM's runtime unrolling, 252.3 M without; callgrind). The lanes' own loops stay unrolled: without
          // it covariance's tiles ran 0.98x the reference instead of 0.71x.
          false, fs_->lanes_body || too_short_to_vectorize(f.begin, f.end));
      fs_->scalar_loop = scalar;
      return;
    }
    case ir::StmtKind::Parfor: return parfor(s->as<ir::ParforStmt>());
    case ir::StmtKind::If: return if_stmt(s->as<ir::IfStmt>());
    case ir::StmtKind::Allocate: return allocate(s->as<ir::AllocateStmt>());
    case ir::StmtKind::Check: return check(s->as<ir::CheckStmt>());
    case ir::StmtKind::Bind: return bind(s->as<ir::BindStmt>());
    case ir::StmtKind::Sort: return sort(s->as<ir::SortStmt>());
    case ir::StmtKind::Scan:
      internal_error("a scan statement reached the CPU backend: only a trace for a lockstep target makes one (ir/scan.hpp)");
    case ir::StmtKind::Launch:
      internal_error("a launch reached the CPU backend: the offload pass runs for device targets only");
    case ir::StmtKind::Stencil:
      internal_error("stencils must be lowered to parfors (lower_stencils) before code generation");
    case ir::StmtKind::Map:
    case ir::StmtKind::Reduce:
    case ir::StmtKind::ReduceAxis:
      internal_error("array-level statements must be lowered to parfors (lower_array_ops) before code generation");
  }
  internal_error("unknown statement kind");
}

void Emitter::assign(const ir::AssignStmt& a) {
  auto red = fs_->reductions.find(a.var.get());
  if (red != fs_->reductions.end() && !ir::is_arg_reduction(red->second)) {
    // Partials are combined with the reduction's operator: any other update would be silently wrong.
    if (!ir::is_reduction_update(a, red->second))
      internal_error("reduction variable " + a.var->name + " is updated as `" + ir::to_string(a.value) + "`, not as a " +
                     std::string(ir::name_of(red->second)) + " reduction");
    return reduction_update(a, red->second);
  }
  ScalarValue& v = scalar(a.var.get());
  if (!v.in_slot) internal_error("assignment to read-only " + a.var->name);
  if (lanes_.width) return lane_assign(v, a.var.get(), expr(a.value));
  b_.CreateStore(expr(a.value), v.value);
}

// `v = v op e` on a chunk's private accumulator. Only this operation gets `reassoc` (beyond fast_math): it
// is what allows the loop vectorizer to keep several partial accumulators.
void Emitter::reduction_update(const ir::AssignStmt& a, ReduceOp) {
  const auto& bin = a.value->as<ir::BinaryExpr>();
  const auto* left = ir::dyn<ir::VarRefExpr>(bin.a);
  const bool var_on_left = left && left->var == a.var && !ir::uses(bin.b, a.var.get());
  const ir::Expr& operand = var_on_left ? bin.b : bin.a;
  llvm::Value* e = expr(operand);
  llvm::Value* acc = read(a.var.get());
  match_lanes({&e, &acc});  // lane mode: the accumulator holds a partial per lane (emit_lanes.cpp)
  llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
  llvm::FastMathFlags fmf = base_fmf_;
  fmf.setAllowReassoc();
  b_.setFastMathFlags(fmf);
  llvm::Value* updated = var_on_left ? binary(bin.op, bin.type, acc, e) : binary(bin.op, bin.type, e, acc);
  if (lanes_.mask) updated = b_.CreateSelect(lanes_.mask, updated, acc);
  b_.CreateStore(updated, scalar(a.var.get()).value);
}

void Emitter::store(const ir::StoreStmt& s) {
  if (auto atomic = fs_->atomic_arrays.find(s.array.get()); atomic != fs_->atomic_arrays.end()) {
    if (!ir::is_array_update(s, {s.array, atomic->second}))
      internal_error("array reduction " + s.array->name + " is stored to as `" + ir::to_string(s.value) + "`");
    return atomic_update(s, atomic->second);
  }
  if (lanes_.width) return lane_store(s);
  const DType t = s.array->type.elem;
  llvm::Value* v = to_memory(expr(s.value), t);  // the value before the address, as the interpreter does
  llvm::Value* addr = element_address(s.array, s.indices);
  tag_access(b_.CreateAlignedStore(v, addr, llvm::Align(size_of(t))), s.array.get());
}

void Emitter::if_stmt(const ir::IfStmt& s) {
  if (lanes_.width && ir::varies(*lanes_.plan, s.cond)) return lane_if(s);
  llvm::Value* cond = expr(s.cond);
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", fs_->fn);
  auto* join = llvm::BasicBlock::Create(ctx_, "if.end", fs_->fn);
  auto* else_bb = s.else_body ? llvm::BasicBlock::Create(ctx_, "if.else", fs_->fn) : join;
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  stmt(s.then_body);
  b_.CreateBr(join);
  if (s.else_body) {
    b_.SetInsertPoint(else_bb);
    stmt(s.else_body);
    b_.CreateBr(join);
  }
  b_.SetInsertPoint(join);
}

void Emitter::allocate(const ir::AllocateStmt& a) {
  const int rank = a.array->type.rank;
  std::vector<llvm::Value*> extents;
  for (const auto& e : a.shape) extents.push_back(expr(e));

  auto [it, fresh] = fs_->slot_of.emplace(a.array.get(), nullptr);
  if (fresh) it->second = allocation_slot(a.array->name + ".slot");
  llvm::AllocaInst* slot = it->second;
  // Inside a loop this site runs again once the previous array's scope has ended: free that array now, so
  // memory does not grow with the trip count.
  if (fs_->loop_depth > 0) b_.CreateCall(rt_free(), {b_.CreateLoad(b_.getPtrTy(), slot)});

  if (!fs_->shape_scratch)
    fs_->shape_scratch = entry_alloca(llvm::ArrayType::get(b_.getInt64Ty(), kMaxRank), "alloc.shape");
  for (int k = 0; k < rank; ++k)
    b_.CreateStore(extents[k], b_.CreateConstInBoundsGEP2_32(fs_->shape_scratch->getAllocatedType(), fs_->shape_scratch, 0, k));
  llvm::Value* data = b_.CreateCall(rt_alloc(), {fs_->status, fs_->shape_scratch, b_.getInt32(rank),
                                                 i64(size_of(a.array->type.elem)),
                                                 b_.CreateGlobalString(a.array->name, "alloc.name")},
                                    a.array->name);
  b_.CreateStore(data, slot);  // null on failure, which the failure path frees harmlessly
  fail_if(b_.CreateIsNull(data));

  ArrayValue v;
  v.data = data;
  llvm::Value* stride = i64(1);
  for (int k = rank; k-- > 0;) {
    v.shape[k] = extents[k];
    v.stride[k] = stride;
    if (k > 0) stride = b_.CreateMul(stride, extents[k]);
  }
  fs_->arrays[a.array.get()] = v;
}

void Emitter::bind(const ir::BindStmt& s) {
  const ArrayValue source = array(s.source.get());  // a copy: array() may rehash fs_->arrays
  const ir::Type& type = s.target->type;
  auto [it, fresh] = fs_->bindings.emplace(s.target.get(), BindingSlots{});
  BindingSlots& slots = it->second;
  if (fresh) {
    const std::string name = s.target->name;
    slots.data = entry_alloca(b_.getPtrTy(), name + ".data");
    for (int k = 0; k < type.rank; ++k) {
      slots.shape[k] = entry_alloca(b_.getInt64Ty(), name + ".shape");
      if (!(type.unit_stride && k + 1 == type.rank)) slots.stride[k] = entry_alloca(b_.getInt64Ty(), name + ".stride");
    }
  }
  if (!source.data) internal_error("array " + s.source->name + " has no data pointer here");
  b_.CreateStore(source.data, slots.data);
  for (int k = 0; k < type.rank; ++k) {
    if (!source.shape[k] || !source.stride[k]) internal_error("the descriptor of " + s.source->name + " is incomplete here");
    b_.CreateStore(source.shape[k], slots.shape[k]);
    if (slots.stride[k]) b_.CreateStore(source.stride[k], slots.stride[k]);
  }
  fs_->arrays[s.target.get()] = source;
}

llvm::AllocaInst* Emitter::allocation_slot(const llvm::Twine& name) {
  llvm::AllocaInst* slot = entry_alloca(b_.getPtrTy(), name);
  fs_->alloc_slots.push_back(slot);
  return slot;
}

}  // namespace kiln::codegen::cpu::detail
