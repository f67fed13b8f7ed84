// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The interior of a parfor body that tests where its element lies: `if (a <= i && i < b) A else B`, as
// lower_stencils writes a kiln::stencil (a test per axis, nested) and band_clamps a prange that clamps its
// indices. Where every such test holds the body is its interior arm A, plain reads at the index plus
// offsets; the CUDA backend tiles that arm and runs the whole body for the few elements outside it.
#pragma once

#include <functional>
#include <vector>

#include "ir/analysis.hpp"
#include "ir/stmt.hpp"

namespace kiln::ir {

/// True if `cond` is a conjunction of bounds on `indices`, `x <= i`, `i >= x`, `i < y`, `y > i`, with every
/// x and y satisfying `fixed` (the same for every element).
bool bounds_test(const Expr& cond, const std::vector<Var>& indices, const std::function<bool(const Expr&)>& fixed);

/// The body with its first branch on a bounds test (among its statements, nested blocks flattened) replaced
/// by the branch's then-arm, and the same inside that arm, and so on; the tests are appended to `tests` in
/// that order. With `border`, also the body with the innermost such then-arm emptied: wherever some test
/// fails it does what the body does (the interior arm is never reached there). A body without such a branch
/// is returned as it is (and is its own border).
Stmt split_interior(const Stmt& body, std::vector<Expr>& tests, const std::function<bool(const Expr&)>& fixed,
                    const std::vector<Var>& indices, Stmt* border = nullptr);

/// How far from the element a stencil's reads may reach along any axis for the CUDA backend to hold its
/// windows in registers and tiles (codegen/cuda/emitter.hpp, kMaxStencilOffset).
inline constexpr std::int64_t kMaxStencilReach = 8;

/// An array a 3-d parfor's body reads at several planes of its first index: `array[..., z + dz, y + d, x + c]`
/// (z, y, x the parfor's indices) for dz from `lo` to `hi`, lo < hi.
struct PlaneReads {
  const VarNode* array = nullptr;
  std::int64_t lo = 0, hi = 0;
};

/// The arrays `body` (of parfor `p`, rank 3) reads at two planes or more, each |offset| at most `reach`; arrays
/// the body stores to are left out. `lets` (optional): values index expressions may name. What the CUDA
/// backend walks along z (2.5-d blocking) and the offload pass names in its note.
std::vector<PlaneReads> plane_reads(const Stmt& body, const ParforStmt& p, std::int64_t reach, const LetValues* lets = nullptr);

}  // namespace kiln::ir
