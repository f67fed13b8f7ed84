// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A contraction `target[.., i, j] = sum over k of a(.., i, k) * b(.., k, j)` (kiln::dot of matrices and of
// stacks of them, either operand a transposed view) lowered as
//
//   parfor (other kept dims, t over ceil(ni / R), j) {
//     let i0 = t * R
//     if (i0 + R <= ni) {                      // a whole tile: R rows of column j
//       let acc_0 = -0.0, ..., acc_{R-1} = -0.0
//       for k in 0 .. nk { let bk = b(k, j); acc_r = acc_r + a(i0 + r, k) * bk  for each r }
//       target[i0 + r, j] = acc_r  for each r
//     } else {                                 // the last rows, one at a time
//       for i in i0 .. ni { let acc = -0.0; for k in 0 .. nk { acc = acc + a(i, k) * b(k, j) }; target[i, j] = acc }
//     }
//   }
//
// Every output element is its own in-order sum from the identity, as the interpreter computes it (the product
// keeps its operands' order; bk is the same load the value makes), so the results are bitwise the interpreter's
// for any extents and thread count. The sequential loop over k carrying float sums is what ir::plan_lanes runs
// in lanes across j on the CPU: each lane one column, vector accumulators held in registers along all of k,
// several vectors of columns at once (ir::kWalkingVectors): a register tile of R rows by that many columns, in
// which each column vector loaded serves R rows and each broadcast row value serves every column of the tile.
#include "passes/product_tiles.hpp"

#include <vector>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/reductions.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

Expr i64c(std::int64_t v) { return make_i64(v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return make_binary(op, std::move(a), std::move(b)); }
Var local(const std::string& name, DType t) { return make_var(name, Type::scalar(t), VarKind::Local); }
Var index_var(const std::string& name) { return make_var(name, Type::scalar(DType::I64), VarKind::Index); }

/// True if every load in `e` that reads at `j` has `j` alone as its last subscript and nowhere else: lanes
/// across j then read consecutive elements of a row (one vector load), not a gather.
bool unit_step_along(const Expr& e, const VarNode* j) {
  struct Loads : IRVisitor {
    const VarNode* j;
    bool ok = true;
    explicit Loads(const VarNode* v) : j(v) {}
    void visit(const LoadExpr& l) override {
      for (size_t d = 0; d < l.indices.size(); ++d) {
        if (!uses(l.indices[d], j)) continue;
        const auto* r = dyn<VarRefExpr>(l.indices[d]);
        if (d + 1 != l.indices.size() || !r || r->var.get() != j) ok = false;
      }
      IRVisitor::visit(l);
    }
  } loads(j);
  loads.walk(e);
  return loads.ok;
}

}  // namespace

Stmt tile_parfor(const TileSpec& x) {
  const DType t = x.type;
  const Expr identity = identity_of(ReduceOp::Add, t);
  const Expr ni = bin(BinaryOp::Sub, x.i_end, x.i_begin);
  const Var tile = index_var(x.i->name + "_tile");
  std::vector<Var> indices = x.outer;
  std::vector<Expr> begins = x.outer_begins, ends = x.outer_ends;
  indices.push_back(tile);
  begins.push_back(i64c(0));
  ends.push_back(bin(BinaryOp::Div, bin(BinaryOp::Add, ni, i64c(kRowTile - 1)), i64c(kRowTile)));
  indices.push_back(x.j_var);
  begins.push_back(x.j_begin);
  ends.push_back(x.j_end);
  const Var i0 = local(x.i->name + "_0", DType::I64);

  // One row's factor at row `row` and step `k`: the per-step lets copied under fresh names first.
  auto row_lets = [&](Replacements& at, std::vector<Stmt>& out, const std::string& suffix) {
    for (const Stmt& s : x.lets) {
      const auto& let = s->as<LetStmt>();
      const Var v = local(let.var->name + suffix, let.var->type.elem);
      out.push_back(make_let(v, substitute(let.init, at)));
      at[let.var.get()] = make_ref(v);
    }
  };
  auto start = [&](const Replacements& at) { return x.accumulate ? make_load(x.target, x.target_at(at)) : identity; };

  // The whole tile.
  const Var kt = index_var(x.k->name);
  Replacements at_k = x.renamed;
  at_k[x.k] = make_ref(kt);
  const Var bk = local(x.target->name + "_b", t);
  std::vector<Stmt> tile_body, steps = {make_let(bk, substitute(x.column, at_k))}, stores;
  std::vector<Var> accs;
  for (std::int64_t r = 0; r < kRowTile; ++r) {
    Replacements at_r = x.renamed;
    at_r[x.i] = r == 0 ? make_ref(i0) : bin(BinaryOp::Add, make_ref(i0), i64c(r));
    accs.push_back(local(x.target->name + "_acc" + std::to_string(r), t));
    tile_body.push_back(make_let(accs.back(), start(at_r)));
    stores.push_back(make_store(x.target, x.target_at(at_r), make_ref(accs.back())));
    at_r[x.k] = make_ref(kt);
    row_lets(at_r, steps, "_" + std::to_string(r));
    const Expr a = substitute(x.row_factor, at_r);
    const Expr product = x.column_is_b ? bin(BinaryOp::Mul, a, make_ref(bk)) : bin(BinaryOp::Mul, make_ref(bk), a);
    steps.push_back(make_assign(accs.back(), bin(BinaryOp::Add, make_ref(accs.back()), product)));
  }
  tile_body.push_back(make_for(kt, x.k_begin, x.k_end, make_block(std::move(steps))));
  for (auto& s : stores) tile_body.push_back(std::move(s));

  // The last rows (fewer than a tile), one at a time, each in order along k.
  const Var ir_ = index_var(x.i->name);
  const Var kr = index_var(x.k->name + "_rest");
  Replacements at_row = x.renamed;
  at_row[x.i] = make_ref(ir_);
  Replacements at_rest = at_row;
  at_rest[x.k] = make_ref(kr);
  const Var acc = local(x.target->name + "_acc", t);
  std::vector<Stmt> rest_step;
  row_lets(at_rest, rest_step, "_rest");
  const Expr a = substitute(x.row_factor, at_rest), b = substitute(x.column, at_rest);
  rest_step.push_back(make_assign(acc, bin(BinaryOp::Add, make_ref(acc), x.column_is_b ? bin(BinaryOp::Mul, a, b) : bin(BinaryOp::Mul, b, a))));
  const Stmt rest = make_for(ir_, make_ref(i0), x.i_end,
                             make_block({make_let(acc, start(at_row)), make_for(kr, x.k_begin, x.k_end, make_block(std::move(rest_step))),
                                         make_store(x.target, x.target_at(at_row), make_ref(acc))}));

  const Stmt body = make_block(
      {make_let(i0, bin(BinaryOp::Add, x.i_begin, bin(BinaryOp::Mul, make_ref(tile), i64c(kRowTile)))),
       make_if(bin(BinaryOp::Le, bin(BinaryOp::Add, make_ref(i0), i64c(kRowTile)), x.i_end), make_block(std::move(tile_body)),
               make_block({rest}))});
  return make_parfor(indices, begins, ends, body, {}, x.origin);
}

std::optional<Factors> split_product(const Expr& value, const VarNode* i, const VarNode* k, const VarNode* j,
                                     const LetValues& lets, std::string& why) {
  why.clear();
  const auto* mul = dyn<BinaryExpr>(value);
  if (!is_float(value->type) || !mul || mul->op != BinaryOp::Mul) return std::nullopt;
  // A factor reads at an index through the lets it uses, too.
  auto reads = [&](const Expr& e, const VarNode* v) {
    std::vector<Expr> todo = {e};
    while (!todo.empty()) {
      const Expr x = todo.back();
      todo.pop_back();
      if (uses(x, v)) return true;
      for (const Var& u : free_vars(x))
        if (auto it = lets.find(u.get()); it != lets.end()) todo.push_back(it->second);
    }
    return false;
  };
  const bool a_uses_j = reads(mul->a, j), b_uses_j = reads(mul->b, j);
  if (a_uses_j == b_uses_j) {
    why = a_uses_j ? "both factors read at the column index" : "no factor reads at the column index";
    return std::nullopt;
  }
  Factors f;
  f.column_is_b = b_uses_j;
  f.column = f.column_is_b ? mul->b : mul->a;
  f.row = f.column_is_b ? mul->a : mul->b;
  for (const Var& u : free_vars(f.column))
    if (lets.count(u.get())) {
      why = "the column factor " + to_string(f.column) + " reads a value computed before it";
      return std::nullopt;
    }
  if (reads(f.column, i)) {
    why = "the column factor " + to_string(f.column) + " reads at the row index too";
    return std::nullopt;
  }
  if (!reads(f.column, k)) {
    why = "the column factor " + to_string(f.column) + " does not read along the summed axis";
    return std::nullopt;
  }
  if (!unit_step_along(f.column, j)) {
    why = "the column factor " + to_string(f.column) + " does not step by one element along the columns (lanes would gather)";
    return std::nullopt;
  }
  return f;
}

std::optional<ProductTiles> product_tiles(const ReduceAxisStmt& x, std::string& why) {
  why.clear();
  const size_t rank = x.indices.size(), axis = static_cast<size_t>(x.axis), last = rank - 1;
  if (x.op != ReduceOp::Add || axis >= last) return std::nullopt;
  // The rows: the last kept index before the columns j.
  size_t row = last;
  for (size_t d = last; d-- > 0;)
    if (d != axis) {
      row = d;
      break;
    }
  if (row == last) return std::nullopt;  // a vector times a matrix: no rows to tile
  const VarNode* i = x.indices[row].get();
  const VarNode* j = x.indices[last].get();
  const VarNode* k = x.indices[axis].get();
  const auto factors = split_product(x.value, i, k, j, {}, why);
  if (!factors) return std::nullopt;

  // Fresh variables throughout: the other lowering of x, in the other arm of the caller's `if`, keeps x's own.
  TileSpec spec;
  spec.type = x.value->type;
  for (size_t d = 0; d < rank; ++d)
    if (d != axis && d != row && d != last) {
      spec.outer.push_back(index_var(x.indices[d]->name));
      spec.outer_begins.push_back(i64c(0));
      spec.outer_ends.push_back(x.shape[d]);
      spec.renamed[x.indices[d].get()] = make_ref(spec.outer.back());
    }
  spec.i = i;
  spec.i_begin = i64c(0);
  spec.i_end = x.shape[row];
  spec.k = k;
  spec.k_begin = i64c(0);
  spec.k_end = x.shape[axis];
  spec.j_var = index_var(j->name);
  spec.j_begin = i64c(0);
  spec.j_end = x.shape[last];
  spec.renamed[j] = make_ref(spec.j_var);
  spec.row_factor = factors->row;
  spec.column = factors->column;
  spec.column_is_b = factors->column_is_b;
  spec.target = x.target;
  spec.target_at = [&x, rank, axis](const Replacements& with) {
    std::vector<Expr> o;
    for (size_t d = 0; d < rank; ++d)
      if (d != axis) o.push_back(substitute(make_ref(x.indices[d]), with));
      else if (x.keepdims) o.push_back(i64c(0));
    return o;
  };
  spec.origin = x.origin;

  ProductTiles out;
  out.stmt = tile_parfor(spec);
  Expr tiles = bin(BinaryOp::Div, bin(BinaryOp::Add, spec.i_end, i64c(kRowTile - 1)), i64c(kRowTile));
  for (const Expr& e : spec.outer_ends) tiles = bin(BinaryOp::Mul, tiles, e);
  out.tiles = tiles;
  out.text = "rows " + to_string(factors->row) + ", columns " + to_string(factors->column);
  return out;
}

}  // namespace kiln::passes
