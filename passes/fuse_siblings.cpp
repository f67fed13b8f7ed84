// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/fuse_siblings.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "passes/extent_facts.hpp"
#include "passes/loop_analysis.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// `e` as `base + [lo, hi]`.
struct Offset {
  Expr base;
  std::int64_t lo, hi;
};

std::optional<std::int64_t> constant(const Expr& e) {
  const auto* c = dyn<ConstExpr>(e);
  if (!c || c->type != DType::I64) return std::nullopt;
  return c->i;
}

/// The ways `e` reads as an expression plus a bounded offset: itself; `u + k`, `u - k` as u plus k or -k;
/// `max(u, 0)` (either order) with u = n + [lo, hi] for an extent n (never negative) as n + [lo, max(hi, 0)].
std::vector<Offset> offsets(const Expr& e) {
  std::vector<Offset> out{{e, 0, 0}};
  auto shifted = [](const Expr& x) -> std::optional<Offset> {
    const auto* b = dyn<BinaryExpr>(x);
    if (!b || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return std::nullopt;
    if (const auto k = constant(b->b); k && std::llabs(*k) <= kMaxSiblingSlack) {
      const std::int64_t d = b->op == BinaryOp::Add ? *k : -*k;
      return Offset{b->a, d, d};
    }
    if (const auto k = constant(b->a); k && b->op == BinaryOp::Add && std::llabs(*k) <= kMaxSiblingSlack) return Offset{b->b, *k, *k};
    return std::nullopt;
  };
  if (auto s = shifted(e)) out.push_back(*s);
  if (const auto* m = dyn<BinaryExpr>(e); m && m->op == BinaryOp::Max) {
    for (const auto& [u, z] : {std::pair{m->a, m->b}, std::pair{m->b, m->a}}) {
      if (constant(z) != 0) continue;
      if (auto s = shifted(u); s && s->base->kind == ExprKind::Dim) out.push_back({s->base, s->lo, std::max<std::int64_t>(s->hi, 0)});
      if (u->kind == ExprKind::Dim) out.push_back({u, 0, 0});
    }
  }
  return out;
}

/// The most |a - b| can be, when the facts bound it.
std::optional<std::int64_t> distance(const Expr& a, const Expr& b, ExtentFacts& facts) {
  if (equal(a, b)) return 0;
  std::vector<Offset> oa, ob;
  for (const Expr& m : facts.members(a))
    for (const Offset& o : offsets(m)) oa.push_back(o);
  for (const Expr& m : facts.members(b))
    for (const Offset& o : offsets(m)) ob.push_back(o);
  std::optional<std::int64_t> best;
  for (const Offset& x : oa)
    for (const Offset& y : ob)
      if (facts.same(x.base, y.base)) {
        const std::int64_t d = std::max(std::llabs(x.lo - y.hi), std::llabs(x.hi - y.lo));
        if (!best || d < *best) best = d;
      }
  return best;
}

/// A parfor that is one launch's whole work: no reductions, no loops and no parfors inside.
bool plain(const ParforStmt& p) {
  if (!p.reductions.empty() || !p.array_reductions.empty() || runs_a_loop(p.body)) return false;
  struct Nested : IRVisitor {
    bool found = false;
    void visit(const ParforStmt&) override { found = true; }
  } nested;
  nested.walk(p.body);
  return !nested.found;
}

class Siblings {
 public:
  explicit Siblings(PassContext& ctx) : ctx_(ctx) {}

  Stmt walk(const Stmt& s, ExtentFacts& facts) {
    if (!s) return s;
    switch (s->kind) {
      case StmtKind::Block: {
        std::vector<Stmt> list = block(s->as<BlockStmt>().stmts, facts);
        return list == s->as<BlockStmt>().stmts ? s : make_block(std::move(list));
      }
      case StmtKind::For: {
        const auto& f = s->as<ForStmt>();
        ExtentFacts inner = facts;
        const Stmt body = walk(f.body, inner);
        return body == f.body ? s : make_for(f.index, f.begin, f.end, body);
      }
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        ExtentFacts a = facts, b = facts;
        const Stmt t = walk(i.then_body, a), e = walk(i.else_body, b);
        return t == i.then_body && e == i.else_body ? s : make_if(i.cond, t, e);
      }
      default: return s;
    }
  }

 private:
  PassContext& ctx_;

  std::vector<Stmt> block(const std::vector<Stmt>& stmts, ExtentFacts& facts) {
    std::vector<Stmt> out;
    for (const Stmt& s0 : stmts) {
      const Stmt s = walk(s0, facts);
      if (s->kind == StmtKind::Parfor && fuse_into(out, s, facts)) {
        facts.learn(s);
        continue;
      }
      out.push_back(s);
      facts.learn(s);
    }
    return out;
  }

  /// Fuses parfor `cs` with the nearest parfor of `out` when the rule allows; true if it did.
  bool fuse_into(std::vector<Stmt>& out, const Stmt& cs, ExtentFacts& facts) {
    const auto& c = cs->as<ParforStmt>();
    std::optional<std::size_t> at;
    for (std::size_t k = out.size(); k-- > 0 && !at;)
      if (out[k]->kind == StmtKind::Parfor) at = k;
    if (!at || !plain(c)) return false;
    const auto& p = out[*at]->as<ParforStmt>();
    if (!plain(p) || p.indices.size() != c.indices.size()) return false;
    bool same = true;
    for (std::size_t d = 0; d < p.indices.size(); ++d) {
      if (!equal(p.begins[d], c.begins[d])) return false;
      same = same && equal(p.ends[d], c.ends[d]);
    }
    if (same) return false;  // fuse_parfors' case (it refused it for a reason)
    std::int64_t slack = 0;
    for (std::size_t d = 0; d < p.indices.size(); ++d) {
      const auto dist = distance(p.ends[d], c.ends[d], facts);
      if (!dist || *dist > kMaxSiblingSlack) return false;
      slack = std::max(slack, *dist);
    }
    Renamer rename;
    for (std::size_t d = 0; d < p.indices.size(); ++d) rename.vars[c.indices[d].get()] = p.indices[d];
    const Stmt c_body = rename.mutate(c.body);
    const loops::Effects pe = loops::effects_of(out[*at]), ce = loops::effects_of(cs);
    if (loops::conflict(pe, ce)) return false;
    for (std::size_t k = *at + 1; k < out.size(); ++k) {
      const loops::Effects e = loops::effects_of(out[k]);
      if (loops::conflict(e, pe) || loops::needs(e, pe)) return false;
    }
    std::vector<Expr> ends;
    Expr p_test, c_test;
    auto conj = [](Expr& t, Expr x) { t = t ? make_binary(BinaryOp::And, t, x) : x; };
    for (std::size_t d = 0; d < p.indices.size(); ++d) {
      if (equal(p.ends[d], c.ends[d])) {
        ends.push_back(p.ends[d]);
        continue;
      }
      ends.push_back(make_binary(BinaryOp::Max, p.ends[d], c.ends[d]));
      conj(p_test, make_binary(BinaryOp::Lt, make_ref(p.indices[d]), p.ends[d]));
      conj(c_test, make_binary(BinaryOp::Lt, make_ref(p.indices[d]), c.ends[d]));
    }
    const Stmt fused = make_parfor(p.indices, p.begins, ends, make_block({make_if(p_test, p.body), make_if(c_test, c_body)}), {}, {},
                                   loops::joined_origin(p.origin, c.origin));
    ctx_.note(Topic::fusion, loops::origin_text(p) + " " + loops::space_text(p) + " + " + loops::origin_text(c) + " " + loops::space_text(c) +
                                 ": one launch over the larger space, each body under a test of its own bounds (independent "
                                 "siblings whose spaces differ by at most " +
                                 std::to_string(slack) + " in each dimension: one launch, and what both read is read once)");
    std::vector<Stmt> moved(out.begin() + static_cast<std::ptrdiff_t>(*at) + 1, out.end());
    out.resize(*at);
    out.insert(out.end(), moved.begin(), moved.end());
    out.push_back(fused);
    return true;
  }
};

}  // namespace

ir::Function fuse_siblings(const ir::Function& f, PassContext& ctx) {
  if (!ctx.fuse_siblings) return f;
  Siblings siblings(ctx);
  ExtentFacts facts;
  ir::Function out = f;
  out.body = siblings.walk(f.body, facts);
  return out;
}

}  // namespace kiln::passes
