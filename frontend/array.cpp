// Traced arrays: element loads and stores (through views too), shapes, allocation inside kernels, and the
// handle bookkeeping shared by the array operations (frontend/array_info.hpp).
#include <unordered_map>

#include "frontend/array_info.hpp"
#include "frontend/index_math.hpp"
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
  thread_local WriteCounts w;
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
    ctx.fail("a kiln::Array handle declared outside a loop or branch is rebound inside it (to " + label_of(to) +
             "); the body is traced once, so the handle cannot change per iteration: write into its elements "
             "(`a(kiln::all) = ...`, `a += ...`), declare the handle inside, or, for a time loop, write into a second "
             "buffer and exchange them with kiln::swap(a, b)");
}

// ---- elements and shapes --------------------------------------------------------------------------------

namespace {

std::vector<ir::Expr> read_indices(TraceContext& ctx, const ArrayHandle& a, const Int* const* indices, int n,
                                   Node& flags) {
  if (n != a.rank)
    ctx.fail("array '" + label_of(a) + "' has rank " + std::to_string(a.rank) + " but is indexed with " +
             std::to_string(n) + (n == 1 ? " index" : " indices"));
  std::vector<ir::Expr> out;
  for (int k = 0; k < n; ++k) {
    const Node i = indices[k]->read();
    flags.reads_memory |= i.reads_memory;
    flags.reads_locals |= i.reads_locals;
    out.push_back(i.expr);
  }
  return base_indices(a, out);
}

}  // namespace

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
    ctx.fail("axis " + std::to_string(axis) + " is out of range for array '" + label_of(a) + "' of rank " +
             std::to_string(a.rank));
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

/// The name of an array made at `where`: the variable it initializes, else `fallback`.
std::string array_name(const Where& where, const char* fallback) {
  std::string n = declared_name(where);
  return n.empty() ? fallback : n;
}

ArrayHandle allocate_exprs(TraceContext& ctx, DType t, std::vector<ir::Expr> shape, const TracedValue* fill,
                           const Where& where) {
  const int rank = static_cast<int>(shape.size());
  const ir::Var var = ctx.new_array(t, rank, array_name(where, fill ? "filled" : "array"), where);
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
