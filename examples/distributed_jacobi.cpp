// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Jacobi iterations on a periodic 2-d grid split over MPI ranks (docs/distributed.md). Run it with
//   mpirun -np 4 ./distributed_jacobi [n] [steps]
// Each step is one kernel call on every rank's block, after kiln exchanged the ghost layers; the buffers
// are swapped on the host. Rank 0 checks the gathered result bit for bit against the same steps in one
// process (one kiln kernel looping with kiln::swap) and the distributed sum against the gathered array's.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kiln/distributed.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  namespace dist = kiln::dist;
  int failed = 0;
  dist::run_or_abort([&] {
    const std::int64_t n = argc > 1 ? std::atol(argv[1]) : 1000;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
    const auto jacobi = kiln::stencil("jacobi", [](kiln::Window<double, 2> a) {
      return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0));
    }, kiln::border(kiln::Border::wrap));

    const dist::Grid grid(2);
    dist::Array<double, 2> u(grid, {n, n}), v(grid, {n, n});
    u.fill([&](const std::array<std::int64_t, 2>& i) { return std::sin(0.01 * static_cast<double>(i[0] * n + i[1])); });
    const kiln::NDArray<double> start = u.gather(0);

    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < steps; ++t) {
      dist::run(jacobi, v, u);
      u.swap(v);
    }
    const double total = dist::sum(u);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const kiln::NDArray<double> got = u.gather(0);
    if (grid.rank() != 0) return;

    const auto loop = kiln::jit("jacobi_steps", [&](kiln::Array<double, 2> u0, kiln::Int nsteps) {
      kiln::Array<double, 2> a = kiln::empty_like(u0), b = kiln::empty_like(u0);
      a(kiln::all) = u0;
      kiln::range(nsteps, [&](kiln::Int) {
        jacobi.into(b, a);
        kiln::swap(a, b);
      });
      return a;
    });
    const kiln::NDArray<double> want = loop(start, steps);
    const bool same = std::memcmp(got.data(), want.data(), static_cast<std::size_t>(got.size()) * sizeof(double)) == 0;
    std::printf("distributed_jacobi  %lld^2 on %s, %d steps in %.3f s: sum %.17g; %s the single-process result\n",
                static_cast<long long>(n), grid.describe().c_str(), steps, seconds, total,
                same ? "bitwise equal to" : "DIFFERENT FROM");
    failed = same ? 0 : 1;
  });
  MPI_Finalize();
  return failed;
}
