// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/uneven_work.hpp"

#include <algorithm>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {
namespace {

/// The header of a loop, `for j in 0 .. (i + 1)`, printed as a fragment: the printer tells the loop's own
/// index from a variable of the same name outside it.
std::string header(const Stmt& loop) {
  std::string t = to_string(loop);
  t.resize(std::min(t.find('\n'), t.size()));
  if (t.size() > 2 && t.compare(t.size() - 2, 2, " {") == 0) t.resize(t.size() - 2);
  return t;
}

}  // namespace

std::string uneven_work(const ParforStmt& p) {
  struct Finder : IRVisitor {
    const VarNode* index;
    VarSet local;
    std::string found;
    Finder(const VarNode* i, VarSet l) : index(i), local(std::move(l)) {}
    /// True if the bounds use the index and nothing local to the body.
    bool varies(const std::vector<Expr>& bounds) const {
      bool uses_index = false;
      for (const Expr& b : bounds)
        for (const Var& v : free_vars(b)) {
          if (v.get() == index) uses_index = true;
          else if (local.count(v.get())) return false;
        }
      return uses_index;
    }
    void visit(const ForStmt& f) override {
      if (found.empty() && varies({f.begin, f.end})) found = header(make_for(f.index, f.begin, f.end, make_block({})));
      IRVisitor::visit(f);
    }
    void visit(const ParforStmt& q) override {
      std::vector<Expr> bounds = q.begins;
      bounds.insert(bounds.end(), q.ends.begin(), q.ends.end());
      if (found.empty() && varies(bounds)) found = header(make_parfor(q.indices, q.begins, q.ends, make_block({}), {}, ""));
      IRVisitor::visit(q);
    }
  };
  VarSet local = declared_in(p.body);
  for (size_t d = 1; d < p.indices.size(); ++d) local.insert(p.indices[d].get());
  Finder finder(p.indices.front().get(), std::move(local));
  finder.walk(p.body);
  return finder.found;
}

bool splits_by_work(const ParforStmt& p) {
  return p.reductions.empty() && p.array_reductions.empty() && !uneven_work(p).empty();
}

}  // namespace kiln::ir
