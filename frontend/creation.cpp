// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// arange and linspace: maps over a 1-d index space whose length is computed from the bounds, with NumPy's
// formulas (so results agree with NumPy element for element).
#include <fmt/format.h>

#include "frontend/array_info.hpp"
#include "frontend/index_math.hpp"
#include "frontend/source_names.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "kiln/abi.hpp"
#include "kiln/creation.hpp"

namespace kiln::detail {
namespace {

ir::Expr bin(BinaryOp op, const ir::Expr& a, const ir::Expr& b) { return ir::make_binary(op, a, b); }

std::string name_at(const Where& w, const char* fallback) {
  std::string n = declared_name(w);
  return n.empty() ? fallback : n;
}

std::string where_text(const Where& w) { return w.str().empty() ? "" : " (at " + w.str() + ")"; }

ArrayHandle emit_range(TraceContext& ctx, DType t, const ir::Expr& length, const ir::Var& i, const ir::Expr& value,
                       const std::string& what, const Where& w, const char* fallback) {
  const ir::Var var = ctx.new_array(t, 1, name_at(w, fallback), w);
  check_new_array(ctx, var, {length}, w);
  ctx.emit(ir::make_map(var, {i}, {length}, value, what + at(w)));
  return new_handle(ctx, var, {length}, what);
}

}  // namespace

ArrayHandle arange(DType t, const TracedValue* lo_v, const TracedValue& hi_v, const TracedValue* step_v, Where w) {
  TraceContext& ctx = TraceContext::active("kiln::arange");
  ctx.begin_statement();
  const ir::Expr lo = lo_v ? stable(ctx, lo_v->read(), "lo") : ir::make_const(t, 0);
  const ir::Expr hi = stable(ctx, hi_v.read(), "hi");
  const ir::Expr step = step_v ? stable(ctx, step_v->read(), "step") : ir::make_const(t, 1);
  const std::string what = "arange(" + ir::to_string(lo) + ", " + ir::to_string(hi) + ", " + ir::to_string(step) + ")";
  const ir::Expr zero = ir::make_const(t, 0);
  if (const auto* k = ir::dyn<ir::ConstExpr>(step); k && k->as_double() == 0)
    ctx.fail(fmt::format("arange step is zero in {}", what), w);
  if (!ir::is_const(step))
    ctx.emit(ir::make_check(bin(BinaryOp::Ne, step, zero), kValueError, "arange step is zero in " + what + where_text(w)));

  ir::Expr length;
  if (is_float(t)) {
    // ceil((hi - lo) / step), saturating, NaN -> 0 (an infinite or NaN bound gives no elements).
    length = ir::make_cast(DType::I64, ir::make_call(Intrinsic::Ceil, {bin(BinaryOp::Div, bin(BinaryOp::Sub, hi, lo), step)}));
  } else {
    const ir::Expr a = ir::make_cast(DType::I64, lo), b = ir::make_cast(DType::I64, hi), s = ir::make_cast(DType::I64, step);
    const ir::Expr up = ix::div(ix::add(ix::sub(b, a), ix::sub(s, ix::c(1))), s);
    const ir::Expr down = ix::div(ix::sub(ix::sub(a, b), ix::add(s, ix::c(1))), ix::sub(ix::c(0), s));
    length = ix::select(ix::lt(ix::c(0), s), up, down);
  }
  length = ix::max(length, ix::c(0));
  const ir::Var i = ctx.new_index("i");
  const ir::Expr value = bin(BinaryOp::Add, lo, bin(BinaryOp::Mul, ir::make_cast(t, ir::make_ref(i)), step));
  return emit_range(ctx, t, length, i, value, what, w, "arange");
}

ArrayHandle linspace(DType t, const TracedValue& lo_v, const TracedValue& hi_v, const Int& num, bool endpoint, Where w) {
  TraceContext& ctx = TraceContext::active("kiln::linspace");
  ctx.begin_statement();
  const ir::Expr lo = stable(ctx, lo_v.read(), "lo");
  const ir::Expr hi = stable(ctx, hi_v.read(), "hi");
  const ir::Expr n = stable(ctx, num.read(), "num");
  const std::string what = "linspace(" + ir::to_string(lo) + ", " + ir::to_string(hi) + ", " + ir::to_string(n) + ")";
  if (const auto k = ix::value(n); k && *k < 0)
    ctx.fail(fmt::format("linspace of a negative number of samples in {}", what), w);
  if (!ix::value(n))
    ctx.emit(ir::make_check(bin(BinaryOp::Ge, n, ix::c(0)), kValueError,
                            "linspace of a negative number of samples ({}) in " + what + where_text(w), {n}));

  // NumPy: step = (hi - lo) / div; y = lo + i * step, or lo + i / div * (hi - lo) when the step underflows
  // to 0; the endpoint is stored exactly.
  const ir::Expr div = endpoint ? ix::sub(n, ix::c(1)) : n;
  const ir::Expr delta = bin(BinaryOp::Sub, hi, lo);
  const ir::Expr fdiv = ir::make_cast(t, div);
  const ir::Expr step = bin(BinaryOp::Div, delta, fdiv);
  const ir::Var i = ctx.new_index("i");
  const ir::Expr fi = ir::make_cast(t, ir::make_ref(i));
  const ir::Expr zero = ir::make_const(t, 0);
  ir::Expr value = ir::make_select(
      ix::lt(ix::c(0), div),
      ir::make_select(bin(BinaryOp::Eq, step, zero), bin(BinaryOp::Add, lo, bin(BinaryOp::Mul, bin(BinaryOp::Div, fi, fdiv), delta)),
                      bin(BinaryOp::Add, lo, bin(BinaryOp::Mul, fi, step))),
      bin(BinaryOp::Add, lo, bin(BinaryOp::Mul, fi, delta)));
  if (endpoint)
    value = ir::make_select(ix::both(ix::eq(ir::make_ref(i), ix::sub(n, ix::c(1))), ix::lt(ix::c(1), n)), hi, value);
  return emit_range(ctx, t, ix::max(n, ix::c(0)), i, value, what, w, "linspace");
}

}  // namespace kiln::detail
