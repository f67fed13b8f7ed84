// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How much optimization a kernel's entry (`kiln_entry`) gets (issue #15, compile latency). The entry unpacks
// and checks the arguments, allocates, fills each parfor's context and hands the parfor to the runtime; the
// work is in the outlined parfor bodies. Where every loop outside the parfors runs parfors, the entry runs a
// bounded number of instructions per call and per parfor launch (argument checks, context stores, the fold of
// at most kiln_rt_max_reduce_blocks partials), so optimizing it buys nothing measurable while its code
// generation was 20-23 % of a product kernel's (llc on 2mm's optimized module: 68M of 294M instructions, 420
// LLVM instructions mostly context stores). Such an entry is marked `optnone`: LLVM's optimizer skips it and
// the code generator selects its instructions with FastISel and skips its machine-level optimizations, as at
// -O0. An entry with a loop of its own work (a loop that runs no parfor: a sequential scan, a loop a pass
// left on the calling thread) is optimized like the parfor bodies.
#pragma once

#include <string>

#include "ir/stmt.hpp"

namespace kiln::codegen::cpu::detail {

/// What the entry of a kernel with body `body` gets, with the reason: `unoptimized` true when every For
/// statement outside parfors has a parfor inside it.
struct EntryLevel {
  bool unoptimized = false;
  std::string reason;  ///< one line for the kernel's diagnostics
};
EntryLevel entry_level(const ir::Stmt& body);

}  // namespace kiln::codegen::cpu::detail
