// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln kernel call: an array was passed for a scalar parameter
#include <kiln/kiln.hpp>

#include <vector>

void call() {
  auto k = kiln::jit("k", [](kiln::Array<double> x, kiln::Int n) { x[0] = kiln::to_double(n); });
  std::vector<double> v(3);
  k(v, v);
}
