// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parfors: the body is outlined into `void chunk(ptr ctx, i64 lo, i64 hi, ptr partial)` running iterations
// [lo, hi) of the outermost dimension (inner dimensions in full), and the caller hands it to the runtime.
// Free variables travel by value in a context struct. Scalar reductions accumulate privately per block and
// the caller folds the block partials in block order, so results do not depend on the thread count. A
// parfor with array reductions runs as numbered pieces instead (kiln_piece_fn), which the array reductions
// use to find their private copies (emit_array_reductions.cpp).
#include <algorithm>
#include <array>
#include <optional>
#include <unordered_set>

#include "codegen/llvm/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/reductions.hpp"
#include "ir/substitute.hpp"
#include "ir/uneven_work.hpp"
#include "ir/visitor.hpp"
#include "runtime/parallel.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

/// The extents the chunk needs: those the body reads through DimExpr, and every extent of an array that a
/// parfor inside the body reduces (its private copies are shaped like it).
class DimUses : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::VarNode*, std::array<bool, kMaxRank>> used;
  bool uses(const ir::VarNode* v, int axis) const {
    auto it = used.find(v);
    return it != used.end() && it->second[static_cast<size_t>(axis)];
  }

 protected:
  void visit(const ir::DimExpr& d) override { used[d.array.get()][static_cast<size_t>(d.axis)] = true; }
  // A binding declared in the body copies its source's whole descriptor.
  void visit(const ir::BindStmt& b) override {
    for (int k = 0; k < b.source->type.rank; ++k) used[b.source.get()][static_cast<size_t>(k)] = true;
  }
  void visit(const ir::ParforStmt& p) override {
    for (const auto& r : p.array_reductions)
      for (int k = 0; k < r.array->type.rank; ++k) used[r.array.get()][static_cast<size_t>(k)] = true;
    ir::IRVisitor::visit(p);
  }
};

/// True if `body` stores to one of the arrays `reduced` outside nested loops: the innermost parfor loop then
/// updates memory at data-dependent indices and cannot vectorize.
bool updates_arrays_directly(const ir::Stmt& body, const std::unordered_set<const ir::VarNode*>& reduced) {
  struct Finder : ir::IRVisitor {
    const std::unordered_set<const ir::VarNode*>& reduced;
    bool found = false;
    explicit Finder(const std::unordered_set<const ir::VarNode*>& r) : reduced(r) {}
    void visit(const ir::StoreStmt& s) override { found |= reduced.count(s.array.get()) > 0; }
    void visit(const ir::ForStmt&) override {}
    void visit(const ir::ParforStmt&) override {}
  } f(reduced);
  f.walk(body);
  return f.found;
}

/// The condition that folds a later block's partial `x` into the running (var, index) of ArgMin/ArgMax r:
/// the body's own update condition with x := `partial`. Updates whose conditions differ (say one with the
/// NaN clause, one without) are or-ed together, so any way a sequential run could take the partial counts.
ir::Expr arg_fold_condition(const ir::Stmt& body, const ir::Reduction& r, const ir::Var& partial) {
  struct Finder : ir::IRVisitor {
    const ir::Reduction& r;
    std::vector<ir::ArgUpdate> updates;
    explicit Finder(const ir::Reduction& red) : r(red) {}
    void visit(const ir::IfStmt& s) override {
      if (auto u = ir::match_arg_update(s, r)) updates.push_back(*u);
      ir::IRVisitor::visit(s);
    }
  } finder(r);
  finder.walk(body);
  std::vector<ir::Expr> conds;
  for (const auto& u : finder.updates) {
    ir::Expr c = ir::substitute(u.value, ir::make_ref(partial), u.cond);
    if (std::none_of(conds.begin(), conds.end(), [&](const ir::Expr& e) { return ir::equal(e, c); })) conds.push_back(c);
  }
  ir::Expr cond;
  for (const auto& c : conds) cond = cond ? ir::make_binary(BinaryOp::Or, cond, c) : c;
  return cond;  // null when the body never updates r: every partial then has index -1
}

/// The size of one iteration of a parfor body, as ir::node_count, but an `if` counts its condition and its
/// larger arm only: one arm runs (a stencil's body holds its interior and its border versions).
std::int64_t iteration_work(const ir::Stmt& s) {
  if (const auto* b = ir::dyn<ir::BlockStmt>(s)) {
    std::int64_t n = 0;
    for (const auto& x : b->stmts) n += iteration_work(x);
    return n;
  }
  const auto* branch = ir::dyn<ir::IfStmt>(s);
  if (!branch) return static_cast<std::int64_t>(ir::node_count(s));
  const std::int64_t then_work = iteration_work(branch->then_body);
  const std::int64_t else_work = branch->else_body ? iteration_work(branch->else_body) : 0;
  return 1 + static_cast<std::int64_t>(ir::node_count(branch->cond)) + std::max(then_work, else_work);
}

/// True if an iteration of `s` updates a scalar that the next one reads: a reduction's accumulator.
/// Only such loops are left to LLVM's interleaving, whose several accumulators hide the add latency. A
/// loop without one is a stream of independent elements, where interleaving only adds vectors in flight:
/// on the 2-core znver4 VM with huge-page arrays, triad ran 1.04-1.15x the hand-written loop (GCC does not
/// interleave) with LLVM's 4 vectors per iteration, 1.10-1.16x with 2 and 1.00-1.03x with 1 (three runs each).
bool carries_scalars(const ir::Stmt& s) {
  const ir::VarSet assigned = ir::assigned_vars(s);
  for (const ir::Var& v : ir::free_vars(s))
    if (assigned.count(v.get())) return true;
  return false;
}

}  // namespace

void Emitter::innermost_loop(const ir::ParforStmt& p, llvm::Value* lo, llvm::Value* hi,
                             const std::function<void(llvm::Value*, llvm::MDNode*)>& iteration) {
  const bool in_lanes = fs_->lanes_body;
  if (const unsigned w = lanes_of(p)) {
    // A body that walks down rows runs several vectors of lanes at a time first (ir::kWalkingVectors), and the
    // rest in masked groups of one vector (tail_lanes), one copy of the body where one vector's groups and
    // the scalar loop below were two. Other bodies run one vector's groups, then the scalar loop, which
    // compiles in less than a masked group (syrk 78.2 M instructions, 104.5 M with a masked group; nbody 55.1,
    // 62.1), as do bodies with scalar reductions, which fold their lane partials after the groups and
    // continue in order.
    const ir::LanePlan plan = ir::plan_lanes(p);
    if (plan.walks) {
      lo = lanes_loop(p, plan, lo, hi, w * ir::kWalkingVectors);
      if (p.reductions.empty()) return tail_lanes(p, plan, lo, hi, w);
    }
    lo = lanes_loop(p, plan, lo, hi, w);
    fs_->lanes_body = true;  // the rest: fewer iterations than a vector of lanes
  }
  llvm::MDNode* group = llvm::MDNode::getDistinct(ctx_, {});
  loop(lo, hi, p.indices.back()->name, group, [&](llvm::Value* i) { iteration(i, group); }, !carries_scalars(p.body),
       too_short_to_vectorize(p.begins.back(), p.ends.back()));
  fs_->lanes_body = in_lanes;
}

unsigned Emitter::lanes_of(const ir::ParforStmt& p) const {
  if (!vector_bits_) return 0;
  // Arrays updated as reductions (private copies or atomics) keep their scalar updates.
  const ir::VarSet stored = ir::stored_arrays(p.body);
  const bool reduces_arrays = std::any_of(stored.begin(), stored.end(), [&](const ir::VarNode* a) {
    return fs_->reduced_arrays.count(a) || fs_->atomic_arrays.count(a);
  });
  if (reduces_arrays) return 0;
  const ir::LanePlan plan = ir::plan_lanes(p);
  return plan.eligible ? lane_count(plan) : 0;
}

llvm::Value* Emitter::reduction_identity(ReduceOp op, DType t) {
  return constant(ir::identity_of(op, t)->as<ir::ConstExpr>());  // -0.0 for float sums: exact identity
}

llvm::Value* Emitter::combine(ReduceOp op, DType t, llvm::Value* a, llvm::Value* b) {
  return binary(ir::combiner(op), t, a, b);
}

void Emitter::parfor(const ir::ParforStmt& p) {
  if (fs_->in_chunk && p.array_reductions.empty()) return inline_parfor(p);
  Outline o;
  for (size_t d = 0; d < p.indices.size(); ++d) {
    o.begins.push_back(expr(p.begins[d]));
    o.ends.push_back(expr(p.ends[d]));
  }
  llvm::Value* grain = parfor_grain(p, o);
  llvm::Value* b0 = o.begins[0];
  llvm::Value* e0 = o.ends[0];
  for (const auto& r : p.reductions) {
    o.partial_field.push_back(static_cast<unsigned>(o.partial_types.size()));
    o.partial_types.push_back(value_type(r.var->type.elem));
    if (ir::is_arg_reduction(r.op)) o.partial_types.push_back(b_.getInt64Ty());
  }
  o.partial_type = llvm::StructType::get(ctx_, o.partial_types);
  const bool reduces = !p.reductions.empty();
  llvm::Value* blocks = reduces ? b_.CreateCall(rt_reduce_blocks(), {b_.CreateSub(e0, b0)}, "blocks") : nullptr;

  // Array reductions an enclosing chunk already updates atomically stay atomic here; the others run as
  // numbered pieces, on private copies or with atomics as plan_array_reductions decides.
  std::vector<const ir::ArrayReduction*> fresh;
  for (const auto& r : p.array_reductions) {
    const bool listed = std::any_of(fresh.begin(), fresh.end(), [&](const ir::ArrayReduction* x) { return x->array == r.array; });
    if (!listed && !fs_->atomic_arrays.count(r.array.get())) fresh.push_back(&r);
  }
  const bool by_pieces = !fresh.empty();
  llvm::Value* pieces = nullptr;
  llvm::Value* atomic = nullptr;
  if (by_pieces) {
    pieces = b_.CreateCall(rt_parfor_width(), {b0, e0, grain}, "pieces");
    // A piece is a run of whole blocks, so there are never more pieces than blocks.
    if (reduces) pieces = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, pieces, blocks);
    atomic = plan_array_reductions(fresh, o, pieces);
  }

  capture_context(p, o);
  std::vector<llvm::Type*> field_types;
  for (const auto& f : o.fields) field_types.push_back(f.value->getType());
  o.ctx_type = llvm::StructType::get(ctx_, field_types);
  llvm::Value* chunk = emit_chunk(p, o, ChunkMode::Plain, by_pieces);
  if (by_pieces) chunk = b_.CreateSelect(atomic, emit_chunk(p, o, ChunkMode::Atomic, true), chunk, "chunk");

  // Lifetime markers let the code generator share stack space between the parfors of a kernel.
  const llvm::DataLayout& dl = mod_.getDataLayout();
  llvm::AllocaInst* ctx = entry_alloca(o.ctx_type, "parfor.ctx");
  llvm::ConstantInt* ctx_size = b_.getInt64(dl.getTypeAllocSize(o.ctx_type));
  b_.CreateLifetimeStart(ctx, ctx_size);
  for (size_t i = 0; i < o.fields.size(); ++i)
    b_.CreateStore(o.fields[i].value, b_.CreateStructGEP(o.ctx_type, ctx, static_cast<unsigned>(i)));
  auto check_status = [&] {
    if (ir::can_fail(p.body)) fail_if(b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), fs_->status), b_.getInt32(0)));
  };

  if (!reduces) {
    if (by_pieces) b_.CreateCall(rt_parfor_pieces(), {chunk, ctx, b0, e0, pieces});
    else run_plain_parfor(p, o, chunk, ctx, grain);
    b_.CreateLifetimeEnd(ctx, ctx_size);
    check_status();
    if (by_pieces) combine_array_copies(o, pieces);
    return;
  }
  auto* partials_type = llvm::ArrayType::get(o.partial_type, static_cast<std::uint64_t>(kiln_rt_max_reduce_blocks));
  llvm::AllocaInst* partials = entry_alloca(partials_type, "partials");
  llvm::ConstantInt* partials_size = b_.getInt64(dl.getTypeAllocSize(partials_type));
  llvm::Value* partial_size = i64(static_cast<std::int64_t>(dl.getTypeAllocSize(o.partial_type)));
  b_.CreateLifetimeStart(partials, partials_size);
  if (by_pieces)
    b_.CreateCall(rt_parfor_reduce_pieces(), {chunk, ctx, b0, e0, blocks, partials, partial_size, pieces});
  else
    b_.CreateCall(rt_parfor_reduce(), {chunk, ctx, b0, e0, blocks, partials, partial_size, grain});
  b_.CreateLifetimeEnd(ctx, ctx_size);
  check_status();  // before the fold: a failed chunk leaves its partial unwritten
  fold_partials(p, o, blocks, partials);
  b_.CreateLifetimeEnd(partials, partials_size);
  if (by_pieces) combine_array_copies(o, pieces);
}

// A parfor nested in another's chunk runs inline, as a loop nest on the chunk's thread. The team is busy
// with the enclosing parfor (the runtime would run a nested parfor on the calling thread too), and inline
// code costs no runtime call, context or partials per enclosing iteration, which would dominate short
// inner loops (a row of 10 elements, the dot products of logistic regression). The innermost loop is
// marked parallel, and the updates of scalar reductions carry `reassoc` (as in a chunk), so the vectorizer
// keeps several partial accumulators; ArgMin/ArgMax update their (value, index) in order, which is their
// sequential meaning. The same code runs whatever the number of threads, so results do not depend on it.
// (Nested parfors with array reductions keep the runtime path: their pieces plan private copies.)
void Emitter::inline_parfor(const ir::ParforStmt& p) {
  const size_t rank = p.indices.size();
  std::vector<llvm::Value*> begins, ends;
  for (size_t d = 0; d < rank; ++d) {
    begins.push_back(expr(p.begins[d]));
    ends.push_back(expr(p.ends[d]));
  }
  // The reduction variables are the enclosing body's (or its chunk's accumulators): updated in place.
  std::vector<std::pair<const ir::VarNode*, std::optional<ReduceOp>>> saved;
  for (const auto& r : p.reductions) {
    if (!scalar(r.var.get()).in_slot || (r.index && !scalar(r.index.get()).in_slot))
      internal_error("reduction variable " + r.var->name + " of a nested parfor is not assignable here");
    if (ir::is_arg_reduction(r.op)) continue;
    auto it = fs_->reductions.find(r.var.get());
    saved.emplace_back(r.var.get(), it == fs_->reductions.end() ? std::nullopt : std::optional<ReduceOp>(it->second));
    fs_->reductions[r.var.get()] = r.op;
  }
  llvm::MDNode* outer_group = fs_->access_group;
  const bool outer_scalar = fs_->scalar_loop;
  std::function<void(size_t)> nest = [&](size_t d) {
    if (d + 1 < rank)
      return loop(begins[d], ends[d], p.indices[d]->name, nullptr, [&](llvm::Value* i) {
        fs_->scalars[p.indices[d].get()] = ScalarValue{i, false};
        nest(d + 1);
      });
    innermost_loop(p, begins[d], ends[d], [&](llvm::Value* i, llvm::MDNode* group) {
      fs_->scalars[p.indices[d].get()] = ScalarValue{i, false};
      fs_->access_group = group;
      fs_->scalar_loop = updates_arrays_directly(p.body, fs_->reduced_arrays);
      stmt(p.body);
      fs_->access_group = outer_group;
      fs_->scalar_loop = outer_scalar;
    });
  };
  nest(0);
  for (const auto& [var, op] : saved) {
    if (op) fs_->reductions[var] = *op;
    else fs_->reductions.erase(var);
  }
}

llvm::Value* Emitter::try_expr(const ir::Expr& e) {
  if (ir::has_load(e)) return nullptr;
  struct Dims : ir::IRVisitor {
    std::vector<const ir::DimExpr*> dims;
    void visit(const ir::DimExpr& d) override { dims.push_back(&d); }
  } dims;
  dims.walk(e);
  for (const ir::DimExpr* d : dims.dims) {
    auto it = fs_->arrays.find(d->array.get());
    if (it == fs_->arrays.end() || !it->second.shape[d->axis]) return nullptr;
  }
  for (const ir::Var& v : ir::free_vars(e))
    if (!v->type.is_array() && !fs_->scalars.count(v.get())) return nullptr;
  return expr(e);
}

llvm::Value* Emitter::work_estimate(const ir::Stmt& s) {
  auto clamp = [&](llvm::Value* v) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v, i64(kGrainWork)); };
  // Trips of a loop over [begin, end) when both are computable here, else 1.
  auto trips = [&](const ir::Expr& begin, const ir::Expr& end) -> llvm::Value* {
    llvm::Value* b = try_expr(begin);
    llvm::Value* e = b ? try_expr(end) : nullptr;
    if (!e) return i64(1);
    // Clamped before any product: each factor is at most kGrainWork, so products of two fit in int64.
    llvm::Value* n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(e, b), i64(1));
    return clamp(n);
  };
  switch (s->kind) {
    case ir::StmtKind::Block: {
      llvm::Value* sum = i64(0);
      for (const auto& x : s->as<ir::BlockStmt>().stmts) sum = clamp(b_.CreateAdd(sum, work_estimate(x)));
      return sum;
    }
    case ir::StmtKind::For: {
      const auto& f = s->as<ir::ForStmt>();
      return clamp(b_.CreateAdd(i64(1), b_.CreateMul(trips(f.begin, f.end), work_estimate(f.body))));
    }
    case ir::StmtKind::Parfor: {
      const auto& p = s->as<ir::ParforStmt>();
      llvm::Value* w = work_estimate(p.body);
      for (size_t d = 0; d < p.indices.size(); ++d) w = clamp(b_.CreateMul(trips(p.begins[d], p.ends[d]), w));
      return w;
    }
    case ir::StmtKind::If: {
      // The condition and the larger arm: one arm runs (a stencil's body holds its interior and border
      // versions), as iteration_work counts.
      const auto& i = s->as<ir::IfStmt>();
      llvm::Value* w = work_estimate(i.then_body);
      if (i.else_body) w = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, w, work_estimate(i.else_body));
      const auto cond = static_cast<std::int64_t>(1 + ir::node_count(i.cond));
      return clamp(b_.CreateAdd(i64(std::min(cond, kGrainWork)), w));
    }
    default: return i64(std::min<std::int64_t>(kGrainWork, iteration_work(s)));
  }
}

llvm::Value* Emitter::work_weight(const ir::Stmt& s) {
  llvm::Type* f64t = b_.getDoubleTy();
  auto number = [&](std::int64_t n) { return llvm::ConstantFP::get(f64t, static_cast<double>(n)); };
  // Trips of a loop over [begin, end) when both are computable here, else 1.
  auto trips = [&](const ir::Expr& begin, const ir::Expr& end) -> llvm::Value* {
    llvm::Value* b = try_expr(begin);
    llvm::Value* e = b ? try_expr(end) : nullptr;
    if (!e) return number(1);
    return b_.CreateSIToFP(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(e, b), i64(1)), f64t);
  };
  switch (s->kind) {
    case ir::StmtKind::Block: {
      llvm::Value* sum = number(0);
      for (const auto& x : s->as<ir::BlockStmt>().stmts) sum = b_.CreateFAdd(sum, work_weight(x));
      return sum;
    }
    case ir::StmtKind::For: {
      const auto& f = s->as<ir::ForStmt>();
      return b_.CreateFAdd(number(1), b_.CreateFMul(trips(f.begin, f.end), work_weight(f.body)));
    }
    case ir::StmtKind::Parfor: {
      const auto& p = s->as<ir::ParforStmt>();
      llvm::Value* w = work_weight(p.body);
      for (size_t d = 0; d < p.indices.size(); ++d) w = b_.CreateFMul(trips(p.begins[d], p.ends[d]), w);
      return w;
    }
    case ir::StmtKind::If: {
      const auto& i = s->as<ir::IfStmt>();
      llvm::Value* w = work_weight(i.then_body);
      if (i.else_body) w = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, w, work_weight(i.else_body));
      return b_.CreateFAdd(number(static_cast<std::int64_t>(1 + ir::node_count(i.cond))), w);
    }
    default: return number(iteration_work(s));
  }
}

// Pieces of equal length suit a parfor whose iterations are alike. Two cases are cut otherwise, neither of
// which changes a result (the parfor has no reductions, so its iterations may run anywhere):
//  - iterations of unequal work (ir::splits_by_work: a loop whose trip count follows the outermost index,
//    a triangle's rows): the body's work is evaluated at the first and the last index and the runtime cuts
//    pieces of equal work for a cost linear between them (syrk's 520 rows on 16 threads: with equal lengths
//    the last piece holds about twice the mean work); the grain comes from the mean of the two as well;
//  - a parfor over one index whose body runs in lanes: pieces start at multiples of the lane count from the
//    range's start, so that only the last piece ends in scalar iterations (a scalar iteration of a body in
//    lanes costs about what a whole group of lanes does).
void Emitter::run_plain_parfor(const ir::ParforStmt& p, const Outline& o, llvm::Value* chunk, llvm::Value* ctx,
                               llvm::Value* grain) {
  llvm::Value* b0 = o.begins[0];
  llvm::Value* e0 = o.ends[0];
  const unsigned lanes = p.indices.size() == 1 ? lanes_of(p) : 0;
  const bool by_work = ir::splits_by_work(p);
  if (!by_work && lanes <= 1) {
    b_.CreateCall(rt_parfor(), {chunk, ctx, b0, e0, grain});
    return;
  }
  llvm::Value* w_first = llvm::ConstantFP::get(b_.getDoubleTy(), 1.0);
  llvm::Value* w_last = w_first;
  if (by_work) {
    // The body's work with the outermost index at its first and at its last value; the index is bound only
    // for these estimates (ir::uneven_work's loop bounds use nothing else the body declares).
    const ir::VarNode* index = p.indices.front().get();
    fs_->scalars[index] = ScalarValue{b0, false};
    w_first = work_weight(p.body);
    fs_->scalars[index] = ScalarValue{b_.CreateSub(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, e0, b_.CreateAdd(b0, i64(1))), i64(1)), false};
    w_last = work_weight(p.body);
    fs_->scalars.erase(index);
    // parfor_grain counted such a loop as one trip: the mean iteration's work may deserve more threads.
    llvm::Type* f64t = b_.getDoubleTy();
    llvm::Value* mean = b_.CreateFMul(b_.CreateFAdd(w_first, w_last), llvm::ConstantFP::get(f64t, 0.5));
    mean = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, mean, llvm::ConstantFP::get(f64t, 1.0));
    llvm::Value* by_mean = b_.CreateFPToSI(
        b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, b_.CreateFDiv(llvm::ConstantFP::get(f64t, static_cast<double>(kGrainWork)), mean),
                                 llvm::ConstantFP::get(f64t, 1.0)),
        b_.getInt64Ty());
    grain = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, grain, by_mean);
  }
  b_.CreateCall(rt_parfor_split(), {chunk, ctx, b0, e0, grain, i64(std::max<unsigned>(lanes, 1)), w_first, w_last});
}

void Emitter::capture_context(const ir::ParforStmt& p, Outline& o) {
  FunctionState& cs = o.chunk;
  auto capture = [&](llvm::Value* v, std::function<void(llvm::Value*)> bind) {
    // Constants (unit strides, literal bounds) need no field, and stay visible to the optimizer as such.
    (llvm::isa<llvm::Constant>(v) ? o.constants : o.fields).push_back({v, std::move(bind)});
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
  for (const auto& r : p.reductions) {
    chunk_defined.insert(r.var.get());
    if (r.index) chunk_defined.insert(r.index.get());
  }
  for (const auto& i : p.indices) chunk_defined.insert(i.get());
  DimUses dims;
  dims.walk(p.body);
  for (const ir::Var& v : ir::free_vars(p.body)) {
    if (chunk_defined.count(v.get())) continue;
    const ir::VarNode* key = v.get();
    if (!v->type.is_array()) {
      capture(read(key), [&cs, key](llvm::Value* x) { cs.scalars[key] = ScalarValue{x, false}; });
      continue;
    }
    // A planned array reduction is seen through its plan's view (its copies, or the array itself).
    const ArrayPlan* plan = nullptr;
    for (ArrayPlan& a : o.arrays)
      if (a.reduction->array.get() == key) {
        plan = &a;
        capture(a.piece_bytes, [&a](llvm::Value* x) { a.chunk_piece_bytes = x; });
      }
    const ArrayValue& a = plan ? plan->view : array(key);
    // Looked up when bound, not now: the chunk state is reset between the chunk's variants.
    capture(a.data, [&cs, key](llvm::Value* x) { cs.arrays[key].data = x; });
    for (int k = 0; k < v->type.rank; ++k) {
      if (dims.uses(key, k)) {
        if (!a.shape[k]) internal_error("the extent of " + v->name + " was not captured");
        capture(a.shape[k], [&cs, key, k](llvm::Value* x) { cs.arrays[key].shape[k] = x; });
      }
      capture(a.stride[k], [&cs, key, k](llvm::Value* x) { cs.arrays[key].stride[k] = x; });
    }
  }
}

llvm::Function* Emitter::emit_chunk(const ir::ParforStmt& p, Outline& o, ChunkMode mode, bool pieces) {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64t = b_.getInt64Ty();
  std::vector<llvm::Type*> params{ptr, i64t, i64t, ptr};
  if (pieces) params.push_back(i64t);
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  const std::string suffix = mode == ChunkMode::Atomic ? ".atomic" : "";
  auto* chunk = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                       fn_.name + ".parfor" + std::to_string(chunk_count_++) + suffix, mod_);
  chunk->setDoesNotThrow();
  for (unsigned a : {0u, 3u}) {
    chunk->addParamAttr(a, llvm::Attribute::NoAlias);
    chunk->addParamAttr(a, llvm::Attribute::NoCapture);
  }
  llvm::IRBuilderBase::InsertPointGuard ip(b_);
  FunctionState* outer = fs_;
  o.chunk = FunctionState();  // a second variant starts from scratch
  FunctionState& cs = o.chunk;
  cs.atomic_arrays = outer->atomic_arrays;
  for (const auto& r : p.array_reductions) cs.reduced_arrays.insert(r.array.get());
  if (mode == ChunkMode::Atomic)
    for (const ArrayPlan& a : o.arrays) cs.atomic_arrays[a.reduction->array.get()] = a.reduction->op;
  begin_function(chunk, cs);
  cs.in_chunk = true;
  llvm::Argument* ctx = chunk->getArg(0);
  llvm::Argument* partial = chunk->getArg(3);

  // The context is read once, at entry, into SSA values.
  llvm::IRBuilder<> eb(cs.entry);
  for (const auto& c : o.constants) c.bind(c.value);
  for (size_t i = 0; i < o.fields.size(); ++i)
    o.fields[i].bind(eb.CreateLoad(o.fields[i].value->getType(), eb.CreateStructGEP(o.ctx_type, ctx, static_cast<unsigned>(i))));
  if (pieces) bind_array_pieces(o, chunk->getArg(4));
  // Private accumulators: the identity, and for ArgMin/ArgMax the index -1 ("nothing found yet").
  std::vector<llvm::AllocaInst*> accumulators;
  for (const auto& r : p.reductions) {
    const DType t = r.var->type.elem;
    llvm::AllocaInst* acc = entry_alloca(value_type(t), r.var->name + ".acc");
    eb.CreateStore(reduction_identity(r.op, t), acc);
    cs.scalars[r.var.get()] = ScalarValue{acc, true};
    cs.reductions[r.var.get()] = r.op;
    accumulators.push_back(acc);
    if (ir::is_arg_reduction(r.op)) {
      if (!r.index) internal_error(std::string(ir::name_of(r.op)) + " reduction " + r.var->name + " has no index variable");
      llvm::AllocaInst* at = entry_alloca(b_.getInt64Ty(), r.index->name + ".acc");
      eb.CreateStore(i64(-1), at);
      cs.scalars[r.index.get()] = ScalarValue{at, true};
      accumulators.push_back(at);
    }
  }

  const size_t rank = p.indices.size();
  std::function<void(size_t)> nest = [&](size_t d) {
    llvm::Value* lo = d == 0 ? chunk->getArg(1) : o.inner_begin[d];
    llvm::Value* hi = d == 0 ? chunk->getArg(2) : o.inner_end[d];
    if (d + 1 < rank)
      return loop(lo, hi, p.indices[d]->name, nullptr, [&](llvm::Value* i) {
        cs.scalars[p.indices[d].get()] = ScalarValue{i, false};
        nest(d + 1);
      });
    innermost_loop(p, lo, hi, [&](llvm::Value* i, llvm::MDNode* group) {
      cs.scalars[p.indices[d].get()] = ScalarValue{i, false};
      cs.access_group = group;
      cs.scalar_loop = updates_arrays_directly(p.body, cs.reduced_arrays);
      stmt(p.body);
      cs.scalar_loop = false;
      cs.access_group = nullptr;
    });
  };
  nest(0);

  // The accumulators are laid out like the partial's fields.
  for (size_t k = 0; k < accumulators.size(); ++k)
    b_.CreateStore(b_.CreateLoad(o.partial_types[k], accumulators[k]),
                   b_.CreateStructGEP(o.partial_type, partial, static_cast<unsigned>(k)));
  finish_function({}, [&] { b_.CreateRetVoid(); }, [&] { b_.CreateRetVoid(); });
  fs_ = outer;
  return chunk;
}

// The fewest outer iterations worth a thread: kGrainWork divided by the work of one outer iteration (the
// body's work, nested loops included, times the inner extents). Nested loops matter: a parfor over a few
// hundred rows whose body reduces a long row (now inline) still deserves every thread.
llvm::Value* Emitter::parfor_grain(const ir::ParforStmt& p, const Outline& o) {
  llvm::Value* work = b_.CreateAdd(i64(1), work_estimate(p.body));
  for (size_t d = 1; d < p.indices.size(); ++d) {
    llvm::Value* extent = b_.CreateSub(o.ends[d], o.begins[d]);
    extent = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, extent, i64(1));
    extent = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, extent, i64(kGrainWork));
    work = b_.CreateMul(work, extent);  // at most kGrainWork^4 < 2^63
  }
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSDiv(i64(kGrainWork), work), i64(1));
}

// Folds the block partials in block order, from the identity, without reassociation, then combines the
// total into each variable: the same result for any thread count. ArgMin/ArgMax partials fold straight
// into their variables, by the rule of the body's update.
void Emitter::fold_partials(const ir::ParforStmt& p, const Outline& o, llvm::Value* blocks, llvm::AllocaInst* partials) {
  std::vector<llvm::AllocaInst*> totals(p.reductions.size(), nullptr);
  for (size_t k = 0; k < p.reductions.size(); ++k) {
    const ir::Reduction& r = p.reductions[k];
    if (ir::is_arg_reduction(r.op)) continue;
    totals[k] = entry_alloca(value_type(r.var->type.elem), r.var->name + ".total");
    b_.CreateStore(reduction_identity(r.op, r.var->type.elem), totals[k]);
  }
  llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
  b_.setFastMathFlags(llvm::FastMathFlags());
  llvm::Type* partials_type = partials->getAllocatedType();
  auto field = [&](llvm::Value* block, unsigned f) {
    llvm::Value* addr = b_.CreateInBoundsGEP(partials_type, partials, {i64(0), block, b_.getInt32(f)});
    return b_.CreateLoad(o.partial_types[f], addr);
  };
  loop(i64(0), blocks, "fold", nullptr, [&](llvm::Value* block) {
    for (size_t k = 0; k < p.reductions.size(); ++k) {
      const ir::Reduction& r = p.reductions[k];
      const unsigned f = o.partial_field[k];
      if (ir::is_arg_reduction(r.op)) {
        fold_arg_partial(p, r, field(block, f), field(block, f + 1));
        continue;
      }
      llvm::Value* part = field(block, f);
      llvm::Value* total = b_.CreateLoad(o.partial_types[f], totals[k]);
      b_.CreateStore(combine(r.op, r.var->type.elem, total, part), totals[k]);
    }
  });
  for (size_t k = 0; k < p.reductions.size(); ++k) {
    const ir::Reduction& r = p.reductions[k];
    if (!totals[k]) continue;
    ScalarValue& var = scalar(r.var.get());
    if (!var.in_slot) internal_error("reduction variable " + r.var->name + " is not assignable here");
    llvm::Value* total = b_.CreateLoad(o.partial_types[o.partial_field[k]], totals[k]);
    b_.CreateStore(combine(r.op, r.var->type.elem, read(r.var.get()), total), var.value);
  }
}

// A block that found nothing (index -1) is skipped; otherwise its (value, index) replaces the running
// pair when the update's condition, evaluated with the block's value as x, says a sequential run would
// have taken it. Blocks come in order, so ties keep the first index and NaN is handled as the body does.
void Emitter::fold_arg_partial(const ir::ParforStmt& p, const ir::Reduction& r, llvm::Value* value, llvm::Value* index) {
  const ir::Var x = ir::make_var(r.var->name + ".partial", ir::Type::scalar(r.var->type.elem), ir::VarKind::Local);
  const ir::Expr cond = arg_fold_condition(p.body, r, x);
  if (!cond) return;
  ScalarValue& var = scalar(r.var.get());
  ScalarValue& idx = scalar(r.index.get());
  if (!var.in_slot || !idx.in_slot) internal_error("reduction variables " + r.var->name + ", " + r.index->name + " are not assignable here");
  auto* test = llvm::BasicBlock::Create(ctx_, "argfold.test", fs_->fn);
  auto* take = llvm::BasicBlock::Create(ctx_, "argfold.take", fs_->fn);
  auto* next = llvm::BasicBlock::Create(ctx_, "argfold.next", fs_->fn);
  b_.CreateCondBr(b_.CreateICmpSGE(index, i64(0)), test, next);
  b_.SetInsertPoint(test);
  fs_->scalars[x.get()] = ScalarValue{value, false};
  llvm::Value* better = expr(cond);
  fs_->scalars.erase(x.get());
  b_.CreateCondBr(better, take, next);
  b_.SetInsertPoint(take);
  b_.CreateStore(value, var.value);
  b_.CreateStore(index, idx.value);
  b_.CreateBr(next);
  b_.SetInsertPoint(next);
}

}  // namespace kiln::codegen::cpu::detail
