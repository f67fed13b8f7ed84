// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The constructs the other sources get wrong, used right: this one must compile (so a failure elsewhere is the
// static assertion's, not a broken include path or flag).
#include <kiln/kiln.hpp>
#include <kiln/device.hpp>

#include <vector>

void call() {
  auto k = kiln::jit("k", [](kiln::Double a, kiln::Array<double> x, kiln::Int n, kiln::Array<bool> m) {
    kiln::if_(a > 0.0 && m[0], [&] { x[0] = a; }).else_([&] { x[0] = kiln::select(n > 0, -a, a); });
  });
  std::vector<double> v(3);
  std::vector<char> flags(3);
  kiln::NDArray<bool> m({3});
  k(1.0, v, 3, m);
  k(1, kiln::NDArray<double>({3}), std::int32_t{2}, m);  // numbers convert; NDArray ranks are checked at the call
  auto f = kiln::jit("f", [](kiln::Array<float> x) { x[0] = 1.0f; });
  kiln::DeviceArray<float> d({3});
  f(d);
  auto g = kiln::jit("g", [](kiln::Array<double, 2> x) { x(0, 0) = 1.0; });
  kiln::NDArray<double> two({2, 2});
  g(two);
}
