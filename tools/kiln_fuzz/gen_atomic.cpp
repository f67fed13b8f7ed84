// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Atomics (ir::AtomicStmt, ir/atomics.hpp) in random programs. A program must have one answer for the
// interpreter (which runs iterations in order) and the JIT (which runs them at the same time), so where
// iterations share an element only operations whose final contents do not depend on the order update it, and
// nobody reads what they returned; where an iteration owns its element, every operation and its old value are
// fair game (generator.hpp states the rules).
#include <functional>

#include "ir/atomics.hpp"
#include "tools/kiln_fuzz/generator.hpp"

namespace kiln::fuzz::detail {
namespace {

constexpr AtomicOp kEveryOp[] = {AtomicOp::Add, AtomicOp::Sub, AtomicOp::Min, AtomicOp::Max, AtomicOp::Exchange,
                                 AtomicOp::CompareExchange};

/// A compare-exchange compares bits, and the bits of a computed NaN are unspecified (LLVM and the interpreter's
/// libm may give different payloads and signs: generator.hpp, copysign), so an expected value that is not the
/// element's own is never a NaN.
Expr never_nan(Expr e) {
  if (!is_float(e->type)) return e;
  const DType t = e->type;
  return ir::make_select(ir::make_call(Intrinsic::IsNan, {e}), ir::make_float(t, 2.0), e);
}

}  // namespace

const ArrayInfo* Generator::pick_array(const std::function<bool(const ArrayInfo&)>& fits) {
  std::vector<const ArrayInfo*> found;
  for (const auto& a : arrays_)
    if (fits(a)) found.push_back(&a);
  return found.empty() ? nullptr : found[std::uniform_int_distribution<std::size_t>(0, found.size() - 1)(rng_)];
}

void Generator::choose_atomic_table() {
  atomic_table_ = nullptr;
  atomic_table_updated_ = false;
  if (!prim_chance(0.3)) return;
  atomic_table_ = pick_array([&](const ArrayInfo& a) {
    return a.table && !a.tainted && !hidden_.count(a.var.get()) && ir::atomic_allowed(AtomicOp::Min, a.var->type.elem);
  });
  if (atomic_table_) hidden_.insert(atomic_table_->var.get());  // plain loads of it would race with the atomics
}

Stmt Generator::shared_atomic() {
  atomic_table_updated_ = true;
  const ArrayInfo& a = *atomic_table_;
  const DType t = a.var->type.elem;
  // Float sums round in the order they happen unless every partial sum is exact: small integers on a
  // histogram of small integers (exact_sum_term), which keeps only such values for the reductions after it.
  const bool sums = !is_float(t) || a.hist;
  const AtomicOp op = sums && chance(0.5) ? (chance(0.7) ? AtomicOp::Add : AtomicOp::Sub)
                                          : (chance(0.5) ? AtomicOp::Min : AtomicOp::Max);
  Expr value = is_float(t) && a.hist ? exact_sum_term(t) : expr(t, 3);
  Expr k = wrap_index(index_expr(2), ir::make_dim(a.var, 0));
  // The old value depends on the order: it is declared and never read.
  return ir::make_atomic(atomic_result(t), op, a.var, {std::move(k)}, std::move(value));
}

void Generator::choose_atomic_own() {
  atomic_own_ = nullptr;
  atomic_own_updated_ = false;
  if (!prim_chance(0.25)) return;
  // An array of S that holds values and that this parfor does not write plainly (kiln refuses plain stores
  // beside atomics on one array in a parfor: detect_reductions), an output or an earlier parfor's result.
  atomic_own_ = pick_array([&](const ArrayInfo& a) {
    return a.shaped && a.defined && !a.tainted && (a.output || a.var->kind == ir::VarKind::Local) &&
           !written_.count(a.var.get()) && !hidden_.count(a.var.get()) && ir::atomic_allowed(AtomicOp::Add, a.var->type.elem);
  });
  if (atomic_own_) hidden_.insert(atomic_own_->var.get());  // other iterations' elements are not read either
}

Stmt Generator::own_atomic() {
  atomic_own_updated_ = true;
  const ArrayInfo& a = *atomic_own_;
  const DType t = a.var->type.elem;
  const AtomicOp op = kEveryOp[uniform(0, 5)];
  Expr value = expr(t, 3);
  // Half the compare-exchanges expect what the element holds, so that they swap.
  Expr expected = op != AtomicOp::CompareExchange ? nullptr : chance(0.5) ? ir::make_load(a.var, own_) : never_nan(expr(t, 2));
  Var old = atomic_result(t);
  Stmt s = ir::make_atomic(old, op, a.var, own_, std::move(value), std::move(expected));
  scalars_.push_back({old, false, true});
  return s;
}

void Generator::top_atomic(std::vector<Stmt>& out) {
  // Host code runs one atomic at a time: any operation, any value, and the old value may be read.
  const ArrayInfo* table =
      pick_array([](const ArrayInfo& a) { return a.table && !a.hist && ir::atomic_allowed(AtomicOp::Add, a.var->type.elem); });
  if (!table) return;
  const ArrayInfo& a = *table;
  const DType t = a.var->type.elem;
  const AtomicOp op = kEveryOp[uniform(0, 5)];
  Expr k = wrap_index(index_expr(2), ir::make_dim(a.var, 0));
  Expr expected = op == AtomicOp::CompareExchange ? (chance(0.5) ? ir::make_load(a.var, {k}) : never_nan(expr(t, 2))) : nullptr;
  Var old = atomic_result(t);
  out.push_back(ir::make_atomic(old, op, a.var, {std::move(k)}, expr(t, 3), std::move(expected)));
  scalars_.push_back({old, false, false});
}

}  // namespace kiln::fuzz::detail
