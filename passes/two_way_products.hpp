// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include <cstdint>

#include "passes/pass.hpp"

namespace kiln::passes {

/// Rows of a two-way tile (see two_way_products): each column's partial sums this many rows in order.
inline constexpr std::int64_t kTwoWayRows = 128;
/// Columns of a two-way tile: a warp's 32 lanes take 8 columns each (the CUDA backend keeps a lane's column
/// sums in registers, codegen/cuda/emit_cooperative.cpp).
inline constexpr std::int64_t kTwoWayColumns = 256;

/// Device targets: two reductions of one 2-d space in opposite directions that read one matrix at the
/// space's own element, `dot(r, A)` (along axis 0: a sum per column) and `dot(A, p)` (along axis 1: a sum per
/// row) in bicg, `A y1` and `y2 A` in mvt, become one pass over the matrix: a parfor over tiles of
/// kTwoWayRows x kTwoWayColumns elements, each tile writing its columns' sums of its rows (each in row order)
/// and its rows' sums of its columns, then a fold of each output's tile partials in tile order. Every order is
/// a function of the extents alone, so the results are the same bits on every run (and differ from the
/// interpreter's in-order sums in the last bits, like every parallel reduction). Each reduction apart reads
/// the whole matrix once; together, once for both.
///
/// Needs: both Add/Mul/Min/Max (no argmin/argmax) over rank-2 spaces of equal extents (structurally, or by a
/// shape check run before them); one array loaded in both values at the space's (i, j); the second not
/// reading the first's result (atax's `dot(dot(A, x), A)` needs all of A x first: refused, with the reason);
/// the statements between them either checks that move above the first (they read no result of it) or
/// statements that move below the second (it neither reads what they write nor they what it writes); and no later
/// reduction over the same matrix that depends on their results (row statistics: the mean's sum of deviations
/// reads the matrix along the same rows anyway, and the mean's sum shares that pass; taken into a tile it would
/// save no pass).
///
/// Host targets do not run it: there a column sum over fewer than 32 blocks of 1024 columns (up to 31744; the
/// suite's 14000) is lowered as an array reduction over the rows, which fuse_parfors' prefix fusion puts into the
/// loop over row i of `A p` (one pass over each row of A for both products, the column sums in per-thread pieces
/// combined in a fixed order). Wider matrices take the blocked schedule, which reads A twice on the host too;
/// the tiles (their L2-sized tile read twice, from memory once) are untimed there.
ir::Function two_way_products(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
