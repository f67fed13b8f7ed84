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
#include <unordered_map>

#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "passes/loop_analysis.hpp"
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

/// Replaces references to scalar variables by expressions.
class Substitute : public IRMutator {
 public:
  std::unordered_map<const VarNode*, Expr> with;

 protected:
  using IRMutator::visit;
  Expr visit(const VarRefExpr& e, const Expr& self) override {
    auto it = with.find(e.var.get());
    return it == with.end() ? self : it->second;
  }
};

/// Drops the dimensions `0 .. 1` of n-d parfors, whose index is always 0: a keepdims reduction makes
/// (n, 1) spaces that are really the (n) space of the loops around them.
class SqueezeUnitDims : public IRMutator {
 public:
  std::unordered_map<const StmtNode*, std::string> dropped;  ///< new parfor -> the indices it lost
  std::vector<Stmt> alive;

 protected:
  using IRMutator::visit;
  Stmt visit(const ParforStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);
    const auto& p = r->as<ParforStmt>();
    std::vector<size_t> keep;
    Substitute zero;
    std::string names;
    auto unit = [&](size_t d) { return is_const_value(p.begins[d], 0) && is_const_value(p.ends[d], 1); };
    bool all_unit = true;
    for (size_t d = 0; d < p.indices.size(); ++d) all_unit = all_unit && unit(d);
    for (size_t d = 0; d < p.indices.size(); ++d) {
      if (unit(d) && !(all_unit && d == 0)) {  // one dimension stays
        zero.with[p.indices[d].get()] = p.begins[d];
        names += (names.empty() ? "" : ", ") + p.indices[d]->name;
      } else {
        keep.push_back(d);
      }
    }
    if (keep.size() == p.indices.size()) return r;
    std::vector<Var> idx;
    std::vector<Expr> begins, ends;
    for (size_t d : keep) {
      idx.push_back(p.indices[d]);
      begins.push_back(p.begins[d]);
      ends.push_back(p.ends[d]);
    }
    Stmt q = make_parfor(std::move(idx), std::move(begins), std::move(ends), zero.mutate(p.body), p.reductions,
                         p.array_reductions, p.origin);
    alive.push_back(q);
    dropped[q.get()] = names;
    return q;
  }
};

/// A copy of `s` whose own variables (indices, lets, allocations) are new ones: a statement placed twice in
/// a function must not define a variable twice.
Stmt fresh_copy(const Stmt& s) {
  struct Definitions : IRVisitor {
    std::vector<Var> vars;
    void visit(const LetStmt& l) override {
      vars.push_back(l.var);
      IRVisitor::visit(l);
    }
    void visit(const ForStmt& f) override {
      vars.push_back(f.index);
      IRVisitor::visit(f);
    }
    void visit(const ParforStmt& p) override {
      vars.insert(vars.end(), p.indices.begin(), p.indices.end());
      IRVisitor::visit(p);
    }
    void visit(const AllocateStmt& a) override {
      vars.push_back(a.array);
      IRVisitor::visit(a);
    }
    void visit(const BindStmt& b) override {
      if (b.declare) vars.push_back(b.target);
      IRVisitor::visit(b);
    }
  } defs;
  defs.walk(s);
  struct Fresh : loops::Renamer {
    using loops::Renamer::visit;
    Stmt visit(const LetStmt& l, const Stmt&) override { return make_let(map(l.var), mutate(l.init)); }
    Stmt visit(const ForStmt& f, const Stmt&) override {
      return make_for(map(f.index), mutate(f.begin), mutate(f.end), mutate(f.body));
    }
    Stmt visit(const ParforStmt& p, const Stmt& self) override {
      const Stmt r = loops::Renamer::visit(p, self);
      const auto& q = r->as<ParforStmt>();
      std::vector<Var> idx;
      for (const auto& i : q.indices) idx.push_back(map(i));
      return make_parfor(std::move(idx), q.begins, q.ends, q.body, q.reductions, q.array_reductions, q.origin);
    }
    Stmt visit(const AllocateStmt& a, const Stmt&) override {
      std::vector<Expr> shape;
      mutate_all(a.shape, shape);
      return make_allocate(map(a.array), std::move(shape));
    }
  } fresh;
  for (const Var& v : defs.vars) fresh.vars[v.get()] = make_var(v->name, v->type, v->kind, v->where);
  return fresh.mutate(s);
}

class Fuser {
 public:
  explicit Fuser(PassContext& ctx) : ctx_(ctx) {}

  Function run(const Function& f) {
    Function out = squeeze_.mutate(f);
    number(out.body);
    out.body = rewrite(out.body);
    record_after(out.body);
    return out;
  }

 private:
  PassContext& ctx_;
  SqueezeUnitDims squeeze_;
  /// The original parfors each parfor node holds. Nodes are kept alive in alive_ so that no address in
  /// the map is ever reused by a new node.
  std::unordered_map<const StmtNode*, std::vector<int>> ids_;
  std::vector<Stmt> alive_;

  void remember(const Stmt& s, std::vector<int> ids) {
    alive_.push_back(s);
    ids_[s.get()] = std::move(ids);
  }

  std::string label(const Stmt& s) const {
    auto it = ids_.find(s.get());
    if (it == ids_.end()) return "#?";
    std::string t;
    for (int id : it->second) t += (t.empty() ? "#" : "+#") + std::to_string(id);
    return t;
  }

  // ---- numbering and the dataflow graph of the parfors as they enter ----------------------------------

  void number(const Stmt& body) {
    struct Walk : IRVisitor {
      Fuser& self;
      std::vector<Stmt> order;
      std::vector<std::vector<int>> ancestors;
      std::vector<int> stack;
      explicit Walk(Fuser& f) : self(f) {}
      void walk_parfor(const Stmt& s) {
        const auto& p = s->as<ParforStmt>();
        const int id = static_cast<int>(order.size()) + 1;
        order.push_back(s);
        ancestors.push_back(stack);
        self.remember(s, {id});
        self.ctx_.parfors.before.push_back({id, loops::origin_text(p), loops::space_text(p), reductions_text(p)});
        if (auto it = self.squeeze_.dropped.find(s.get()); it != self.squeeze_.dropped.end())
          self.ctx_.note(Topic::fusion, self.label(s) + ": dropped the dimension " + it->second +
                                            " of extent 1 (its index is always 0)");
        stack.push_back(id);
        for (const auto& x : loops::statements(p.body)) walk_stmt(x);
        stack.pop_back();
      }
      void walk_stmt(const Stmt& s) {
        if (s->kind == StmtKind::Parfor) return walk_parfor(s);
        switch (s->kind) {
          case StmtKind::Block:
            for (const auto& x : s->as<BlockStmt>().stmts) walk_stmt(x);
            break;
          case StmtKind::For: walk_stmt(s->as<ForStmt>().body); break;
          case StmtKind::If:
            walk_stmt(s->as<IfStmt>().then_body);
            if (s->as<IfStmt>().else_body) walk_stmt(s->as<IfStmt>().else_body);
            break;
          default: break;
        }
      }
    } w(*this);
    w.walk_stmt(body);

    std::vector<Effects> fx;
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

  void record_after(const Stmt& body) {
    struct Walk : IRVisitor {
      Fuser& self;
      explicit Walk(Fuser& f) : self(f) {}
      void visit(const ParforStmt& p) override {
        auto it = self.ids_.find(&p);
        if (it != self.ids_.end()) self.ctx_.parfors.after.push_back(it->second);
        IRVisitor::visit(p);
      }
    } w(*this);
    w.walk(body);
  }

  // ---- rewriting, innermost blocks first --------------------------------------------------------------

  Stmt rewrite(const Stmt& s) {
    return rewrite_statement_lists(
        s, [this](std::vector<Stmt> list) { return fuse_list(std::move(list)); },
        // A parfor rebuilt around its fused body still holds the parfors it held (the report's numbering).
        [this](const Stmt& before, const Stmt& after) {
          if (after->kind == StmtKind::Parfor) remember(after, ids_[before.get()]);
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
      std::optional<size_t> at;
      for (size_t k = q; k-- > 0 && !at;)
        if (list[k]->kind == StmtKind::Parfor) at = k;
      if (!at) continue;
      const Stmt& ps = list[*at];
      const Effects pe = loops::effects_of(ps);
      const auto& branch = list[q]->as<IfStmt>();
      bool free = !loops::conflict(loops::effects_of(make_if(branch.cond, make_block({}))), pe);
      for (size_t k = *at + 1; k < q && free; ++k) free = !loops::conflict(loops::effects_of(list[k]), pe);
      if (!free) continue;
      // The else branch gets a copy of P with variables of its own: a variable is defined once in a
      // function, and P may end up in both branches, fused or as it is.
      const Stmt ps_else = fresh_copy(ps);
      remember(ps_else, ids_[ps.get()]);
      auto then_fused = absorb(ps, branch.then_body);
      auto else_fused = absorb(ps_else, branch.else_body);
      if (!then_fused && !else_fused) continue;
      auto with_p = [&](const Stmt& p_copy, const Stmt& body) {
        std::vector<Stmt> l{p_copy};
        if (body)
          for (const auto& x : loops::statements(body)) l.push_back(x);
        return l;
      };
      const Stmt merged = make_if(branch.cond, make_block(then_fused ? *then_fused : with_p(ps, branch.then_body)),
                                  make_block(else_fused ? *else_fused : with_p(ps_else, branch.else_body)));
      ctx_.note(Topic::fusion, label(ps) + ": moved into both branches of `if " + to_string(branch.cond) +
                                   "` (it fuses in the " + (then_fused ? "first" : "second") + ")");
      std::vector<Stmt> out(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(*at));
      out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(*at) + 1, list.begin() + static_cast<std::ptrdiff_t>(q));
      out.push_back(merged);
      const size_t next = out.size();
      out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(q) + 1, list.end());
      list = std::move(out);
      q = next - 1;
    }
    return list;
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
  /// backend runs a nested parfor inline, vectorized); with array reductions, which the outer parfor then
  /// declares, they are plain `for` loops, because two iterations of a row may update one element.
  Stmt split(const Stmt& cs, size_t outer) {
    const auto& c = cs->as<ParforStmt>();
    const auto n = static_cast<std::ptrdiff_t>(outer);
    const std::vector<Var> inner_idx(c.indices.begin() + n, c.indices.end());
    const std::vector<Expr> inner_begins(c.begins.begin() + n, c.begins.end()),
        inner_ends(c.ends.begin() + n, c.ends.end());
    Stmt inner;
    if (c.array_reductions.empty()) {
      inner = make_parfor(inner_idx, inner_begins, inner_ends, c.body, {}, c.origin);
    } else {
      inner = c.body;
      for (size_t d = inner_idx.size(); d-- > 0;) inner = make_for(inner_idx[d], inner_begins[d], inner_ends[d], inner);
    }
    Stmt r = make_parfor(std::vector<Var>(c.indices.begin(), c.indices.begin() + n),
                         std::vector<Expr>(c.begins.begin(), c.begins.begin() + n),
                         std::vector<Expr>(c.ends.begin(), c.ends.begin() + n), make_block({inner}), {},
                         c.array_reductions, c.origin);
    remember(r, ids_[cs.get()]);
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
    loops::Renamer rename;
    for (size_t d = 0; d < p.indices.size(); ++d) rename.vars[c.indices[d].get()] = p.indices[d];
    const Stmt c_body = rename.mutate(c.body);
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
    std::vector<Reduction> reds = p.reductions;
    reds.insert(reds.end(), c.reductions.begin(), c.reductions.end());
    std::vector<ArrayReduction> ars = p.array_reductions;
    ars.insert(ars.end(), c.array_reductions.begin(), c.array_reductions.end());
    out.parfor = make_parfor(p.indices, p.begins, p.ends, make_block(std::move(body)), std::move(reds), std::move(ars),
                             joined_origin(p.origin, c.origin));
    std::vector<int> ids = ids_[ps.get()];
    for (int id : ids_[cs.get()]) ids.push_back(id);
    remember(out.parfor, std::move(ids));

    std::string text = P + " + " + C + ": fused";
    for (size_t k = 0; k < moved.size(); ++k) text += (k ? "; moved " : " (moved ") + moved[k];
    if (!moved.empty()) text += ")";
    ctx_.note(Topic::fusion, text);
    return out;
  }

  /// "exp at f.cpp:3 | sum at f.cpp:3", each origin once (" + " would be ambiguous: "a + b" is an origin).
  static std::string joined_origin(const std::string& a, const std::string& b) {
    if (b.empty() || a == b) return a;
    if (a.empty()) return b;
    const std::string sep = loops::kOriginSeparator;
    size_t start = 0;
    while (start <= a.size()) {
      size_t end = a.find(sep, start);
      if (end == std::string::npos) end = a.size();
      if (a.compare(start, end - start, b) == 0) return a;
      start = end + sep.size();
    }
    return a + sep + b;
  }
};

}  // namespace

ir::Function fuse_parfors(const ir::Function& f, PassContext& ctx) {
  Fuser fuser(ctx);
  return fuser.run(f);
}

}  // namespace kiln::passes
