// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program built against an installed kiln: find_package(kiln) + kiln::kiln.
#include <kiln/kiln.hpp>

#include <cstdio>
#include <vector>

int main() {
  auto saxpy = kiln::jit("saxpy", [](kiln::Double a, kiln::Array<double> x, kiln::Array<double> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  });
  std::vector<double> x(1000, 2.0), y(1000, 1.0);
  saxpy(3.0, x, y);
  for (double v : y)
    if (v != 7.0) {
      std::printf("consumer: wrong result %g\n", v);
      return 1;
    }
  std::printf("consumer: ok\n");
  return 0;
}
