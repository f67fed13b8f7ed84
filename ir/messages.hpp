// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pieces of error-message text that several stages write alike (the frontend's array checks, the interpreter,
// kiln::dist), so that one shape reads the same in every message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::ir {

/// An array shape as messages write it: "(2, 3)"; "(5)" for rank 1, "()" for rank 0. At most kMaxRank
/// extents are read.
std::string shape_text(int rank, const std::int64_t* shape);

/// A kernel argument as messages name it: "argument 2 ('b')" for index 1 and parameter name b, "argument 2"
/// when the name is not known.
std::string argument_text(std::size_t index, std::string_view name);

}  // namespace kiln::ir
