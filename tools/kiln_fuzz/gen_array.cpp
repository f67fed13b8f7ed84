// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Array-level statements, as the frontend traces them and lower_array_ops / fuse_stencils / lower_stencils
// rewrite them: allocating maps and maps into outputs, whole-space reductions into new scalars, axis reductions
// (keepdims) read back by later elementwise code, prefix scans (ir/scan.hpp, the statements kiln::cumsum
// traces) along any axis, stencils with every border mode, and sorts and argsorts (as frontend/sort.cpp traces
// them).
#include <algorithm>
#include <iterator>
#include <map>

#include "ir/scan.hpp"
#include "ir/substitute.hpp"
#include "tools/kiln_fuzz/generator.hpp"

namespace kiln::fuzz::detail {
namespace {

Expr bin(BinaryOp op, Expr a, Expr b) { return ir::make_binary(op, std::move(a), std::move(b)); }

}  // namespace

std::vector<Expr> Generator::space_shape() {
  std::vector<Expr> shape;
  for (std::size_t d = 0; d < shape_.size(); ++d) shape.push_back(ir::make_dim(arrays_[0].var, static_cast<int>(d)));
  return shape;
}

std::vector<Var> Generator::enter_space() {
  std::vector<Var> idx;
  for (std::size_t d = 0; d < shape_.size(); ++d) {
    idx.push_back(ir::make_var(name("e"), ir::Type::scalar(DType::I64), ir::VarKind::Index));
    own_.push_back(ir::make_ref(idx.back()));
  }
  in_parfor_ = true;
  return idx;
}

void Generator::leave_space() {
  in_parfor_ = false;
  own_.clear();
  written_.clear();
  hidden_.clear();
}

void Generator::array_statement(std::vector<Stmt>& out) {
  switch (uniform(0, 3)) {
    case 0: map(out); return;
    case 1: reduce(out); return;
    case 2:  // along an axis: a reduction, and now and then a prefix scan too
      reduce_axis(out);
      if (chance(0.4)) scan(out);
      return;
    default: stencil(out); return;
  }
}

void Generator::map(std::vector<Stmt>& out) {
  // Into an output parameter (which it may read at the same element), or into a new array.
  std::vector<std::size_t> outputs;
  for (std::size_t k = 0; k < arrays_.size(); ++k)
    if (arrays_[k].output && arrays_[k].shaped && !arrays_[k].tainted) outputs.push_back(k);
  const bool into = !outputs.empty() && chance(0.4);
  std::vector<Var> idx = enter_space();
  Stmt s;
  if (into) {
    const ArrayInfo& a = arrays_[outputs[std::uniform_int_distribution<std::size_t>(0, outputs.size() - 1)(rng_)]];
    written_.insert(a.var.get());
    s = ir::make_map_into(a.var, idx, space_shape(), own_, expr(a.var->type.elem, 3), "fuzz map");
    leave_space();
  } else {
    const DType t = any_type();
    Var target = ir::make_var(name("m"), ir::Type::array(t, static_cast<int>(shape_.size()), true), ir::VarKind::Local);
    s = ir::make_map(target, idx, space_shape(), expr(t, 3), "fuzz map");
    leave_space();
    arrays_.push_back({target, true, true, false, false, false, false});
  }
  out.push_back(std::move(s));
}

void Generator::reduce(std::vector<Stmt>& out) {
  const DType t = numeric_type();
  const auto op = static_cast<ReduceOp>(uniform(0, 5));
  std::vector<Var> idx = enter_space();
  // Float sums and products must be exact in any order (the lowering reduces in blocks).
  Expr value = is_float(t) && op == ReduceOp::Add   ? exact_sum_term(t)
               : is_float(t) && op == ReduceOp::Mul ? exact_product_term(t)
                                                    : expr(t, 3);
  leave_space();
  Var result = ir::make_var(name("r"), ir::Type::scalar(ir::reduce_result_type(op, t)), ir::VarKind::Local);
  out.push_back(ir::make_reduce(result, op, idx, space_shape(), std::move(value), "fuzz reduce"));
  scalars_.push_back({result, true, false});
  out.push_back(sink_store(ir::make_ref(result)));
}

void Generator::reduce_axis(std::vector<Stmt>& out) {
  const DType t = numeric_type();
  const auto op = static_cast<ReduceOp>(uniform(0, 5));
  const int rank = static_cast<int>(shape_.size());
  const int axis = uniform(0, rank - 1);
  std::vector<Var> idx = enter_space();
  Expr value = is_float(t) && op == ReduceOp::Add   ? exact_sum_term(t)
               : is_float(t) && op == ReduceOp::Mul ? exact_product_term(t)
                                                    : expr(t, 3);
  leave_space();
  // keepdims: the result has S's rank (extent 1 along the axis), so later elementwise code can read it.
  Var target = ir::make_var(name("ra"), ir::Type::array(ir::reduce_result_type(op, t), rank, true), ir::VarKind::Local);
  out.push_back(ir::make_reduce_axis(target, op, axis, true, idx, space_shape(), std::move(value), "fuzz reduce axis"));
  ArrayInfo info{target, false, true, false, false, false, false};
  info.unit_axis = axis;
  arrays_.push_back(info);
}

void Generator::scan(std::vector<Stmt>& out) {
  // Any values, floats too: a scan's order is defined (ir/semantics.hpp), so every pass and the JIT must keep it.
  const DType t = numeric_type();
  const auto op = static_cast<ReduceOp>(uniform(0, 3));  // Add, Mul, Min, Max
  const int rank = static_cast<int>(shape_.size());
  std::vector<Var> idx = enter_space();
  const Expr value = expr(t, 3);
  leave_space();
  ir::ScanSpec spec;
  spec.op = op;
  spec.type = spec.result = t;
  spec.exclusive = chance(0.5);
  spec.shape = space_shape();
  spec.axis = static_cast<std::size_t>(uniform(0, rank - 1));
  spec.value = [idx, value](const std::vector<Expr>& at) {
    ir::Replacements with;
    for (std::size_t d = 0; d < idx.size(); ++d) with[idx[d].get()] = at[d];
    return ir::substitute(value, with);
  };
  spec.out = ir::make_var(name("sc"), ir::Type::array(t, rank, true), ir::VarKind::Local);
  spec.name = spec.out->name;
  spec.origin = "fuzz scan";
  out.push_back(ir::make_allocate(spec.out, spec.shape));
  for (Stmt& st : ir::scan_statements(spec)) out.push_back(std::move(st));
  arrays_.push_back({spec.out, true, true, false, false, false, false});
}

void Generator::sort(std::vector<Stmt>& out) {
  // Keys of any type and any values (NaNs, -0.0, repeats: the order is defined and stable), copied by an
  // allocating map into a new array; for argsort a second map numbers the elements along the rows.
  const DType t = any_type();
  const int rank = static_cast<int>(shape_.size());
  std::vector<Var> idx = enter_space();
  Expr value = expr(t, 3);
  leave_space();
  Var keys = ir::make_var(name("so"), ir::Type::array(t, rank, true), ir::VarKind::Local);
  out.push_back(ir::make_map(keys, idx, space_shape(), std::move(value), "fuzz sort"));
  Var positions;
  if (chance(0.5)) {
    positions = ir::make_var(name("as"), ir::Type::array(DType::I64, rank, true), ir::VarKind::Local);
    std::vector<Var> at = enter_space();
    leave_space();
    out.push_back(ir::make_map(positions, at, space_shape(), ir::make_ref(at.back()), "fuzz argsort"));
  }
  out.push_back(ir::make_sort(keys, positions, positions ? "fuzz argsort" : "fuzz sort"));
  arrays_.push_back({keys, true, true, false, false, false, false});
  if (positions) arrays_.push_back({positions, true, true, false, false, false, false});
}

void Generator::stencil(std::vector<Stmt>& out) {
  // Windows: one or two defined arrays of S of one numeric element type.
  std::map<DType, std::vector<Var>> by_type;
  for (const auto& a : arrays_)
    if (a.shaped && a.defined && !a.tainted && a.var->type.elem != DType::Bool) by_type[a.var->type.elem].push_back(a.var);
  if (by_type.empty()) return map(out);
  auto it = by_type.begin();
  std::advance(it, uniform(0, static_cast<int>(by_type.size()) - 1));
  const DType t = it->first;
  std::vector<Var> windows;
  for (const Var& w : it->second)
    if (windows.empty() || (windows.size() < 2 && chance(0.5))) windows.push_back(w);
  const int rank = static_cast<int>(shape_.size());
  const auto border = static_cast<Border>(uniform(0, 5));
  // Folding borders are defined while one reflection reaches back into the array: the frontend checks
  // |offset| < extent before every stencil (lower_stencils turns a larger reach into a shape error), so the
  // generated neighbourhoods respect that too.
  const bool folds = border == Border::wrap || border == Border::reflect || border == Border::mirror;
  std::vector<std::int64_t> lo, hi;
  for (int d = 0; d < rank; ++d) {
    const std::int64_t n = shape_[static_cast<std::size_t>(d)];
    const int reach = folds && n > 0 ? static_cast<int>(std::min<std::int64_t>(2, n - 1)) : 2;
    lo.push_back(-uniform(0, reach)), hi.push_back(uniform(0, reach));
  }
  // The target: a new array, or an output that is not a window.
  std::vector<const ArrayInfo*> outputs;
  for (const auto& a : arrays_)
    if (a.output && a.shaped && !a.tainted && a.var->type.elem == t &&
        std::find(windows.begin(), windows.end(), a.var) == windows.end())
      outputs.push_back(&a);
  const ArrayInfo* into = !outputs.empty() && chance(0.3) ? outputs[static_cast<std::size_t>(uniform(0, static_cast<int>(outputs.size()) - 1))] : nullptr;

  std::vector<Var> idx = enter_space();
  for (const Var& w : windows) hidden_.insert(w.get());  // read below, at offsets inside the neighbourhood only
  if (into) hidden_.insert(into->var.get());             // a stencil does not read what it writes
  auto window_read = [&] {
    const Var& w = windows[static_cast<std::size_t>(uniform(0, static_cast<int>(windows.size()) - 1))];
    std::vector<Expr> at;
    for (int d = 0; d < rank; ++d) at.push_back(bin(BinaryOp::Add, own_[static_cast<std::size_t>(d)], ir::make_i64(uniform(static_cast<int>(lo[d]), static_cast<int>(hi[d])))));
    return ir::make_load(w, std::move(at));
  };
  constexpr BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Min, BinaryOp::Max};
  Expr value = window_read();
  for (int k = uniform(1, 4); k > 0; --k) value = bin(ops[uniform(0, 4)], value, chance(0.6) ? window_read() : expr(t, 2));
  Expr cval = border == Border::constant ? constant(t) : nullptr;
  Stmt s;
  if (into) {
    s = ir::make_stencil(into->var, false, idx, space_shape(), own_, std::move(value), windows, lo, hi, border, cval, "fuzz stencil");
    leave_space();
  } else {
    Var target = ir::make_var(name("st"), ir::Type::array(t, rank, true), ir::VarKind::Local);
    s = ir::make_stencil(target, true, idx, space_shape(), {}, std::move(value), windows, lo, hi, border, cval, "fuzz stencil");
    leave_space();
    arrays_.push_back({target, true, true, false, false, false, false});
  }
  out.push_back(std::move(s));
}

}  // namespace kiln::fuzz::detail
