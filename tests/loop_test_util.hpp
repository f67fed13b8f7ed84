// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Helpers for the loop-pass tests (fusion_test.cpp): IR shorthands, a builder that lowers NumPy-style
// array statements to parfors the way lower_array_ops does, and a differential runner that interprets a
// function before and after a transformation on random inputs and compares everything bit for bit.
#pragma once

#include <gtest/gtest.h>

#include "tests/error_test_util.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/interpreter.hpp"
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "ir/visitor.hpp"
#include "kiln/abi.hpp"
#include "kiln/error.hpp"
#include "tools/test_support/ir_shorthands.hpp"

#ifndef KILN_GOLDEN_DIR
#error "KILN_GOLDEN_DIR must be defined by the build (tests/CMakeLists.txt)"
#endif

namespace kiln::looptest {

using ir::Expr;
using ir::Stmt;
using ir::Var;

// ---- IR shorthands: the shared ones (tools/test_support), and the F64-by-default ones of the loop tests ----

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary

// The loop tests work on F64 arrays and locals, so these default the element type (test_support's take it).
inline Var array_param(const std::string& name, int rank = 1) {
  return ir::make_var(name, ir::Type::array(DType::F64, rank, true), ir::VarKind::Param);
}
inline Var local(const std::string& name, DType t = DType::F64) {
  return ir::make_var(name, ir::Type::scalar(t), ir::VarKind::Local);
}
inline Var local_array(const std::string& name, int rank = 1) {
  return ir::make_var(name, ir::Type::array(DType::F64, rank, true), ir::VarKind::Local);
}

inline Expr f64c(double v) { return ir::make_float(DType::F64, v); }
inline Expr add(Expr a, Expr b) { return bin(BinaryOp::Add, std::move(a), std::move(b)); }
inline Expr sub(Expr a, Expr b) { return bin(BinaryOp::Sub, std::move(a), std::move(b)); }
inline Expr mul(Expr a, Expr b) { return bin(BinaryOp::Mul, std::move(a), std::move(b)); }
inline Expr div(Expr a, Expr b) { return bin(BinaryOp::Div, std::move(a), std::move(b)); }
inline Expr call(Intrinsic fn, Expr a) { return ir::make_call(fn, {std::move(a)}); }  // one-argument intrinsics
inline Expr load(const Var& a, std::vector<Expr> idx) { return ir::make_load(a, std::move(idx)); }

inline Stmt alloc(const Var& a, std::vector<Expr> shape) { return ir::make_allocate(a, std::move(shape)); }
// 1-d loops over a list of statements (test_support's parfor1 and for_loop take one body statement).
inline Stmt parfor(const Var& i, Expr end, std::vector<Stmt> body, std::vector<ir::Reduction> red = {},
                   std::string origin = "test") {
  return ir::make_parfor({i}, {i64c(0)}, {std::move(end)}, block(std::move(body)), std::move(red), std::move(origin));
}
inline Stmt for_loop(const Var& i, Expr begin, Expr end, std::vector<Stmt> body) {
  return ir::make_for(i, std::move(begin), std::move(end), block(std::move(body)));
}

inline std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// ---- array statements lowered to parfors -----------------------------------------------------------------

/// Builds the parfor-level IR of a sequence of 1-d array statements over arrays of one extent, as
/// lower_array_ops emits it: an elementwise op is `alloc t (n)` then `parfor (i in 0 .. n) { t[i] = v }`;
/// a whole-array reduction is `let r = identity` then a parfor reducing into r. Origins name the op and
/// its "source line" (its position in the program).
class ArrayProgram {
 public:
  explicit ArrayProgram(std::string name) : name_(std::move(name)) {}

  Var input(const std::string& name) {
    Var v = array_param(name);
    params_.push_back(v);
    if (!extent_) extent_ = dim(v);
    return v;
  }
  Var scalar(const std::string& name) {
    Var v = param(name, DType::F64);
    params_.push_back(v);
    return v;
  }
  const Expr& extent() const { return extent_; }

  /// t = op(...): `value` gives the element at index i.
  Var map(const std::string& name, const std::string& op, const std::function<Expr(const Expr&)>& value) {
    const Var t = local_array(name);
    const Var i = index("i");
    body_.push_back(alloc(t, {extent_}));
    body_.push_back(parfor(i, extent_, {store(t, {val(i)}, value(val(i)))}, {}, where(op)));
    return t;
  }

  /// r = op-reduction of value(i) over the array.
  Var reduce(const std::string& name, const std::string& op, ReduceOp rop, const std::function<Expr(const Expr&)>& value) {
    const Var r = local(name);
    const Var i = index("i");
    body_.push_back(let(r, ir::identity_of(rop, DType::F64)));
    const Expr v = value(val(i));
    const Expr update = rop == ReduceOp::Add ? add(val(r), v)
                        : rop == ReduceOp::Mul ? mul(val(r), v)
                        : rop == ReduceOp::Max ? bin(BinaryOp::Max, val(r), v)
                                               : bin(BinaryOp::Min, val(r), v);
    body_.push_back(parfor(i, extent_, {assign(r, update)}, {{r, rop}}, where(op)));
    return r;
  }

  void add_stmt(Stmt s) { body_.push_back(std::move(s)); }
  std::string where(const std::string& op) { return op + " at " + name_ + ":" + std::to_string(++line_); }

  ir::Function returning(const Var& array) const { return function(name_, params_, body_, nullptr, array); }
  ir::Function returning(Expr scalar) const { return function(name_, params_, body_, std::move(scalar)); }

 private:
  std::string name_;
  std::vector<Var> params_;
  std::vector<Stmt> body_;
  Expr extent_;
  int line_ = 0;
};

// ---- running and comparing -------------------------------------------------------------------------------

/// Everything observable about one run: the error, or the result and every array parameter afterwards.
struct Outcome {
  std::string error;
  std::uint64_t scalar = 0;
  std::vector<std::int64_t> result_shape;
  std::vector<double> result;
  std::vector<std::vector<double>> arrays;

  friend bool operator==(const Outcome&, const Outcome&) = default;
};

/// Array parameters' shapes for an extent n: rank-1 arrays are (n), rank-2 ones (n, 3).
inline std::vector<std::int64_t> default_shape(const ir::Var& p, std::int64_t n) {
  std::vector<std::int64_t> s(p->type.rank, 3);
  s[0] = n;
  return s;
}

/// Interprets f on inputs drawn from `seed`: f64 arrays in [-2, 2), f64 scalars in [-2, 2), integer
/// scalars n.
inline Outcome run(const ir::Function& f, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<std::vector<double>> data;
  std::vector<ArrayDesc> descs(f.params.size());
  std::vector<ScalarSlot> scalars(f.params.size());
  std::vector<void*> args;
  for (size_t k = 0; k < f.params.size(); ++k) {
    const auto& p = f.params[k];
    if (p->type.is_array()) {
      const auto shape = default_shape(p, n);
      std::int64_t count = 1;
      for (auto e : shape) count *= e;
      data.emplace_back(static_cast<size_t>(count));
      for (auto& x : data.back()) x = u(rng);
      ArrayDesc& d = descs[k];
      d.data = data.back().data();
      for (int a = p->type.rank; a-- > 0;) {
        d.shape[a] = shape[static_cast<size_t>(a)];
        d.strides[a] = a + 1 == p->type.rank ? 1 : d.strides[a + 1] * d.shape[a + 1];
      }
      args.push_back(&d);
    } else {
      std::memset(&scalars[k], 0, sizeof(ScalarSlot));
      if (p->type.elem == DType::F64) scalars[k].f64 = u(rng);
      else scalars[k].i64 = n;
      args.push_back(&scalars[k]);
    }
  }
  Outcome out;
  ArrayDesc result{};
  try {
    ir::interpret(f, args.data(), f.returns_array() ? static_cast<void*>(&result) : static_cast<void*>(&out.scalar));
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  if (f.returns_array() && out.error.empty()) {
    std::int64_t count = 1;
    for (int a = 0; a < f.result_array->type.rank; ++a) {
      out.result_shape.push_back(result.shape[a]);
      count *= result.shape[a];
    }
    const double* r = static_cast<const double*>(result.data);
    out.result.assign(r, r + count);
    std::free(result.data);
  }
  out.arrays = std::move(data);
  return out;
}

/// Bitwise equality of doubles, so NaN results compare (and -0.0 differs from 0.0).
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

inline bool same(const Outcome& a, const Outcome& b) {
  if (a.error != b.error || a.scalar != b.scalar || a.result_shape != b.result_shape || !same_bits(a.result, b.result))
    return false;
  if (a.arrays.size() != b.arrays.size()) return false;
  for (size_t k = 0; k < a.arrays.size(); ++k)
    if (!same_bits(a.arrays[k], b.arrays[k])) return false;
  return true;
}

inline std::string describe(const Outcome& o) {
  std::ostringstream s;
  if (!o.error.empty()) return "error: " + o.error;
  double d;
  std::memcpy(&d, &o.scalar, sizeof d);
  s << "scalar bits " << o.scalar << " (" << d << ")";
  if (!o.result.empty()) s << ", result[0] " << o.result[0] << " of " << o.result.size();
  for (size_t k = 0; k < o.arrays.size(); ++k)
    if (!o.arrays[k].empty()) s << ", array " << k << "[0] " << o.arrays[k][0];
  return s.str();
}

/// Sizes every differential test runs: empty, one element, primes, and a large one.
inline const std::vector<std::int64_t>& test_sizes() {
  static const std::vector<std::int64_t> sizes = {0, 1, 2, 3, 7, 13, 1009};
  return sizes;
}

/// Expects `after` to behave exactly like `before` (both verified) for every test size and a few seeds.
inline void expect_equivalent(const ir::Function& before, const ir::Function& after, int seeds = 2) {
  const auto pb = ir::verify(before), pa = ir::verify(after);
  ASSERT_TRUE(pb.empty()) << "test input is malformed:\n" << joined(pb) << ir::to_string(before);
  ASSERT_TRUE(pa.empty()) << "transformed IR is malformed:\n" << joined(pa) << ir::to_string(after);
  for (std::int64_t n : test_sizes())
    for (int s = 0; s < seeds; ++s) {
      const std::uint64_t seed = 1000 * static_cast<std::uint64_t>(n) + static_cast<std::uint64_t>(s);
      const Outcome a = run(before, n, seed), b = run(after, n, seed);
      ASSERT_TRUE(same(a, b)) << "n = " << n << ", seed " << seed << "\nbefore: " << describe(a) << "\nafter:  "
                              << describe(b) << "\n"
                              << ir::to_string(before) << "---- transformed ----\n"
                              << ir::to_string(after);
    }
}

// ---- golden files ----------------------------------------------------------------------------------------

/// Compares `text` with tests/golden/<name>; KILN_UPDATE_GOLDEN=1 rewrites the file and fails.
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

/// Runs one pass (any `Function pass(const Function&, Context&)`) and checks that its output verifies and behaves
/// like its input.
template <class Context>
ir::Function apply(ir::Function (*pass)(const ir::Function&, Context&), const ir::Function& f, Context& ctx) {
  const auto problems = ir::verify(f);
  EXPECT_TRUE(problems.empty()) << "test input is malformed:\n" << joined(problems) << ir::to_string(f);
  ir::Function g = pass(f, ctx);
  expect_equivalent(f, g);
  return g;
}

}  // namespace kiln::looptest
