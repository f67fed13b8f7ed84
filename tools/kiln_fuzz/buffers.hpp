// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernel arguments for kiln-fuzz: random contents for each parameter of a program, and the comparison of two runs'
// results. The arrays themselves (any layout, gaps that must come back untouched) are tools/test_support's.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/abi.hpp"
#include "tools/kiln_fuzz/program.hpp"
#include "tools/test_support/buffers.hpp"

namespace kiln::fuzz {

using test_support::Args;
using test_support::TestArray;

/// What one run left behind.
struct Outcome {
  Args args;
  ScalarSlot result{};
  ArrayDesc result_array{};
  std::string error;  ///< an exception's text or the kernel's failure status; empty on success
  bool index_error = false;  ///< the failure is an out-of-range access (IndexError, kIndexOutOfRange)
  Outcome() = default;
  Outcome(const Outcome&) = delete;
  ~Outcome();
};

/// Random arguments for `p` (from `seed`): small values, integers, and the edge values of each type.
Args make_args(const Program& p, std::uint64_t seed);

/// A description of the first differences between a reference run and another one, or "" if they agree within
/// the program's precision (exact, or a few ulps where it says so).
std::string compare(const Program& p, const Outcome& ref, const Outcome& got);

}  // namespace kiln::fuzz
