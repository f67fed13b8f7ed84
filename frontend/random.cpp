// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Arrays of random numbers (kiln/random.hpp): one map over the array's index space whose value at row-major
// flat index f is the random intrinsic at (key, first + f), so that an array and a prange over the same
// indices draw the same numbers, and fusion treats the map like any other elementwise one.
#include <fmt/format.h>

#include "frontend/array_info.hpp"
#include "frontend/index_math.hpp"
#include "frontend/source_names.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/random.hpp"
#include "kiln/random.hpp"

namespace kiln::random::detail {

using kiln::detail::ArrayHandle;
using kiln::detail::TraceContext;
using kiln::detail::TracedValue;
using kiln::detail::Where;
namespace ix = kiln::detail::ix;

ArrayHandle fill(Intrinsic fn, const Int* const* extents, int n, const Int& key, const Int& first,
                 const TracedValue* shift, const TracedValue* scale, Where w) {
  TraceContext& ctx = TraceContext::active("kiln::random");
  ctx.begin_statement();
  std::vector<ir::Expr> shape;
  for (int k = 0; k < n; ++k) shape.push_back(extents[k]->read().expr);
  // Read once, before the map: a key or offset that reads memory or a local keeps the value it has here.
  const ir::Expr k = kiln::detail::stable(ctx, key.read(), "key");
  const ir::Expr f0 = kiln::detail::stable(ctx, first.read(), "first");
  const ir::Expr add = shift ? kiln::detail::stable(ctx, shift->read(), "mean") : nullptr;
  const ir::Expr mul = scale ? kiln::detail::stable(ctx, scale->read(), "stddev") : nullptr;

  const DType t = ir::random::result_type(fn);
  const char* kind = fn == Intrinsic::RandomUniformF32 || fn == Intrinsic::RandomUniformF64 ? "uniform" : "normal";
  std::string name = kiln::detail::declared_name(w);
  if (name.empty()) name = kind;
  const ir::Var var = ctx.new_array(t, n, name, w);
  kiln::detail::check_new_array(ctx, var, shape, w);

  const std::vector<ir::Var> idx = kiln::detail::space_indices(ctx, n);
  ir::Expr flat = ir::make_ref(idx[0]);
  for (int d = 1; d < n; ++d) flat = ix::add(ix::mul(flat, shape[d]), ir::make_ref(idx[d]));
  ir::Expr value = ir::make_call(fn, {k, ix::add(f0, flat)});
  if (mul) value = ir::make_binary(BinaryOp::Mul, mul, value);
  if (add) value = ir::make_binary(BinaryOp::Add, add, value);

  std::string what = fmt::format("kiln::random::{}<{}>(key {}, first {}", kind, name_of(t), ir::to_string(k),
                                 ir::to_string(f0));
  if (add) what += ", mean " + ir::to_string(add) + ", stddev " + ir::to_string(mul);
  what += ")";
  ctx.emit(ir::make_map(var, idx, shape, value, what + kiln::detail::at(w)));

  // An extent that reads mutable state is referred to through the array afterwards.
  std::vector<ir::Expr> kept;
  for (int d = 0; d < n; ++d) {
    bool keeps = !ir::has_load(shape[d]);
    for (const ir::Var& v : ir::free_vars(shape[d])) keeps &= v->kind != ir::VarKind::Local;
    kept.push_back(keeps ? shape[d] : ir::make_dim(var, d));
  }
  return kiln::detail::new_handle(ctx, var, std::move(kept), what);
}

}  // namespace kiln::random::detail
