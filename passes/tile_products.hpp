// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// Host targets: a parfor over rows i whose body is a loop over k, holding per-step lets and a loop over
/// columns j that accumulates one product into its own element,
///   parfor i { for k { let .. ; for j { out[.., i, j] = out[.., i, j] + a(i, k) * b(k, j) } } }
/// (a Gram matrix Xᵀ X, a product written as loops in i-k-j order), runs as register tiles of rows by lanes of
/// columns (passes/product_tiles.hpp), each element accumulated from its own value in order of k, as the nest
/// does: the loops over k and j trade places, which changes no element's sequence of additions, since each
/// iteration of j touches its own element alone and nothing else in the nest writes memory. Needs `out`
/// distinct from every array the nest reads (ir::may_alias) and loop bounds fixed for the whole parfor.
/// The decision, and for a nest of this shape that is not taken, the reason, are notes.
ir::Function tile_products(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
