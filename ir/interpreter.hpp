// The IR interpreter: the executable definition of kiln's semantics. Every pass and backend is tested
// against it. It uses the same calling convention as compiled kernels (kiln/abi.hpp).
#pragma once

#include "ir/stmt.hpp"
#include "kiln/abi.hpp"

namespace kiln::ir {

/// Runs `f` on the given arguments. Parfors run sequentially in row-major index order, which is the
/// meaning every parallel backend must reproduce (up to floating-point reassociation of reductions).
/// Out-of-bounds accesses throw IndexError; a negative allocation extent throws ShapeError; uninitialized
/// array elements read as a poison value (NaN, or 0x5A5A5A5A5A5A5A5A for integers).
void interpret(const Function& f, void* const* args, void* result);

}  // namespace kiln::ir
