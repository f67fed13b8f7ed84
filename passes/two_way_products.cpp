// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Two reductions of one matrix in opposite directions as one pass over it (see two_way_products.hpp).
//
// For the pair `s = reduce(op_c, axis 0) of vc(i, j)` and `q = reduce(op_r, axis 1) of vr(i, j)` over (n, m):
//
//   let tr = ceil(n / R), tc = ceil(m / C)
//   alloc s_part[tr, m], q_part[tc, n]
//   parfor (a in 0 .. tr, b in 0 .. tc) {                 // a tile: rows lo .. hi, columns clo .. chi
//     parfor (j in clo .. chi) { let acc = id; for i in lo .. hi { acc = acc op_c vc(i, j) }; s_part[a, j] = acc }
//     for i in lo .. hi { let acc = id; parfor (j in clo .. chi) reduce(op_r acc) { acc = acc op_r vr(i, j) };
//                         q_part[b, i] = acc }
//   }
//   parfor (j in 0 .. m) { s[j] = the column's tile partials folded in tile order }
//   parfor (i in 0 .. n) { q[i] = the row's tile partials folded in tile order }
//
// The tile's two loops read the same elements; the CUDA backend runs them as one walk over the tile's rows
// (emit_cooperative.cpp, two_way_tile), a lane's column sums in registers.
#include "passes/two_way_products.hpp"

#include <optional>
#include <string>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/ops.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

Var local(const std::string& name, DType t) { return make_var(name, Type::scalar(t), VarKind::Local); }
Var index_var(const std::string& name) { return make_var(name, Type::scalar(DType::I64), VarKind::Index); }
Expr i64c(std::int64_t v) { return make_i64(v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return make_binary(op, std::move(a), std::move(b)); }

const ReduceAxisStmt* reduce_of(const Stmt& s) {
  const auto* x = dyn<ReduceAxisStmt>(s);
  if (!x || x->shape.size() != 2 || is_arg_reduction(x->op)) return nullptr;
  return x;
}

/// The arrays loaded in `x`'s value at the space's own element (i, j), in order.
std::vector<const VarNode*> matrices(const ReduceAxisStmt& x) {
  struct Loads : IRVisitor {
    const ReduceAxisStmt* x = nullptr;
    std::vector<const VarNode*> found;
    void visit(const LoadExpr& l) override {
      if (l.indices.size() == 2 && equal(l.indices[0], make_ref(x->indices[0])) && equal(l.indices[1], make_ref(x->indices[1])))
        found.push_back(l.array.get());
      IRVisitor::visit(l);
    }
  } loads;
  loads.x = &x;
  loads.walk(x.value);
  return loads.found;
}

/// Equalities `a == b` that a check states (its condition, or a conjunction of them).
void equalities(const Expr& e, std::vector<std::pair<Expr, Expr>>& out) {
  const auto* b = dyn<BinaryExpr>(e);
  if (!b) return;
  if (b->op == BinaryOp::And) {
    equalities(b->a, out);
    equalities(b->b, out);
  } else if (b->op == BinaryOp::Eq) {
    out.emplace_back(b->a, b->b);
  }
}

bool same_extent(const Expr& a, const Expr& b, const std::vector<std::pair<Expr, Expr>>& facts) {
  if (equal(a, b)) return true;
  for (const auto& [x, y] : facts)
    if ((equal(x, a) && equal(y, b)) || (equal(x, b) && equal(y, a))) return true;
  return false;
}

/// The first statement after stmts[q] that reduces over `matrix` and depends (through the statements between) on
/// `results`, as text, or "".
std::string later_pass(const std::vector<Stmt>& stmts, size_t q, const VarNode* matrix, VarSet results) {
  for (size_t k = q + 1; k < stmts.size(); ++k) {
    const loops::Effects e = loops::effects_of(stmts[k]);
    bool depends = false;
    for (const VarNode* v : results) depends = depends || e.uses.count(v) || loops::may_alias_any(v, e.loaded);
    if (!depends) continue;
    if (const auto* r = dyn<ReduceAxisStmt>(stmts[k]); r && e.loaded.count(matrix)) return r->origin;
    for (const VarNode* v : e.defines) results.insert(v);
    for (const VarNode* v : e.stored) results.insert(v);
    for (const VarNode* v : e.writes) results.insert(v);
  }
  return {};
}

class TwoWay {
 public:
  explicit TwoWay(PassContext& ctx) : ctx_(ctx) {}

  std::vector<Stmt> list(std::vector<Stmt> stmts) {
    for (size_t k = 0; k < stmts.size(); ++k) {
      const ReduceAxisStmt* x = reduce_of(stmts[k]);
      if (!x) continue;
      const std::vector<const VarNode*> mx = matrices(*x);
      if (mx.empty()) continue;
      for (size_t q = k + 1; q < stmts.size(); ++q) {
        const ReduceAxisStmt* y = reduce_of(stmts[q]);
        if (!y || y->axis == x->axis) continue;
        const VarNode* shared = nullptr;
        for (const VarNode* a : matrices(*y))
          for (const VarNode* b : mx)
            if (a == b && !shared) shared = a;
        if (!shared) continue;
        if (auto fused = fuse(stmts, k, q, shared)) {
          stmts = std::move(*fused);
          break;
        }
        break;  // refused (noted): the first reduction keeps its own pass
      }
    }
    return stmts;
  }

 private:
  PassContext& ctx_;

  std::optional<std::vector<Stmt>> fuse(const std::vector<Stmt>& stmts, size_t k, size_t q, const VarNode* matrix) {
    const auto& x = stmts[k]->as<ReduceAxisStmt>();
    const auto& y = stmts[q]->as<ReduceAxisStmt>();
    const std::string what = "`" + x.origin + "` + `" + y.origin + "`";
    auto refuse = [&](const std::string& why) -> std::optional<std::vector<Stmt>> {
      ctx_.note(what + ": not one pass over " + matrix->name + ": " + why);
      return std::nullopt;
    };
    const loops::Effects xe = loops::effects_of(stmts[k]), ye = loops::effects_of(stmts[q]);
    if (loops::needs(ye, xe))
      return refuse("the second reads " + x.target->name + ", the first's result, which exists only once the whole first pass has run");
    // What runs before the pair: checks before it in this block, and those between that move above it.
    std::vector<std::pair<Expr, Expr>> facts;
    for (size_t b = 0; b < k; ++b)
      if (const auto* c = dyn<CheckStmt>(stmts[b])) equalities(c->cond, facts);
    std::vector<Stmt> up, down;
    std::vector<loops::Effects> down_fx;
    for (size_t b = k + 1; b < q; ++b) {
      const loops::Effects e = loops::effects_of(stmts[b]);
      if (e.checks) {
        // A check moves above the first reduction and the statements that stay between: it reads none of them.
        bool free = !loops::needs(e, xe) && !loops::conflict(e, xe);
        for (const auto& d : down_fx) free = free && !loops::needs(e, d) && !loops::conflict(e, d);
        if (!free) return refuse("`" + loops::first_line(stmts[b]) + "` between them checks what the first computes");
        if (const auto* c = dyn<CheckStmt>(stmts[b])) equalities(c->cond, facts);
        up.push_back(stmts[b]);
        continue;
      }
      // Any other statement moves below the second reduction, which then runs right after the first.
      if (loops::conflict(e, ye) || loops::needs(ye, e))
        return refuse("the second depends on `" + loops::first_line(stmts[b]) + "` between them");
      down.push_back(stmts[b]);
      down_fx.push_back(e);
    }
    // A result that a later pass over the same matrix reads (a row mean whose deviations a variance sums along the
    // same rows): that pass reads the matrix anyway, and the reduction shares it there (fusion, reuse_reductions);
    // taken into a tile, it would leave that pass and save nothing.
    if (const std::string later = later_pass(stmts, q, matrix, {x.target.get(), y.target.get()}); !later.empty())
      return refuse("`" + later + "` reads " + matrix->name + " again and depends on their results: it already makes a pass over " +
                    matrix->name + " that they share");
    if (!same_extent(x.shape[0], y.shape[0], facts) || !same_extent(x.shape[1], y.shape[1], facts))
      return refuse("their spaces " + to_string(x.shape[0]) + " x " + to_string(x.shape[1]) + " and " + to_string(y.shape[0]) + " x " +
                    to_string(y.shape[1]) + " are not known to be equal");
    const ReduceAxisStmt& cols = x.axis == 0 ? x : y;  // a sum per column (along axis 0)
    const ReduceAxisStmt& rows = x.axis == 0 ? y : x;  // a sum per row (along axis 1)

    const Expr n = rows.shape[0], m = rows.shape[1];
    auto ceil_div = [](const Expr& a, std::int64_t b) { return bin(BinaryOp::Div, bin(BinaryOp::Add, a, i64c(b - 1)), i64c(b)); };
    const Var tr = local("two_way_row_tiles", DType::I64), tc = local("two_way_column_tiles", DType::I64);
    const DType ct = cols.value->type, rt = rows.value->type;
    const Var cpart = make_var(cols.target->name + "_tiles", Type::array(ct, 2, true), VarKind::Local);
    const Var rpart = make_var(rows.target->name + "_tiles", Type::array(rt, 2, true), VarKind::Local);

    // The tile.
    const Var a = index_var("row_tile"), b = index_var("column_tile");
    const Var lo = local("tile_lo", DType::I64), hi = local("tile_hi", DType::I64), clo = local("tile_clo", DType::I64),
              chi = local("tile_chi", DType::I64);
    const Var jc = index_var(cols.indices[1]->name), ic = index_var(cols.indices[0]->name);
    const Var cacc = local(cols.target->name + "_acc", ct);
    Replacements at_c{{cols.indices[0].get(), make_ref(ic)}, {cols.indices[1].get(), make_ref(jc)}};
    const Stmt column_sums = make_parfor(
        {jc}, {make_ref(clo)}, {make_ref(chi)},
        make_block({make_let(cacc, identity_of(cols.op, ct)),
                    make_for(ic, make_ref(lo), make_ref(hi),
                             make_block({make_assign(cacc, bin(combiner(cols.op), make_ref(cacc), substitute(cols.value, at_c)))})),
                    make_store(cpart, {make_ref(a), make_ref(jc)}, make_ref(cacc))}),
        {}, cols.origin);
    const Var ir_ = index_var(rows.indices[0]->name), jr = index_var(rows.indices[1]->name);
    const Var racc = local(rows.target->name + "_acc", rt);
    Replacements at_r{{rows.indices[0].get(), make_ref(ir_)}, {rows.indices[1].get(), make_ref(jr)}};
    const Stmt row_sums = make_for(
        ir_, make_ref(lo), make_ref(hi),
        make_block({make_let(racc, identity_of(rows.op, rt)),
                    make_parfor({jr}, {make_ref(clo)}, {make_ref(chi)},
                                make_block({make_assign(racc, bin(combiner(rows.op), make_ref(racc), substitute(rows.value, at_r)))}),
                                {{racc, rows.op, nullptr}}, rows.origin),
                    make_store(rpart, {make_ref(b), make_ref(ir_)}, make_ref(racc))}));
    const Stmt tiles = make_parfor(
        {a, b}, {i64c(0), i64c(0)}, {make_ref(tr), make_ref(tc)},
        make_block({make_let(lo, bin(BinaryOp::Mul, make_ref(a), i64c(kTwoWayRows))),
                    make_let(hi, bin(BinaryOp::Min, bin(BinaryOp::Add, make_ref(lo), i64c(kTwoWayRows)), n)),
                    make_let(clo, bin(BinaryOp::Mul, make_ref(b), i64c(kTwoWayColumns))),
                    make_let(chi, bin(BinaryOp::Min, bin(BinaryOp::Add, make_ref(clo), i64c(kTwoWayColumns)), m)), column_sums, row_sums}),
        {}, loops::joined_origin(x.origin, y.origin));

    // The folds: each output's partials in tile order.
    auto fold = [&](const ReduceAxisStmt& r, const Var& part, const Var& count, const Expr& extent, DType t, bool column) {
      const Var o = index_var(r.indices[column ? 1 : 0]->name + "_out"), c = index_var("tile");
      const Var acc = local(r.target->name + "_total", t);
      std::vector<Expr> at = {make_ref(o)};
      if (r.keepdims) at.insert(column ? at.begin() : at.end(), i64c(0));
      return make_parfor({o}, {i64c(0)}, {extent},
                         make_block({make_let(acc, identity_of(r.op, t)),
                                     make_for(c, i64c(0), make_ref(count),
                                              make_block({make_assign(acc, bin(combiner(r.op), make_ref(acc), make_load(part, {make_ref(c), make_ref(o)})))})),
                                     make_store(r.target, at, make_ref(acc))}),
                         {}, r.origin);
    };
    auto out_shape = [](const ReduceAxisStmt& r, const Expr& kept) {
      if (!r.keepdims) return std::vector<Expr>{kept};
      return r.axis == 0 ? std::vector<Expr>{i64c(1), kept} : std::vector<Expr>{kept, i64c(1)};
    };

    std::vector<Stmt> out(stmts.begin(), stmts.begin() + static_cast<std::ptrdiff_t>(k));
    out.insert(out.end(), up.begin(), up.end());
    out.push_back(make_let(tr, ceil_div(n, kTwoWayRows)));
    out.push_back(make_let(tc, ceil_div(m, kTwoWayColumns)));
    out.push_back(make_allocate(cpart, {make_ref(tr), m}));
    out.push_back(make_allocate(rpart, {make_ref(tc), n}));
    out.push_back(tiles);
    out.push_back(make_allocate(cols.target, out_shape(cols, m)));
    out.push_back(fold(cols, cpart, tr, m, ct, true));
    out.push_back(make_allocate(rows.target, out_shape(rows, n)));
    out.push_back(fold(rows, rpart, tc, n, rt, false));
    out.insert(out.end(), down.begin(), down.end());
    out.insert(out.end(), stmts.begin() + static_cast<std::ptrdiff_t>(q) + 1, stmts.end());
    std::string text = what + ": one pass over " + matrix->name + " for both (tiles of " + std::to_string(kTwoWayRows) + " x " +
                       std::to_string(kTwoWayColumns) + " elements: each tile's column sums of its rows in row order and row sums of its "
                       "columns, each output's tile partials folded in tile order)";
    if (!up.empty()) text += "; " + std::to_string(up.size()) + " check(s) moved above them";
    if (!down.empty()) text += "; " + std::to_string(down.size()) + " statement(s) moved below them";
    ctx_.note(text);
    return out;
  }
};

}  // namespace

ir::Function two_way_products(const ir::Function& f, PassContext& ctx) {
  TwoWay t(ctx);
  ir::Function out = f;
  out.body = rewrite_statement_lists(f.body, [&](std::vector<Stmt> l) { return t.list(std::move(l)); });
  return out;
}

}  // namespace kiln::passes
