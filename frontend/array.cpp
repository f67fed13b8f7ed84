// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Traced arrays: element loads and stores (through views too), shapes, allocation inside kernels, and the
// handle bookkeeping shared by the array operations (frontend/array_info.hpp).
#include <unordered_map>

#include <fmt/format.h>

#include "frontend/array_info.hpp"
#include "frontend/index_math.hpp"
#include "frontend/per_thread.hpp"
#include "frontend/source_names.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"

namespace kiln::detail {

// ---- handles --------------------------------------------------------------------------------------------

std::vector<ir::Expr> extents_of(const ArrayHandle& a) {
  if (a.info) return a.info->extents;
  std::vector<ir::Expr> out;
  for (int d = 0; d < a.rank; ++d)
    out.push_back(a.var->type.unit_dim(d) ? ix::c(1) : ir::make_dim(a.var, d));
  return out;
}

bool is_view(const ArrayHandle& a) { return a.info && !a.info->axes.empty(); }

std::vector<ir::Expr> base_indices(const ArrayHandle& a, const std::vector<ir::Expr>& index) {
  if (!is_view(a)) return index;
  std::vector<ir::Expr> out;
  for (const ArrayInfo::Axis& ax : a.info->axes) {
    if (ax.dim < 0) out.push_back(ax.start);
    else out.push_back(ix::add(ax.start, ix::mul(ax.step, index.at(static_cast<size_t>(ax.dim)))));
  }
  return out;
}

std::string label_of(const ArrayHandle& a) { return a.info && !a.info->label.empty() ? a.info->label : a.var->name; }

ArrayHandle new_handle(TraceContext& ctx, const ir::Var& var, std::vector<ir::Expr> extents, std::string label) {
  auto info = std::make_shared<ArrayInfo>();
  info->extents = std::move(extents);
  info->label = std::move(label);
  return ArrayHandle(var, var->type.rank, ctx.current_scope(), std::move(info));
}

std::vector<ir::Var> space_indices(TraceContext& ctx, int rank) {
  std::vector<ir::Var> idx;
  for (int d = 0; d < rank; ++d) idx.push_back(ctx.new_index(std::string(1, "ijkl"[d])));
  return idx;
}

std::vector<ir::Expr> refs(const std::vector<ir::Var>& vars) {
  std::vector<ir::Expr> out;
  for (const auto& v : vars) out.push_back(ir::make_ref(v));
  return out;
}

ir::Expr stable(TraceContext& ctx, const Node& n, const char* name) {
  if (!n.reads_memory && !n.reads_locals) return n.expr;
  const ir::Var v = ctx.new_local(n.type, name, {});
  ctx.emit(ir::make_let(v, n.expr));
  return ir::make_ref(v);
}

std::string at(const Where& w) {
  const std::string s = w.str();
  return s.empty() ? "" : " at " + s;
}

std::string shape_holes(size_t rank) {
  std::string s = "(";
  for (size_t d = 0; d < rank; ++d) s += d ? ", {}" : "{}";
  return s + ")";
}

namespace {

/// Per thread, for the trace in progress (told apart by its root scope, unique per trace).
struct WriteCounts {
  std::uint64_t trace = 0;
  std::uint64_t generation = 0;  ///< counts restart (a kernel traced while tracing another one)
  std::unordered_map<const ir::VarNode*, std::uint64_t> counts;
};

WriteCounts& write_counts(const TraceContext& ctx) {
  WriteCounts& w = per_thread<WriteCounts>();
  if (w.trace != ctx.root_scope()) {
    w.trace = ctx.root_scope();
    ++w.generation;
    w.counts.clear();
  }
  return w;
}

}  // namespace

std::uint64_t write_count(const TraceContext& ctx, const ir::VarNode* array) {
  const auto& c = write_counts(ctx).counts;
  const auto it = c.find(array);
  return it == c.end() ? 0 : it->second;
}

void note_write(const TraceContext& ctx, const ir::VarNode* array) { ++write_counts(ctx).counts[array]; }

std::uint64_t write_generation(const TraceContext& ctx) { return write_counts(ctx).generation; }

std::uint64_t trace_scope() {
  TraceContext* ctx = TraceContext::current();
  return ctx ? ctx->current_scope() : 0;
}

void check_rebind(std::uint64_t home, const ArrayHandle& to) {
  TraceContext& ctx = TraceContext::active("rebinding a kiln::Array");
  if (home != ctx.current_scope())
    ctx.fail(fmt::format("a kiln::Array handle declared outside a loop or branch is rebound inside it (to {}); the body is "
                         "traced once, so the handle cannot change per iteration: write into its elements "
                         "(`a(kiln::all) = ...`, `a += ...`), declare the handle inside, or, for a time loop, write into "
                         "a second buffer and exchange them with kiln::swap(a, b)",
                         label_of(to)));
}

// ---- elements and shapes --------------------------------------------------------------------------------

std::vector<ir::Expr> read_indices(TraceContext& ctx, const ArrayHandle& a, const Int* const* indices, int n,
                                   Node& flags) {
  if (n != a.rank)
    ctx.fail(fmt::format("array '{}' has rank {} but is indexed with {} {}", label_of(a), a.rank, n, n == 1 ? "index" : "indices"));
  std::vector<ir::Expr> out;
  for (int k = 0; k < n; ++k) {
    const Node i = indices[k]->read();
    flags.reads_memory |= i.reads_memory;
    flags.reads_locals |= i.reads_locals;
    out.push_back(i.expr);
  }
  return base_indices(a, out);
}

DType elem_of(const ArrayHandle& a) { return a.var->type.elem; }

Node load(const ArrayHandle& a, const Int* const* indices, int n) {
  TraceContext& ctx = TraceContext::active("array element access");
  ctx.check_array(a, "element access");
  Node node{nullptr, elem_of(a), true, false};
  std::vector<ir::Expr> idx = read_indices(ctx, a, indices, n, node);
  node.expr = ir::make_load(a.var, std::move(idx));
  return node;
}

void store(const ArrayHandle& a, const Int* const* indices, int n, const TracedValue& value, bool consume) {
  TraceContext& ctx = TraceContext::active("array element assignment");
  ctx.check_array(a, "assignment to an element");
  ctx.begin_statement();
  Node flags;
  std::vector<ir::Expr> idx = read_indices(ctx, a, indices, n, flags);
  const Node v = value.read();
  if (consume) ctx.consume(value);
  ctx.snapshot_memory_readers();
  note_write(ctx, a.var.get());
  ctx.emit(ir::make_store(a.var, std::move(idx), v.expr));
}

Node dim(const ArrayHandle& a, int axis) {
  TraceContext& ctx = TraceContext::active("array shape");
  ctx.check_array(a, "shape");
  if (axis < 0 || axis >= a.rank)
    ctx.fail(fmt::format("axis {} is out of range for array '{}' of rank {}", axis, label_of(a), a.rank));
  if (a.info) return Node{a.info->extents[static_cast<size_t>(axis)], DType::I64, false, false};
  return Node{ir::make_dim(a.var, axis), DType::I64, false, false};
}

Node size(const ArrayHandle& a) {
  TraceContext& ctx = TraceContext::active("array size");
  ctx.check_array(a, "size");
  if (a.info) {
    ir::Expr n = a.info->extents[0];
    for (int d = 1; d < a.rank; ++d) n = ix::mul(n, a.info->extents[static_cast<size_t>(d)]);
    return Node{n, DType::I64, false, false};
  }
  ir::Expr n = ir::make_dim(a.var, 0);
  for (int d = 1; d < a.rank; ++d) n = ir::make_binary(BinaryOp::Mul, n, ir::make_dim(a.var, d));
  return Node{n, DType::I64, false, false};
}

// ---- allocation -----------------------------------------------------------------------------------------

namespace {

/// The extent of an existing array that `e` cannot exceed, by its form (dim, dim - k for k >= 0, max(dim - k, 0),
/// min with such a form), or null.
const ir::DimExpr* bounding_dim(const ir::Expr& e) {
  if (const auto* d = ir::dyn<ir::DimExpr>(e)) return d;
  const auto* b = ir::dyn<ir::BinaryExpr>(e);
  if (!b) return nullptr;
  const auto kb = ix::value(b->b);
  switch (b->op) {
    case BinaryOp::Sub: return kb && *kb >= 0 ? bounding_dim(b->a) : nullptr;
    case BinaryOp::Max: return kb && *kb == 0 ? bounding_dim(b->a) : nullptr;  // an extent is >= 0 too
    case BinaryOp::Min: {
      const ir::DimExpr* d = bounding_dim(b->a);
      return d ? d : bounding_dim(b->b);
    }
    default: return nullptr;
  }
}

/// True if a new array of `shape` and `elem_size`-byte elements is within kMaxArrayBytes by its form: each extent is
/// bounded by a different axis of one existing array (which follows the rule: arguments are checked at the call)
/// with elements at least as large.
bool fits_by_form(const std::vector<ir::Expr>& shape, std::int64_t elem_size) {
  const ir::VarNode* source = nullptr;
  unsigned axes = 0;
  for (const ir::Expr& e : shape) {
    const ir::DimExpr* d = bounding_dim(e);
    if (!d || (source && d->array.get() != source) || (axes >> d->axis & 1u)) return false;
    source = d->array.get();
    axes |= 1u << d->axis;
  }
  return source && size_of(source->type.elem) >= elem_size;
}

}  // namespace

void check_new_array(TraceContext& ctx, const ir::Var& array, const std::vector<ir::Expr>& shape, const Where& w) {
  const std::int64_t elem_size = size_of(array->type.elem);
  // kiln::array_size's rule in i64 arithmetic that cannot overflow while the rule holds: extent k fits when
  // it is at most kMaxArrayBytes / (element size * the non-zero extents before it).
  ir::Expr nonnegative, fits;  // null or constant true: known to hold
  ir::Expr bytes = ix::c(elem_size);
  // An array's extent, or max(x, k >= 0) as arange's and a view's lengths are, is never negative.
  auto never_negative = [](const ir::Expr& e) {
    if (ir::dyn<ir::DimExpr>(e)) return true;
    const auto* b = ir::dyn<ir::BinaryExpr>(e);
    if (!b || b->op != BinaryOp::Max) return false;
    const auto ka = ix::value(b->a), kb = ix::value(b->b);
    return (ka && *ka >= 0) || (kb && *kb >= 0);
  };
  for (const ir::Expr& e : shape) {
    if (!never_negative(e)) nonnegative = ix::both(nonnegative, ix::lt(ix::c(-1), e));
    fits = ix::both(fits, ix::lt(e, ix::add(ix::div(ix::c(kMaxArrayBytes), bytes), ix::c(1))));
    bytes = ix::mul(bytes, ix::max(e, ix::c(1)));
  }
  if (fits_by_form(shape, elem_size)) fits = nullptr;
  const std::string made = w.str().empty() ? "" : " (made at " + w.str() + ")";
  auto check = [&](const ir::Expr& cond, const std::string& message) {
    if (!cond) return;
    if (const auto* k = ir::dyn<ir::ConstExpr>(cond); k && k->i) return;
    // Also when known false: the statement may sit in a branch or loop that never runs.
    ctx.emit(ir::make_check(cond, kShapeMismatch, message + made, shape));
  };
  check(nonnegative, "array '" + array->name + "' has a negative extent: shape " + shape_holes(shape.size()));
  check(fits, "array '" + array->name + "' is too large: shape " + shape_holes(shape.size()) + " of " +
                  std::to_string(elem_size) + "-byte elements exceeds " + std::to_string(kMaxArrayBytes) + " bytes");
}

namespace {

/// The name of an array made at `where`: the variable it initializes, else `fallback`.
std::string array_name(const Where& where, const char* fallback) {
  std::string n = declared_name(where);
  return n.empty() ? fallback : n;
}

ArrayHandle allocate_exprs(TraceContext& ctx, DType t, std::vector<ir::Expr> shape, const TracedValue* fill,
                           const Where& where) {
  const int rank = static_cast<int>(shape.size());
  const ir::Var var = ctx.new_array(t, rank, array_name(where, fill ? "filled" : "array"), where);
  check_new_array(ctx, var, shape, where);
  // An extent that reads mutable state is referred to through the array afterwards.
  auto keeps_meaning = [](const ir::Expr& e) {
    if (ir::has_load(e)) return false;
    for (const ir::Var& v : ir::free_vars(e))
      if (v->kind == ir::VarKind::Local) return false;
    return true;
  };
  std::vector<ir::Expr> extents;
  for (int d = 0; d < rank; ++d) extents.push_back(keeps_meaning(shape[d]) ? shape[d] : ir::make_dim(var, d));
  if (fill) {
    const ir::Expr v = stable(ctx, fill->read(), "fill");
    const std::vector<ir::Var> idx = space_indices(ctx, rank);
    ctx.emit(ir::make_map(var, idx, shape, v, "fill of " + var->name + at(where)));
  } else {
    ctx.emit(ir::make_allocate(var, shape));
  }
  return new_handle(ctx, var, std::move(extents), var->name);
}

}  // namespace

ArrayHandle allocate(DType t, const Int* const* extents, int n, const TracedValue* fill, Where where) {
  TraceContext& ctx = TraceContext::active("array allocation");
  ctx.begin_statement();
  std::vector<ir::Expr> shape;
  for (int k = 0; k < n; ++k) shape.push_back(extents[k]->read().expr);
  return allocate_exprs(ctx, t, std::move(shape), fill, where);
}

ArrayHandle allocate_like(DType t, const ArrayHandle& like, const TracedValue* fill, Where where) {
  TraceContext& ctx = TraceContext::active("array allocation");
  ctx.check_array(like, "empty_like");
  ctx.begin_statement();
  return allocate_exprs(ctx, t, extents_of(like), fill, where);
}

ArrayHandle fill(DType t, const Int* const* extents, int n, const TracedValue& value, Where w) {
  return allocate(t, extents, n, &value, w);
}

ArrayHandle fill_like(DType t, const ArrayHandle& like, const TracedValue* value, Where w) {
  return allocate_like(t, like, value, w);
}

ArrayHandle materialize(const ArrayHandle& a) {
  if (!is_view(a)) return a;
  TraceContext& ctx = TraceContext::active("copying a view");
  ctx.check_array(a, "copy");
  ctx.begin_statement();
  const std::vector<ir::Var> idx = space_indices(ctx, a.rank);
  const std::vector<ir::Expr> shape = extents_of(a);
  const ir::Var var = ctx.new_array(elem_of(a), a.rank, a.var->name + "_copy", {});
  ctx.emit(ir::make_map(var, idx, shape, ir::make_load(a.var, base_indices(a, refs(idx))), "copy of " + label_of(a)));
  return new_handle(ctx, var, shape, label_of(a));
}

}  // namespace kiln::detail
