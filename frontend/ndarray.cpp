// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "kiln/ndarray.hpp"

#include <string>

#include <fmt/format.h>

#include "ir/messages.hpp"

namespace kiln::detail {

using ir::shape_text;

void throw_bad_shape(int rank, const std::int64_t* shape, const char* what) {
  throw ShapeError(fmt::format("{}: shape {}", what, shape_text(rank, shape)));
}

std::size_t new_array_bytes(int rank, const std::int64_t* shape, std::size_t elem_size, const char* what) {
  const ArraySize size = array_size(shape, rank, static_cast<std::int64_t>(elem_size));
  if (size.negative_axis >= 0)
    throw ShapeError(fmt::format("{} extents must be non-negative: shape {} (axis {})", what, shape_text(rank, shape),
                                 size.negative_axis));
  if (size.too_large)
    throw ShapeError(fmt::format("{} of shape {} and {}-byte elements is too large: its size in bytes exceeds {}", what,
                                 shape_text(rank, shape), elem_size, kMaxArrayBytes));
  return static_cast<std::size_t>(size.bytes);
}

void throw_out_of_memory(int rank, const std::int64_t* shape, std::size_t bytes, const char* what) {
  throw Error(fmt::format("out of memory: {} of shape {} needs {} bytes", what, shape_text(rank, shape), bytes));
}

}  // namespace kiln::detail
