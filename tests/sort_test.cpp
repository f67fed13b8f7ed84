// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::sort and kiln::argsort (issue #19) against std::stable_sort with NumPy's order written out here, on the
// interpreter and on the CPU backend with 1, 2 and 3 threads: every key type; sizes 0, 1, primes, powers of
// two and their neighbours, and a million; NaN (several payloads, both signs), -0.0 and +0.0, infinities;
// many duplicates and all-equal rows (argsort keeps index order); rows of rank 2 to 4 arrays of length 0, 1
// and primes; sorts inside array expressions and of views; the misuse that is a TraceError; the IR node.
#include <algorithm>
#include <numeric>
#include <type_traits>

#include "ir/builder.hpp"
#include "ir/serialize.hpp"
#include "tests/array_test_util.hpp"
#include "tests/sort_test_util.hpp"

namespace kiln {
namespace {

using namespace kiln::testing;
using namespace kiln::sorttest;

struct Target {
  Options options;
  int threads;  ///< 0: the interpreter
  std::string name() const { return threads ? "cpu/" + std::to_string(threads) + " threads" : "interpreter"; }
};

std::vector<Target> targets() {
  std::vector<Target> t = {{interp(), 0}};
  if (has_cpu_backend())
    for (int n : {1, 2, 3}) t.push_back({cpu(), n});
  return t;
}

/// Resets the thread count when a test ends.
struct Threads {
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(0); }
};

template <class T, int Rank>
auto sort_kernel(const Options& o) {
  return jit("sort_both", [](Array<T, Rank> x) { return std::tuple{kiln::sort(x), kiln::argsort(x)}; }, o);
}

template <class T>
void check_type(const char* type_name) {
  const std::int64_t sizes[] = {0, 1, 2, 3, 7, 13, 61, 64, 65, 101, 255, 256, 257, 1009, 65537, 131101};
  for (const Target& t : targets()) {
    Threads threads(t.threads);
    auto k = sort_kernel<T, 1>(t.options);
    for (std::int64_t n : sizes)
      for (int distinct : {3, 1 << 20}) {
        const auto in = array_of(keys<T>(n, static_cast<std::uint64_t>(n * 7 + distinct), distinct), {n});
        auto [s, p] = k(in);
        expect_sorted(in, s, p, std::string(type_name) + " " + t.name() + " n=" + std::to_string(n) +
                                    " distinct=" + std::to_string(distinct));
      }
  }
}

TEST(Sort, BoolKeys) { check_type<bool>("bool"); }
TEST(Sort, Int32Keys) { check_type<std::int32_t>("i32"); }
TEST(Sort, Int64Keys) { check_type<std::int64_t>("i64"); }
TEST(Sort, Float32KeysWithNaNZerosAndInfinities) { check_type<float>("f32"); }
TEST(Sort, Float64KeysWithNaNZerosAndInfinities) { check_type<double>("f64"); }

TEST(Sort, TypesOfTheResults) {
  static_assert(std::is_same_v<decltype(kiln::sort(std::declval<Array<float, 2>>())), Array<float, 2>>);
  static_assert(std::is_same_v<decltype(kiln::argsort(std::declval<Array<bool, 1>>())), Array<std::int64_t, 1>>);
  static_assert(std::is_same_v<decltype(kiln::argsort(std::declval<Array<double, 3>>())), Array<std::int64_t, 3>>);
}

// A million keys: several threads share one row (the parallel radix passes), and the answer is the same for
// 1, 2 and 3 threads and the interpreter's.
TEST(Sort, AMillionKeysOnEveryThreadCount) {
  const std::int64_t n = 1'000'003;
  const auto f = array_of(keys<double>(n, 11, 1 << 30), {n});
  const auto d = array_of(keys<std::int32_t>(n, 12, 1000), {n});
  const auto want_f = ref_argsort(f), want_d = ref_argsort(d);
  for (const Target& t : targets()) {
    Threads threads(t.threads);
    auto [fs, fp] = sort_kernel<double, 1>(t.options)(f);
    expect_sorted(f, fs, fp, "f64 " + t.name(), want_f);
    auto [ds, dp] = sort_kernel<std::int32_t, 1>(t.options)(d);
    expect_sorted(d, ds, dp, "i32 " + t.name(), want_d);
  }
}

// Equal keys keep their order: all-equal rows, all-NaN rows, zeros of both signs, and two values interleaved.
TEST(Sort, ArgsortOfEqualKeysKeepsIndexOrder) {
  const std::int64_t n = 300'007;
  std::vector<double> zeros(static_cast<size_t>(n)), nans(static_cast<size_t>(n)), two(static_cast<size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    zeros[static_cast<size_t>(i)] = (i % 3) ? 0.0 : -0.0;
    nans[static_cast<size_t>(i)] = (i % 2) ? std::numeric_limits<double>::quiet_NaN() : -std::numeric_limits<double>::quiet_NaN();
    two[static_cast<size_t>(i)] = (i % 5) ? 2.5 : -7.0;
  }
  for (const Target& t : targets()) {
    Threads threads(t.threads);
    auto k = sort_kernel<double, 1>(t.options);
    for (const auto* v : {&zeros, &nans, &two}) {
      const auto in = array_of(*v, {n});
      auto [s, p] = k(in);
      expect_sorted(in, s, p, "equal keys " + t.name());
    }
  }
}

// Each row on its own: lengths 0, 1 and primes; many short rows (a row per thread), few long ones (a team
// per row: 140009 keys are two threads' worth), ranks 2 to 4.
TEST(Sort, RowsAlongTheLastAxis) {
  const std::vector<std::vector<std::int64_t>> shapes2 = {{0, 5}, {5, 0}, {3, 1}, {4, 13}, {7, 101}, {100, 1009},
                                                          {2, 140009}};
  const std::vector<Target> all = targets();
  using K2 = decltype(sort_kernel<double, 2>(all[0].options));
  using K2i = decltype(sort_kernel<std::int64_t, 2>(all[0].options));
  std::vector<K2> k2;
  std::vector<K2i> k2i;
  for (const Target& t : all) k2.push_back(sort_kernel<double, 2>(t.options)), k2i.push_back(sort_kernel<std::int64_t, 2>(t.options));
  for (const auto& sh : shapes2) {
    const std::int64_t size = sh[0] * sh[1];
    const std::string shape = std::to_string(sh[0]) + "x" + std::to_string(sh[1]);
    const auto in = array_of(keys<double>(size, static_cast<std::uint64_t>(size + 3), 50), sh);
    const auto ini = array_of(keys<std::int64_t>(size, static_cast<std::uint64_t>(size + 5), 1 << 30), sh);
    const auto want = ref_argsort(in), want_i = ref_argsort(ini);
    for (size_t k = 0; k < all.size(); ++k) {
      Threads threads(all[k].threads);
      auto [s, p] = k2[k](in);
      expect_sorted(in, s, p, "f64 rows " + all[k].name() + " " + shape, want);
      auto [si, pi] = k2i[k](ini);
      expect_sorted(ini, si, pi, "i64 rows " + all[k].name() + " " + shape, want_i);
    }
  }
  for (const Target& t : all) {
    Threads threads(t.threads);
    auto k3 = sort_kernel<float, 3>(t.options);
    const auto in3 = array_of(keys<float>(2 * 3 * 17, 21, 7), {2, 3, 17});
    auto [s3, p3] = k3(in3);
    expect_sorted(in3, s3, p3, "f32 rank 3 " + t.name());
    auto k4 = sort_kernel<std::int32_t, 4>(t.options);
    const auto in4 = array_of(keys<std::int32_t>(2 * 2 * 3 * 67, 22, 9), {2, 2, 3, 67});
    auto [s4, p4] = k4(in4);
    expect_sorted(in4, s4, p4, "i32 rank 4 " + t.name());
  }
}

// The results are arrays like any other: in expressions, reductions, of expressions and of views.
TEST(Sort, ResultsAndOperandsAreArrayExpressions) {
  for (const Target& t : targets()) {
    Threads threads(t.threads);
    auto k = jit("sort_exprs", [](Array<double, 1> x, Array<double, 2> m) {
      auto s = kiln::sort(x * -1.0) + 1.0;                     // an expression sorted, then used
      auto top = kiln::sum(kiln::sort(x)(kiln::range(0, 3)));  // a view of a sorted array
      auto cols = kiln::sort(m.T());                           // the columns of m (rows of the view)
      auto pos = kiln::cast<double>(kiln::argsort(m)) * 2.0;
      return std::tuple{s, top, cols, pos};
    }, t.options);
    const std::vector<double> x = {3.0, -1.0, kNaN, 2.0, -0.0, 0.0, kInf, -kInf, 2.0};
    const NDArray<double> m = random_matrix(5, 4, 31, true);
    auto [s, top, cols, pos] = k(x, m);
    std::vector<double> neg;
    for (double v : x) neg.push_back(v * -1.0);
    std::stable_sort(neg.begin(), neg.end(), ref_less<double>);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(same(s[static_cast<std::int64_t>(i)], neg[i] + 1.0, true)) << t.name() << " " << i;
    EXPECT_EQ(top, -kInf) << t.name();  // -inf + -1 + -0
    ASSERT_EQ(cols.shape(), (std::vector<std::int64_t>{4, 5}));
    for (std::int64_t j = 0; j < 4; ++j) {
      std::vector<double> col;
      for (std::int64_t i = 0; i < 5; ++i) col.push_back(m(i, j));
      std::stable_sort(col.begin(), col.end(), ref_less<double>);
      for (std::int64_t i = 0; i < 5; ++i) EXPECT_TRUE(same(cols(j, i), col[static_cast<size_t>(i)], true)) << t.name();
    }
    const auto want = ref_argsort(m.data(), 5, 4);
    for (std::int64_t k2 = 0; k2 < 20; ++k2) EXPECT_EQ(pos.data()[k2], 2.0 * static_cast<double>(want[static_cast<size_t>(k2)])) << t.name();
  }
}

// Sorts in a sequential time loop (a new array per iteration, written back into one), also in bounds-checked mode.
TEST(Sort, InATimeLoopAndInBoundsCheckedMode) {
  std::vector<Target> all = targets();
  if (has_cpu_backend()) {
    Options checked = cpu();
    checked.boundscheck = true;
    all.push_back({checked, 2});
  }
  // No NaN here: the sign a product gives a NaN is left open by IEEE 754 (the negation below is a product).
  std::vector<double> x = keys<double>(1009, 5, 40);
  for (double& v : x)
    if (std::isnan(v)) v = 0.5;
  for (std::int64_t steps : {0, 1, 4}) {
    std::vector<double> want = x;
    std::stable_sort(want.begin(), want.end(), ref_less<double>);
    for (std::int64_t k = 0; k < steps; ++k) {
      for (double& v : want) v = -v;
      std::stable_sort(want.begin(), want.end(), ref_less<double>);
    }
    for (const Target& t : all) {
      Threads threads(t.threads);
      auto k = jit("sort_loop", [](Array<double, 1> x, Int steps) {
        auto y = kiln::sort(x);
        kiln::range(steps, [&](Int) { y(kiln::all) = kiln::sort(y * -1.0); });
        return y;
      }, t.options);
      NDArray<double> got = k(x, steps);
      ASSERT_EQ(got.size(), static_cast<std::int64_t>(want.size()));
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(double)), 0)
          << t.name() << (t.options.boundscheck ? " (bounds-checked)" : "") << " steps=" << steps;
    }
  }
}

// Results written into parameters (which kiln may compute straight into the destination), and sorts nobody
// reads (dead code goes, what a sort needs stays).
TEST(Sort, IntoParametersAndUnread) {
  for (const Target& t : targets()) {
    Threads threads(t.threads);
    auto k = jit("sort_into", [](Array<double, 2> x, Array<std::int64_t, 2> order, Array<double, 2> sorted) {
      order(kiln::all, kiln::all) = kiln::argsort(x);
      sorted(kiln::all, kiln::all) = kiln::sort(x);
      auto unused_order = kiln::argsort(x * 2.0);
      auto unused_sort = kiln::sort(x);
      return kiln::sum(x);
    }, t.options);
    const NDArray<double> x = random_matrix(6, 37, 41, true);
    NDArray<std::int64_t> order({6, 37});
    NDArray<double> sorted({6, 37});
    k(x, order, sorted);
    expect_sorted(x, sorted, order, "into parameters " + t.name());
  }
}

// `o(kiln::all) = kiln::sort(x)` into a 1-d parameter (compact by its signature): the copy of x goes straight
// into o, which is sorted in place (one copy, not two), and argsort's positions likewise. A 2-d parameter's
// rows may be strided, so its sort keeps the kernel's own array; so does `x = sort(x)` (the copy would read
// what it writes). A
// wrong shape still fails before anything is written, and overlapping views of one buffer give the answer
// of distinct arrays.
TEST(Sort, IsWrittenStraightIntoA1dParameter) {
  for (const Target& t : targets()) {
    Threads threads(t.threads);
    auto k = jit("sort_into_1d", [](Array<double, 1> x, Array<double, 1> out, Array<std::int64_t, 1> order) {
      out(kiln::all) = kiln::sort(x);
      order(kiln::all) = kiln::argsort(x);
    }, t.options);
    auto rows = jit("sort_into_2d", [](Array<double, 2> x, Array<double, 2> out) {
      out(kiln::all, kiln::all) = kiln::sort(x);
    }, t.options);
    auto self = jit("sort_self", [](Array<double, 1> x) { x(kiln::all) = kiln::sort(x); }, t.options);
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{257}, std::int64_t{65537}}) {
      const auto in = array_of(keys<double>(n, static_cast<std::uint64_t>(n), 1 << 20), {n});
      NDArray<double> out({n});
      NDArray<std::int64_t> order({n});
      k(in, out, order);
      expect_sorted(in, out, order, "into 1-d parameters " + t.name() + " n=" + std::to_string(n));
      NDArray<double> in_place({n});
      std::copy(in.data(), in.data() + n, in_place.data());
      self(in_place);
      expect_sorted(in, in_place, order, "x = sort(x) " + t.name());
    }
    // (Without the source file at hand, parameters are named arg0, arg1, ...)
    EXPECT_CONTAINS(k.diagnostics(), "wrote sort straight into ");
    EXPECT_CONTAINS(k.diagnostics(), "wrote argsort straight into ");
    EXPECT_EQ(self.diagnostics().find("straight into"), std::string::npos) << t.name();
    const auto m = array_of(keys<double>(3 * 41, 9, 1 << 20), {3, 41});
    NDArray<double> sorted_rows({3, 41});
    rows(m, sorted_rows);
    expect_sorted(m, sorted_rows, array_of(ref_argsort(m), {3, 41}), "into a 2-d parameter " + t.name());
    EXPECT_EQ(rows.diagnostics().find("straight into"), std::string::npos) << t.name();
    // A destination of another shape: the copy's ShapeError, raised before anything is written.
    NDArray<double> small({4});
    NDArray<std::int64_t> order4({4});
    std::fill(small.data(), small.data() + 4, 7.0);
    EXPECT_CONTAINS(error_of<ShapeError>([&] { k(array_of(keys<double>(5, 1, 9), {5}), small, order4); }), "] = sort(");
    for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(small.data()[i], 7.0) << t.name();
    // x and out views of one buffer, offset by one element: sorted as if they were distinct arrays.
    const std::int64_t n = 1000;
    std::vector<double> buf = keys<double>(n + 1, 3, 1 << 20);
    const auto before = array_of(std::vector<double>(buf.begin(), buf.begin() + n), {n});
    NDArray<std::int64_t> shifted_order({n});
    k(ArrayRef<const double>(buf.data(), {n}), ArrayRef<double>(buf.data() + 1, {n}), shifted_order);
    const auto after = array_of(std::vector<double>(buf.begin() + 1, buf.end()), {n});
    expect_sorted(before, after, shifted_order, "overlapping views " + t.name());
  }
}

TEST(Sort, InsideAPrangeIsATraceError) {
  auto k = jit("sort_in_prange", [](Array<double, 2> m, Array<double, 2> out) {
    prange(m.shape(0), [&](Int i) { out(i, all) = kiln::sort(m(i, all)); });
  }, interp());
  NDArray<double> m({2, 3}), out({2, 3});
  const std::string e = error_of<TraceError>([&] { k(m, out); });
  EXPECT_CONTAINS(e, "inside a prange body");
  EXPECT_CONTAINS(e, "sort(");
}

// The statement prints, serializes and reads back.
TEST(Sort, StatementPrintsAndSerializes) {
  using namespace kiln::ir;
  const Var keys = make_var("keys", Type::array(DType::F32, 2, true), VarKind::Local);
  const Var pos = make_var("order", Type::array(DType::I64, 2, true), VarKind::Local);
  Function f;
  f.name = "sorted";
  f.body = make_block({make_allocate(keys, {make_i64(3), make_i64(4)}), make_allocate(pos, {make_i64(3), make_i64(4)}),
                       make_sort(keys, pos, "argsort(x) at a.cpp:1")});
  f.result_array = pos;
  const std::string text = to_string(f);
  EXPECT_CONTAINS(text, "sort rows of keys with positions order");
  EXPECT_EQ(to_string(deserialize(serialize(f))), text);
  EXPECT_TRUE(verify(f).empty()) << (verify(f).empty() ? "" : verify(f)[0]);
  // Positions must be i64 of the keys' rank.
  const Var bad = make_var("bad", Type::array(DType::I32, 2, true), VarKind::Local);
  EXPECT_THROW(make_sort(keys, bad), IRError);
}

}  // namespace
}  // namespace kiln
