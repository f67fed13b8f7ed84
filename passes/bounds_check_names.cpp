// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The array names in the messages of bounds-checked mode's checks, for the cache key
// (passes/insert_bounds_checks.hpp).
#include <unordered_set>

#include "ir/visitor.hpp"
#include "passes/insert_bounds_checks.hpp"

namespace kiln::passes {

using namespace kiln::ir;

std::string check_message_names(const ir::Function& f) {
  // Every array variable the IR mentions, in the visitor's order (parameters first), each once.
  struct Arrays : IRVisitor {
    using IRVisitor::visit;
    std::unordered_set<const VarNode*> seen;
    std::string names;
    void add(const Var& v) {
      if (v->type.is_array() && seen.insert(v.get()).second) names += v->name + '\n';
    }
    void visit(const LoadExpr& e) override {
      add(e.array);
      IRVisitor::visit(e);
    }
    void visit(const StoreStmt& s) override {
      add(s.array);
      IRVisitor::visit(s);
    }
    void visit(const AtomicStmt& s) override {
      add(s.array);
      IRVisitor::visit(s);
    }
    void visit(const MapStmt& s) override {
      add(s.target);
      IRVisitor::visit(s);
    }
    void visit(const StencilStmt& s) override {
      add(s.target);
      IRVisitor::visit(s);
    }
    void visit(const AllocateStmt& s) override {
      add(s.array);
      IRVisitor::visit(s);
    }
    void visit(const ReduceAxisStmt& s) override {
      add(s.target);
      IRVisitor::visit(s);
    }
    void visit(const BindStmt& s) override {
      add(s.target);
      add(s.source);
    }
  } arrays;
  for (const Var& p : f.params) arrays.add(p);
  arrays.walk(f);
  return arrays.names;
}

}  // namespace kiln::passes
