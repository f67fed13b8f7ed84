// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/entry_level.hpp"

#include "ir/visitor.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

bool runs_a_parfor(const ir::Stmt& s) {
  struct Finder final : ir::IRVisitor {
    bool found = false;
    using ir::IRVisitor::visit;
    void visit(const ir::ParforStmt&) override { found = true; }
    void visit(const ir::LaunchStmt&) override { found = true; }
  } finder;
  finder.walk(s);
  return finder.found;
}

/// The first For statement outside parfors with no parfor inside it: a loop whose work is the entry's own.
struct OwnLoop final : ir::IRVisitor {
  const ir::ForStmt* found = nullptr;
  using ir::IRVisitor::visit;
  void visit(const ir::ForStmt& f) override {
    if (found) return;
    if (!runs_a_parfor(f.body)) {
      found = &f;
      return;
    }
    ir::IRVisitor::visit(f);  // a time loop around parfors: its other loops count as the entry's own
  }
  void visit(const ir::ParforStmt&) override {}  // outlined: optimized on its own
  void visit(const ir::LaunchStmt&) override {}
};

}  // namespace

EntryLevel entry_level(const ir::Stmt& body) {
  OwnLoop own;
  own.walk(body);
  if (own.found)
    return {false, "kiln_entry optimized: the loop over " + own.found->index->name +
                       " runs no parfor (its work is on the calling thread)\n"};
  return {true, "kiln_entry compiled unoptimized (optnone, FastISel): every loop outside the parfors runs parfors, so "
                "it runs argument checks, allocations and parfor launches, once per call or per launch\n"};
}

}  // namespace kiln::codegen::cpu::detail
