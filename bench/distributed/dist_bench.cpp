// kiln-dist-bench: weak scaling of kiln::dist. Every rank holds a block of the same size (--n2 per axis
// for jacobi2d, --n3 for heat3d), so the global problem grows with the ranks. For each workload it times:
//   t1       the same block on one rank alone (rank 0, a Grid over MPI_COMM_SELF; the others wait)
//   overlap  the distributed run, interior computed while the halos travel
//   serial   the distributed run waiting for the halos first (RunOptions{.overlap = false})
// and prints the parallel efficiency t1 / t (1.0: perfect weak scaling). Run it at several rank counts with
// ranks x threads = cores, e.g. on 16 cores:
//   for np in 1 2 4 8 16; do KILN_NUM_THREADS=$((16/np)) OMP_NUM_THREADS=$((16/np)) \
//     mpirun -np $np --bind-to none ./kiln-dist-bench; done
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kiln/distributed.hpp"

namespace {

namespace dist = kiln::dist;

struct Args {
  std::int64_t n2 = 2048, n3 = 160;
  int steps2 = 50, steps3 = 20, reps = 5;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const long v = std::atol(argv[i + 1]);
    if (k == "--n2") a.n2 = v;
    else if (k == "--n3") a.n3 = v;
    else if (k == "--steps2") a.steps2 = static_cast<int>(v);
    else if (k == "--steps3") a.steps3 = static_cast<int>(v);
    else if (k == "--reps") a.reps = static_cast<int>(v);
    else {
      std::fprintf(stderr, "usage: kiln-dist-bench [--n2 N] [--n3 N] [--steps2 S] [--steps3 S] [--reps R]\n");
      std::exit(2);
    }
  }
  return a;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/// The slowest rank's best-of-reps time for `body` (seconds), after one warm-up (compilation, ghosts).
template <class F>
double timed(MPI_Comm comm, int reps, F&& body) {
  body();
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(comm);
    const double t0 = now();
    body();
    double t = now() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    best = std::min(best, slowest);
  }
  return best;
}

const auto jacobi = kiln::stencil("jacobi2d", [](kiln::Window<double, 2> a) {
  return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0));
}, kiln::border(kiln::Border::reflect));

const auto heat = kiln::stencil("heat3d", [](kiln::Window<double, 3> u) {
  return u(0, 0, 0) + 0.125 * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) + u(0, 0, 1) - 6.0 * u(0, 0, 0));
}, kiln::border(kiln::Border::nearest));

/// Seconds per step (or per reduction) of the three workloads on `grid`, blocks of the given size.
struct Times {
  double jacobi_overlap, jacobi_serial, heat_overlap, heat_serial, sum;
  double checksum;
};

Times run_on(const dist::Grid& g2, const dist::Grid& g3, const Args& a) {
  Times t{};
  const std::array<std::int64_t, 2> s2{a.n2 * g2.dims()[0], a.n2 * g2.dims()[1]};
  const std::array<std::int64_t, 3> s3{a.n3 * g3.dims()[0], a.n3 * g3.dims()[1], a.n3 * g3.dims()[2]};
  dist::Array<double, 2> u(g2, s2), v(g2, s2);
  u.fill([&](const std::array<std::int64_t, 2>& i) { return static_cast<double>((i[0] * 31 + i[1] * 17) % 101); });
  auto steps2 = [&](bool overlap) {
    for (int s = 0; s < a.steps2; ++s) {
      dist::run(dist::RunOptions{overlap}, jacobi, v, u);
      u.swap(v);
    }
  };
  t.jacobi_overlap = timed(g2.comm(), a.reps, [&] { steps2(true); }) / a.steps2;
  t.jacobi_serial = timed(g2.comm(), a.reps, [&] { steps2(false); }) / a.steps2;
  t.sum = timed(g2.comm(), a.reps, [&] { t.checksum = dist::sum(u); });

  dist::Array<double, 3> p(g3, s3), q(g3, s3);
  p.fill([&](const std::array<std::int64_t, 3>& i) { return static_cast<double>((i[0] * 7 + i[1] * 13 + i[2]) % 29); });
  auto steps3 = [&](bool overlap) {
    for (int s = 0; s < a.steps3; ++s) {
      dist::run(dist::RunOptions{overlap}, heat, q, p);
      p.swap(q);
    }
  };
  t.heat_overlap = timed(g3.comm(), a.reps, [&] { steps3(true); }) / a.steps3;
  t.heat_serial = timed(g3.comm(), a.reps, [&] { steps3(false); }) / a.steps3;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = kiln::dist::run_or_abort([&] {
    const Args a = parse(argc, argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // The one-rank baseline: rank 0 alone, the others waiting asleep (a spinning MPI_Barrier would take
    // the cores rank 0's threads need).
    Times one{};
    if (rank == 0) {
      const dist::Grid s2(2, MPI_COMM_SELF), s3(3, MPI_COMM_SELF);
      one = run_on(s2, s3, a);
    }
    MPI_Request done;
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    for (int finished = 0; !finished;) {
      MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
      if (!finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const dist::Grid g2(2), g3(3);
    const Times all = run_on(g2, g3, a);
    if (rank != 0) return;
    const char* threads = std::getenv("KILN_NUM_THREADS");
    std::printf("kiln-dist-bench: %d ranks (2-d grid %s, 3-d grid %s), KILN_NUM_THREADS=%s, weak scaling\n", size,
                g2.describe().c_str(), g3.describe().c_str(), threads ? threads : "(all cores)");
    std::printf("%-34s %12s %12s %12s %10s %10s\n", "workload (block per rank)", "1 rank ms", "overlap ms", "no-ovl ms",
                "eff ovl", "eff no-ovl");
    auto row = [&](const std::string& what, double t1, double to, double ts) {
      std::printf("%-34s %12.3f %12.3f %12.3f %10.3f %10.3f\n", what.c_str(), t1 * 1e3, to * 1e3, ts * 1e3, t1 / to, t1 / ts);
    };
    const std::string b2 = std::to_string(a.n2) + "^2", b3 = std::to_string(a.n3) + "^3";
    row("jacobi2d step (" + b2 + ")", one.jacobi_overlap, all.jacobi_overlap, all.jacobi_serial);
    row("heat3d step (" + b3 + ")", one.heat_overlap, all.heat_overlap, all.heat_serial);
    std::printf("%-34s %12.3f %12.3f %12s %10.3f %10s\n", ("sum (" + b2 + ")").c_str(), one.sum * 1e3, all.sum * 1e3, "-",
                one.sum / all.sum, "-");
    std::printf("(sum of the final jacobi2d array: %.17g; ms are per step / per reduction, the slowest rank's best of %d)\n",
                all.checksum, a.reps);
  });
  MPI_Finalize();
  return rc;
}
