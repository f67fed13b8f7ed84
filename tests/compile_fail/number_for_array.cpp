// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln kernel call: a number was passed for a kiln::Array parameter
#include <kiln/kiln.hpp>

void call() {
  auto k = kiln::jit("k", [](kiln::Array<double> x, kiln::Int n) { x[0] = kiln::to_double(n); });
  k(1.0, 3);
}
