#include "kiln/ndarray.hpp"

#include <string>

namespace kiln::detail {
namespace {

std::string shape_text(int rank, const std::int64_t* shape) {
  std::string s = "(";
  for (int d = 0; d < rank && d < kMaxRank; ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + ")";
}

}  // namespace

void throw_bad_shape(int rank, const std::int64_t* shape, const char* what) {
  throw ShapeError(std::string(what) + ": shape " + shape_text(rank, shape));
}

std::size_t new_array_bytes(int rank, const std::int64_t* shape, std::size_t elem_size, const char* what) {
  const ArraySize size = array_size(shape, rank, static_cast<std::int64_t>(elem_size));
  if (size.negative_axis >= 0)
    throw ShapeError(std::string(what) + " extents must be non-negative: shape " + shape_text(rank, shape) +
                     " (axis " + std::to_string(size.negative_axis) + ")");
  if (size.too_large)
    throw ShapeError(std::string(what) + " of shape " + shape_text(rank, shape) + " and " + std::to_string(elem_size) +
                     "-byte elements is too large: its size in bytes exceeds " + std::to_string(kMaxArrayBytes));
  return static_cast<std::size_t>(size.bytes);
}

void throw_out_of_memory(int rank, const std::int64_t* shape, std::size_t bytes, const char* what) {
  throw Error("out of memory: " + std::string(what) + " of shape " + shape_text(rank, shape) + " needs " +
              std::to_string(bytes) + " bytes");
}

}  // namespace kiln::detail
