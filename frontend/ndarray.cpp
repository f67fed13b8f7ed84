#include "kiln/ndarray.hpp"

#include <string>

namespace kiln::detail {

void throw_bad_shape(int rank, const std::int64_t* shape, const char* what) {
  std::string s = "(";
  for (int d = 0; d < rank && d < kMaxRank; ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  throw ShapeError(std::string(what) + ": shape " + s + ")");
}

}  // namespace kiln::detail
