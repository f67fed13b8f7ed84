// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sequential loops as parfor dimensions on the device. A prange whose iterations each run a loop writing one
// element per step — a Gram product written as `prange(i) { range(k) { t = d(k, i); range(j) { out(i, j) +=
// t * d(k, j) } } }`, a triangular product `prange(i) { range(j, i + 1) { ...; C(i, j) = ... } }` — gives a GPU
// one thread per i: 1200 threads, each walking millions of steps, where the device wants hundreds of
// thousands. The loop's steps are independent (each owns its element), so it can be a dimension of the parfor
// instead: a thread per (i, j), each running the loops around j in their order for its own element.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Device targets. For each parfor outside parfors (a launch) without reductions, whose body is a chain of
/// sequential loops — at each level `let`s and then one `for` — finds the outermost loop j of the chain whose
/// steps are independent:
///  - its body holds only lets, assignments of variables it declares, stores, loops and branches (no parfor,
///    atomic, allocation, check, binding or sort);
///  - every array it stores is stored at one subscript list holding j once as a whole subscript (or j plus an
///    invariant) and otherwise only values invariant in the parfor's body (the parfor's indices included), and
///    every load of that array (or of an array that may share its memory) anywhere in the body is at that same
///    subscript list and inside j's body (so the lets around j read none of it);
///  - its bounds are invariant in the parfor's body, or its end is `p + c` for an index p of the parfor (a
///    triangle), whose largest value over p's range bounds the new dimension and each step tests `j < p + c`.
/// It becomes the parfor's last dimension, the loops and lets that enclosed it running inside, per (parfor
/// index, j), in their order: each element sees the same operations in the same order as before (bit for
/// bit), and lets are recomputed per j (they read nothing the loop writes). With one loop around j, an element
/// j's body reads and writes at every step lives in a variable across that loop. Notes say what moved and why.
ir::Function spread_loops(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
