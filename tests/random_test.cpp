// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Counter-based random numbers (kiln/random.hpp, defined in ir/random.hpp): Philox-4x32-10 against Random123's
// known answers; the exact mappings to uniform numbers; the error of normal()'s own log and cos against long
// double; the interpreter and the CPU backend bit for bit with the definition for bits, uniform and normal in
// f32 and f64, sizes 0, 1, primes and large, 1, 2 and 3 threads; the array forms and their fusion; a time loop
// advancing its counter; constant folding; vectorized CPU code; and statistical sanity on fixed keys (means,
// variances and chi-square statistics within bounds derived from n, so that the test is deterministic).
#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <regex>
#include <tuple>

#include "ir/random.hpp"
#include "ir/serialize.hpp"
#include "tests/array_test_util.hpp"
#include "tests/random_test_util.hpp"

namespace kiln {
namespace {

using namespace kiln::testing;
using random_test::draws;
using random_test::kKey;
using random_test::packed_draws;
using random_test::same_bits;
namespace rnd = ir::random;

std::vector<Options> targets() {
  std::vector<Options> t = {interp()};
  if (has_cpu_backend()) t.push_back(cpu());
  return t;
}
const char* name_of(const Options& o) { return o.target == Target::cpu ? "cpu" : "interpreter"; }

class Threads {
 public:
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(0); }
};

// ---- the definition ----------------------------------------------------------------------------------------

TEST(RandomPhilox, KnownAnswersOfRandom123) {
  // Random123's kat_vectors, "philox4x32 10": counter (4 words), key (2 words), result (4 words).
  struct Kat {
    rnd::Words ctr;
    std::uint32_t k0, k1;
    rnd::Words want;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, 0xffffffff, 0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822, 0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    const rnd::Words got = rnd::philox4x32(k.ctr, k.k0, k.k1);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(got.w[w], k.want.w[w]) << "word " << w;
  }
  // kiln's (key, counter) -> Philox input: key words low, high; counter words low, high, 0, 0.
  const rnd::Words b = rnd::block(-1, 0x0000000500000007LL);
  const rnd::Words direct = rnd::philox4x32({{7, 5, 0, 0}}, 0xffffffff, 0xffffffff);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(b.w[w], direct.w[w]);
  static_assert(rnd::philox4x32({{0, 0, 0, 0}}, 0, 0).w[0] == 0x6627e8d5u, "constexpr too");
}

TEST(RandomPhilox, UniformIsTheHighBitsTimesAPowerOfTwo) {
  for (std::int64_t c : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{1} << 40}) {
    const rnd::Words b = rnd::block(kKey, c);
    EXPECT_EQ(rnd::uniform_f32(kKey, c), static_cast<float>(b.w[0] >> 8) / 16777216.0f);
    EXPECT_EQ(rnd::uniform_f64(kKey, c), static_cast<double>((std::uint64_t{b.w[1]} << 32 | b.w[0]) >> 11) / 9007199254740992.0);
    EXPECT_EQ(rnd::bits(kKey, c), static_cast<std::int64_t>(std::uint64_t{b.w[1]} << 32 | b.w[0]));
  }
  // The extremes of the maps: all-ones words give the largest value below 1.
  EXPECT_EQ(static_cast<float>(0xffffffffu >> 8) * 0x1p-24f, 1.0f - 0x1p-24f);
  EXPECT_EQ(static_cast<double>(~std::uint64_t{0} >> 11) * 0x1p-53, 1.0 - 0x1p-53);
}

/// The error of x against the exact value, in units of 2^-52 (an ulp of 1).
double err_ulp1(double x, long double exact) { return static_cast<double>(std::fabs(static_cast<long double>(x) - exact) * 0x1p52L); }

TEST(RandomPhilox, LogAndCosPolynomialsAreAccurate) {
  double log_rel = 0, cos_abs = 0;
  for (std::int64_t i = 0; i < 200000; ++i) {
    const std::uint64_t a = static_cast<std::uint64_t>(rnd::bits(7, i)) >> 11;
    // u over every binade of (0, 1]: a 53-bit mantissa shifted right by 0..52.
    const double u = static_cast<double>((a >> (i % 53)) + 1) * 0x1p-53;
    const long double exact = std::log(static_cast<long double>(u));
    if (u != 1.0) log_rel = std::max(log_rel, static_cast<double>(std::fabs((rnd::log_unit(u) - exact) / exact) * 0x1p52L));
    else EXPECT_EQ(rnd::log_unit(u), 0.0);
    const long double turn = static_cast<long double>(a) * 0x1p-53L;
    cos_abs = std::max(cos_abs, err_ulp1(rnd::cos_turn(a), std::cos(2 * std::numbers::pi_v<long double> * turn)));
  }
  // Measured on 4 million points: ln within 1.4 ulp relative, cos within 0.72 * 2^-52 absolute, the normal value
  // within 1.9 * 2^-52 * max(|z|, 1) of sqrt(-2 ln u1) cos(2 pi u2) (docs/random.md states them).
  EXPECT_LT(log_rel, 2.0);
  EXPECT_LT(cos_abs, 1.0);
  double normal_err = 0;
  for (std::int64_t i = 0; i < 100000; ++i) {
    const rnd::Words b = rnd::block(99, i);
    const long double u1 = static_cast<long double>((rnd::low64(b) >> 11) + 1) * 0x1p-53L;
    const long double u2 = static_cast<long double>(rnd::high64(b) >> 11) * 0x1p-53L;
    const long double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi_v<long double> * u2);
    normal_err = std::max(normal_err, err_ulp1(rnd::normal_f64(99, i), z) / std::max(1.0, static_cast<double>(std::fabs(z))));
  }
  EXPECT_LT(normal_err, 3.0);
  // The quadrant boundaries are exact: cos 0 = 1, cos(pi/2) = 0 (from the sin polynomial at t = 0), cos pi = -1.
  EXPECT_EQ(rnd::cos_turn(0), 1.0);
  EXPECT_EQ(std::fabs(rnd::cos_turn(std::uint64_t{1} << 51)), 0.0);
  EXPECT_EQ(rnd::cos_turn(std::uint64_t{1} << 52), -1.0);
}

TEST(RandomPhilox, NormalIsFiniteAndItsFloatIsTheRoundedDouble) {
  double worst = 0;
  for (std::int64_t c = 0; c < 100000; ++c) {
    const double z = rnd::normal_f64(kKey, c);
    ASSERT_TRUE(std::isfinite(z));
    worst = std::max(worst, std::fabs(z));
    EXPECT_TRUE(same_bits(rnd::normal_f32(kKey, c), static_cast<float>(z)));
  }
  // u1 >= 2^-53 bounds |z| by sqrt(-2 ln 2^-53) = 8.57.
  EXPECT_LE(worst, std::sqrt(-2 * std::log(0x1p-53)) + 1e-12);
}

TEST(RandomPacked, BlocksAreNotThePerValueBlocksAndElementsAreTheirWords) {
  for (std::int64_t b : {std::int64_t{0}, std::int64_t{1}, std::int64_t{12345}, std::int64_t{-1}}) {
    const rnd::Words p = rnd::packed_block(kKey, b), q = rnd::block(kKey, b);
    EXPECT_NE(rnd::low64(p), rnd::low64(q));  // counter word 2 is 1: another block
    for (std::int64_t k = 0; k < 4; ++k) {
      EXPECT_TRUE(same_bits(rnd::packed_uniform_f32(kKey, b, k), static_cast<float>(p.w[k] >> 8) * 0x1p-24f));
      const std::uint64_t g = static_cast<std::uint64_t>(b) * 4 + static_cast<std::uint64_t>(k);
      if (b >= 0) {
        EXPECT_EQ(rnd::packed_element(Intrinsic::RandomPackedUniformF32, kKey, static_cast<std::int64_t>(g)).as_float,
                  rnd::packed_uniform_f32(kKey, b, k));
      }
    }
    EXPECT_EQ(rnd::packed_bits(kKey, b, 0), static_cast<std::int64_t>(rnd::low64(p)));
    EXPECT_EQ(rnd::packed_bits(kKey, b, 1), static_cast<std::int64_t>(rnd::high64(p)));
    EXPECT_TRUE(same_bits(rnd::packed_uniform_f64(kKey, b, 1), static_cast<double>(rnd::high64(p) >> 11) * 0x1p-53));
  }
  // Element g of a 2-wide kind is value g mod 2 of block g / 2, g read as unsigned.
  EXPECT_EQ(rnd::packed_element(Intrinsic::RandomPackedBits, kKey, 7).as_int, rnd::packed_bits(kKey, 3, 1));
  EXPECT_EQ(rnd::packed_element(Intrinsic::RandomPackedBits, kKey, -1).as_int,
            rnd::packed_bits(kKey, static_cast<std::int64_t>(~std::uint64_t{0} >> 1), 1));
}

TEST(RandomPacked, NormalPairIsBoxMullersCosineAndSine) {
  double sin_abs = 0, pair_err = 0;
  for (std::int64_t i = 0; i < 200000; ++i) {
    const std::uint64_t a = static_cast<std::uint64_t>(rnd::bits(5, i)) >> 11;
    const long double turn = static_cast<long double>(a) * 0x1p-53L;
    sin_abs = std::max(sin_abs, err_ulp1(rnd::turn(a, true), std::sin(2 * std::numbers::pi_v<long double> * turn)));
    const rnd::Words b = rnd::packed_block(77, i);
    const long double u1 = static_cast<long double>((rnd::low64(b) >> 11) + 1) * 0x1p-53L;
    const long double u2 = static_cast<long double>(rnd::high64(b) >> 11) * 0x1p-53L;
    const long double r = std::sqrt(-2 * std::log(u1)), angle = 2 * std::numbers::pi_v<long double> * u2;
    const long double z0 = r * std::cos(angle), z1 = r * std::sin(angle);
    pair_err = std::max(pair_err, err_ulp1(rnd::packed_normal_f64(77, i, 0), z0) / std::max(1.0, static_cast<double>(std::fabs(z0))));
    pair_err = std::max(pair_err, err_ulp1(rnd::packed_normal_f64(77, i, 1), z1) / std::max(1.0, static_cast<double>(std::fabs(z1))));
    EXPECT_TRUE(same_bits(rnd::packed_normal_f32(77, i, 1), static_cast<float>(rnd::packed_normal_f64(77, i, 1))));
  }
  // The sine is the cosine polynomial's quadrant shifted by one: the same accuracy (docs/random.md).
  EXPECT_LT(sin_abs, 1.0);
  EXPECT_LT(pair_err, 3.0);
  EXPECT_EQ(rnd::turn(0, true), 0.0);
  EXPECT_EQ(rnd::turn(std::uint64_t{1} << 51, true), 1.0);
  EXPECT_EQ(rnd::turn(std::uint64_t{3} << 51, true), -1.0);
}

// ---- the targets against the definition -----------------------------------------------------------------

TEST(RandomTargets, EveryTargetAndThreadCountGivesTheDefinitionsBits) {
  for (const Options& o : targets()) {
    auto k = jit("random_draws", draws, o);
    const std::vector<int> threads = o.target == Target::cpu ? std::vector<int>{1, 2, 3} : std::vector<int>{1};
    for (std::int64_t n : {0, 1, 2, 3, 7, 13, 101, 1009, 200003}) {
      for (int t : threads) {
        SCOPED_TRACE(std::string(name_of(o)) + " n=" + std::to_string(n) + " threads=" + std::to_string(t));
        Threads th(t);
        // Negative counters for n = 0: counters are any Int.
        EXPECT_EQ(random_test::draws_mismatches(k, n, n * 1000003 - 5), 0u);
      }
    }
  }
}

TEST(RandomTargets, PackedDrawsAndFillsAreTheDefinitionsBitsOnEveryTargetAndThreadCount) {
  for (const Options& o : targets()) {
    auto k = jit("random_packed", packed_draws, o);
    const std::vector<int> threads = o.target == Target::cpu ? std::vector<int>{1, 2, 3} : std::vector<int>{1};
    for (std::int64_t n : {0, 1, 2, 3, 5, 7, 13, 101, 1009, 200003}) {
      // first at every place in a block, and negative: the fills' partial blocks at both ends.
      for (std::int64_t first : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, n * 1000003 - 5}) {
        for (int t : threads) {
          if (n > 1009 && first != 3 && t != 2) continue;  // the large size once per thread count that matters
          SCOPED_TRACE(std::string(name_of(o)) + " n=" + std::to_string(n) + " first=" + std::to_string(first) +
                       " threads=" + std::to_string(t));
          Threads th(t);
          EXPECT_EQ(random_test::packed_mismatches(k, n, first), 0u);
        }
      }
    }
  }
}

TEST(RandomTargets, PackedBlockDrawsAreConsecutiveElements) {
  const auto k = [](Array<float, 1> u, Array<double, 1> z, Int key) {
    prange(u.shape(0) / 4, [&](Int j) {
      const auto v = random::packed::uniform_block<float>(key, j);
      for (int w = 0; w < 4; ++w) u[4 * j + w] = v[static_cast<std::size_t>(w)];
    });
    prange(z.shape(0) / 2, [&](Int j) {
      const auto v = random::packed::normal_block<double>(key, j);
      z[2 * j] = v[0];
      z[2 * j + 1] = v[1];
    });
  };
  for (const Options& o : targets()) {
    SCOPED_TRACE(name_of(o));
    auto kern = jit("random_packed_blocks", k, o);
    std::vector<float> u(4 * 1013);
    std::vector<double> z(2 * 1013);
    kern(u, z, kKey);
    std::size_t bad = 0;
    for (std::size_t f = 0; f < u.size(); ++f)
      bad += !same_bits(u[f], static_cast<float>(rnd::packed_element(Intrinsic::RandomPackedUniformF32, kKey,
                                                                     static_cast<std::int64_t>(f)).as_float));
    for (std::size_t f = 0; f < z.size(); ++f)
      bad += !same_bits(z[f], rnd::packed_element(Intrinsic::RandomPackedNormalF64, kKey, static_cast<std::int64_t>(f)).as_float);
    EXPECT_EQ(bad, 0u);
  }
}

TEST(RandomTargets, ArrayFormsDrawAtTheirRowMajorFlatIndex) {
  const auto arrays = [](Int n, Int m, Int key, Double mean, Double sd) {
    return std::tuple{random::uniform<float>(shape(n, m), key), random::normal<double>(shape(n, m), key, mean, sd, 11),
                      random::uniform<double>(shape(n), key, 5), random::normal<float>(shape(2, n, m), key)};
  };
  for (const Options& o : targets()) {
    SCOPED_TRACE(name_of(o));
    auto k = jit("random_arrays", arrays, o);
    for (auto [n, m] : {std::pair<std::int64_t, std::int64_t>{0, 3}, {1, 1}, {7, 13}, {101, 37}}) {
      const double mean = 2.5, sd = 0.75;
      auto [a, b, c, d] = k(n, m, kKey, mean, sd);
      ASSERT_EQ(a.size(), n * m);
      for (std::int64_t f = 0; f < n * m; ++f) {
        EXPECT_TRUE(same_bits(a.data()[f], rnd::uniform_f32(kKey, f))) << f;
        EXPECT_TRUE(same_bits(b.data()[f], mean + sd * rnd::normal_f64(kKey, 11 + f))) << f;
      }
      for (std::int64_t f = 0; f < n; ++f) EXPECT_TRUE(same_bits(c.data()[f], rnd::uniform_f64(kKey, 5 + f)));
      for (std::int64_t f = 0; f < 2 * n * m; ++f) EXPECT_TRUE(same_bits(d.data()[f], rnd::normal_f32(kKey, f)));
    }
  }
}

TEST(RandomTargets, ArraysFuseIntoExpressionsAndReductions) {
  // mean and variance of a normal array, and a uniform array shifted: each random array is an elementwise map
  // that fusion puts into its consumer, so no array of numbers is allocated for the sums.
  const auto stats = [](Int n, Int key) {
    auto z = random::normal<double>(shape(n), key);
    auto u = random::uniform<double>(shape(n), key + 1) * 2.0 - 1.0;
    return std::tuple{kiln::sum(z), kiln::sum(z * z), kiln::sum(u)};
  };
  for (const Options& o : targets()) {
    SCOPED_TRACE(name_of(o));
    auto k = jit("random_stats", stats, o);
    const std::int64_t n = 100003;
    const auto [s, s2, su] = k(n, kKey);
    double rs = 0, rs2 = 0, ru = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double z = rnd::normal_f64(kKey, i);
      rs += z;
      rs2 += z * z;
      ru += rnd::uniform_f64(kKey + 1, i) * 2.0 - 1.0;
    }
    EXPECT_NEAR(s, rs, 1e-9 * n);
    EXPECT_NEAR(s2, rs2, 1e-9 * n);
    EXPECT_NEAR(su, ru, 1e-9 * n);
    if (o.target == Target::cpu) {
      // The fixed-order reductions give the same bits for any thread count.
      for (int t : {1, 2, 3}) {
        Threads th(t);
        EXPECT_EQ(k(n, kKey), std::make_tuple(s, s2, su)) << t << " threads";
      }
    }
    const std::string d = k.diagnostics();
    EXPECT_EQ(d.find("alloc ", d.find("IR after passes:")), std::string::npos) << d;
  }
}

TEST(RandomTargets, ATimeLoopAdvancesItsCounter) {
  const auto walk = [](Array<double, 1> x, Int key, Int steps) {
    range(steps, [&](Int s) {
      prange(x.shape(0), [&](Int i) { x[i] += random::normal<double>(key, s * x.shape(0) + i); });
    });
  };
  const std::int64_t n = 1001, steps = 5;
  std::vector<double> want(n, 0.0);
  for (std::int64_t s = 0; s < steps; ++s)
    for (std::int64_t i = 0; i < n; ++i) want[i] += rnd::normal_f64(kKey, s * n + i);
  // docs/random.md's array form: the counters of step s start at s * n; the same sums with mean 0, sd 0.5.
  const auto walk_arrays = [](Array<double, 1> x, Int key, Int steps) {
    range(steps, [&](Int s) {
      x(kiln::all) = x + random::normal<double>(shape(x.shape(0)), key, 0.0, 0.5, s * x.shape(0));
    });
  };
  std::vector<double> half(n, 0.0);
  for (std::int64_t s = 0; s < steps; ++s)
    for (std::int64_t i = 0; i < n; ++i) half[i] += 0.0 + 0.5 * rnd::normal_f64(kKey, s * n + i);
  for (const Options& o : targets()) {
    SCOPED_TRACE(name_of(o));
    auto k = jit("random_walk", walk, o);
    std::vector<double> x(n, 0.0);
    k(x, kKey, steps);
    for (std::int64_t i = 0; i < n; ++i) EXPECT_TRUE(same_bits(x[i], want[i])) << i;
    auto ka = jit("random_walk_arrays", walk_arrays, o);
    std::vector<double> y(n, 0.0);
    ka(y, kKey, steps);
    for (std::int64_t i = 0; i < n; ++i) EXPECT_TRUE(same_bits(y[i], half[i])) << i;
  }
}

TEST(RandomTargets, ConstantKeyAndCounterFold) {
  const auto k = [](Array<double, 1> out) {
    out[0] = random::normal<double>(3, 4);
    out[1] = random::uniform<double>(-3, 1LL << 40);
    out[2] = kiln::to_double(random::bits(0, 0));
  };
  for (const Options& o : targets()) {
    SCOPED_TRACE(name_of(o));
    auto kern = jit("random_folded", k, o);
    std::vector<double> out(3);
    kern(out);
    EXPECT_TRUE(same_bits(out[0], rnd::normal_f64(3, 4)));
    EXPECT_TRUE(same_bits(out[1], rnd::uniform_f64(-3, std::int64_t{1} << 40)));
    EXPECT_EQ(out[2], static_cast<double>(rnd::bits(0, 0)));
    const std::string d = kern.diagnostics();
    const std::string after = d.substr(std::min(d.size(), d.find("IR after passes:")));
    EXPECT_FALSE(std::regex_search(after, std::regex("random_(bits|uniform|normal)"))) << "not folded:\n" << after;
  }
}

TEST(RandomTargets, ANegativeExtentIsAShapeErrorNamingTheArray) {
  const auto k = [](Int n, Int key) {
    auto noise = random::normal<double>(shape(n, 3), key);
    return kiln::sum(noise);
  };
  for (const Options& o : targets()) {
    SCOPED_TRACE(name_of(o));
    auto kern = jit("random_negative", k, o);
    EXPECT_EQ(kern(0, kKey), 0.0);
    const std::string m = error_of<ShapeError>([&] { kern(-2, kKey); });
    EXPECT_NE(m.find("array 'noise' has a negative extent: shape (-2, 3)"), std::string::npos) << m;
    EXPECT_NE(m.find("random_negative"), std::string::npos) << m;
  }
}

TEST(RandomTargets, IntrinsicsPrintAndSerializeRoundTrip) {
  std::vector<float> u(3), z(3);
  std::vector<double> v(3), w(3);
  std::vector<std::int64_t> b(3);
  const ir::Function f = trace_ir("random_draws", {"u", "v", "z", "w", "b", "key", "first"}, draws, u, v, z, w, b,
                                  std::int64_t{1}, std::int64_t{2});
  const std::string text = ir::to_string(f);
  for (const char* name : {"random_uniform_f32(", "random_uniform_f64(", "random_normal_f32(", "random_normal_f64(",
                           "random_bits("})
    EXPECT_NE(text.find(name), std::string::npos) << name << " in\n" << text;
  const ir::Function back = ir::deserialize(ir::serialize(f));
  EXPECT_EQ(ir::to_string(back), text);
}

TEST(RandomTargets, PackedIntrinsicsPrintSerializeAndFold) {
  std::vector<float> u(3), z(3);
  std::vector<double> v(3), w(3);
  std::vector<std::int64_t> b(3);
  const ir::Function f = trace_ir("random_packed", {"u", "v", "z", "w", "b", "fu", "fv", "fz", "fw", "key", "first"},
                                  packed_draws, u, v, z, w, b, u, v, z, w, std::int64_t{1}, std::int64_t{2});
  const std::string text = ir::to_string(f);
  for (const char* name : {"random_packed_uniform_f32(", "random_packed_uniform_f64(", "random_packed_normal_f32(",
                           "random_packed_normal_f64(", "random_packed_bits("})
    EXPECT_NE(text.find(name), std::string::npos) << name << " in\n" << text;
  EXPECT_EQ(ir::to_string(ir::deserialize(ir::serialize(f))), text);
  const auto k = [](Array<double, 1> out) {
    out[0] = random::packed::normal<double>(3, 5);
    out[1] = to_double(random::packed::uniform<float>(-3, 6));
  };
  for (const Options& o : targets()) {
    SCOPED_TRACE(name_of(o));
    auto kern = jit("random_packed_folded", k, o);
    std::vector<double> out(2);
    kern(out);
    EXPECT_TRUE(same_bits(out[0], rnd::packed_normal_f64(3, 2, 1)));
    EXPECT_TRUE(same_bits(out[1], static_cast<double>(rnd::packed_uniform_f32(-3, 1, 2))));
    const std::string d = kern.diagnostics();
    const std::string after = d.substr(std::min(d.size(), d.find("IR after passes:")));
    EXPECT_FALSE(std::regex_search(after, std::regex("random_packed_(bits|uniform|normal)"))) << "not folded:\n" << after;
  }
}

TEST(RandomTargets, CpuLoopIsVectorized) {
  if (!has_cpu_backend()) GTEST_SKIP() << "no CPU backend in this build";
  Options o = cpu();
  o.keep_llvm_ir = true;
  auto u = jit("random_uniform_vec", [](Array<float, 1> x, Int key) {
    prange(x.shape(0), [&](Int i) { x[i] = random::uniform<float>(key, i); });
  }, o);
  auto z = jit("random_normal_vec", [](Array<double, 1> x, Int key) {
    prange(x.shape(0), [&](Int i) { x[i] = random::normal<double>(key, i); });
  }, o);
  std::vector<float> xf(64);
  std::vector<double> xd(64);
  u(xf, kKey);
  z(xd, kKey);
  // Philox's products as vector multiplies of zero-extended words, stores of whole vectors.
  const std::regex mul("mul nuw <([0-9]+) x i64>");
  std::smatch m;
  const std::string ui = u.llvm_ir(), zi = z.llvm_ir();
  ASSERT_TRUE(std::regex_search(ui, m, mul)) << ui;
  EXPECT_GE(std::stoi(m[1]), 4) << "vector width";
  EXPECT_TRUE(std::regex_search(ui, std::regex("store <[0-9]+ x float>"))) << ui;
  ASSERT_TRUE(std::regex_search(zi, m, mul)) << zi;
  EXPECT_GE(std::stoi(m[1]), 4) << "vector width";
  EXPECT_TRUE(std::regex_search(zi, std::regex("fdiv <[0-9]+ x double>"))) << zi;
  EXPECT_TRUE(std::regex_search(zi, std::regex("store <[0-9]+ x double>"))) << zi;
  // No libm call and no contraction: the numbers are the definition's.
  EXPECT_EQ(zi.find("@log"), std::string::npos);
  EXPECT_EQ(zi.find("@llvm.fma"), std::string::npos);
  EXPECT_EQ(zi.find("fmuladd"), std::string::npos);
}

// ---- statistics (fixed keys: deterministic) -----------------------------------------------------------------

constexpr std::int64_t kN = 1 << 20;

/// chi-square of `counts` against equal expected counts, and its bound: df + 6 sqrt(2 df) (6 standard
/// deviations of the chi-square distribution above its mean; a sound generator is far below).
std::pair<double, double> chi_square(const std::vector<std::int64_t>& counts, std::int64_t n) {
  const double expect = static_cast<double>(n) / static_cast<double>(counts.size());
  double chi = 0;
  for (std::int64_t c : counts) chi += (static_cast<double>(c) - expect) * (static_cast<double>(c) - expect) / expect;
  const double df = static_cast<double>(counts.size() - 1);
  return {chi, df + 6 * std::sqrt(2 * df)};
}

TEST(RandomStatistics, UniformMeanVarianceAndBins) {
  for (std::int64_t key : {std::int64_t{0}, std::int64_t{1}, kKey}) {
    double s = 0, s2 = 0;
    std::vector<std::int64_t> bins(256), bins32(256);
    for (std::int64_t i = 0; i < kN; ++i) {
      const double u = rnd::uniform_f64(key, i);
      ASSERT_TRUE(u >= 0 && u < 1);
      s += u;
      s2 += u * u;
      ++bins[static_cast<std::size_t>(u * 256)];
      const float f = rnd::uniform_f32(key, i);
      ASSERT_TRUE(f >= 0 && f < 1);
      ++bins32[static_cast<std::size_t>(f * 256)];
    }
    const double n = kN, mean = s / n, var = s2 / n - mean * mean;
    // Standard errors: sigma / sqrt(n) with sigma^2 = 1/12; the variance's sqrt((mu4 - sigma^4) / n), mu4 = 1/80.
    EXPECT_NEAR(mean, 0.5, 6 * std::sqrt(1.0 / 12 / n));
    EXPECT_NEAR(var, 1.0 / 12, 6 * std::sqrt((1.0 / 80 - 1.0 / 144) / n));
    const auto [chi, bound] = chi_square(bins, kN);
    EXPECT_LT(chi, bound) << "key " << key;
    const auto [chi32, bound32] = chi_square(bins32, kN);
    EXPECT_LT(chi32, bound32) << "key " << key;
  }
}

TEST(RandomStatistics, NormalMomentsAndEqualProbabilityBins) {
  for (std::int64_t key : {std::int64_t{0}, kKey}) {
    double s = 0, s2 = 0, s4 = 0;
    std::int64_t beyond3 = 0;
    std::vector<std::int64_t> bins(128);
    for (std::int64_t i = 0; i < kN; ++i) {
      const double z = rnd::normal_f64(key, i);
      s += z;
      s2 += z * z;
      s4 += z * z * z * z;
      beyond3 += std::fabs(z) > 3;
      const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);  // the normal CDF: bins of equal probability
      ++bins[std::min<std::size_t>(127, static_cast<std::size_t>(cdf * 128))];
    }
    const double n = kN, mean = s / n, var = s2 / n - mean * mean;
    EXPECT_NEAR(mean, 0, 6 / std::sqrt(n));
    EXPECT_NEAR(var, 1, 6 * std::sqrt(2 / n));  // var of z^2 is 2
    EXPECT_NEAR(s4 / n, 3, 6 * std::sqrt(96 / n));  // kurtosis 3; var of z^4 is 105 - 9
    const double p3 = 0.0026997960632601866;     // P(|z| > 3)
    EXPECT_NEAR(static_cast<double>(beyond3) / n, p3, 6 * std::sqrt(p3 * (1 - p3) / n));
    const auto [chi, bound] = chi_square(bins, kN);
    EXPECT_LT(chi, bound) << "key " << key;
  }
}

TEST(RandomStatistics, BitsAreBalancedAndKeysAreIndependent) {
  std::vector<std::int64_t> ones(64);
  double corr = 0;
  for (std::int64_t i = 0; i < kN; ++i) {
    const auto b = static_cast<std::uint64_t>(rnd::bits(kKey, i));
    for (int k = 0; k < 64; ++k) ones[k] += (b >> k) & 1;
    // Neighbouring keys and neighbouring counters: uncorrelated.
    corr += (rnd::uniform_f64(kKey, i) - 0.5) * (rnd::uniform_f64(kKey + 1, i) - 0.5);
  }
  for (int k = 0; k < 64; ++k) EXPECT_NEAR(static_cast<double>(ones[k]) / kN, 0.5, 6 * 0.5 / std::sqrt(double(kN))) << "bit " << k;
  EXPECT_NEAR(corr / kN, 0, 6 * (1.0 / 12) / std::sqrt(double(kN)));
}

TEST(RandomStatistics, PackedUniformAndNormalMomentsBinsAndPairs) {
  for (std::int64_t key : {std::int64_t{0}, kKey}) {
    double su = 0, su2 = 0, sz = 0, sz2 = 0, sz4 = 0, c01 = 0, c01sq = 0;
    std::vector<std::int64_t> bins32(256), binsz(128);
    for (std::int64_t g = 0; g < kN; ++g) {
      const double u = rnd::packed_element(Intrinsic::RandomPackedUniformF32, key, g).as_float;
      ASSERT_TRUE(u >= 0 && u < 1);
      su += u;
      su2 += u * u;
      ++bins32[static_cast<std::size_t>(u * 256)];
      const double z = rnd::packed_element(Intrinsic::RandomPackedNormalF64, key, g).as_float;
      sz += z;
      sz2 += z * z;
      sz4 += z * z * z * z;
      ++binsz[std::min<std::size_t>(127, static_cast<std::size_t>(0.5 * std::erfc(-z / std::numbers::sqrt2) * 128))];
      if (g % 2 == 1) {  // a pair: Box-Muller's outputs are independent, so uncorrelated, also in their squares
        const double z0 = rnd::packed_element(Intrinsic::RandomPackedNormalF64, key, g - 1).as_float;
        c01 += z0 * z;
        c01sq += (z0 * z0 - 1) * (z * z - 1);
      }
    }
    const double n = kN, pairs = n / 2;
    EXPECT_NEAR(su / n, 0.5, 6 * std::sqrt(1.0 / 12 / n));
    EXPECT_NEAR(su2 / n - (su / n) * (su / n), 1.0 / 12, 6 * std::sqrt((1.0 / 80 - 1.0 / 144) / n));
    EXPECT_NEAR(sz / n, 0, 6 / std::sqrt(n));
    EXPECT_NEAR(sz2 / n - (sz / n) * (sz / n), 1, 6 * std::sqrt(2 / n));
    EXPECT_NEAR(sz4 / n, 3, 6 * std::sqrt(96 / n));
    EXPECT_NEAR(c01 / pairs, 0, 6 / std::sqrt(pairs));      // var of z0 z1 is 1
    EXPECT_NEAR(c01sq / pairs, 0, 6 * 2 / std::sqrt(pairs));  // var of (z0^2 - 1)(z1^2 - 1) is 4
    const auto [chi, bound] = chi_square(bins32, kN);
    EXPECT_LT(chi, bound) << "key " << key;
    const auto [chiz, boundz] = chi_square(binsz, kN);
    EXPECT_LT(chiz, boundz) << "key " << key;
  }
}

}  // namespace
}  // namespace kiln
