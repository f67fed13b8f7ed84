// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln kernel call: pass one argument per parameter of the kernel's lambda
#include <kiln/kiln.hpp>

#include <vector>

void call() {
  auto k = kiln::jit("k", [](kiln::Double a, kiln::Array<double> x) { x[0] = a; });
  std::vector<double> v(3);
  k(v);
}
