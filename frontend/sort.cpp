// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::sort and kiln::argsort: the operand is copied by an allocating map into a new array of its shape (the
// keys), which a SortStmt sorts in place, row by row along the last axis; for argsort a second map makes the
// i64 positions along the rows, which the sort permutes with the keys. The copy is what lets any operand (a parameter of any strides, a view, an
// expression that fusion then computes straight into the keys) reach the backends' sorts as one compact
// row-major array the kernel owns.
#include <fmt/format.h>

#include "frontend/array_info.hpp"
#include "frontend/broadcast.hpp"
#include "frontend/source_names.hpp"
#include "frontend/trace_context.hpp"
#include "ir/builder.hpp"
#include "kiln/sort.hpp"

namespace kiln::detail {

ArrayHandle sort_rows(const ArrayHandle& a, bool arg, Where w) {
  const char* op = arg ? "argsort" : "sort";
  TraceContext& ctx = TraceContext::active(arg ? "kiln::argsort" : "kiln::sort");
  ctx.begin_statement();
  const Input in = prepare(ctx, OpArg{&a, nullptr});
  const std::string what = fmt::format("{}({})", op, in.label);
  for (const Scope* s : ctx.scopes_inside(ctx.root_scope()))
    if (s->parallel)
      ctx.fail(fmt::format("`{}` inside a prange body: a sort is a parallel operation of its own, not one iteration's "
                           "work (sort the rows of a 2-d array, kiln::{}(x) sorts each row along the last axis)",
                           what, op),
               w);
  const std::string origin = what + at(w);
  const std::string declared = declared_name(w);
  const std::string name = declared.empty() ? op : declared;
  const int rank = a.rank;
  const DType t = elem_of(a);
  const std::vector<ir::Var> idx = space_indices(ctx, rank);
  const ir::Var keys = ctx.new_array(t, rank, arg ? name + "_keys" : name, arg ? Where{} : w);
  ctx.emit(ir::make_map(keys, idx, in.extents, read(in, refs(idx), t), origin));
  ir::Var positions;
  if (arg) {
    // Each element's position along its row, which the sort permutes with the keys.
    positions = ctx.new_array(DType::I64, rank, name, w);
    check_new_array(ctx, positions, in.extents, w);
    const std::vector<ir::Var> at = space_indices(ctx, rank);
    ctx.emit(ir::make_map(positions, at, in.extents, ir::make_ref(at.back()), origin));
  }
  ctx.emit(ir::make_sort(keys, positions, origin));
  return new_handle(ctx, arg ? positions : keys, in.extents, what);
}

}  // namespace kiln::detail
