// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln::jit: declare an array parameter as kiln::Array<T> or kiln::Array<T, N>
#include <kiln/kiln.hpp>

#include <vector>

auto k = kiln::jit("k", [](std::vector<double> x) { (void)x; });
