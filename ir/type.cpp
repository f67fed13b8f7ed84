// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/type.hpp"

namespace kiln::ir {

std::string to_string(const Type& t) {
  std::string s(name_of(t.elem));
  if (t.is_scalar()) return s;
  s += '[';
  for (int d = 0; d < t.rank; ++d) {
    if (d) s += ", ";
    s += t.unit_dim(d) ? "1" : (d == t.rank - 1 && t.unit_stride) ? "::1" : ":";
  }
  return s + ']';
}

}  // namespace kiln::ir
