// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln kernel call: the array's element type is not the kiln::Array<T> parameter's T
#include <kiln/kiln.hpp>
#include <kiln/device.hpp>

void call() {
  auto k = kiln::jit("k", [](kiln::Array<float> x) { x[0] = 1.0f; });
  kiln::DeviceArray<double> d({3});
  k(d);
}
