// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln kernel call: the array's element type is not the kiln::Array<T> parameter's T
#include <kiln/kiln.hpp>

#include <vector>

void call() {
  auto k = kiln::jit("k", [](kiln::Double a, kiln::Array<double> x) { x[0] = a; });
  std::vector<float> v(3);
  k(1.0, v);
}
