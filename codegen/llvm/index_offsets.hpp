// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Run-time offsets of a loop's index taken into the base pointers before the loop (issue #15, compile
// latency). A loop over `k in lo .. hi` (a row segment: the blocked products' `k_lo .. k_hi`, a stencil
// band) reaches the end of the optimization pipeline with addresses `base + (lo + index)` in its vector body,
// which counts from 0: an add per iteration that x86 cannot fold into an addressing mode ([base + index*8]
// has no room for a second register). That add is what LLVM's loop strength reduction was run for
// (optimize.cpp, StrengthReduceIndexArithmetic), and LSR builds scalar-evolution formulae for every address
// of the loop to find it: 7 % of 2mm's compile, 12 % of correlation's and dot's (callgrind). Writing each
// such address as `(base + lo) + index`, with `base + lo` computed once before the loop, removes the add the
// same way and leaves LSR nothing to do there.
#pragma once

namespace llvm {
class Loop;
}  // namespace llvm

namespace kiln::codegen::cpu::detail {

/// In `l`'s own blocks (not its inner loops'), every `add i64 x, y` with y loop-invariant and not a constant
/// (a constant is an addressing mode's displacement already) and x changing in the loop, whose every user is
/// a single-index `getelementptr T, base, (x + y)` in the loop with a loop-invariant base: each such address
/// becomes `getelementptr T, base', x` with `base' = getelementptr T, base, y` in the loop's preheader (the
/// same address; the `inbounds` flag is dropped, since base' alone may lie outside the object), and the add
/// is deleted. An add with other users is left to LSR, which can share one induction variable among many
/// addresses where hoisted bases would each hold a register. Values keep their scalar-evolution expressions (each address is the same), so
/// the loop passes' analyses stay valid. Returns true if it changed `l`.
bool fold_invariant_index_offsets(llvm::Loop& l);

}  // namespace kiln::codegen::cpu::detail
