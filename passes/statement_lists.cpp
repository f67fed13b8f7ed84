// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/statement_lists.hpp"

#include "ir/builder.hpp"
#include "passes/loop_analysis.hpp"

namespace kiln::passes {

using namespace kiln::ir;

namespace {

/// The statements that replace `s` in its list.
std::vector<Stmt> expand_statement(const Stmt& s, const LoopExpansion& expand_loop) {
  switch (s->kind) {
    case StmtKind::Block: return {expand_loops(s, expand_loop)};
    case StmtKind::If: {
      const auto& i = s->as<IfStmt>();
      Stmt then_body = expand_loops(i.then_body, expand_loop);  // then first: the order of the notes
      Stmt else_body = expand_loops(i.else_body, expand_loop);
      return {make_if(i.cond, std::move(then_body), std::move(else_body))};
    }
    case StmtKind::For: {
      const auto& f = s->as<ForStmt>();
      return expand_loop(make_for(f.index, f.begin, f.end, expand_loops(f.body, expand_loop)));
    }
    case StmtKind::Parfor: {
      const auto& p = s->as<ParforStmt>();
      return expand_loop(with_body(p, expand_loops(p.body, expand_loop)));
    }
    default: return {s};
  }
}

}  // namespace

Stmt expand_loops(const Stmt& body, const LoopExpansion& expand_loop) {
  if (!body) return body;
  std::vector<Stmt> list;
  for (const auto& s : loops::statements(body))
    for (auto& x : expand_statement(s, expand_loop)) list.push_back(std::move(x));
  if (body->kind != StmtKind::Block && list.size() == 1) return list.front();
  return make_block(std::move(list));
}

Stmt rewrite_statement_lists(const Stmt& s, const StatementListRewrite& rewrite_list, const RebuiltStmt& rebuilt) {
  if (!s) return s;
  auto recurse = [&](const Stmt& x) { return rewrite_statement_lists(x, rewrite_list, rebuilt); };
  auto changed = [&](Stmt r) {
    if (rebuilt) rebuilt(s, r);
    return r;
  };
  switch (s->kind) {
    case StmtKind::Block: {
      std::vector<Stmt> list;
      for (const auto& x : s->as<BlockStmt>().stmts) list.push_back(recurse(x));
      return make_block(rewrite_list(std::move(list)));
    }
    case StmtKind::For: {
      const auto& f = s->as<ForStmt>();
      Stmt body = recurse(f.body);
      return body == f.body ? s : changed(make_for(f.index, f.begin, f.end, std::move(body)));
    }
    case StmtKind::Parfor: {
      const auto& p = s->as<ParforStmt>();
      Stmt body = recurse(p.body);
      return body == p.body ? s : changed(with_body(p, std::move(body)));
    }
    case StmtKind::If: {
      const auto& i = s->as<IfStmt>();
      // Two statements, not two arguments of one call, so that the then branch is always rewritten first
      // (the order of the notes the passes record).
      Stmt then_body = recurse(i.then_body);
      Stmt else_body = recurse(i.else_body);
      if (then_body == i.then_body && else_body == i.else_body) return s;
      return changed(make_if(i.cond, std::move(then_body), std::move(else_body)));
    }
    default: return s;
  }
}

Stmt SplicingMutator::splice(std::vector<Stmt> stmts) {
  Stmt b = make_block(std::move(stmts));
  spliced_.insert(b.get());
  alive_.push_back(b);
  return b;
}

Stmt SplicingMutator::visit(const BlockStmt& b, const Stmt& self) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt& s : b.stmts) {
    Stmt m = mutate(s);
    mutated(s);
    changed |= m != s;
    if (!m) continue;  // deleted
    if (spliced_.count(m.get())) {
      const auto& inner = m->as<BlockStmt>().stmts;
      out.insert(out.end(), inner.begin(), inner.end());
    } else {
      out.push_back(std::move(m));
    }
  }
  return changed ? make_block(std::move(out)) : self;
}

}  // namespace kiln::passes
