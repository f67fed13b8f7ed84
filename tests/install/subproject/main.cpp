// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parent project's program: kiln::kiln from add_subdirectory gives it kiln's headers and C++20.
#include <kiln/kiln.hpp>

#include <cstdio>
#include <vector>

int main() {
  auto scale = kiln::jit("scale", [](kiln::Double a, kiln::Array<double> x) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = a * x[i]; });
  });
  std::vector<double> x(100, 2.0);
  scale(1.5, x);
  std::printf("parent: %g\n", x[0]);
  return x[0] == 3.0 ? 0 : 1;
}
