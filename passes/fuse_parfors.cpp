// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parfor fusion. Two parfors P then C over the same space become one whose body runs P's body then C's
// for each index. Sequentially that reorders P(i+1) before C(i); in parallel any interleaving is possible.
// Both are harmless exactly when no element is written by one and touched by the other in different
// iterations, so every such pair of accesses must use one subscript tuple (after renaming C's indices to
// P's) that picks one element per iteration, and neither may see the other's reduction variables, whose
// values exist only once the whole loop has run. That is what makes `exp(a - m)` fuse with `sum` but
// keeps `a / max(a)` apart: the divide needs the finished max (Numba fused it, bug #9139).
//
// Runs after collapse_parfors, so perfectly nested pranges fuse as n-d spaces, before
// eliminate_temporaries, which turns the arrays fusion leaves written and read in one body into scalars,
// and before hoist_invariants, whose new variables would hide that two subscripts are equal.
#include "passes/fuse_parfors.hpp"

#include <algorithm>
#include <optional>

#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/parfor_numbering.hpp"
#include "passes/squeeze_unit_dims.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;
using loops::Access;
using loops::Effects;

std::string subscripts(const std::vector<Expr>& idx) {
  std::string s;
  for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + to_string(idx[k]);
  return s;
}

std::string element(const Access& a) { return a.array->name + "[" + subscripts(a.index) + "]"; }

class Fuser {
 public:
  explicit Fuser(PassContext& ctx) : ctx_(ctx) {}

  Function run(const Function& f) {
    SqueezedParfors squeezed;
    Function out = squeeze_unit_dims(f, squeezed);
    numbering_.number(out.body, squeezed);
    out.body = rewrite(out.body);
    numbering_.record_after(out.body);
    return out;
  }

 private:
  PassContext& ctx_;
  ParforNumbering numbering_{ctx_};

  void remember(const Stmt& s, std::vector<int> ids) { numbering_.remember(s, std::move(ids)); }
  std::string label(const Stmt& s) const { return numbering_.label(s); }
  const std::vector<int>& ids(const Stmt& s) { return numbering_.ids(s); }

  // ---- rewriting, innermost blocks first --------------------------------------------------------------

  Stmt rewrite(const Stmt& s) {
    return rewrite_statement_lists(
        s, [this](std::vector<Stmt> list) { return fuse_list(std::move(list)); },
        // A parfor rebuilt around its fused body still holds the parfors it held (the report's numbering).
        [this](const Stmt& before, const Stmt& after) {
          if (after->kind == StmtKind::Parfor) remember(after, ids(before));
        });
  }

  /// Fuses each parfor of a block with the nearest earlier one over the same space (the parfors and other
  /// statements between them moving out of the way), then, in a second sweep, with the nearest earlier one
  /// over a leading part of its space (prefix fusion, see split). Same spaces go first so that an (i, j)
  /// parfor fuses with the (i, j) ones after it before it becomes rows of an (i) parfor, where their
  /// subscripts would no longer pick one element per iteration. A nearer parfor over another space is
  /// noted.
  std::vector<Stmt> fuse_list(std::vector<Stmt> list) {
    return into_branches(sweep(sweep(std::move(list), false), true));
  }

  /// Branch fusion: `P; if c { A } else { B }`, where c and the statements between do not depend on P,
  /// becomes `if c { P; A } else { P; B }` when P then fuses with a parfor of A or of B (see absorb); P
  /// still runs once. lower_array_ops leaves such ifs where it picks a schedule from the shapes at run
  /// time: the gradient dot(z, X) of logistic regression is one, and P, the parfor over the rows of X that
  /// computes z, fuses into its else branch, so each iteration is one parallel region and one pass over X.
  std::vector<Stmt> into_branches(std::vector<Stmt> list) {
    for (size_t q = 0; q < list.size(); ++q) {
      if (list[q]->kind != StmtKind::If) continue;
      const auto& branch = list[q]->as<IfStmt>();
      // P before the if: the condition and the statements between must not depend on it.
      std::optional<size_t> at;
      for (size_t k = q; k-- > 0 && !at;)
        if (list[k]->kind == StmtKind::Parfor) at = k;
      if (at) {
        const Effects pe = loops::effects_of(list[*at]);
        bool free = !loops::conflict(loops::effects_of(make_if(branch.cond, make_block({}))), pe);
        for (size_t k = *at + 1; k < q && free; ++k) free = !loops::conflict(loops::effects_of(list[k]), pe);
        if (free) {
          if (const Stmt merged = merged_into(list[*at], branch)) {
            std::vector<Stmt> out(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(*at));
            out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(*at) + 1, list.begin() + static_cast<std::ptrdiff_t>(q));
            out.push_back(merged);
            const size_t next = out.size();
            out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(q) + 1, list.end());
            list = std::move(out);
            q = next - 1;
            continue;
          }
        }
      }
      // P after the if (bicg's A p after the schedule choice of r^T A): it moves above the if, with the
      // statements between, when they all commute with the whole if (neither touches what the other writes or
      // defines), which is what running them first needs; a check stays where it is.
      std::optional<size_t> later;
      for (size_t k = q + 1; k < list.size() && !later; ++k)
        if (list[k]->kind == StmtKind::Parfor) later = k;
      if (!later) continue;
      const Effects ie = loops::effects_of(list[q]);
      bool free = true;
      for (size_t k = q + 1; k <= *later && free; ++k) {
        const Effects e = loops::effects_of(list[k]);
        free = !loops::conflict(e, ie) && !loops::needs(e, ie) && !loops::needs(ie, e) && !e.checks;
      }
      if (!free) continue;
      if (const Stmt merged = merged_into(list[*later], branch)) {
        std::vector<Stmt> out(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(q));
        out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(q) + 1, list.begin() + static_cast<std::ptrdiff_t>(*later));
        out.push_back(merged);
        const size_t next = out.size();
        out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(*later) + 1, list.end());
        list = std::move(out);
        q = next - 1;
      }
    }
    return list;
  }

  /// `if c { P; A } else { P; B }` for the branch `if c { A } else { B }`, when P fuses in at least one branch
  /// (see absorb), or null. P still runs once.
  Stmt merged_into(const Stmt& ps, const IfStmt& branch) {
    // The else branch gets a copy of P with variables of its own: a variable is defined once in a
    // function, and P may end up in both branches, fused or as it is.
    const Stmt ps_else = ir::fresh_copy(ps);
    remember(ps_else, ids(ps));
    numbering_.carry(ps, ps_else);  // the parfors nested in P
    auto then_fused = absorb(ps, branch.then_body);
    auto else_fused = absorb(ps_else, branch.else_body);
    if (!then_fused && !else_fused) return nullptr;
    auto with_p = [&](const Stmt& p_copy, const Stmt& body) {
      std::vector<Stmt> l{p_copy};
      if (body)
        for (const auto& x : loops::statements(body)) l.push_back(x);
      return l;
    };
    ctx_.note(Topic::fusion, label(ps) + ": moved into both branches of `if " + to_string(branch.cond) +
                                 "` (it fuses in the " + (then_fused ? "first" : "second") + ")");
    return make_if(branch.cond, make_block(then_fused ? *then_fused : with_p(ps, branch.then_body)),
                   make_block(else_fused ? *else_fused : with_p(ps_else, branch.else_body)));
  }

  /// `P; body` with P fused into the first parfor of `body` over its space or over a space it is a prefix
  /// of (statements before that parfor moving out of the way), or nothing when that fusion is refused.
  std::optional<std::vector<Stmt>> absorb(const Stmt& ps, const Stmt& body) {
    if (!body) return std::nullopt;
    const auto& p = ps->as<ParforStmt>();
    const std::vector<Stmt> stmts = loops::statements(body);
    for (size_t k = 0; k < stmts.size(); ++k) {
      if (stmts[k]->kind != StmtKind::Parfor) continue;
      const auto& c = stmts[k]->as<ParforStmt>();
      const bool same = same_space(p, c);
      if (!same && !(splittable(c) && prefix_space(p, c))) continue;
      const std::vector<Stmt> between(stmts.begin(), stmts.begin() + static_cast<std::ptrdiff_t>(k));
      auto fused = try_fuse(ps, between, same ? stmts[k] : split(stmts[k], p.indices.size()));
      if (!fused) return std::nullopt;
      std::vector<Stmt> out = fused->up;
      out.push_back(fused->parfor);
      out.insert(out.end(), fused->down.begin(), fused->down.end());
      out.insert(out.end(), stmts.begin() + static_cast<std::ptrdiff_t>(k) + 1, stmts.end());
      return out;
    }
    return std::nullopt;
  }

  std::vector<Stmt> sweep(std::vector<Stmt> list, bool prefixes) {
    std::vector<Stmt> out;
    for (auto& s : list) {
      if (s->kind == StmtKind::Parfor) {
        const auto& c = s->as<ParforStmt>();
        std::optional<size_t> nearest, target;
        for (size_t k = out.size(); k-- > 0 && !target;) {
          if (out[k]->kind != StmtKind::Parfor) continue;
          const auto& p = out[k]->as<ParforStmt>();
          if (!nearest) nearest = k;
          if (prefixes ? splittable(c) && prefix_space(p, c) : same_space(p, c)) target = k;
        }
        // Noted once, in the last sweep, unless the nearest is over the same space (its refusal is noted).
        if (prefixes && nearest && nearest != target && !same_space(out[*nearest]->as<ParforStmt>(), c)) {
          const auto& a = out[*nearest]->as<ParforStmt>();
          ctx_.note(Topic::fusion, label(out[*nearest]) + " + " + label(s) + ": refused: different index spaces " +
                                       loops::space_text(a) + " and " + loops::space_text(c));
        }
        if (target) {
          std::vector<Stmt> between(out.begin() + static_cast<std::ptrdiff_t>(*target) + 1, out.end());
          const Stmt cs = prefixes ? split(s, out[*target]->as<ParforStmt>().indices.size()) : s;
          if (auto fused = try_fuse(out[*target], between, cs)) {
            out.resize(*target);
            out.insert(out.end(), fused->up.begin(), fused->up.end());
            out.push_back(fused->parfor);
            out.insert(out.end(), fused->down.begin(), fused->down.end());
            continue;
          }
        }
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  static bool same_space(const ParforStmt& p, const ParforStmt& c) {
    if (p.indices.size() != c.indices.size()) return false;
    for (size_t d = 0; d < p.indices.size(); ++d)
      if (!equal(p.begins[d], c.begins[d]) || !equal(p.ends[d], c.ends[d])) return false;
    return true;
  }

  /// P's space is the leading dimensions of C's, and C has more: (i) and (i, j).
  static bool prefix_space(const ParforStmt& p, const ParforStmt& c) {
    if (p.indices.size() >= c.indices.size()) return false;
    for (size_t d = 0; d < p.indices.size(); ++d)
      if (!equal(p.begins[d], c.begins[d]) || !equal(p.ends[d], c.ends[d])) return false;
    return true;
  }

  /// Scalar reductions run over the whole space: split, they would be reductions of both loops.
  static bool splittable(const ParforStmt& c) { return c.reductions.empty(); }

  /// Prefix fusion. C over (i, j) becomes `parfor (i) { parfor (j) { body } }`, which then fuses with P over
  /// (i) by the ordinary rules: P's iteration i and C's row i run together, so what P computes per row
  /// (statistics of row i stored at [i, 0]) is still in registers or cache when C uses it, and becomes a
  /// scalar (eliminate_temporaries); `(x - mean(x, axis=1)) / std(x, axis=1)` reads each row of x from
  /// memory once. The inner loops are a parfor, whose iterations are as independent as C's were (the
  /// backend runs a nested parfor inline, vectorized). Array reductions move to the outer parfor; the inner
  /// loops stay a parfor when every update of them picks one element per inner iteration (bicg's s[j] +=
  /// r[i] A[i, j] over j): the row's iterations then update different elements, and the inner parfor may fuse
  /// with P's loop over the same row (one pass over each row of A for both r^T A and A p). Otherwise (a
  /// histogram's h[k(i, j)]) two iterations of a row may update one element: they are plain `for` loops.
  Stmt split(const Stmt& cs, size_t outer) {
    const auto& c = cs->as<ParforStmt>();
    const auto n = static_cast<std::ptrdiff_t>(outer);
    const std::vector<Var> inner_idx(c.indices.begin() + n, c.indices.end());
    const std::vector<Expr> inner_begins(c.begins.begin() + n, c.begins.end()),
        inner_ends(c.ends.begin() + n, c.ends.end());
    // Every update of a reduced array (or of an array that may be one) in C's body must use one subscript tuple
    // that picks one element per inner iteration: s[j] and s[j + 1] together reach an element from two
    // iterations.
    bool distinct_updates = true;
    if (!c.array_reductions.empty()) {
      const VarSet variant = loops::variant_in(c.body);
      const std::vector<Access> accesses = loops::effects_of(c.body).accesses;
      for (const auto& r : c.array_reductions) {
        const std::vector<Expr>* first = nullptr;
        for (const Access& a : accesses) {
          if (!a.store || !ir::may_alias(a.array.get(), r.array.get())) continue;
          if (!first) first = &a.index;
          distinct_updates = distinct_updates && loops::equal_all(*first, a.index) &&
                             loops::one_element_per_iteration(a.index, inner_idx, variant);
        }
      }
    }
    Stmt inner;
    if (distinct_updates) {
      inner = make_parfor(inner_idx, inner_begins, inner_ends, c.body, {}, c.origin);
      remember(inner, ids(cs));
    } else {
      inner = c.body;
      for (size_t d = inner_idx.size(); d-- > 0;) inner = make_for(inner_idx[d], inner_begins[d], inner_ends[d], inner);
    }
    Stmt r = make_parfor(std::vector<Var>(c.indices.begin(), c.indices.begin() + n),
                         std::vector<Expr>(c.begins.begin(), c.begins.begin() + n),
                         std::vector<Expr>(c.ends.begin(), c.ends.begin() + n), make_block({inner}), {},
                         c.array_reductions, c.origin);
    remember(r, ids(cs));
    return r;
  }

  struct Fused {
    std::vector<Stmt> up;  ///< statements that were between and now run first
    Stmt parfor;
    std::vector<Stmt> down;  ///< statements that were between and now run after
  };

  std::optional<Fused> try_fuse(const Stmt& ps, const std::vector<Stmt>& between, const Stmt& cs) {
    const auto& p = ps->as<ParforStmt>();
    const auto& c = cs->as<ParforStmt>();
    const std::string P = label(ps), C = label(cs);
    auto refuse = [&](const std::string& why) -> std::optional<Fused> {
      ctx_.note(Topic::fusion, P + " + " + C + ": refused: " + why);
      return std::nullopt;
    };

    // C with P's indices, so that subscripts compare structurally.
    Renamer rename;
    for (size_t d = 0; d < p.indices.size(); ++d) rename.vars[c.indices[d].get()] = p.indices[d];
    const Stmt c_body = rename.mutate(c.body);
    numbering_.carry(c.body, c_body);  // its nested parfors may fuse with P's
    const Stmt renamed = with_body(c, c_body);

    const Effects pe = loops::effects_of(ps), ce = loops::effects_of(renamed);
    for (const auto& r : p.reductions)
      for (const VarNode* v : {r.var.get(), r.index.get()})
        if (v && ce.uses.count(v))
          return refuse(C + " uses " + v->name + ", the " + std::string(name_of(r.op)) + " reduction of " + P +
                        ", which is known only after all of " + P + " has run (as in a / max(a); Numba bug #9139)");
    for (const auto& r : c.reductions)
      for (const VarNode* v : {r.var.get(), r.index.get()})
        if (v && pe.uses.count(v)) return refuse(P + " reads " + v->name + ", which " + C + " reduces into");
    for (const auto& r : p.array_reductions)
      if (loops::may_alias_any(r.array.get(), ce.loaded) || loops::may_alias_any(r.array.get(), ce.stored))
        return refuse(C + " uses " + r.array->name + ", an array reduction of " + P + ", complete only after " + P);
    for (const auto& r : c.array_reductions)
      if (loops::may_alias_any(r.array.get(), pe.loaded) || loops::may_alias_any(r.array.get(), pe.stored))
        return refuse(C + " reduces into " + r.array->name + ", which " + P + " uses");

    VarSet variant = loops::variant_in(p.body);
    for (const VarNode* v : loops::variant_in(c_body)) variant.insert(v);
    for (const Access& a : pe.accesses)
      for (const Access& b : ce.accesses) {
        if ((!a.store && !b.store) || !ir::may_alias(a.array.get(), b.array.get())) continue;
        const bool same = loops::equal_all(a.index, b.index);
        if (same && loops::one_element_per_iteration(a.index, p.indices, variant)) continue;
        if (same) return refuse(P + " and " + C + " access " + element(a) + ", which is not one element per iteration");
        const std::string alias = a.array == b.array ? "" : " (" + b.array->name + " may be the same array as " + a.array->name + ")";
        if (a.store && !b.store)
          return refuse("cross-iteration dependence: " + C + " reads " + element(b) + " but " + P + " writes " +
                        element(a) + alias);
        if (!a.store)
          return refuse(C + " stores to " + element(b) + ", which " + P + " reads as " + element(a) + alias +
                        ": another iteration of " + P + " could see the new value");
        return refuse(P + " writes " + element(a) + " and " + C + " writes " + element(b) + alias +
                      ": the last write would depend on the order of iterations");
      }

    // Statements between them move above P or below C.
    Fused out;
    std::vector<Effects> down_fx;
    std::vector<std::string> moved;
    const Effects c_whole = loops::effects_of(cs);
    for (const auto& s : between) {
      const Effects e = loops::effects_of(s);
      bool up = !loops::conflict(e, pe);
      for (const auto& d : down_fx) up = up && !loops::conflict(e, d) && !loops::needs(e, d);
      if (up) {
        out.up.push_back(s);
        moved.push_back("above: " + loops::first_line(s));
      } else if (!e.checks && !loops::conflict(e, c_whole) && !loops::needs(c_whole, e)) {
        out.down.push_back(s);
        down_fx.push_back(e);
        moved.push_back("below: " + loops::first_line(s));
      } else if (e.checks) {
        // A check may be what keeps the code after it in bounds: it never moves below that code.
        return refuse("`" + loops::first_line(s) + "` between them depends on " + P + " and is a check, which " + C +
                      " must not run before");
      } else {
        return refuse("`" + loops::first_line(s) + "` between them depends on " + P + " and " + C + " depends on it");
      }
    }

    std::vector<Stmt> body = loops::statements(p.body);
    for (const auto& s : loops::statements(c_body)) body.push_back(s);
    // The bodies were fused on their own before (innermost blocks first); together they may hold loops that
    // now meet: the rows of min(x, 1) and max(x, 1) each reduce a row, and one pass over the row does both.
    if (std::count_if(body.begin(), body.end(), [](const Stmt& s) { return s->kind == StmtKind::Parfor; }) > 1)
      body = fuse_list(std::move(body));
    std::vector<Reduction> reds = p.reductions;
    reds.insert(reds.end(), c.reductions.begin(), c.reductions.end());
    std::vector<ArrayReduction> ars = p.array_reductions;
    ars.insert(ars.end(), c.array_reductions.begin(), c.array_reductions.end());
    out.parfor = make_parfor(p.indices, p.begins, p.ends, make_block(std::move(body)), std::move(reds), std::move(ars),
                             loops::joined_origin(p.origin, c.origin));
    std::vector<int> both = ids(ps);
    for (int id : ids(cs)) both.push_back(id);
    remember(out.parfor, std::move(both));

    std::string text = P + " + " + C + ": fused";
    for (size_t k = 0; k < moved.size(); ++k) text += (k ? "; moved " : " (moved ") + moved[k];
    if (!moved.empty()) text += ")";
    ctx_.note(Topic::fusion, text);
    return out;
  }
};

}  // namespace

ir::Function fuse_parfors(const ir::Function& f, PassContext& ctx) {
  Fuser fuser(ctx);
  return fuser.run(f);
}

}  // namespace kiln::passes
