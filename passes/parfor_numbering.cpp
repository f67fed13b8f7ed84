// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/parfor_numbering.hpp"

#include <algorithm>
#include <functional>
#include <tuple>

#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/visitor.hpp"
#include "passes/loop_analysis.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// The reduction of `p` that declares scalar `v`, or null.
const Reduction* reduction_of(const ParforStmt& p, const VarNode* v) {
  for (const auto& r : p.reductions)
    if (r.var.get() == v || r.index.get() == v) return &r;
  return nullptr;
}

/// `m (max, identity -inf), k @i (argmin, identity inf), hist[*] (add)`
std::string reductions_text(const ParforStmt& p) {
  std::string s;
  for (const auto& r : p.reductions)
    s += (s.empty() ? "" : ", ") + r.var->name + (r.index ? " @" + r.index->name : "") + " (" +
         std::string(name_of(r.op)) + ", identity " + to_string(identity_of(r.op, r.var->type.elem)) + ")";
  for (const auto& r : p.array_reductions)
    s += (s.empty() ? "" : ", ") + r.array->name + "[*] (" + std::string(name_of(r.op)) + ")";
  return s;
}

/// The source ops of a parfor's origin, which passes join with loops::kOriginSeparator.
std::vector<std::string> origin_parts(const std::string& origin) {
  std::vector<std::string> out;
  if (origin.empty()) return out;
  const std::string sep = loops::kOriginSeparator;
  for (std::size_t start = 0;;) {
    const std::size_t end = origin.find(sep, start);
    out.push_back(origin.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + sep.size();
  }
}

}  // namespace

void ParforNumbering::remember(const Stmt& s, std::vector<int> ids) {
  alive_.push_back(s);
  ids_[s.get()] = std::move(ids);
}

namespace {

/// Calls visit(parfor) for each parfor of `s` reached through blocks, sequential loops and branches, in source
/// order; whether to go on into a parfor's body is visit's choice.
template <class F>
void for_each_outer_parfor(const Stmt& s, F&& visit) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Parfor: visit(s); break;
    case StmtKind::Block:
      for (const auto& x : s->as<BlockStmt>().stmts) for_each_outer_parfor(x, visit);
      break;
    case StmtKind::For: for_each_outer_parfor(s->as<ForStmt>().body, visit); break;
    case StmtKind::If:
      for_each_outer_parfor(s->as<IfStmt>().then_body, visit);
      for_each_outer_parfor(s->as<IfStmt>().else_body, visit);
      break;
    default: break;
  }
}

/// Every parfor of `s`, nested ones after the parfor holding them (pre-order).
std::vector<Stmt> parfors_in_order(const Stmt& s) {
  std::vector<Stmt> out;
  std::function<void(const Stmt&)> visit = [&](const Stmt& p) {
    out.push_back(p);
    for_each_outer_parfor(p->as<ParforStmt>().body, visit);
  };
  for_each_outer_parfor(s, visit);
  return out;
}

}  // namespace

void ParforNumbering::carry(const Stmt& before, const Stmt& after) {
  const std::vector<Stmt> from = parfors_in_order(before), to = parfors_in_order(after);
  for (std::size_t k = 0; k < from.size() && k < to.size(); ++k)
    if (to[k] != from[k]) remember(to[k], ids(from[k]));
}

std::string ParforNumbering::label(const Stmt& s) const {
  auto it = ids_.find(s.get());
  if (it == ids_.end()) return "#?";
  std::string t;
  for (int id : it->second) t += (t.empty() ? "#" : "+#") + std::to_string(id);
  return t;
}

void ParforNumbering::number(const Stmt& body, const SqueezedParfors& squeezed) {
  struct Walk {
    ParforNumbering& self;
    const SqueezedParfors& squeezed;
    std::vector<Stmt> order;
    std::vector<std::vector<int>> ancestors;
    std::vector<int> stack;
    void walk_parfor(const Stmt& s) {
      const auto& p = s->as<ParforStmt>();
      const int id = static_cast<int>(order.size()) + 1;
      order.push_back(s);
      ancestors.push_back(stack);
      self.remember(s, {id});
      self.ctx_.parfors.before.push_back({.id = id,
                                          .parent = stack.empty() ? 0 : stack.back(),
                                          .origin = loops::origin_text(p),
                                          .origins = origin_parts(p.origin),
                                          .space = loops::space_text(p),
                                          .reductions = reductions_text(p)});
      if (auto it = squeezed.dropped.find(s.get()); it != squeezed.dropped.end())
        self.ctx_.note(Topic::fusion, self.label(s) + ": dropped the dimension " + it->second +
                                          " of extent 1 (its index is always 0)");
      stack.push_back(id);
      for_each_outer_parfor(p.body, [this](const Stmt& x) { walk_parfor(x); });
      stack.pop_back();
    }
  } w{*this, squeezed, {}, {}, {}};
  for_each_outer_parfor(body, [&w](const Stmt& x) { w.walk_parfor(x); });

  std::vector<loops::Effects> fx;
  for (const auto& s : w.order) fx.push_back(loops::effects_of(s));
  auto related = [&](size_t i, size_t j) {
    const auto& a = w.ancestors[j];
    return std::find(a.begin(), a.end(), static_cast<int>(i) + 1) != a.end();
  };
  for (size_t j = 0; j < w.order.size(); ++j) {
    // Each value read comes from the last parfor before j that produced it.
    auto from = [&](auto produced) -> int {
      for (size_t i = j; i-- > 0;)
        if (!related(i, j) && produced(i)) return static_cast<int>(i);
      return -1;
    };
    for (const VarNode* a : fx[j].loaded) {
      const int i = from([&](size_t k) { return fx[k].stored.count(a) > 0; });
      if (i >= 0) ctx_.parfors.edges.push_back({i + 1, static_cast<int>(j) + 1, a->name, false});
    }
    for (const VarNode* v : fx[j].uses) {
      const int i = from([&](size_t k) { return reduction_of(w.order[k]->as<ParforStmt>(), v) != nullptr; });
      if (i >= 0) ctx_.parfors.edges.push_back({i + 1, static_cast<int>(j) + 1, v->name, true});
    }
  }
  // Deterministic order for the report and the graph file (sets iterate in no particular order).
  std::sort(ctx_.parfors.edges.begin(), ctx_.parfors.edges.end(), [](const auto& x, const auto& y) {
    return std::tie(x.from, x.to, x.scalar, x.var) < std::tie(y.from, y.to, y.scalar, y.var);
  });
}

void ParforNumbering::record_after(const Stmt& body) {
  struct Walk : IRVisitor {
    ParforNumbering& self;
    int enclosing = -1;  ///< the group whose body the walk is in
    explicit Walk(ParforNumbering& n) : self(n) {}
    void visit(const ParforStmt& p) override {
      auto it = self.ids_.find(&p);
      if (it == self.ids_.end()) return IRVisitor::visit(p);
      auto& after = self.ctx_.parfors.after;
      after.push_back({it->second, enclosing});
      const int outer = enclosing;
      enclosing = static_cast<int>(after.size()) - 1;
      IRVisitor::visit(p);
      enclosing = outer;
    }
  } w(*this);
  w.walk(body);
}

}  // namespace kiln::passes
