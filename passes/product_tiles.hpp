// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Register tiles for contractions on host targets: an f32 or f64 sum along an axis of products, one factor read at
// (row i, axis k) and the other at (k, column j), computed kRowTile rows at a time. lower_array_ops uses it
// for ReduceAxisStmt; the rule and its reason live here.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>
#include <optional>
#include <string>

#include "ir/analysis.hpp"
#include "ir/stmt.hpp"
#include "ir/substitute.hpp"

namespace kiln::passes {

/// Rows of outputs per tile. Each row's sums are one accumulator per lane; the CPU backend runs the column
/// loop ir::kWalkingVectors vectors of lanes at a time (the column factor walks down rows of its array), so a
/// tile holds kRowTile x 4 vector accumulators: 8 of AVX2's 16 registers, leaving room for the 4 vectors of the
/// column factor loaded per step of k and the row factor's broadcast. Each loaded column vector then serves
/// kRowTile rows instead of one, and the accumulators stay in registers for the whole walk along k instead of
/// going through memory on every step (the blocked schedule's inner loop loads and stores its output).
inline constexpr std::int64_t kRowTile = 2;
/// Columns per block: a panel of the column operand of nk x 64 elements (360 KiB of doubles for nk = 720)
/// stays in a 512 KiB L2 while a thread walks the row tiles of the block; 4 groups of 16 f64 lanes.
inline constexpr std::int64_t kColumnBlock = 64;

/// A product's two factors: `row` reads at the row index i and the summed index k, never at the column j;
/// `column` reads at k and j (j as the last subscript of each of its loads, so that lanes across j read one
/// vector), never at i. `column_is_b`: the product is row * column (else column * row), the order kept.
struct Factors {
  ir::Expr row, column;
  bool column_is_b = true;
};
/// The factors of `value` if it is a float product of that shape, looking through `lets` (values computed
/// per step of k before the product); nullopt otherwise, with `why` (empty when `value` is no product).
std::optional<Factors> split_product(const ir::Expr& value, const ir::VarNode* i, const ir::VarNode* k,
                                     const ir::VarNode* j, const ir::LetValues& lets, std::string& why);

/// What tile_parfor builds: `target[at(i, j)] (= target[at(i, j)] or the identity) + sum over k in order of
/// row(i, k) * column(k, j)` for i, j, k in their ranges and each of the `outer` indices.
struct TileSpec {
  DType type = DType::F64;
  std::vector<ir::Var> outer;  ///< fresh indices of the other kept dimensions, outermost first
  std::vector<ir::Expr> outer_begins, outer_ends;
  const ir::VarNode* i = nullptr;
  ir::Expr i_begin, i_end;
  const ir::VarNode* k = nullptr;
  ir::Expr k_begin, k_end;
  ir::Var j_var;  ///< the fresh column index of the parfor
  ir::Expr j_begin, j_end;
  ir::Replacements renamed;  ///< the source's other indices (j included) -> the fresh ones
  std::vector<ir::Stmt> lets;  ///< LetStmts run per step of k before the product (copied per row)
  ir::Expr row_factor, column;
  bool column_is_b = true;
  ir::Var target;
  std::function<std::vector<ir::Expr>(const ir::Replacements&)> target_at;  ///< the element, given i and j
  bool accumulate = false;  ///< start from the target's element, not the identity
  std::string origin;
};
ir::Stmt tile_parfor(const TileSpec& spec);

/// The tiled lowering of `x` (its Allocate not included), or nullopt with `why` saying why `x` is not such a
/// product (empty when `x` is not a product at all: another reduction, or a sum of something else).
struct ProductTiles {
  ir::Stmt stmt;
  std::string text;  ///< the operands as the rule saw them, for the diagnostics
};
std::optional<ProductTiles> product_tiles(const ir::ReduceAxisStmt& x, std::string& why);

}  // namespace kiln::passes
