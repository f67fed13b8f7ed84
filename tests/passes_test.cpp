// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The passes: detect_reductions (on traced kernels and hand-built IR), simplify (constant folding with
// kiln's arithmetic, safe identities, copy propagation, CSE, dead code) and the pipeline, with golden IR
// for the example kernels.
#include <gtest/gtest.h>

#include "tests/error_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/interpreter.hpp"
#include "ir/printer.hpp"
#include "ir/semantics.hpp"
#include "ir/verifier.hpp"
#include "kiln/kiln.hpp"
#include "passes/detect_reductions.hpp"
#include "passes/pipeline.hpp"
#include "passes/simplify.hpp"
#include "tools/test_support/ir_shorthands.hpp"

#ifndef KILN_GOLDEN_DIR
#error "KILN_GOLDEN_DIR must be defined by the build (tests/CMakeLists.txt)"
#endif

namespace kiln {
namespace {

using ir::Expr;
using ir::Stmt;
using ir::Var;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Options interp() {
  Options o;
  o.target = Target::interpreter;
  return o;
}

// ---- IR construction shorthands: the shared ones (tools/test_support), then those only these tests use ------

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary

// Always unit-stride, unlike test_support::array_param (strided by default).
Var array_param(const std::string& name, DType t, int rank = 1) {
  return ir::make_var(name, ir::Type::array(t, rank, true), ir::VarKind::Param);
}
Expr i32c(std::int32_t v) { return ir::make_int(DType::I32, v); }
Expr f64c(double v) { return ir::make_float(DType::F64, v); }
Expr f32c(float v) { return ir::make_float(DType::F32, v); }
Expr add(Expr a, Expr b) { return bin(BinaryOp::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return bin(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return bin(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr load(const Var& a, std::vector<Expr> idx) { return ir::make_load(a, std::move(idx)); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

/// Runs simplify and checks that its input and output both verify.
ir::Function simplified(const ir::Function& f) {
  EXPECT_TRUE(ir::verify(f).empty()) << "test input is malformed:\n" << joined(ir::verify(f)) << ir::to_string(f);
  passes::PassContext ctx;
  ir::Function g = passes::simplify(f, ctx);
  const auto problems = ir::verify(g);
  EXPECT_TRUE(problems.empty()) << "simplify produced malformed IR:\n" << joined(problems) << ir::to_string(g);
  return g;
}

std::string normalize_lines(std::string s) {
  return std::regex_replace(s, std::regex(R"((passes_test\.cpp):\d+)"), "$1:LINE");
}

// ---- golden files --------------------------------------------------------------------------------------

/// Compares `text` with tests/golden/<name> byte for byte. KILN_UPDATE_GOLDEN=1 rewrites the file instead
/// (and still fails, so an update is never silent).
void expect_golden(const std::string& name, const std::string& text) {
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

/// Runs `fn` expecting a TraceError; returns its message ("" and a failure otherwise).
std::string trace_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const TraceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected TraceError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected TraceError, nothing was thrown";
  return "";
}

// Source lines recorded by the kernels below (set while tracing, read by the tests).
int g_decl_line = 0;
int g_loop_line = 0;

// =========================================================================================================
// detect_reductions on traced kernels
// =========================================================================================================

TEST(DetectReductions, EveryOperatorFromTracedKernels) {
  std::vector<double> x = {1.5, -2.0, 4.0, 0.5};
  auto add = jit("red_add", [](Array<double> a) {
    Double s = 1.0;
    prange(a.shape(0), [&](Int i) { s += a[i]; });
    return s;
  }, interp());
  EXPECT_EQ(add(x), 1.0 + 1.5 - 2.0 + 4.0 + 0.5);
  EXPECT_CONTAINS(add.lowered_ir(), "reduce(add s)");

  auto subtract = jit("red_sub", [](Array<double> a) {
    Double s = 10.0;
    prange(a.shape(0), [&](Int i) { s -= a[i]; });
    return s;
  }, interp());
  EXPECT_EQ(subtract(x), 10.0 - 4.0);
  EXPECT_CONTAINS(subtract.lowered_ir(), "reduce(add s)");
  EXPECT_CONTAINS(subtract.lowered_ir(), "s = (s - a[i])");

  auto product = jit("red_mul", [](Array<double> a) {
    Double p = 2.0;
    prange(a.shape(0), [&](Int i) { p *= a[i]; });
    return p;
  }, interp());
  EXPECT_EQ(product(x), 2.0 * 1.5 * -2.0 * 4.0 * 0.5);
  EXPECT_CONTAINS(product.lowered_ir(), "reduce(mul p)");

  auto quotient = jit("red_div", [](Array<double> a) {
    Double q = 96.0;
    prange(a.shape(0), [&](Int i) { q /= a[i]; });
    return q;
  }, interp());
  EXPECT_EQ(quotient(x), 96.0 / 1.5 / -2.0 / 4.0 / 0.5);
  EXPECT_CONTAINS(quotient.lowered_ir(), "reduce(mul q)");
  EXPECT_CONTAINS(quotient.lowered_ir(), "q = (q / a[i])");

  auto minimum = jit("red_min", [](Array<double> a) {
    Double m = kInf;
    prange(a.shape(0), [&](Int i) { m = kiln::min(m, a[i]); });
    return m;
  }, interp());
  EXPECT_EQ(minimum(x), -2.0);
  EXPECT_CONTAINS(minimum.lowered_ir(), "reduce(min m)");

  auto maximum = jit("red_max", [](Array<double> a) {
    Double m = -kInf;
    prange(a.shape(0), [&](Int i) { m = kiln::max(a[i], m); });  // either operand order
    return m;
  }, interp());
  EXPECT_EQ(maximum(x), 4.0);
  EXPECT_CONTAINS(maximum.lowered_ir(), "reduce(max m)");

  auto count = jit("red_count", [](Array<double> a) {
    Int32 c = 0;
    prange(a.shape(0), [&](Int i) { if_(a[i] > 0.0, [&] { c += 1; }); });
    return c;
  }, interp());
  EXPECT_EQ(count(x), 3);
  EXPECT_CONTAINS(count.lowered_ir(), "reduce(add c)");

  // Several reductions in one prange.
  auto stats = jit("red_many", [](Array<double> a) {
    Double lo = kInf, hi = -kInf, sum = 0.0;
    prange(a.shape(0), [&](Int i) {
      lo = kiln::min(lo, a[i]);
      hi = kiln::max(hi, a[i]);
      sum += a[i];
    });
    return hi - lo + sum * 1000.0;
  }, interp());
  EXPECT_EQ(stats(x), 6.0 + 4000.0);
  EXPECT_CONTAINS(stats.lowered_ir(), "reduce(min lo, max hi, add sum)");
}

TEST(DetectReductions, NestedPrangeInheritsTheReduction) {
  auto k = jit("nested_red", [](Int n, Int m) {
    Int s = 0;
    prange(n, [&](Int i) {
      Int twice = i * 2;  // keeps the nest imperfect, so that collapse_parfors leaves both parfors to look at
      prange(m, [&](Int j) { s += twice * j + 1; });
    });
    return s;
  }, interp());
  std::int64_t want = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) want += 2 * i * j + 1;
  EXPECT_EQ(k(5, 7), want);
  const std::string ir = k.lowered_ir();
  // Both the inner and the outer parfor carry the reduction.
  size_t first = ir.find("reduce(add s)");
  ASSERT_NE(first, std::string::npos) << ir;
  EXPECT_NE(ir.find("reduce(add s)", first + 1), std::string::npos) << ir;
  EXPECT_TRUE(ir::verify(passes::run_pipeline([&] {
    // the same shape built by hand passes the verifier after the pipeline too
    const Var pn = param("n", DType::I64), s = local("s", DType::I64), i = index("i"), j = index("j");
    return function("h", {pn}, {let(s, i64c(0)),
                                parfor1(i, val(pn), block({parfor1(j, val(pn), block({assign(s, add(val(s), val(j)))}))}))},
                    val(s));
  }())).empty());

  // A nested prange plus a direct update of the same operator in the outer one.
  auto k2 = jit("nested_mixed", [](Int n) {
    Double s = 0.0;
    prange(n, [&](Int) {
      s += 1.0;
      prange(n, [&](Int j) { s -= to_double(j); });
    });
    return s;
  }, interp());
  EXPECT_EQ(k2(4), 4.0 - 4.0 * (0 + 1 + 2 + 3));
}

TEST(DetectReductions, ReductionInsideSequentialLoopAndBranch) {
  auto k = jit("deep", [](Array<double> a, Int reps) {
    Double s = 0.0;
    prange(a.shape(0), [&](Int i) {
      range(reps, [&](Int) {
        if_(a[i] > 0.0, [&] { s += a[i]; }).else_([&] { s -= 1.0; });
      });
    });
    return s;
  }, interp());
  std::vector<double> x = {1, -1, 2};
  EXPECT_EQ(k(x, std::int64_t{3}), 3 * (1 - 1 + 2.0));
  EXPECT_CONTAINS(k.lowered_ir(), "reduce(add s)");
}

TEST(DetectReductions, PlainAssignmentIsATraceErrorNamingTheVariableAndLines) {
  auto k = jit("racy", [](Int n) {
    g_decl_line = __LINE__ + 1;
    Double last = 0.0;
    g_loop_line = __LINE__ + 1;
    prange(n, [&](Int i) { last = to_double(i); });
    return last;
  }, interp());
  const std::string m = trace_error([&] { k(10); });
  EXPECT_CONTAINS(m, "kernel 'racy'");
  EXPECT_CONTAINS(m, "scalar 'last' (declared at passes_test.cpp:" + std::to_string(g_decl_line) + ")");
  EXPECT_CONTAINS(m, "prange at passes_test.cpp:" + std::to_string(g_loop_line));
  EXPECT_CONTAINS(m, "as `last = f64(i)`, which is not a reduction");
  EXPECT_CONTAINS(m, "last += e");  // and what to write instead
  EXPECT_CONTAINS(m, "kiln::min(last, e)");
  EXPECT_CONTAINS(m, "declare it inside the loop");
  EXPECT_EQ(k.compiled_variants(), 0u);
}

TEST(DetectReductions, NonReductionShapesAreTraceErrors) {
  // e - s is not a reduction of s.
  auto k = jit("reversed", [](Array<double> a) {
    Double s = 0.0;
    prange(a.shape(0), [&](Int i) { s = a[i] - s; });
    return s;
  }, interp());
  std::vector<double> x = {1, 2};
  EXPECT_CONTAINS(trace_error([&] { k(x); }), "as `s = (a[i] - s)`, which is not a reduction");
  // s = s + s reads s in the operand.
  auto k2 = jit("doubling", [](Int n) {
    Double s = 1.0;
    prange(n, [&](Int) { s = s + s; });
    return s;
  }, interp());
  EXPECT_CONTAINS(trace_error([&] { k2(3); }), "which is not a reduction");
}

TEST(DetectReductions, IntegerDivisionIsNotAReduction) {
  // Truncating division does not regroup: (100 / 2) / 3 != 100 * (1/2 * 1/3) in integers. Floats may.
  auto k = jit("int_div", [](Int n) {
    Int s = 1000;
    prange(n, [&](Int) { s /= 2; });
    return s;
  }, interp());
  EXPECT_CONTAINS(trace_error([&] { k(3); }), "as `s = (s / 2)`, which is not a reduction");
  auto f = jit("float_div", [](Int n) {
    Double s = 1000.0;
    prange(n, [&](Int) { s /= 2.0; });
    return s;
  }, interp());
  EXPECT_EQ(f(3), 125.0);
  EXPECT_CONTAINS(f.lowered_ir(), "reduce(mul s)");
}

TEST(DetectReductions, ConflictingOperatorsAreATraceError) {
  auto k = jit("conflict", [](Array<double> a) {
    g_decl_line = __LINE__ + 1;
    Double s = 1.0;
    prange(a.shape(0), [&](Int i) {
      s += a[i];
      s *= 2.0;
    });
    return s;
  }, interp());
  std::vector<double> x = {1, 2};
  const std::string m = trace_error([&] { k(x); });
  EXPECT_CONTAINS(m, "kernel 'conflict'");
  EXPECT_CONTAINS(m, "scalar 's' (declared at passes_test.cpp:" + std::to_string(g_decl_line) + ")");
  EXPECT_CONTAINS(m, "is updated with both add and mul");
  EXPECT_CONTAINS(m, "a reduction needs one operator");
  // Through a nested prange too.
  auto k2 = jit("conflict_nested", [](Int n) {
    Double s = 1.0;
    prange(n, [&](Int i) {
      s = kiln::max(s, to_double(i));
      prange(n, [&](Int j) { s += to_double(j); });
    });
    return s;
  }, interp());
  const std::string m2 = trace_error([&] { k2(3); });
  EXPECT_CONTAINS(m2, "is updated with both add and max");  // add from the nested prange, max from here
  EXPECT_CONTAINS(m2, "(`s = max(s, f64(i))`)");
}

TEST(DetectReductions, ReadInsideTheLoopIsATraceError) {
  auto k = jit("peek", [](Array<double> a, Array<double> b) {
    g_decl_line = __LINE__ + 1;
    Double s = 0.0;
    g_loop_line = __LINE__ + 1;
    prange(a.shape(0), [&](Int i) {
      s += a[i];
      b[i] = s;
    });
    return s;
  }, interp());
  std::vector<double> x = {1, 2}, y = {0, 0};
  const std::string m = trace_error([&] { k(x, y); });
  EXPECT_CONTAINS(m, "scalar 's' (declared at passes_test.cpp:" + std::to_string(g_decl_line) + ")");
  EXPECT_CONTAINS(m, "is a add reduction of the prange at passes_test.cpp:" + std::to_string(g_loop_line));
  EXPECT_CONTAINS(m, "but is also read inside the loop");
  EXPECT_EQ(y, (std::vector<double>{0, 0}));
}

TEST(DetectReductions, ReadingAnInheritedReductionInTheOuterLoopIsATraceError) {
  // The outer prange inherits the inner one's reduction of s, so s holds a partial result there too.
  auto k = jit("peek_outer", [](Int n, Array<double> b) {
    Double s = 0.0;
    prange(n, [&](Int i) {
      prange(n, [&](Int) { s += 1.0; });
      b[i] = s;
    });
    return s;
  }, interp());
  std::vector<double> b(3);
  const std::string m = trace_error([&] { k(3, b); });
  EXPECT_CONTAINS(m, "scalar 's'");
  EXPECT_CONTAINS(m, "but is also read inside the loop");
}

TEST(DetectReductions, BoolReductionIsATraceError) {
  auto k = jit("any_positive", [](Array<double> a) {
    g_decl_line = __LINE__ + 1;
    Bool found = false;
    prange(a.shape(0), [&](Int i) { found = found || a[i] > 0.0; });
    return found;
  }, interp());
  std::vector<double> x = {1, 2};
  const std::string m = trace_error([&] { k(x); });
  EXPECT_CONTAINS(m, "bool scalar 'found' (declared at passes_test.cpp:" + std::to_string(g_decl_line) + ")");
  EXPECT_CONTAINS(m, "bool reductions are not supported");
}

TEST(DetectReductions, HandBuiltIR) {
  const Var x = array_param("x", DType::F64), s = local("s", DType::F64), t = local("t", DType::F64), i = index("i");
  const ir::Function f = function(
      "hand", {x},
      {let(s, f64c(0)), let(t, f64c(kInf)),
       parfor1(i, dim(x), block({assign(s, add(val(s), load(x, {val(i)}))),
                                 assign(t, bin(BinaryOp::Min, load(x, {val(i)}), val(t)))}))},
      add(val(s), val(t)));
  // Without reductions the function is malformed; detect_reductions repairs it.
  EXPECT_FALSE(ir::verify(f).empty());
  passes::PassContext ctx;
  const ir::Function g = passes::detect_reductions(f, ctx);
  EXPECT_TRUE(ir::verify(g).empty()) << joined(ir::verify(g)) << ir::to_string(g);
  EXPECT_CONTAINS(ir::to_string(g), "parfor (i in 0 .. dim(x, 0)) reduce(add s, min t) {  # test");
  ASSERT_EQ(ctx.notes.size(), 2u);
  EXPECT_EQ(ctx.notes[0].text, "reduction: s (add, identity -0.0) in test");
  EXPECT_EQ(ctx.notes[1].text, "reduction: t (min, identity inf) in test");
  // A function without outer writes comes back unchanged (the same nodes).
  const Var y = array_param("y", DType::F64), j = index("j");
  const ir::Function h = function("noop", {y}, {parfor1(j, dim(y), block({store(y, {val(j)}, f64c(1))}))});
  passes::PassContext ctx2;
  EXPECT_EQ(passes::detect_reductions(h, ctx2).body, h.body);
  EXPECT_TRUE(ctx2.notes.empty());
}

// =========================================================================================================
// simplify: constant folding
// =========================================================================================================

/// Folds `e` (built from constants only) and checks that the result is one constant with exactly the value
/// the interpreter computes for the unfolded expression (bit for bit).
void expect_folds_like_interpreter(const Expr& e) {
  const ir::Function f = function("fold", {}, {}, e);
  const ir::Function g = simplified(f);
  ASSERT_TRUE(ir::is_const(g.result)) << ir::to_string(e) << " folded to " << ir::to_string(g.result);
  ScalarSlot a, b;
  std::memset(&a, 0, sizeof a);
  std::memset(&b, 0, sizeof b);
  ir::interpret(f, nullptr, &a);
  ir::interpret(g, nullptr, &b);
  EXPECT_EQ(std::memcmp(&a, &b, static_cast<size_t>(size_of(e->type))), 0)
      << ir::to_string(e) << " folded to " << ir::to_string(g.result);
}

TEST(SimplifyFolding, MatchesTheInterpreter) {
  const std::int32_t i32min = INT32_MIN, i32max = INT32_MAX;
  const std::vector<Expr> cases = {
      // i32 wraps, division is total, shifts are modulo the width
      add(i32c(i32max), i32c(1)), sub(i32c(i32min), i32c(1)), mul(i32c(65536), i32c(65536)),
      bin(BinaryOp::Div, i32c(7), i32c(0)), bin(BinaryOp::Div, i32c(i32min), i32c(-1)),
      bin(BinaryOp::Mod, i32c(7), i32c(0)), bin(BinaryOp::Mod, i32c(i32min), i32c(-1)), bin(BinaryOp::Mod, i32c(-7), i32c(3)),
      bin(BinaryOp::Shl, i32c(1), i32c(33)), bin(BinaryOp::Shr, i32c(-8), i32c(1)), bin(BinaryOp::Shl, i32c(1), i32c(-1)),
      ir::make_unary(UnaryOp::Neg, i32c(i32min)), ir::make_unary(UnaryOp::BitNot, i32c(0)),
      ir::make_call(Intrinsic::Abs, {i32c(i32min)}), bin(BinaryOp::Min, i32c(-3), i32c(2)),
      // i64
      add(i64c(INT64_MAX), i64c(1)), bin(BinaryOp::Div, i64c(INT64_MIN), i64c(-1)), bin(BinaryOp::Div, i64c(5), i64c(0)),
      bin(BinaryOp::Mod, i64c(INT64_MIN), i64c(-1)), bin(BinaryOp::Shl, i64c(1), i64c(64)), bin(BinaryOp::Shr, i64c(-1), i64c(200)),
      // floats
      bin(BinaryOp::Div, f64c(1), f64c(0)), bin(BinaryOp::Div, f64c(0), f64c(0)), bin(BinaryOp::Min, f64c(kNaN), f64c(1)),
      bin(BinaryOp::Max, f64c(1), f64c(kNaN)), bin(BinaryOp::Min, f64c(0.0), f64c(-0.0)), bin(BinaryOp::Max, f64c(-0.0), f64c(0.0)),
      bin(BinaryOp::Mod, f64c(-7.5), f64c(2)), add(f64c(0.1), f64c(0.2)), ir::make_unary(UnaryOp::Neg, f64c(0)),
      add(f32c(16777216.0f), f32c(1.0f)), mul(f32c(0.1f), f32c(3.0f)), bin(BinaryOp::Min, f32c(-0.0f), f32c(0.0f)),
      ir::make_call(Intrinsic::Sqrt, {f64c(2)}), ir::make_call(Intrinsic::Pow, {f64c(2), f64c(0.5)}),
      ir::make_call(Intrinsic::Fma, {f32c(0.1f), f32c(10.0f), f32c(-1.0f)}), ir::make_call(Intrinsic::Round, {f64c(-2.5)}),
      // comparisons (NaN compares false except !=), predicates
      bin(BinaryOp::Lt, f64c(kNaN), f64c(1)), bin(BinaryOp::Ne, f64c(kNaN), f64c(kNaN)), bin(BinaryOp::Eq, f64c(-0.0), f64c(0.0)),
      bin(BinaryOp::Lt, i32c(i32min), i32c(0)), ir::make_call(Intrinsic::IsNan, {f64c(kNaN)}),
      ir::make_call(Intrinsic::IsFinite, {f32c(std::numeric_limits<float>::infinity())}),
      // casts: saturating, NaN -> 0, wrapping narrowing, != 0 for bool
      ir::make_cast(DType::I32, f64c(1e10)), ir::make_cast(DType::I64, f64c(kNaN)), ir::make_cast(DType::I32, f64c(-kInf)),
      ir::make_cast(DType::I32, i64c((std::int64_t{1} << 32) + 5)), ir::make_cast(DType::Bool, f64c(kNaN)),
      ir::make_cast(DType::Bool, i32c(256)), ir::make_cast(DType::F32, f64c(0.1)), ir::make_cast(DType::F64, i32c(i32min)),
      ir::make_cast(DType::I64, f32c(3e19f)),
      // bool logic and select
      bin(BinaryOp::And, ir::make_bool(true), ir::make_bool(false)), bin(BinaryOp::Or, ir::make_bool(false), ir::make_bool(true)),
      bin(BinaryOp::BitXor, ir::make_bool(true), ir::make_bool(true)), ir::make_unary(UnaryOp::Not, ir::make_bool(true)),
      ir::make_select(ir::make_bool(false), f64c(1), f64c(2)),
      ir::make_select(bin(BinaryOp::Gt, i64c(3), i64c(2)), i32c(10), i32c(20)),
      // nested
      mul(add(i32c(i32max), i32c(1)), bin(BinaryOp::Div, i32c(9), i32c(0))),
  };
  for (const Expr& e : cases) expect_folds_like_interpreter(e);
}

TEST(SimplifyFolding, PrintedResults) {
  auto folded = [](Expr e) { return ir::to_string(simplified(function("f", {}, {}, std::move(e))).result); };
  EXPECT_EQ(folded(add(i32c(INT32_MAX), i32c(1))), "-2147483648i32");
  EXPECT_EQ(folded(bin(BinaryOp::Div, i32c(7), i32c(0))), "0i32");
  EXPECT_EQ(folded(bin(BinaryOp::Mod, i32c(7), i32c(0))), "7i32");
  EXPECT_EQ(folded(bin(BinaryOp::Div, i64c(INT64_MIN), i64c(-1))), "-9223372036854775808");
  EXPECT_EQ(folded(bin(BinaryOp::Shl, i32c(1), i32c(33))), "2i32");
  EXPECT_EQ(folded(bin(BinaryOp::Div, f64c(1), f64c(0))), "inf");
  EXPECT_EQ(folded(bin(BinaryOp::Min, f64c(0.0), f64c(-0.0))), "-0.0");
  EXPECT_EQ(folded(add(f32c(16777216.0f), f32c(1.0f))), "16777216.0f");
  EXPECT_EQ(folded(ir::make_cast(DType::I32, f64c(kNaN))), "0i32");
  EXPECT_EQ(folded(ir::make_cast(DType::I32, f64c(-1e300))), "-2147483648i32");
  EXPECT_EQ(folded(bin(BinaryOp::Le, f64c(kNaN), f64c(kNaN))), "false");
}

TEST(SimplifyFolding, ShortCircuitAndSelectWithOneConstantSide) {
  const Var b = param("b", DType::Bool), x = array_param("x", DType::F64), p = param("p", DType::F64);
  auto result = [&](Expr e) { return ir::to_string(simplified(function("f", {b, x, p}, {}, std::move(e))).result); };
  const Expr guarded = bin(BinaryOp::Gt, load(x, {i64c(5)}), f64c(0));
  EXPECT_EQ(result(bin(BinaryOp::And, ir::make_bool(false), guarded)), "false");
  EXPECT_EQ(result(bin(BinaryOp::And, ir::make_bool(true), val(b))), "b");
  EXPECT_EQ(result(bin(BinaryOp::Or, ir::make_bool(true), guarded)), "true");
  EXPECT_EQ(result(bin(BinaryOp::Or, ir::make_bool(false), val(b))), "b");
  EXPECT_EQ(result(bin(BinaryOp::And, val(b), ir::make_bool(true))), "b");
  EXPECT_EQ(result(bin(BinaryOp::Or, val(b), ir::make_bool(false))), "b");
  EXPECT_EQ(result(ir::make_select(val(b), val(p), val(p))), "p");
  EXPECT_EQ(result(ir::make_select(ir::make_bool(true), val(p), load(x, {i64c(9)}))), "p");
  EXPECT_EQ(result(ir::make_unary(UnaryOp::Not, ir::make_unary(UnaryOp::Not, val(b)))), "b");
  EXPECT_EQ(result(ir::make_unary(UnaryOp::Neg, ir::make_unary(UnaryOp::Neg, val(p)))), "p");
}

// =========================================================================================================
// simplify: identities
// =========================================================================================================

std::string simplified_result(const Var& x, Expr e) { return ir::to_string(simplified(function("f", {x}, {}, std::move(e))).result); }

TEST(SimplifyIdentities, UnsafeFloatIdentitiesAreNotApplied) {
  const Var x = param("x", DType::F64);
  // x + 0.0 is not x for x = -0.0; x * 0.0 is not 0.0 for NaN, inf or negative x; x - (-0.0) is x + 0.0.
  EXPECT_EQ(simplified_result(x, add(val(x), f64c(0.0))), "(x + 0.0)");
  EXPECT_EQ(simplified_result(x, add(f64c(0.0), val(x))), "(0.0 + x)");
  EXPECT_EQ(simplified_result(x, add(val(x), f64c(-0.0))), "(x + -0.0)");
  EXPECT_EQ(simplified_result(x, mul(val(x), f64c(0.0))), "(x * 0.0)");
  EXPECT_EQ(simplified_result(x, sub(val(x), f64c(-0.0))), "(x - -0.0)");
  EXPECT_EQ(simplified_result(x, sub(val(x), val(x))), "(x - x)");
  EXPECT_EQ(simplified_result(x, bin(BinaryOp::Div, val(x), val(x))), "(x / x)");
  EXPECT_EQ(simplified_result(x, bin(BinaryOp::Eq, val(x), val(x))), "(x == x)");
  const Var f = param("f", DType::F32);
  EXPECT_EQ(simplified_result(f, add(val(f), f32c(0.0f))), "(f + 0.0f)");
  // And the interpreter confirms why: -0.0 + 0.0 == +0.0.
  const ir::Function g = function("f", {x}, {}, add(val(x), f64c(0.0)));
  double m0 = -0.0;
  void* args[] = {&m0};
  double r = 1;
  ir::interpret(simplified(g), args, &r);
  EXPECT_FALSE(std::signbit(r));
}

TEST(SimplifyIdentities, SafeIdentitiesAreApplied) {
  const Var x = param("x", DType::F64), n = param("n", DType::I32);
  EXPECT_EQ(simplified_result(x, sub(val(x), f64c(0.0))), "x");  // x - (+0) == x, also for -0 and NaN
  EXPECT_EQ(simplified_result(x, mul(val(x), f64c(1.0))), "x");
  EXPECT_EQ(simplified_result(x, mul(f64c(1.0), val(x))), "x");
  EXPECT_EQ(simplified_result(x, bin(BinaryOp::Div, val(x), f64c(1.0))), "x");
  EXPECT_EQ(simplified_result(n, add(val(n), i32c(0))), "n");  // integers: x + 0 == x
  EXPECT_EQ(simplified_result(n, add(i32c(0), val(n))), "n");
  EXPECT_EQ(simplified_result(n, sub(val(n), i32c(0))), "n");
  EXPECT_EQ(simplified_result(n, mul(val(n), i32c(1))), "n");
  EXPECT_EQ(simplified_result(n, bin(BinaryOp::Div, val(n), i32c(1))), "n");
  // Identities apply after folding the constant side.
  EXPECT_EQ(simplified_result(x, mul(val(x), sub(f64c(3), f64c(2)))), "x");
}

// =========================================================================================================
// simplify: copy propagation, CSE, dead code
// =========================================================================================================

TEST(SimplifyCopies, PropagatesCopiesOfImmutableValues) {
  const Var p = param("p", DType::F64), a = local("a", DType::F64), b = local("b", DType::F64), c = local("c", DType::F64);
  const ir::Function f = function("copies", {p}, {let(a, val(p)), let(b, val(a)), let(c, f64c(2.5))},
                                  add(mul(val(b), val(c)), val(a)));
  const ir::Function g = simplified(f);
  EXPECT_EQ(ir::to_string(g), "kernel copies(p: f64) -> f64 {\n  return ((p * 2.5) + p)\n}\n");
}

TEST(SimplifyCopies, DoesNotPropagateVariablesThatChange) {
  // let s = p; s = s + 1; let a = s; s = s * 2; return a + s   -- a is a snapshot of s, not an alias.
  const Var p = param("p", DType::F64), s = local("s", DType::F64), a = local("a", DType::F64);
  const ir::Function f = function(
      "snap", {p}, {let(s, val(p)), assign(s, add(val(s), f64c(1))), let(a, val(s)), assign(s, mul(val(s), f64c(2)))},
      add(val(a), val(s)));
  const ir::Function g = simplified(f);
  const std::string text = ir::to_string(g);
  EXPECT_NE(text.find("let a: f64 = s"), std::string::npos) << text;
  double v = 3;
  void* args[] = {&v};
  double r1 = 0, r2 = 0;
  ir::interpret(f, args, &r1);
  ir::interpret(g, args, &r2);
  EXPECT_EQ(r1, (3 + 1) + (3 + 1) * 2.0);
  EXPECT_EQ(r2, r1);
  // A let that is itself reassigned is not a copy either.
  const Var t = local("t", DType::F64), i = index("i");
  const ir::Function h = function("loop", {p}, {let(t, f64c(0)), for_loop(i, i64c(0), i64c(3), block({assign(t, add(val(t), val(p)))}))},
                                  val(t));
  const std::string ht = ir::to_string(simplified(h));
  EXPECT_NE(ht.find("let t: f64 = 0.0"), std::string::npos) << ht;
  EXPECT_NE(ht.find("return t"), std::string::npos) << ht;
}

TEST(SimplifyCSE, ReusesAnEarlierLetWithTheSameStableValue) {
  const Var p = param("p", DType::F64), q = param("q", DType::F64);
  const Var a = local("a", DType::F64), b = local("b", DType::F64), c = local("c", DType::F64);
  const ir::Function f = function("cse", {p, q},
                                  {let(a, mul(val(p), val(q))), let(b, mul(val(p), val(q))), let(c, add(val(a), val(b)))},
                                  mul(val(c), val(b)));
  const std::string text = ir::to_string(simplified(f));
  EXPECT_EQ(text,
            "kernel cse(p: f64, q: f64) -> f64 {\n"
            "  let a: f64 = (p * q)\n"
            "  let c: f64 = (a + a)\n"
            "  return (c * a)\n"
            "}\n");
  // Lets in a nested block see the outer ones; the outer ones never see the nested ones.
  const Var d = local("d", DType::F64), e = local("e", DType::F64), i = index("i"), x = array_param("x", DType::F64);
  const ir::Function g = function(
      "nested", {p, q, x},
      {let(a, mul(val(p), val(q))),
       for_loop(i, i64c(0), dim(x), block({let(d, mul(val(p), val(q))), store(x, {val(i)}, val(d))})),
       let(e, mul(val(p), val(q))), store(x, {i64c(0)}, val(e))});
  const std::string gt = ir::to_string(simplified(g));
  EXPECT_NE(gt.find("x[i] = a"), std::string::npos) << gt;
  EXPECT_NE(gt.find("x[0] = a"), std::string::npos) << gt;
  EXPECT_EQ(gt.find("let d"), std::string::npos) << gt;
}

TEST(SimplifyCSE, LeavesLoadsAndMutableReadsAlone) {
  // Two loads of x[0] with a store in between must stay separate.
  const Var x = array_param("x", DType::F64), a = local("a", DType::F64), b = local("b", DType::F64);
  const ir::Function f = function("loads", {x},
                                  {let(a, mul(load(x, {i64c(0)}), f64c(2))), store(x, {i64c(0)}, f64c(100)),
                                   let(b, mul(load(x, {i64c(0)}), f64c(2)))},
                                  add(val(a), val(b)));
  const ir::Function g = simplified(f);
  std::vector<double> data = {1};
  ArrayDesc d{};
  d.data = data.data();
  d.shape[0] = 1;
  d.strides[0] = 1;
  void* args[] = {&d};
  double r = 0;
  ir::interpret(g, args, &r);
  EXPECT_EQ(r, 2.0 + 200.0) << ir::to_string(g);
  // Two reads of a variable that changes in between must stay separate.
  const Var p = param("p", DType::F64), s = local("s", DType::F64), c = local("c", DType::F64), e = local("e", DType::F64);
  const ir::Function h = function("mutable", {p},
                                  {let(s, val(p)), let(c, mul(val(s), f64c(3))), assign(s, add(val(s), f64c(1))),
                                   let(e, mul(val(s), f64c(3)))},
                                  sub(val(e), val(c)));
  double v = 2;
  void* hargs[] = {&v};
  double hr = 0;
  ir::interpret(simplified(h), hargs, &hr);
  EXPECT_EQ(hr, 3.0);
}

// BUG (passes/simplify.cpp, collect_common_lets, ~lines 200-230): the `available` list is only scoped by
// BlockStmt. A For/Parfor/If whose body is a single statement rather than a block (valid IR: the builder
// and the verifier accept it) leaks its lets to the code after it, so a later let with the same value is
// replaced by a reference to a variable that is out of scope (and never set if the loop ran zero times).
// Reproducer: for i in 0..n { let t1 = p * p } (body not a block); let t2 = p * p; return t2.
// Expected: valid IR returning p * p; actual: `return t1` outside the loop, "t1 is used out of scope".
TEST(SimplifyCSE, LetsInsideANonBlockLoopBodyDoNotLeak) {
  const Var p = param("p", DType::F64), n = param("n", DType::I64);
  const Var t1 = local("t1", DType::F64), t2 = local("t2", DType::F64), i = index("i");
  const ir::Function f = function("leak", {p, n},
                                  {for_loop(i, i64c(0), val(n), let(t1, mul(val(p), val(p)))), let(t2, mul(val(p), val(p)))},
                                  val(t2));
  const ir::Function g = simplified(f);  // checks that the output verifies
  double pv = 3;
  std::int64_t nv = 0;
  void* args[] = {&pv, &nv};
  double r = 0;
  ir::interpret(g, args, &r);
  EXPECT_EQ(r, 9.0);
}

TEST(SimplifyDeadCode, RemovesUnusedLetsAllocationsAndTheirStores) {
  const Var p = param("p", DType::F64), n = param("n", DType::I64), x = array_param("x", DType::F64);
  const Var unused = local("unused", DType::F64), dead_arr = local_array("scratch", DType::F64, 1);
  const Var used_arr = local_array("kept", DType::F64, 1), i = index("i"), assigned_only = local("w", DType::F64);
  const ir::Function f = function(
      "dce", {p, n, x},
      {let(unused, mul(val(p), val(p))), ir::make_allocate(dead_arr, {val(n)}),
       parfor1(i, val(n), block({store(dead_arr, {val(i)}, val(p))})), let(assigned_only, f64c(0)),
       assign(assigned_only, val(p)), ir::make_allocate(used_arr, {i64c(2)}), store(used_arr, {i64c(1)}, val(p)),
       store(x, {i64c(0)}, load(used_arr, {i64c(1)}))});
  const std::string text = ir::to_string(simplified(f));
  EXPECT_EQ(text,
            "kernel dce(p: f64, n: i64, x: f64[::1]) {\n"
            "  alloc kept: f64[::1] (2)\n"
            "  kept[1] = p\n"
            "  x[0] = kept[1]\n"
            "}\n");
}

TEST(SimplifyDeadCode, RemovesEmptyAndZeroTripLoopsAndConstantBranches) {
  const Var n = param("n", DType::I64), x = array_param("x", DType::F64), i = index("i"), j = index("j"),
            k = index("k"), m = index("m"), tmp = local("tmp", DType::F64), flag = param("flag", DType::Bool);
  const ir::Function f = function(
      "loops", {n, x, flag},
      {for_loop(i, i64c(0), val(n), block({})),                                  // empty body
       parfor1(j, val(n), block({let(tmp, f64c(1))})),                           // body becomes empty
       for_loop(k, i64c(5), i64c(3), block({store(x, {val(k)}, f64c(1))})),      // runs zero times
       ir::make_if(bin(BinaryOp::Gt, i64c(2), i64c(3)), block({store(x, {i64c(0)}, f64c(1))}),
                   block({store(x, {i64c(0)}, f64c(2))})),                       // constant condition
       ir::make_if(val(flag), block({}), block({})),                             // both branches empty
       ir::make_if(val(flag), block({store(x, {i64c(1)}, f64c(3))}), block({})),  // empty else dropped
       for_loop(m, i64c(0), val(n), block({store(x, {val(m)}, f64c(0))}))});    // kept
  const std::string text = ir::to_string(simplified(f));
  EXPECT_EQ(text,
            "kernel loops(n: i64, x: f64[::1], flag: bool) {\n"
            "  x[0] = 2.0\n"
            "  if flag {\n"
            "    x[1] = 3.0\n"
            "  }\n"
            "  for m in 0 .. n {\n"
            "    x[m] = 0.0\n"
            "  }\n"
            "}\n");
}

TEST(SimplifyUpdates, AnUpdateComputesItsSubscriptsOnce) {
  // hist[int(x[i] * 2)] += 1: the load and the store share one conversion (a let), as array reductions need.
  const Var h = array_param("h", DType::I64), x = array_param("x", DType::F64), i = index("i");
  const Expr k = ir::make_cast(DType::I64, mul(load(x, {val(i)}), f64c(2)));
  const Stmt update = store(h, {k}, add(load(h, {k}), ir::make_i64(1)));
  const ir::Function f = function("hist", {h, x}, {parfor1(i, dim(x), block({update}))});
  const ir::Function g = simplified(f);
  EXPECT_EQ(ir::to_string(g),
            "kernel hist(h: i64[::1], x: f64[::1]) {\n"
            "  parfor (i in 0 .. dim(x, 0)) {  # test\n"
            "    let h_at: i64 = i64((x[i] * 2.0))\n"
            "    h[h_at] = (h[h_at] + 1)\n"
            "  }\n"
            "}\n");
  // Plain subscripts, and stores that do not read their own element, are left alone.
  const ir::Function plain = function("plain", {h, x}, {parfor1(i, dim(x), block({store(h, {val(i)}, add(load(h, {val(i)}), ir::make_i64(1)))}))});
  EXPECT_EQ(ir::to_string(simplified(plain)), ir::to_string(plain));
  const ir::Function other = function("other", {h, x}, {parfor1(i, dim(x), block({store(h, {k}, ir::make_i64(1))}))});
  EXPECT_EQ(ir::to_string(simplified(other)), ir::to_string(other));
}

TEST(SimplifyDeadCode, KeepsReductionsAndTheirVariables) {
  const Var x = array_param("x", DType::F64), s = local("s", DType::F64), i = index("i");
  const ir::Function f = function(
      "keep", {x}, {let(s, f64c(0)), parfor1(i, dim(x), block({assign(s, add(val(s), load(x, {val(i)})))}), {{s, ReduceOp::Add}})},
      val(s));
  const ir::Function g = simplified(f);
  EXPECT_EQ(ir::to_string(g), ir::to_string(f));
  EXPECT_EQ(g.body, f.body) << "an already simple function is returned unchanged (same nodes)";
}

// BUG (passes/simplify.cpp, simplify_once ~lines 308-320 with collect_copies ~lines 185-193): when every update
// of a reduction variable is folded away (e.g. it sat in a branch with a constant-false condition), the
// variable is no longer assigned, so copy propagation deletes its `let` as a constant copy, while the
// parfor still lists it in reduce(...). The pipeline then throws ir::IRError "s is used out of scope in a
// reduction clause" for a valid kernel. Reproducer (frontend):
//   Double s = 0.0; prange(n, [&](Int i) { if_(Bool(false), [&] { s += to_double(i); }); }); return s;
// Expected: the kernel returns 0.0; actual: IRError "IR verification failed (after pass simplify)".
TEST(SimplifyDeadCode, ReductionWhoseUpdatesFoldAwayKeepsItsVariable) {
  auto k = jit("constbranch", [](Int n) {
    Double s = 0.0;
    prange(n, [&](Int i) { if_(Bool(false), [&] { s += to_double(i); }); });
    return s;
  }, interp());
  EXPECT_EQ(k(5), 0.0);
  // The same on hand-built IR through simplify alone.
  const Var n = param("n", DType::I64), s = local("s", DType::F64), i = index("i");
  const ir::Function f = function(
      "hand", {n},
      {let(s, f64c(0)), parfor1(i, val(n), block({ir::make_if(ir::make_bool(false), block({assign(s, add(val(s), f64c(1)))}))}),
                                {{s, ReduceOp::Add}})},
      val(s));
  simplified(f);
}

// =========================================================================================================
// The pipeline
// =========================================================================================================

TEST(Pipeline, PassesInOrderAndRunPass) {
  const auto& p = passes::pipeline();
  ASSERT_GE(p.size(), 2u);  // the loop passes and others run in between (fusion_test checks their order)
  EXPECT_STREQ(p.front().name, "detect_reductions");
  // simplify is the last pass that changes code for every target; then host targets note their lane plans
  // and how their parfors are split (the IR unchanged), and device targets spread loops over threads and offload
  EXPECT_STREQ(p.back().name, "offload");
  EXPECT_TRUE(p.back().device_only);
  EXPECT_STREQ(p[p.size() - 2].name, "spread_loops");
  EXPECT_TRUE(p[p.size() - 2].device_only);
  EXPECT_STREQ(p[p.size() - 3].name, "plan_splits");
  EXPECT_TRUE(p[p.size() - 3].host_only);
  EXPECT_STREQ(p[p.size() - 4].name, "plan_lanes");
  EXPECT_TRUE(p[p.size() - 4].host_only);
  EXPECT_STREQ(p[p.size() - 5].name, "simplify");
  const Var q = param("q", DType::F64), a = local("a", DType::F64);
  const ir::Function f = function("one", {q}, {let(a, val(q))}, val(a));
  passes::PassContext ctx;
  EXPECT_EQ(ir::to_string(passes::run_pass("simplify", f, ctx).result), "q");
  EXPECT_THROW(passes::run_pass("no_such_pass", f, ctx), std::out_of_range);
}

TEST(Pipeline, OutputVerifiesAndReportsTimingsAndNotes) {
  const Var x = array_param("x", DType::F64), s = local("s", DType::F64), c = local("c", DType::F64), i = index("i");
  const ir::Function f = function(
      "piped", {x},
      {let(c, f64c(2)), let(s, f64c(0)), parfor1(i, dim(x), block({assign(s, add(val(s), mul(load(x, {val(i)}), val(c))))}))},
      val(s));
  passes::PipelineReport report;
  const ir::Function g = passes::run_pipeline(f, &report);
  EXPECT_TRUE(ir::verify(g).empty()) << joined(ir::verify(g));
  EXPECT_EQ(ir::to_string(g),
            "kernel piped(x: f64[::1]) -> f64 {\n"
            "  let s: f64 = 0.0\n"
            "  parfor (i in 0 .. dim(x, 0)) reduce(add s) {  # test\n"
            "    s = (s + (x[i] * 2.0))\n"
            "  }\n"
            "  return s\n"
            "}\n");
  // Every pass but those of the bounds-checked mode (off here) and of device targets ran.
  const auto& all = passes::pipeline();
  ASSERT_EQ(report.timings.size(), static_cast<size_t>(std::count_if(all.begin(), all.end(), [](const auto& p) {
              return !p.boundscheck_only && !p.device_only;
            })));
  EXPECT_EQ(report.timings.front().pass, "detect_reductions");
  EXPECT_EQ(report.timings.back().pass, "plan_splits");
  EXPECT_GE(report.timings[0].us, 0.0);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_EQ(report.notes[0].text, "reduction: s (add, identity -0.0) in test");
  // The input is not modified.
  EXPECT_EQ(ir::to_string(f).find("reduce"), std::string::npos);
  // Without a report it works the same.
  EXPECT_EQ(ir::to_string(passes::run_pipeline(f)), ir::to_string(g));
}

TEST(Pipeline, UserErrorsFromPassesAreTraceErrors) {
  const Var n = param("n", DType::I64), last = local("last", DType::I64), i = index("i");
  const ir::Function f = function("racy_ir", {n}, {let(last, i64c(0)), parfor1(i, val(n), block({assign(last, val(i))}))},
                                  val(last));
  try {
    passes::run_pipeline(f);
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    const std::string m = e.what();
    EXPECT_CONTAINS(m, "kernel 'racy_ir'");
    EXPECT_CONTAINS(m, "scalar 'last'");
    EXPECT_CONTAINS(m, "the test");
  }
}

TEST(Pipeline, DumpsIRAfterEveryPassWhenAsked) {
  const Var q = param("q", DType::F64), a = local("a", DType::F64);
  const ir::Function f = function("dumped", {q}, {let(a, val(q))}, val(a));
  passes::PipelineOptions dumping;
  dumping.dump_ir = true;
  testing::internal::CaptureStderr();
  passes::run_pipeline(f, nullptr, dumping);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_CONTAINS(err, "=== kiln: dumped: IR after trace ===\nkernel dumped(q: f64) -> f64 {\n  let a: f64 = q\n");
  EXPECT_CONTAINS(err, "=== kiln: dumped: IR after detect_reductions ===");
  EXPECT_CONTAINS(err, "=== kiln: dumped: IR after simplify ===\nkernel dumped(q: f64) -> f64 {\n  return q\n}\n");
  // The passes never read the environment: KILN_DUMP_IR reaches them only through the frontend's options.
  ::setenv("KILN_DUMP_IR", "1", 1);
  testing::internal::CaptureStderr();
  passes::run_pipeline(f);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ::unsetenv("KILN_DUMP_IR");
}

// =========================================================================================================
// Golden IR of the example kernels, traced through kiln::jit
// =========================================================================================================

TEST(GoldenIR, Pi) {
  auto pi = jit("pi", [](Int n) {
    Double sum = 0.0, step = 1.0 / to_double(n);
    prange(n, [&](Int i) {
      auto x = (to_double(i) + 0.5) * step;
      sum += 4.0 / (1.0 + x * x);
    });
    return sum * step;
  }, interp());
  const std::int64_t n = 1000;
  const double got = pi(n);
  double want = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    want += 4.0 / (1.0 + x * x);
  }
  want /= static_cast<double>(n);
  // The interpreter sums in the same order as this loop; only the rounding of `step` differs (x * step vs
  // x / n): allow 1e-13 relative.
  EXPECT_NEAR(got, want, 1e-13 * want);
  EXPECT_NEAR(got, 3.14159265358979, 1e-6);  // midpoint rule error ~ 1/(12 n^2) * |f''| < 1e-6
  expect_golden("pi.ir", normalize_lines(pi.lowered_ir()));
}

TEST(GoldenIR, Saxpy) {
  auto saxpy = jit("saxpy", [](Float a, Array<float> x, Array<float> y) {
    prange(x.shape(0), [&](Int i) { y[i] = a * x[i] + y[i]; });
  }, interp());
  std::vector<float> x = {1, 2, 3, 4}, y = {0.5f, 0.25f, -1, 8};
  std::vector<float> want = y;
  for (size_t i = 0; i < x.size(); ++i) want[i] = 2.5f * x[i] + want[i];
  saxpy(2.5f, x, y);
  EXPECT_EQ(y, want);  // exact: the same float operations in the same order
  expect_golden("saxpy.ir", normalize_lines(saxpy.lowered_ir()));
}

TEST(GoldenIR, Dot) {
  auto dot = jit("dot", [](Array<double> x, Array<double> y) {
    Double s = 0.0;
    prange(x.shape(0), [&](Int i) { s += x[i] * y[i]; });
    return s;
  }, interp());
  std::vector<double> x = {1, 2, 3}, y = {4, -5, 6};
  EXPECT_EQ(dot(x, y), 4.0 - 10.0 + 18.0);
  expect_golden("dot.ir", normalize_lines(dot.lowered_ir()));
}

}  // namespace
}  // namespace kiln
