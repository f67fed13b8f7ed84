// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-block private copies of array reductions (histograms) in shared memory.
//
// A parfor's array reduction `h[k] op= e` at data-dependent k is one global atomic per update on the GPU
// (emit_stmt.cpp), and so is `kiln::atomic_add(h[k], e)` (emit_atomics.cpp). When the array is small, each block can instead update a copy of its own in shared
// memory (fast atomics, contention only among the block's threads) and add the copy into the array once, at
// the block's end: the global atomics drop from one per update to at most one per element per block.
//
// What the copy may change: the order in which updates reach an element. Integer add/mul/min/max (wrapping)
// and float min/max give the same contents in any order, so they stay exact; float sums and products into
// arrays are rounded in arrival order on the GPU already (docs/gpu.md, docs/atomics.md: the one
// non-deterministic result of the target), and a private copy only regroups them. The copy starts at the
// operation's identity (-0 for float sums, so an element nothing updates keeps its bits, -0 included), and an
// element whose copy still holds the identity's bits is not merged (combining it would change nothing).
//
// Explicit atomics qualify on the same terms when nothing can tell: every access of the array in the body is
// a kiln::atomic_add/sub (or every one a min, or every one a max) whose old value nothing reads. Their final
// contents are then those of the updates in some order (docs/atomics.md: integer add/sub/min/max and float
// min/max the same in any order, float add/sub rounded in the order they happen, which no run fixes).
//
// Two halves. At emission (plan_private_copies): which arrays of a parfor can have a copy at all — the array
// is captured by the kernel (not allocated or bound inside the body), every access of it in the body is such
// an update, its elements are 4 or 8 bytes, and the kernel's threads run the grid-stride loops (the block's
// iterations are its own until its end). At each launch (launch_model.hpp, choose_private): whether
// they get one, from their element counts, the shared memory per block and per SM, and the iterations each
// block would run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::codegen::cuda {

/// At most this many array reductions of one kernel get private copies (a mask bit each, and the launch
/// memo's key holds their element counts).
inline constexpr int kMaxPrivateArrays = 4;

/// An array reduction that may be updated through a per-block copy.
struct PrivateCandidate {
  const ir::VarNode* array = nullptr;
  ReduceOp op = ReduceOp::Add;
  DType elem = DType::I64;
  /// 8-byte integer sums only: a bound on |the sum of one iteration's updates| when every update adds or
  /// subtracts a constant and none is inside a loop of the body (each runs at most once per iteration); 0
  /// otherwise. A block that runs at most (2^31 - 1) / narrow_bound iterations counts in 32 bits: its sum, as
  /// a signed 32-bit number, is exact, and sign-extended it is the 64-bit one (half the shared memory, and
  /// 32-bit shared atomics are native where 64-bit ones may be compare-and-swap loops).
  std::int64_t narrow_bound = 0;
  bool atomics = false;  ///< its updates are kiln::atomic_* statements (else `a[k] = a[k] op e` stores)
};

/// The arrays of `p` that may take private copies: its array reductions in the order of p.array_reductions,
/// then the arrays its atomics update, in the order of their first atomic (at most kMaxPrivateArrays in all).
/// `why_not` receives, for each that may not, the reason, one line each.
std::vector<PrivateCandidate> plan_private_copies(const ir::ParforStmt& p, std::string* why_not = nullptr);

}  // namespace kiln::codegen::cuda
