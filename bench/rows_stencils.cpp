// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rows jacobi2d, heat3d, smooth1d and conv2d: kiln stencils (stand-alone, written into an existing output)
// against hand-written C++/OpenMP with the same borders (reference_stencils.cpp). At the default problem
// size: one Jacobi sweep on 4096^2, one 7-point heat step on 256^3, a 3-point smoothing of 2*10^7 values and
// a 5x5 convolution with run-time weights on 4096^2; other --n scale the element counts alike.
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference_stencils.hpp"

namespace {

constexpr double kHeatC = 0.125;

auto make_jacobi() {
  return kiln::stencil("jacobi2d", [](kiln::Window<double, 2> a) {
    return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0));
  }, kiln::border(kiln::Border::skip) | bench::stencil_kernel_options());
}

auto make_heat() {
  return kiln::stencil("heat3d", [](kiln::Window<double, 3> u) {
    return u(0, 0, 0) + kHeatC * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) + u(0, 0, 1) -
                                  6.0 * u(0, 0, 0));
  }, kiln::border(kiln::Border::nearest) | bench::stencil_kernel_options());
}

auto make_smooth() {
  return kiln::stencil("smooth1d", [](kiln::Window<double, 1> a) { return 0.25 * a(-1) + 0.5 * a(0) + 0.25 * a(1); },
                       kiln::border(kiln::Border::nearest) | bench::stencil_kernel_options());
}

/// The seed's Ramba "general stencil": loops over the offsets with run-time weights.
auto make_conv() {
  return kiln::stencil("conv2d", [](kiln::Window<double, 2> a, kiln::Array<double, 2> w) {
    kiln::Double acc = 0.0;
    kiln::range(-2, 3, [&](kiln::Int di) {
      kiln::range(-2, 3, [&](kiln::Int dj) { acc += w(di + 2, dj + 2) * a(di, dj); });
    });
    return acc;
  }, kiln::neighborhood({-2, 2}, {-2, 2}) | kiln::border(kiln::Border::nearest) | bench::stencil_kernel_options());
}

/// Element counts scale with --n (2*10^7 by default).
double scale() { return static_cast<double>(bench::problem_size()) / 2e7; }
long side(double base, int dims) { return std::max(5L, std::lround(base * std::pow(scale(), 1.0 / dims))); }

kiln::NDArray<double> random_array(std::vector<std::int64_t> shape, unsigned seed) {
  kiln::NDArray<double> a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  for (std::int64_t k = 0; k < a.size(); ++k) a.data()[k] = d(rng);
  return a;
}

std::string compare(const kiln::NDArray<double>& got, const kiln::NDArray<double>& want, double tol) {
  for (std::int64_t k = 0; k < got.size(); ++k) {
    const double g = got.data()[k], w = want.data()[k];
    if (!(std::fabs(g - w) <= tol * std::fmax(1.0, std::fabs(w))))
      return "element " + std::to_string(k) + ": " + std::to_string(g) + " vs " + std::to_string(w);
  }
  return "";
}

/// The shared shape of the rows: `in` -> `out`, written by kiln and by the reference in the timed runs (see
/// Case::verify), and `out_ref`, the reference's result for the check; pre-filled alike so that skipped
/// borders compare equal.
struct Grids {
  kiln::NDArray<double> in, out, out_ref, tiny, tiny_out;
};

template <class S>
bench::Case stencil_case(std::string name, std::vector<std::int64_t> shape, double reads_writes, S st,
                         std::function<void(const double* in, double* out)> ref, std::function<S()> remake) {
  auto g = std::make_shared<Grids>();
  auto k = std::make_shared<S>(st);
  bench::Case c;
  c.name = std::move(name);
  double n = 1;
  for (auto e : shape) n *= static_cast<double>(e);
  c.bytes = reads_writes * 8.0 * n;
  c.setup = [g, shape] {
    g->in = random_array(shape, 1);
    g->out = random_array(shape, 2);
    g->out_ref = random_array(shape, 2);
    g->tiny = random_array(std::vector<std::int64_t>(shape.size(), 5), 3);
    g->tiny_out = random_array(std::vector<std::int64_t>(shape.size(), 5), 4);
  };
  c.kiln = [g, k] { k->into(g->out, g->in); };
  c.ref = [g, ref] { ref(g->in.data(), g->out.data()); };
  c.verify = [g, k, ref] {
    k->into(g->out, g->in);
    ref(g->in.data(), g->out_ref.data());
  };
  c.check = [g] { return compare(g->out, g->out_ref, 1e-12); };
  c.teardown = [g] { g->in = g->out = g->out_ref = {}; };  // the tiny ones serve empty_call, which runs after
  c.cold_compile = [remake, rank = shape.size()] {
    S fresh = remake();
    kiln::NDArray<double> x = random_array(std::vector<std::int64_t>(rank, 5), 5), y(std::vector<std::int64_t>(rank, 5));
    fresh.into(y, x);
  };
  // The smallest input the neighbourhood allows (an empty one fails the size check): dispatch and a few elements.
  c.empty_call = [g, k] { k->into(g->tiny_out, g->tiny); };
  return c;
}

}  // namespace

KILN_BENCH(jacobi2d_case) {
  const long n = side(4096, 2);
  return stencil_case<decltype(make_jacobi())>("jacobi2d", {n, n}, 2.0, make_jacobi(), [n](const double* in, double* out) {
    ref::jacobi2d(in, out, n, n, kiln::num_threads());
  }, [] { return make_jacobi(); });
}

KILN_BENCH(heat3d_case) {
  const long n = side(256, 3);
  return stencil_case<decltype(make_heat())>("heat3d", {n, n, n}, 2.0, make_heat(), [n](const double* in, double* out) {
    ref::heat3d(in, out, n, n, n, kHeatC, kiln::num_threads());
  }, [] { return make_heat(); });
}

KILN_BENCH(smooth1d_case) {
  const long n = std::max(5L, static_cast<long>(bench::problem_size()));
  return stencil_case<decltype(make_smooth())>("smooth1d", {n}, 2.0, make_smooth(), [n](const double* in, double* out) {
    ref::smooth1d(in, out, n, kiln::num_threads());
  }, [] { return make_smooth(); });
}

KILN_BENCH(conv2d_case) {
  // Weights are an argument: the case's kiln call passes them, so it does not fit stencil_case's `into(out, in)`.
  struct State {
    Grids g;
    kiln::NDArray<double> w = random_array({5, 5}, 9);
    decltype(make_conv()) k = make_conv();
  };
  auto s = std::make_shared<State>();
  const long n = side(4096, 2);
  bench::Case c;
  c.name = "conv2d";
  c.bytes = 2.0 * 8.0 * static_cast<double>(n) * static_cast<double>(n);
  c.setup = [s, n] {
    s->g.in = random_array({n, n}, 1);
    s->g.out = kiln::NDArray<double>({n, n});
    s->g.out_ref = kiln::NDArray<double>({n, n});
    s->g.tiny = random_array({5, 5}, 3);
    s->g.tiny_out = kiln::NDArray<double>({5, 5});
  };
  c.kiln = [s] { s->k.into(s->g.out, s->g.in, s->w); };
  c.ref = [s, n] { ref::conv2d_5x5(s->g.in.data(), s->w.data(), s->g.out.data(), n, n, kiln::num_threads()); };
  c.verify = [s, n] {
    s->k.into(s->g.out, s->g.in, s->w);
    ref::conv2d_5x5(s->g.in.data(), s->w.data(), s->g.out_ref.data(), n, n, kiln::num_threads());
  };
  c.check = [s] { return compare(s->g.out, s->g.out_ref, 1e-12); };
  c.teardown = [s] { s->g.in = s->g.out = s->g.out_ref = {}; };
  c.cold_compile = [s] {
    auto fresh = make_conv();
    kiln::NDArray<double> x = random_array({5, 5}, 5), y({5, 5});
    fresh.into(y, x, s->w);
  };
  c.empty_call = [s] { s->k.into(s->g.tiny_out, s->g.tiny, s->w); };
  return c;
}
