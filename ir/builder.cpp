// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/builder.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ir/compact.hpp"
#include "ir/printer.hpp"
#include "ir/random.hpp"
#include "ir/scan.hpp"
#include "ir/semantics.hpp"

namespace kiln::ir {
namespace {

[[noreturn]] void fail(const std::string& what) { throw IRError(fmt::format("malformed IR: {}", what)); }

/// An operand in a message: the expression and its type.
std::string operand_text(const Expr& e) { return e ? fmt::format(" [{} : {}]", to_string(e), name_of(e->type)) : ""; }

void require(bool ok, const char* what, const Expr& a = nullptr, const Expr& b = nullptr) {
  if (ok) return;
  fail(fmt::format("{}{}{}", what, operand_text(a), operand_text(b)));
}

void require_indices(const Var& array, const std::vector<Expr>& indices) {
  if (!array || !array->type.is_array()) fail("indexing a non-array");
  if (indices.size() != array->type.rank)
    fail(fmt::format("{} has rank {} but is indexed with {} indices", array->name, array->type.rank, indices.size()));
  for (const auto& i : indices) require(i && i->type == DType::I64, "array index must be i64", i);
}

void require_not_half(DType t, const char* what) {
  if (is_half(t)) fail(fmt::format("{} on {}: f16 and bf16 accumulate in f32 (convert the values first)", what, name_of(t)));
}

/// f16/bf16 operands converted to f32, where kiln computes with them.
Expr widened(const Expr& a) { return is_half(a->type) ? make_cast(DType::F32, a) : a; }

}  // namespace

Expr make_bool(bool v) { return std::make_shared<ConstExpr>(DType::Bool, v ? 1 : 0, 0.0); }

Expr make_int(DType t, std::int64_t v) {
  if (is_float(t)) fail("make_int with a float type");
  return std::make_shared<ConstExpr>(t, sem::wrap_int(t, v), 0.0);
}

Expr make_i64(std::int64_t v) { return make_int(DType::I64, v); }

Expr make_float(DType t, double v) {
  if (!is_float(t)) fail("make_float with a non-float type");
  // Rounded to the type as a conversion rounds (f16 and bf16 through f32).
  if (t != DType::F64) v = sem::with_type(t, [&](auto x) { return static_cast<double>(sem::cast<decltype(x), double>(v)); });
  return std::make_shared<ConstExpr>(t, 0, v);
}

Expr make_const(DType t, double v) {
  if (is_float(t)) return make_float(t, v);
  if (t == DType::Bool) return make_bool(v != 0);
  // Saturating, NaN -> 0: the same rule as a float-to-integer cast.
  return sem::with_type(t, [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) return make_int(t, static_cast<std::int64_t>(sem::cast<T, double>(v)));
    else return make_float(t, v);  // not reached: floats and bool are handled above
  });
}

Expr make_ref(Var v) {
  if (!v) fail("reference to a null variable");
  if (v->type.is_array()) fail(fmt::format("array {} used as a scalar value", v->name));
  return std::make_shared<VarRefExpr>(std::move(v));
}

Expr make_load(Var array, std::vector<Expr> indices) {
  require_indices(array, indices);
  return std::make_shared<LoadExpr>(std::move(array), std::move(indices));
}

Expr make_dim(Var array, int axis) {
  if (!array || !array->type.is_array()) fail("dim of a non-array");
  if (axis < 0 || axis >= array->type.rank) fail(fmt::format("dim axis out of range for {}", array->name));
  return std::make_shared<DimExpr>(std::move(array), axis);
}

Expr make_unary(UnaryOp op, Expr a) {
  require(a != nullptr, "null operand");
  switch (op) {
    case UnaryOp::Neg: require(a->type != DType::Bool, "negation of bool", a); break;
    case UnaryOp::Not: require(a->type == DType::Bool, "logical not needs bool", a); break;
    case UnaryOp::BitNot: require(is_int(a->type), "bitwise not needs an integer", a); break;
  }
  const DType t = a->type;
  if (is_half(t)) return make_cast(t, make_unary(op, widened(a)));
  return std::make_shared<UnaryExpr>(t, op, std::move(a));
}

Expr make_binary(BinaryOp op, Expr a, Expr b) {
  require(a && b, "null operand");
  require(a->type == b->type, "operand types differ", a, b);
  const DType t = a->type;
  switch (op) {
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div:
    case BinaryOp::Mod: case BinaryOp::Min: case BinaryOp::Max:
      require(t != DType::Bool, "arithmetic on bool", a, b);
      break;
    case BinaryOp::BitAnd: case BinaryOp::BitOr: case BinaryOp::BitXor:
      require(!is_float(t), "bitwise operation on a float", a, b);
      break;
    case BinaryOp::Shl: case BinaryOp::Shr:
      require(is_int(t), "shift of a non-integer", a, b);
      break;
    case BinaryOp::And: case BinaryOp::Or:
      require(t == DType::Bool, "logical operation needs bool operands", a, b);
      break;
    default:
      break;  // comparisons accept every type
  }
  if (is_half(t)) {
    Expr r = make_binary(op, widened(a), widened(b));
    return is_comparison(op) ? r : make_cast(t, std::move(r));
  }
  const DType result = is_comparison(op) ? DType::Bool : t;
  return std::make_shared<BinaryExpr>(result, op, std::move(a), std::move(b));
}

Expr make_select(Expr cond, Expr a, Expr b) {
  require(cond && a && b, "null operand");
  require(cond->type == DType::Bool, "select condition must be bool", cond);
  require(a->type == b->type, "select operands differ in type", a, b);
  return std::make_shared<SelectExpr>(std::move(cond), std::move(a), std::move(b));
}

Expr make_cast(DType t, Expr a) {
  require(a != nullptr, "null operand");
  if (a->type == t) return a;
  return std::make_shared<CastExpr>(t, std::move(a));
}

Expr make_call(Intrinsic fn, std::vector<Expr> args) {
  if (static_cast<int>(args.size()) != arity(fn))
    fail(fmt::format("{} takes {} arguments", name_of(fn), arity(fn)));
  for (const auto& x : args) {
    require(x != nullptr, "null argument");
    require(x->type == args[0]->type, "intrinsic arguments differ in type", args[0], x);
  }
  const DType t = args[0]->type;
  if (random::is_random(fn)) {
    require(t == DType::I64, "a random intrinsic's key and counter are i64", args[0]);
    return std::make_shared<CallExpr>(random::result_type(fn), fn, std::move(args));
  }
  if (is_float_only(fn)) require(is_float(t), "intrinsic needs float arguments", args[0]);
  else require(t != DType::Bool, "intrinsic on bool", args[0]);
  if (is_half(t)) {
    for (auto& x : args) x = widened(x);
    Expr r = make_call(fn, std::move(args));
    return returns_bool(fn) ? r : make_cast(t, std::move(r));
  }
  return std::make_shared<CallExpr>(returns_bool(fn) ? DType::Bool : t, fn, std::move(args));
}

Expr identity_of(ReduceOp op, DType t) {
  switch (op) {
    case ReduceOp::ArgMin: return identity_of(ReduceOp::Min, t);
    case ReduceOp::ArgMax: return identity_of(ReduceOp::Max, t);
    case ReduceOp::Add: return make_const(t, is_float(t) ? -0.0 : 0.0);  // -0 + x == x for every x, +0 too
    case ReduceOp::Mul: return make_const(t, 1);
    case ReduceOp::Min:
      if (is_float(t)) return make_float(t, std::numeric_limits<double>::infinity());
      return make_int(t, sem::int_max(t));
    case ReduceOp::Max:
      if (is_float(t)) return make_float(t, -std::numeric_limits<double>::infinity());
      return make_int(t, sem::int_min(t));
  }
  fail("unknown reduction");
}

Stmt make_block(std::vector<Stmt> stmts) {
  for (const auto& s : stmts)
    if (!s) fail("null statement in block");
  return std::make_shared<BlockStmt>(std::move(stmts));
}

Stmt make_let(Var v, Expr init) {
  if (!v || v->kind != VarKind::Local || v->type.is_array()) fail("let needs a local scalar variable");
  require(init && init->type == v->type.elem, ("let initializer type differs for " + v->name).c_str(), init);
  return std::make_shared<LetStmt>(std::move(v), std::move(init));
}

Stmt make_assign(Var v, Expr value) {
  if (!v || v->kind != VarKind::Local || v->type.is_array())
    fail(fmt::format("assignment to {}, which is not a local scalar", v ? v->name : std::string("null")));
  require(value && value->type == v->type.elem, ("assigned value type differs for " + v->name).c_str(), value);
  return std::make_shared<AssignStmt>(std::move(v), std::move(value));
}

Stmt make_store(Var array, std::vector<Expr> indices, Expr value) {
  require_indices(array, indices);
  require(value && value->type == array->type.elem, ("stored value type differs for " + array->name).c_str(), value);
  return std::make_shared<StoreStmt>(std::move(array), std::move(indices), std::move(value));
}

Stmt make_for(Var index, Expr begin, Expr end, Stmt body) {
  if (!index || index->kind != VarKind::Index || index->type != Type::scalar(DType::I64))
    fail("for loop index must be an i64 index variable");
  require(begin && begin->type == DType::I64 && end && end->type == DType::I64, "loop bounds must be i64", begin, end);
  if (!body) fail("null loop body");
  return std::make_shared<ForStmt>(std::move(index), std::move(begin), std::move(end), std::move(body));
}

Stmt make_parfor(std::vector<Var> indices, std::vector<Expr> begins, std::vector<Expr> ends, Stmt body,
                 std::vector<Reduction> reductions, std::string origin) {
  return make_parfor(std::move(indices), std::move(begins), std::move(ends), std::move(body), std::move(reductions), {},
                     std::move(origin));
}

namespace {

void require_index_space(const std::vector<Var>& indices, const std::vector<Expr>& shape, const char* what) {
  if (indices.empty() || indices.size() > static_cast<size_t>(kMaxRank))
    fail(fmt::format("{} needs 1..{} dimensions", what, kMaxRank));
  if (shape.size() != indices.size()) fail(fmt::format("{}: shape and indices differ in length", what));
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d] || indices[d]->kind != VarKind::Index || indices[d]->type != Type::scalar(DType::I64))
      fail(fmt::format("{} index must be an i64 index variable", what));
    require(shape[d] && shape[d]->type == DType::I64, "extents must be i64", shape[d]);
  }
}

}  // namespace

Stmt make_parfor(std::vector<Var> indices, std::vector<Expr> begins, std::vector<Expr> ends, Stmt body,
                 std::vector<Reduction> reductions, std::vector<ArrayReduction> array_reductions, std::string origin) {
  if (indices.empty() || indices.size() > static_cast<size_t>(kMaxRank))
    fail(fmt::format("parfor needs 1..{} dimensions", kMaxRank));
  if (begins.size() != indices.size() || ends.size() != indices.size()) fail("parfor bounds do not match its rank");
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d] || indices[d]->kind != VarKind::Index || indices[d]->type != Type::scalar(DType::I64))
      fail("parfor index must be an i64 index variable");
    require(begins[d] && begins[d]->type == DType::I64 && ends[d] && ends[d]->type == DType::I64,
            "parfor bounds must be i64", begins[d], ends[d]);
  }
  for (const auto& r : reductions) {
    if (!r.var || r.var->kind != VarKind::Local || r.var->type.is_array() || r.var->type.elem == DType::Bool)
      fail("reduction variable must be a numeric local scalar");
    require_not_half(r.var->type.elem, "a parfor reduction");
    if (is_arg_reduction(r.op) != (r.index != nullptr))
      fail("argmin/argmax reductions (and only they) carry an index variable");
    if (r.index && (r.index->kind != VarKind::Local || r.index->type != Type::scalar(DType::I64)))
      fail("the index of an argmin/argmax reduction must be a local i64");
  }
  for (const auto& r : array_reductions) {
    if (!r.array || !r.array->type.is_array() || r.array->type.elem == DType::Bool)
      fail("array reduction needs a numeric array");
    require_not_half(r.array->type.elem, "an array reduction");
    if (is_arg_reduction(r.op)) fail("array reductions are add, mul, min or max");
  }
  if (!body) fail("null parfor body");
  return std::make_shared<ParforStmt>(std::move(indices), std::move(begins), std::move(ends), std::move(body),
                                      std::move(reductions), std::move(array_reductions), std::move(origin));
}

Stmt make_if(Expr cond, Stmt then_body, Stmt else_body) {
  require(cond && cond->type == DType::Bool, "if condition must be bool", cond);
  if (!then_body) fail("null then branch");
  return std::make_shared<IfStmt>(std::move(cond), std::move(then_body), std::move(else_body));
}

Stmt make_allocate(Var array, std::vector<Expr> shape) {
  if (!array || array->kind != VarKind::Local || !array->type.is_array()) fail("allocate needs a local array variable");
  if (shape.size() != array->type.rank) fail(fmt::format("allocation shape does not match the rank of {}", array->name));
  for (const auto& s : shape) require(s && s->type == DType::I64, "allocation extents must be i64", s);
  return std::make_shared<AllocateStmt>(std::move(array), std::move(shape));
}

Stmt make_check(Expr cond, std::int32_t code, std::string message, std::vector<Expr> args) {
  require(cond && cond->type == DType::Bool, "check condition must be bool", cond);
  if (code == 0) fail("a check needs a failure status code");
  size_t holes = 0;
  for (size_t p = message.find("{}"); p != std::string::npos; p = message.find("{}", p + 2)) ++holes;
  if (holes != args.size()) fail(fmt::format("check message has {} placeholders for {} values", holes, args.size()));
  for (const auto& a : args) require(a && a->type == DType::I64, "check message values must be i64", a);
  return std::make_shared<CheckStmt>(std::move(cond), code, std::move(message), std::move(args));
}

Stmt make_map(Var target, std::vector<Var> indices, std::vector<Expr> shape, Expr value, std::string origin) {
  require_index_space(indices, shape, "map");
  if (!target || target->kind != VarKind::Local || !target->type.is_array() || target->type.rank != shape.size())
    fail("an allocating map needs a local array target of the space's rank");
  require(value && value->type == target->type.elem, "map value type differs from its target's", value);
  std::vector<Expr> ti;
  for (const auto& i : indices) ti.push_back(make_ref(i));
  return std::make_shared<MapStmt>(std::move(target), true, std::move(indices), std::move(shape), std::move(ti),
                                   std::move(value), std::move(origin));
}

Stmt make_map_into(Var target, std::vector<Var> indices, std::vector<Expr> shape, std::vector<Expr> target_index,
                   Expr value, std::string origin) {
  require_index_space(indices, shape, "map");
  require_indices(target, target_index);
  require(value && value->type == target->type.elem, "map value type differs from its target's", value);
  return std::make_shared<MapStmt>(std::move(target), false, std::move(indices), std::move(shape),
                                   std::move(target_index), std::move(value), std::move(origin));
}

Stmt make_launch(int kernel, Stmt parfor) {
  if (kernel < 0) fail("a launch needs a kernel number >= 0");
  if (!parfor || parfor->kind != StmtKind::Parfor) fail("a launch runs a parfor");
  return std::make_shared<LaunchStmt>(kernel, std::move(parfor));
}

Stmt make_bind(Var target, Var source, bool declare) {
  if (!target || target->kind != VarKind::Binding || !target->type.is_array())
    fail("bind needs an array variable of kind Binding as its target");
  if (!source || !source->type.is_array()) fail("bind needs an array source");
  const Type& t = target->type;
  const Type& s = source->type;
  if (t.elem != s.elem || t.rank != s.rank)
    fail(fmt::format("bind of {} ({}) to {} ({})", target->name, to_string(t), source->name, to_string(s)));
  // What the binding promises about its arrays must hold for every array it names.
  if ((t.unit_stride && !s.unit_stride) || (t.unit_dims & ~s.unit_dims))
    fail(fmt::format("bind of {} to {}, which lacks the layout its type promises", target->name, source->name));
  return std::make_shared<BindStmt>(std::move(target), std::move(source), declare);
}

Stmt make_stencil(Var target, bool allocate, std::vector<Var> indices, std::vector<Expr> shape,
                  std::vector<Expr> target_index, Expr value, std::vector<Var> windows, std::vector<std::int64_t> lo,
                  std::vector<std::int64_t> hi, Border border, Expr cval, std::string origin) {
  require_index_space(indices, shape, "stencil");
  const size_t rank = shape.size();
  if (allocate) {
    if (!target || target->kind != VarKind::Local || !target->type.is_array() || target->type.rank != rank)
      fail("an allocating stencil needs a local array target of the space's rank");
    target_index.clear();
    for (const auto& i : indices) target_index.push_back(make_ref(i));
  } else {
    require_indices(target, target_index);
  }
  require(value && value->type == target->type.elem, "stencil value type differs from its target's", value);
  if (windows.empty()) fail("a stencil needs at least one window array");
  for (const auto& w : windows) {
    if (!w || !w->type.is_array() || w->type.rank != rank) fail("stencil windows must be arrays of the space's rank");
    if (w->type.elem != windows[0]->type.elem) fail("stencil windows must share an element type");
  }
  if (lo.size() != rank || hi.size() != rank) fail("stencil neighbourhood does not match the space's rank");
  for (size_t d = 0; d < rank; ++d)
    if (lo[d] > 0 || hi[d] < 0) fail("stencil neighbourhood must contain offset 0 in every dimension");
  if ((border == Border::constant) != (cval != nullptr)) fail("a constant border (and only it) needs a value");
  if (cval) require(cval->type == windows[0]->type.elem, "border value type differs from the windows'", cval);
  return std::make_shared<StencilStmt>(std::move(target), allocate, std::move(indices), std::move(shape),
                                       std::move(target_index), std::move(value), std::move(windows), std::move(lo),
                                       std::move(hi), border, std::move(cval), std::move(origin));
}

DType reduce_result_type(ReduceOp op, DType t) { return is_arg_reduction(op) ? DType::I64 : t; }

Stmt make_reduce(Var result, ReduceOp op, std::vector<Var> indices, std::vector<Expr> shape, Expr value,
                 std::string origin) {
  require_index_space(indices, shape, "reduce");
  require(value && value->type != DType::Bool, "reductions need numeric values", value);
  require_not_half(value->type, "a reduction");
  if (!result || result->kind != VarKind::Local || !result->type.is_scalar() ||
      result->type.elem != reduce_result_type(op, value->type))
    fail("reduce result must be a local scalar of the reduction's type");
  return std::make_shared<ReduceStmt>(std::move(result), op, std::move(indices), std::move(shape), std::move(value),
                                      std::move(origin));
}

Stmt make_scan(Var source, Var out, ReduceOp op, DType type, bool exclusive, std::string origin) {
  if (!source || !out || !source->type.is_array() || !out->type.is_array() || !always_compact(*source) ||
      !always_compact(*out) || source->type.rank != out->type.rank)
    fail("scan needs compact arrays of one rank: allocated by the kernel (kind Local) or 1-d parameters of stride 1");
  if (op != ReduceOp::Add && op != ReduceOp::Mul && op != ReduceOp::Min && op != ReduceOp::Max)
    fail("a scan combines with Add, Mul, Min or Max");
  if (!scan_stmt_types(source->type.elem, type, out->type.elem))
    fail(fmt::format("no single-statement scan of {} in {} into {}", name_of(source->type.elem), name_of(type),
                     name_of(out->type.elem)));
  return std::make_shared<ScanStmt>(std::move(source), std::move(out), op, type, exclusive, std::move(origin));
}

Stmt make_sort(Var keys, Var positions, std::string origin) {
  if (!keys || !keys->type.is_array() || !always_compact(*keys))
    fail("sort needs compact keys: an array the kernel allocated (kind Local) or a 1-d parameter of stride 1");
  if (positions && (!always_compact(*positions) || positions->type.elem != DType::I64 ||
                    positions->type.rank != keys->type.rank))
    fail(fmt::format("sort positions {} ({}) must be a compact i64 array of the keys' rank {}", positions->name,
                     to_string(positions->type), int(keys->type.rank)));
  return std::make_shared<SortStmt>(std::move(keys), std::move(positions), std::move(origin));
}

Stmt make_reduce_axis(Var target, ReduceOp op, int axis, bool keepdims, std::vector<Var> indices,
                      std::vector<Expr> shape, Expr value, std::string origin) {
  require_index_space(indices, shape, "reduce");
  if (axis < 0 || axis >= static_cast<int>(shape.size())) fail("reduction axis out of range");
  require(value && value->type != DType::Bool, "reductions need numeric values", value);
  require_not_half(value->type, "a reduction");
  const size_t rank = keepdims ? shape.size() : shape.size() - 1;
  if (rank == 0) fail("an axis reduction of a 1-d space is a whole reduction (use make_reduce)");
  if (!target || target->kind != VarKind::Local || target->type.rank != rank ||
      target->type.elem != reduce_result_type(op, value->type))
    fail("axis reduction target must be a local array of the result's rank and type");
  return std::make_shared<ReduceAxisStmt>(std::move(target), op, axis, keepdims, std::move(indices), std::move(shape),
                                          std::move(value), std::move(origin));
}

Stmt with_body(const ParforStmt& p, Stmt body) {
  return make_parfor(p.indices, p.begins, p.ends, std::move(body), p.reductions, p.array_reductions, p.origin);
}

Stmt with_reductions(const ParforStmt& p, std::vector<Reduction> reductions) {
  return make_parfor(p.indices, p.begins, p.ends, p.body, std::move(reductions), p.array_reductions, p.origin);
}

Stmt with_array_reductions(const ParforStmt& p, std::vector<ArrayReduction> array_reductions) {
  return make_parfor(p.indices, p.begins, p.ends, p.body, p.reductions, std::move(array_reductions), p.origin);
}

bool is_const(const Expr& e) { return e && e->kind == ExprKind::Const; }

bool is_const_value(const Expr& e, double v) {
  const auto* c = dyn<ConstExpr>(e);
  return c && c->as_double() == v;
}

}  // namespace kiln::ir
