// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program built against an installed kiln with find_package(kiln COMPONENTS distributed): a wrap stencil
// over the ranks, checked against the same steps on one process.
#include <kiln/distributed.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = kiln::dist::run_or_abort([] {
    auto smooth = kiln::stencil("smooth", [](kiln::Window<double, 1> a) { return (a(-1) + a(0) + a(1)) / 3.0; },
                                kiln::border(kiln::Border::wrap));
    const kiln::dist::Grid grid(1);
    kiln::dist::Array<double, 1> u(grid, {101}), v(grid, {101});
    u.fill([](const std::array<std::int64_t, 1>& i) { return static_cast<double>(i[0] % 7); });
    kiln::NDArray<double> a({101}), b({101});
    for (std::int64_t i = 0; i < 101; ++i) a[i] = static_cast<double>(i % 7);
    for (int t = 0; t < 5; ++t) {
      kiln::dist::run(smooth, v, u);
      u.swap(v);
      smooth.into(b, a);
      std::swap(a, b);
    }
    const kiln::NDArray<double> all = u.gather(0);
    if (grid.rank() != 0) return;
    for (std::int64_t i = 0; i < 101; ++i)
      if (all[i] != a[i]) throw kiln::Error("consumer_distributed: element " + std::to_string(i) + " differs");
    std::printf("consumer_distributed: ok on %d ranks\n", grid.size());
  });
  MPI_Finalize();
  return rc;
}
