// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// Turns every array-level statement into loops over its index space, keeping its meaning exactly
/// (ir/interpreter.cpp is the definition):
/// - MapStmt: an Allocate (when it allocates) and a parfor storing the value at the target index;
/// - ReduceStmt: `let r = identity` and a parfor carrying the reduction (argmin/argmax as a (value, index)
///   pair with NumPy's first-index and NaN rules; -1 for an empty space);
/// - ReduceAxisStmt: an Allocate and a parfor over the kept dimensions. Reducing along the last axis, each
///   iteration folds its row in a sequential loop into a local; reducing along another axis, the parfor runs
///   over blocks of the last dimension and accumulates a whole block per step along the axis, so that the
///   inner loop has unit stride (column sums of a row-major matrix). A sum of products of a row operand and
///   a column operand (a matrix product) runs in register tiles instead (passes/product_tiles.hpp). On a device target
///   (PassContext::device) a reduction along a leading axis runs a thread per output element walking the axis
///   instead, the kept last axis along a warp's lanes; with fewer outputs than keep a GPU busy, the axis is
///   split into chunks whose partials are then summed in chunk order.
/// Parfors keep the origin of the operation they came from, for diagnostics.
ir::Function lower_array_ops(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
