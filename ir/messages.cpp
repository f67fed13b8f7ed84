// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/messages.hpp"

#include <algorithm>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kiln/dtype.hpp"

namespace kiln::ir {

std::string shape_text(int rank, const std::int64_t* shape) {
  const std::span<const std::int64_t> extents(shape, static_cast<std::size_t>(std::clamp(rank, 0, kMaxRank)));
  return fmt::format("({})", fmt::join(extents, ", "));
}

std::string argument_text(std::size_t index, std::string_view name) {
  return name.empty() ? fmt::format("argument {}", index + 1) : fmt::format("argument {} ('{}')", index + 1, name);
}

}  // namespace kiln::ir
