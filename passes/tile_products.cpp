// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/tile_products.hpp"

#include <optional>
#include <string>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/visitor.hpp"
#include "passes/product_tiles.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// `s` itself, or the one statement of a block of one (null for other blocks).
Stmt only(const Stmt& s) {
  if (const auto* b = dyn<BlockStmt>(s)) return b->stmts.size() == 1 ? b->stmts[0] : nullptr;
  return s;
}

/// True if `e` is fixed for the whole parfor: no loads, and no variable the parfor declares.
bool fixed(const Expr& e, const VarSet& inside) {
  if (has_load(e)) return false;
  for (const Var& v : free_vars(e))
    if (inside.count(v.get())) return false;
  return true;
}

class Tiler : public IRMutator {
 public:
  explicit Tiler(PassContext& ctx) : ctx_(ctx) {}

 protected:
  using IRMutator::visit;

  Stmt visit(const ParforStmt& p, const Stmt& self) override {
    std::string why;
    if (auto tiled = tile(p, why)) {
      ctx_.note(where(p) + ": loops over k then j accumulating products into their own elements -> register tiles of " +
                std::to_string(kRowTile) + " rows by vectors of columns, each element accumulated in order of k " +
                "(parfor over blocks of " + std::to_string(kColumnBlock) + " columns x row tiles, the columns in lanes)");
      return *tiled;
    }
    if (!why.empty()) ctx_.note(where(p) + ": loops over k then j accumulating products, not tiled: " + why);
    return IRMutator::visit(p, self);
  }

 private:
  PassContext& ctx_;

  static std::string where(const ParforStmt& p) { return p.origin.empty() ? std::string("parfor") : p.origin; }

  /// The tiled parfor, or nullopt: with `why` empty where p is not such a nest at all.
  static std::optional<Stmt> tile(const ParforStmt& p, std::string& why) {
    if (!p.reductions.empty() || !p.array_reductions.empty()) return std::nullopt;
    const Stmt kloop = only(p.body);
    const auto* fk = kloop ? dyn<ForStmt>(kloop) : nullptr;
    if (!fk) return std::nullopt;
    const auto* kbody = dyn<BlockStmt>(fk->body);
    const std::vector<Stmt> kstmts = kbody ? kbody->stmts : std::vector<Stmt>{fk->body};
    if (kstmts.empty()) return std::nullopt;
    const auto* fj = dyn<ForStmt>(kstmts.back());
    if (!fj) return std::nullopt;
    const Stmt store = only(fj->body);
    const auto* st = store ? dyn<StoreStmt>(store) : nullptr;
    if (!st || st->indices.size() < 2) return std::nullopt;
    const auto* sum = dyn<BinaryExpr>(st->value);
    const auto* old = sum && sum->op == BinaryOp::Add ? dyn<LoadExpr>(sum->a) : nullptr;
    if (!old || old->array != st->array || old->indices.size() != st->indices.size()) return std::nullopt;
    for (size_t d = 0; d < st->indices.size(); ++d)
      if (!equal(old->indices[d], st->indices[d])) return std::nullopt;
    const VarNode* i = p.indices.back().get();
    const VarNode* k = fk->index.get();
    const VarNode* j = fj->index.get();
    const auto* last = dyn<VarRefExpr>(st->indices.back());
    const auto* row = dyn<VarRefExpr>(st->indices[st->indices.size() - 2]);
    if (!last || last->var.get() != j || !row || row->var.get() != i) return std::nullopt;

    // From here on p is such a nest: a refusal says why.
    const VarSet inside = declared_in(p.body);
    LetValues lets;
    std::vector<Stmt> let_stmts;
    for (size_t s = 0; s + 1 < kstmts.size(); ++s) {
      const auto* let = dyn<LetStmt>(kstmts[s]);
      if (!let) {
        why = "the loop over k runs more than lets before the loop over j";
        return std::nullopt;
      }
      lets[let->var.get()] = let->init;
      let_stmts.push_back(kstmts[s]);
    }
    if (!fixed(fk->begin, inside) || !fixed(fk->end, inside) || !fixed(fj->begin, inside) || !fixed(fj->end, inside)) {
      why = "the loops' bounds change within the parfor";
      return std::nullopt;
    }
    for (size_t d = 0; d + 2 < st->indices.size(); ++d)
      if (!fixed(st->indices[d], inside)) {
        why = "the element's leading subscripts change within the parfor";
        return std::nullopt;
      }
    const Var& out = st->array;
    struct Reads : IRVisitor {
      const VarNode* out;
      bool overlaps = false;
      explicit Reads(const VarNode* o) : out(o) {}
      void visit(const LoadExpr& l) override {
        overlaps |= may_alias(l.array.get(), out);
        IRVisitor::visit(l);
      }
    } reads(out.get());
    reads.walk(sum->b);
    for (const Stmt& s : let_stmts) reads.walk(s);
    if (reads.overlaps) {
      why = "the products read " + out->name + " or an array that may be it";
      return std::nullopt;
    }
    const auto factors = split_product(sum->b, i, k, j, lets, why);
    if (!factors) {
      if (why.empty()) why = "the accumulated value " + to_string(sum->b) + " is not a float product";
      return std::nullopt;
    }

    TileSpec spec;
    spec.type = sum->b->type;
    for (size_t d = 0; d + 1 < p.indices.size(); ++d) {
      spec.outer.push_back(p.indices[d]);
      spec.outer_begins.push_back(p.begins[d]);
      spec.outer_ends.push_back(p.ends[d]);
    }
    spec.i = i;
    spec.i_begin = p.begins.back();
    spec.i_end = p.ends.back();
    spec.k = k;
    spec.k_begin = fk->begin;
    spec.k_end = fk->end;
    spec.j_var = fj->index;  // the nest is replaced: its column index is free for the parfor
    spec.j_begin = fj->begin;
    spec.j_end = fj->end;
    spec.lets = let_stmts;
    spec.row_factor = factors->row;
    spec.column = factors->column;
    spec.column_is_b = factors->column_is_b;
    spec.target = out;
    const std::vector<Expr> at = st->indices;
    spec.target_at = [at](const Replacements& with) {
      std::vector<Expr> o;
      for (const Expr& e : at) o.push_back(substitute(e, with));
      return o;
    };
    spec.accumulate = true;
    spec.origin = p.origin;
    return tile_parfor(spec);
  }
};

}  // namespace

ir::Function tile_products(const ir::Function& f, PassContext& ctx) {
  Tiler t(ctx);
  return t.mutate(f);
}

}  // namespace kiln::passes
