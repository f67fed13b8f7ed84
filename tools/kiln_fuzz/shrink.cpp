// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tools/kiln_fuzz/shrink.hpp"

#include "ir/builder.hpp"
#include "ir/visitor.hpp"

namespace kiln::fuzz {
namespace {

using ir::Expr;
using ir::Stmt;

/// Applies the `target`-th edit (statements and expressions numbered in visiting order, `variant` choosing
/// among the edits of one node) and reports through `applied` whether such a node existed.
class Edit : public ir::IRMutator {
 public:
  Edit(bool statements, int target, int variant) : statements_(statements), target_(target), variant_(variant) {}
  bool applied = false;
  int count() const { return count_; }

 protected:
  using IRMutator::visit;

  // ---- statements: variant 0 removes one; 1 and 2 replace an if by its then or else branch ----
  template <class S>
  Stmt stmt(const S& s, const Stmt& self) {
    if (statements_ && count_++ == target_) {
      if (variant_ == 0) return applied = true, nullptr;
      if constexpr (std::is_same_v<S, ir::IfStmt>) {
        if (variant_ == 1) return applied = true, s.then_body;
        if (variant_ == 2 && s.else_body) return applied = true, s.else_body;
      }
      return self;
    }
    return IRMutator::visit(s, self);
  }
  Stmt visit(const ir::LetStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::AssignStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::StoreStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::ForStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::ParforStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::IfStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::AllocateStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::MapStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::ReduceStmt& s, const Stmt& self) override { return stmt(s, self); }
  Stmt visit(const ir::StencilStmt& s, const Stmt& self) override { return stmt(s, self); }

  // ---- expressions: variant 0 keeps an operand of the same type, 1 a zero ----
  template <class E>
  Expr expr(const E& e, const Expr& self, const Expr& same_typed_operand) {
    if (!statements_ && count_++ == target_) {
      if (variant_ == 0 && same_typed_operand && same_typed_operand->type == e.type) return applied = true, same_typed_operand;
      if (variant_ == 1) return applied = true, ir::make_const(e.type, 0);
      return self;
    }
    return IRMutator::visit(e, self);
  }
  Expr visit(const ir::UnaryExpr& e, const Expr& self) override { return expr(e, self, e.a); }
  Expr visit(const ir::BinaryExpr& e, const Expr& self) override { return expr(e, self, e.a); }
  Expr visit(const ir::SelectExpr& e, const Expr& self) override { return expr(e, self, e.b); }
  Expr visit(const ir::CastExpr& e, const Expr& self) override { return expr(e, self, nullptr); }
  Expr visit(const ir::CallExpr& e, const Expr& self) override { return expr(e, self, e.args[0]); }

 private:
  bool statements_;
  int target_, variant_;
  int count_ = 0;
};

}  // namespace

Program shrink(const Program& p, const std::function<bool(const Program&)>& still_fails, int budget) {
  auto nodes = [](const ir::Function& f, bool statements) {
    Edit counter(statements, -1, 0);
    (void)counter.mutate(f);
    return counter.count();
  };
  Program best = p;
  bool progress = true;
  while (progress && budget > 0) {
    progress = false;
    for (bool statements : {true, false}) {
      for (int target = 0; target < nodes(best.function, statements) && budget > 0; ++target) {
        for (int v = 0; v < (statements ? 3 : 2) && budget > 0; ++v) {
          Edit edit(statements, target, v);
          Program candidate = best;
          try {
            candidate.function = edit.mutate(best.function);
          } catch (const std::exception&) {
            continue;  // the edit made ill-typed IR (the builder refused it)
          }
          if (!edit.applied) continue;
          --budget;
          if (still_fails(candidate)) {
            best = std::move(candidate);
            progress = true;
            --target;  // the same number now names the next node
            break;
          }
        }
      }
    }
  }
  return best;
}

}  // namespace kiln::fuzz
