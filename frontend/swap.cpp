// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::swap: exchanging two array handles. Outside loops and branches that is the C++ swap of the handles.
// Inside one, whose body is traced once but runs many times, the handles must name different arrays on
// different runs: each handle declared outside becomes an array binding (VarKind::Binding), declared just
// before the open loop or branch in the handle's own scope, and the statements and values already traced
// inside are rewritten to read the binding instead of the array (they were traced before the swap, but on
// later iterations they run after it). The swap itself rebinds the bindings at run time.
#include <utility>

#include <fmt/format.h>

#include "frontend/array_info.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"

namespace kiln::detail {
namespace {

/// The layout every array a binding may name has: what both types promise.
ir::Type meet(const ir::Type& a, const ir::Type& b) {
  return ir::Type::array(a.elem, a.rank, a.unit_stride && b.unit_stride,
                         static_cast<std::uint8_t>(a.unit_dims & b.unit_dims));
}

bool satisfies(const ir::Type& source, const ir::Type& binding) {
  return (!binding.unit_stride || source.unit_stride) && !(binding.unit_dims & ~source.unit_dims);
}

/// Why `source` cannot be bound where `bound` was (its type does not satisfy the binding's).
std::string layout_mismatch(const ArrayHandle& source, const ArrayHandle& bound) {
  return fmt::format("{} lacks the memory layout (unit stride, unit extents) that {} was bound with: swap arrays of one "
                     "layout",
                     label_of(source), label_of(bound));
}

struct Swap {
  TraceContext& ctx;
  std::string head;
  Where where;

  [[noreturn]] void fail(const std::string& why) const { ctx.fail(head + why, where); }

  /// Makes handle `x` (declared in scope `home`) name a binding declared in `home`, rewriting what was
  /// traced inside `home` since. `partner`: the array it is swapped with (the binding may name either).
  void bind(ArrayHandle& x, std::uint64_t home, const ArrayHandle& partner) {
    if (!ctx.on_stack(home)) fail(fmt::format("the handle {} belongs to another trace", label_of(x)));
    for (const Scope* s : ctx.scopes_inside(home))
      if (s->parallel)
        fail(fmt::format("inside a prange, of array {} declared outside it: iterations of a prange run in any order, so "
                         "they cannot hand buffers to each other (swap in a kiln::range, or declare the arrays inside "
                         "the prange body)",
                         label_of(x)));
    if (x.var->kind == ir::VarKind::Binding) {
      if (!satisfies(partner.var->type, x.var->type))
        fail(layout_mismatch(partner, x));
      return;
    }
    const ir::Var from = x.var;
    const ir::Var to = ir::make_var(from->name, meet(from->type, partner.var->type), ir::VarKind::Binding);
    // Declared in the handle's own scope, before the loop or branch being traced (which is not emitted yet).
    ctx.scope(home).stmts.push_back(ir::make_bind(to, from, true));
    ir::Renamer rename;  // every use of `from` -> `to` (same element type and rank)
    rename.vars[from.get()] = to;
    const std::vector<Scope*> inside = ctx.scopes_inside(home);
    for (Scope* s : inside) {
      // The bounds of a loop opened inside are evaluated each time the enclosing body runs (those of the
      // outermost one run once, after the binding is declared, when it still names `from`).
      if (s != inside.front() && s->loop_lo) {
        for (ir::Expr& e : *s->loop_lo) e = rename.mutate(e);
        for (ir::Expr& e : *s->loop_hi) e = rename.mutate(e);
      }
      for (ir::Stmt& st : s->stmts) st = rename.mutate(st);
      if (s->pending) {
        for (ir::Expr& c : s->pending->conds) c = rename.mutate(c);
        for (ir::Stmt& b : s->pending->bodies) b = rename.mutate(b);
      }
    }
    ctx.rewrite_values_inside(home, rename);
    x = ArrayHandle(to, x.rank, home);
  }
};

}  // namespace

void swap_arrays(ArrayHandle& a, std::uint64_t home_a, ArrayHandle& b, std::uint64_t home_b, Where where) {
  TraceContext& ctx = TraceContext::active("kiln::swap");
  ctx.check_array(a, "kiln::swap");
  ctx.check_array(b, "kiln::swap");
  Swap sw{ctx, fmt::format("kiln::swap({}, {}){}: ", label_of(a), label_of(b), at(where)), where};
  if (elem_of(a) != elem_of(b))
    sw.fail(fmt::format("the arrays have different element types ({} and {}); only arrays of one element type and rank "
                        "can be swapped",
                        name_of(elem_of(a)), name_of(elem_of(b))));
  if (a.rank != b.rank)
    sw.fail(fmt::format("the arrays have different ranks ({} and {}); only arrays of one element type and rank can be "
                        "swapped",
                        a.rank, b.rank));
  ctx.begin_statement();
  const std::uint64_t here = ctx.current_scope();
  const bool dyn_a = home_a != here, dyn_b = home_b != here;
  if (!dyn_a && !dyn_b) {  // straight-line code: the handles themselves are exchanged
    std::swap(a, b);
    return;
  }
  if (is_view(a) || is_view(b))
    sw.fail("one of them is a view; inside a loop or branch only whole arrays can be swapped");
  if (dyn_a) sw.bind(a, home_a, b);
  if (dyn_b) sw.bind(b, home_b, a);

  // Arrays exchanged at run time must have one shape: then extents traced before the swap stay right after
  // it, whichever array a binding names.
  std::vector<ir::Expr> conds, args;
  for (int d = 0; d < a.rank; ++d) args.push_back(ir::make_dim(a.var, d));
  for (int d = 0; d < b.rank; ++d) {
    args.push_back(ir::make_dim(b.var, d));
    conds.push_back(ir::make_binary(BinaryOp::Eq, ir::make_dim(a.var, d), ir::make_dim(b.var, d)));
  }
  ir::Expr cond = conds.front();
  for (size_t k = 1; k < conds.size(); ++k) cond = ir::make_binary(BinaryOp::And, cond, conds[k]);
  const size_t r = static_cast<size_t>(a.rank);
  ctx.emit(ir::make_check(cond, kShapeMismatch,
                          sw.head + "the arrays have shapes " + shape_holes(r) + " and " + shape_holes(r) +
                              "; arrays swapped inside a loop or branch must have one shape",
                          args));
  // Values already traced that read the arrays keep what they read before the swap.
  ctx.snapshot_memory_readers();
  note_write(ctx, a.var.get());
  note_write(ctx, b.var.get());

  // A static handle (declared here) takes a new binding naming the other's current array.
  auto snapshot = [&](const ArrayHandle& of) {
    const ir::Var t = ir::make_var(of.var->name, of.var->type, ir::VarKind::Binding);
    ctx.emit(ir::make_bind(t, of.var, true));
    return ArrayHandle(t, of.rank, here);
  };
  // A binding declared outside the loop outlives it: it cannot take an array made inside.
  auto outlives = [&](const ArrayHandle& bound, std::uint64_t home, const ArrayHandle& made) {
    for (const Scope* s : ctx.scopes_inside(home))
      if (s->id == made.scope)
        sw.fail(fmt::format("{} is made inside the loop or branch, but {} is declared outside it and would name it "
                            "afterwards: make both buffers before the loop",
                            label_of(made), label_of(bound)));
  };
  auto rebind = [&](const ArrayHandle& target, const ArrayHandle& source) {
    if (!satisfies(source.var->type, target.var->type))
      sw.fail(layout_mismatch(source, target));
    ctx.emit(ir::make_bind(target.var, source.var, false));
  };
  if (dyn_a && dyn_b) {
    const ArrayHandle old_a = snapshot(a);
    rebind(a, b);
    rebind(b, old_a);
  } else if (dyn_a) {  // b is declared here: it takes a's array, a takes b's
    outlives(a, home_a, b);
    const ArrayHandle old_a = snapshot(a);
    rebind(a, b);
    b = old_a;
  } else {
    outlives(b, home_b, a);
    const ArrayHandle old_b = snapshot(b);
    rebind(b, a);
    a = old_b;
  }
}

}  // namespace kiln::detail
