// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Prefix scans (kiln/scan.hpp): cumsum, cumprod, cummin, cummax and kiln::scan, inclusive and exclusive, flat
// and along every axis of ranks 1..4, for int32, int64, float32 and float64, on the interpreter and the CPU
// backend, bitwise against a reference written from ir/semantics.hpp's definition (blocks of kScanBlock) and
// against NumPy's sequential order where the two must agree (integers, min/max, one block); NaN, +-0 and
// +-inf; the same bits for 1, 2 and 3 threads; errors; what fusion does with a scan's neighbours.
#include <bit>
#include <cstring>
#include <type_traits>

#include "ir/lanes.hpp"
#include "ir/semantics.hpp"
#include "tests/array_test_util.hpp"

namespace kiln {
namespace {

using namespace kiln::testing;

constexpr std::int64_t kB = ir::sem::kScanBlock;

std::vector<Options> targets() {
  std::vector<Options> t = {interp()};
  if (has_cpu_backend()) t.push_back(cpu());
  return t;
}
const char* name_of(const Options& o) { return o.target == Target::cpu ? "cpu" : "interpreter"; }

// ---- the reference --------------------------------------------------------------------------------------------

const ReduceOp kOps[] = {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max};

template <class R>
R combine(ReduceOp op, R a, R b) {
  if constexpr (std::is_integral_v<R>) {
    using U = std::make_unsigned_t<R>;
    switch (op) {
      case ReduceOp::Add: return static_cast<R>(static_cast<U>(a) + static_cast<U>(b));  // wraps
      case ReduceOp::Mul: return static_cast<R>(static_cast<U>(a) * static_cast<U>(b));
      case ReduceOp::Min: return a < b ? a : b;
      default: return a > b ? a : b;
    }
  } else {
    switch (op) {
      case ReduceOp::Add: return a + b;
      case ReduceOp::Mul: return a * b;
      case ReduceOp::Min:  // IEEE minimum: NaN propagates, -0 < +0
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<R>::quiet_NaN();
        if (a == b) return std::signbit(a) ? a : b;
        return a < b ? a : b;
      default:
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<R>::quiet_NaN();
        if (a == b) return std::signbit(a) ? b : a;
        return a > b ? a : b;
    }
  }
}

template <class R>
R identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Add: return R(0);
    case ReduceOp::Mul: return R(1);
    case ReduceOp::Min:
      return std::is_integral_v<R> ? std::numeric_limits<R>::max() : std::numeric_limits<R>::infinity();
    default: return std::is_integral_v<R> ? std::numeric_limits<R>::min() : -std::numeric_limits<R>::infinity();
  }
}

/// One line of n elements (stride apart) scanned: `blocked` in kiln's defined order (ir/semantics.hpp: blocks
/// of kScanBlock, each from its first element; block b > 0 takes carry op value, the carries being the block
/// totals folded in groups of kScanBlock, each group after the first combined with the carry before it),
/// otherwise NumPy's sequential loop. `group` (only to show that the grouping matters) sets the groups' size.
template <class R, class T>
void scan_line(const T* x, R* out, std::int64_t n, std::int64_t stride, ReduceOp op, bool exclusive, bool blocked,
               std::int64_t group = kB) {
  const std::int64_t block = blocked ? kB : std::max<std::int64_t>(n, 1);
  R carry{}, group_fold{}, group_carry{};
  for (std::int64_t lo = 0, b = 0; lo < n; lo += block, ++b) {
    const std::int64_t hi = std::min(lo + block, n);
    const bool has_carry = lo > 0;
    auto with = [&](R v) { return has_carry ? combine(op, carry, v) : v; };
    R acc = static_cast<R>(x[lo * stride]);
    if (exclusive) {
      out[lo * stride] = has_carry ? carry : identity<R>(op);
      for (std::int64_t k = lo + 1; k < hi; ++k) {
        out[k * stride] = with(acc);
        acc = combine(op, acc, static_cast<R>(x[k * stride]));
      }
    } else {
      out[lo * stride] = with(acc);
      for (std::int64_t k = lo + 1; k < hi; ++k) {
        acc = combine(op, acc, static_cast<R>(x[k * stride]));
        out[k * stride] = with(acc);
      }
    }
    // The next block's carry: this block's total folded into its group's (a group of kB totals starts from
    // its first), after the first group combined with the carry the previous group ended with.
    group_fold = b % group == 0 ? acc : combine(op, group_fold, acc);
    carry = b < group ? group_fold : combine(op, group_carry, group_fold);
    if (b % group == group - 1) group_carry = carry;
  }
}

/// The scan of the row-major array x of `shape` along `axis` (-1: flattened).
template <class R, class T>
std::vector<R> reference(const std::vector<T>& x, const std::vector<std::int64_t>& shape, int axis, ReduceOp op,
                         bool exclusive, bool blocked = true, std::int64_t group = kB) {
  std::vector<R> out(x.size());
  if (axis < 0) {
    scan_line(x.data(), out.data(), static_cast<std::int64_t>(x.size()), 1, op, exclusive, blocked, group);
    return out;
  }
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const std::int64_t n = shape[static_cast<size_t>(axis)];
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t base = o * n * inner + i;
      scan_line(x.data() + base, out.data() + base, n, inner, op, exclusive, blocked, group);
    }
  return out;
}

/// Bit for bit, any NaN equal to any NaN (which NaN an operation on NaNs gives is not specified).
template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
void expect_bits(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!same_bits(got[i], want[i]) && shown++ < 5)
      ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << ", want " << want[i];
}

/// Inputs of type T: small integers (products stay interesting; int32 products also wrap), or floats with
/// NaN, +-inf and +-0 sprinkled in (`specials`).
template <class T>
std::vector<T> inputs(size_t n, std::uint64_t seed, bool specials) {
  std::vector<T> v(n);
  if constexpr (std::is_integral_v<T>) {
    std::mt19937_64 rng(seed);
    for (auto& x : v) x = static_cast<T>(static_cast<std::int64_t>(rng() % 7) - 3);
    if (n > 2) v[n / 2] = std::numeric_limits<T>::max();  // sums wrap
  } else {
    const auto d = random_values(n, seed, 0.5, 1.5, specials);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>((i % 2 ? -1 : 1) * d[i]);
    if (specials && n > 3) v[1] = T(-0.0), v[2] = T(-0.0);
  }
  return v;
}

// ---- result types ---------------------------------------------------------------------------------------------

TEST(ScanTypes, ResultTypesFollowTheReductionRules) {
  using I1 = Array<std::int32_t, 1>;
  static_assert(std::is_same_v<decltype(kiln::cumsum(std::declval<I1>())), Array<std::int64_t, 1>>);
  static_assert(std::is_same_v<decltype(kiln::cumprod(std::declval<Array<bool, 1>>())), Array<std::int64_t, 1>>);
  static_assert(std::is_same_v<decltype(kiln::cummin(std::declval<I1>())), I1>);
  static_assert(std::is_same_v<decltype(kiln::cummax(std::declval<Array<bool, 2>>(), 1)), Array<bool, 2>>);
  static_assert(std::is_same_v<decltype(kiln::cumsum(std::declval<Array<float, 3>>(), 2)), Array<float, 3>>);
  static_assert(std::is_same_v<decltype(kiln::cumsum(std::declval<Array<double, 3>>())), Array<double, 1>>);
  static_assert(std::is_same_v<decltype(kiln::scan(std::declval<I1>(), ReduceOp::Add)), I1>);
  static_assert(std::is_same_v<decltype(kiln::scan(std::declval<Array<std::int64_t, 4>>(), ReduceOp::Max, -1,
                                                   kiln::exclusive)),
                               Array<std::int64_t, 4>>);
}

// ---- every operator, kind, axis, rank and type against the reference -----------------------------------------

/// Shapes of each rank with extents 0, 1, primes, and along some axis more than one block.
std::vector<std::vector<std::int64_t>> shapes_of_rank(int rank) {
  switch (rank) {
    case 1: return {{0}, {1}, {7}, {kB}, {kB + 1}, {3 * kB + 5}};
    // Past one block with few rows (three passes) and with 64 rows or more (one pass per row); down 91 columns
    // the CPU backend runs groups of several vectors of lanes, then single vectors, then scalar iterations.
    case 2: return {{0, 5}, {1, 1}, {3, 13}, {2 * kB + 3, 3}, {2, kB + 7}, {kB + 5, 65}, {kB + 5, 91}, {67, kB + 3}};
    case 3: return {{2, 0, 3}, {3, 5, 7}, {kB + 2, 1, 2}};
    default: return {{2, 3, 1, 5}, {1, 2, kB + 1, 2}};
  }
}

/// Runs `k` (cumsum/cumprod/cummin/cummax inclusive, in their result types, then kiln::scan exclusive with each
/// operator, in T) along `axis` (-1: flat) of rank-R arrays of T against the reference.
template <class T, int R, class K>
void check_kernel(K& k, const Options& o, int axis) {
  using S = detail::sum_t<T>;
  std::uint64_t seed = 1;
  for (const auto& shape : shapes_of_rank(R)) {
    std::int64_t size = 1;
    for (auto e : shape) size *= e;
    NDArray<T> x(shape);
    const std::vector<T> v = inputs<T>(static_cast<size_t>(size), seed++, true);
    std::copy(v.begin(), v.end(), x.data());
    auto [s, p, mn, mx, es, ep, emn, emx] = k(x);
    const std::string what = std::string(name_of(o)) + " " + typeid(T).name() + " rank " + std::to_string(R) +
                             " axis " + std::to_string(axis) + " shape " + ::testing::PrintToString(shape);
    const std::vector<std::int64_t> want_shape = axis < 0 ? std::vector<std::int64_t>{size} : shape;
    EXPECT_EQ(s.shape(), want_shape) << what;
    EXPECT_EQ(es.shape(), want_shape) << what;
    expect_bits(s.to_vector(), reference<S>(v, shape, axis, ReduceOp::Add, false), what + " cumsum");
    expect_bits(p.to_vector(), reference<S>(v, shape, axis, ReduceOp::Mul, false), what + " cumprod");
    expect_bits(mn.to_vector(), reference<T>(v, shape, axis, ReduceOp::Min, false), what + " cummin");
    expect_bits(mx.to_vector(), reference<T>(v, shape, axis, ReduceOp::Max, false), what + " cummax");
    expect_bits(es.to_vector(), reference<T>(v, shape, axis, ReduceOp::Add, true), what + " exclusive add");
    expect_bits(ep.to_vector(), reference<T>(v, shape, axis, ReduceOp::Mul, true), what + " exclusive mul");
    expect_bits(emn.to_vector(), reference<T>(v, shape, axis, ReduceOp::Min, true), what + " exclusive min");
    expect_bits(emx.to_vector(), reference<T>(v, shape, axis, ReduceOp::Max, true), what + " exclusive max");
    // NumPy's sequential order gives the same bits wherever the order cannot matter: integers (wrapping is
    // associative), min/max, and an axis of one block.
    const bool one_block = (axis < 0 ? size : shape[static_cast<size_t>(axis)]) <= kB;
    if (std::is_integral_v<T> || one_block)
      expect_bits(s.to_vector(), reference<S>(v, shape, axis, ReduceOp::Add, false, false), what + " np.cumsum");
    expect_bits(mx.to_vector(), reference<T>(v, shape, axis, ReduceOp::Max, false, false), what + " np.maximum.accumulate");
  }
}

template <class T, int R>
void check_axis(const Options& o, int axis) {
  if (axis < 0) {
    auto k = jit("scan_flat", [](Array<T, R> x) {
      return std::tuple{kiln::cumsum(x), kiln::cumprod(x), kiln::cummin(x), kiln::cummax(x),
                        kiln::scan(x, ReduceOp::Add, kiln::exclusive), kiln::scan(x, ReduceOp::Mul, kiln::exclusive),
                        kiln::scan(x, ReduceOp::Min, kiln::exclusive), kiln::scan(x, ReduceOp::Max, kiln::exclusive)};
    }, o);
    check_kernel<T, R>(k, o, axis);
  } else {
    auto k = jit("scan_axis", [axis](Array<T, R> x) {
      return std::tuple{kiln::cumsum(x, axis), kiln::cumprod(x, axis), kiln::cummin(x, axis), kiln::cummax(x, axis),
                        kiln::scan(x, ReduceOp::Add, axis, kiln::exclusive),
                        kiln::scan(x, ReduceOp::Mul, axis, kiln::exclusive),
                        kiln::scan(x, ReduceOp::Min, axis, kiln::exclusive),
                        kiln::scan(x, ReduceOp::Max, axis, kiln::exclusive)};
    }, o);
    check_kernel<T, R>(k, o, axis);
  }
}

template <class T, int R>
void check_rank(const Options& o) {
  check_axis<T, R>(o, -1);
  for (int axis = 0; axis < R; ++axis) check_axis<T, R>(o, axis);
}

/// Every rank up to `max_rank` (each kernel costs a compilation: float64 goes to rank 4, the other types to
/// rank 2; ranks 3 and 4 add no rule of their own, only more axes).
template <class T>
void check_type(int max_rank) {
  for (const Options& o : targets()) {
    check_rank<T, 1>(o);
    check_rank<T, 2>(o);
    if (max_rank < 3) continue;
    check_rank<T, 3>(o);
    check_rank<T, 4>(o);
  }
}

TEST(Scan, Float64MatchesTheDefinitionOnEveryAxis) { check_type<double>(4); }
TEST(Scan, Float32MatchesTheDefinitionOnEveryAxis) { check_type<float>(2); }
TEST(Scan, Int64MatchesTheDefinitionOnEveryAxis) { check_type<std::int64_t>(2); }
TEST(Scan, Int32MatchesTheDefinitionOnEveryAxis) { check_type<std::int32_t>(2); }

TEST(Scan, IntegerCarriesInGroupsAreTheChainsBits) {
  // Integer scans, exact in any order, give NumPy's sequential bits past one group of carries too: more than
  // two groups, the last one partial, on the CPU at 1 and 2 threads (the interpreter would take long at this
  // size; it runs the same statements as the CPU).
  if (!has_cpu_backend()) GTEST_SKIP() << "no CPU backend in this build";
  const int before = num_threads();
  const std::int64_t n = kB * (2 * kB + 300) + 17;
  const std::vector<std::int32_t> v = inputs<std::int32_t>(static_cast<size_t>(n), 99, false);
  NDArray<std::int32_t> x({n});
  std::copy(v.begin(), v.end(), x.data());
  auto k = jit("scan_groups", [](Array<std::int32_t, 1> x) {
    return std::tuple{kiln::cumsum(x), kiln::scan(x, ReduceOp::Add, kiln::exclusive), kiln::cummin(x), kiln::cumprod(x, kiln::exclusive)};
  }, cpu());
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    auto [s, es, mn, ep] = k(x);
    const std::string what = std::to_string(threads) + " thread(s)";
    expect_bits(s.to_vector(), reference<std::int64_t>(v, {n}, -1, ReduceOp::Add, false, false), what + " cumsum");
    expect_bits(es.to_vector(), reference<std::int32_t>(v, {n}, -1, ReduceOp::Add, true), what + " exclusive add");
    expect_bits(mn.to_vector(), reference<std::int32_t>(v, {n}, -1, ReduceOp::Min, false, false), what + " cummin");
    expect_bits(ep.to_vector(), reference<std::int64_t>(v, {n}, -1, ReduceOp::Mul, true), what + " exclusive cumprod");
  }
  set_num_threads(before);
}

TEST(Scan, FloatCarriesFoldInGroupsOfBlocks) {
  // Past kB + 1 blocks a line's carries fold in groups of kB (ir/semantics.hpp): more than two groups, the last
  // partial, in 1-d, and two groups along each axis of a matrix of few lines (the passes; the rows form takes
  // lines of one group only), on the CPU at 1, 2 and 3 threads against the reference, and the interpreter
  // against the CPU in 1-d. The grouped order's bits differ from a single chain's here, so the test tells them
  // apart.
  if (!has_cpu_backend()) GTEST_SKIP() << "no CPU backend in this build";
  const std::int64_t n = kB * (2 * kB + 300) + 17, m = kB * (kB + 5) + 3;
  const std::vector<double> x = inputs<double>(static_cast<size_t>(n), 31, false);
  std::vector<double> near1 = random_values(static_cast<size_t>(n), 32, 0.999999, 1.000001);
  const std::vector<double> r = inputs<double>(static_cast<size_t>(2 * m), 33, false);
  NDArray<float> rows({2, m}), cols({m, 3});
  for (std::int64_t i = 0; i < 2 * m; ++i) rows.data()[i] = static_cast<float>(r[static_cast<size_t>(i)]);
  const std::vector<double> c = inputs<double>(static_cast<size_t>(3 * m), 34, false);
  for (std::int64_t i = 0; i < 3 * m; ++i) cols.data()[i] = static_cast<float>(c[static_cast<size_t>(i)]);
  const auto scans = [](Array<double, 1> x, Array<double, 1> p, Array<float, 2> a, Array<float, 2> b) {
    return std::tuple{kiln::cumsum(x), kiln::cumsum(x, kiln::exclusive), kiln::cumprod(p), kiln::cumsum(a, 1), kiln::cumsum(b, 0)};
  };
  auto k = jit("scan_float_groups", scans, cpu());
  const auto want_sum = reference<double>(x, {n}, -1, ReduceOp::Add, false);
  const auto want_esum = reference<double>(x, {n}, -1, ReduceOp::Add, true);
  const auto want_prod = reference<double>(near1, {n}, -1, ReduceOp::Mul, false);
  const auto want_rows = reference<float>(rows.to_vector(), {2, m}, 1, ReduceOp::Add, false);
  const auto want_cols = reference<float>(cols.to_vector(), {m, 3}, 0, ReduceOp::Add, false);
  EXPECT_NE(want_sum, (reference<double>(x, {n}, -1, ReduceOp::Add, false, true, n)));  // a single chain's bits
  EXPECT_NE(want_rows, (reference<float>(rows.to_vector(), {2, m}, 1, ReduceOp::Add, false, true, m)));
  const int before = num_threads();
  std::vector<double> first;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto [s, es, p, a, b] = k(x, near1, rows, cols);
    const std::string what = std::to_string(threads) + " thread(s)";
    expect_bits(s.to_vector(), want_sum, what + " cumsum");
    expect_bits(es.to_vector(), want_esum, what + " exclusive cumsum");
    expect_bits(p.to_vector(), want_prod, what + " cumprod");
    expect_bits(a.to_vector(), want_rows, what + " cumsum(a, 1)");
    expect_bits(b.to_vector(), want_cols, what + " cumsum(b, 0)");
    if (threads == 1) first = s.to_vector();
  }
  set_num_threads(before);
  auto in = jit("scan_float_groups_1d", [](Array<double, 1> x) { return kiln::cumsum(x); }, interp());
  expect_bits(in(x).to_vector(), first, "interpreter against the CPU");
  // Within rounding of NumPy's sequential sum all the same.
  const auto seq = reference<double>(x, {n}, -1, ReduceOp::Add, false, false);
  for (size_t i = 0; i < seq.size(); i += 9973) EXPECT_NEAR(first[i], seq[i], 1e-9 * (1.0 + std::fabs(seq[i]))) << i;
}

TEST(Scan, NegativeAxesCountFromTheLast) {
  for (const Options& o : targets()) {
    auto k = jit("scan_neg", [](Array<double, 2> x) { return std::pair{kiln::cumsum(x, -1), kiln::cumsum(x, -2)}; }, o);
    const NDArray<double> x = random_matrix(5, 9, 3);
    auto [a, b] = k(x);
    const std::vector<double> v = x.to_vector();
    expect_bits(a.to_vector(), reference<double>(v, {5, 9}, 1, ReduceOp::Add, false), name_of(o));
    expect_bits(b.to_vector(), reference<double>(v, {5, 9}, 0, ReduceOp::Add, false), name_of(o));
  }
}

TEST(Scan, BoolsScanAsIntegers) {
  for (const Options& o : targets()) {
    auto k = jit("scan_bool", [](Array<bool, 1> x) {
      return std::tuple{kiln::cumsum(x), kiln::cummax(x), kiln::cummin(x, 0, kiln::exclusive)};
    }, o);
    NDArray<bool> x({6});
    const bool v[] = {false, true, true, false, true, true};
    std::copy(std::begin(v), std::end(v), x.data());
    auto [s, mx, emn] = k(x);
    EXPECT_EQ(s.to_vector(), (std::vector<std::int64_t>{0, 1, 2, 2, 3, 4})) << name_of(o);
    EXPECT_EQ(mx.to_vector(), (std::vector<bool>{false, true, true, true, true, true})) << name_of(o);
    EXPECT_EQ(emn.to_vector(), (std::vector<bool>{true, false, false, false, false, false})) << name_of(o);
  }
}

TEST(Scan, SignedZerosNaNAndInfinities) {
  for (const Options& o : targets()) {
    auto k = jit("scan_special", [](Array<double, 1> x) {
      return std::tuple{kiln::cumsum(x), kiln::cumprod(x), kiln::cummin(x), kiln::cumsum(x, kiln::exclusive)};
    }, o);
    const std::vector<double> x = {-0.0, -0.0, kInf, -kInf, 1.0, kNaN, 2.0};
    auto [s, p, mn, es] = k(x);
    // np.cumsum([-0., -0., inf, -inf, 1, nan, 2]): -0 survives the first sums, inf - inf is NaN from there on.
    const auto sv = s.to_vector();
    EXPECT_TRUE(sv[0] == 0 && std::signbit(sv[0]) && sv[1] == 0 && std::signbit(sv[1])) << name_of(o);
    EXPECT_EQ(sv[2], kInf);
    for (size_t i = 3; i < sv.size(); ++i) EXPECT_TRUE(std::isnan(sv[i])) << name_of(o) << " " << i;
    const auto pv = p.to_vector();
    EXPECT_TRUE(pv[0] == 0 && std::signbit(pv[0]) && pv[1] == 0 && !std::signbit(pv[1])) << name_of(o);
    EXPECT_TRUE(std::isnan(pv[2])) << name_of(o);  // 0 * inf
    const auto mv = mn.to_vector();
    EXPECT_TRUE(std::signbit(mv[0]) && mv[2] == 0 && mv[3] == -kInf && std::isnan(mv[5]) && std::isnan(mv[6]))
        << name_of(o);
    const auto ev = es.to_vector();
    EXPECT_TRUE(ev[0] == 0 && !std::signbit(ev[0])) << name_of(o) << ": an exclusive sum starts from +0";
    EXPECT_TRUE(std::signbit(ev[1]) && std::signbit(ev[2])) << name_of(o);
  }
}

// ---- determinism ------------------------------------------------------------------------------------------------

TEST(Scan, FloatScansAreBitwiseTheSameForAnyThreadCount) {
  if (!has_cpu_backend()) GTEST_SKIP() << "no CPU backend in this build";
  auto k = jit("scan_threads", [](Array<double, 1> x, Array<float, 2> m) {
    return std::tuple{kiln::cumsum(x), kiln::cumprod(x), kiln::cumsum(m, 0), kiln::cumsum(m, 1),
                      kiln::cumsum(m * 2.0f, 0, kiln::exclusive)};
  }, cpu());
  const std::int64_t n = 200003, rows = 4099, cols = 37;
  std::vector<double> x = random_values(static_cast<size_t>(n), 5, 0.999, 1.001);
  NDArray<float> m({rows, cols});
  const auto mv = random_values(static_cast<size_t>(rows * cols), 6, -1, 1);
  for (size_t i = 0; i < mv.size(); ++i) m.data()[i] = static_cast<float>(mv[i]);
  const int before = num_threads();
  std::vector<std::vector<double>> xs;
  std::vector<std::vector<float>> ms;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto [s, p, c0, c1, e0] = k(x, m);
    xs.push_back(s.to_vector());
    xs.push_back(p.to_vector());
    ms.push_back(c0.to_vector());
    ms.push_back(c1.to_vector());
    ms.push_back(e0.to_vector());
  }
  set_num_threads(before);
  for (size_t r = 2; r < xs.size(); ++r) expect_bits(xs[r], xs[r % 2], "f64 run " + std::to_string(r));
  for (size_t r = 3; r < ms.size(); ++r) expect_bits(ms[r], ms[r % 3], "f32 run " + std::to_string(r));
  expect_bits(xs[0], reference<double>(x, {n}, 0, ReduceOp::Add, false), "cumsum against the definition");
  expect_bits(ms[0], reference<float>(m.to_vector(), {rows, cols}, 0, ReduceOp::Add, false), "axis 0");
  // Not NumPy's sequential bits beyond the first block, but within rounding of them.
  const auto seq = reference<double>(x, {n}, 0, ReduceOp::Add, false, false);
  for (size_t i = 0; i < seq.size(); i += 997) EXPECT_NEAR(xs[0][i], seq[i], 1e-9 * std::fabs(seq[i])) << i;
}

// ---- inside kernels: composition, fusion and errors --------------------------------------------------------------

TEST(Scan, ComposesWithElementwiseOperationsAndViews) {
  for (const Options& o : targets()) {
    // A producer (x * w), a consumer (/ n) and a view (every other row, reversed columns) around scans.
    auto k = jit("scan_compose", [](Array<double, 2> x, Array<double, 1> w) {
      auto c = kiln::cumsum(x * w, 1) / kiln::to_double(x.shape(1));
      auto v = kiln::cummax(x(kiln::range(0, x.shape(0), 2), kiln::slice(kiln::none, kiln::none, -1)), 0);
      return std::pair{c, v};
    }, o);
    for (std::int64_t rows : {1, 6}) {
      for (std::int64_t cols : {std::int64_t{1}, std::int64_t{11}, kB + 3}) {
        const NDArray<double> x = random_matrix(rows, cols, 7, true);
        const auto w = random_values(static_cast<size_t>(cols), 8);
        auto [c, v] = k(x, w);
        std::vector<double> xw(static_cast<size_t>(rows * cols));
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j) xw[static_cast<size_t>(i * cols + j)] = x(i, j) * w[static_cast<size_t>(j)];
        auto want = reference<double>(xw, {rows, cols}, 1, ReduceOp::Add, false);
        for (auto& e : want) e /= static_cast<double>(cols);
        expect_bits(c.to_vector(), want, std::string(name_of(o)) + " cumsum(x * w, 1) / n");
        const std::int64_t vr = (rows + 1) / 2;
        std::vector<double> view(static_cast<size_t>(vr * cols));
        for (std::int64_t i = 0; i < vr; ++i)
          for (std::int64_t j = 0; j < cols; ++j) view[static_cast<size_t>(i * cols + j)] = x(2 * i, cols - 1 - j);
        expect_bits(v.to_vector(), reference<double>(view, {vr, cols}, 0, ReduceOp::Max, false),
                    std::string(name_of(o)) + " cummax of a view");
      }
    }
  }
}

TEST(Scan, TheReportNamesTheScansPassesAndWhatFused) {
  if (!has_cpu_backend()) GTEST_SKIP() << "no CPU backend in this build";
  const int line = __LINE__ + 1;
  auto k = jit("scan_report", [](Array<double, 1> x) { return kiln::cumsum(x * 2.0) + 1.0; }, cpu());
  const std::vector<double> x = random_values(5000, 9);
  NDArray<double> r = k(x);
  std::vector<double> x2(x.size());
  for (size_t i = 0; i < x.size(); ++i) x2[i] = x[i] * 2.0;
  auto want = reference<double>(x2, {5000}, 0, ReduceOp::Add, false);
  for (auto& e : want) e += 1.0;
  expect_bits(r.to_vector(), want, "cumsum(x * 2) + 1");
  // The three passes by name, the producer recomputed in the two that read it instead of stored, the
  // consumer written in place into the scan's result: no array for the product.
  const std::string d = k.diagnostics();
  const std::string origin = "cumsum(x * 2.0) at scan_test.cpp:" + std::to_string(line);
  EXPECT_CONTAINS(d, origin + ": block totals");
  EXPECT_CONTAINS(d, origin + ": block carries");
  EXPECT_CONTAINS(d, origin + ": blocks with their carries");
  EXPECT_CONTAINS(d, "recomputed mul = (x[i] * 2.0) where " + origin + ": block totals, " + origin +
                         ": blocks with their carries read it");
  EXPECT_CONTAINS(d, "reused the buffer of cumsum for add");
  const std::string after = d.substr(d.find("IR after passes:"));
  EXPECT_EQ(after.find("alloc mul"), std::string::npos) << d;
}

TEST(Scan, DownTheColumnsLaneGroupsWalkSeveralVectorsWide) {
  // A scan along a leading axis runs a column per lane, each group of lanes walking down the rows: the report
  // says the groups are several vectors wide (ir::kWalkingVectors), which made a 4472-column cumsum run at a
  // hand loop's speed; along the rows nothing walks that way.
  if (!has_cpu_backend()) GTEST_SKIP() << "no CPU backend in this build";
  auto k = jit("scan_walks", [](Array<double, 2> m) { return std::tuple{kiln::cumsum(m, 0), kiln::cumsum(m, 1)}; }, cpu());
  const std::int64_t rows = 2 * kB + 9, cols = 301;
  NDArray<double> m({rows, cols});
  const auto v = random_values(static_cast<size_t>(rows * cols), 21, -1, 1);
  std::copy(v.begin(), v.end(), m.data());
  const int before = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto [c0, c1] = k(m);
    expect_bits(c0.to_vector(), reference<double>(v, {rows, cols}, 0, ReduceOp::Add, false), "axis 0, threads " + std::to_string(threads));
    expect_bits(c1.to_vector(), reference<double>(v, {rows, cols}, 1, ReduceOp::Add, false), "axis 1, threads " + std::to_string(threads));
  }
  set_num_threads(before);
  const std::string d = k.diagnostics();
  const std::string walks = std::to_string(ir::kWalkingVectors) + " vectors of lanes at a time: its loops walk down rows";
  EXPECT_CONTAINS(d, "cumsum(m, 0) at scan_test.cpp");
  const std::string axis0 = d.substr(d.find("plan_lanes:"));
  EXPECT_NE(axis0.find("rows, one pass each: lanes across"), std::string::npos) << d;
  EXPECT_NE(axis0.find(walks), std::string::npos) << d;
}

TEST(Scan, IsWrittenStraightIntoTheArrayItIsAssignedTo) {
  for (const Options& o : targets()) {
    auto k = jit("scan_into", [](Array<double, 2> x, Array<double, 2> out) { out(all, all) = kiln::cumsum(x, 1); }, o);
    // The destination is the scan's input: the new array stays (x * 2.0 would be a temporary of its own).
    auto self = jit("scan_self", [](Array<double, 1> x) { x(all) = kiln::cumsum(x); }, o);
    for (std::int64_t cols : {std::int64_t{5}, 2 * kB + 1}) {
      const NDArray<double> x = random_matrix(3, cols, 17);
      NDArray<double> out({3, cols});
      k(x, out);
      expect_bits(out.to_vector(), reference<double>(x.to_vector(), {3, cols}, 1, ReduceOp::Add, false), name_of(o));
      NDArray<double> row({3 * cols});
      std::copy(x.data(), x.data() + 3 * cols, row.data());
      self(row);
      expect_bits(row.to_vector(), reference<double>(x.to_vector(), {3 * cols}, 0, ReduceOp::Add, false), name_of(o));
    }
    EXPECT_CONTAINS(k.diagnostics(), "wrote cumsum straight into out (out[:, :] = cumsum(x, 1)): no allocation, no copy");
    EXPECT_EQ(self.diagnostics().find("straight into"), std::string::npos);
    // A destination of another shape is the copy's ShapeError, raised before anything is written.
    NDArray<double> small({3, 4});
    std::fill(small.data(), small.data() + 12, 7.0);
    EXPECT_CONTAINS(error_of<ShapeError>([&] { k(random_matrix(3, 5, 1), small); }), "cumsum(x, 1)");
    for (std::int64_t i = 0; i < 12; ++i) EXPECT_EQ(small.data()[i], 7.0) << name_of(o);
  }
}

TEST(Scan, MisuseIsATraceErrorNamingTheScan) {
  auto axis = jit("scan_axis_bad", [](Array<double, 2> x) { return kiln::cumsum(x, 2); }, interp());
  EXPECT_CONTAINS(error_of<TraceError>([&] { axis(random_matrix(2, 2, 1)); }),
                  "axis 2 is out of range in `cumsum(x, 2)` of an array of rank 2");
  auto op = jit("scan_op_bad", [](Array<double, 1> x) { return kiln::scan(x, ReduceOp::ArgMin); }, interp());
  EXPECT_CONTAINS(error_of<TraceError>([&] { op(std::vector<double>(3)); }), "a scan takes ReduceOp::Add, Mul, Min or Max");
  auto b = jit("scan_bool_bad", [](Array<bool, 1> x) { return kiln::scan(x, ReduceOp::Add); }, interp());
  NDArray<bool> xb({3});
  EXPECT_CONTAINS(error_of<TraceError>([&] { b(xb); }), "use kiln::cumsum");
}

}  // namespace
}  // namespace kiln
