// Parfors: the body is outlined into `void chunk(ptr ctx, i64 lo, i64 hi, ptr partial)` running iterations
// [lo, hi) of the outermost dimension (inner dimensions in full), and the caller hands it to the runtime.
// Free variables travel by value in a context struct. Reductions accumulate privately per block and the
// caller folds the block partials in block order, so results do not depend on the thread count.
#include <array>
#include <unordered_set>

#include "codegen/llvm/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/visitor.hpp"
#include "runtime/parallel.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

// Roughly how many expression evaluations a thread should get before a parfor forks: below that, waking
// the team costs more than it saves.
constexpr std::int64_t kGrainWork = 32768;

/// The extents a body reads through DimExpr: only those go into the context.
class DimUses : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::VarNode*, std::array<bool, kMaxRank>> used;
  bool uses(const ir::VarNode* v, int axis) const {
    auto it = used.find(v);
    return it != used.end() && it->second[static_cast<size_t>(axis)];
  }

 protected:
  void visit(const ir::DimExpr& d) override { used[d.array.get()][static_cast<size_t>(d.axis)] = true; }
};

class HasAllocate : public ir::IRVisitor {
 public:
  bool found = false;

 protected:
  void visit(const ir::AllocateStmt&) override { found = true; }
};

bool allocates(const ir::Stmt& s) {
  HasAllocate h;
  h.walk(s);
  return h.found;
}

/// True if some reduction of `p` cannot be split into independently accumulated blocks: an integer product
/// updated by division (`v = v / e`), where truncation makes (v / a) / b depend on the grouping with the
/// other factors. Such a parfor runs in order instead, which is exact.
bool has_order_dependent_reduction(const ir::ParforStmt& p) {
  struct Finder : ir::IRVisitor {
    const ir::VarNode* var = nullptr;
    bool found = false;
    void visit(const ir::AssignStmt& a) override {
      if (const auto* b = ir::dyn<ir::BinaryExpr>(a.value); a.var.get() == var && b && b->op == BinaryOp::Div) found = true;
      ir::IRVisitor::visit(a);
    }
  };
  for (const auto& r : p.reductions) {
    if (r.op != ReduceOp::Mul || !is_int(r.var->type.elem)) continue;
    Finder f;
    f.var = r.var.get();
    f.walk(p.body);
    if (f.found) return true;
  }
  return false;
}

}  // namespace

llvm::Value* Emitter::reduction_identity(ReduceOp op, DType t) {
  return constant(ir::identity_of(op, t)->as<ir::ConstExpr>());  // -0.0 for float sums: exact identity
}

llvm::Value* Emitter::combine(ReduceOp op, DType t, llvm::Value* a, llvm::Value* b) {
  return binary(ir::combiner(op), t, a, b);
}

void Emitter::parfor_in_order(const ir::ParforStmt& p, const std::vector<llvm::Value*>& begins,
                              const std::vector<llvm::Value*>& ends) {
  // Row-major nested loops in the current function; the reduction variables are updated in place.
  std::function<void(size_t)> nest = [&](size_t d) {
    loop(begins[d], ends[d], p.indices[d]->name, nullptr, [&](llvm::Value* i) {
      fs_->scalars[p.indices[d].get()] = ScalarValue{i, false};
      if (d + 1 < p.indices.size()) nest(d + 1);
      else stmt(p.body);
    });
  };
  nest(0);
}

void Emitter::parfor(const ir::ParforStmt& p) {
  Outline o;
  for (size_t d = 0; d < p.indices.size(); ++d) {
    o.begins.push_back(expr(p.begins[d]));
    o.ends.push_back(expr(p.ends[d]));
  }
  if (has_order_dependent_reduction(p)) return parfor_in_order(p, o.begins, o.ends);

  capture_context(p, o);
  std::vector<llvm::Type*> field_types;
  for (const auto& f : o.fields) field_types.push_back(f.value->getType());
  o.ctx_type = llvm::StructType::get(ctx_, field_types);
  for (const auto& r : p.reductions) o.partial_types.push_back(value_type(r.var->type.elem));
  o.partial_type = llvm::StructType::get(ctx_, o.partial_types);
  llvm::Function* chunk = emit_chunk(p, o);

  // Lifetime markers let the code generator share stack space between the parfors of a kernel.
  const llvm::DataLayout& dl = mod_.getDataLayout();
  llvm::AllocaInst* ctx = entry_alloca(o.ctx_type, "parfor.ctx");
  llvm::ConstantInt* ctx_size = b_.getInt64(dl.getTypeAllocSize(o.ctx_type));
  b_.CreateLifetimeStart(ctx, ctx_size);
  for (size_t i = 0; i < o.fields.size(); ++i)
    b_.CreateStore(o.fields[i].value, b_.CreateStructGEP(o.ctx_type, ctx, static_cast<unsigned>(i)));
  llvm::Value* grain = parfor_grain(p, o);
  llvm::Value* b0 = o.begins[0];
  llvm::Value* e0 = o.ends[0];
  auto check_status = [&] {
    if (allocates(p.body)) fail_if(b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), fs_->status), b_.getInt32(0)));
  };

  if (p.reductions.empty()) {
    b_.CreateCall(rt_parfor(), {chunk, ctx, b0, e0, grain});
    b_.CreateLifetimeEnd(ctx, ctx_size);
    check_status();
    return;
  }
  auto* partials_type = llvm::ArrayType::get(o.partial_type, static_cast<std::uint64_t>(kiln_rt_max_reduce_blocks));
  llvm::AllocaInst* partials = entry_alloca(partials_type, "partials");
  llvm::ConstantInt* partials_size = b_.getInt64(dl.getTypeAllocSize(partials_type));
  const auto partial_size = static_cast<std::int64_t>(dl.getTypeAllocSize(o.partial_type));
  b_.CreateLifetimeStart(partials, partials_size);
  llvm::Value* blocks = b_.CreateCall(rt_reduce_blocks(), {b_.CreateSub(e0, b0)}, "blocks");
  b_.CreateCall(rt_parfor_reduce(), {chunk, ctx, b0, e0, blocks, partials, i64(partial_size), grain});
  b_.CreateLifetimeEnd(ctx, ctx_size);
  check_status();  // before the fold: a failed chunk leaves its partial unwritten
  fold_partials(p, o, blocks, partials);
  b_.CreateLifetimeEnd(partials, partials_size);
}

void Emitter::capture_context(const ir::ParforStmt& p, Outline& o) {
  FunctionState& cs = o.chunk;
  auto capture = [&](llvm::Value* v, std::function<void(llvm::Value*)> bind) {
    if (llvm::isa<llvm::Constant>(v)) bind(v);  // constants (unit strides, literal bounds) need no field
    else o.fields.push_back({v, std::move(bind)});
  };
  capture(fs_->status, [&cs](llvm::Value* x) { cs.status = x; });
  const size_t rank = p.indices.size();
  o.inner_begin.assign(rank, nullptr);
  o.inner_end.assign(rank, nullptr);
  for (size_t d = 1; d < rank; ++d) {
    capture(o.begins[d], [&o, d](llvm::Value* x) { o.inner_begin[d] = x; });
    capture(o.ends[d], [&o, d](llvm::Value* x) { o.inner_end[d] = x; });
  }
  // The body's free variables, less what the chunk defines itself: the indices and the accumulators.
  std::unordered_set<const ir::VarNode*> chunk_defined;
  for (const auto& r : p.reductions) chunk_defined.insert(r.var.get());
  for (const auto& i : p.indices) chunk_defined.insert(i.get());
  DimUses dims;
  dims.walk(p.body);
  for (const ir::Var& v : ir::free_vars(p.body)) {
    if (chunk_defined.count(v.get())) continue;
    if (v->type.is_array()) {
      const ArrayValue& a = array(v.get());
      ArrayValue* dst = &cs.arrays[v.get()];  // unordered_map nodes do not move
      capture(a.data, [dst](llvm::Value* x) { dst->data = x; });
      for (int k = 0; k < v->type.rank; ++k) {
        if (dims.uses(v.get(), k)) capture(a.shape[k], [dst, k](llvm::Value* x) { dst->shape[k] = x; });
        capture(a.stride[k], [dst, k](llvm::Value* x) { dst->stride[k] = x; });
      }
    } else {
      const ir::VarNode* key = v.get();
      capture(read(key), [&cs, key](llvm::Value* x) { cs.scalars[key] = ScalarValue{x, false}; });
    }
  }
}

llvm::Function* Emitter::emit_chunk(const ir::ParforStmt& p, Outline& o) {
  llvm::Type* ptr = b_.getPtrTy();
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt64Ty(), b_.getInt64Ty(), ptr}, false);
  auto* chunk = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                       fn_.name + ".parfor" + std::to_string(chunk_count_++), mod_);
  chunk->setDoesNotThrow();
  for (unsigned a : {0u, 3u}) {
    chunk->addParamAttr(a, llvm::Attribute::NoAlias);
    chunk->addParamAttr(a, llvm::Attribute::NoCapture);
  }
  llvm::IRBuilderBase::InsertPointGuard ip(b_);
  FunctionState* outer = fs_;
  FunctionState& cs = o.chunk;
  begin_function(chunk, cs);
  llvm::Argument* ctx = chunk->getArg(0);
  llvm::Argument* partial = chunk->getArg(3);

  // The context is read once, at entry, into SSA values.
  llvm::IRBuilder<> eb(cs.entry);
  for (size_t i = 0; i < o.fields.size(); ++i)
    o.fields[i].bind(eb.CreateLoad(o.fields[i].value->getType(), eb.CreateStructGEP(o.ctx_type, ctx, static_cast<unsigned>(i))));
  std::vector<llvm::AllocaInst*> accumulators;
  for (const auto& r : p.reductions) {
    const DType t = r.var->type.elem;
    llvm::AllocaInst* acc = entry_alloca(value_type(t), r.var->name + ".acc");
    eb.CreateStore(reduction_identity(r.op, t), acc);
    cs.scalars[r.var.get()] = ScalarValue{acc, true};
    cs.reductions[r.var.get()] = r.op;
    accumulators.push_back(acc);
  }

  const size_t rank = p.indices.size();
  std::function<void(size_t)> nest = [&](size_t d) {
    llvm::Value* lo = d == 0 ? chunk->getArg(1) : o.inner_begin[d];
    llvm::Value* hi = d == 0 ? chunk->getArg(2) : o.inner_end[d];
    const bool innermost = d + 1 == rank;
    llvm::MDNode* group = innermost ? llvm::MDNode::getDistinct(ctx_, {}) : nullptr;
    loop(lo, hi, p.indices[d]->name, group, [&](llvm::Value* i) {
      cs.scalars[p.indices[d].get()] = ScalarValue{i, false};
      if (!innermost) return nest(d + 1);
      cs.access_group = group;
      stmt(p.body);
      cs.access_group = nullptr;
    });
  };
  nest(0);

  for (size_t k = 0; k < accumulators.size(); ++k)
    b_.CreateStore(b_.CreateLoad(o.partial_types[k], accumulators[k]),
                   b_.CreateStructGEP(o.partial_type, partial, static_cast<unsigned>(k)));
  finish_function(nullptr, [&] { b_.CreateRetVoid(); }, [&] { b_.CreateRetVoid(); });
  fs_ = outer;
  return chunk;
}

// The fewest outer iterations worth a thread: kGrainWork divided by the work of one outer iteration (the
// body's size times the inner extents).
llvm::Value* Emitter::parfor_grain(const ir::ParforStmt& p, const Outline& o) {
  llvm::Value* work = i64(std::min<std::int64_t>(kGrainWork, 1 + static_cast<std::int64_t>(ir::node_count(p.body))));
  for (size_t d = 1; d < p.indices.size(); ++d) {
    llvm::Value* extent = b_.CreateSub(o.ends[d], o.begins[d]);
    extent = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, extent, i64(1));
    extent = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, extent, i64(kGrainWork));
    work = b_.CreateMul(work, extent);  // at most kGrainWork^4 < 2^63
  }
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSDiv(i64(kGrainWork), work), i64(1));
}

// Folds the block partials in block order, from the identity, without reassociation, then combines the
// total into each variable: the same result for any thread count.
void Emitter::fold_partials(const ir::ParforStmt& p, const Outline& o, llvm::Value* blocks, llvm::AllocaInst* partials) {
  std::vector<llvm::AllocaInst*> totals;
  for (const auto& r : p.reductions) {
    totals.push_back(entry_alloca(value_type(r.var->type.elem), r.var->name + ".total"));
    b_.CreateStore(reduction_identity(r.op, r.var->type.elem), totals.back());
  }
  llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
  b_.setFastMathFlags(llvm::FastMathFlags());
  llvm::Type* partials_type = partials->getAllocatedType();
  loop(i64(0), blocks, "fold", nullptr, [&](llvm::Value* block) {
    for (size_t k = 0; k < totals.size(); ++k) {
      llvm::Value* addr = b_.CreateInBoundsGEP(partials_type, partials, {i64(0), block, b_.getInt32(static_cast<unsigned>(k))});
      llvm::Value* part = b_.CreateLoad(o.partial_types[k], addr);
      llvm::Value* total = b_.CreateLoad(o.partial_types[k], totals[k]);
      b_.CreateStore(combine(p.reductions[k].op, p.reductions[k].var->type.elem, total, part), totals[k]);
    }
  });
  for (size_t k = 0; k < totals.size(); ++k) {
    const ir::Reduction& r = p.reductions[k];
    ScalarValue& var = scalar(r.var.get());
    if (!var.in_slot) internal_error("reduction variable " + r.var->name + " is not assignable here");
    llvm::Value* total = b_.CreateLoad(o.partial_types[k], totals[k]);
    b_.CreateStore(combine(r.op, r.var->type.elem, read(r.var.get()), total), var.value);
  }
}

}  // namespace kiln::codegen::cpu::detail
