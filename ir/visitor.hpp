// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Read-only traversal (IRVisitor) and rebuilding traversal (IRMutator) of IR trees.
#pragma once

#include "ir/stmt.hpp"

namespace kiln::ir {

/// Walks every node once in evaluation order. Override a `visit` to look at a kind of node; call the base
/// version to keep walking into its children.
class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  void walk(const Expr& e);
  void walk(const Stmt& s);
  void walk(const Function& f);

 protected:
  virtual void visit(const ConstExpr&) {}
  virtual void visit(const VarRefExpr&) {}
  virtual void visit(const LoadExpr& e);
  virtual void visit(const DimExpr&) {}
  virtual void visit(const UnaryExpr& e);
  virtual void visit(const BinaryExpr& e);
  virtual void visit(const SelectExpr& e);
  virtual void visit(const CastExpr& e);
  virtual void visit(const CallExpr& e);

  virtual void visit(const BlockStmt& s);
  virtual void visit(const LetStmt& s);
  virtual void visit(const AssignStmt& s);
  virtual void visit(const StoreStmt& s);
  virtual void visit(const ForStmt& s);
  virtual void visit(const ParforStmt& s);
  virtual void visit(const IfStmt& s);
  virtual void visit(const AllocateStmt& s);
  virtual void visit(const CheckStmt& s);
  virtual void visit(const MapStmt& s);
  virtual void visit(const ReduceStmt& s);
  virtual void visit(const ReduceAxisStmt& s);
  virtual void visit(const BindStmt&) {}
  virtual void visit(const StencilStmt& s);
  virtual void visit(const LaunchStmt& s);
  virtual void visit(const AtomicStmt& s);
  virtual void visit(const SortStmt&) {}  ///< holds no expressions: its arrays are its only operands
  virtual void visit(const ScanStmt&) {}  ///< holds no expressions: its arrays are its only operands
};

/// Rebuilds a tree bottom-up; a node whose children did not change is returned as is (same pointer), so
/// an unchanged tree costs no allocation. Override `visit` for the kinds you rewrite.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);
  Function mutate(const Function& f);

 protected:
  virtual Expr visit(const ConstExpr&, const Expr& self) { return self; }
  virtual Expr visit(const VarRefExpr&, const Expr& self) { return self; }
  virtual Expr visit(const LoadExpr& e, const Expr& self);
  virtual Expr visit(const DimExpr&, const Expr& self) { return self; }
  virtual Expr visit(const UnaryExpr& e, const Expr& self);
  virtual Expr visit(const BinaryExpr& e, const Expr& self);
  virtual Expr visit(const SelectExpr& e, const Expr& self);
  virtual Expr visit(const CastExpr& e, const Expr& self);
  virtual Expr visit(const CallExpr& e, const Expr& self);

  virtual Stmt visit(const BlockStmt& s, const Stmt& self);
  virtual Stmt visit(const LetStmt& s, const Stmt& self);
  virtual Stmt visit(const AssignStmt& s, const Stmt& self);
  virtual Stmt visit(const StoreStmt& s, const Stmt& self);
  virtual Stmt visit(const ForStmt& s, const Stmt& self);
  virtual Stmt visit(const ParforStmt& s, const Stmt& self);
  virtual Stmt visit(const IfStmt& s, const Stmt& self);
  virtual Stmt visit(const AllocateStmt& s, const Stmt& self);
  virtual Stmt visit(const CheckStmt& s, const Stmt& self);
  virtual Stmt visit(const MapStmt& s, const Stmt& self);
  virtual Stmt visit(const ReduceStmt& s, const Stmt& self);
  virtual Stmt visit(const ReduceAxisStmt& s, const Stmt& self);
  virtual Stmt visit(const BindStmt&, const Stmt& self) { return self; }
  virtual Stmt visit(const StencilStmt& s, const Stmt& self);
  virtual Stmt visit(const LaunchStmt& s, const Stmt& self);
  virtual Stmt visit(const AtomicStmt& s, const Stmt& self);
  virtual Stmt visit(const SortStmt&, const Stmt& self) { return self; }
  virtual Stmt visit(const ScanStmt&, const Stmt& self) { return self; }

  /// Mutates each element; returns true if any changed.
  bool mutate_all(const std::vector<Expr>& in, std::vector<Expr>& out);
};

}  // namespace kiln::ir
