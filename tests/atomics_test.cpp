// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::atomic_* on array elements (kiln/atomic.hpp, ir/atomics.hpp): the CPU backend against the interpreter
// (the definition) on 1, 2 and 3 threads and sizes 0, 1, primes and large; integer atomics exact, float atomics
// on exactly representable values, min/max with NaN, +-0 and +-inf compared bit for bit; the IR forms; and the
// passes that must treat an atomic as the side effect it is (reductions, fusion, temporaries, dead code,
// hoisting, lanes, the argument-overlap check), each with a kernel whose result a wrong pass would change.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "frontend/trace_context.hpp"
#include "ir/atomics.hpp"
#include "ir/builder.hpp"
#include "ir/interpreter.hpp"
#include "ir/printer.hpp"
#include "ir/serialize.hpp"
#include "ir/verifier.hpp"
#include "kiln/kiln.hpp"
#include "tests/atomics_test_util.hpp"
#include "tests/error_test_util.hpp"

namespace kiln {
namespace {

using atomics_test::random_bins;
using atomics_test::same_bits;

const std::int64_t kSizes[] = {0, 1, 7, 1009, 100003};
const int kThreads[] = {1, 2, 3};

class Threads {
 public:
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(0); }
};

// ---- integer atomics: exact ------------------------------------------------------------------------------

template <class T>
auto make_histogram() {
  return jit("atomic_histogram", [](Array<std::int64_t> bin, Array<T> h, Array<T> g, Array<T> before) {
    prange(bin.shape(0), [&](Int i) {
      before[i] = atomic_add(h[bin[i]], 1);  // the old value: order-dependent, checked as a set below
      atomic_sub(g[bin[i]], 2);
    });
  });
}

template <class T>
void histogram_matches() {
  const auto k = make_histogram<T>();
  for (std::int64_t n : kSizes) {
    for (std::int64_t bins : {std::int64_t{1}, std::int64_t{7}, std::int64_t{4096}}) {  // 1 and 7: heavy collisions
      const auto bin = random_bins(n, bins, static_cast<unsigned>(n + bins));
      std::vector<T> want(static_cast<std::size_t>(bins), 5), want_g = want, want_before(static_cast<std::size_t>(n));
      k.on(Target::interpreter)(bin, want, want_g, want_before);
      std::vector<T> counted(static_cast<std::size_t>(bins), 5), taken = counted;
      for (auto b : bin) counted[static_cast<std::size_t>(b)] += 1, taken[static_cast<std::size_t>(b)] -= 2;
      ASSERT_EQ(want, counted) << "the interpreter, n " << n;
      ASSERT_EQ(want_g, taken) << "the interpreter, n " << n;
      for (int threads : kThreads) {
        Threads t(threads);
        std::vector<T> got(static_cast<std::size_t>(bins), 5), got_g = got, before(static_cast<std::size_t>(n));
        k.on(Target::cpu)(bin, got, got_g, before);
        EXPECT_EQ(got, want) << "n " << n << " bins " << bins << " threads " << threads;
        EXPECT_EQ(got_g, want_g) << "n " << n << " bins " << bins << " threads " << threads;
        // Each bin's old values are 5, 6, ... in some order: each iteration saw a count of its own.
        std::vector<std::vector<T>> seen(static_cast<std::size_t>(bins));
        for (std::int64_t i = 0; i < n; ++i) seen[static_cast<std::size_t>(bin[static_cast<std::size_t>(i)])].push_back(before[static_cast<std::size_t>(i)]);
        for (auto& s : seen) {
          std::sort(s.begin(), s.end());
          for (std::size_t j = 0; j < s.size(); ++j) ASSERT_EQ(s[j], static_cast<T>(5 + j)) << "threads " << threads;
        }
      }
    }
  }
}

TEST(Atomics, IntegerHistogramsAreExactI32) { histogram_matches<std::int32_t>(); }
TEST(Atomics, IntegerHistogramsAreExactI64) { histogram_matches<std::int64_t>(); }

TEST(Atomics, LargeHistogramAgainstPlainCounts) {
  const auto k = make_histogram<std::int32_t>();
  const std::int64_t n = 1000003;
  const auto bin = random_bins(n, 257, 3);
  std::vector<std::int32_t> want(257, 5);
  for (auto b : bin) want[static_cast<std::size_t>(b)] += 1;
  for (int threads : kThreads) {
    Threads t(threads);
    std::vector<std::int32_t> got(257, 5), g(257, 5), before(static_cast<std::size_t>(n));
    k.on(Target::cpu)(bin, got, g, before);
    EXPECT_EQ(got, want) << "threads " << threads;
  }
}

TEST(Atomics, IntegersWrapAround) {
  auto k = jit("atomic_wrap", [](Array<std::int32_t> a, Array<std::int64_t> b, Int n) {
    prange(n, [&](Int) {
      atomic_add(a[0], 1);
      atomic_sub(a[1], 1);
      atomic_add(b[0], std::numeric_limits<std::int64_t>::max());
    });
  });
  for (int threads : kThreads) {
    Threads t(threads);
    for (Target target : {Target::interpreter, Target::cpu}) {
      std::vector<std::int32_t> a{std::numeric_limits<std::int32_t>::max() - 5, std::numeric_limits<std::int32_t>::min() + 5};
      std::vector<std::int64_t> b{0};
      k.on(target)(a, b, std::int64_t{10});
      EXPECT_EQ(a[0], std::numeric_limits<std::int32_t>::min() + 4);
      EXPECT_EQ(a[1], std::numeric_limits<std::int32_t>::max() - 4);
      EXPECT_EQ(b[0], -10);  // 10 * (2^63 - 1) mod 2^64, as int64
    }
  }
}

// A counter hands out slots: stream compaction. The slots an iteration gets depend on the order; the set of
// values compacted does not.
TEST(Atomics, CounterHandsOutDistinctSlots) {
  auto k = jit("compact", [](Array<double> x, Array<std::int64_t> count, Array<double> out) {
    prange(x.shape(0), [&](Int i) {
      if_(x[i] > 0.0, [&] {
        const Int slot = atomic_add(count[0], 1);
        out[slot] = x[i];
      });
    });
  });
  for (std::int64_t n : kSizes) {
    std::mt19937_64 rng(static_cast<unsigned>(n));
    std::vector<double> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = static_cast<double>(static_cast<std::int64_t>(rng() % 2001) - 1000);
    std::vector<std::int64_t> want_count{0};
    std::vector<double> want(static_cast<std::size_t>(n), -1.0);
    k.on(Target::interpreter)(x, want_count, want);
    std::sort(want.begin(), want.end());
    for (int threads : kThreads) {
      Threads t(threads);
      std::vector<std::int64_t> count{0};
      std::vector<double> out(static_cast<std::size_t>(n), -1.0);
      k.on(Target::cpu)(x, count, out);
      EXPECT_EQ(count, want_count) << "n " << n;
      std::sort(out.begin(), out.end());
      EXPECT_EQ(out, want) << "n " << n << " threads " << threads;
    }
  }
}

// The old value read in a nested branch and loop: a traced value like any other (the first five iterations
// to arrive each mark a slot, in order of arrival; the rest mark nothing).
TEST(Atomics, OldValuesAreUsableInNestedScopes) {
  auto k = jit("first_five", [](Array<std::int64_t> count, Array<std::int64_t> marks, Int n) {
    prange(n, [&](Int) {
      const Int old = atomic_add(count[0], 1);
      if_(old < 5, [&] { range(old + 1, [&](Int j) { atomic_add(marks[old], j + 1); }); });
    });
  });
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{3}, std::int64_t{1009}}) {
    for (int threads : kThreads) {
      Threads t(threads);
      for (Target target : {Target::interpreter, Target::cpu}) {
        std::vector<std::int64_t> count{0}, marks(5, 0), want(5, 0);
        for (std::int64_t s = 0; s < std::min<std::int64_t>(n, 5); ++s) want[static_cast<std::size_t>(s)] = (s + 1) * (s + 2) / 2;
        k.on(target)(count, marks, n);
        EXPECT_EQ(count[0], n);
        EXPECT_EQ(marks, want) << "n " << n << " threads " << threads;
      }
    }
  }
}

// Compare-exchange: the first iteration to reach a bin claims it, every other one sees the winner.
TEST(Atomics, CompareExchangeFirstWriterWins) {
  auto k = jit("claim", [](Array<std::int64_t> key, Array<std::int64_t> owner, Array<std::int32_t> won) {
    prange(key.shape(0), [&](Int i) {
      const Int old = atomic_compare_exchange(owner[key[i]], -1, i);
      won[i] = select(old == -1, 1, 0);
    });
  });
  for (std::int64_t n : kSizes) {
    const std::int64_t bins = 97;
    const auto key = random_bins(n, bins, static_cast<unsigned>(n) + 5);
    std::vector<std::int64_t> want_owner(bins, -1);
    std::vector<std::int32_t> want_won(static_cast<std::size_t>(n));
    k.on(Target::interpreter)(key, want_owner, want_won);
    for (int threads : kThreads) {
      Threads t(threads);
      std::vector<std::int64_t> owner(bins, -1);
      std::vector<std::int32_t> won(static_cast<std::size_t>(n));
      k.on(Target::cpu)(key, owner, won);
      std::int64_t winners = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const auto b = static_cast<std::size_t>(key[static_cast<std::size_t>(i)]);
        EXPECT_EQ(won[static_cast<std::size_t>(i)], owner[b] == i ? 1 : 0) << "i " << i;
        winners += won[static_cast<std::size_t>(i)];
      }
      for (std::int64_t b = 0; b < bins; ++b) {
        const auto o = owner[static_cast<std::size_t>(b)];
        EXPECT_EQ(o == -1, want_owner[static_cast<std::size_t>(b)] == -1) << "bin " << b;  // the same bins claimed
        if (o != -1) {
          EXPECT_EQ(key[static_cast<std::size_t>(o)], b) << "bin " << b << " claimed by a stranger";
        }
      }
      EXPECT_EQ(winners, std::accumulate(want_won.begin(), want_won.end(), std::int64_t{0}));
      if (threads == 1) {
        EXPECT_EQ(owner, want_owner) << "one thread runs the iterations in order";
      }
    }
  }
}

// Exchange: the returned values and the final one are the initial value and every iteration's, once each.
TEST(Atomics, ExchangePassesEveryValueOnce) {
  auto k = jit("pass_on", [](Array<std::int64_t> cell, Array<std::int64_t> got) {
    prange(got.shape(0), [&](Int i) { got[i] = atomic_exchange(cell[0], i * 3); });
  });
  for (std::int64_t n : kSizes) {
    for (int threads : kThreads) {
      Threads t(threads);
      std::vector<std::int64_t> cell{-7}, got(static_cast<std::size_t>(n));
      k.on(Target::cpu)(cell, got);
      got.push_back(cell[0]);
      std::sort(got.begin(), got.end());
      std::vector<std::int64_t> want{-7};
      for (std::int64_t i = 0; i < n; ++i) want.push_back(i * 3);
      EXPECT_EQ(got, want) << "n " << n << " threads " << threads;
    }
  }
}

// ---- float atomics ----------------------------------------------------------------------------------------

// Sums of small integers and quarters are exact in any order, so they must match the interpreter exactly.
template <class T>
void exact_float_sums() {
  auto k = jit("float_sums", [](Array<std::int64_t> bin, Array<T> x, Array<T> h) {
    prange(bin.shape(0), [&](Int i) {
      atomic_add(h[bin[i]], x[i]);
      atomic_sub(h[0], 0.25);
    });
  });
  for (std::int64_t n : kSizes) {
    const auto bin = random_bins(n, 13, static_cast<unsigned>(n) + 9);
    std::vector<T> x(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(static_cast<std::int64_t>(i % 17) - 8) * T(0.5);
    std::vector<T> want(13, T(1));
    k.on(Target::interpreter)(bin, x, want);
    for (int threads : kThreads) {
      Threads t(threads);
      std::vector<T> got(13, T(1));
      k.on(Target::cpu)(bin, x, got);
      EXPECT_TRUE(same_bits(got, want)) << "n " << n << " threads " << threads;
    }
  }
}

TEST(Atomics, FloatSumsOfExactValuesF32) { exact_float_sums<float>(); }
TEST(Atomics, FloatSumsOfExactValuesF64) { exact_float_sums<double>(); }

/// kiln's minimum/maximum, written out here: NaN propagates, -0 < +0.
template <class T>
T reference_min(T a, T b, bool is_min) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  if (a == b) return (std::signbit(a) == is_min) ? a : b;
  return (a < b) == is_min ? a : b;
}

template <class T>
void min_max_with_specials() {
  auto k = jit("bin_extremes", atomics_test::bin_extremes<T>);
  const T inf = std::numeric_limits<T>::infinity();
  for (std::int64_t n : kSizes) {
    const std::int64_t bins = 11;
    const auto bin = random_bins(n, bins, static_cast<unsigned>(n) + 1);
    const std::vector<T> x = atomics_test::values_with_specials<T>(bin, static_cast<unsigned>(n) * 7 + 1);
    std::vector<T> lo0(static_cast<std::size_t>(bins), inf), hi0(static_cast<std::size_t>(bins), -inf);
    lo0[9] = hi0[9] = T(0);
    lo0[10] = hi0[10] = T(-0.0);
    std::vector<T> want_lo = lo0, want_hi = hi0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      auto& l = want_lo[static_cast<std::size_t>(bin[i])];
      auto& h = want_hi[static_cast<std::size_t>(bin[i])];
      l = reference_min(l, x[i], true);
      h = reference_min(h, x[i], false);
    }
    std::vector<T> lo = lo0, hi = hi0;
    k.on(Target::interpreter)(bin, x, lo, hi);
    ASSERT_TRUE(same_bits(lo, want_lo) && same_bits(hi, want_hi)) << "the interpreter, n " << n;
    for (int threads : kThreads) {
      Threads t(threads);
      lo = lo0;
      hi = hi0;
      k.on(Target::cpu)(bin, x, lo, hi);
      EXPECT_TRUE(same_bits(lo, want_lo)) << "min, n " << n << " threads " << threads;
      EXPECT_TRUE(same_bits(hi, want_hi)) << "max, n " << n << " threads " << threads;
    }
  }
}

TEST(Atomics, MinMaxPropagateNanAndOrderZerosF32) { min_max_with_specials<float>(); }
TEST(Atomics, MinMaxPropagateNanAndOrderZerosF64) { min_max_with_specials<double>(); }

// Compare-exchange on floats compares bits: a NaN matches the same NaN, -0 does not match +0.
TEST(Atomics, FloatCompareExchangeComparesBits) {
  auto k = jit("float_cas", [](Array<double> cell, Array<double> expected, Array<double> old) {
    range(cell.shape(0), [&](Int i) { old[i] = atomic_compare_exchange(cell[i], expected[i], 42.0); });
  });
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> cell0{nan, -0.0, 0.0, 1.5, 1.5}, expected{nan, 0.0, 0.0, 1.5, 2.5};
  const std::vector<double> want_cell{42.0, -0.0, 42.0, 42.0, 1.5};
  for (Target target : {Target::interpreter, Target::cpu}) {
    std::vector<double> cell = cell0, old(5);
    k.on(target)(cell, expected, old);
    EXPECT_TRUE(same_bits(cell, want_cell));
    EXPECT_TRUE(same_bits(old, cell0));
  }
}

TEST(Atomics, EveryOperationOnEveryTypeMatchesTheInterpreter) {
  // One element each, updated in a sequential loop: the old values are then defined too.
  auto run = [](auto zero) {
    using T = decltype(zero);
    auto k = jit("all_ops", [](Array<T> a, Array<T> v, Array<T> olds) {
      range(v.shape(0), [&](Int i) {
        olds(i * 6 + 0) = atomic_add(a[0], v[i]);
        olds(i * 6 + 1) = atomic_sub(a[1], v[i]);
        olds(i * 6 + 2) = atomic_min(a[2], v[i]);
        olds(i * 6 + 3) = atomic_max(a[3], v[i]);
        olds(i * 6 + 4) = atomic_exchange(a[4], v[i]);
        olds(i * 6 + 5) = atomic_compare_exchange(a[5], v[i], v[i] * 2);
      });
    });
    std::vector<T> v{T(3), T(-2), T(3), T(6), T(0), T(12)};
    std::vector<T> want_a{T(1), T(1), T(1), T(1), T(1), T(3)}, want_olds(36);
    k.on(Target::interpreter)(want_a, v, want_olds);
    std::vector<T> a{T(1), T(1), T(1), T(1), T(1), T(3)}, olds(36);
    k.on(Target::cpu)(a, v, olds);
    EXPECT_TRUE(same_bits(a, want_a)) << name_of(dtype_of<T>());
    EXPECT_TRUE(same_bits(olds, want_olds)) << name_of(dtype_of<T>());
    EXPECT_EQ(want_a[5], T(24)) << "3 -> 6 -> 12 -> 24: each exchange expected what the previous one left";
  };
  run(std::int32_t{});
  run(std::int64_t{});
  run(float{});
  run(double{});
}

// ---- errors ---------------------------------------------------------------------------------------------

TEST(Atomics, BoolArraysHaveNone) {
  auto k = jit("bool_atomic", [](Array<bool> flag) { prange(flag.shape(0), [&](Int i) { atomic_exchange(flag[i], true); }); });
  NDArray<bool> flags({4});
  const std::string m = kiln_tests::exact_error_of<TraceError>([&] { k.on(Target::interpreter)(flags); });
  EXPECT_CONTAINS(m, "bool_atomic");
  EXPECT_CONTAINS(m, "atomic_exchange");
  EXPECT_CONTAINS(m, "int32 flag");
}

TEST(Atomics, PlainWritesBesideAtomicsInOnePrangeAreRefused) {
  auto k = jit("mixed", [](Array<std::int64_t> bin, Array<std::int64_t> h) {
    prange(bin.shape(0), [&](Int i) {
      atomic_add(h[bin[i]], 1);
      h[bin[i]] += 1;
    });
  });
  std::vector<std::int64_t> bin{0, 1}, h(2);
  const std::string m = kiln_tests::exact_error_of<TraceError>([&] { k.on(Target::cpu)(bin, h); });
  EXPECT_CONTAINS(m, "'mixed'");
  EXPECT_CONTAINS(m, "atomic_add");
  EXPECT_CONTAINS(m, "plain store");
}

// ---- diagnostics ------------------------------------------------------------------------------------------

TEST(Atomics, DiagnosticsSayWhichAtomicsAreNotReproducible) {
  auto k = jit("float_hist", [](Array<std::int64_t> bin, Array<double> x, Array<double> h, Array<std::int64_t> c) {
    prange(bin.shape(0), [&](Int i) {
      atomic_add(h[bin[i]], x[i]);
      atomic_add(c[bin[i]], 1);
    });
  });
  std::vector<std::int64_t> bin{0, 1, 0}, c(2);
  std::vector<double> x{1, 2, 3}, h(2);
  k.on(Target::cpu)(bin, x, h, c);
  const std::string d = k.diagnostics();
  EXPECT_NE(d.find("not reproducible: kiln::atomic_add on f64 array h"), std::string::npos) << d;
  EXPECT_NE(d.find("write `h[k] += x`"), std::string::npos) << d;  // the reproducible alternative
  EXPECT_EQ(d.find("array c"), std::string::npos) << d;     // integer sums are exact in any order
  EXPECT_EQ(d.find("array reduction: "), std::string::npos) << d;  // not turned into reductions
  EXPECT_NE(d.find("atomic_add(h["), std::string::npos) << d;     // still atomics in the lowered IR
}

// ---- the IR ---------------------------------------------------------------------------------------------

TEST(AtomicsIr, PrintsSerializesAndVerifies) {
  auto k = jit("ir_forms", [](Array<double> a, Array<std::int64_t> b, Array<double> out) {
    prange(a.shape(0), [&](Int i) {
      const Double o = atomic_min(a[i], 2.0);
      const Int c = atomic_compare_exchange(b[0], -1, i);
      out[i] = o + to_double(c);
    });
  });
  std::vector<double> a{1, 3}, out(2);
  std::vector<std::int64_t> b{-1};
  k.on(Target::interpreter)(a, b, out);
  EXPECT_EQ(out, (std::vector<double>{0.0, 3.0}));
  const std::string d = k.diagnostics();
  EXPECT_NE(d.find("= atomic_min(a[i], 2.0)"), std::string::npos) << d;
  EXPECT_NE(d.find("= atomic_compare_exchange(b[0], -1, i)"), std::string::npos) << d;

  // A hand-built function round-trips through the cache's binary form.
  const ir::Var arr = ir::make_var("h", ir::Type::array(DType::F32, 1, true), ir::VarKind::Param);
  const ir::Var old = ir::make_var("old", ir::Type::scalar(DType::F32), ir::VarKind::Local);
  const ir::Var i = ir::make_var("i", ir::Type::scalar(DType::I64), ir::VarKind::Index);
  ir::Function f;
  f.name = "roundtrip";
  f.params = {arr};
  f.body = ir::make_parfor({i}, {ir::make_i64(0)}, {ir::make_dim(arr, 0)},
                           ir::make_block({ir::make_atomic(old, AtomicOp::CompareExchange, arr, {ir::make_ref(i)},
                                                           ir::make_float(DType::F32, 1.0), ir::make_float(DType::F32, 0.0)),
                                           ir::make_store(arr, {ir::make_ref(i)}, ir::make_ref(old))}));
  EXPECT_TRUE(ir::verify(f).empty());
  const ir::Function back = ir::deserialize(ir::serialize(f));
  EXPECT_EQ(ir::to_string(back), ir::to_string(f));
  EXPECT_THROW(ir::make_atomic(old, AtomicOp::Add, arr, {ir::make_ref(i)}, ir::make_i64(1)), ir::IRError);  // type
  EXPECT_THROW(ir::make_atomic(old, AtomicOp::Add, arr, {ir::make_ref(i)}, ir::make_float(DType::F32, 1.0),
                               ir::make_float(DType::F32, 0.0)),
               ir::IRError);  // only compare-exchange has an expected value
  // An atomic on the array a parfor reduces into is refused: the reduction would update a private copy.
  const ir::Stmt reducing = ir::make_parfor({i}, {ir::make_i64(0)}, {ir::make_dim(arr, 0)},
                                            ir::make_atomic(old, AtomicOp::Add, arr, {ir::make_ref(i)},
                                                            ir::make_float(DType::F32, 1.0)),
                                            {}, {{arr, ReduceOp::Add}}, "");
  ir::Function g = f;
  g.body = reducing;
  EXPECT_FALSE(ir::verify(g).empty());
  for (AtomicOp op : {AtomicOp::Add, AtomicOp::Sub, AtomicOp::Min, AtomicOp::Max, AtomicOp::Exchange,
                      AtomicOp::CompareExchange}) {
    EXPECT_EQ(ir::parse_atomic(ir::name_of(op)), op);
    EXPECT_FALSE(ir::atomic_allowed(op, DType::Bool));
    for (DType t : {DType::I32, DType::I64, DType::F32, DType::F64}) EXPECT_TRUE(ir::atomic_allowed(op, t));
  }
}

// ---- the passes -----------------------------------------------------------------------------------------

template <class K, class... A>
void cpu_matches_interpreter(const K& k, const char* what, std::vector<std::int64_t> out, A&&... in) {
  std::vector<std::int64_t> want = out;
  k.on(Target::interpreter)(in..., want);
  for (int threads : kThreads) {
    Threads t(threads);
    std::vector<std::int64_t> got = out;
    k.on(Target::cpu)(in..., got);
    EXPECT_EQ(got, want) << what << ", threads " << threads << "\n" << k.diagnostics();
  }
}

// Zeroing h and counting into it are two pranges over the same space: fused, iteration i would zero h[i]
// after earlier iterations counted into it.
TEST(AtomicsPasses, FusionKeepsTheZeroingApart) {
  auto k = jit("zero_then_count", [](Array<std::int64_t> bin, Array<std::int64_t> h) {
    prange(bin.shape(0), [&](Int i) { h[i] = 0; });
    prange(bin.shape(0), [&](Int i) { atomic_add(h[bin[i]], 1); });
  });
  for (std::int64_t n : {std::int64_t{7}, std::int64_t{1009}}) {
    const auto bin = random_bins(n, n, 17);
    cpu_matches_interpreter(k, "zero then count", std::vector<std::int64_t>(static_cast<std::size_t>(n), 99), bin);
  }
}

// A temporary counted into by atomics and read by a later array operation over the same space: neither a
// scalar per iteration (eliminate_temporaries) nor fused with its reader.
TEST(AtomicsPasses, TemporariesAndTheirReadersStayWhole) {
  auto k = jit("temp_counts", [](Array<std::int64_t> bin, Array<std::int64_t> out) {
    auto t = zeros<std::int64_t>(bin.shape(0));
    prange(bin.shape(0), [&](Int i) { atomic_add(t[bin[i]], 1); });
    out(all) = t * 2;
  });
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1009}}) {
    const auto bin = random_bins(n, n, 19);
    cpu_matches_interpreter(k, "temporary", std::vector<std::int64_t>(static_cast<std::size_t>(n)), bin);
  }
}

// The counter is a local array nothing reads but the atomics, whose results place the values: dead-code
// elimination must keep both.
TEST(AtomicsPasses, AnAtomicWhoseArrayIsNeverReadStays) {
  auto k = jit("local_counter", [](Array<std::int64_t> x, Array<std::int64_t> out) {
    auto c = zeros<std::int64_t>(1);
    prange(x.shape(0), [&](Int i) {
      const Int slot = atomic_add(c[0], 1);
      out[slot] = x[i];
    });
  });
  for (std::int64_t n : kSizes) {
    std::vector<std::int64_t> x(static_cast<std::size_t>(n));
    std::iota(x.begin(), x.end(), 100);
    for (int threads : kThreads) {
      Threads t(threads);
      std::vector<std::int64_t> out(static_cast<std::size_t>(n), -1);
      k.on(Target::cpu)(x, out);
      std::sort(out.begin(), out.end());
      EXPECT_EQ(out, x) << "n " << n << " threads " << threads;
    }
  }
}

// A load of the element an atomic in the same loop updates is not loop-invariant.
TEST(AtomicsPasses, LoadsOfAtomicallyUpdatedArraysAreNotHoisted) {
  auto k = jit("running", [](Array<std::int64_t> h, Array<std::int64_t> out) {
    range(out.shape(0), [&](Int j) {
      atomic_add(h[0], 2);
      out[j] = h[0];
    });
  });
  for (Target target : {Target::interpreter, Target::cpu}) {
    std::vector<std::int64_t> h{1}, out(5);
    k.on(target)(h, out);
    EXPECT_EQ(out, (std::vector<std::int64_t>{3, 5, 7, 9, 11}));
    EXPECT_EQ(h[0], 11);
  }
}

// A prange whose body sums a row in order is one the lane planner would run 4 or 8 iterations at a time; an
// atomic in it must stay one atomic step per iteration, so the plan is refused and the counts stay exact.
TEST(AtomicsPasses, LanesAreRefusedForBodiesWithAtomics) {
  auto k = jit("row_bins", [](Array<double, 2> m, Array<std::int64_t> h) {
    prange(m.shape(0), [&](Int i) {
      Double s = 0.0;
      range(m.shape(1), [&](Int j) { s = s + m(i, j); });
      atomic_add(h[to_int(s) % h.shape(0)], 1);
    });
  });
  const std::int64_t rows = 1009, cols = 5;
  NDArray<double> m({rows, cols});
  for (std::int64_t e = 0; e < rows * cols; ++e) m.data()[e] = static_cast<double>(e % 13);
  std::vector<std::int64_t> want(4);
  k.on(Target::interpreter)(m, want);
  for (int threads : kThreads) {
    Threads t(threads);
    std::vector<std::int64_t> got(4);
    k.on(Target::cpu)(m, got);
    EXPECT_EQ(got, want) << "threads " << threads;
  }
  const std::string d = k.diagnostics();
  EXPECT_NE(d.find("updates an element of h atomically"), std::string::npos) << d;
}

// What the CPU backend made of a histogram by atomics: scalar `atomicrmw` at monotonic order, each element its own
// atomic step (the loop vectorizer widens no atomic instruction), and float min/max as a compare-exchange loop.
TEST(AtomicsPasses, TheCpuCodeIsOneAtomicInstructionPerElement) {
  Options o;
  o.target = Target::cpu;
  o.keep_llvm_ir = true;
  auto k = jit("llvm_atomics", [](Array<std::int64_t> bin, Array<double> x, Array<std::int32_t> h, Array<double> lo) {
    prange(bin.shape(0), [&](Int i) {
      atomic_add(h[bin[i]], 1);
      atomic_min(lo[bin[i]], x[i]);
    });
  }, o);
  std::vector<std::int64_t> bin{0, 1, 0};
  std::vector<double> x{3, 2, 1}, lo(2, 9);
  std::vector<std::int32_t> h(2);
  k(bin, x, h, lo);
  EXPECT_EQ(h, (std::vector<std::int32_t>{2, 1}));
  EXPECT_EQ(lo, (std::vector<double>{1, 2}));
  const std::string ir = k.llvm_ir();
  EXPECT_TRUE(std::regex_search(ir, std::regex("atomicrmw add ptr [^\\n]*, i32 1 monotonic"))) << ir;
  EXPECT_TRUE(std::regex_search(ir, std::regex("cmpxchg ptr [^\\n]*, i64 [^\\n]*, i64 [^\\n]* monotonic monotonic"))) << ir;
  EXPECT_FALSE(std::regex_search(ir, std::regex("atomicrmw [a-z]+ ptr [^\\n]*<[0-9]+ x"))) << ir;
}

// One buffer passed as both the bins and the histogram: the call-time overlap check sees the atomic's read
// and write of h, and the call gives the answer for distinct arrays.
TEST(AtomicsPasses, OverlappingArgumentsGetTheDistinctArrayAnswer) {
  auto k = jit("self_hist", [](Array<std::int64_t> bin, Array<std::int64_t> h) {
    prange(bin.shape(0), [&](Int i) { atomic_add(h[bin[i]], 1); });
  });
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1009}}) {
    std::vector<std::int64_t> buf = random_bins(n, n, 23);
    std::vector<std::int64_t> bins = buf, want = buf;
    for (auto b : bins) want[static_cast<std::size_t>(b)] += 1;
    for (int threads : kThreads) {
      Threads t(threads);
      std::vector<std::int64_t> same = buf;
      k.on(Target::cpu)(same, same);
      EXPECT_EQ(same, want) << "n " << n << " threads " << threads;
    }
  }
}

}  // namespace
}  // namespace kiln
