// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/stencil_flatten.hpp"

#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "ir/builder.hpp"
#include "ir/semantics.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"

namespace kiln::detail {
namespace {

std::optional<std::int64_t> int_value(const ir::Expr& e) {
  const auto* k = ir::dyn<ir::ConstExpr>(e);
  if (!k || is_float(k->type)) return std::nullopt;
  return k->i;
}

/// Calls f(T{}) with T the C++ type of an integer or bool type t; a float type gives `otherwise`.
template <class F>
ir::Expr with_int_type(DType t, const ir::Expr& otherwise, F&& f) {
  return ir::sem::with_type(t, [&](auto x) -> ir::Expr {
    using T = decltype(x);
    if constexpr (is_float_element_v<T>) return otherwise;
    else return f(x);
  });
}

/// An integer or bool constant's value as T (constants hold it wrapped to their type).
template <class T>
T as(std::int64_t v) {
  return static_cast<T>(v);
}

class Folder : public ir::IRMutator {
 public:
  Folder() = default;
  /// `folded`: subexpressions that are already folded, which folding would return unchanged.
  explicit Folder(const std::unordered_set<const ir::ExprNode*>* folded) : folded_(folded) {}

 protected:
  using ir::IRMutator::visit;

  bool is_folded(const ir::ExprNode& e) const { return folded_ && folded_->count(&e) != 0; }

  ir::Expr visit(const ir::UnaryExpr& e, const ir::Expr& self) override {
    if (is_folded(e)) return self;
    ir::Expr r = ir::IRMutator::visit(e, self);
    if (r->kind != ir::ExprKind::Unary) return r;
    const auto& u = r->as<ir::UnaryExpr>();
    const auto a = int_value(u.a);
    if (!a) return r;
    return with_int_type(u.type, r, [&](auto x) {
      using T = decltype(x);
      return ir::make_int(u.type, static_cast<std::int64_t>(ir::sem::unary<T>(u.op, as<T>(*a))));
    });
  }

  ir::Expr visit(const ir::BinaryExpr& e, const ir::Expr& self) override {
    if (is_folded(e)) return self;
    ir::Expr r = ir::IRMutator::visit(e, self);
    if (r->kind != ir::ExprKind::Binary) return r;
    const auto& b = r->as<ir::BinaryExpr>();
    const DType t = b.a->type;
    const auto x = int_value(b.a), y = int_value(b.b);
    // Short-circuit operators decide on their left operand alone.
    if (x && b.op == BinaryOp::And) return *x ? b.b : ir::make_bool(false);
    if (x && b.op == BinaryOp::Or) return *x ? ir::make_bool(true) : b.b;
    if (!x || !y || is_float(t)) return r;
    return with_int_type(t, r, [&](auto v) {
      using T = decltype(v);
      if (ir::is_comparison(b.op)) return ir::make_bool(ir::sem::compare<T>(b.op, as<T>(*x), as<T>(*y)));
      return ir::make_int(t, static_cast<std::int64_t>(ir::sem::binary<T>(b.op, as<T>(*x), as<T>(*y))));
    });
  }

  ir::Expr visit(const ir::SelectExpr& e, const ir::Expr& self) override {
    if (is_folded(e)) return self;
    const ir::Expr c = mutate(e.cond);
    if (const auto k = int_value(c)) return mutate(*k ? e.a : e.b);  // only the chosen operand is evaluated
    ir::Expr a = mutate(e.a), b = mutate(e.b);
    if (c == e.cond && a == e.a && b == e.b) return self;
    return ir::make_select(c, std::move(a), std::move(b));
  }

  ir::Expr visit(const ir::CastExpr& e, const ir::Expr& self) override {
    if (is_folded(e)) return self;
    ir::Expr r = ir::IRMutator::visit(e, self);
    if (r->kind != ir::ExprKind::Cast) return r;
    const auto& c = r->as<ir::CastExpr>();
    const auto a = int_value(c.a);
    if (!a || is_float(c.type)) return r;
    return with_int_type(c.type, r, [&](auto to) {
      using To = decltype(to);
      return with_int_type(c.a->type, r, [&](auto from) {
        using From = decltype(from);
        return ir::make_int(c.type, static_cast<std::int64_t>(ir::sem::cast<To, From>(as<From>(*a))));
      });
    });
  }

  ir::Expr visit(const ir::LoadExpr& e, const ir::Expr& self) override {
    return is_folded(e) ? self : ir::IRMutator::visit(e, self);
  }
  ir::Expr visit(const ir::CallExpr& e, const ir::Expr& self) override {
    return is_folded(e) ? self : ir::IRMutator::visit(e, self);
  }

 private:
  const std::unordered_set<const ir::ExprNode*>* folded_ = nullptr;
};

class Flattener {
 public:
  Flattener(const std::function<void(const std::string&)>& fail, std::int64_t budget) : fail_(fail), budget_(budget) {}

  using Env = ir::Replacements;

  /// `e` with the variables replaced by their current expressions, folded. Those expressions are folded
  /// already, so folding skips them: an accumulation over an unrolled loop (acc = acc + w(i, j) * a(i, j))
  /// then folds each new term once, where folding the whole sum again made tracing quadratic in the taps
  /// (a 5x5 stencil's trace was 0.3 ms of a fresh process's 1.1 ms first call).
  ir::Expr value(const ir::Expr& e, const Env& env) const {
    std::unordered_set<const ir::ExprNode*> folded;
    for (const auto& [var, expr] : env) folded.insert(expr.get());
    Folder f(&folded);
    return f.mutate(ir::substitute(e, env));
  }

  void run(const ir::Stmt& s, Env& env) {
    if (!s) return;
    switch (s->kind) {
      case ir::StmtKind::Block:
        for (const auto& x : s->as<ir::BlockStmt>().stmts) run(x, env);
        return;
      case ir::StmtKind::Let: {
        const auto& l = s->as<ir::LetStmt>();
        env[l.var.get()] = value(l.init, env);
        return;
      }
      case ir::StmtKind::Assign: {
        const auto& a = s->as<ir::AssignStmt>();
        if (!env.count(a.var.get()))
          fail(fmt::format("it assigns '{}', which is declared outside the stencil: a stencil computes one value per "
                           "element and cannot change variables around it",
                           a.var->name));
        env[a.var.get()] = value(a.value, env);
        return;
      }
      case ir::StmtKind::For: {
        const auto& f = s->as<ir::ForStmt>();
        const auto lo = int_value(value(f.begin, env)), hi = int_value(value(f.end, env));
        if (!lo || !hi)
          fail("a kiln::range in a stencil body needs bounds known when the kernel is traced (C++ integers): "
                "the loop is unrolled into the stencil's expression");
        if (*hi > *lo && *hi - *lo > budget_)
          fail(fmt::format("its kiln::range loops would unroll into more than {} iterations", max_));
        for (std::int64_t k = *lo; k < *hi; ++k) {
          --budget_;
          env[f.index.get()] = ir::make_i64(k);
          run(f.body, env);
        }
        env.erase(f.index.get());
        return;
      }
      case ir::StmtKind::If: {
        const auto& i = s->as<ir::IfStmt>();
        const ir::Expr c = value(i.cond, env);
        if (const auto k = int_value(c)) {
          run(*k ? i.then_body : i.else_body, env);
          return;
        }
        Env then_env = env, else_env = env;
        run(i.then_body, then_env);
        run(i.else_body, else_env);
        // Variables declared inside a branch end with it; those declared before take either branch's value.
        for (auto& [var, expr] : env) {
          const ir::Expr& t = then_env.at(var);
          const ir::Expr& e = else_env.at(var);
          expr = t == e ? t : fold_constants(ir::make_select(c, t, e));
        }
        return;
      }
      case ir::StmtKind::Store:
        fail(fmt::format("it stores into array '{}': a stencil body only computes the element's value (its result)",
                         s->as<ir::StoreStmt>().array->name));
      case ir::StmtKind::Atomic:
        fail(fmt::format("it updates array '{}' atomically: a stencil body only computes the element's value (its result)",
                         s->as<ir::AtomicStmt>().array->name));
      case ir::StmtKind::Launch:
      case ir::StmtKind::Parfor: fail("it contains a kiln::prange: a stencil body is evaluated per element already");
      case ir::StmtKind::Check:
        fail(fmt::format("it contains a run-time check ({}): a stencil body is one expression per element",
                         s->as<ir::CheckStmt>().message));
      case ir::StmtKind::Bind: fail("it swaps arrays: a stencil body only computes the element's value");
      case ir::StmtKind::Allocate:
      case ir::StmtKind::Map:
      case ir::StmtKind::Reduce:
      case ir::StmtKind::ReduceAxis:
      case ir::StmtKind::Stencil:
      case ir::StmtKind::Sort:
      case ir::StmtKind::Scan:
        fail("it makes or reduces arrays (array operations, reductions or another stencil): a stencil body "
              "computes one value per element from its windows and scalars");
    }
  }

 private:
  const std::function<void(const std::string&)>& fail_;
  std::int64_t budget_;

  [[noreturn]] void fail(const std::string& why) const {
    fail_(why);
    throw std::logic_error("stencil body: the failure callback returned");  // it always throws
  }

  const std::int64_t max_ = budget_;
};

}  // namespace

ir::Expr fold_constants(const ir::Expr& e) {
  Folder f;
  return f.mutate(e);
}

ir::Expr flatten_stencil_body(const ir::Stmt& body, const ir::Expr& result,
                              const std::function<void(const std::string&)>& fail, std::int64_t max_unrolled) {
  Flattener f(fail, max_unrolled);
  Flattener::Env env;
  f.run(body, env);
  return f.value(result, env);
}

}  // namespace kiln::detail
