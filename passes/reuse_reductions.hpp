// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reductions computed twice. Array operations that each need a statistic compute it themselves: NumPy's
// `var(x, 1)`, `std(x, 1)` and `std(x, 1, keepdims)` each sum the row for its mean and then the squared
// deviations from it, and `(x - mean(x)) / std(x)` sums x twice. Fusion puts these loops side by side (a pass
// over the row for the means, one for the squared deviations), but the repeated sums stay: each is a
// reduction of its own, and a repeated one that a later loop alone computes costs that loop's whole pass over
// memory (on an H100, row-stats of 8000 x 8000 doubles read the rows four times for three).
//
// A reduction that repeats one already complete — the same operator, start, update and index space, reading
// arrays that nothing has written since and values that have not changed — has its value: its update goes,
// its variable is replaced by the first one's, and a loop left with nothing to do goes too. Sums in kiln have
// no defined order (parallel targets reassociate them: ir/semantics.hpp), so the first loop's value is one
// the second could have computed; on the interpreter and on every target that sums both loops alike it is
// the same bits.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Within each block: for a parfor P2 after a parfor P1 (or P1 itself), a scalar reduction r2 of P2 whose
/// `let` comes after P1's in the block (or is P1's own, before it), updated by one top-level assignment
/// `r2 = f(r2, e2)` and used nowhere else in P2, is replaced by a reduction r1 of P1 with the same operator
/// (not argmin/argmax), an equal start, equal bounds and an update that is equal once the loops' indices are
/// matched and every let whose value cannot change is replaced by it (recursively: a let that reads only
/// variables never assigned, or totals of loops that ran before it; r2's variables already replaced are r1's),
/// when no array the update loads is stored by P1, by the statements between or by P2, and no variable it
/// reads or r1 itself is assigned after P1 starts (except r1 by P1). P2 loses r2's update and reduction
/// clause; the statements after P2 read r1 for r2, and r2's let goes. A parfor left with no reduction and
/// only lets in its body goes. Runs after eliminate_temporaries (the statistics are scalars by then).
ir::Function reuse_reductions(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
