// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The IR itself: the checked builder, the stable printer (plain and canonical, with golden files), the
// verifier's rules and messages, the structural hash and BLAKE2b, and the small analyses (equal,
// free_vars, node_count, uses).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/hash.hpp"
#include "ir/ops.hpp"
#include "ir/printer.hpp"
#include "ir/semantics.hpp"
#include "ir/verifier.hpp"
#include "kiln/error.hpp"
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

// ---- IR construction shorthands: the shared ones (tools/test_support), then those only these tests use ------

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary

// Unit-stride by default, unlike test_support::array_param: most arrays here are contiguous.
Var array_param(const std::string& name, DType t, int rank = 1, bool unit = true) {
  return ir::make_var(name, ir::Type::array(t, rank, unit), ir::VarKind::Param);
}
Expr i32c(std::int32_t v) { return ir::make_int(DType::I32, v); }
Expr f64c(double v) { return ir::make_float(DType::F64, v); }
Expr f32c(double v) { return ir::make_float(DType::F32, v); }
Expr add(Expr a, Expr b) { return bin(BinaryOp::Add, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return bin(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr load(const Var& a, std::vector<Expr> idx) { return ir::make_load(a, std::move(idx)); }

std::string canonical(const ir::Function& f) { return ir::to_string(f, ir::PrintOptions{.canonical = true}); }

/// True if any of the verifier's messages contains `fragment`.
bool has_problem(const std::vector<std::string>& problems, const std::string& fragment) {
  for (const auto& p : problems)
    if (p.find(fragment) != std::string::npos) return true;
  return false;
}
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// ---- golden files --------------------------------------------------------------------------------------

std::string golden_path(const std::string& name) { return std::string(KILN_GOLDEN_DIR) + "/" + name; }

/// Compares `text` with tests/golden/<name> byte for byte. KILN_UPDATE_GOLDEN=1 rewrites the file instead
/// (and still fails, so an update is never silent).
void expect_golden(const std::string& name, const std::string& text) {
  const std::string path = golden_path(name);
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

// ---- sample functions ----------------------------------------------------------------------------------

/// A function exercising every statement kind: lets, for, a parfor with two reductions, if/else, an
/// allocation with a store, and an array result.
ir::Function sample_function(const std::string& kname = "sample", const std::string& suffix = "",
                             const std::string& origin = "prange at sample.cpp:7") {
  const Var n = param("n" + suffix, DType::I64);
  const Var x = array_param("x" + suffix, DType::F64, 1, true);
  const Var scale = param("scale" + suffix, DType::F32);
  const Var total = local("total" + suffix, DType::F64);
  const Var big = local("big" + suffix, DType::F64);
  const Var count = local("count" + suffix, DType::I32);
  const Var out = local_array("out" + suffix, DType::F32, 2);
  const Var i = index("i" + suffix), j = index("j" + suffix), k = index("k" + suffix);
  const Var flag = local("flag" + suffix, DType::Bool);

  Stmt red = parfor1(i, ir::make_dim(x, 0),
                     block({assign(total, add(val(total), load(x, {val(i)}))),
                            assign(big, bin(BinaryOp::Max, val(big), load(x, {val(i)})))}),
                     {{total, ReduceOp::Add}, {big, ReduceOp::Max}}, origin);
  Stmt seq = ir::make_for(j, i64c(1), val(n), block({assign(count, add(val(count), i32c(3)))}));
  Stmt branch = ir::make_if(bin(BinaryOp::Gt, val(total), f64c(0.5)),
                            block({assign(flag, ir::make_bool(true))}),
                            block({assign(flag, ir::make_unary(UnaryOp::Not, val(flag)))}));
  const Var i2 = index("i" + suffix);  // a second parfor needs its own index variable
  Stmt fill = ir::make_parfor({i2, k}, {i64c(0), i64c(0)}, {val(n), i64c(2)},
                              block({store(out, {val(i2), val(k)},
                                           mul(val(scale), ir::make_cast(DType::F32, val(total))))}),
                              {}, "fill" + suffix);
  return function(kname, {n, x, scale},
                  {let(total, f64c(0.0)), let(big, f64c(-kInf)), let(count, i32c(0)), let(flag, ir::make_bool(false)),
                   red, seq, branch, ir::make_allocate(out, {val(n), i64c(2)}), fill},
                  nullptr, out);
}

/// A scalar kernel: sum of squares through a sequential loop.
ir::Function scalar_function(const std::string& kname, const std::string& pname, double c, BinaryOp op,
                             std::int64_t lo, DType acc_type = DType::F64, bool unit = true) {
  const Var a = array_param(pname, DType::F64, 1, unit);
  const Var s = local("s", acc_type);
  const Var i = index("i");
  Expr v = load(a, {val(i)});
  if (acc_type != DType::F64) v = ir::make_cast(acc_type, v);
  return function(kname, {a},
                  {let(s, ir::make_const(acc_type, 0)),
                   ir::make_for(i, i64c(lo), ir::make_dim(a, 0),
                                block({assign(s, bin(op, val(s), mul(v, ir::make_const(acc_type, c))))}))},
                  val(s));
}

// =========================================================================================================
// Types, operators and the builder
// =========================================================================================================

TEST(IRType, ToString) {
  EXPECT_EQ(ir::to_string(ir::Type::scalar(DType::F64)), "f64");
  EXPECT_EQ(ir::to_string(ir::Type::scalar(DType::Bool)), "bool");
  EXPECT_EQ(ir::to_string(ir::Type::array(DType::I32, 1, false)), "i32[:]");
  EXPECT_EQ(ir::to_string(ir::Type::array(DType::I32, 1, true)), "i32[::1]");
  EXPECT_EQ(ir::to_string(ir::Type::array(DType::F32, 3, true)), "f32[:, :, ::1]");
  EXPECT_EQ(ir::to_string(ir::Type::array(DType::I64, 2, false)), "i64[:, :]");
  EXPECT_TRUE(ir::Type::scalar(DType::F32).is_scalar());
  EXPECT_TRUE(ir::Type::array(DType::F32, 1, false).is_array());
  EXPECT_NE(ir::Type::array(DType::F32, 1, false), ir::Type::array(DType::F32, 1, true));
}

TEST(IROps, NamesRoundTrip) {
  for (int k = 0; k <= static_cast<int>(BinaryOp::Ge); ++k) {
    const auto op = static_cast<BinaryOp>(k);
    ASSERT_NE(ir::name_of(op), "?") << k;
    EXPECT_EQ(ir::parse_binary(ir::name_of(op)), op) << ir::name_of(op);
  }
  for (int k = 0; k <= static_cast<int>(UnaryOp::BitNot); ++k) {
    const auto op = static_cast<UnaryOp>(k);
    EXPECT_EQ(ir::parse_unary(ir::name_of(op)), op);
  }
  for (int k = 0; k <= static_cast<int>(Intrinsic::IsFinite); ++k) {
    const auto fn = static_cast<Intrinsic>(k);
    EXPECT_EQ(ir::parse_intrinsic(ir::name_of(fn)), fn) << ir::name_of(fn);
  }
  for (int k = 0; k <= static_cast<int>(ReduceOp::Max); ++k) {
    const auto op = static_cast<ReduceOp>(k);
    EXPECT_EQ(ir::parse_reduce(ir::name_of(op)), op);
  }
  EXPECT_FALSE(ir::parse_binary("**").has_value());
  EXPECT_FALSE(ir::parse_intrinsic("sqr").has_value());
  EXPECT_EQ(ir::name_of(BinaryOp::Min), "min");
  EXPECT_EQ(ir::name_of(BinaryOp::And), "&&");
  EXPECT_EQ(ir::name_of(Intrinsic::Atan2), "atan2");
  EXPECT_EQ(ir::name_of(ReduceOp::Mul), "mul");
}

TEST(IROps, Facts) {
  EXPECT_TRUE(ir::is_comparison(BinaryOp::Eq));
  EXPECT_TRUE(ir::is_comparison(BinaryOp::Ge));
  EXPECT_FALSE(ir::is_comparison(BinaryOp::Or));
  EXPECT_FALSE(ir::is_comparison(BinaryOp::Add));
  EXPECT_TRUE(ir::is_commutative(BinaryOp::Add));
  EXPECT_TRUE(ir::is_commutative(BinaryOp::Max));
  EXPECT_FALSE(ir::is_commutative(BinaryOp::Sub));
  EXPECT_FALSE(ir::is_commutative(BinaryOp::Div));
  EXPECT_FALSE(ir::is_commutative(BinaryOp::Lt));
  EXPECT_EQ(ir::arity(Intrinsic::Sqrt), 1);
  EXPECT_EQ(ir::arity(Intrinsic::Pow), 2);
  EXPECT_EQ(ir::arity(Intrinsic::Fma), 3);
  EXPECT_TRUE(ir::is_float_only(Intrinsic::Exp));
  EXPECT_FALSE(ir::is_float_only(Intrinsic::Abs));
  EXPECT_TRUE(ir::returns_bool(Intrinsic::IsNan));
  EXPECT_FALSE(ir::returns_bool(Intrinsic::Floor));
  EXPECT_EQ(ir::combiner(ReduceOp::Add), BinaryOp::Add);
  EXPECT_EQ(ir::combiner(ReduceOp::Mul), BinaryOp::Mul);
  EXPECT_EQ(ir::combiner(ReduceOp::Min), BinaryOp::Min);
  EXPECT_EQ(ir::combiner(ReduceOp::Max), BinaryOp::Max);
}

TEST(IRBuilder, ConstantsAreNormalized) {
  EXPECT_EQ(ir::make_int(DType::I32, (std::int64_t{1} << 32) + 5)->as<ir::ConstExpr>().i, 5);  // wraps
  EXPECT_EQ(ir::make_int(DType::I32, 0x80000000LL)->as<ir::ConstExpr>().i, INT32_MIN);
  EXPECT_EQ(ir::make_int(DType::Bool, 7)->as<ir::ConstExpr>().i, 1);
  EXPECT_EQ(ir::make_float(DType::F32, 0.1)->as<ir::ConstExpr>().f, static_cast<double>(0.1f));
  EXPECT_EQ(ir::make_float(DType::F64, 0.1)->as<ir::ConstExpr>().f, 0.1);
  // make_const: integers truncate and saturate like a cast, NaN -> 0; bool is v != 0.
  EXPECT_EQ(ir::make_const(DType::I32, 2.9)->as<ir::ConstExpr>().i, 2);
  EXPECT_EQ(ir::make_const(DType::I32, -2.9)->as<ir::ConstExpr>().i, -2);
  EXPECT_EQ(ir::make_const(DType::I32, 1e10)->as<ir::ConstExpr>().i, INT32_MAX);
  EXPECT_EQ(ir::make_const(DType::I32, -1e10)->as<ir::ConstExpr>().i, INT32_MIN);
  EXPECT_EQ(ir::make_const(DType::I64, 1e30)->as<ir::ConstExpr>().i, INT64_MAX);
  EXPECT_EQ(ir::make_const(DType::I64, -kInf)->as<ir::ConstExpr>().i, INT64_MIN);
  EXPECT_EQ(ir::make_const(DType::I64, kNaN)->as<ir::ConstExpr>().i, 0);
  EXPECT_EQ(ir::make_const(DType::Bool, 0.5)->as<ir::ConstExpr>().i, 1);
  EXPECT_EQ(ir::make_const(DType::Bool, 0.0)->as<ir::ConstExpr>().i, 0);
  EXPECT_EQ(ir::make_const(DType::F64, 3)->type, DType::F64);
  EXPECT_TRUE(ir::is_const(i64c(3)));
  EXPECT_FALSE(ir::is_const(val(param("p", DType::I64))));
  EXPECT_TRUE(ir::is_const_value(i32c(3), 3.0));
  EXPECT_TRUE(ir::is_const_value(f64c(-0.0), 0.0));
  EXPECT_FALSE(ir::is_const_value(f64c(kNaN), kNaN));
}

TEST(IRBuilder, ResultTypes) {
  const Var a = param("a", DType::F32), b = param("b", DType::F32), n = param("n", DType::I32);
  EXPECT_EQ(add(val(a), val(b))->type, DType::F32);
  EXPECT_EQ(bin(BinaryOp::Lt, val(a), val(b))->type, DType::Bool);
  EXPECT_EQ(bin(BinaryOp::Eq, ir::make_bool(true), ir::make_bool(false))->type, DType::Bool);
  EXPECT_EQ(bin(BinaryOp::Shl, val(n), i32c(1))->type, DType::I32);
  EXPECT_EQ(bin(BinaryOp::BitXor, ir::make_bool(true), ir::make_bool(false))->type, DType::Bool);
  EXPECT_EQ(ir::make_unary(UnaryOp::Neg, val(n))->type, DType::I32);
  EXPECT_EQ(ir::make_cast(DType::F64, val(n))->type, DType::F64);
  EXPECT_EQ(ir::make_call(Intrinsic::IsNan, {val(a)})->type, DType::Bool);
  EXPECT_EQ(ir::make_call(Intrinsic::Abs, {val(n)})->type, DType::I32);
  EXPECT_EQ(ir::make_call(Intrinsic::Fma, {val(a), val(b), val(a)})->type, DType::F32);
  EXPECT_EQ(ir::make_select(ir::make_bool(true), val(n), i32c(0))->type, DType::I32);
  EXPECT_EQ(ir::make_dim(array_param("x", DType::F32, 2), 1)->type, DType::I64);
  EXPECT_EQ(load(array_param("x", DType::I32, 2), {i64c(0), i64c(1)})->type, DType::I32);
  // A cast to the operand's own type is the operand itself.
  const Expr e = val(a);
  EXPECT_EQ(ir::make_cast(DType::F32, e), e);
}

TEST(IRBuilder, IdentityOfReductions) {
  auto c = [](const Expr& e) -> const ir::ConstExpr& { return e->as<ir::ConstExpr>(); };
  EXPECT_EQ(c(ir::identity_of(ReduceOp::Add, DType::I32)).i, 0);
  EXPECT_EQ(c(ir::identity_of(ReduceOp::Mul, DType::I64)).i, 1);
  EXPECT_EQ(c(ir::identity_of(ReduceOp::Min, DType::F64)).f, kInf);
  EXPECT_EQ(c(ir::identity_of(ReduceOp::Max, DType::F32)).f, -kInf);
  EXPECT_EQ(c(ir::identity_of(ReduceOp::Min, DType::I32)).i, INT32_MAX);
  EXPECT_EQ(c(ir::identity_of(ReduceOp::Max, DType::I32)).i, INT32_MIN);
  EXPECT_EQ(c(ir::identity_of(ReduceOp::Min, DType::I64)).i, INT64_MAX);
  EXPECT_EQ(c(ir::identity_of(ReduceOp::Max, DType::I64)).i, INT64_MIN);
  for (auto op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max})
    for (auto t : {DType::I32, DType::I64, DType::F32, DType::F64}) EXPECT_EQ(ir::identity_of(op, t)->type, t);
  // The defining property, bit for bit: combining the identity with any x, on either side, gives x. For
  // floats this needs -0.0 for add (+0.0 + -0.0 is +0.0), so a partial sum of -0.0 terms stays -0.0.
  const double floats[] = {0.0, -0.0, 1.5, -2.25, 1e300, -1e-310, kInf, -kInf};
  auto bits = [](double v) {
    std::uint64_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
  };
  for (auto op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max}) {
    const double id64 = c(ir::identity_of(op, DType::F64)).f;
    const float id32 = static_cast<float>(c(ir::identity_of(op, DType::F32)).f);
    for (double x : floats) {
      const BinaryOp comb = ir::combiner(op);
      EXPECT_EQ(bits(ir::sem::binary<double>(comb, id64, x)), bits(x)) << ir::name_of(op) << " f64 " << x;
      EXPECT_EQ(bits(ir::sem::binary<double>(comb, x, id64)), bits(x)) << ir::name_of(op) << " f64 " << x;
      const float xf = static_cast<float>(x);
      EXPECT_EQ(bits(ir::sem::binary<float>(comb, id32, xf)), bits(xf)) << ir::name_of(op) << " f32 " << x;
    }
    EXPECT_TRUE(std::isnan(ir::sem::binary<double>(ir::combiner(op), id64, kNaN))) << ir::name_of(op);
    for (std::int64_t x : {std::int64_t{0}, std::int64_t{-7}, std::int64_t{42}, INT64_MIN, INT64_MAX}) {
      const std::int64_t id = c(ir::identity_of(op, DType::I64)).i;
      EXPECT_EQ(ir::sem::binary<std::int64_t>(ir::combiner(op), id, x), x) << ir::name_of(op) << " i64 " << x;
      const auto x32 = static_cast<std::int32_t>(x);
      const auto id32i = static_cast<std::int32_t>(c(ir::identity_of(op, DType::I32)).i);
      EXPECT_EQ(ir::sem::binary<std::int32_t>(ir::combiner(op), x32, id32i), x32) << ir::name_of(op) << " i32 " << x;
    }
  }
}

/// Every malformed construction is an ir::IRError (a kiln::Error) with a message saying what is wrong.
void expect_ir_error(const std::function<void()>& build, const std::string& fragment) {
  try {
    build();
    ADD_FAILURE() << "expected ir::IRError containing '" << fragment << "'";
  } catch (const ir::IRError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed IR"), std::string::npos) << e.what();
  }
}

TEST(IRBuilder, TypeErrorsThrowIRError) {
  const Var f = param("f", DType::F64), g = param("g", DType::F32), n = param("n", DType::I64),
            m = param("m", DType::I32), b = param("b", DType::Bool);
  const Var x = array_param("x", DType::F64, 2);
  const Var s = local("s", DType::F64), flag = local("flag", DType::Bool);
  const Var i = index("i");
  static_assert(std::is_base_of_v<Error, ir::IRError>);

  expect_ir_error([&] { add(val(f), val(g)); }, "operand types differ");
  expect_ir_error([&] { add(val(f), val(n)); }, "operand types differ");
  expect_ir_error([&] { add(val(b), val(b)); }, "arithmetic on bool");
  expect_ir_error([&] { bin(BinaryOp::Min, val(b), val(b)); }, "arithmetic on bool");
  expect_ir_error([&] { bin(BinaryOp::BitAnd, val(f), val(f)); }, "bitwise operation on a float");
  expect_ir_error([&] { bin(BinaryOp::Shl, val(f), val(f)); }, "shift of a non-integer");
  expect_ir_error([&] { bin(BinaryOp::Shr, val(b), val(b)); }, "shift of a non-integer");
  expect_ir_error([&] { bin(BinaryOp::And, val(n), val(n)); }, "logical operation needs bool");
  expect_ir_error([&] { ir::make_unary(UnaryOp::Neg, val(b)); }, "negation of bool");
  expect_ir_error([&] { ir::make_unary(UnaryOp::Not, val(n)); }, "logical not needs bool");
  expect_ir_error([&] { ir::make_unary(UnaryOp::BitNot, val(f)); }, "bitwise not needs an integer");
  expect_ir_error([&] { ir::make_select(val(n), val(f), val(f)); }, "select condition must be bool");
  expect_ir_error([&] { ir::make_select(val(b), val(f), val(g)); }, "select operands differ");
  expect_ir_error([&] { load(x, {i64c(0)}); }, "x has rank 2 but is indexed with 1 indices");
  expect_ir_error([&] { load(x, {i64c(0), i32c(0)}); }, "array index must be i64");
  expect_ir_error([&] { load(f, {i64c(0)}); }, "indexing a non-array");
  expect_ir_error([&] { ir::make_ref(x); }, "array x used as a scalar value");
  expect_ir_error([&] { ir::make_ref(nullptr); }, "null variable");
  expect_ir_error([&] { ir::make_dim(x, 2); }, "dim axis out of range for x");
  expect_ir_error([&] { ir::make_dim(x, -1); }, "dim axis out of range");
  expect_ir_error([&] { ir::make_dim(n, 0); }, "dim of a non-array");
  expect_ir_error([&] { ir::make_call(Intrinsic::Pow, {val(f)}); }, "pow takes 2 arguments");
  expect_ir_error([&] { ir::make_call(Intrinsic::Sqrt, {val(n)}); }, "intrinsic needs float arguments");
  expect_ir_error([&] { ir::make_call(Intrinsic::Abs, {val(b)}); }, "intrinsic on bool");
  expect_ir_error([&] { ir::make_call(Intrinsic::Atan2, {val(f), val(g)}); }, "intrinsic arguments differ in type");
  expect_ir_error([&] { ir::make_int(DType::F64, 1); }, "make_int with a float type");
  expect_ir_error([&] { ir::make_float(DType::I32, 1); }, "make_float with a non-float type");

  expect_ir_error([&] { let(s, val(g)); }, "let initializer type differs for s");
  expect_ir_error([&] { let(n, i64c(1)); }, "let needs a local scalar variable");
  expect_ir_error([&] { let(local_array("arr", DType::F64, 1), f64c(1)); }, "let needs a local scalar variable");
  expect_ir_error([&] { assign(n, i64c(1)); }, "assignment to n, which is not a local scalar");
  expect_ir_error([&] { assign(i, i64c(1)); }, "assignment to i, which is not a local scalar");
  expect_ir_error([&] { assign(s, val(n)); }, "assigned value type differs for s");
  expect_ir_error([&] { store(x, {i64c(0), i64c(0)}, val(g)); }, "stored value type differs for x");
  expect_ir_error([&] { store(f, {i64c(0)}, val(f)); }, "indexing a non-array");
  expect_ir_error([&] { ir::make_for(s, i64c(0), i64c(1), block({})); }, "for loop index must be an i64 index variable");
  expect_ir_error([&] { ir::make_for(i, i32c(0), i64c(1), block({})); }, "loop bounds must be i64");
  expect_ir_error([&] { ir::make_for(i, i64c(0), i64c(1), nullptr); }, "null loop body");
  expect_ir_error([&] { ir::make_parfor({}, {}, {}, block({})); }, "parfor needs 1..4 dimensions");
  expect_ir_error(
      [&] {
        std::vector<Var> idx;
        for (int d = 0; d < 5; ++d) idx.push_back(index("i"));
        ir::make_parfor(idx, std::vector<Expr>(5, i64c(0)), std::vector<Expr>(5, i64c(1)), block({}));
      },
      "parfor needs 1..4 dimensions");
  expect_ir_error([&] { ir::make_parfor({i}, {i64c(0)}, {}, block({})); }, "parfor bounds do not match its rank");
  expect_ir_error([&] { ir::make_parfor({s}, {i64c(0)}, {i64c(1)}, block({})); }, "parfor index must be an i64 index");
  expect_ir_error([&] { ir::make_parfor({i}, {i64c(0)}, {i32c(1)}, block({})); }, "parfor bounds must be i64");
  expect_ir_error([&] { ir::make_parfor({i}, {i64c(0)}, {i64c(1)}, block({}), {{flag, ReduceOp::Max}}); },
                  "reduction variable must be a numeric local scalar");
  expect_ir_error([&] { ir::make_parfor({i}, {i64c(0)}, {i64c(1)}, block({}), {{f, ReduceOp::Add}}); },
                  "reduction variable must be a numeric local scalar");
  expect_ir_error([&] { ir::make_if(val(n), block({})); }, "if condition must be bool");
  expect_ir_error([&] { ir::make_if(val(b), nullptr); }, "null then branch");
  expect_ir_error([&] { ir::make_allocate(x, {i64c(1), i64c(1)}); }, "allocate needs a local array variable");
  expect_ir_error([&] { ir::make_allocate(local_array("a", DType::F64, 2), {i64c(1)}); },
                  "allocation shape does not match the rank of a");
  expect_ir_error([&] { ir::make_allocate(local_array("a", DType::F64, 1), {i32c(1)}); },
                  "allocation extents must be i64");
  expect_ir_error([&] { block({nullptr}); }, "null statement in block");
  (void)m;
}

TEST(IRBuilder, ErrorMessageShowsOperands) {
  const Var f = param("alpha", DType::F64), g = param("beta", DType::F32);
  try {
    add(val(f), val(g));
    FAIL() << "expected IRError";
  } catch (const ir::IRError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[alpha : f64]"), std::string::npos) << m;
    EXPECT_NE(m.find("[beta : f32]"), std::string::npos) << m;
  }
}

// =========================================================================================================
// Printer
// =========================================================================================================

TEST(IRPrinter, Literals) {
  auto lit = [](const Expr& e) { return ir::literal(e->as<ir::ConstExpr>()); };
  EXPECT_EQ(lit(i64c(3)), "3");
  EXPECT_EQ(lit(i64c(-5)), "-5");
  EXPECT_EQ(lit(i64c(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(lit(i32c(3)), "3i32");
  EXPECT_EQ(lit(i32c(-7)), "-7i32");
  EXPECT_EQ(lit(i32c(INT32_MIN)), "-2147483648i32");
  EXPECT_EQ(lit(ir::make_bool(true)), "true");
  EXPECT_EQ(lit(ir::make_bool(false)), "false");
  EXPECT_EQ(lit(f64c(0.5)), "0.5");
  EXPECT_EQ(lit(f32c(0.5)), "0.5f");
  EXPECT_EQ(lit(f64c(1.0)), "1.0");  // always distinguishable from an integer literal
  EXPECT_EQ(lit(f32c(2.0)), "2.0f");
  EXPECT_EQ(lit(f64c(0.0)), "0.0");
  EXPECT_EQ(lit(f64c(-0.0)), "-0.0");  // the sign of zero is part of the value
  EXPECT_EQ(lit(f64c(0.1)), "0.1");    // shortest round-trip form
  EXPECT_EQ(lit(f32c(0.1)), "0.1f");   // shortest form of the float, not of the double it is stored in
  EXPECT_EQ(lit(f64c(static_cast<double>(0.1f))), "0.10000000149011612");
  EXPECT_EQ(lit(f64c(1e300)), "1e+300");
  EXPECT_EQ(lit(f64c(-2.5e-8)), "-2.5e-08");
  EXPECT_EQ(lit(f64c(123456789.0)), "123456789.0");
  EXPECT_EQ(lit(f64c(kNaN)), "nan");
  EXPECT_EQ(lit(f64c(kInf)), "inf");
  EXPECT_EQ(lit(f64c(-kInf)), "-inf");
  // f32 specials are marked as f32 too, so an f32 and an f64 NaN never print alike.
  EXPECT_EQ(lit(f32c(kNaN)).rfind("nan", 0), 0u);
  EXPECT_NE(lit(f32c(kNaN)), lit(f64c(kNaN)));
  EXPECT_NE(lit(f32c(-kInf)), lit(f64c(-kInf)));
}

TEST(IRPrinter, Expressions) {
  const Var a = param("a", DType::F64), n = param("n", DType::I64), b = param("b", DType::Bool);
  const Var x = array_param("x", DType::F64, 2);
  EXPECT_EQ(ir::to_string(add(val(a), f64c(1))), "(a + 1.0)");
  EXPECT_EQ(ir::to_string(mul(add(val(a), f64c(1)), val(a))), "((a + 1.0) * a)");
  EXPECT_EQ(ir::to_string(bin(BinaryOp::Min, val(a), f64c(2))), "min(a, 2.0)");
  EXPECT_EQ(ir::to_string(bin(BinaryOp::Max, val(n), i64c(2))), "max(n, 2)");
  EXPECT_EQ(ir::to_string(bin(BinaryOp::Le, val(n), i64c(2))), "(n <= 2)");
  EXPECT_EQ(ir::to_string(bin(BinaryOp::Or, val(b), ir::make_bool(false))), "(b || false)");
  EXPECT_EQ(ir::to_string(bin(BinaryOp::Shr, val(n), i64c(3))), "(n >> 3)");
  EXPECT_EQ(ir::to_string(ir::make_unary(UnaryOp::Neg, val(a))), "-a");
  EXPECT_EQ(ir::to_string(ir::make_unary(UnaryOp::Not, val(b))), "!b");
  EXPECT_EQ(ir::to_string(ir::make_unary(UnaryOp::BitNot, val(n))), "~n");
  EXPECT_EQ(ir::to_string(ir::make_cast(DType::F32, val(n))), "f32(n)");
  EXPECT_EQ(ir::to_string(ir::make_cast(DType::Bool, val(a))), "bool(a)");
  EXPECT_EQ(ir::to_string(ir::make_select(val(b), val(a), f64c(0))), "select(b, a, 0.0)");
  EXPECT_EQ(ir::to_string(ir::make_call(Intrinsic::Sqrt, {val(a)})), "sqrt(a)");
  EXPECT_EQ(ir::to_string(ir::make_call(Intrinsic::Fma, {val(a), val(a), f64c(1)})), "fma(a, a, 1.0)");
  EXPECT_EQ(ir::to_string(ir::make_dim(x, 1)), "dim(x, 1)");
  EXPECT_EQ(ir::to_string(load(x, {val(n), i64c(0)})), "x[n, 0]");
  EXPECT_EQ(ir::to_string(Expr{}), "<null>");
  EXPECT_EQ(ir::to_string(Stmt{}), "<null>");
}

TEST(IRPrinter, Statements) {
  const Var s = local("s", DType::F64), x = array_param("x", DType::F64, 1), i = index("i");
  EXPECT_EQ(ir::to_string(let(s, f64c(2))), "let s: f64 = 2.0\n");
  EXPECT_EQ(ir::to_string(assign(s, add(val(s), f64c(1)))), "s = (s + 1.0)\n");
  EXPECT_EQ(ir::to_string(store(x, {i64c(3)}, val(s))), "x[3] = s\n");
  EXPECT_EQ(ir::to_string(ir::make_for(i, i64c(0), ir::make_dim(x, 0), block({store(x, {val(i)}, f64c(0))}))),
            "for i in 0 .. dim(x, 0) {\n  x[i] = 0.0\n}\n");
  EXPECT_EQ(ir::to_string(ir::make_if(bin(BinaryOp::Gt, val(s), f64c(0)), block({assign(s, f64c(0))}))),
            "if (s > 0.0) {\n  s = 0.0\n}\n");
  EXPECT_EQ(ir::to_string(block({assign(s, f64c(1)), block({assign(s, f64c(2))})})),
            "{\n  s = 1.0\n  {\n    s = 2.0\n  }\n}\n");
  const Var a = local_array("buf", DType::I32, 2);
  EXPECT_EQ(ir::to_string(ir::make_allocate(a, {i64c(3), i64c(4)})), "alloc buf: i32[:, ::1] (3, 4)\n");
}

TEST(IRPrinter, FunctionWithEveryStatementKind) {
  const std::string expected =
      "kernel sample(n: i64, x: f64[::1], scale: f32) -> f32[:, ::1] {\n"
      "  let total: f64 = 0.0\n"
      "  let big: f64 = -inf\n"
      "  let count: i32 = 0i32\n"
      "  let flag: bool = false\n"
      "  parfor (i in 0 .. dim(x, 0)) reduce(add total, max big) {  # prange at sample.cpp:7\n"
      "    total = (total + x[i])\n"
      "    big = max(big, x[i])\n"
      "  }\n"
      "  for j in 1 .. n {\n"
      "    count = (count + 3i32)\n"
      "  }\n"
      "  if (total > 0.5) {\n"
      "    flag = true\n"
      "  } else {\n"
      "    flag = !flag\n"
      "  }\n"
      "  alloc out: f32[:, ::1] (n, 2)\n"
      "  parfor (i.1 in 0 .. n, k in 0 .. 2) {  # fill\n"
      "    out[i.1, k] = (scale * f32(total))\n"
      "  }\n"
      "  return out\n"
      "}\n";
  const ir::Function f = sample_function();
  EXPECT_EQ(ir::to_string(f), expected);
  EXPECT_TRUE(ir::verify(f).empty()) << joined(ir::verify(f));
  expect_golden("printer_sample.ir", ir::to_string(f));
}

TEST(IRPrinter, CanonicalForm) {
  const ir::Function f = sample_function();
  const std::string c = canonical(f);
  EXPECT_EQ(c.rfind("kernel k(v0: i64, v1: f64[::1], v2: f32) -> f32[:, ::1] {\n", 0), 0u) << c;
  EXPECT_EQ(c.find('#'), std::string::npos) << "canonical text has no origins:\n" << c;
  EXPECT_EQ(c.find("total"), std::string::npos) << c;
  EXPECT_EQ(c.find("sample"), std::string::npos) << c;
  // Variables are numbered in order of definition.
  EXPECT_NE(c.find("  let v3: f64 = 0.0\n"), std::string::npos) << c;
  EXPECT_NE(c.find("parfor (v7 in 0 .. dim(v1, 0)) reduce(add v3, max v4) {\n"), std::string::npos) << c;
  EXPECT_NE(c.find("  return v9\n"), std::string::npos) << c;
  expect_golden("printer_sample_canonical.ir", c);
  // Renaming everything, the kernel and the origins changes nothing in canonical form.
  const ir::Function g = sample_function("other_name", "_renamed", "prange at elsewhere.cpp:99");
  EXPECT_NE(ir::to_string(f), ir::to_string(g));
  EXPECT_EQ(canonical(f), canonical(g));
}

TEST(IRPrinter, ScalarResultAndDuplicateNames) {
  // Two distinct variables with the same name print as x and x.1; an unnamed one as t.
  const Var p = param("x", DType::I64), a = local("x", DType::I64), b = local("x", DType::I64), c = local("", DType::I64);
  const ir::Function f = function("dup", {p}, {let(a, add(val(p), i64c(1))), let(b, val(a)), let(c, val(b))},
                                  add(val(c), val(p)));
  EXPECT_EQ(ir::to_string(f),
            "kernel dup(x: i64) -> i64 {\n"
            "  let x.1: i64 = (x + 1)\n"
            "  let x.2: i64 = x.1\n"
            "  let t: i64 = x.2\n"
            "  return (t + x)\n"
            "}\n");
  EXPECT_EQ(canonical(f),
            "kernel k(v0: i64) -> i64 {\n"
            "  let v1: i64 = (v0 + 1)\n"
            "  let v2: i64 = v1\n"
            "  let v3: i64 = v2\n"
            "  return (v3 + v0)\n"
            "}\n");
}

TEST(IRPrinter, UseBeforeDefinitionIsMarked) {
  const Var p = param("p", DType::F64), s = local("ghost", DType::F64);
  const ir::Function f = function("bad", {p}, {}, add(val(p), val(s)));
  EXPECT_NE(ir::to_string(f).find("?ghost"), std::string::npos) << ir::to_string(f);
}

TEST(IRPrinter, GoldenScalarKernel) {
  const ir::Function f = scalar_function("sumsq", "a", 2.0, BinaryOp::Add, 0);
  expect_golden("printer_scalar.ir", ir::to_string(f));
  EXPECT_EQ(ir::to_string(f),
            "kernel sumsq(a: f64[::1]) -> f64 {\n"
            "  let s: f64 = 0.0\n"
            "  for i in 0 .. dim(a, 0) {\n"
            "    s = (s + (a[i] * 2.0))\n"
            "  }\n"
            "  return s\n"
            "}\n");
}

// =========================================================================================================
// Verifier
// =========================================================================================================

TEST(IRVerifier, WellFormedFunctionsPass) {
  EXPECT_TRUE(ir::verify(sample_function()).empty()) << joined(ir::verify(sample_function()));
  EXPECT_TRUE(ir::verify(scalar_function("k", "a", 1, BinaryOp::Add, 0)).empty());
  EXPECT_NO_THROW(ir::verify_or_throw(sample_function(), "test"));
  // A variable defined at the top level of the body is visible to the result.
  const Var s = local("s", DType::F64);
  EXPECT_TRUE(ir::verify(function("k", {}, {let(s, f64c(1))}, val(s))).empty());
}

TEST(IRVerifier, UseOutOfScope) {
  const Var n = param("n", DType::I64), t = local("inner", DType::I64), s = local("s", DType::I64);
  // `inner` is defined inside a nested block and used after it.
  const ir::Function f =
      function("k", {n}, {let(s, i64c(0)), block({let(t, val(n))}), assign(s, val(t))}, val(s));
  const auto problems = ir::verify(f);
  EXPECT_TRUE(has_problem(problems, "inner is used out of scope in the assignment to s")) << joined(problems);
  // A loop index after its loop.
  const Var i = index("i");
  const ir::Function g = function("k", {n}, {let(s, i64c(0)), ir::make_for(i, i64c(0), val(n), block({}))}, val(i));
  EXPECT_TRUE(has_problem(ir::verify(g), "i is used out of scope in the result")) << joined(ir::verify(g));
  // A variable never defined at all, in a store index and in a loop bound.
  const Var x = array_param("x", DType::F64), ghost = local("ghost", DType::I64);
  const ir::Function h = function("k", {x}, {store(x, {val(ghost)}, f64c(0))});
  EXPECT_TRUE(has_problem(ir::verify(h), "ghost is used out of scope in an index of x")) << joined(ir::verify(h));
  const ir::Function h2 = function("k", {x}, {ir::make_for(i, i64c(0), val(ghost), block({}))});
  EXPECT_TRUE(has_problem(ir::verify(h2), "ghost is used out of scope in a loop bound")) << joined(ir::verify(h2));
  // An assignment to an undefined variable, and a let whose initializer reads the variable it defines.
  const ir::Function h3 = function("k", {}, {assign(ghost, i64c(1))});
  EXPECT_TRUE(has_problem(ir::verify(h3), "ghost is used out of scope in an assignment")) << joined(ir::verify(h3));
  const Var self = local("self", DType::I64);
  const ir::Function h4 = function("k", {}, {let(self, add(val(self), i64c(1)))});
  EXPECT_TRUE(has_problem(ir::verify(h4), "self is used out of scope in the initializer of self"))
      << joined(ir::verify(h4));
  // A branch's definitions are not visible after the if.
  const Var c = local("c", DType::I64);
  const ir::Function h5 = function("k", {n}, {ir::make_if(ir::make_bool(true), block({let(c, i64c(1))})), let(s, val(c))},
                                   val(s));
  EXPECT_TRUE(has_problem(ir::verify(h5), "c is used out of scope in the initializer of s")) << joined(ir::verify(h5));
}

TEST(IRVerifier, DoubleDefinition) {
  const Var s = local("twice", DType::F64);
  const ir::Function f = function("k", {}, {let(s, f64c(1)), let(s, f64c(2))}, val(s));
  EXPECT_TRUE(has_problem(ir::verify(f), "variable twice is defined twice")) << joined(ir::verify(f));
  // Also across scopes: the same index object for two loops.
  const Var i = index("i");
  const ir::Function g = function("k", {}, {ir::make_for(i, i64c(0), i64c(1), block({})),
                                            ir::make_for(i, i64c(0), i64c(1), block({}))});
  EXPECT_TRUE(has_problem(ir::verify(g), "variable i is defined twice")) << joined(ir::verify(g));
  // A parameter listed twice.
  const Var p = param("p", DType::I64);
  EXPECT_TRUE(has_problem(ir::verify(function("k", {p, p}, {})), "variable p is defined twice"));
}

TEST(IRVerifier, AssignmentToParameterOrIndexIsRejectedByTheBuilder) {
  // The builder refuses these outright (so the verifier never sees them from well-behaved passes).
  const Var p = param("p", DType::I64), i = index("i");
  EXPECT_THROW(assign(p, i64c(1)), ir::IRError);
  EXPECT_THROW(assign(i, i64c(1)), ir::IRError);
}

// BUG (ir/verifier.cpp, Verifier::stmt, case StmtKind::Assign, ~line 102): the verifier claims to check
// "mutability" (verifier.hpp) but never checks the kind of an assigned variable, so an AssignStmt built
// directly (bypassing the builder, as any pass could) that writes a kernel parameter or a loop index
// verifies clean. Expected: a problem like "assignment to p, which is not a local scalar"; actual: no problem.
TEST(IRVerifier, AssignmentToParameterOrIndex) {
  const Var p = param("p", DType::I64), i = index("i");
  const Stmt to_param = std::make_shared<ir::AssignStmt>(p, i64c(1));
  const ir::Function f = function("k", {p}, {to_param});
  EXPECT_FALSE(ir::verify(f).empty()) << "assignment to a parameter passed the verifier";
  const Stmt to_index = std::make_shared<ir::AssignStmt>(i, i64c(5));
  const ir::Function g = function("k", {}, {ir::make_for(i, i64c(0), i64c(3), block({to_index}))});
  EXPECT_FALSE(ir::verify(g).empty()) << "assignment to a loop index passed the verifier";
}

TEST(IRVerifier, OuterWriteInParforWithoutReduction) {
  const Var n = param("n", DType::I64), last = local("last", DType::I64), i = index("i");
  const ir::Function f =
      function("k", {n}, {let(last, i64c(0)), parfor1(i, val(n), block({assign(last, val(i))}))}, val(last));
  const auto problems = ir::verify(f);
  EXPECT_TRUE(has_problem(problems, "last is defined outside a parfor and assigned inside it without being a reduction"))
      << joined(problems);
  // Inside a sequential loop inside the parfor it is still an outer write.
  const Var j = index("j"), i2 = index("i");
  const ir::Function g = function(
      "k", {n},
      {let(last, i64c(0)), parfor1(i2, val(n), block({ir::make_for(j, i64c(0), i64c(2), block({assign(last, val(j))}))}))},
      val(last));
  EXPECT_TRUE(has_problem(ir::verify(g), "last is defined outside a parfor")) << joined(ir::verify(g));
  // A variable declared inside the parfor body may be assigned freely.
  const Var tmp = local("tmp", DType::I64), i3 = index("i");
  const ir::Function h =
      function("k", {n}, {parfor1(i3, val(n), block({let(tmp, i64c(0)), assign(tmp, add(val(tmp), val(i3)))}))});
  EXPECT_TRUE(ir::verify(h).empty()) << joined(ir::verify(h));
  // A sequential loop may assign outer variables freely.
  const Var j2 = index("j");
  const ir::Function h2 = function("k", {n}, {let(last, i64c(0)), ir::make_for(j2, i64c(0), val(n), block({assign(last, val(j2))}))},
                                   val(last));
  EXPECT_TRUE(ir::verify(h2).empty()) << joined(ir::verify(h2));
}

TEST(IRVerifier, ReductionReadOutsideItsUpdate) {
  const Var x = array_param("x", DType::F64), s = local("s", DType::F64), i = index("i");
  const ir::Function f = function(
      "k", {x},
      {let(s, f64c(0)), parfor1(i, ir::make_dim(x, 0),
                                block({assign(s, add(val(s), load(x, {val(i)}))), store(x, {val(i)}, val(s))}),
                                {{s, ReduceOp::Add}})},
      val(s));
  const auto problems = ir::verify(f);
  EXPECT_TRUE(has_problem(problems, "reduction variable s is read inside its parfor outside its own update"))
      << joined(problems);
}

TEST(IRVerifier, WrongReductionShape) {
  const Var x = array_param("x", DType::F64), s = local("s", DType::F64), i = index("i");
  // Declared as an add reduction but updated by multiplication.
  const ir::Function f = function(
      "k", {x},
      {let(s, f64c(1)), parfor1(i, ir::make_dim(x, 0), block({assign(s, mul(val(s), load(x, {val(i)})))}),
                                {{s, ReduceOp::Add}})},
      val(s));
  EXPECT_TRUE(has_problem(ir::verify(f), "reduction variable s is updated as `(s * x[i])`, not as a add reduction"))
      << joined(ir::verify(f));
  // The update must not read s on the other side: s = s + s.
  const Var i2 = index("i");
  const ir::Function g = function(
      "k", {x}, {let(s, f64c(1)), parfor1(i2, ir::make_dim(x, 0), block({assign(s, add(val(s), val(s)))}), {{s, ReduceOp::Add}})},
      val(s));
  EXPECT_TRUE(has_problem(ir::verify(g), "not as a add reduction")) << joined(ir::verify(g));
  // A reduction listed twice.
  const Var i3 = index("i");
  const ir::Function h = function(
      "k", {x},
      {let(s, f64c(0)), parfor1(i3, ir::make_dim(x, 0), block({assign(s, add(val(s), f64c(1)))}),
                                {{s, ReduceOp::Add}, {s, ReduceOp::Add}})},
      val(s));
  EXPECT_TRUE(has_problem(ir::verify(h), "reduction variable s is listed twice")) << joined(ir::verify(h));
}

TEST(IRVerifier, IsReductionUpdate) {
  const Var s = local("s", DType::F64), e = param("e", DType::F64);
  auto upd = [&](Expr v) { return ir::AssignStmt(s, std::move(v)); };
  EXPECT_TRUE(ir::is_reduction_update(upd(add(val(s), val(e))), ReduceOp::Add));
  EXPECT_TRUE(ir::is_reduction_update(upd(add(val(e), val(s))), ReduceOp::Add));  // commutative
  EXPECT_TRUE(ir::is_reduction_update(upd(bin(BinaryOp::Sub, val(s), val(e))), ReduceOp::Add));
  EXPECT_FALSE(ir::is_reduction_update(upd(bin(BinaryOp::Sub, val(e), val(s))), ReduceOp::Add));
  EXPECT_TRUE(ir::is_reduction_update(upd(mul(val(s), val(e))), ReduceOp::Mul));
  EXPECT_TRUE(ir::is_reduction_update(upd(bin(BinaryOp::Div, val(s), val(e))), ReduceOp::Mul));
  EXPECT_FALSE(ir::is_reduction_update(upd(bin(BinaryOp::Div, val(e), val(s))), ReduceOp::Mul));
  // Integer division truncates, so s / a / b cannot be regrouped as s * (1/a * 1/b): not a reduction.
  const Var k = local("k", DType::I64), d = param("d", DType::I64);
  EXPECT_FALSE(ir::is_reduction_update(ir::AssignStmt(k, bin(BinaryOp::Div, val(k), val(d))), ReduceOp::Mul));
  EXPECT_TRUE(ir::is_reduction_update(ir::AssignStmt(k, bin(BinaryOp::Sub, val(k), val(d))), ReduceOp::Add));
  EXPECT_TRUE(ir::is_reduction_update(upd(bin(BinaryOp::Min, val(e), val(s))), ReduceOp::Min));
  EXPECT_TRUE(ir::is_reduction_update(upd(bin(BinaryOp::Max, val(s), val(e))), ReduceOp::Max));
  EXPECT_FALSE(ir::is_reduction_update(upd(bin(BinaryOp::Max, val(s), val(e))), ReduceOp::Min));
  EXPECT_FALSE(ir::is_reduction_update(upd(add(val(s), val(e))), ReduceOp::Mul));
  EXPECT_FALSE(ir::is_reduction_update(upd(add(val(s), mul(val(s), val(e)))), ReduceOp::Add));  // e reads s
  EXPECT_FALSE(ir::is_reduction_update(upd(val(e)), ReduceOp::Add));
  EXPECT_FALSE(ir::is_reduction_update(upd(add(val(e), val(e))), ReduceOp::Add));
}

TEST(IRVerifier, BothResultsAndOtherFunctionRules) {
  const Var out = local_array("out", DType::F64, 1);
  const ir::Function f =
      function("k", {}, {ir::make_allocate(out, {i64c(3)})}, f64c(1.0), out);
  EXPECT_TRUE(has_problem(ir::verify(f), "function has both a scalar and an array result")) << joined(ir::verify(f));
  // An array result that is a parameter is not allocated by the kernel.
  const Var x = array_param("x", DType::F64);
  const ir::Function g = function("k", {x}, {}, nullptr, x);
  EXPECT_TRUE(has_problem(ir::verify(g), "result array x is not allocated by the kernel")) << joined(ir::verify(g));
  // An array result allocated in a nested scope is out of scope at the return.
  const Var inner = local_array("inner", DType::F64, 1);
  const ir::Function h = function("k", {}, {block({ir::make_allocate(inner, {i64c(3)})})}, nullptr, inner);
  EXPECT_TRUE(has_problem(ir::verify(h), "result array inner is not in scope")) << joined(ir::verify(h));
  // Parameters must be of kind Param.
  const Var notparam = local("lp", DType::F64);
  EXPECT_TRUE(has_problem(ir::verify(function("k", {notparam}, {})), "parameter lp is not of kind Param"));
  // A function needs a body.
  ir::Function nobody;
  nobody.name = "k";
  EXPECT_TRUE(has_problem(ir::verify(nobody), "function has no body"));
}

TEST(IRVerifier, ReductionClauseMustBeInScope) {
  const Var s = local("s", DType::F64), i = index("i");
  const ir::Function f = function("k", {}, {parfor1(i, i64c(4), block({assign(s, add(val(s), f64c(1)))}), {{s, ReduceOp::Add}})});
  EXPECT_TRUE(has_problem(ir::verify(f), "s is used out of scope in a reduction clause")) << joined(ir::verify(f));
}

TEST(IRVerifier, NestedParforInheritsReduction) {
  // An outer parfor whose inner parfor reduces the same variable: both carry the reduction.
  const Var n = param("n", DType::I64), s = local("s", DType::I64), i = index("i"), j = index("j");
  Stmt inner = parfor1(j, val(n), block({assign(s, add(val(s), mul(val(i), val(j))))}), {{s, ReduceOp::Add}});
  const ir::Function ok = function("k", {n}, {let(s, i64c(0)), parfor1(i, val(n), block({inner}), {{s, ReduceOp::Add}})}, val(s));
  EXPECT_TRUE(ir::verify(ok).empty()) << joined(ir::verify(ok));
}

// Every parfor an assignment crosses must reduce the variable: an outer parfor lacking the reduction its
// inner parfor declares would let its concurrent iterations all combine into the scalar (a race).
TEST(IRVerifier, NestedParforWithoutInheritedReduction) {
  const Var n = param("n", DType::I64), s = local("s", DType::I64), i = index("i"), j = index("j");
  Stmt inner = parfor1(j, val(n), block({assign(s, add(val(s), mul(val(i), val(j))))}), {{s, ReduceOp::Add}});
  const ir::Function bad = function("k", {n}, {let(s, i64c(0)), parfor1(i, val(n), block({inner}))}, val(s));
  EXPECT_TRUE(has_problem(ir::verify(bad), "s is defined outside a parfor")) << joined(ir::verify(bad));
}

TEST(IRVerifier, VerifyOrThrowListsEveryProblemAndTheFunction) {
  const Var s = local("twice", DType::F64), ghost = local("ghost", DType::F64);
  const ir::Function f = function("my_kernel", {}, {let(s, f64c(1)), let(s, val(ghost))}, val(s));
  try {
    ir::verify_or_throw(f, "after pass frobnicate");
    FAIL() << "expected IRError";
  } catch (const ir::IRError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("IR verification failed (after pass frobnicate) for kernel 'my_kernel'"), std::string::npos) << m;
    EXPECT_NE(m.find("\n  - variable twice is defined twice"), std::string::npos) << m;
    EXPECT_NE(m.find("\n  - ghost is used out of scope"), std::string::npos) << m;
    EXPECT_NE(m.find("kernel my_kernel() -> f64 {"), std::string::npos) << "the printed function: " << m;
    EXPECT_NE(m.find("?ghost"), std::string::npos) << m;
  }
}

// =========================================================================================================
// Hashing
// =========================================================================================================

std::string hex(const std::uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t k = 0; k < n; ++k) {
    s += d[p[k] >> 4];
    s += d[p[k] & 15];
  }
  return s;
}

std::string blake2b_hex(std::string_view data, int bytes = 64) {
  ir::Blake2b b(bytes);
  b.update(data);
  const auto d = b.finish();
  return hex(d.data(), static_cast<size_t>(bytes));
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t k = 0; k < n; ++k) s[k] = static_cast<char>(k % 251);
  return s;
}

TEST(Blake2b, Rfc7693TestVectors) {
  // RFC 7693, Appendix A: BLAKE2b-512("abc").
  EXPECT_EQ(blake2b_hex("abc"),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
            "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923");
  // The reference implementation's BLAKE2b-512 of the empty string.
  EXPECT_EQ(blake2b_hex(""),
            "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419"
            "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce");
}

TEST(Blake2b, ShortDigestsAndHash128) {
  // The digest length is a parameter of the hash, not a truncation of the 512-bit one.
  EXPECT_EQ(blake2b_hex("abc", 16), "cf4ab791c62b8d2b2109c90275287816");
  EXPECT_EQ(blake2b_hex("", 16), "cae66941d9efbd404e4d88758ea67670");
  EXPECT_EQ(ir::hash128("abc").hex(), "cf4ab791c62b8d2b2109c90275287816");
  EXPECT_EQ(ir::hash128("").hex(), "cae66941d9efbd404e4d88758ea67670");
  EXPECT_NE(ir::hash128("abc"), ir::hash128("abd"));
  const std::string h = ir::hash128("kiln").hex();
  EXPECT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(Blake2b, BlockBoundaries) {
  // Reference digests (Python's hashlib.blake2b) of bytes k % 251, around the 128-byte block size.
  const std::pair<size_t, const char*> cases[] = {
      {127, "b6292669ccd38d5f01caae96ba272c76a879a45743afa0725d83b9ebb26665b731f1848c52f11972b6644f554c064fa90780dbbbf3a89d4fc31f67df3e5857ef"},
      {128, "2319e3789c47e2daa5fe807f61bec2a1a6537fa03f19ff32e87eecbfd64b7e0e8ccff439ac333b040f19b0c4ddd11a61e24ac1fe0f10a039806c5dcc0da3d115"},
      {129, "f59711d44a031d5f97a9413c065d1e614c417ede998590325f49bad2fd444d3e4418be19aec4e11449ac1a57207898bc57d76a1bcf3566292c20c683a5c4648f"},
      {255, "fe2c02da499516b0e9fb2dd70c49eb3629039f632e20a880946fb7bc97a7ab09deb7d48774d7f0648141c9d9ede19ae6e0dbf07863a128cf4b00195f0f179f74"},
      {256, "93463ac058b6163eb43be3f5bb32b28541498f4e3366f1effe253ad44e1e076e41c3616046027c82a7124f8f4746668ad10b12e8e25a95ac8f3151df01cd5a93"},
      {1000, "c11e1c0340bd7e5a1b275f1230c962fad215ecb1391486e74e31b960a2f2996381a5fad092da06841d5f26e38f6ecfeaf441acbcd1c2de61aef121e7927175f5"},
  };
  for (const auto& [n, want] : cases) {
    const std::string data = pattern(n);
    EXPECT_EQ(blake2b_hex(data), want) << n << " bytes in one update";
    // Streaming in uneven pieces gives the same digest.
    for (size_t piece : {1u, 7u, 64u, 128u, 129u}) {
      ir::Blake2b b(64);
      for (size_t k = 0; k < n; k += piece) b.update(data.data() + k, std::min(piece, n - k));
      const auto d = b.finish();
      EXPECT_EQ(hex(d.data(), 64), want) << n << " bytes in pieces of " << piece;
    }
  }
}

TEST(Blake2b, FieldsAreLengthPrefixed) {
  auto fields = [](std::initializer_list<std::string_view> f) {
    ir::Blake2b b(16);
    for (auto s : f) b.field(s);
    return b.finish128();
  };
  EXPECT_NE(fields({"ab", "c"}), fields({"a", "bc"}));
  EXPECT_NE(fields({"abc"}), fields({"abc", ""}));
  EXPECT_EQ(fields({"ab", "c"}), fields({"ab", "c"}));
  EXPECT_NE(fields({"abc"}), ir::hash128("abc"));
}

TEST(StructuralHash, EqualForRenamedVariablesKernelNameAndOrigins) {
  const ir::Function f = sample_function("one", "", "prange at a.cpp:1");
  const ir::Function g = sample_function("two", "_x", "prange at b.cpp:2");
  EXPECT_EQ(ir::structural_hash(f), ir::structural_hash(g));
  EXPECT_EQ(ir::structural_hash(f), ir::hash128(canonical(f)));
  // Equal for a structurally identical function built from fresh nodes.
  EXPECT_EQ(ir::structural_hash(scalar_function("a", "p", 2.0, BinaryOp::Add, 0)),
            ir::structural_hash(scalar_function("b", "q", 2.0, BinaryOp::Add, 0)));
  // Variables' declaration sites are not part of the hash either.
  const Var s1 = local("s", DType::F64, "a.cpp:3"), s2 = local("s", DType::F64, "b.cpp:4");
  EXPECT_EQ(ir::structural_hash(function("k", {}, {let(s1, f64c(1))}, val(s1))),
            ir::structural_hash(function("k", {}, {let(s2, f64c(1))}, val(s2))));
}

TEST(StructuralHash, DifferentForAnyOtherChange) {
  const ir::Hash128 base = ir::structural_hash(scalar_function("k", "a", 2.0, BinaryOp::Add, 0));
  // A constant.
  EXPECT_NE(base, ir::structural_hash(scalar_function("k", "a", 3.0, BinaryOp::Add, 0)));
  EXPECT_NE(base, ir::structural_hash(scalar_function("k", "a", 2.0000000000000004, BinaryOp::Add, 0)));
  // An operator.
  EXPECT_NE(base, ir::structural_hash(scalar_function("k", "a", 2.0, BinaryOp::Sub, 0)));
  EXPECT_NE(base, ir::structural_hash(scalar_function("k", "a", 2.0, BinaryOp::Max, 0)));
  // A type (of the accumulator, and the stride property of the parameter).
  EXPECT_NE(base, ir::structural_hash(scalar_function("k", "a", 2.0, BinaryOp::Add, 0, DType::F32)));
  EXPECT_NE(base, ir::structural_hash(scalar_function("k", "a", 2.0, BinaryOp::Add, 0, DType::F64, false)));
  // A loop bound.
  EXPECT_NE(base, ir::structural_hash(scalar_function("k", "a", 2.0, BinaryOp::Add, 1)));

  // Constants that differ only in type or in the sign of zero.
  auto ret = [](Expr e) { return ir::structural_hash(function("k", {}, {}, std::move(e))); };
  EXPECT_NE(ret(f64c(0.0)), ret(f64c(-0.0)));
  EXPECT_NE(ret(f64c(1.0)), ret(f32c(1.0)));
  EXPECT_NE(ret(i64c(1)), ret(i32c(1)));
  EXPECT_NE(ret(i64c(1)), ret(ir::make_bool(true)));
  EXPECT_NE(ret(f64c(kNaN)), ret(f64c(kInf)));
  EXPECT_EQ(ret(f64c(0.25)), ret(f64c(0.25)));

  // Which variable is used matters, not its name.
  const Var a = param("a", DType::F64), b = param("b", DType::F64);
  EXPECT_NE(ir::structural_hash(function("k", {a, b}, {}, add(val(a), val(a)))),
            ir::structural_hash(function("k", {a, b}, {}, add(val(a), val(b)))));
  // Parfor vs for; reduction operator; array rank; dim axis.
  const Var n = param("n", DType::I64), s = local("s", DType::I64), i = index("i");
  auto loop = [&](bool parallel, ReduceOp op) {
    Stmt body = block({assign(s, bin(ir::combiner(op), val(s), val(i)))});
    Stmt l = parallel ? parfor1(i, val(n), body, {{s, op}}) : ir::make_for(i, i64c(0), val(n), body);
    return ir::structural_hash(function("k", {n}, {let(s, i64c(0)), l}, val(s)));
  };
  EXPECT_NE(loop(true, ReduceOp::Add), loop(false, ReduceOp::Add));
  EXPECT_NE(loop(true, ReduceOp::Add), loop(true, ReduceOp::Max));
  auto dims = [](int rank, int axis) {
    const Var x = array_param("x", DType::F64, rank);
    return ir::structural_hash(function("k", {x}, {}, ir::make_cast(DType::F64, ir::make_dim(x, axis))));
  };
  EXPECT_NE(dims(2, 0), dims(2, 1));
  EXPECT_NE(dims(2, 0), dims(3, 0));
  // Scalar vs array result.
  const Var out = local_array("out", DType::F64, 1);
  EXPECT_NE(ir::structural_hash(function("k", {}, {ir::make_allocate(out, {i64c(1)})}, nullptr, out)),
            ir::structural_hash(function("k", {}, {ir::make_allocate(out, {i64c(1)})})));
}

// =========================================================================================================
// Analyses
// =========================================================================================================

TEST(IRAnalysis, Equal) {
  const Var a = param("a", DType::F64), a2 = param("a", DType::F64), n = param("n", DType::I64);
  const Var x = array_param("x", DType::F64, 2);
  EXPECT_TRUE(ir::equal(add(val(a), f64c(1)), add(val(a), f64c(1))));  // distinct nodes, same structure
  EXPECT_FALSE(ir::equal(add(val(a), f64c(1)), add(val(a2), f64c(1))));  // variables by identity, not name
  EXPECT_FALSE(ir::equal(add(val(a), f64c(1)), add(f64c(1), val(a))));    // no commutation
  EXPECT_FALSE(ir::equal(add(val(a), f64c(1)), bin(BinaryOp::Sub, val(a), f64c(1))));
  EXPECT_TRUE(ir::equal(f64c(kNaN), f64c(kNaN)));  // bitwise
  EXPECT_FALSE(ir::equal(f64c(0.0), f64c(-0.0)));
  EXPECT_FALSE(ir::equal(i64c(1), i32c(1)));
  EXPECT_FALSE(ir::equal(f64c(1), f32c(1)));
  EXPECT_TRUE(ir::equal(ir::make_cast(DType::F32, val(n)), ir::make_cast(DType::F32, val(n))));
  EXPECT_FALSE(ir::equal(ir::make_cast(DType::F32, val(n)), ir::make_cast(DType::F64, val(n))));
  EXPECT_TRUE(ir::equal(load(x, {val(n), i64c(0)}), load(x, {val(n), i64c(0)})));
  EXPECT_FALSE(ir::equal(load(x, {val(n), i64c(0)}), load(x, {i64c(0), val(n)})));
  EXPECT_FALSE(ir::equal(ir::make_dim(x, 0), ir::make_dim(x, 1)));
  EXPECT_FALSE(ir::equal(ir::make_call(Intrinsic::Sin, {val(a)}), ir::make_call(Intrinsic::Cos, {val(a)})));
  EXPECT_TRUE(ir::equal(ir::make_call(Intrinsic::Sin, {val(a)}), ir::make_call(Intrinsic::Sin, {val(a)})));
  EXPECT_FALSE(ir::equal(ir::make_unary(UnaryOp::Neg, val(a)), val(a)));
  const Expr c = bin(BinaryOp::Lt, val(a), f64c(0));
  EXPECT_TRUE(ir::equal(ir::make_select(c, val(a), f64c(0)), ir::make_select(c, val(a), f64c(0))));
  EXPECT_FALSE(ir::equal(ir::make_select(c, val(a), f64c(0)), ir::make_select(c, f64c(0), val(a))));
  EXPECT_TRUE(ir::equal(nullptr, nullptr));
  EXPECT_FALSE(ir::equal(val(a), nullptr));
}

TEST(IRAnalysis, FreeVars) {
  const Var a = param("a", DType::F64), n = param("n", DType::I64), x = array_param("x", DType::F64, 2);
  const Var y = array_param("y", DType::F64, 1);
  // Expressions: first-use order, arrays through loads and dims, each once.
  auto names = [](const std::vector<Var>& vs) {
    std::string s;
    for (const auto& v : vs) s += v->name + " ";
    return s;
  };
  EXPECT_EQ(names(ir::free_vars(add(mul(val(a), load(x, {val(n), val(n)})), val(a)))), "a x n ");
  EXPECT_EQ(names(ir::free_vars(ir::make_cast(DType::F64, ir::make_dim(y, 0)))), "y ");
  EXPECT_TRUE(ir::free_vars(f64c(1)).empty());
  // Statements: what is defined inside is not free; assigned and stored variables are.
  const Var s = local("s", DType::F64), t = local("t", DType::F64), outer = local("outer", DType::F64);
  const Var i = index("i"), j = index("j");
  const Stmt body = block({let(t, val(a)), ir::make_for(i, i64c(0), val(n), block({assign(t, add(val(t), load(y, {val(i)})))})),
                           assign(outer, val(t)),
                           parfor1(j, ir::make_dim(y, 0), block({assign(s, add(val(s), f64c(1))), store(y, {val(j)}, f64c(0))}),
                                   {{s, ReduceOp::Add}})});
  EXPECT_EQ(names(ir::free_vars(body)), "a n y outer s ");
  // A use before the definition is free (the definition comes later).
  const Var late = local("late", DType::F64);
  EXPECT_EQ(names(ir::free_vars(block({assign(outer, val(late)), let(late, f64c(0))}))), "outer late ");
  const Var arr = local_array("arr", DType::F64, 1);
  EXPECT_EQ(names(ir::free_vars(block({ir::make_allocate(arr, {val(n)}), store(arr, {i64c(0)}, val(a))}))), "n a ");
}

TEST(IRAnalysis, NodeCount) {
  const Var a = param("a", DType::F64), n = param("n", DType::I64), x = array_param("x", DType::F64, 1);
  EXPECT_EQ(ir::node_count(f64c(1)), 1u);
  EXPECT_EQ(ir::node_count(val(a)), 1u);
  EXPECT_EQ(ir::node_count(add(val(a), f64c(1))), 3u);
  EXPECT_EQ(ir::node_count(ir::make_unary(UnaryOp::Neg, add(val(a), f64c(1)))), 4u);
  EXPECT_EQ(ir::node_count(load(x, {val(n)})), 2u);
  EXPECT_EQ(ir::node_count(ir::make_dim(x, 0)), 1u);
  EXPECT_EQ(ir::node_count(ir::make_cast(DType::F64, val(n))), 2u);
  EXPECT_EQ(ir::node_count(ir::make_select(ir::make_bool(true), val(a), f64c(0))), 4u);
  EXPECT_EQ(ir::node_count(ir::make_call(Intrinsic::Sqrt, {val(a)})), 5u);  // a call weighs 4
  const Var s = local("s", DType::F64), i = index("i");
  // Statements count the expressions in them: let 1, for bounds 1 + 1, assign 3 (s + x[i] -> 1 + 1 + 2).
  const Stmt st = block({let(s, f64c(0)), ir::make_for(i, i64c(0), ir::make_dim(x, 0),
                                                       block({assign(s, add(val(s), load(x, {val(i)})))}))});
  EXPECT_EQ(ir::node_count(st), 1u + 2u + 4u);
  EXPECT_EQ(ir::node_count(block({})), 0u);
}

TEST(IRAnalysis, UsesAndWrites) {
  const Var a = param("a", DType::F64), x = array_param("x", DType::F64, 1), s = local("s", DType::F64);
  const Var i = index("i");
  EXPECT_TRUE(ir::uses(add(val(a), f64c(1)), a.get()));
  EXPECT_FALSE(ir::uses(add(val(a), f64c(1)), s.get()));
  EXPECT_TRUE(ir::uses(ir::make_dim(x, 0), x.get()));
  EXPECT_TRUE(ir::uses(load(x, {i64c(0)}), x.get()));
  const Stmt st = block({assign(s, f64c(1)), ir::make_for(i, i64c(0), i64c(3), block({store(x, {val(i)}, val(a))}))});
  EXPECT_TRUE(ir::uses(st, s.get()));
  EXPECT_TRUE(ir::uses(st, x.get()));
  EXPECT_TRUE(ir::uses(st, a.get()));
  EXPECT_TRUE(ir::has_load(add(val(a), load(x, {i64c(0)}))));
  EXPECT_FALSE(ir::has_load(add(val(a), ir::make_cast(DType::F64, ir::make_dim(x, 0)))));
  EXPECT_TRUE(ir::is_speculatable(bin(BinaryOp::Div, val(a), f64c(0))));
  EXPECT_FALSE(ir::is_speculatable(load(x, {i64c(0)})));
  const auto assigned = ir::assigned_vars(st);
  const auto stored = ir::stored_arrays(st);
  EXPECT_EQ(assigned.size(), 1u);
  EXPECT_TRUE(assigned.count(s.get()));
  EXPECT_EQ(stored.size(), 1u);
  EXPECT_TRUE(stored.count(x.get()));
}

}  // namespace
}  // namespace kiln
