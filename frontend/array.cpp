// Traced arrays: element loads and stores, shapes, and allocation inside kernels.
#include "frontend/trace_context.hpp"
#include "ir/builder.hpp"

namespace kiln::detail {
namespace {

std::vector<ir::Expr> read_indices(TraceContext& ctx, const ArrayHandle& a, const Int* const* indices, int n,
                                   Node& flags) {
  if (n != a.rank)
    ctx.fail("array '" + a.var->name + "' has rank " + std::to_string(a.rank) + " but is indexed with " +
             std::to_string(n) + (n == 1 ? " index" : " indices"));
  std::vector<ir::Expr> out;
  for (int k = 0; k < n; ++k) {
    const Node i = indices[k]->read();
    flags.reads_memory |= i.reads_memory;
    flags.reads_locals |= i.reads_locals;
    out.push_back(i.expr);
  }
  return out;
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
  ctx.emit(ir::make_store(a.var, std::move(idx), v.expr));
}

Node dim(const ArrayHandle& a, int axis) {
  TraceContext& ctx = TraceContext::active("array shape");
  ctx.check_array(a, "shape");
  if (axis < 0 || axis >= a.rank)
    ctx.fail("axis " + std::to_string(axis) + " is out of range for array '" + a.var->name + "' of rank " +
             std::to_string(a.rank));
  return Node{ir::make_dim(a.var, axis), DType::I64, false, false};
}

Node size(const ArrayHandle& a) {
  TraceContext& ctx = TraceContext::active("array size");
  ctx.check_array(a, "size");
  ir::Expr n = ir::make_dim(a.var, 0);
  for (int d = 1; d < a.rank; ++d) n = ir::make_binary(BinaryOp::Mul, n, ir::make_dim(a.var, d));
  return Node{n, DType::I64, false, false};
}

namespace {

ArrayHandle allocate_exprs(TraceContext& ctx, DType t, std::vector<ir::Expr> shape, const TracedValue* fill,
                           const Where& where) {
  const int rank = static_cast<int>(shape.size());
  const ir::Var var = ctx.new_array(t, rank, fill ? "filled" : "array", where);
  ctx.emit(ir::make_allocate(var, shape));
  if (fill) {
    // A parallel fill loop; fusion merges it with the array's first writer where it can.
    const Node v = fill->read();
    std::vector<ir::Var> idx;
    std::vector<ir::Expr> lo, refs;
    for (int d = 0; d < rank; ++d) {
      idx.push_back(ctx.new_index(std::string(1, "ijkl"[d])));
      lo.push_back(ir::make_i64(0));
      refs.push_back(ir::make_ref(idx.back()));
    }
    ir::Stmt body = ir::make_block({ir::make_store(var, refs, v.expr)});
    ctx.emit(ir::make_parfor(idx, lo, shape, body, {}, "fill of " + var->name));
  }
  return ArrayHandle{var, rank, ctx.current_scope()};
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
  std::vector<ir::Expr> shape;
  for (int d = 0; d < like.rank; ++d) shape.push_back(ir::make_dim(like.var, d));
  return allocate_exprs(ctx, t, std::move(shape), fill, where);
}

}  // namespace kiln::detail
