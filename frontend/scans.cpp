// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Prefix scans (kiln/scan.hpp): checked and named here, traced straight into the blocked statements that define
// their order (ir/scan.hpp), parfors that the passes fuse, offload and compile like any other.
#include <fmt/format.h>

#include "frontend/array_info.hpp"
#include "frontend/broadcast.hpp"
#include "frontend/index_math.hpp"
#include "frontend/source_names.hpp"
#include "ir/builder.hpp"
#include "ir/compact.hpp"
#include "ir/ops.hpp"
#include "ir/scan.hpp"
#include "ir/semantics.hpp"
#include "kiln/scan.hpp"

namespace kiln::detail {
namespace {

using ir::Expr;

/// The row-major flat index of `idx` in a space of `extents`.
Expr flat_index(const std::vector<ir::Var>& idx, const std::vector<Expr>& extents) {
  Expr k = ir::make_ref(idx[0]);
  for (size_t d = 1; d < idx.size(); ++d) k = ix::add(ix::mul(k, extents[d]), ir::make_ref(idx[d]));
  return k;
}

/// Whether `array` was made by an allocating map traced in an open scope: an array expression's result, which the
/// passes may fuse into the loops that read it.
bool made_by_expression(TraceContext& ctx, const ir::VarNode* array) {
  std::vector<Scope*> scopes = ctx.scopes_inside(ctx.root_scope());
  scopes.push_back(&ctx.scope(ctx.root_scope()));
  for (const Scope* s : scopes)
    for (const ir::Stmt& st : s->stmts)
      if (const auto* m = ir::dyn<ir::MapStmt>(st); m && m->allocate && m->target.get() == array) return true;
  return false;
}

}  // namespace

ArrayHandle scan(ReduceOp op, const ArrayHandle& a, DType result, int axis, ScanKind kind, const char* fn, Where w) {
  TraceContext& ctx = TraceContext::active(fn);
  ctx.begin_statement();
  const Input in = prepare(ctx, OpArg{&a, nullptr});
  const int rank = a.rank;
  const bool flat = axis == kFlatScan;
  const bool exclusive = kind == ScanKind::exclusive;
  const std::string what = flat ? fmt::format("{}({}{})", fn, in.label, exclusive ? ", exclusive" : "")
                                : fmt::format("{}({}, {}{})", fn, in.label, axis, exclusive ? ", exclusive" : "");
  if (op != ReduceOp::Add && op != ReduceOp::Mul && op != ReduceOp::Min && op != ReduceOp::Max)
    ctx.fail(fmt::format("`{}` scans with {}: a scan takes ReduceOp::Add, Mul, Min or Max", what, ir::name_of(op)), w);
  const DType elem = elem_of(a);
  if (elem == DType::Bool && result == DType::Bool && (op == ReduceOp::Add || op == ReduceOp::Mul))
    ctx.fail(fmt::format("`{}` adds or multiplies bools: use kiln::cumsum / kiln::cumprod (int64), or cast the "
                         "array to an integer type first",
                         what),
             w);
  int ax = 0;
  if (!flat) {
    ax = axis < 0 ? axis + rank : axis;
    if (ax < 0 || ax >= rank)
      ctx.fail(fmt::format("axis {} is out of range in `{}` of an array of rank {}", axis, what, rank), w);
  }
  // bool is scanned as int32 (min/max of bools; sums and products come here as int64).
  const DType t = result == DType::Bool ? DType::I32 : result;
  ir::ScanSpec spec;
  spec.op = op;
  spec.type = t;
  spec.result = result;
  spec.exclusive = exclusive;
  spec.lockstep_rows = ctx.lockstep_rows;
  std::string name = declared_name(w);
  if (name.empty()) name = fn;
  // The values as compact memory where they are (a ScanStmt's source): not a view, and not an array expression,
  // which the passes compute in their loads (two reads of its operands cost less than writing it and one read).
  ir::Var compact;
  if (!flat || rank == 1)
    if (!is_view(a) && ir::always_compact(*a.var) && !made_by_expression(ctx, a.var.get())) compact = a.var;
  if (flat && rank != 1) {
    // NumPy's flattening, as a map into a 1-d array (the scan's loops then index it directly: recovering an
    // n-d index by division in the scan's inner loops made NVRTC take most of a minute).
    Expr size = ix::c(1);
    for (const auto& e : in.extents) size = ix::mul(size, e);
    const ir::Var flat_copy = ctx.new_array(t, 1, name + "_flat", {});
    ctx.emit(ir::make_allocate(flat_copy, {size}));
    const std::vector<ir::Var> idx = space_indices(ctx, rank);
    ctx.emit(ir::make_map_into(flat_copy, idx, in.extents, {flat_index(idx, in.extents)}, read(in, refs(idx), t),
                               what + at(w) + ": flattened"));
    spec.shape = {size};
    spec.value = [flat_copy](const std::vector<Expr>& k) { return ir::make_load(flat_copy, k); };
    compact = flat_copy;
  } else {
    spec.shape = in.extents;
    spec.axis = static_cast<size_t>(ax);
    spec.value = [in, t](const std::vector<Expr>& idx) { return read(in, idx, t); };
  }
  spec.name = name;
  spec.origin = what + at(w);
  spec.out = ctx.new_array(result, static_cast<int>(spec.shape.size()), spec.name, w);
  check_new_array(ctx, spec.out, spec.shape, w);
  ctx.emit(ir::make_allocate(spec.out, spec.shape));
  // On a lockstep target (a GPU) a scan along the last axis of values already in compact memory is one
  // statement, which the backend runs in a single pass: every element read once and written once, where the
  // passes read the input twice (ir::ScanStmt; codegen/cuda/scan_kernels.hpp). The same order, so the same
  // bits. A tile of the single pass holds several blocks of one line: lines of fewer than kTileBlocks blocks
  // (decided at run time) keep the passes, whose rows are blocks of any line. Values that are not compact (a
  // view, a strided parameter) keep them too: a copy first would cost more than the second read it saves.
  bool inside_prange = false;
  for (const Scope* sc : ctx.scopes_inside(ctx.root_scope())) inside_prange |= sc->parallel;
  if (ctx.lockstep_rows && !inside_prange && compact && spec.axis + 1 == spec.shape.size() &&
      ir::scan_stmt_types(compact->type.elem, t, result)) {
    ir::Stmt single = ir::make_scan(compact, spec.out, op, t, exclusive, spec.origin + ": one pass");
    const Expr n = spec.shape[spec.axis];
    const auto* known = ir::dyn<ir::ConstExpr>(n);
    constexpr std::int64_t kTileBlocks = 4;
    if (spec.shape.size() == 1 || (known && known->i >= kTileBlocks * ir::sem::kScanBlock)) {
      ctx.emit(std::move(single));
    } else if (known) {
      for (ir::Stmt& st : ir::scan_statements(spec)) ctx.emit(std::move(st));
    } else {
      ctx.emit(ir::make_if(ir::make_binary(ir::BinaryOp::Ge, n, ir::make_i64(kTileBlocks * ir::sem::kScanBlock)),
                           ir::make_block({std::move(single)}), ir::make_block(ir::scan_statements(spec))));
    }
    return new_handle(ctx, spec.out, spec.shape, what);
  }
  for (ir::Stmt& st : ir::scan_statements(spec)) ctx.emit(std::move(st));
  return new_handle(ctx, spec.out, spec.shape, what);
}

}  // namespace kiln::detail
