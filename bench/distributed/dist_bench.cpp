// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-dist-bench: strong and weak scaling of kiln::dist, and the halo exchange against the compute. Run it
// once per rank count with ranks x threads = the machine's cores; on 16 cores:
//
//   for np in 1 2 4 8 16; do KILN_NUM_THREADS=$((16/np)) mpirun -np $np --bind-to none ./kiln-dist-bench; done
//
// Each run prints one table (per-step ms, the slowest rank's best of --reps):
//   strong  one global problem (jacobi2d --n2^2, heat3d --n3^3, a sum of the --n2^2 array) split over the
//           ranks. base: the same problem on one rank with all the job's threads (ranks x threads), the
//           other ranks asleep; eff = base / time (1.0: the ranks are as fast as the threads of one
//           process, the ideal for a one-node run).
//   weak    a block per rank (--w2^2, --w3^3), so the global problem grows with the ranks. base: every rank
//           computing its own block at the same time, alone (a grid of one rank: no exchange, the border
//           rule at all its edges), so the ranks contend for memory bandwidth as in the distributed run;
//           eff = base / time isolates what the exchange and the halos cost.
//   overlap / no-ovl: dist::run with and without the interior computed while the halos travel.
//   halo: dist::exchange alone (the same messages and edge fill, no compute).
//   hand: the same steps hand-written in C++/MPI/OpenMP (hand_stencils.hpp), timed alternately with kiln's
//         overlap run in the same process; k/hand = kiln's time / the hand code's. Before timing, each
//         stencil's result after --steps steps is compared element by element with the hand code's.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hand_stencils.hpp"
#include "rank_timing.hpp"
#include "kiln/distributed.hpp"

namespace {

namespace dist = kiln::dist;

struct Args {
  std::int64_t n2 = 8192, n3 = 320, w2 = 2048, w3 = 160;
  int steps = 10, reps = 3;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const long v = std::atol(argv[i + 1]);
    if (k == "--n2") a.n2 = v;
    else if (k == "--n3") a.n3 = v;
    else if (k == "--w2") a.w2 = v;
    else if (k == "--w3") a.w3 = v;
    else if (k == "--steps") a.steps = static_cast<int>(v);
    else if (k == "--reps") a.reps = static_cast<int>(v);
    else {
      std::fprintf(stderr, "usage: kiln-dist-bench [--n2 N] [--n3 N] [--w2 N] [--w3 N] [--steps S] [--reps R]\n"
                           "  strong scaling: jacobi2d N2^2, heat3d N3^3 global; weak scaling: W2^2, W3^3 per rank\n");
      std::exit(2);
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "kiln-dist-bench: option %s has no value\n", argv[argc - 1]);
    std::exit(2);
  }
  return a;
}

using bench::timed;

/// timed() for two bodies at once, alternating them in each repetition (so drift in the machine's state
/// reaches both): the best of each.
template <class F, class G>
std::pair<double, double> timed_pair(MPI_Comm comm, int reps, F&& f, G&& g) {
  double best_f = 1e300, best_g = 1e300;
  for (int r = 0; r < reps; ++r) {
    best_f = std::min(best_f, timed(comm, 1, f));
    best_g = std::min(best_g, timed(comm, 1, g));
  }
  return {best_f, best_g};
}

/// Waits for the other ranks at a barrier asleep: a spinning MPI_Barrier would take the cores that a
/// rank working alone needs.
void sleep_barrier(MPI_Comm comm) {
  MPI_Request done;
  MPI_Ibarrier(comm, &done);
  for (int finished = 0; !finished;) {
    MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
    if (!finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

const auto jacobi = kiln::stencil("jacobi2d", [](kiln::Window<double, 2> a) {
  return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0));
}, kiln::border(kiln::Border::reflect));

const auto heat = kiln::stencil("heat3d", [](kiln::Window<double, 3> u) {
  return u(0, 0, 0) + 0.125 * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) + u(0, 0, 1) - 6.0 * u(0, 0, 0));
}, kiln::border(kiln::Border::nearest));

double fill2(const std::array<std::int64_t, 2>& i) { return static_cast<double>((i[0] * 31 + i[1] * 17) % 101); }
double fill3(const std::array<std::int64_t, 3>& i) { return static_cast<double>((i[0] * 7 + i[1] * 13 + i[2]) % 29); }

/// The elements (over all ranks of the grid) where kiln's `u` and the hand code's block differ after `steps`
/// steps from the same start, or -1 if the two split the array differently.
template <int N, class S>
std::int64_t differences(const dist::Grid& g, const S& stencil, const std::array<std::int64_t, N>& shape,
                         double (*fill)(const std::array<std::int64_t, N>&), int steps) {
  dist::Array<double, N> u(g, shape), v(g, shape);
  u.fill(fill);
  for (int s = 0; s < steps; ++s) {
    dist::run(stencil, v, u);
    u.swap(v);
  }
  hand::Block<N> h(g.comm(), shape, fill);
  h.steps(steps, true);
  std::int64_t differ = 0;
  if (h.offset() != u.offset() || h.count() != u.local_shape()) {
    differ = -1;
  } else {
    std::int64_t n = 1;
    for (auto c : h.count()) n *= c;
    for (std::int64_t k = 0; k < n; ++k) {
      std::array<std::int64_t, N> l{};
      for (std::int64_t rest = k, d = N - 1; d >= 0; --d) {
        l[d] = rest % h.count()[d];
        rest /= h.count()[d];
      }
      const double x = u.local(l), y = h.local(l);
      differ += std::memcmp(&x, &y, sizeof x) != 0;
    }
  }
  std::int64_t lowest = 0, total = 0;
  MPI_Allreduce(&differ, &lowest, 1, MPI_INT64_T, MPI_MIN, g.comm());
  MPI_Allreduce(&differ, &total, 1, MPI_INT64_T, MPI_SUM, g.comm());
  return lowest < 0 ? -1 : total;
}

/// Seconds per step (per reduction for the sum) on one pair of grids.
struct Times {
  double jacobi_overlap = 0, jacobi_serial = 0, jacobi_halo = 0;
  double heat_overlap = 0, heat_serial = 0, heat_halo = 0;
  double jacobi_hand = 0, heat_hand = 0;
  double sum = 0;
  double checksum = 0;  ///< the sum of the jacobi2d array after every step taken: the same bits for any -np
};

/// Times the workloads on arrays of global shapes s2, s3 over g2, g3; `sync` is the communicator whose
/// ranks start each repetition together and whose slowest rank counts (g2's, or the world's when every
/// rank works on a grid of its own). With `halos` false the exchange alone is not timed.
Times measure(const dist::Grid& g2, const dist::Grid& g3, const std::array<std::int64_t, 2>& s2,
              const std::array<std::int64_t, 3>& s3, const Args& a, MPI_Comm sync, bool halos) {
  Times t;
  {
    dist::Array<double, 2> u(g2, s2), v(g2, s2);
    u.fill(fill2);
    auto steps = [&](bool overlap) {
      for (int s = 0; s < a.steps; ++s) {
        dist::run(dist::RunOptions{overlap}, jacobi, v, u);
        u.swap(v);
      }
    };
    hand::Block<2> h(g2.comm(), s2, fill2);
    std::tie(t.jacobi_overlap, t.jacobi_hand) =
        timed_pair(sync, a.reps, [&] { steps(true); }, [&] { h.steps(a.steps, true); });
    t.jacobi_overlap /= a.steps;
    t.jacobi_hand /= a.steps;
    t.jacobi_serial = timed(sync, a.reps, [&] { steps(false); }) / a.steps;
    if (halos) t.jacobi_halo = timed(sync, a.reps, [&] { dist::exchange(jacobi, v, u); });
    t.sum = timed(sync, a.reps, [&] { t.checksum = dist::sum(u); });
  }
  dist::Array<double, 3> p(g3, s3), q(g3, s3);
  p.fill(fill3);
  auto steps = [&](bool overlap) {
    for (int s = 0; s < a.steps; ++s) {
      dist::run(dist::RunOptions{overlap}, heat, q, p);
      p.swap(q);
    }
  };
  hand::Block<3> h(g3.comm(), s3, fill3);
  std::tie(t.heat_overlap, t.heat_hand) = timed_pair(sync, a.reps, [&] { steps(true); }, [&] { h.steps(a.steps, true); });
  t.heat_overlap /= a.steps;
  t.heat_hand /= a.steps;
  t.heat_serial = timed(sync, a.reps, [&] { steps(false); }) / a.steps;
  if (halos) t.heat_halo = timed(sync, a.reps, [&] { dist::exchange(heat, q, p); });
  return t;
}

void row(const char* scaling, const std::string& workload, const std::string& problem, double base, double ovl,
         std::optional<double> serial, std::optional<double> halo, std::optional<double> hand = std::nullopt) {
  auto ms = [](std::optional<double> v) {
    char b[32];
    if (v) std::snprintf(b, sizeof b, "%.3f", *v * 1e3);
    else std::snprintf(b, sizeof b, "-");
    return std::string(b);
  };
  auto eff = [&](std::optional<double> v) {
    char b[32];
    if (v) std::snprintf(b, sizeof b, "%.3f", base / *v);
    else std::snprintf(b, sizeof b, "-");
    return std::string(b);
  };
  char ratio[32] = "-";
  if (hand) std::snprintf(ratio, sizeof ratio, "%.3f", ovl / *hand);
  std::printf("%-7s %-14s %-16s %10s %10s %10s %10s %8s %8s %10s %8s\n", scaling, workload.c_str(), problem.c_str(),
              ms(base).c_str(), ms(ovl).c_str(), ms(serial).c_str(), ms(halo).c_str(), eff(ovl).c_str(), eff(serial).c_str(),
              ms(hand).c_str(), ratio);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = kiln::dist::run_or_abort([&] {
    const Args a = parse(argc, argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int threads = kiln::num_threads();
    omp_set_num_threads(threads);  // the hand code's OpenMP team: as many threads as kiln's
    const dist::Grid g2(2), g3(3);
    const dist::Grid self2(2, MPI_COMM_SELF), self3(3, MPI_COMM_SELF);

    // Strong scaling. The base: rank 0 alone with every thread of the job (one rank of ranks x threads
    // threads), the others asleep. With one rank the distributed run is that configuration itself.
    std::optional<Times> strong_base;
    if (size > 1) {
      if (rank == 0) {
        kiln::set_num_threads(threads * size);
        omp_set_num_threads(threads * size);
        strong_base = measure(self2, self3, {a.n2, a.n2}, {a.n3, a.n3, a.n3}, a, MPI_COMM_SELF, false);
        kiln::set_num_threads(threads);
        omp_set_num_threads(threads);
      }
      sleep_barrier(MPI_COMM_WORLD);
    }
    // The hand code computes what kiln computes: on prime extents (uneven blocks), after --steps steps.
    const std::int64_t differ2 = differences<2>(g2, jacobi, {a.n2 / 8 + 1, a.n2 / 8 + 3}, fill2, a.steps);
    const std::int64_t differ3 = differences<3>(g3, heat, {a.n3 / 4 + 1, a.n3 / 4 + 3, a.n3 / 4 + 5}, fill3, a.steps);
    const Times strong = measure(g2, g3, {a.n2, a.n2}, {a.n3, a.n3, a.n3}, a, MPI_COMM_WORLD, true);

    // Weak scaling. The base: every rank its own block at the same time, on a grid of itself alone.
    const Times weak_base = measure(self2, self3, {a.w2, a.w2}, {a.w3, a.w3, a.w3}, a, MPI_COMM_WORLD, false);
    const std::array<std::int64_t, 2> ws2{a.w2 * g2.dims()[0], a.w2 * g2.dims()[1]};
    const std::array<std::int64_t, 3> ws3{a.w3 * g3.dims()[0], a.w3 * g3.dims()[1], a.w3 * g3.dims()[2]};
    const Times weak = measure(g2, g3, ws2, ws3, a, MPI_COMM_WORLD, true);
    if (rank != 0) return;

    std::printf("kiln-dist-bench: %d ranks x %d threads; 2-d grid %s, 3-d grid %s; ms per step, slowest rank, best of %d\n",
                size, threads, g2.describe().c_str(), g3.describe().c_str(), a.reps);
    std::printf("%-7s %-14s %-16s %10s %10s %10s %10s %8s %8s %10s %8s\n", "scaling", "workload", "problem", "base", "overlap",
                "no-ovl", "halo", "eff ovl", "eff no", "hand", "k/hand");
    const Times& sb = strong_base ? *strong_base : strong;
    const std::string s2 = std::to_string(a.n2) + "^2", s3 = std::to_string(a.n3) + "^3";
    row("strong", "jacobi2d", s2 + " global", sb.jacobi_overlap, strong.jacobi_overlap, strong.jacobi_serial, strong.jacobi_halo, strong.jacobi_hand);
    row("strong", "heat3d", s3 + " global", sb.heat_overlap, strong.heat_overlap, strong.heat_serial, strong.heat_halo, strong.heat_hand);
    row("strong", "sum", s2 + " global", sb.sum, strong.sum, std::nullopt, std::nullopt);
    const std::string w2 = std::to_string(a.w2) + "^2", w3 = std::to_string(a.w3) + "^3";
    row("weak", "jacobi2d", w2 + " per rank", weak_base.jacobi_overlap, weak.jacobi_overlap, weak.jacobi_serial, weak.jacobi_halo, weak.jacobi_hand);
    row("weak", "heat3d", w3 + " per rank", weak_base.heat_overlap, weak.heat_overlap, weak.heat_serial, weak.heat_halo, weak.heat_hand);
    row("weak", "sum", w2 + " per rank", weak_base.sum, weak.sum, std::nullopt, std::nullopt);
    std::printf("strong base: 1 rank x %d threads; weak base: each rank its own block at once, no exchange; "
                "eff = base / time\n",
                threads * size);
    auto verdict = [](std::int64_t d) {
      return d == 0 ? std::string("bitwise equal") : d < 0 ? std::string("split differently: not compared")
                                                            : std::to_string(d) + " elements DIFFER";
    };
    std::printf("hand code vs kiln after %d steps: jacobi2d %s, heat3d %s\n", a.steps, verdict(differ2).c_str(),
                verdict(differ3).c_str());
    if (strong_base)
      std::printf("jacobi2d %s after the same steps: sum %.17g on %d ranks, %.17g on 1 rank (%s)\n", s2.c_str(), strong.checksum,
                  size, strong_base->checksum,
                  std::memcmp(&strong.checksum, &strong_base->checksum, sizeof(double)) == 0 ? "bitwise equal" : "DIFFERENT");
  });
  MPI_Finalize();
  return rc;
}
