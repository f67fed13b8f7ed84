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
  // -0.0 rather than ir::identity_of's +0.0: it is the exact additive identity (-0 + -0 == -0), so an empty
  // block, or the fold of a sum whose terms are all -0, leaves the value bit-for-bit unchanged.
  if (op == ReduceOp::Add && is_float(t)) return llvm::ConstantFP::getNegativeZero(value_type(t));
  return constant(ir::identity_of(op, t)->as<ir::ConstExpr>());
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
  const size_t rank = p.indices.size();
  std::vector<llvm::Value*> begins, ends;
  for (size_t d = 0; d < rank; ++d) {
    begins.push_back(expr(p.begins[d]));
    ends.push_back(expr(p.ends[d]));
  }
  if (has_order_dependent_reduction(p)) return parfor_in_order(p, begins, ends);

  // ---- the context: each field is stored here and bound to a variable of the chunk by `bind` ----
  FunctionState chunk_state;
  FunctionState& cs = chunk_state;
  struct Field {
    llvm::Value* value;
    std::function<void(llvm::Value*)> bind;
  };
  std::vector<Field> fields;
  auto capture = [&](llvm::Value* v, std::function<void(llvm::Value*)> bind) {
    if (llvm::isa<llvm::Constant>(v)) bind(v);  // constants (unit strides, ...) need no field
    else fields.push_back({v, std::move(bind)});
  };
  capture(fs_->status, [&cs](llvm::Value* x) { cs.status = x; });
  std::vector<llvm::Value*> inner_begin(rank), inner_end(rank);
  for (size_t d = 1; d < rank; ++d) {
    capture(begins[d], [&inner_begin, d](llvm::Value* x) { inner_begin[d] = x; });
    capture(ends[d], [&inner_end, d](llvm::Value* x) { inner_end[d] = x; });
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
  std::vector<llvm::Type*> field_types;
  for (const auto& f : fields) field_types.push_back(f.value->getType());
  llvm::StructType* ctx_type = llvm::StructType::get(ctx_, field_types);
  llvm::AllocaInst* ctx = entry_alloca(ctx_type, "parfor.ctx");
  for (size_t i = 0; i < fields.size(); ++i)
    b_.CreateStore(fields[i].value, b_.CreateStructGEP(ctx_type, ctx, static_cast<unsigned>(i)));

  std::vector<llvm::Type*> partial_types;
  for (const auto& r : p.reductions) partial_types.push_back(value_type(r.var->type.elem));
  llvm::StructType* partial_type = llvm::StructType::get(ctx_, partial_types);

  // ---- the chunk function ----
  llvm::Type* ptr = b_.getPtrTy();
  auto* chunk_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt64Ty(), b_.getInt64Ty(), ptr}, false);
  auto* chunk = llvm::Function::Create(chunk_type, llvm::GlobalValue::InternalLinkage,
                                       fn_.name + ".parfor" + std::to_string(chunk_count_++), mod_);
  chunk->setDoesNotThrow();
  for (unsigned a : {0u, 3u}) {
    chunk->addParamAttr(a, llvm::Attribute::NoAlias);
    chunk->addParamAttr(a, llvm::Attribute::NoCapture);
  }
  {
    llvm::IRBuilderBase::InsertPointGuard ip(b_);
    FunctionState* outer = fs_;
    begin_function(chunk, cs);
    llvm::Argument* ctx_arg = chunk->getArg(0);
    llvm::Argument* partial = chunk->getArg(3);
    llvm::IRBuilder<> eb(cs.entry);
    for (size_t i = 0; i < fields.size(); ++i)
      fields[i].bind(eb.CreateLoad(field_types[i], eb.CreateStructGEP(ctx_type, ctx_arg, static_cast<unsigned>(i))));
    std::vector<llvm::AllocaInst*> accumulators;
    for (const auto& r : p.reductions) {
      const DType t = r.var->type.elem;
      llvm::AllocaInst* acc = entry_alloca(value_type(t), r.var->name + ".acc");
      eb.CreateStore(reduction_identity(r.op, t), acc);
      cs.scalars[r.var.get()] = ScalarValue{acc, true};
      cs.reductions[r.var.get()] = r.op;
      accumulators.push_back(acc);
    }
    std::function<void(size_t)> nest = [&](size_t d) {
      llvm::Value* lo = d == 0 ? chunk->getArg(1) : inner_begin[d];
      llvm::Value* hi = d == 0 ? chunk->getArg(2) : inner_end[d];
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
      b_.CreateStore(b_.CreateLoad(partial_types[k], accumulators[k]),
                     b_.CreateStructGEP(partial_type, partial, static_cast<unsigned>(k)));
    finish_function(nullptr, [&] { b_.CreateRetVoid(); }, [&] { b_.CreateRetVoid(); });
    fs_ = outer;
  }

  // ---- the call: grain = iterations of the outer dimension worth a thread ----
  llvm::Value* work = i64(std::min<std::int64_t>(kGrainWork, 1 + static_cast<std::int64_t>(ir::node_count(p.body))));
  for (size_t d = 1; d < rank; ++d) {
    llvm::Value* extent = b_.CreateSub(ends[d], begins[d]);
    extent = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, extent, i64(1));
    extent = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, extent, i64(kGrainWork));
    work = b_.CreateMul(work, extent);  // at most kGrainWork^4 < 2^63
  }
  llvm::Value* grain = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSDiv(i64(kGrainWork), work), i64(1));

  if (p.reductions.empty()) {
    b_.CreateCall(rt_parfor(), {chunk, ctx, begins[0], ends[0], grain});
    if (allocates(p.body)) fail_if(b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), fs_->status), b_.getInt32(0)));
    return;
  }
  auto* partials_type = llvm::ArrayType::get(partial_type, static_cast<std::uint64_t>(kiln_rt_max_reduce_blocks));
  llvm::AllocaInst* partials = entry_alloca(partials_type, "partials");
  const auto partial_size = static_cast<std::int64_t>(mod_.getDataLayout().getTypeAllocSize(partial_type));
  llvm::Value* blocks = b_.CreateCall(rt_reduce_blocks(), {b_.CreateSub(ends[0], begins[0])}, "blocks");
  b_.CreateCall(rt_parfor_reduce(), {chunk, ctx, begins[0], ends[0], blocks, partials, i64(partial_size), grain});
  if (allocates(p.body)) fail_if(b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), fs_->status), b_.getInt32(0)));

  // Fold in block order, from the identity, with no reassociation: the same sum for any thread count.
  std::vector<llvm::AllocaInst*> totals;
  for (const auto& r : p.reductions) {
    totals.push_back(entry_alloca(value_type(r.var->type.elem), r.var->name + ".total"));
    b_.CreateStore(reduction_identity(r.op, r.var->type.elem), totals.back());
  }
  {
    llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
    b_.setFastMathFlags(llvm::FastMathFlags());
    loop(i64(0), blocks, "fold", nullptr, [&](llvm::Value* block) {
      for (size_t k = 0; k < totals.size(); ++k) {
        const DType t = p.reductions[k].var->type.elem;
        llvm::Value* part = b_.CreateLoad(partial_types[k], b_.CreateInBoundsGEP(partials_type, partials,
                                                                                 {i64(0), block, b_.getInt32(static_cast<unsigned>(k))}));
        llvm::Value* total = b_.CreateLoad(partial_types[k], totals[k]);
        b_.CreateStore(combine(p.reductions[k].op, t, total, part), totals[k]);
      }
    });
    for (size_t k = 0; k < totals.size(); ++k) {
      const ir::Reduction& r = p.reductions[k];
      ScalarValue& var = scalar(r.var.get());
      if (!var.in_slot) internal_error("reduction variable " + r.var->name + " is not assignable here");
      llvm::Value* total = b_.CreateLoad(partial_types[k], totals[k]);
      b_.CreateStore(combine(r.op, r.var->type.elem, read(r.var.get()), total), var.value);
    }
  }
}

}  // namespace kiln::codegen::cpu::detail
