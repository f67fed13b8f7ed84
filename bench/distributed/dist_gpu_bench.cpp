// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-dist-gpu-bench: kiln::dist on the CUDA target, one GPU per rank (dist::select_gpu), against the
// same stencil steps of one process on device arrays (kiln::DeviceArray: no copies, no halos). Per
// workload, ms per step (the slowest rank's best of --reps): `base` the single-process steps on the whole
// global array, `dist` the distributed steps (each rank its block; halos staged through the host),
// `halo` dist::exchange alone (bands down, MPI and the border fill, ghost layers up). With fewer GPUs than
// ranks the ranks share them, so the figures then measure the staging, not scaling.
//
//   mpirun -np N kiln-dist-gpu-bench [--n2 N] [--n3 N] [--steps S] [--reps R]
#include <mpi.h>

#include <algorithm>
#include <array>
#include <utility>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/device.hpp"
#include "rank_timing.hpp"
#include "kiln/distributed.hpp"

namespace {

namespace dist = kiln::dist;

/// The slowest rank's best of `reps` for `body` (seconds), after one warm-up; `body` ends with the GPU idle.
template <class F>
double timed(int reps, F&& body) {
  return bench::timed(MPI_COMM_WORLD, reps, std::forward<F>(body));
}

/// ms per step: one process on device arrays of `shape`, and kiln::dist over `grid`, and the exchange alone.
template <int N, class S>
void row(const char* name, const S& stencil, const dist::Grid& grid, const std::array<std::int64_t, N>& shape, int steps,
         int reps, int rank) {
  const std::vector<std::int64_t> dims(shape.begin(), shape.end());
  auto fill = [](const std::array<std::int64_t, N>& i) {
    std::int64_t h = 0;
    for (auto x : i) h = h * 31 + x;
    return static_cast<double>(h % 97);
  };
  kiln::NDArray<double> host(dims);
  for (std::int64_t k = 0; k < host.size(); ++k) host.data()[k] = static_cast<double>(k % 97);
  kiln::DeviceArray<double> a = kiln::to_device(host), b(dims);
  const double base = timed(reps, [&] {
    for (int s = 0; s < steps; ++s) {
      stencil.into(b, a);
      std::swap(a, b);
    }
  }) / steps;
  dist::Array<double, N> u(grid, shape), v(grid, shape);
  u.fill(fill);
  const double distributed = timed(reps, [&] {
    for (int s = 0; s < steps; ++s) {
      dist::run(stencil, v, u);
      u.swap(v);
    }
  }) / steps;
  const double halo = timed(reps, [&] { dist::exchange(stencil, v, u); });
  if (rank == 0)
    std::printf("%-9s %-14s %10.3f %10.3f %10.3f %8.3f\n", name, grid.describe().c_str(), base * 1e3, distributed * 1e3,
                halo * 1e3, base / distributed);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = dist::run_or_abort([&] {
    std::int64_t n2 = 8192, n3 = 320;
    int steps = 10, reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string k = argv[i];
      const long v = std::atol(argv[i + 1]);
      if (k == "--n2") n2 = v;
      else if (k == "--n3") n3 = v;
      else if (k == "--steps") steps = static_cast<int>(v);
      else if (k == "--reps") reps = static_cast<int>(v);
    }
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int gpu = dist::select_gpu();
    const auto jacobi = kiln::stencil("jacobi2d", [](kiln::Window<double, 2> a) {
      return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0));
    }, kiln::border(kiln::Border::reflect)).on(kiln::Target::cuda);
    const auto heat = kiln::stencil("heat3d", [](kiln::Window<double, 3> u) {
      return u(0, 0, 0) + 0.125 * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) + u(0, 0, 1) - 6.0 * u(0, 0, 0));
    }, kiln::border(kiln::Border::nearest)).on(kiln::Target::cuda);
    if (rank == 0)
      std::printf("kiln-dist-gpu-bench: %d ranks on %d GPU(s) (%s); ms per step, slowest rank, best of %d\n"
                  "%-9s %-14s %10s %10s %10s %8s\n",
                  size, kiln::cuda::device_count(), kiln::cuda::properties(gpu).name.c_str(), reps, "workload", "grid",
                  "one proc", "dist", "halo", "eff");
    row<2>("jacobi2d", jacobi, dist::Grid(2), {n2, n2}, steps, reps, rank);
    row<3>("heat3d", heat, dist::Grid(3), {n3, n3, n3}, steps, reps, rank);
  });
  MPI_Finalize();
  return rc;
}
