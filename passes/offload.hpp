// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Offloading for device targets (Halide's src/OffloadGPULoops.h and Taichi's offload pass are the models): the
// lowered function is split into what runs where. Every parfor reached from the body without passing through
// another parfor becomes a `launch` of a device kernel; everything around the launches (lets, assignments,
// sequential loops, branches, allocations, checks, element reads and writes) is the host function, which
// the host executor runs (ir/interpreter.hpp, with the target's ir::Machine for memory and launches).
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Wraps each parfor outside every other parfor in a LaunchStmt, numbering the kernels 0, 1, ... in the order
/// the body lists them (a branch's then-arm before its else-arm), and notes each kernel's origin and space.
ir::Function offload(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
