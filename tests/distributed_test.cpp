// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::dist under mpirun -np 1..4 (tests/CMakeLists.txt): every result compared bitwise with the
// single-process kiln result on the global array, which each rank computes itself.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/config.hpp"
#include "kiln/device.hpp"
#include "kiln/distributed.hpp"

namespace {

using kiln::Border;
namespace dist = kiln::dist;

int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// Values with every bit of the mantissa in use, the same on every rank.
template <class T>
kiln::NDArray<T> random_array(const std::vector<std::int64_t>& shape, unsigned seed) {
  kiln::NDArray<T> a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t k = 0; k < a.size(); ++k) a.data()[k] = static_cast<T>(u(rng));
  return a;
}

template <class T>
bool bitwise_equal(const kiln::NDArray<T>& a, const kiln::NDArray<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(T)) == 0;
}

/// Each rank's block against the same region of the global reference, and the gathered array on rank 0.
template <class T, int N>
void expect_equal(const dist::Array<T, N>& got, const kiln::NDArray<T>& want, const std::string& what) {
  const auto n = got.local_shape();
  std::int64_t total = got.local_size(), mismatches = 0;
  std::array<std::int64_t, N> l{};
  for (std::int64_t k = 0; k < total; ++k) {
    const auto g = got.to_global(l);
    std::int64_t off = 0;
    for (int d = 0; d < N; ++d) off += g[d] * want.stride(d);
    const T a = got.local(l), b = want.data()[off];
    if (std::memcmp(&a, &b, sizeof(T)) != 0) ++mismatches;
    for (int d = N - 1; d >= 0 && ++l[d] == n[d]; --d) l[d] = 0;
  }
  EXPECT_EQ(mismatches, 0) << what << ": rank " << world_rank() << " block differs in " << mismatches << " elements";
  const kiln::NDArray<T> all = got.gather(0);
  if (world_rank() == 0) {
    EXPECT_TRUE(bitwise_equal(all, want)) << what << ": the gathered array differs";
  }
}

template <class T, int N>
dist::Array<T, N> distribute(const dist::Grid& g, const kiln::NDArray<T>& global) {
  std::array<std::int64_t, N> shape;
  for (int d = 0; d < N; ++d) shape[d] = global.shape(d);
  dist::Array<T, N> a(g, shape);
  a.scatter(world_rank() == 0 ? global.data() : nullptr, 0);
  return a;
}

const std::vector<kiln::StencilOptions> kBorders = {kiln::constant(1.5), kiln::border(Border::nearest), kiln::border(Border::wrap),
                                                    kiln::border(Border::reflect), kiln::border(Border::mirror),
                                                    kiln::border(Border::skip)};

std::string border_name(const kiln::StencilOptions& o) {
  static const char* const names[] = {"constant", "nearest", "wrap", "reflect", "mirror", "skip"};
  return names[static_cast<int>(*o.border)];
}

TEST(DistributedPartition, BlocksCoverTheAxisInOrder) {
  for (std::int64_t n : {1, 2, 7, 13, 97})
    for (int p = 1; p <= 5 && p <= n; ++p) {
      std::int64_t next = 0;
      for (int c = 0; c < p; ++c) {
        const dist::BlockRange b = dist::block_of(n, p, c);
        EXPECT_EQ(b.start, next);
        EXPECT_GE(b.count, n / p);
        EXPECT_LE(b.count, n / p + 1);
        next += b.count;
      }
      EXPECT_EQ(next, n);
    }
}

TEST(DistributedPartition, ScatterGatherAndIndexMaps) {
  const dist::Grid g1(1), g2(2), g3(3);
  const auto a1 = random_array<double>({97}, 1);
  const auto a2 = random_array<float>({13, 11}, 2);
  const auto a3 = random_array<double>({7, 5, 11}, 3);
  const auto d1 = distribute<double, 1>(g1, a1);
  const auto d2 = distribute<float, 2>(g2, a2);
  const auto d3 = distribute<double, 3>(g3, a3);
  expect_equal(d1, a1, "1-d");
  expect_equal(d2, a2, "2-d");
  expect_equal(d3, a3, "3-d");
  // Index maps: global -> local -> global, and ownership by exactly one rank.
  int owned = 0;
  for (std::int64_t i = 0; i < 13; ++i)
    for (std::int64_t j = 0; j < 11; ++j)
      if (d2.owns({i, j})) {
        ++owned;
        EXPECT_EQ(d2.to_global(d2.to_local({i, j})), (std::array<std::int64_t, 2>{i, j}));
      }
  int total = 0;
  MPI_Allreduce(&owned, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, 13 * 11);
}

TEST(DistributedStencil, Jacobi2dEveryBorderOnPrimeExtents) {
  const dist::Grid g(2);
  const auto x = random_array<double>({13, 11}, 4);
  const auto y0 = random_array<double>({13, 11}, 5);
  for (const auto& b : kBorders) {
    const auto jacobi = kiln::stencil("jacobi", [](kiln::Window<double, 2> a) {
      return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0)) + 0.125 * a(-1, 1);
    }, b);
    kiln::NDArray<double> want = y0.clone();
    jacobi.into(want, x);
    for (bool overlap : {true, false}) {
      auto in = distribute<double, 2>(g, x);
      auto out = distribute<double, 2>(g, y0);
      dist::run(dist::RunOptions{overlap}, jacobi, out, in);
      expect_equal(out, want, "jacobi, " + border_name(b) + (overlap ? ", overlap" : ", no overlap"));
    }
  }
}

TEST(DistributedStencil, WideAsymmetricNeighbourhood1dGrid) {
  const dist::Grid g(1);
  const auto x = random_array<double>({29, 17}, 6);
  for (const auto& b : kBorders) {
    const auto st = kiln::stencil("wide", [](kiln::Window<double, 2> a) {
      return a(-2, 0) - 0.5 * a(1, 3) + 0.25 * a(0, -1) + a(2, -2);
    }, b);
    kiln::NDArray<double> want = x.clone();
    st.into(want, x);
    auto in = distribute<double, 2>(g, x);
    auto out = distribute<double, 2>(g, x);
    dist::run(st, out, in);
    expect_equal(out, want, "wide, " + border_name(b));
  }
}

TEST(DistributedStencil, OneElementBlocks) {
  const int p = world_size();
  const std::int64_t n = p >= 3 ? p : 3;  // one element per rank from -np 3 on (a 3-point stencil needs 3 in all)
  const dist::Grid g(1);
  const auto x = random_array<double>({n}, 7);
  for (const auto& b : kBorders) {
    const auto st = kiln::stencil("three", [](kiln::Window<double, 1> a) { return a(-1) - 2.0 * a(0) + 0.5 * a(1); }, b);
    kiln::NDArray<double> want = x.clone();
    st.into(want, x);
    auto in = distribute<double, 1>(g, x);
    auto out = distribute<double, 1>(g, x);
    if (p >= 3) {
      EXPECT_EQ(out.local_shape()[0], 1);
    }
    dist::run(st, out, in);
    expect_equal(out, want, "one-element blocks, " + border_name(b));
  }
}

TEST(DistributedStencil, Heat3dOn3dAnd1dGrids) {
  const auto x = random_array<double>({9, 7, 11}, 8);
  for (int axes : {3, 1})
    for (const auto& b : {kiln::border(Border::nearest), kiln::border(Border::wrap), kiln::constant(-2.0)}) {
      const dist::Grid g(axes);
      const auto heat = kiln::stencil("heat", [](kiln::Window<double, 3> u) {
        return u(0, 0, 0) + 0.125 * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) + u(0, 0, 1) -
                                     6.0 * u(0, 0, 0)) + 0.01 * u(1, 1, -1);
      }, b);
      kiln::NDArray<double> want = x.clone();
      heat.into(want, x);
      auto in = distribute<double, 3>(g, x);
      auto out = distribute<double, 3>(g, x);
      dist::run(heat, out, in);
      expect_equal(out, want, "heat3d on " + std::to_string(axes) + "-d grid, " + border_name(b));
    }
}

// Rim slabs longer than a chunk (16384 positions) are cut and dealt over a team of threads, each chunk
// one single-threaded kernel call: the same bits as the single-process result, with and without overlap.
TEST(DistributedStencil, LongRimSlabsInChunksOnSeveralThreads) {
  const dist::Grid g(1);
  const auto x = random_array<double>({12, 40001}, 14);
  const int threads = kiln::num_threads();
  kiln::set_num_threads(3);
  for (const auto& b : {kiln::border(Border::nearest), kiln::border(Border::wrap), kiln::constant(0.5)}) {
    const auto st = kiln::stencil("long_rim", [](kiln::Window<double, 2> a) {
      return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0)) - 0.125 * a(-1, 1) + 0.0625 * a(1, -1);
    }, b);
    kiln::NDArray<double> want = x.clone();
    st.into(want, x);
    for (bool overlap : {true, false}) {
      auto in = distribute<double, 2>(g, x);
      dist::Array<double, 2> out(g, {12, 40001});
      dist::run(dist::RunOptions{overlap}, st, out, in);
      expect_equal(out, want, "long rims, " + border_name(b) + (overlap ? ", overlap" : ", no overlap"));
    }
  }
  kiln::set_num_threads(threads);
}

// dist::exchange fills the ghost layers a stencil reads and computes nothing: every ghost of the band of
// width one around each block (corners included) holds the global element there, or the border's value
// beyond a global edge (per axis: nearest clamps, wrap wraps, constant gives the value).
TEST(DistributedHalo, ExchangeAloneFillsTheGhostLayers) {
  const dist::Grid g(2);
  const std::int64_t n0 = 13, n1 = 11;
  const auto x = random_array<double>({n0, n1}, 15);
  for (const auto& b : {kiln::border(Border::nearest), kiln::border(Border::wrap), kiln::constant(2.5)}) {
    const auto st = kiln::stencil("ghosts", [](kiln::Window<double, 2> a) {
      return a(-1, -1) + a(1, 1) + a(-1, 1) + a(1, -1) + a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0);
    }, b);
    auto in = distribute<double, 2>(g, x);
    dist::Array<double, 2> out(g, {n0, n1});
    dist::exchange(st, out, in);
    const kiln::ArrayDesc d = in.local_desc();
    const auto* data = static_cast<const double*>(d.data);
    const auto off = in.offset(), n = in.local_shape();
    std::int64_t wrong = 0, written = 0;
    for (std::int64_t i = -1; i <= n[0]; ++i)
      for (std::int64_t j = -1; j <= n[1]; ++j) {
        std::int64_t gi = off[0] + i, gj = off[1] + j;
        double want = 0;
        if (*b.border == Border::constant && (gi < 0 || gi >= n0 || gj < 0 || gj >= n1)) {
          want = 2.5;
        } else {
          if (*b.border == Border::wrap) gi = (gi + n0) % n0, gj = (gj + n1) % n1;
          else gi = std::clamp<std::int64_t>(gi, 0, n0 - 1), gj = std::clamp<std::int64_t>(gj, 0, n1 - 1);
          want = x.data()[gi * n1 + gj];
        }
        if (data[i * d.strides[0] + j * d.strides[1]] != want) ++wrong;
      }
    for (std::int64_t k = 0; k < out.local_size(); ++k)
      if (out.local({k / out.local_shape()[1], k % out.local_shape()[1]}) != 0.0) ++written;
    EXPECT_EQ(wrong, 0) << border_name(b) << ": rank " << world_rank() << " has " << wrong << " wrong ghost or owned elements";
    EXPECT_EQ(written, 0) << border_name(b) << ": the exchange wrote into the output";
  }
}

// A time loop: one distributed call per step, the buffers swapped on the host; against one kiln kernel
// that loops with kiln::swap.
TEST(DistributedStencil, TimeLoopWithSwapMatchesOneKernel) {
  const dist::Grid g(2);
  const auto x = random_array<double>({17, 19}, 9);
  const auto jacobi = kiln::stencil("jacobi_wrap", [](kiln::Window<double, 2> a) {
    return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0));
  }, kiln::border(Border::wrap));
  const auto loop = kiln::jit("jacobi_loop", [&](kiln::Array<double, 2> u0, kiln::Int steps) {
    kiln::Array<double, 2> u = kiln::empty_like(u0), v = kiln::empty_like(u0);
    u(kiln::all) = u0;
    kiln::range(steps, [&](kiln::Int) {
      jacobi.into(v, u);
      kiln::swap(u, v);
    });
    return u;
  });
  const kiln::NDArray<double> want = loop(x, 10);
  auto u = distribute<double, 2>(g, x);
  dist::Array<double, 2> v(g, {17, 19});
  for (int t = 0; t < 10; ++t) {
    dist::run(jacobi, v, u);
    u.swap(v);
  }
  expect_equal(u, want, "10 steps with swap");
}

// A kiln::jit kernel mixing elementwise work and stencils of two parameters (halos of both exchanged in
// one step), with a scalar parameter.
TEST(DistributedKernel, ElementwiseAndStencilsOfTwoArrays) {
  const dist::Grid g(2);
  const auto x = random_array<double>({11, 13}, 10);
  const auto y = random_array<double>({11, 13}, 11);
  const auto lap = kiln::stencil("lap", [](kiln::Window<double, 2> a) {
    return a(-1, 0) + a(1, 0) + a(0, -1) + a(0, 1) - 4.0 * a(0, 0);
  }, kiln::border(Border::reflect));
  const auto k = kiln::jit("mixed", [&](kiln::Array<double, 2> out, kiln::Array<double, 2> u, kiln::Array<double, 2> w,
                                        kiln::Double c) { out(kiln::all) = u + c * lap(u) - kiln::sqrt(kiln::abs(lap(w))); });
  kiln::NDArray<double> want({11, 13});
  k(want, x, y, 0.3);
  auto u = distribute<double, 2>(g, x);
  auto w = distribute<double, 2>(g, y);
  dist::Array<double, 2> out(g, {11, 13});
  for (bool overlap : {true, false}) {
    dist::run(dist::RunOptions{overlap}, k, out, u, w, 0.3);
    expect_equal(out, want, std::string("mixed kernel") + (overlap ? ", overlap" : ""));
  }
}

// ---- reductions -------------------------------------------------------------------------------------

/// The order kiln::dist documents, as one single-process kiln kernel on the global array: segments of
/// kSegment along the last axis folded from the identity, their partials folded in row-major order.
double reference_sum(const kiln::NDArray<double>& a2) {
  const auto k = kiln::jit("ref_sum", [](kiln::Array<double, 2> a, kiln::Array<double, 2> part) {
    kiln::Int rows = a.shape(0), cols = a.shape(1), segs = part.shape(1);
    kiln::prange(rows, [&](kiln::Int r) {
      kiln::range(segs, [&](kiln::Int j) {
        kiln::Double acc = -0.0;
        kiln::range(j * dist::kSegment, kiln::min((j + 1) * dist::kSegment, cols), [&](kiln::Int c) { acc += a(r, c); });
        part(r, j) = acc;
      });
    });
    kiln::Double total = -0.0;
    kiln::range(rows, [&](kiln::Int r) { kiln::range(segs, [&](kiln::Int j) { total += part(r, j); }); });
    return total;
  });
  kiln::NDArray<double> part({a2.shape(0), (a2.shape(1) + dist::kSegment - 1) / dist::kSegment});
  return k(a2, part);
}

TEST(DistributedReduce, SumIsBitwiseTheSingleProcessOrder) {
  const int p = world_size();
  // Last axis split over every rank (segments cut between ranks, one crossing several blocks at -np 4:
  // 2500 columns) and a 2-d grid.
  for (const std::vector<int>& dims : {std::vector<int>{1, p}, std::vector<int>{0, 0}}) {
    const dist::Grid g(2, MPI_COMM_WORLD, dims);
    for (std::int64_t cols : {2500, 3, 1031}) {
      if (cols < g.dims()[1]) continue;
      kiln::NDArray<double> x = random_array<double>({5, cols}, 12);
      for (std::int64_t k = 0; k < x.size(); ++k) x.data()[k] = x.data()[k] * 1e6 + 1e-3;  // rounding matters
      const double want = reference_sum(x);
      const auto d = distribute<double, 2>(g, x);
      const double got = dist::sum(d);
      EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << "sum over " << g.describe() << ", 5 x " << cols << ": " << got
                                                          << " vs " << want;
      double lo = INFINITY, hi = -INFINITY;
      for (std::int64_t k = 0; k < x.size(); ++k) lo = std::fmin(lo, x.data()[k]), hi = std::fmax(hi, x.data()[k]);
      EXPECT_EQ(dist::min(d), lo);
      EXPECT_EQ(dist::max(d), hi);
    }
  }
}

/// The documented order along one axis of a 2-d array, as one single-process kiln kernel: per line,
/// segments of kSegment folded from -0.0 in index order, then the line's partials in order.
kiln::NDArray<double> reference_sum_along(const kiln::NDArray<double>& a2, int axis) {
  const auto k = kiln::jit(axis == 0 ? "ref_sum_axis0" : "ref_sum_axis1", [axis](kiln::Array<double, 2> a, kiln::Array<double, 1> out) {
    kiln::Int lines = a.shape(1 - axis), len = a.shape(axis);
    kiln::prange(lines, [&](kiln::Int l) {
      kiln::Double total = -0.0;
      kiln::range((len + dist::kSegment - 1) / dist::kSegment, [&](kiln::Int j) {
        kiln::Double acc = -0.0;
        kiln::range(j * dist::kSegment, kiln::min((j + 1) * dist::kSegment, len), [&](kiln::Int i) {
          acc += axis == 0 ? a(i, l) : a(l, i);
        });
        total += acc;
      });
      out(l) = total;
    });
  });
  kiln::NDArray<double> out({a2.shape(1 - axis)});
  k(a2, out);
  return out;
}

TEST(DistributedReduce, AlongAnAxisIsBitwiseTheSingleProcessOrder) {
  const int p = world_size();
  for (const std::vector<int>& dims : {std::vector<int>{p, 1}, std::vector<int>{1, p}, std::vector<int>{0, 0}}) {
    const dist::Grid g(2, MPI_COMM_WORLD, dims);
    kiln::NDArray<double> x = random_array<double>({2051, 7}, 15);
    for (std::int64_t k = 0; k < x.size(); ++k) x.data()[k] = x.data()[k] * 1e6 + 1e-3;
    const auto d = distribute<double, 2>(g, x);
    EXPECT_TRUE(bitwise_equal(dist::sum(d, 0), reference_sum_along(x, 0))) << "axis 0 over " << g.describe();
    kiln::NDArray<double> y = random_array<double>({6, 1100}, 16);
    const auto e = distribute<double, 2>(g, y);
    EXPECT_TRUE(bitwise_equal(dist::sum(e, 1), reference_sum_along(y, 1))) << "axis 1 over " << g.describe();
    const kiln::NDArray<double> mx = dist::max(e, 1);
    for (std::int64_t r = 0; r < 6; ++r) {
      double m = -INFINITY;
      for (std::int64_t c = 0; c < 1100; ++c) m = std::fmax(m, y(r, c));
      EXPECT_EQ(mx.data()[r], m);
    }
  }
}

TEST(DistributedReduce, ThreadCountDoesNotEnter) {
  const dist::Grid g(2);
  kiln::NDArray<float> x = random_array<float>({37, 3001}, 13);
  const auto d = distribute<float, 2>(g, x);
  const int threads = kiln::num_threads();
  kiln::set_num_threads(1);
  const float one = dist::sum(d);
  kiln::set_num_threads(3);
  const float three = dist::sum(d);
  kiln::set_num_threads(threads);
  EXPECT_EQ(std::memcmp(&one, &three, sizeof one), 0) << one << " vs " << three;
}

TEST(DistributedReduce, IntegerAnd3dAndOneElementBlocks) {
  const int p = world_size();
  const dist::Grid g3(3), g1(1);
  kiln::NDArray<std::int64_t> x({6, 5, 7});
  std::int64_t want = 0, want_prod = 1;
  for (std::int64_t k = 0; k < x.size(); ++k) {
    x.data()[k] = k % 11 - 5;
    want += x.data()[k];
  }
  EXPECT_EQ(dist::sum(distribute<std::int64_t, 3>(g3, x)), want);
  kiln::NDArray<std::int64_t> small({std::int64_t{p}});
  for (std::int64_t k = 0; k < p; ++k) want_prod *= (small.data()[k] = k + 2);
  EXPECT_EQ(dist::prod(distribute<std::int64_t, 1>(g1, small)), want_prod);
}

// An axis of extent 0 that is not split: every reduction is its identity (sum -0.0, the documented
// fold's start), and along that axis each line is the identity; the other axis gives an empty result.
TEST(DistributedReduce, ZeroLengthAxisGivesTheIdentity) {
  const dist::Grid g(1);
  const std::int64_t rows = world_size();
  const dist::Array<double, 2> z(g, {rows, 0});
  const double s = dist::sum(z), want_sum = reference_sum(kiln::NDArray<double>({rows, 0}));
  EXPECT_EQ(std::memcmp(&s, &want_sum, sizeof s), 0) << s;
  EXPECT_TRUE(std::signbit(s));
  EXPECT_EQ(dist::prod(z), 1.0);
  EXPECT_EQ(dist::min(z), INFINITY);
  EXPECT_EQ(dist::max(z), -INFINITY);
  const kiln::NDArray<double> lines = dist::sum(z, 1);
  ASSERT_EQ(lines.size(), rows);
  for (std::int64_t r = 0; r < rows; ++r) EXPECT_TRUE(lines.data()[r] == 0.0 && std::signbit(lines.data()[r])) << r;
  EXPECT_EQ(dist::max(z, 1).data()[0], -INFINITY);
  EXPECT_EQ(dist::sum(z, 0).size(), 0);
  const dist::Array<std::int64_t, 3> z3(g, {rows, 3, 0});
  EXPECT_EQ(dist::sum(z3), 0);
  EXPECT_EQ(dist::min(z3, 1).size(), 0);
  const kiln::NDArray<std::int64_t> p3 = dist::prod(z3, 2);
  ASSERT_EQ(p3.size(), rows * 3);
  for (std::int64_t k = 0; k < p3.size(); ++k) EXPECT_EQ(p3.data()[k], 1);
}

/// kiln's scalar min/max folded over a 1-d array in index order by one single-process kernel.
template <bool kMin>
double reference_extremum(const kiln::NDArray<double>& x) {
  const auto k = kiln::jit(kMin ? "ref_min" : "ref_max", [](kiln::Array<double, 1> a) {
    kiln::Double acc = kMin ? INFINITY : -INFINITY;
    kiln::range(a.shape(0), [&](kiln::Int i) { acc = kMin ? kiln::min(acc, a[i]) : kiln::max(acc, a[i]); });
    return acc;
  });
  return k(x);
}

// min and max follow kiln's semantics (ir/semantics.hpp), not the order the elements are met in: -0 is
// below +0 whichever rank holds which, and a NaN anywhere gives kiln's NaN (the quiet NaN of
// ir/semantics.hpp, whatever NaN the input held: so the result does not depend on which rank meets which
// NaN first). Bitwise the single-process kernel's result, NaN against NaN of any payload as kiln's own
// backend checks compare them (docs/hardening.md), with the zeros and NaNs on different ranks.
TEST(DistributedReduce, MinMaxOfSignedZerosAndNaNAsKiln) {
  const std::int64_t p = world_size(), n = 2 * p;
  const dist::Grid g(1);
  const auto check = [&](const kiln::NDArray<double>& x, const std::string& what) {
    const auto d = distribute<double, 1>(g, x);
    const double lo = dist::min(d), hi = dist::max(d);
    const double want_lo = reference_extremum<true>(x), want_hi = reference_extremum<false>(x);
    const auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; };
    EXPECT_TRUE(same(lo, want_lo)) << what << ": min " << lo << " vs " << want_lo;
    EXPECT_TRUE(same(hi, want_hi)) << what << ": max " << hi << " vs " << want_hi;
    return std::pair{lo, hi};
  };
  kiln::NDArray<double> zeros({n});
  for (std::int64_t k = 0; k < n; ++k) zeros.data()[k] = k < p ? 0.0 : -0.0;  // +0 on the first ranks
  auto [lo, hi] = check(zeros, "+0 then -0");
  EXPECT_TRUE(lo == 0.0 && std::signbit(lo));
  EXPECT_TRUE(hi == 0.0 && !std::signbit(hi));
  for (std::int64_t k = 0; k < n; ++k) zeros.data()[k] = k < p ? -0.0 : 0.0;  // -0 on the first ranks
  std::tie(lo, hi) = check(zeros, "-0 then +0");
  EXPECT_TRUE(lo == 0.0 && std::signbit(lo));
  EXPECT_TRUE(hi == 0.0 && !std::signbit(hi));
  // NaNs of another sign and payload on the last rank, after finite values; and NaN first, then finite.
  kiln::NDArray<double> nans({n});
  for (std::int64_t k = 0; k < n; ++k) nans.data()[k] = static_cast<double>(k) - 1.5;
  nans.data()[n - 1] = -std::nan("7");
  const double quiet = std::numeric_limits<double>::quiet_NaN();
  std::tie(lo, hi) = check(nans, "NaN on the last rank");
  EXPECT_EQ(std::memcmp(&lo, &quiet, sizeof lo), 0) << lo;
  EXPECT_EQ(std::memcmp(&hi, &quiet, sizeof hi), 0) << hi;
  nans.data()[0] = std::nan("3");
  nans.data()[n - 1] = 3.0;
  std::tie(lo, hi) = check(nans, "NaN on the first rank");
  EXPECT_EQ(std::memcmp(&lo, &quiet, sizeof lo), 0) << lo;
  EXPECT_EQ(std::memcmp(&hi, &quiet, sizeof hi), 0) << hi;
}

TEST(DistributedReduce, HistogramMatchesOneKilnKernel) {
  const dist::Grid g(3);
  kiln::NDArray<double> x = random_array<double>({7, 6, 11}, 14);
  x.data()[0] = 1.0;   // hi: the last bin
  x.data()[1] = -1.0;  // lo: the first
  x.data()[2] = NAN;   // not counted
  x.data()[3] = 1.5;   // outside: not counted
  constexpr std::int64_t bins = 16;
  const auto count = kiln::jit("ref_hist", [](kiln::Array<double, 1> v, kiln::Array<std::int64_t, 1> hist, kiln::Double lo,
                                              kiln::Double hi) {
    const kiln::Double scale = kiln::to_double(hist.shape(0)) / (hi - lo);
    kiln::prange(v.shape(0), [&](kiln::Int i) {
      kiln::if_(v[i] >= lo && v[i] <= hi, [&] { hist[kiln::min(kiln::to_int((v[i] - lo) * scale), hist.shape(0) - 1)] += 1; });
    });
  });
  kiln::NDArray<std::int64_t> want({bins});
  std::fill(want.data(), want.data() + bins, 0);
  count(kiln::ArrayRef<double>(x.data(), {x.size()}), want, -1.0, 1.0);
  const auto got = dist::histogram(distribute<double, 3>(g, x), bins, -1.0, 1.0);
  EXPECT_TRUE(bitwise_equal(got, want));
  std::int64_t counted = 0;
  for (std::int64_t k = 0; k < bins; ++k) counted += got.data()[k];
  EXPECT_EQ(counted, x.size() - 2);
}

// ---- errors -----------------------------------------------------------------------------------------

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const dist::DistributedError& e) {
    return e.what();
  }
  return "(no DistributedError)";
}

TEST(DistributedErrors, MismatchedShapesNameTheArgument) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const dist::Grid g(1);
  const std::int64_t n = world_rank() == 1 ? 12 : 13;
  dist::Array<double, 1> u(g, {n}), v(g, {n});
  const auto st = kiln::stencil("smooth", [](kiln::Window<double, 1> a) { return a(-1) + a(1); });
  const std::string e = error_of([&] { dist::run(st, v, u); });
  EXPECT_NE(e.find("kernel 'smooth_into'"), std::string::npos) << e;
  EXPECT_NE(e.find("global shape (12) on rank 1 but (13) on rank 0"), std::string::npos) << e;
  EXPECT_NE(e.find("every rank passes the same distributed arrays"), std::string::npos) << e;
}

TEST(DistributedErrors, DifferentKernelsPerRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const dist::Grid g(1);
  dist::Array<double, 1> u(g, {8}), v(g, {8});
  const double scale = world_rank() == 0 ? 2.0 : 3.0;  // captured: a constant of the traced IR
  const auto k = kiln::jit("scaled", [&](kiln::Array<double, 1> out, kiln::Array<double, 1> in) { out(kiln::all) = in * scale; });
  const std::string e = error_of([&] { dist::run(k, v, u); });
  EXPECT_NE(e.find("kernel 'scaled': rank 1 traced other IR than rank 0"), std::string::npos) << e;
  EXPECT_NE(e.find("pass it as a kernel parameter"), std::string::npos) << e;
}

TEST(DistributedErrors, BlocksSmallerThanTheReach) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const dist::Grid g(1);
  dist::Array<double, 1> u(g, {std::int64_t{world_size()}}), v(g, {std::int64_t{world_size()}});
  const auto st = kiln::stencil("reach2", [](kiln::Window<double, 1> a) { return a(-2) + a(2); }, kiln::border(Border::wrap));
  const std::string e = error_of([&] { dist::run(st, v, u); });
  EXPECT_NE(e.find("kernel 'reach2_into': distributed array"), std::string::npos) << e;
  EXPECT_NE(e.find("reaches 2 elements along axis 0, but a block there has only 1"), std::string::npos) << e;
  EXPECT_NE(e.find("use fewer ranks along axis 0"), std::string::npos) << e;
}

// The first-call checks are per global shape: the same stencil on arrays too small for its reach is
// refused after a call on large ones (as on a fresh stencil), a valid new shape computes correctly, and
// ranks passing different new shapes are told so.
TEST(DistributedErrors, ChecksRunForEveryGlobalShape) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const dist::Grid g(1);
  const auto st = kiln::stencil("reach2n", [](kiln::Window<double, 1> a) { return a(-2) + a(2); }, kiln::border(Border::nearest));
  for (std::int64_t n : {std::int64_t{20}, 2 * std::int64_t{world_size()} + 1}) {
    const auto x = random_array<double>({n}, 22);
    kiln::NDArray<double> want = x.clone();
    st.into(want, x);
    auto in = distribute<double, 1>(g, x);
    dist::Array<double, 1> out(g, {n});
    dist::run(st, out, in);
    expect_equal(out, want, "reach 2 on " + std::to_string(n));
  }
  const std::int64_t small = world_size() + 1;  // a block of one element
  dist::Array<double, 1> u(g, {small}), v(g, {small});
  std::string e = error_of([&] { dist::run(st, v, u); });
  EXPECT_NE(e.find("reaches 2 elements along axis 0, but a block there has only 1"), std::string::npos) << e;
  const std::int64_t n = world_rank() == 1 ? 31 : 30;
  dist::Array<double, 1> a(g, {n}), b(g, {n});
  e = error_of([&] { dist::run(st, b, a); });
  EXPECT_NE(e.find("global shape (31) on rank 1 but (30) on rank 0"), std::string::npos) << e;
}

// One array passed as two arguments: their stencils' ghosts are one set, as wide as the widest read; with
// one border rule that is the single-process result, with two it is refused on every rank.
TEST(DistributedErrors, OneArrayAsTwoArgumentsOfOtherBorders) {
  const dist::Grid g(1);
  const std::int64_t n = 4 * world_size() + 3;
  const auto x = random_array<double>({n}, 23);
  const auto near1 = kiln::stencil("near1", [](kiln::Window<double, 1> a) { return a(-1) - a(1); }, kiln::border(Border::nearest));
  const auto near2 = kiln::stencil("near2", [](kiln::Window<double, 1> a) { return a(-2) + 0.5 * a(2); }, kiln::border(Border::nearest));
  const auto cst = kiln::stencil("cst", [](kiln::Window<double, 1> a) { return a(-1) + a(1); }, kiln::constant(100.0));
  const auto same = kiln::jit("same_border", [&](kiln::Array<double, 1> out, kiln::Array<double, 1> u, kiln::Array<double, 1> w) {
    out(kiln::all) = near1(u) + near2(w);
  });
  kiln::NDArray<double> want({n});
  same(want, x, x);
  auto u = distribute<double, 1>(g, x);
  dist::Array<double, 1> out(g, {n});
  for (bool overlap : {true, false}) {
    dist::run(dist::RunOptions{overlap}, same, out, u, u);
    expect_equal(out, want, std::string("one array, one border") + (overlap ? ", overlap" : ""));
  }
  const auto mixed = kiln::jit("two_borders", [&](kiln::Array<double, 1> out, kiln::Array<double, 1> u, kiln::Array<double, 1> w) {
    out(kiln::all) = near1(u) + cst(w);
  });
  const std::string e = error_of([&] { dist::run(mixed, out, u, u); });
  EXPECT_NE(e.find("kernel 'two_borders': argument 2"), std::string::npos) << e;
  EXPECT_NE(e.find("and argument 3"), std::string::npos) << e;
  EXPECT_NE(e.find("one kiln::dist::Array"), std::string::npos) << e;
  EXPECT_NE(e.find("separate kiln::dist::run calls"), std::string::npos) << e;
  // Passed as distinct arrays, the two borders are fine.
  auto w = distribute<double, 1>(g, x);
  mixed(want, x, x);
  dist::run(mixed, out, u, w);
  expect_equal(out, want, "two arrays, two borders");
}

// scatter and gather agree on the root's buffer and the root before any message: a null array on the
// root, or a root out of range, is the same DistributedError on every rank (no rank left waiting).
TEST(DistributedErrors, ScatterAndGatherWithoutABufferOnTheRoot) {
  const dist::Grid g(1);
  const std::int64_t n = 3 * world_size();
  dist::Array<double, 1> a(g, {n});
  std::string e = error_of([&] { a.scatter(nullptr, 0); });
  EXPECT_NE(e.find("scatter: the root (rank 0) passed no array"), std::string::npos) << e;
  e = error_of([&] { dist::detail::gather(a.block(), nullptr, 0); });
  EXPECT_NE(e.find("gather: the root (rank 0) passed no array"), std::string::npos) << e;
  const std::vector<double> data(static_cast<std::size_t>(n), 1.0);
  e = error_of([&] { a.scatter(data.data(), world_size()); });
  EXPECT_NE(e.find("root " + std::to_string(world_size()) + " is not a rank of the grid"), std::string::npos) << e;
  // Nothing was left in flight: the array still scatters and gathers.
  const auto x = random_array<double>({n}, 24);
  a.scatter(world_rank() == 0 ? x.data() : nullptr, 0);
  expect_equal(a, x, "scatter after the errors");
}

TEST(DistributedErrors, UnsupportedKernelShapes) {
  const dist::Grid g(1);
  dist::Array<double, 1> u(g, {16}), v(g, {16});
  const auto lap = kiln::stencil("lap1", [](kiln::Window<double, 1> a) { return a(-1) - 2.0 * a(0) + a(1); });
  const auto twice = kiln::jit("twice", [&](kiln::Array<double, 1> out, kiln::Array<double, 1> in) { out(kiln::all) = lap(lap(in)); });
  std::string e = error_of([&] { dist::run(twice, v, u); });
  EXPECT_NE(e.find("kernel 'twice': stencil lap1"), std::string::npos) << e;
  EXPECT_NE(e.find("an array the kernel makes"), std::string::npos) << e;
  const auto total = kiln::jit("total", [](kiln::Array<double, 1> in) { return kiln::sum(in); });
  e = error_of([&] { dist::run(total, u); });
  EXPECT_NE(e.find("kernel 'total' returns a value"), std::string::npos) << e;
  EXPECT_NE(e.find("kiln::dist::sum"), std::string::npos) << e;
  // In place: the stencil would read neighbours it overwrote; and the interpreter is not a target of kiln::dist.
  dist::run(lap, v, u);
  e = error_of([&] { dist::run(lap, u, u); });
  EXPECT_NE(e.find("kernel 'lap1_into': stencil lap1"), std::string::npos) << e;
  EXPECT_NE(e.find("write into a second kiln::dist::Array and swap"), std::string::npos) << e;
  e = error_of([&] { dist::run(lap.on(kiln::Target::interpreter), v, u); });
  EXPECT_NE(e.find("kernel 'lap1': kiln::dist runs kernels on the cpu and cuda targets"), std::string::npos) << e;
}

// ---- one GPU per rank ---------------------------------------------------------------------------------

/// `steps` steps of `st` with swap, in one process (st.into on NDArrays) and on kiln::dist, compared
/// bitwise: from the second step on, the stencil reads an array whose current copy is on the GPU, so its
/// halo bands come down from there.
template <class S, int N>
void expect_steps_as_one_process(const dist::Grid& g, const S& st, const kiln::NDArray<double>& x, int steps,
                                 const std::string& what) {
  kiln::NDArray<double> want = x.clone(), spare = x.clone();
  auto u = distribute<double, N>(g, x);
  auto v = distribute<double, N>(g, x);
  for (int t = 0; t < steps; ++t) {
    st.into(spare, want);
    std::swap(want, spare);
    dist::run(st, v, u);
    u.swap(v);
  }
  expect_equal(u, want, what);
}

// The CUDA target on every rank's block (halos staged through the host): every border, three steps each,
// bitwise the single-process CUDA result.
TEST(DistributedCuda, EveryBorderAsOneProcessOnTheGpu) {
  if (!kiln::cuda::available()) GTEST_SKIP() << "no GPU: " << kiln::cuda::unavailable_reason();
  dist::select_gpu();
  const dist::Grid g(2);
  const auto x = random_array<double>({13, 11}, 4);
  for (const auto& b : kBorders) {
    const auto jacobi = kiln::stencil("jacobi", [](kiln::Window<double, 2> a) {
      return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0)) + 0.125 * a(-1, 1);
    }, b).on(kiln::Target::cuda);
    expect_steps_as_one_process<decltype(jacobi), 2>(g, jacobi, x, 3, "jacobi on the GPU, " + border_name(b));
  }
}

// A reach of 2 along every axis of a 3-d grid: bands of width 3 (mirror reads one plane further), slabs
// across the middle and last axes packed on the GPU, thin edge blocks.
TEST(DistributedCuda, ReachTwoIn3dEveryBorder) {
  if (!kiln::cuda::available()) GTEST_SKIP() << "no GPU: " << kiln::cuda::unavailable_reason();
  dist::select_gpu();
  const dist::Grid g(3);
  const auto x = random_array<double>({11, 9, 13}, 7);
  for (const auto& b : kBorders) {
    const auto wide = kiln::stencil("wide3", [](kiln::Window<double, 3> a) {
      return 0.5 * a(0, 0, 0) + 0.125 * (a(-2, 0, 0) + a(0, 2, 0) + a(0, 0, -2) + a(1, -1, 2));
    }, b).on(kiln::Target::cuda);
    expect_steps_as_one_process<decltype(wide), 3>(g, wide, x, 3, "reach 2 in 3-d on the GPU, " + border_name(b));
  }
}

// Bands across the last axis of a block of at least 49 x 402 storage rows (140 x 400 x 5 split along its
// first axis over up to 3 ranks) are more runs than one strided copy takes (distributed/device_mirror.cpp,
// kPackRuns): they are packed on the GPU and unpacked on the host.
TEST(DistributedCuda, LargeBandsArePackedOnTheGpu) {
  if (!kiln::cuda::available()) GTEST_SKIP() << "no GPU: " << kiln::cuda::unavailable_reason();
  dist::select_gpu();
  const dist::Grid g(1);  // split along the first axis only
  const auto x = random_array<double>({140, 400, 5}, 11);
  for (const auto& b : {kiln::border(Border::nearest), kiln::border(Border::mirror)}) {
    const auto heat = kiln::stencil("heat7", [](kiln::Window<double, 3> u) {
      return u(0, 0, 0) + 0.125 * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) + u(0, 0, 1) - 6.0 * u(0, 0, 0));
    }, b).on(kiln::Target::cuda);
    expect_steps_as_one_process<decltype(heat), 3>(g, heat, x, 3, "packed bands on the GPU, " + border_name(b));
  }
}

// A time loop on the GPU (the blocks stay there: only halo bands move), then the cpu target and a
// reduction on the same arrays (brought back first), then the GPU again (taken up again): bitwise the
// same steps in one process.
TEST(DistributedCuda, TimeLoopThenCpuThenGpuAgain) {
  if (!kiln::cuda::available()) GTEST_SKIP() << "no GPU: " << kiln::cuda::unavailable_reason();
  dist::select_gpu();
  const dist::Grid g(2);
  const auto x = random_array<double>({17, 19}, 9);
  const auto jacobi = kiln::stencil("jacobi_wrap", [](kiln::Window<double, 2> a) {
    return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0));
  }, kiln::border(Border::wrap));
  const auto cpu = jacobi.on(kiln::Target::cpu), gpu = jacobi.on(kiln::Target::cuda);
  kiln::NDArray<double> want = x.clone(), spare = x.clone();
  auto u = distribute<double, 2>(g, x);
  dist::Array<double, 2> v(g, {17, 19});
  auto steps = [&](const auto& st, int n) {
    for (int t = 0; t < n; ++t) {
      st.into(spare, want);
      std::swap(want, spare);
      dist::run(st, v, u);
      u.swap(v);
    }
  };
  // The arrays stay on the GPU. The first step takes both up; the second grows the ghost layers of the array
  // it reads (the first step's output), whose storage is made again: down and up once. After that only halo
  // bands and ghost layers move.
  steps(gpu, 2);
  const std::int64_t copies = dist::detail::whole_block_copies(u.block()) + dist::detail::whole_block_copies(v.block());
  EXPECT_EQ(copies, 4);
  steps(gpu, 8);
  EXPECT_EQ(dist::detail::whole_block_copies(u.block()) + dist::detail::whole_block_copies(v.block()), copies);
  expect_equal(u, want, "10 steps on the GPU");
#if KILN_HAVE_LLVM  // a GPU machine's build may have no cpu target
  steps(cpu, 3);
  expect_equal(u, want, "then 3 on the cpu");
  // dist::sum brings the blocks down and adds in the order of one process's cpu kernel.
  const auto total = kiln::jit("total", [](kiln::Array<double, 2> a) { return kiln::sum(a); });
  const double d = dist::sum(u), one = total(want);
  EXPECT_EQ(std::memcmp(&d, &one, sizeof d), 0) << d << " vs " << one;
#endif
  steps(gpu, 4);
  u.fill([](const std::array<std::int64_t, 2>& i) { return static_cast<double>(i[0] - i[1]); });
  for (std::int64_t i = 0; i < 17; ++i)
    for (std::int64_t j = 0; j < 19; ++j) want(i, j) = static_cast<double>(i - j);
  steps(gpu, 2);
  expect_equal(u, want, "a host fill between GPU steps");
}

// Without a GPU the CUDA target is the same DeviceError on every rank (no rank waits for another).
TEST(DistributedCuda, WithoutAGpuEveryRankSaysWhy) {
  if (kiln::cuda::available()) GTEST_SKIP() << "a GPU is present: the error path is for machines without one";
  EXPECT_THROW(dist::select_gpu(), kiln::DeviceError);
  const dist::Grid g(1);
  dist::Array<double, 1> u(g, {31}), v(g, {31});
  const auto lap = kiln::stencil("lap_gpu", [](kiln::Window<double, 1> a) { return a(-1) - 2.0 * a(0) + a(1); });
  try {
    dist::run(lap.on(kiln::Target::cuda), v, u);
    ADD_FAILURE() << "no DeviceError";
  } catch (const kiln::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA driver/GPU"), std::string::npos) << e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Every rank prints its own results: a failure on any rank fails its exit status, and so mpirun's.
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
