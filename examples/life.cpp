// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Conway's game of life on a torus (Border::wrap), int32 cells, 50 generations in one kernel with swapped
// buffers. The neighbour count loops over offsets in plain C++, so the offsets are C++ integers and the
// neighbourhood (-1..1 in both dimensions) is inferred.
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 2048LL * 2048);
  kiln::Options opts;
  opts.target = args.target;
  constexpr int generations = 50;
  const auto rule = kiln::stencil("life_rule", [](kiln::Window<std::int32_t, 2> c) {
    kiln::Int32 n = 0;
    for (int di = -1; di <= 1; ++di)
      for (int dj = -1; dj <= 1; ++dj)
        if (di != 0 || dj != 0) n += c(di, dj);
    return kiln::select(n == 3 || (n == 2 && c(0, 0) == 1), 1, 0);
  }, kiln::border(kiln::Border::wrap));
  auto life = kiln::jit("life", [&](kiln::Array<std::int32_t, 2> world, kiln::Int gens) {
    kiln::Array<std::int32_t, 2> now = kiln::empty_like(world), next = kiln::empty_like(world);
    now(kiln::all) = world;
    kiln::range(gens, [&](kiln::Int) {
      rule.into(next, now);
      kiln::swap(now, next);
    });
    return now;
  }, opts);

  const long n = std::max(3L, std::lround(std::sqrt(static_cast<double>(args.n))));
  kiln::NDArray<std::int32_t> world({n, n});
  std::mt19937_64 rng(17);
  for (long k = 0; k < n * n; ++k) world.data()[k] = rng() % 10 < 3;

  kiln::NDArray<std::int32_t> got;
  const double first_s = example::seconds([&] { got = life(world, generations); });
  const double warm_s = example::seconds([&] { got = life(world, generations); });

  std::vector<std::int32_t> a(world.data(), world.data() + n * n), b(a.size());
  const double ref_s = example::seconds([&] {
    for (int g = 0; g < generations; ++g) {
      for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
          int count = 0;
          for (long p = -1; p <= 1; ++p)
            for (long q = -1; q <= 1; ++q)
              if (p || q) count += a[static_cast<size_t>(((i + p + n) % n) * n + (j + q + n) % n)];
          const int alive = a[static_cast<size_t>(i * n + j)];
          b[static_cast<size_t>(i * n + j)] = count == 3 || (count == 2 && alive == 1);
        }
      std::swap(a, b);
    }
  });

  long mismatches = 0, population = 0, ref_population = 0;
  for (long k = 0; k < n * n; ++k) {
    mismatches += got.data()[k] != a[static_cast<size_t>(k)];
    population += got.data()[k];
    ref_population += a[static_cast<size_t>(k)];
  }
  std::printf("life     %ld x %ld torus, %d generations, %ld cells differ from the reference\n", n, n, generations,
              mismatches);
  int rc = example::verdict("life", static_cast<double>(population), static_cast<double>(ref_population), 0, first_s,
                            warm_s, ref_s);
  if (mismatches != 0) rc = 1;
  return rc;
}
