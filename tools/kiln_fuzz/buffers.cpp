// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tools/kiln_fuzz/buffers.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "ir/semantics.hpp"
#include "tools/test_support/compare.hpp"

namespace kiln::fuzz {

Outcome::~Outcome() { std::free(result_array.data); }

namespace {

/// Fills `out` (sizeof T bytes) with a random value of T.
template <class T>
void random_value(std::mt19937_64& rng, bool integral, void* out) {
  T v{};
  std::uniform_int_distribution<int> percent(0, 99);
  const int p = percent(rng);
  if constexpr (std::is_same_v<T, bool>) {
    v = p < 50;
  } else if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    // Drawn as int64 and converted (wrapping): uniform_int_distribution takes no 8-bit types.
    const std::int64_t edges[] = {0, 1, -1, 2, 31, 32, 64, static_cast<std::int64_t>(L::max()),
                                  static_cast<std::int64_t>(L::min()), static_cast<std::int64_t>(L::min()) + 1};
    if (p < 70) v = static_cast<T>(std::uniform_int_distribution<int>(-100, 100)(rng));
    else if (p < 90) v = static_cast<T>(edges[std::uniform_int_distribution<int>(0, 9)(rng)]);
    else v = static_cast<T>(std::uniform_int_distribution<std::uint64_t>()(rng));
  } else if constexpr (ir::sem::is_half_v<T>) {
    float f;
    random_value<float>(rng, integral, &f);  // NaN, ±inf, ±0 and f32's extremes become f16/bf16's (or ±inf, ±0)
    v = T(f);
  } else {
    using L = std::numeric_limits<T>;
    const T edges[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(-0.0), T(0), L::max(), L::lowest(),
                       L::denorm_min(), T(1e30), T(0.5)};
    if (integral || p < 15) v = static_cast<T>(std::uniform_int_distribution<int>(-10, 10)(rng));
    else if (p < 80) v = std::uniform_real_distribution<T>(-10, 10)(rng);
    else v = edges[std::uniform_int_distribution<int>(0, 9)(rng)];
  }
  std::memcpy(out, &v, sizeof v);
}

void random_value(DType t, std::mt19937_64& rng, bool integral, void* out) {
  ir::sem::with_type(t, [&](auto x) { random_value<decltype(x)>(rng, integral, out); });
}

/// Whether `got` may stand for `ref` (sizeof(T) bytes each).
template <class T>
bool same(const void* ref, const void* got, Precision precision) {
  if constexpr (ir::sem::is_half_v<T>) {
    T r, g;
    std::memcpy(&r, ref, sizeof r);
    std::memcpy(&g, got, sizeof g);
    const float rf = static_cast<float>(r), gf = static_cast<float>(g);
    if (std::isnan(rf) || std::isnan(gf)) return std::isnan(rf) && std::isnan(gf);
    if (precision == Precision::Exact) return r.bits == g.bits;
    // An f32 result a few ulps apart may round to the neighbouring f16/bf16 value: one ulp of the narrow type.
    return test_support::ulp_distance(rf, gf) <= (std::is_same_v<T, half> ? 1 << 13 : 1 << 16);
  } else if constexpr (std::is_floating_point_v<T>) {
    T r, g;
    std::memcpy(&r, ref, sizeof r);
    std::memcpy(&g, got, sizeof g);
    if (std::isnan(r) || std::isnan(g)) return std::isnan(r) && std::isnan(g);  // any payload, any sign
    if (precision == Precision::Exact) return std::memcmp(&r, &g, sizeof r) == 0;
    return test_support::ulp_distance(r, g) <= 16;  // libm, libmvec and LLVM's constant folding are each within a few ulps
  } else {
    (void)precision;
    return std::memcmp(ref, got, sizeof(T)) == 0;  // bool too: the byte must be exactly 0 or 1, like the reference's
  }
}

std::string show(DType t, const void* p) {
  char buf[64];
  ir::sem::with_type(t, [&](auto x) {
    decltype(x) v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::is_same_v<decltype(x), bool>) std::snprintf(buf, sizeof buf, "%d", static_cast<int>(*static_cast<const unsigned char*>(p)));
    else if constexpr (is_float_element_v<decltype(x)>) std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
    else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  });
  return buf;
}

bool same_value(DType t, const void* ref, const void* got, Precision precision) {
  return ir::sem::with_type(t, [&](auto x) { return same<decltype(x)>(ref, got, precision); });
}

void compare_elements(const std::string& what, const TestArray& ref, const TestArray& got, Precision precision,
                      std::string& out) {
  int shown = 0;
  for (std::int64_t i = 0; i < ref.size() && shown < 4; ++i)
    if (!same_value(ref.elem(), ref.element(i), got.element(i), precision)) {
      out += what + " element " + std::to_string(i) + ": expected " + show(ref.elem(), ref.element(i)) + ", got " +
             show(ref.elem(), got.element(i)) + "\n";
      ++shown;
    }
}

}  // namespace

Args make_args(const Program& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL);
  Args args;
  const auto& params = p.function.params;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const DType t = params[i]->type.elem;
    const ParamSpec& spec = p.params[i];
    if (params[i]->type.is_array()) {
      TestArray a(t, spec.shape, spec.layout);
      for (std::int64_t k = 0; k < a.size(); ++k) random_value(t, rng, spec.integral, a.element(k));
      args.push_back(test_support::array_arg(std::move(a)));
    } else {
      test_support::Arg arg{t, {}, std::nullopt};
      random_value(t, rng, false, &arg.scalar);
      args.push_back(std::move(arg));
    }
  }
  return args;
}

std::string compare(const Program& p, const Outcome& ref, const Outcome& got) {
  if (!ref.error.empty() || !got.error.empty()) {
    if (ref.error == got.error) return "";
    return "failure differs: expected \"" + ref.error + "\", got \"" + got.error + "\"\n";
  }
  std::string out;
  const auto& f = p.function;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const auto& ref_array = ref.args[i].array;
    if (!ref_array) continue;
    compare_elements("argument " + f.params[i]->name, *ref_array, *got.args[i].array, p.params[i].precision, out);
    if (ref_array->gap_bytes() != got.args[i].array->gap_bytes())
      out += "argument " + f.params[i]->name + ": bytes outside its elements changed\n";
  }
  if (f.returns_scalar() && !same_value(f.result->type, &ref.result, &got.result, p.result_precision))
    out += "result: expected " + show(f.result->type, &ref.result) + ", got " + show(f.result->type, &got.result) + "\n";
  if (f.returns_array()) {
    const int rank = f.result_array->type.rank;
    std::vector<std::int64_t> shape;
    for (int k = 0; k < rank; ++k) {
      if (ref.result_array.shape[k] != got.result_array.shape[k] || ref.result_array.strides[k] != got.result_array.strides[k])
        return out + "result array: shapes or strides differ\n";
      shape.push_back(ref.result_array.shape[k]);
    }
    // Wrap both results (row-major, as every backend returns them) to compare them element by element.
    TestArray r(f.result_array->type.elem, shape), g(f.result_array->type.elem, shape);
    const auto bytes = static_cast<std::size_t>(r.size() * size_of(r.elem()));
    if (bytes) {
      std::memcpy(r.desc().data, ref.result_array.data, bytes);
      std::memcpy(g.desc().data, got.result_array.data, bytes);
    }
    compare_elements("result array", r, g, p.result_precision, out);
  }
  return out;
}

}  // namespace kiln::fuzz
