// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln kernel call: a std::vector or std::span has rank 1, so pass a kiln::NDArray or kiln::ArrayRef
#include <kiln/kiln.hpp>

#include <vector>

void call() {
  auto k = kiln::jit("k", [](kiln::Array<double, 2> m) { m(0, 0) = 1.0; });
  std::vector<double> v(4);
  k(v);
}
