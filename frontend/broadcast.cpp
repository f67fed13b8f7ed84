// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/broadcast.hpp"

#include <cctype>
#include <map>

#include <fmt/format.h>

#include "frontend/index_math.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "kiln/abi.hpp"

namespace kiln::detail {
namespace {

bool is_one(const ir::Expr& e) {
  const auto v = ix::value(e);
  return v && *v == 1;
}

std::string scalar_label(const ir::Expr& e) {
  if (const auto* r = ir::dyn<ir::VarRefExpr>(e)) return r->var->name;
  if (const auto* c = ir::dyn<ir::ConstExpr>(e)) return ir::literal(*c);
  return nested_label(ir::to_string(e));
}

std::string where_text(const Where& w) { return w.str().empty() ? "" : " (at " + w.str() + ")"; }

std::string values_text(const std::vector<ir::Expr>& extents) {
  std::string s = "(";
  for (size_t d = 0; d < extents.size(); ++d) {
    const auto v = ix::value(extents[d]);
    s += (d ? ", " : "") + (v ? std::to_string(*v) : ir::to_string(extents[d]));
  }
  return s + ")";
}

/// Emits `check cond else ShapeError message(shape a, shape b)`, or fails now if cond is known false.
void shape_check(TraceContext& ctx, const ir::Expr& cond, const std::string& head, const std::vector<ir::Expr>& a,
                 const std::vector<ir::Expr>& b, const Where& w) {
  if (const auto* k = ir::dyn<ir::ConstExpr>(cond)) {
    if (k->i) return;
    ctx.fail(fmt::format("{}: shapes {} and {}", head, values_text(a), values_text(b)), w);
  }
  std::vector<ir::Expr> args = a;
  args.insert(args.end(), b.begin(), b.end());
  ctx.emit(ir::make_check(cond, kShapeMismatch, head + where_text(w) + ": shapes " + shape_holes(a.size()) + " and " +
                                                    shape_holes(b.size()),
                          std::move(args)));
}

}  // namespace

std::string nested_label(const std::string& label) {
  if (label.size() <= 24) return label;
  // `exp(...)` keeps the function's name; an operator expression becomes `(...)`.
  size_t name = 0;
  while (name < label.size() && (std::isalnum(static_cast<unsigned char>(label[name])) || label[name] == '_')) ++name;
  if (name > 0 && name < label.size() && label[name] == '(' && label.back() == ')') return label.substr(0, name) + "(...)";
  return "(...)";
}

Input prepare(TraceContext& ctx, const OpArg& arg) {
  Input in;
  if (arg.array) {
    ctx.check_array(*arg.array, "an array operation");
    in.array = arg.array;
    in.extents = extents_of(*arg.array);
    in.label = nested_label(label_of(*arg.array));
  } else {
    in.scalar = stable(ctx, arg.scalar->read(), "s");
    in.label = scalar_label(in.scalar);
  }
  return in;
}

std::vector<ir::Expr> broadcast(TraceContext& ctx, const std::vector<Input>& inputs, const std::string& what,
                                const Where& w) {
  size_t rank = 0;
  for (const Input& in : inputs) rank = std::max(rank, in.extents.size());
  // Per result dimension: the extent, and which operand it came from.
  std::vector<ir::Expr> shape(rank, ix::c(1));
  std::vector<int> source(rank, -1);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto& e = inputs[k].extents;
    for (size_t d = 0; d < e.size(); ++d) {
      const size_t r = rank - e.size() + d;
      if (source[r] < 0 && !is_one(e[d])) {
        shape[r] = e[d];
        source[r] = static_cast<int>(k);
      }
    }
  }
  // One check per pair (source operand, other operand) over every dimension they must agree on.
  std::map<std::pair<int, int>, ir::Expr> conds;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto& e = inputs[k].extents;
    for (size_t d = 0; d < e.size(); ++d) {
      const size_t r = rank - e.size() + d;
      if (is_one(e[d]) || source[r] == static_cast<int>(k)) continue;
      ir::Expr& c = conds[{source[r], static_cast<int>(k)}];
      c = ix::both(c, ix::eq(shape[r], e[d]));
    }
  }
  for (const auto& [pair, cond] : conds)
    shape_check(ctx, cond, "operands could not be broadcast together in `" + what + "`",
                inputs[static_cast<size_t>(pair.first)].extents, inputs[static_cast<size_t>(pair.second)].extents, w);
  return shape;
}

void check_broadcast_to(TraceContext& ctx, const Input& value, const std::vector<ir::Expr>& shape,
                        const std::string& what, const Where& w) {
  const std::string head = "could not broadcast the value into the target in `" + what + "`";
  if (value.extents.size() > shape.size())
    ctx.fail(fmt::format("{}: the value has rank {}, the target rank {}", head, value.extents.size(), shape.size()), w);
  ir::Expr cond;
  for (size_t d = 0; d < value.extents.size(); ++d) {
    const ir::Expr& e = value.extents[d];
    if (!is_one(e)) cond = ix::both(cond, ix::eq(shape[shape.size() - value.extents.size() + d], e));
  }
  if (cond) shape_check(ctx, cond, head, value.extents, shape, w);
}

ir::Expr read(const Input& in, const std::vector<ir::Expr>& index, DType t) {
  if (!in.array) return ir::make_cast(t, in.scalar);
  const size_t rank = in.extents.size(), skip = index.size() - rank;
  std::vector<ir::Expr> own;
  for (size_t d = 0; d < rank; ++d) own.push_back(is_one(in.extents[d]) ? ix::c(0) : index[skip + d]);
  return ir::make_cast(t, ir::make_load(in.array->var, base_indices(*in.array, own)));
}

}  // namespace kiln::detail
