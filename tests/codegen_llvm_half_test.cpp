// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// f16 conversions in the CPU backend (codegen/llvm/half_casts.cpp): with the host's F16C (vcvtph2ps /
// vcvtps2ph) and with it turned off (kiln's integer steps), every f16 bit pattern widened and a set of f32
// edge cases narrowed must give exactly the bits kiln/half.hpp defines and the interpreter gives: NaN payloads
// and signs, signalling NaNs, ±inf, ±0, subnormals, ties to even, overflow to inf. Both as loops LLVM
// vectorizes and as vector lanes (a body with an in-order sum).
#include <cstring>
#include <limits>
#include <random>

#include "codegen_llvm_support.hpp"
#include "kiln/half.hpp"

namespace kiln::llvm_test {
namespace {

std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
float float_of(std::uint32_t b) { return std::bit_cast<float>(b); }

/// The f32 values a conversion to f16 can get wrong, as bits.
std::vector<std::uint32_t> narrowing_cases() {
  std::vector<std::uint32_t> v = {
      0x00000000u, 0x80000000u,                            // ±0
      0x7f800000u, 0xff800000u,                            // ±inf
      0x7fc00000u, 0xffc00000u,                            // quiet NaNs
      0x7f800001u, 0xff800001u, 0x7fa00000u, 0x7f802000u,  // signalling NaNs, payload low or high
      0x7fffffffu, 0xffffe000u, 0x7fc02000u, 0x7fc00001u,  // quiet NaNs with payloads F16C would keep
      0x00000001u, 0x80000001u, 0x007fffffu,               // f32 subnormals: to ±0
      bits_of(65504.0f), bits_of(65519.99f), bits_of(65520.0f), bits_of(-65520.0f),  // largest finite; overflow
      bits_of(std::numeric_limits<float>::max()), bits_of(1e-8f),
      bits_of(0x1p-24f), bits_of(0x1p-25f), bits_of(0x1.8p-25f), bits_of(0x1.8p-24f),  // f16 subnormal ties
      bits_of(0x1p-14f), bits_of(0x1.ffcp-15f), bits_of(0x1.ffep-15f),              // subnormal/normal edge
      bits_of(1.0f + 0x1p-11f), bits_of(1.0f + 0x3p-11f), bits_of(-(1.0f + 0x1p-11f)),  // ties to even
      bits_of(2049.0f), bits_of(2051.0f), bits_of(0.1f), bits_of(-3.14159f)};
  // Every f16 value and its neighbours halfway to the next: ties and near-ties in every binade.
  for (std::uint32_t h = 0; h < 0x7c00u; h += 7) {
    const float lo = static_cast<float>(half::from_bits(static_cast<std::uint16_t>(h)));
    const float hi = static_cast<float>(half::from_bits(static_cast<std::uint16_t>(h + 1)));
    const std::uint32_t mid = bits_of(lo + (hi - lo) / 2);
    for (std::uint32_t b : {mid - 1, mid, mid + 1}) v.insert(v.end(), {b, b | 0x80000000u});
  }
  std::mt19937 rng(7);
  for (int k = 0; k < 20000; ++k) v.push_back(rng());
  return v;
}

/// widen[i] = f32(h[i]); narrow[i] = f16(f[i]): plain loops (LLVM's vectorizer), and the same conversions in
/// a body that sums in order, which runs in vector lanes.
ir::Function conversions() {
  const Var h = array_param("h", DType::F16, 1, true), widen = array_param("widen", DType::F32, 1, true);
  const Var f = array_param("f", DType::F32, 1, true), narrow = array_param("narrow", DType::F16, 1, true);
  const Var m = array_param("m", DType::F16, 2, true), sums = array_param("sums", DType::F16, 1, true);
  const Var i = index("i"), j = index("j"), r = index("r"), k = index("k");
  const Var acc = local("acc", DType::F32);
  // sums[r] = f16(sum over k of f32(m[k, r])), in order: lanes across r, each a column.
  const Stmt column_sum = block({let(acc, num(DType::F32, 0)),
                                 for_loop(k, i64c(0), dim(m, 0),
                                          block({assign(acc, val(acc) + cast(DType::F32, at(m, {val(k), val(r)})))})),
                                 store(sums, {val(r)}, cast(DType::F16, val(acc)))});
  return function("half_conversions", {h, widen, f, narrow, m, sums},
                  {parfor1(i, dim(h), store(widen, {val(i)}, cast(DType::F32, at(h, {val(i)})))),
                   parfor1(j, dim(f), store(narrow, {val(j)}, cast(DType::F16, at(f, {val(j)})))),
                   parfor1(r, dim(m, 1), column_sum)});
}

Args conversion_inputs(const std::vector<std::uint32_t>& cases) {
  TestArray h(DType::F16, {0x10000}), widen(DType::F32, {0x10000});
  for (std::int64_t b = 0; b < 0x10000; ++b) h.set<std::uint16_t>(b, static_cast<std::uint16_t>(b));
  const auto n = static_cast<std::int64_t>(cases.size());
  TestArray f(DType::F32, {n}), narrow(DType::F16, {n});
  for (std::int64_t e = 0; e < n; ++e) f.set<std::uint32_t>(e, cases[static_cast<std::size_t>(e)]);
  // A column per f16 pattern, its value in row 0 and zeros below: each sum is the value itself (x + 0 is x,
  // NaNs included, but -0 + 0 is +0), narrowed again.
  TestArray m(DType::F16, {3, 0x10000}), sums(DType::F16, {0x10000});
  for (std::int64_t e = 0; e < 3 * 0x10000; ++e) m.set<std::uint16_t>(e, e < 0x10000 ? static_cast<std::uint16_t>(e) : 0);
  return {array_arg(h), array_arg(widen), array_arg(f), array_arg(narrow), array_arg(m), array_arg(sums)};
}

/// Every element of every array argument bitwise equal (NaN payloads included).
void expect_same_bits(const Outcome& want, const Outcome& got, const std::string& what) {
  ASSERT_EQ(got.status, 0) << got.message;
  for (std::size_t a = 0; a < want.args.size(); ++a) {
    const TestArray& x = *want.args[a].array;
    const TestArray& y = *got.args[a].array;
    const auto size = static_cast<std::size_t>(size_of(x.elem()));
    int shown = 0;
    for (std::int64_t e = 0; e < x.size() && shown < 5; ++e)
      if (std::memcmp(x.element(e), y.element(e), size) != 0) {
        std::uint32_t wx = 0, wy = 0;
        std::memcpy(&wx, x.element(e), size);
        std::memcpy(&wy, y.element(e), size);
        ADD_FAILURE() << what << ": argument " << a << " element " << e << ": 0x" << std::hex << wy << " instead of 0x" << wx;
        ++shown;
      }
  }
}

TEST(HalfHardware, EveryTargetGivesTheDefinedBits) {
  const ir::Function f = conversions();
  const std::vector<std::uint32_t> cases = narrowing_cases();
  const Args inputs = conversion_inputs(cases);
  const auto want = run_interpreter(f, inputs);
  // The interpreter is kiln/half.hpp's definition.
  for (std::int64_t b = 0; b < 0x10000; ++b)
    ASSERT_EQ(want->args[1].array->get<std::uint32_t>(b),
              bits_of(detail::f16_bits_to_f32(static_cast<std::uint16_t>(b))));
  for (std::size_t e = 0; e < cases.size(); ++e)
    ASSERT_EQ(want->args[3].array->get<std::uint16_t>(static_cast<std::int64_t>(e)),
              detail::f32_to_f16_bits(float_of(cases[e])));

  codegen::CodegenOptions opts;
  opts.opt_level = 2;  // vectorized loops and lanes
  for (const char* features : {"", "-f16c"}) {
    SCOPED_TRACE(std::string("CPU features '") + features + "'");
    cpu::CpuOptions cpu_opts;
    cpu_opts.features = features;
    cpu_opts.keep_llvm_ir = true;
    const auto k = cpu::compile(f, opts, cpu_opts);
    // With F16C the conversions are LLVM's (vectors of `half`), without it kiln's integer steps.
    const bool hardware = *features == 0 && __builtin_cpu_supports("f16c");
    EXPECT_EQ(k.llvm_ir.find("fpext <") != std::string::npos, hardware) << k.llvm_ir;
    EXPECT_EQ(k.llvm_ir.find("fptrunc <") != std::string::npos, hardware);
    for (int threads : {1, 3}) {
      ThreadCount tc(threads);
      expect_same_bits(*want, *run_kernel(k, f, inputs), "threads " + std::to_string(threads));
    }
  }
}

TEST(HalfHardware, NaNsAndTiesByName) {
  // The definition itself, spelled out (what F16C alone would do differently is in the comments).
  EXPECT_EQ(detail::f32_to_f16_bits(float_of(0x7fc02000u)), 0x7e00u);  // F16C: 0x7e01 (payload kept)
  EXPECT_EQ(detail::f32_to_f16_bits(float_of(0xff800001u)), 0xfe00u);  // sign kept, quiet
  EXPECT_EQ(bits_of(detail::f16_bits_to_f32(0x7c01u)), 0x7f802000u);   // F16C: 0x7fc02000 (quieted)
  EXPECT_EQ(bits_of(detail::f16_bits_to_f32(0xfe01u)), 0xffc02000u);
  EXPECT_EQ(detail::f32_to_f16_bits(65520.0f), 0x7c00u);              // halfway to 65536 rounds to inf
  EXPECT_EQ(detail::f32_to_f16_bits(65519.99f), 0x7bffu);
  EXPECT_EQ(detail::f32_to_f16_bits(0x1p-25f), 0x0000u);              // tie between 0 and 2^-24: even
  EXPECT_EQ(detail::f32_to_f16_bits(0x1.8p-24f), 0x0002u);            // tie between 1 and 2 ulps: even
  EXPECT_EQ(detail::f32_to_f16_bits(1.0f + 0x1p-11f), 0x3c00u);
  EXPECT_EQ(detail::f32_to_f16_bits(1.0f + 0x3p-11f), 0x3c02u);
  EXPECT_EQ(detail::f32_to_f16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(detail::f32_to_f16_bits(float_of(0x80000001u)), 0x8000u);  // an f32 subnormal: -0
}

}  // namespace
}  // namespace kiln::llvm_test
