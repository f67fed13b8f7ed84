// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a traced kernel does, for callers that must know before running it (the distributed layer reads
// its stencils' neighbourhoods and compares its IR hash across ranks).
#pragma once

#include "ir/stmt.hpp"
#include "kiln/kernel.hpp"

namespace kiln::detail {

/// The stencils of `f` (windows and targets as parameter numbers), its structural hash and whether it
/// returns something.
TraceSummary summarize_trace(const ir::Function& f);

}  // namespace kiln::detail
