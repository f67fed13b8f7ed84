// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A contraction `target[.., i, j] = sum over k of a(.., i, k) * b(.., k, j)` (kiln::dot of matrices, either
// operand a transposed view; loop nests of that shape through tile_products) lowered as
//
//   parfor (other kept dims, q over column blocks x row tiles) {
//     let i0 = (q % tiles) * R, i_r = min(i0 + r, ni - 1); let lo = (q / tiles) * C, hi = min(lo + C, nj)
//     parfor (j in lo .. hi) {                      // nested: run inline, in lanes across j
//       let acc_r = -0.0 (or target[i_r, j])  for each r
//       for k in 0 .. nk { let bk = b(k, j); acc_r = acc_r + a(i_r, k) * bk  for each r }
//       target[i_r, j] = acc_r  for each r
//     }
//   }
//
// Every output element is its own in-order sum from the identity (or from its value), as the interpreter
// computes it (the product keeps its operands' order; bk is the same load the value makes), so the results are
// bitwise the interpreter's for any extents and thread count. The sequential loop over k carrying float sums is
// what ir::plan_lanes runs in lanes across j on the CPU: each lane one column, vector accumulators held in
// registers along all of k, several vectors of columns at once (ir::kWalkingVectors): a register tile of R rows
// by that many columns, in which each column vector loaded serves R rows and each broadcast row value serves
// every column of the tile. One thread's consecutive iterations walk the row tiles of one column block, whose
// panel of b (nk x C) stays in its L2 cache while the rows of a stream past.
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
  const Expr tiles = bin(BinaryOp::Div, bin(BinaryOp::Add, bin(BinaryOp::Sub, x.i_end, x.i_begin), i64c(kRowTile - 1)), i64c(kRowTile));
  const Expr blocks = bin(BinaryOp::Div, bin(BinaryOp::Add, bin(BinaryOp::Sub, x.j_end, x.j_begin), i64c(kColumnBlock - 1)),
                          i64c(kColumnBlock));
  const Var q = index_var(x.i->name + "_tile");
  std::vector<Var> indices = x.outer;
  std::vector<Expr> begins = x.outer_begins, ends = x.outer_ends;
  indices.push_back(q);
  begins.push_back(i64c(0));
  ends.push_back(bin(BinaryOp::Mul, blocks, tiles));

  // q = block * tiles + tile: consecutive iterations (one thread's) walk the row tiles of one column block.
  const Var tiles_v = local(x.i->name + "_tiles", DType::I64);
  const Var i0 = local(x.i->name + "_0", DType::I64), j0 = local(x.j_var->name + "_lo", DType::I64);
  const Var j1 = local(x.j_var->name + "_hi", DType::I64);
  std::vector<Stmt> body = {
      make_let(tiles_v, tiles),
      make_let(i0, bin(BinaryOp::Add, x.i_begin, bin(BinaryOp::Mul, bin(BinaryOp::Mod, make_ref(q), make_ref(tiles_v)), i64c(kRowTile)))),
      make_let(j0, bin(BinaryOp::Add, x.j_begin, bin(BinaryOp::Mul, bin(BinaryOp::Div, make_ref(q), make_ref(tiles_v)), i64c(kColumnBlock)))),
      make_let(j1, bin(BinaryOp::Min, bin(BinaryOp::Add, make_ref(j0), i64c(kColumnBlock)), x.j_end))};

  // Row r of the tile is min(i0 + r, last row): a tile past the last row computes that row again, the same
  // operations on the same values, and stores the same bits twice (no branch, no second copy of the body).
  const Var kt = index_var(x.k->name);
  const Var bk = local(x.target->name + "_b", t);
  std::vector<Stmt> tile_body, steps, stores;
  Replacements at_k = x.renamed;
  at_k[x.k] = make_ref(kt);
  steps.push_back(make_let(bk, substitute(x.column, at_k)));
  const Expr last_row = bin(BinaryOp::Sub, x.i_end, i64c(1));
  for (std::int64_t r = 0; r < kRowTile; ++r) {
    Expr row = make_ref(i0);
    if (r > 0) {
      const Var rv = local(x.i->name + "_" + std::to_string(r), DType::I64);
      body.push_back(make_let(rv, bin(BinaryOp::Min, bin(BinaryOp::Add, make_ref(i0), i64c(r)), last_row)));
      row = make_ref(rv);
    }
    Replacements at_r = x.renamed;
    at_r[x.i] = row;
    const Var acc = local(x.target->name + "_acc" + std::to_string(r), t);
    tile_body.push_back(make_let(acc, x.accumulate ? make_load(x.target, x.target_at(at_r)) : identity));
    stores.push_back(make_store(x.target, x.target_at(at_r), make_ref(acc)));
    at_r[x.k] = make_ref(kt);
    for (const Stmt& s : x.lets) {  // the per-step lets, copied for this row under fresh names
      const auto& let = s->as<LetStmt>();
      const Var v = local(let.var->name + "_" + std::to_string(r), let.var->type.elem);
      steps.push_back(make_let(v, substitute(let.init, at_r)));
      at_r[let.var.get()] = make_ref(v);
    }
    const Expr a = substitute(x.row_factor, at_r);
    const Expr product = x.column_is_b ? bin(BinaryOp::Mul, a, make_ref(bk)) : bin(BinaryOp::Mul, make_ref(bk), a);
    steps.push_back(make_assign(acc, bin(BinaryOp::Add, make_ref(acc), product)));
  }
  tile_body.push_back(make_for(kt, x.k_begin, x.k_end, make_block(std::move(steps))));
  for (auto& s : stores) tile_body.push_back(std::move(s));
  // The columns of the block as a parfor of their own, nested (the CPU backend runs it inline, in lanes).
  body.push_back(make_parfor({x.j_var}, {make_ref(j0)}, {make_ref(j1)}, make_block(std::move(tile_body)), {}, x.origin));
  return make_parfor(indices, begins, ends, make_block(std::move(body)), {}, x.origin);
}

std::optional<Factors> split_product(const Expr& value, const VarNode* i, const VarNode* k, const VarNode* j,
                                     const LetValues& lets, std::string& why) {
  why.clear();
  const auto* mul = dyn<BinaryExpr>(value);
  // f32 and f64: the types the CPU backend computes in lanes as they are (f16 and bf16 round through f32).
  if ((value->type != DType::F32 && value->type != DType::F64) || !mul || mul->op != BinaryOp::Mul) return std::nullopt;
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
  out.text = "rows " + to_string(factors->row) + ", columns " + to_string(factors->column);
  return out;
}

}  // namespace kiln::passes
