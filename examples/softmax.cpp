// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// softmax(a) = exp(a - max(a)) / sum(exp(a - max(a))), written with array operations as in NumPy. kiln
// fuses it into three parallel loops (the max; exp with the sum; the scaling) that allocate only the result.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "example.hpp"

/// How many times `what` starts a line of the lowered IR (parallel regions, allocations).
static int count_lines(const std::string& ir, const std::string& what) {
  int n = 0;
  for (size_t p = ir.find(what); p != std::string::npos; p = ir.find(what, p + 1))
    if (p == 0 || ir[p - 1] == ' ') ++n;
  return n;
}

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 20'000'000);
  kiln::Options opts;
  opts.target = args.target;
  auto softmax = kiln::jit("softmax", [](kiln::Array<double, 1> a) {
    auto e = kiln::exp(a - kiln::max(a));
    return e / kiln::sum(e);
  }, opts);

  const std::size_t n = static_cast<std::size_t>(args.n);
  std::vector<double> a(n);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> dist(-20.0, 20.0);
  for (auto& v : a) v = dist(rng);

  kiln::NDArray<double> got, warm;
  const double first_s = example::seconds([&] { got = softmax(a); });
  const double warm_s = example::seconds([&] { warm = softmax(a); });
  std::vector<double> want(n);
  const double ref_s = example::seconds([&] {
    const double m = *std::max_element(a.begin(), a.end());
    // The sum in long double: a running double sum of 2 * 10^7 terms drifts by about 1e-11 relative (kiln's
    // blocked sum is within 1e-14), more than the per-element tolerance below allows.
    long double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += want[i] = std::exp(a[i] - m);
    for (auto& v : want) v = static_cast<double>(v / s);
  });

  // Each element within a few ulps (the sum is blocked in parallel and exp may come from a vector library).
  double max_rel = 0, total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    max_rel = std::fmax(max_rel, std::fabs(got[static_cast<std::int64_t>(i)] - want[i]) / std::fmax(want[i], 1e-300));
    total += got[static_cast<std::int64_t>(i)];
  }
  std::printf("softmax  max relative error per element %.3g over %zu elements\n", max_rel, n);
  int rc = example::verdict("softmax", total, 1.0, 1e-9, first_s, warm_s, ref_s);
  if (max_rel > 1e-12 || got.to_vector() != warm.to_vector()) rc = 1;
  const std::string ir = softmax.lowered_ir();
  std::printf("softmax  %d parallel regions, %d allocation(s) after the passes\n", count_lines(ir, "parfor"),
              count_lines(ir, "alloc"));
  return rc;
}
