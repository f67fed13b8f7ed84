// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reductions: whole-array ones trace a ReduceStmt, axis ones a ReduceAxisStmt; mean/var/std, ptp, nanmean,
// any and alltrue compose them with elementwise maps; dot is a reduction of products.
#include <fmt/format.h>

#include "frontend/broadcast.hpp"
#include "frontend/index_math.hpp"
#include "frontend/per_thread.hpp"
#include "frontend/source_names.hpp"
#include "ir/builder.hpp"
#include "ir/ops.hpp"
#include "kiln/abi.hpp"
#include "kiln/reduce.hpp"

namespace kiln::detail {
namespace {

const char* name_of(Reduction r) {
  switch (r) {
    case Reduction::Sum: return "sum";
    case Reduction::Prod: return "prod";
    case Reduction::Min: return "min";
    case Reduction::Max: return "max";
    case Reduction::ArgMin: return "argmin";
    case Reduction::ArgMax: return "argmax";
    case Reduction::Mean: return "mean";
    case Reduction::Var: return "var";
    case Reduction::Std: return "std";
    case Reduction::Any: return "any";
    case Reduction::All: return "alltrue";
    case Reduction::CountNonzero: return "count_nonzero";
    case Reduction::Ptp: return "ptp";
    case Reduction::NanSum: return "nansum";
    case Reduction::NanMean: return "nanmean";
  }
  return "?";
}

ReduceOp op_of(Reduction r) {
  switch (r) {
    case Reduction::Prod: return ReduceOp::Mul;
    case Reduction::Min: return ReduceOp::Min;
    case Reduction::Max: return ReduceOp::Max;
    case Reduction::ArgMin: return ReduceOp::ArgMin;
    case Reduction::ArgMax: return ReduceOp::ArgMax;
    default: return ReduceOp::Add;
  }
}

bool needs_elements(Reduction r) {
  return r == Reduction::Min || r == Reduction::Max || r == Reduction::ArgMin || r == Reduction::ArgMax ||
         r == Reduction::Ptp;
}

ir::Expr bin(BinaryOp op, const ir::Expr& a, const ir::Expr& b) { return ir::make_binary(op, a, b); }

std::string where_text(const Where& w) { return w.str().empty() ? "" : " (at " + w.str() + ")"; }

/// The name of a reduction's result: the variable it initializes, else the operation.
std::string result_name(const Where& w, const char* fallback) {
  std::string n = declared_name(w);
  return n.empty() ? fallback : n;
}

/// The type values are reduced in: bool is reduced as int32 (sums as int64, by the caller's result type).
DType value_type(Reduction r, DType elem, DType result) {
  if (r == Reduction::Sum || r == Reduction::Prod || r == Reduction::NanSum) return result;
  if (r == Reduction::Mean || r == Reduction::Var || r == Reduction::Std || r == Reduction::NanMean) return result;
  if (r == Reduction::CountNonzero) return DType::I64;
  if (is_half(elem)) return DType::F32;  // f16/bf16 are reduced in f32 (kiln/reduce.hpp)
  return elem == DType::Bool ? DType::I32 : elem;
}

/// Any and All reduce x != 0 as int32 with max and min: their identities (the lowest and highest int32) make
/// `> 0` false and true for nothing reduced, as np.any and np.all of an empty array are.
ReduceOp truth_op(Reduction r) { return r == Reduction::Any ? ReduceOp::Max : ReduceOp::Min; }

/// The element operand `in` at `index` as `x != 0` in type t (0 or 1; NaN is nonzero).
ir::Expr nonzero(const Input& in, const std::vector<ir::Expr>& index, DType t) {
  return ir::make_cast(t, read(in, index, DType::Bool));
}

/// NaN read as 0 (+0, as np.nansum replaces it), in type t.
ir::Expr nan_as_zero(const Input& in, const std::vector<ir::Expr>& index, DType t) {
  const ir::Expr x = read(in, index, t);
  if (!is_float(elem_of(*in.array)) || !is_float(t)) return x;
  return ir::make_select(ir::make_call(Intrinsic::IsNan, {x}), ir::make_const(t, 0), x);
}

/// 1 where the element is not NaN, in type t.
ir::Expr not_nan(const Input& in, const std::vector<ir::Expr>& index, DType t) {
  if (!is_float(elem_of(*in.array))) return ir::make_const(t, 1);
  return ir::make_cast(t, ir::make_unary(UnaryOp::Not, ir::make_call(Intrinsic::IsNan, {read(in, index, elem_of(*in.array))})));
}

ir::Expr product(const std::vector<ir::Expr>& extents) {
  ir::Expr n = ix::c(1);
  for (const auto& e : extents) n = ix::mul(n, e);
  return n;
}

/// Fails if a reduction with no identity would reduce nothing: `cond` false at run time -> ValueError.
void nonempty_check(TraceContext& ctx, const ir::Expr& cond, const std::string& what, const std::vector<ir::Expr>& extents,
                    const Where& w) {
  if (const auto* k = ir::dyn<ir::ConstExpr>(cond)) {
    if (k->i) return;
    ctx.fail(fmt::format("`{}` reduces an empty array (the operation has no identity)", what), w);
  }
  ctx.emit(ir::make_check(cond, kValueError,
                          what.substr(0, what.find('(')) + " of an empty array in `" + what + "`" + where_text(w) +
                              ": shape " + shape_holes(extents.size()),
                          extents));
}

/// Reductions already traced in the current block, so that `mean(x)` and `std(x)` (or `sum(x)` twice)
/// read x once: a reduction of the same array with the same operator, axis and type is reused while
/// neither the array nor the result has been written since, and the trace is still in the block where it
/// was computed (in a loop, a later write in the body would change it for the next iteration). An array
/// result is reused only inside mean/var/std, never handed to the user twice (the two would alias).
struct Reused {
  std::uint64_t generation = 0, scope = 0, writes = 0, result_writes = 0;
  const ir::VarNode* array = nullptr;
  ReduceOp op{};
  DType type{};
  int axis = -1;  ///< -1: the whole array
  bool keepdims = false;
  ir::Var scalar;      ///< a whole reduction's result
  ArrayHandle result;  ///< an axis reduction's result
};

std::vector<Reused>& reused() { return per_thread<std::vector<Reused>>(); }

/// The earlier result of this reduction of `in`, if it can stand in for a new one.
const Reused* find_reused(TraceContext& ctx, const Input& in, ReduceOp op, DType t, int axis, bool keepdims) {
  if (is_view(*in.array)) return nullptr;  // a view's bounds may read values that changed meanwhile
  for (const Reused& r : reused())
    if (r.generation == write_generation(ctx) && r.scope == ctx.current_scope() && r.array == in.array->var.get() &&
        r.op == op && r.type == t && r.axis == axis && r.keepdims == keepdims &&
        r.writes == write_count(ctx, r.array) && (!r.result.var || r.result_writes == write_count(ctx, r.result.var.get())))
      return &r;
  return nullptr;
}

void remember(TraceContext& ctx, const Input& in, ReduceOp op, DType t, int axis, bool keepdims, ir::Var scalar,
              ArrayHandle result) {
  if (is_view(*in.array)) return;
  auto& all = reused();
  std::erase_if(all, [&](const Reused& r) { return r.generation != write_generation(ctx); });
  const std::uint64_t result_writes = result.var ? write_count(ctx, result.var.get()) : 0;
  all.push_back(Reused{write_generation(ctx), ctx.current_scope(), write_count(ctx, in.array->var.get()), result_writes,
                       in.array->var.get(), op, t, axis, keepdims, std::move(scalar), std::move(result)});
}

/// Declares a scalar result and traces `reduce var = op over space of value`.
ir::Var emit_reduce(TraceContext& ctx, ReduceOp op, DType t, const std::string& name, const std::vector<ir::Var>& idx,
                    const std::vector<ir::Expr>& shape, const ir::Expr& value, const std::string& origin) {
  const ir::Var v = ctx.new_local(ir::reduce_result_type(op, t), name, {});
  ctx.emit(ir::make_reduce(v, op, idx, shape, value, origin));
  return v;
}

/// A named immutable value.
ir::Expr let(TraceContext& ctx, const std::string& name, const ir::Expr& e) {
  const ir::Var v = ctx.new_local(e->type, name, {});
  ctx.emit(ir::make_let(v, e));
  return ir::make_ref(v);
}

/// A new array of `shape` with `value` (of the indices `idx`) at each element.
ArrayHandle emit_map(TraceContext& ctx, DType t, const std::string& name, const std::vector<ir::Var>& idx,
                     const std::vector<ir::Expr>& shape, const ir::Expr& value, const std::string& label,
                     const std::string& origin) {
  const ir::Var var = ctx.new_array(t, static_cast<int>(shape.size()), name, {});
  ctx.emit(ir::make_map(var, idx, shape, value, origin));
  return new_handle(ctx, var, shape, label);
}

int normalized_axis(TraceContext& ctx, int axis, int rank, const std::string& what, const Where& w) {
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    ctx.fail(fmt::format("axis {} is out of range in `{}` of an array of rank {}", axis, what, rank), w);
  return a;
}

/// The divisor of var/std: max(n - ddof, 0), as a float of type t.
ir::Expr divisor(const ir::Expr& n, int ddof, DType t) {
  return ir::make_cast(t, ix::max(ix::sub(n, ix::c(ddof)), ix::c(0)));
}

}  // namespace

Node reduce(Reduction r, const ArrayHandle& a, DType result, int ddof, Where w) {
  TraceContext& ctx = TraceContext::active("an array reduction");
  ctx.begin_statement();
  const Input in = prepare(ctx, OpArg{&a, nullptr});
  const std::string what = fmt::format("{}({})", name_of(r), in.label);
  const std::string origin = what + at(w);
  const std::string name = result_name(w, name_of(r));
  const std::vector<ir::Expr>& shape = in.extents;
  const DType vt = value_type(r, elem_of(a), result);
  if (needs_elements(r)) {
    ir::Expr cond;
    for (const auto& e : shape) cond = ix::both(cond, ix::lt(ix::c(0), e));
    nonempty_check(ctx, cond, what, shape, w);
  }
  // `op` over the elements of the array (converted to vt), or the same reduction traced before.
  auto plain = [&](ReduceOp op, const std::string& var_name) {
    if (const Reused* r = find_reused(ctx, in, op, vt, -1, false)) return r->scalar;
    const std::vector<ir::Var> idx = space_indices(ctx, static_cast<int>(shape.size()));
    const ir::Var v = emit_reduce(ctx, op, vt, var_name, idx, shape, read(in, refs(idx), vt), origin);
    remember(ctx, in, op, vt, -1, false, v, {});
    return v;
  };
  if (r == Reduction::Mean || r == Reduction::Var || r == Reduction::Std) {
    const ir::Expr n = product(shape);
    const ir::Var s = plain(ReduceOp::Add, name + "_sum");
    const ir::Expr mean = bin(BinaryOp::Div, ir::make_ref(s), ir::make_cast(vt, n));
    if (r == Reduction::Mean) return Node{let(ctx, name, mean), result, false, false};
    // Two passes: the squared deviations from the mean, which is exact where the one-pass formula cancels.
    const ir::Expr m = let(ctx, name + "_mean", mean);
    const std::vector<ir::Var> idx2 = space_indices(ctx, static_cast<int>(shape.size()));
    const ir::Expr d = bin(BinaryOp::Sub, read(in, refs(idx2), vt), m);
    const ir::Var ss = emit_reduce(ctx, ReduceOp::Add, vt, name + "_sq", idx2, shape, bin(BinaryOp::Mul, d, d), origin);
    ir::Expr v = bin(BinaryOp::Div, ir::make_ref(ss), divisor(n, ddof, vt));
    if (r == Reduction::Std) v = ir::make_call(Intrinsic::Sqrt, {v});
    return Node{let(ctx, name, v), result, false, false};
  }
  // `op` in type t over `value` of the index, traced afresh.
  auto over = [&](ReduceOp op, DType t, const std::string& var_name, auto&& value) {
    const std::vector<ir::Var> idx = space_indices(ctx, static_cast<int>(shape.size()));
    return emit_reduce(ctx, op, t, var_name, idx, shape, value(refs(idx)), origin);
  };
  switch (r) {
    case Reduction::Any:
    case Reduction::All: {
      const ir::Var v = over(truth_op(r), DType::I32, name, [&](const auto& i) { return nonzero(in, i, DType::I32); });
      return Node{bin(BinaryOp::Gt, ir::make_ref(v), ir::make_const(DType::I32, 0)), result, false, false};
    }
    case Reduction::CountNonzero: {
      const ir::Var v = over(ReduceOp::Add, DType::I64, name, [&](const auto& i) { return nonzero(in, i, DType::I64); });
      return Node{ir::make_ref(v), result, false, false};
    }
    case Reduction::Ptp: {
      const ir::Var hi = plain(ReduceOp::Max, name + "_max"), lo = plain(ReduceOp::Min, name + "_min");
      return Node{let(ctx, name, bin(BinaryOp::Sub, ir::make_ref(hi), ir::make_ref(lo))), result, false, false};
    }
    case Reduction::NanSum: {
      const ir::Var v = over(ReduceOp::Add, vt, name, [&](const auto& i) { return nan_as_zero(in, i, vt); });
      return Node{ir::make_ref(v), result, false, false};
    }
    case Reduction::NanMean: {
      const ir::Var s = over(ReduceOp::Add, vt, name + "_sum", [&](const auto& i) { return nan_as_zero(in, i, vt); });
      const ir::Var c = over(ReduceOp::Add, DType::I64, name + "_count", [&](const auto& i) { return not_nan(in, i, DType::I64); });
      return Node{let(ctx, name, bin(BinaryOp::Div, ir::make_ref(s), ir::make_cast(vt, ir::make_ref(c)))), result, false,
                  false};
    }
    default: break;
  }
  const ir::Var v = plain(op_of(r), name);
  return Node{ir::make_cast(result, ir::make_ref(v)), result, false, false};
}

ArrayHandle reduce_axis(Reduction r, const ArrayHandle& a, DType result, int axis, bool keepdims, int ddof, Where w) {
  TraceContext& ctx = TraceContext::active("an array reduction");
  ctx.begin_statement();
  const Input in = prepare(ctx, OpArg{&a, nullptr});
  const int rank = a.rank;
  const std::string what = fmt::format("{}({}, {}{})", name_of(r), in.label, axis, keepdims ? ", keepdims" : "");
  const int ax = normalized_axis(ctx, axis, rank, what, w);
  if (rank == 1 && !keepdims)
    ctx.fail(fmt::format("`{}` reduces the only axis of a 1-d array to a scalar: use the whole-array form, or keepdims", what),
             w);
  const std::string origin = what + at(w);
  const std::string name = result_name(w, name_of(r));
  const std::vector<ir::Expr>& shape = in.extents;
  const ir::Expr n = shape[static_cast<size_t>(ax)];
  std::vector<ir::Expr> out_shape;
  for (int d = 0; d < rank; ++d)
    if (d != ax) out_shape.push_back(shape[static_cast<size_t>(d)]);
    else if (keepdims) out_shape.push_back(ix::c(1));
  if (needs_elements(r)) {
    // Only an output element that would reduce nothing is an error: with no output elements there is none.
    ir::Expr cond = ix::lt(ix::c(0), n);
    for (int d = 0; d < rank; ++d)
      if (d != ax && !ir::dyn<ir::ConstExpr>(cond))
        cond = bin(BinaryOp::Or, cond, ix::eq(shape[static_cast<size_t>(d)], ix::c(0)));
    nonempty_check(ctx, cond, what, shape, w);
  }
  const DType vt = value_type(r, elem_of(a), result);

  // Traces `reduce target = op along ax over shape of value(idx)`.
  auto reduce_along = [&](ReduceOp op, const std::string& var_name, DType t, auto&& value) {
    const std::vector<ir::Var> idx = space_indices(ctx, rank);
    const ir::Var target = ctx.new_array(ir::reduce_result_type(op, t), static_cast<int>(out_shape.size()), var_name, {});
    ctx.emit(ir::make_reduce_axis(target, op, ax, keepdims, idx, shape, value(refs(idx)), origin));
    return new_handle(ctx, target, out_shape, what);
  };
  // The index of `out`'s element for index `idx` of the reduced space.
  auto out_index = [&](const std::vector<ir::Expr>& idx, bool keep) {
    std::vector<ir::Expr> o;
    for (int d = 0; d < rank; ++d)
      if (d != ax) o.push_back(idx[static_cast<size_t>(d)]);
      else if (keep) o.push_back(ix::c(0));
    return o;
  };
  auto out_space = [&] { return space_indices(ctx, static_cast<int>(out_shape.size())); };
  // `op` along the axis over the elements of the array (converted to vt), or (`internal`: the result is
  // not handed to the user) the same reduction traced before.
  auto plain = [&](ReduceOp op, const std::string& var_name, bool internal) {
    if (internal)
      if (const Reused* r = find_reused(ctx, in, op, vt, ax, keepdims)) return r->result;
    ArrayHandle h = reduce_along(op, var_name, vt, [&](const auto& i) { return read(in, i, vt); });
    remember(ctx, in, op, vt, ax, keepdims, nullptr, h);
    return h;
  };

  if (r == Reduction::Mean || r == Reduction::Var || r == Reduction::Std) {
    const ir::Expr fn = ir::make_cast(vt, n);
    if (r == Reduction::Mean) {
      const ArrayHandle s = plain(ReduceOp::Add, name + "_sum", true);
      const auto o = out_space();
      return emit_map(ctx, vt, name, o, out_shape, bin(BinaryOp::Div, ir::make_load(s.var, refs(o)), fn), what, origin);
    }
    // Two passes: the mean (kept as a dimension of extent 1), then the squared deviations from it.
    const ArrayHandle s = plain(ReduceOp::Add, name + "_sum", true);
    std::vector<ir::Expr> kept_shape = out_shape;
    if (!keepdims) kept_shape.insert(kept_shape.begin() + ax, ix::c(1));
    const std::vector<ir::Var> mi = space_indices(ctx, rank);
    std::vector<ir::Expr> s_index = refs(mi);
    if (!keepdims) s_index.erase(s_index.begin() + ax);
    const ArrayHandle m = emit_map(ctx, vt, name + "_mean", mi, kept_shape,
                                   bin(BinaryOp::Div, ir::make_load(s.var, s_index), fn), what, origin);
    const ArrayHandle ss = reduce_along(ReduceOp::Add, name + "_sq", vt, [&](const auto& i) {
      const ir::Expr d = bin(BinaryOp::Sub, read(in, i, vt), ir::make_load(m.var, out_index(i, true)));
      return bin(BinaryOp::Mul, d, d);
    });
    const auto o = out_space();
    ir::Expr v = bin(BinaryOp::Div, ir::make_load(ss.var, refs(o)), divisor(n, ddof, vt));
    if (r == Reduction::Std) v = ir::make_call(Intrinsic::Sqrt, {v});
    return emit_map(ctx, vt, name, o, out_shape, v, what, origin);
  }

  switch (r) {
    case Reduction::Any:
    case Reduction::All: {
      const ArrayHandle t = reduce_along(truth_op(r), name + "_i32", DType::I32,
                                         [&](const auto& i) { return nonzero(in, i, DType::I32); });
      const auto o = out_space();
      return emit_map(ctx, DType::Bool, name, o, out_shape,
                      bin(BinaryOp::Gt, ir::make_load(t.var, refs(o)), ir::make_const(DType::I32, 0)), what, origin);
    }
    case Reduction::CountNonzero:
      return reduce_along(ReduceOp::Add, name, DType::I64, [&](const auto& i) { return nonzero(in, i, DType::I64); });
    case Reduction::Ptp: {
      const ArrayHandle hi = plain(ReduceOp::Max, name + "_max", true), lo = plain(ReduceOp::Min, name + "_min", true);
      const auto o = out_space();
      return emit_map(ctx, vt, name, o, out_shape,
                      bin(BinaryOp::Sub, ir::make_load(hi.var, refs(o)), ir::make_load(lo.var, refs(o))), what, origin);
    }
    case Reduction::NanSum:
      return reduce_along(ReduceOp::Add, name, vt, [&](const auto& i) { return nan_as_zero(in, i, vt); });
    case Reduction::NanMean: {
      const ArrayHandle s = reduce_along(ReduceOp::Add, name + "_sum", vt, [&](const auto& i) { return nan_as_zero(in, i, vt); });
      const ArrayHandle c = reduce_along(ReduceOp::Add, name + "_count", DType::I64,
                                         [&](const auto& i) { return not_nan(in, i, DType::I64); });
      const auto o = out_space();
      return emit_map(ctx, vt, name, o, out_shape,
                      bin(BinaryOp::Div, ir::make_load(s.var, refs(o)), ir::make_cast(vt, ir::make_load(c.var, refs(o)))),
                      what, origin);
    }
    default: break;
  }
  const ArrayHandle red = plain(op_of(r), name, result != vt);
  if (red.var->type.elem == result) return red;
  // min/max of a bool array, reduced as int32.
  const auto o = out_space();
  return emit_map(ctx, result, name + "_bool", o, out_shape, ir::make_cast(result, ir::make_load(red.var, refs(o))), what,
                  origin);
}

Node dot(const ArrayHandle& a, const ArrayHandle& b, DType t, Where w) {
  TraceContext& ctx = TraceContext::active("kiln::dot");
  ctx.begin_statement();
  const Input x = prepare(ctx, OpArg{&a, nullptr}), y = prepare(ctx, OpArg{&b, nullptr});
  const std::string what = "dot(" + x.label + ", " + y.label + ")";
  const ir::Expr cond = ix::eq(x.extents[0], y.extents[0]);
  if (const auto* k = ir::dyn<ir::ConstExpr>(cond); k && !k->i) ctx.fail(fmt::format("shapes not aligned in `{}`", what), w);
  if (!ir::is_const(cond))
    ctx.emit(ir::make_check(cond, kShapeMismatch,
                            "shapes ({}) and ({}) not aligned in `" + what + "`" + where_text(w) + ": {} (dim 0) != {} (dim 0)",
                            {x.extents[0], y.extents[0], x.extents[0], y.extents[0]}));
  const std::vector<ir::Var> idx = space_indices(ctx, 1);
  const ir::Expr value = bin(BinaryOp::Mul, read(x, refs(idx), t), read(y, refs(idx), t));
  const ir::Var s = emit_reduce(ctx, ReduceOp::Add, t, result_name(w, "dot"), idx, {x.extents[0]}, value, what + at(w));
  return Node{ir::make_ref(s), t, false, false};
}

ArrayHandle dot_array(const ArrayHandle& a, const ArrayHandle& b, DType t, Where w) {
  TraceContext& ctx = TraceContext::active("kiln::dot");
  ctx.begin_statement();
  const Input x = prepare(ctx, OpArg{&a, nullptr}), y = prepare(ctx, OpArg{&b, nullptr});
  const std::string what = "dot(" + x.label + ", " + y.label + ")";
  // The contracted dimensions: the last of a, the first of b (b's only one for a vector).
  const size_t ka = x.extents.size() - 1;
  const ir::Expr& ea = x.extents[ka];
  const ir::Expr& eb = y.extents[0];
  const ir::Expr cond = ix::eq(ea, eb);
  if (const auto* k = ir::dyn<ir::ConstExpr>(cond); k && !k->i) ctx.fail(fmt::format("shapes not aligned in `{}`", what), w);
  if (!ir::is_const(cond)) {
    std::vector<ir::Expr> args = x.extents;
    args.insert(args.end(), y.extents.begin(), y.extents.end());
    args.push_back(ea);
    args.push_back(eb);
    ctx.emit(ir::make_check(cond, kShapeMismatch,
                            "shapes " + shape_holes(x.extents.size()) + " and " + shape_holes(y.extents.size()) +
                                " not aligned in `" + what + "`" + where_text(w) + ": {} (dim " + std::to_string(ka) +
                                ") != {} (dim 0)",
                            std::move(args)));
  }
  // The space: the free dimensions of a, the contracted one (reduced), the free ones of b. Reducing along
  // a middle axis keeps b's rows innermost (unit stride) when lowered.
  const size_t free_a = ka, free_b = y.extents.size() - 1;
  const int axis = static_cast<int>(free_a);
  std::vector<ir::Expr> shape(x.extents.begin(), x.extents.end());
  shape.insert(shape.end(), y.extents.begin() + 1, y.extents.end());
  std::vector<ir::Expr> out_shape = shape;
  out_shape.erase(out_shape.begin() + axis);
  const std::vector<ir::Var> idx = space_indices(ctx, static_cast<int>(shape.size()));
  const std::vector<ir::Expr> i = refs(idx);
  const std::vector<ir::Expr> ia(i.begin(), i.begin() + axis + 1);
  const std::vector<ir::Expr> ib(i.begin() + axis, i.begin() + axis + 1 + static_cast<long>(free_b));
  const ir::Expr value = bin(BinaryOp::Mul, ir::make_cast(t, ir::make_load(a.var, base_indices(a, ia))),
                             ir::make_cast(t, ir::make_load(b.var, base_indices(b, ib))));
  const ir::Var target = ctx.new_array(t, static_cast<int>(out_shape.size()), result_name(w, "dot"), w);
  ctx.emit(ir::make_reduce_axis(target, ReduceOp::Add, axis, false, idx, shape, value, what + at(w)));
  return new_handle(ctx, target, out_shape, what);
}

}  // namespace kiln::detail
