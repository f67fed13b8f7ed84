// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the array DSL tests: tracing a lambda to IR without compiling it, running IR on the interpreter
// with kiln's calling convention, random inputs, and comparisons that treat NaN as a value.
#pragma once

#include <gtest/gtest.h>

#include "tests/error_test_util.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/trace_context.hpp"
#include "ir/interpreter.hpp"
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "kiln/kiln.hpp"
#include "passes/pass.hpp"

namespace kiln::testing {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

inline Options interp() {
  Options o;
  o.target = Target::interpreter;
  return o;
}
inline Options cpu() {
  Options o;
  o.target = Target::cpu;
  return o;
}

/// The message of the exception of type E that fn throws ("" and a failure otherwise).
template <class E>
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected another exception type, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected an exception, nothing was thrown";
  return "";
}

// ---- random inputs ---------------------------------------------------------------------------------------

/// Values in [lo, hi]; with `specials`, some are NaN, +-inf, +-0.
inline std::vector<double> random_values(size_t n, std::uint64_t seed, double lo = -4, double hi = 4,
                                         bool specials = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  if (specials && n > 0) {
    const double sp[] = {kNaN, kInf, -kInf, 0.0, -0.0};
    for (size_t k = 0; k < n / 7 + 1; ++k) v[rng() % n] = sp[rng() % 5];
  }
  return v;
}

inline NDArray<double> random_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed, bool specials = false) {
  NDArray<double> a({m, n});
  const auto v = random_values(static_cast<size_t>(m * n), seed, -4, 4, specials);
  std::copy(v.begin(), v.end(), a.data());
  return a;
}

/// Equal as values: NaN equals NaN, and -0 equals +0 unless `signed_zero`.
inline bool same(double a, double b, bool signed_zero = false) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (signed_zero && a == 0 && b == 0) return std::signbit(a) == std::signbit(b);
  return a == b;
}
/// Within `rel` relative (or absolute below 1) error; NaN equals NaN, infinities must match.
inline bool close(double a, double b, double rel) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= rel * std::fmax(1.0, std::fabs(b));
}

template <class T, class U>
void expect_values(const std::vector<T>& got, const std::vector<U>& want, double rel = 0, const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    EXPECT_TRUE(rel == 0 ? same(g, w) : close(g, w, rel)) << what << " [" << i << "]: got " << g << ", want " << w;
  }
}

// ---- tracing to IR and interpreting it --------------------------------------------------------------------

/// The IR `fn` traces to for arguments like `args` (ranks, unit strides and unit extents as a call would
/// see them), with parameters named `names`.
template <class F, class... A>
ir::Function trace_ir(const std::string& name, const std::vector<std::string>& names, const F& fn, A&&... args) {
  const std::vector<detail::ParamSpec> specs = detail::param_specs<F>();
  std::vector<detail::ArgValue> av = {detail::make_arg(args)...};
  std::vector<detail::ParamInstance> inst;
  for (size_t i = 0; i < specs.size(); ++i) {
    detail::ParamInstance p{specs[i], 0, false, 0};
    if (specs[i].is_array) {
      const ArrayDesc& d = av[i].array;
      p.rank = av[i].rank;
      p.unit_stride = d.strides[p.rank - 1] == 1 || d.shape[p.rank - 1] <= 1;
      for (int k = 0; k < p.rank; ++k)
        if (d.shape[k] == 1) p.unit_dims = static_cast<std::uint8_t>(p.unit_dims | (1u << k));
    }
    inst.push_back(p);
  }
  detail::TraceContext ctx(name, inst, names);
  detail::trace_erased<F>(&fn);
  return ctx.finish();
}

/// What a run produced: the result's bytes (a scalar, or an array's elements in row-major order) and shape,
/// every array argument's elements afterwards, or the error it threw.
struct Outcome {
  std::vector<unsigned char> result;
  DType result_type = DType::F64;
  std::vector<std::int64_t> shape;
  std::vector<std::vector<unsigned char>> arrays;
  std::vector<DType> array_types;
  std::string error;

  /// Elements equal bit for bit, except that any two NaNs are equal: which NaN an operation on NaNs gives
  /// is not specified (compilers may swap the operands of a commutative operation).
  static bool same_elements(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b, DType t) {
    if (a.size() != b.size()) return false;
    if (!is_float(t)) return a == b;
    const size_t w = static_cast<size_t>(size_of(t));
    for (size_t k = 0; k < a.size(); k += w) {
      if (std::memcmp(&a[k], &b[k], w) == 0) continue;
      double x, y;
      if (t == DType::F64) {
        std::memcpy(&x, &a[k], 8);
        std::memcpy(&y, &b[k], 8);
      } else {
        float fx, fy;
        std::memcpy(&fx, &a[k], 4);
        std::memcpy(&fy, &b[k], 4);
        x = fx, y = fy;
      }
      if (!(std::isnan(x) && std::isnan(y))) return false;
    }
    return true;
  }

  bool operator==(const Outcome& o) const {
    if (shape != o.shape || error != o.error || arrays.size() != o.arrays.size()) return false;
    if (!same_elements(result, o.result, result_type)) return false;
    for (size_t k = 0; k < arrays.size(); ++k)
      if (!same_elements(arrays[k], o.arrays[k], array_types[k])) return false;
    return true;
  }
};

inline std::vector<unsigned char> elements(const ArrayDesc& d, int rank, int esize) {
  std::int64_t count = 1;
  for (int k = 0; k < rank; ++k) count *= d.shape[k];
  std::vector<unsigned char> out;
  if (count <= 0) return out;
  std::vector<std::int64_t> i(static_cast<size_t>(rank), 0);
  for (std::int64_t n = 0; n < count; ++n) {
    std::int64_t off = 0;
    for (int k = 0; k < rank; ++k) off += i[static_cast<size_t>(k)] * d.strides[k];
    const auto* p = static_cast<const unsigned char*>(d.data) + off * esize;
    out.insert(out.end(), p, p + esize);
    for (int k = rank; k-- > 0;) {
      if (++i[static_cast<size_t>(k)] < d.shape[k]) break;
      i[static_cast<size_t>(k)] = 0;
    }
  }
  return out;
}

/// Runs f on the interpreter. Array arguments are copied first, so every run sees the same inputs.
template <class... A>
Outcome interpret(const ir::Function& f, const A&... args) {
  std::vector<detail::ArgValue> av = {detail::make_arg(args)...};
  std::vector<std::vector<unsigned char>> copies;
  std::vector<ArrayDesc> descs(av.size());
  std::vector<ScalarSlot> scalars(av.size());
  std::vector<void*> ptrs;
  for (size_t i = 0; i < av.size(); ++i) {
    if (av[i].is_array) {
      // A dense row-major copy (the interpreter honours strides; copies keep inputs untouched).
      const int esize = size_of(av[i].dtype);
      copies.push_back(elements(av[i].array, av[i].rank, esize));
      descs[i] = av[i].array;
      descs[i].data = copies.back().data();
      std::int64_t s = 1;
      for (int k = av[i].rank; k-- > 0;) {
        descs[i].strides[k] = s;
        s *= descs[i].shape[k];
      }
      ptrs.push_back(&descs[i]);
    } else {
      // The parameter's own type: tests pass exactly the declared types.
      scalars[i] = av[i].scalar;
      ptrs.push_back(&scalars[i]);
    }
  }
  Outcome out;
  ArrayDesc result_array{};
  ScalarSlot result_scalar{};
  try {
    if (f.returns_array()) {
      ir::interpret(f, ptrs.data(), &result_array);
      const int rank = f.result_array->type.rank;
      out.result = elements(result_array, rank, size_of(f.result_array->type.elem));
      out.result_type = f.result_array->type.elem;
      out.shape.assign(result_array.shape, result_array.shape + rank);
      std::free(result_array.data);
    } else {
      ir::interpret(f, ptrs.data(), &result_scalar);
      if (f.returns_scalar()) {
        const auto* p = reinterpret_cast<const unsigned char*>(&result_scalar);
        out.result.assign(p, p + size_of(f.result->type));
        out.result_type = f.result->type;
      }
    }
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  for (size_t i = 0; i < av.size(); ++i)
    if (av[i].is_array) {
      out.arrays.push_back(elements(descs[i], av[i].rank, size_of(av[i].dtype)));
      out.array_types.push_back(av[i].dtype);
    }
  return out;
}

/// Runs `pass` on f, checking that the result verifies and that the interpreter gives the same outcome on
/// the inputs before and after (bit for bit, errors included). Returns the new IR.
template <class... A>
ir::Function differential(ir::Function (*pass)(const ir::Function&, passes::PassContext&), const ir::Function& f,
                          const A&... args) {
  passes::PassContext ctx;
  ir::Function g = pass(f, ctx);
  const auto problems = ir::verify(g);
  std::string text;
  for (const auto& p : problems) text += p + "\n";
  EXPECT_TRUE(problems.empty()) << text << ir::to_string(g);
  const Outcome before = interpret(f, args...), after = interpret(g, args...);
  EXPECT_TRUE(before == after) << "before: " << (before.error.empty() ? "ok" : before.error)
                               << "\nafter: " << (after.error.empty() ? "ok" : after.error) << "\nIR before:\n"
                               << ir::to_string(f) << "IR after:\n"
                               << ir::to_string(g);
  return g;
}

/// Compares `text` with tests/golden/<name>; KILN_UPDATE_GOLDEN=1 rewrites the file (and fails).
inline void expect_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(KILN_GOLDEN_DIR) + "/" + name;
  if (const char* u = std::getenv("KILN_UPDATE_GOLDEN"); u && *u && std::string(u) != "0") {
    std::ofstream(path, std::ios::binary) << text;
    ADD_FAILURE() << "rewrote golden file " << path << "; review it and rerun without KILN_UPDATE_GOLDEN";
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), text) << "golden file " << path << " differs";
}

/// Source line numbers replaced by LINE, so golden files survive edits of the test file.
inline std::string without_lines(const std::string& s) {
  return std::regex_replace(s, std::regex(R"(([a-z_]+\.cpp):\d+)"), "$1:LINE");
}

/// Kernels as users write them, shared by the tests that trace them through the passes (lower_array_ops_test,
/// serialize_test): reductions feeding elementwise ops, row statistics, slices read and written in place, and
/// chained matrix-vector products with an argmin.
namespace sample_kernels {
inline constexpr auto softmax = [](Array<double, 1> a) {
  auto e = kiln::exp(a - kiln::max(a));
  return e / kiln::sum(e);
};
inline constexpr auto normalize = [](Array<double, 2> x) {
  return (x - kiln::mean(x, 1, keepdims)) / kiln::std(x, 1, keepdims);
};
inline constexpr auto shifted = [](Array<double, 1> a) {
  auto b = zeros_like(a);
  b(kiln::range(1, -1)) = (a[slice(none, -2)] + a[slice(2, none)]) * 0.5;
  a(kiln::range(1, none)) += a(kiln::range(0, -1));
  return b;
};
inline constexpr auto products = [](Array<double, 2> m, Array<double, 1> v) {
  return dot(m, v) + dot(v, dot(m, dot(v, m))) + to_double(kiln::argmin(m, 1));
};
}  // namespace sample_kernels

}  // namespace kiln::testing
