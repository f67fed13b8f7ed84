// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a kernel touches its array parameters, as needed to call it safely with overlapping arguments.
//
// kiln gives a kernel the meaning it has when every array argument is its own memory (as NumPy does for
// overlapping inputs and outputs). When a caller passes memory twice — one buffer as `x` and `y`, views of one
// buffer offset by an element, `st.into(x, x)` — the call stays correct without a copy only if the kernel
// cannot observe the overlap. This analysis tells, per pair (w written, r read), when that holds; the caller
// (frontend/argument_overlap.cpp) compares it with the arguments' byte ranges at each call.
#pragma once

#include <array>
#include <cstdint>

#include "ir/stmt.hpp"

namespace kiln::ir {

struct ArgumentAccess {
  static constexpr int kMaxParams = 32;
  std::uint32_t loaded = 0;  ///< bit p: array parameter p is read (through a binding counts)
  std::uint32_t stored = 0;  ///< bit p: array parameter p is written (through a binding counts)
  /// Bit r of before[w]: every read of r is finished before the first write of w, with no loop bringing a
  /// read back after a write. Then r may overlap w in any way.
  std::array<std::uint32_t, kMaxParams> before{};
  /// Bit r of same_view[w]: as `before`, or else each read of r that a write of w could follow happens in
  /// the same parfor iteration, at that iteration's own element (`y[i] = f(x[i])`), before the write. Then r
  /// may be exactly the same view as w (same address, shape and strides), though not another overlap.
  std::array<std::uint32_t, kMaxParams> same_view{};
};

/// The access summary of `f` (the lowered IR: parfors, loops, loads and stores; array-level statements that
/// remain count as reads and writes anywhere).
ArgumentAccess argument_access(const Function& f);

}  // namespace kiln::ir
