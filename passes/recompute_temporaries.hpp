// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Recomputing cheap temporaries where they are read. Fusion puts a pointwise producer `t = x - mean` into the
// nearest loop it can join, which may be a loop its consumer cannot join (`std` is known only after the loop
// that sums the squares: `(x - mean) / std`). The temporary then lives in memory: n elements written, then
// read again, on fresh pages every call. When its value is a cheap pointwise expression of arrays and scalars
// that do not change before it is read, each consumer computes the element itself instead, and the store and
// the allocation go. The rule is the memory traffic: recomputing loads at most as many elements as the
// temporary costs (its writes and its reads), so it never moves more data than the temporary would.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Replaces each load `t[j]` of a temporary `t` (allocated by the kernel, not returned, named by no binding)
/// written in exactly one parfor P as `t[i] = e` at P's own index, directly in P's body, P's space being t's
/// shape (every element written), and read only by later parfors, by `e` at j, when e's loads have no loads in
/// their subscripts, e reads no variable of P's body and nothing assigned from P through the last reader nor
/// stored after P (P itself may store an array e reads only at e's one subscript, one element per iteration,
/// before t's store: e then reads what the array holds once P is done), e is at most 12 nodes, and
/// loads(e) x loads(t) <= loads(t) + 1 (counting the load expressions). The store and the allocation are
/// removed, and a parfor left with nothing to do goes too. Runs after fusion, before eliminate_temporaries.
ir::Function recompute_temporaries(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
