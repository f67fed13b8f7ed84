// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ir::serialize / ir::deserialize (ir/serialize.hpp), the binary form of a function that the disk cache stores:
// round trips of hand-built IR covering every node kind and field, of traced kernels before and after the CPU and
// CUDA pipelines and of kiln-fuzz programs; the interpreter's results before and after a round trip; and hostile
// input (truncations, random mutations, deep nesting, other versions), which must be refused with IRError.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <type_traits>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ir/hash.hpp"
#include "ir/printer.hpp"
#include "ir/serialize.hpp"
#include "ir/verifier.hpp"
#include "ir/visitor.hpp"
#include "passes/pipeline.hpp"
#include "tests/array_test_util.hpp"
#include "tools/kiln_fuzz/buffers.hpp"
#include "tools/kiln_fuzz/program.hpp"
#include "tools/test_support/ir_shorthands.hpp"

namespace kiln {
namespace {

using ir::Expr;
using ir::Stmt;
using ir::Var;
using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary
using testing::kInf;
using testing::kNaN;

Expr f64c(double v) { return ir::make_float(DType::F64, v); }
Expr f32c(double v) { return ir::make_float(DType::F32, v); }
Expr i32c(std::int32_t v) { return ir::make_int(DType::I32, v); }
Var array_var(const std::string& name, DType t, int rank, ir::VarKind kind, std::uint8_t unit_dims = 0,
              const std::string& where = {}) {
  return ir::make_var(name, ir::Type::array(t, rank, true, unit_dims), kind, where);
}

std::string problems_of(const ir::Function& f) {
  std::string s;
  for (const auto& p : ir::verify(f)) s += p + "\n";
  return s;
}

/// The round trip of `f`: the same text, canonical hash and bytes, deterministically. Returns the decoded function.
ir::Function round_trip(const ir::Function& f) {
  EXPECT_EQ(problems_of(f), "") << "test input is malformed:\n" << ir::to_string(f);
  const std::string bytes = ir::serialize(f);
  EXPECT_EQ(ir::serialize(f), bytes) << "two encodings of one function differ";
  ir::Function g = ir::deserialize(bytes);
  EXPECT_EQ(ir::to_string(g), ir::to_string(f));
  EXPECT_EQ(ir::to_string(g, {.canonical = true}), ir::to_string(f, {.canonical = true}));
  EXPECT_EQ(ir::structural_hash(g), ir::structural_hash(f));
  EXPECT_EQ(g.locations, f.locations);
  EXPECT_EQ(ir::serialize(g), bytes);
  return g;
}

// ---- every kind of node -----------------------------------------------------------------------------------

/// The expression and statement kinds a function contains.
struct Kinds : ir::IRVisitor {
  std::set<ir::ExprKind> exprs;
  std::set<ir::StmtKind> stmts;
#define KILN_SEEN(T, set)                   \
  void visit(const ir::T& n) override {     \
    set.insert(n.kind);                     \
    IRVisitor::visit(n);                    \
  }
  KILN_SEEN(ConstExpr, exprs) KILN_SEEN(VarRefExpr, exprs) KILN_SEEN(LoadExpr, exprs) KILN_SEEN(DimExpr, exprs)
  KILN_SEEN(UnaryExpr, exprs) KILN_SEEN(BinaryExpr, exprs) KILN_SEEN(SelectExpr, exprs) KILN_SEEN(CastExpr, exprs)
  KILN_SEEN(CallExpr, exprs) KILN_SEEN(BlockStmt, stmts) KILN_SEEN(LetStmt, stmts) KILN_SEEN(AssignStmt, stmts)
  KILN_SEEN(StoreStmt, stmts) KILN_SEEN(ForStmt, stmts) KILN_SEEN(ParforStmt, stmts) KILN_SEEN(IfStmt, stmts)
  KILN_SEEN(AllocateStmt, stmts) KILN_SEEN(CheckStmt, stmts) KILN_SEEN(MapStmt, stmts) KILN_SEEN(ReduceStmt, stmts)
  KILN_SEEN(ReduceAxisStmt, stmts) KILN_SEEN(BindStmt, stmts) KILN_SEEN(StencilStmt, stmts)
  KILN_SEEN(LaunchStmt, stmts) KILN_SEEN(SortStmt, stmts) KILN_SEEN(AtomicStmt, stmts)
#undef KILN_SEEN
};

/// One function holding every node kind and every optional field: array operations as traced, a parfor with a
/// scalar, an argmin and an array reduction, a launch, bindings, checks with values and source references, and a
/// tuple result of scalars and an array.
ir::Function every_node() {
  const Var a = array_param("a", DType::F64, 1, true);
  const Var m = array_var("m", DType::F64, 2, ir::VarKind::Param, 0b10, "user.cpp:3");
  const Var hist = array_param("hist", DType::I64);
  const Var n = param("n", DType::I64), x = param("x", DType::F32), flag = param("flag", DType::Bool);
  const Var s = local("s", DType::F64, "user.cpp:7"), c = local("c", DType::I32), b = local("b", DType::Bool);
  const Var sum = local("sum", DType::F64), best = local("best", DType::F64), pos = local("pos", DType::I64);
  const Var r = local("r", DType::F64), r2 = local("r2", DType::I64);
  const Var t = array_var("t", DType::F64, 1, ir::VarKind::Local), u = array_var("u", DType::F64, 1, ir::VarKind::Local);
  const Var rows = array_var("rows", DType::F64, 1, ir::VarKind::Local);
  const Var st = array_var("st", DType::F64, 1, ir::VarKind::Local);
  const Var w = array_var("w", DType::F64, 1, ir::VarKind::Binding);
  std::vector<Var> ix;
  for (int k = 0; k < 12; ++k) ix.push_back(index("i" + std::to_string(k)));
  auto at_i = [&](const Var& arr, int k) { return at(arr, {val(ix[k])}); };

  const Stmt counted = ir::make_parfor(
      {ix[1]}, {i64c(0)}, {val(n)},
      block({assign(sum, val(sum) + at_i(t, 1)),
             ir::make_if(bin(BinaryOp::Lt, at_i(t, 1), val(best)), block({assign(best, at_i(t, 1)), assign(pos, val(ix[1]))})),
             store(hist, {bin(BinaryOp::Mod, val(ix[1]), dim(hist))},
                   at(hist, {bin(BinaryOp::Mod, val(ix[1]), dim(hist))}) + i64c(1))}),
      {{sum, ReduceOp::Add, nullptr}, {best, ReduceOp::ArgMin, pos}}, {{hist, ReduceOp::Add}}, "user.cpp:20");
  std::vector<Stmt> body = {
      let(s, ir::make_unary(UnaryOp::Neg, cast(DType::F64, val(x)))),
      let(c, ir::make_unary(UnaryOp::BitNot, i32c(3))),
      let(b, bin(BinaryOp::And, ir::make_unary(UnaryOp::Not, val(flag)), bin(BinaryOp::Lt, val(n), i64c(100)))),
      ir::make_check(bin(BinaryOp::Ge, val(n), i64c(0)), kShapeMismatch, "n is {} at {@0}", {val(n)}),
      ir::make_allocate(t, {val(n)}),
      for_loop(ix[0], i64c(0), val(n),
               store(t, {val(ix[0])}, call(Intrinsic::Fma, {call(Intrinsic::Abs, {at_i(a, 0)}), f64c(2), f64c(-0.0)}))),
      let(sum, f64c(-0.0)), let(best, f64c(kInf)), let(pos, i64c(-1)),
      counted,
      ir::make_if(val(flag), assign(s, val(s) + f64c(1)), assign(s, val(s) - cast(DType::F64, f32c(0.25)))),
      ir::make_if(val(b), assign(c, val(c) * i32c(2))),
      ir::make_map(u, {ix[2]}, {dim(a)}, at_i(a, 2) * f64c(2), "map"),
      ir::make_map_into(t, {ix[3]}, {val(n)}, {val(ix[3])}, at_i(t, 3) + val(sum), "into"),
      ir::make_reduce(r, ReduceOp::Max, {ix[4]}, {dim(a)}, at_i(u, 4), "max"),
      ir::make_reduce(r2, ReduceOp::ArgMin, {ix[5]}, {dim(a)}, at_i(a, 5), "argmin"),
      ir::make_reduce_axis(rows, ReduceOp::Add, 1, false, {ix[6], ix[7]}, {dim(m, 0), dim(m, 1)},
                           at(m, {val(ix[6]), val(ix[7])}), "rows"),
      ir::make_bind(w, t, true),
      ir::make_bind(w, u, false),
      ir::make_stencil(st, true, {ix[8]}, {dim(a)}, {}, at(a, {val(ix[8]) - i64c(1)}) + at(a, {val(ix[8]) + i64c(1)}),
                       {a}, {-1}, {1}, Border::constant, f64c(0.5), "blur"),
      ir::make_stencil(t, false, {ix[9]}, {val(n)}, {val(ix[9])}, at_i(a, 9) * at(w, {i64c(0)}), {a}, {0}, {2},
                       Border::wrap, nullptr, "into"),
      ir::make_launch(0, parfor1(ix[10], val(n),
                                 store(t, {val(ix[10])}, ir::make_select(val(flag), f64c(1), at_i(t, 10))), {},
                                 "launched")),
      ir::make_launch(1, parfor1(ix[11], dim(m, 1), store(st, {val(ix[11])}, f64c(kNaN)), {}, "second")),
  };
  ir::Function f = function("every_node", {a, m, hist, n, x, flag}, std::move(body));
  f.tuple = {{val(r), nullptr}, {nullptr, st}, {cast(DType::F64, val(r2)), nullptr}};
  f.locations = {"user.cpp:12", "other.cpp:1"};
  return f;
}

TEST(Serialize, EveryNodeKindAndFieldRoundTrips) {
  const ir::Function f = every_node();
  Kinds kinds;
  kinds.walk(f);
  // The test covers the whole IR: a kind added to ir/expr.hpp or ir/stmt.hpp must be added here (and to the format).
  EXPECT_EQ(kinds.exprs.size(), static_cast<size_t>(ir::ExprKind::Call) + 1);
  EXPECT_EQ(kinds.stmts.size(), static_cast<size_t>(ir::StmtKind::Launch) + 1);
  round_trip(f);

  // A scalar result and an array result, each on its own.
  const Var a = array_param("a", DType::I32, 3), k = index("k"), out = array_var("out", DType::I32, 1, ir::VarKind::Local);
  const ir::Function scalar = function("scalar", {a}, {}, cast(DType::I64, at(a, {i64c(0), i64c(1), i64c(2)})) + dim(a, 2));
  round_trip(scalar);
  const ir::Function array = function("array", {a},
                                      {ir::make_allocate(out, {dim(a, 1)}),
                                       parfor1(k, dim(a, 1), store(out, {val(k)}, at(a, {i64c(0), val(k), i64c(0)})))},
                                      nullptr, out);
  const ir::Function g = round_trip(array);
  EXPECT_EQ(g.result_array->name, "out");
  EXPECT_TRUE(g.returns_array());
}

/// One VarNode referred to from many places decodes to one VarNode; distinct ones with equal names stay distinct;
/// every field of a variable comes back.
TEST(Serialize, VariablesKeepTheirIdentityAndFields) {
  const Var a = array_var("a", DType::F32, 3, ir::VarKind::Param, 0b101, "kernel.cpp:9");
  const Var v1 = local("v", DType::F32, "kernel.cpp:10"), v2 = local("v", DType::F32, "kernel.cpp:11");
  const Var i = index("i");
  ir::Function f = function("vars", {a},
                            {let(v1, at(a, {i64c(0), i64c(0), i64c(0)})), let(v2, val(v1) * val(v1)),
                             parfor1(i, dim(a, 1), store(a, {i64c(0), val(i), i64c(0)}, val(v2) + val(v1)))},
                            val(v2));
  const ir::Function g = round_trip(f);
  const auto& stmts = g.body->as<ir::BlockStmt>().stmts;
  const Var& a2 = g.params[0];
  const Var& g1 = stmts[0]->as<ir::LetStmt>().var;
  const Var& g2 = stmts[1]->as<ir::LetStmt>().var;
  EXPECT_NE(g1, g2);
  EXPECT_EQ(stmts[1]->as<ir::LetStmt>().init->as<ir::BinaryExpr>().a->as<ir::VarRefExpr>().var, g1);
  EXPECT_EQ(stmts[1]->as<ir::LetStmt>().init->as<ir::BinaryExpr>().b->as<ir::VarRefExpr>().var, g1);
  EXPECT_EQ(g.result->as<ir::VarRefExpr>().var, g2);
  const auto& p = stmts[2]->as<ir::ParforStmt>();
  EXPECT_EQ(p.body->as<ir::StoreStmt>().array, a2);
  EXPECT_EQ(p.body->as<ir::StoreStmt>().indices[1]->as<ir::VarRefExpr>().var, p.indices[0]);
  const std::pair<Var, Var> pairs[] = {{a, a2}, {v1, g1}, {v2, g2}};
  for (const auto& [x, y] : pairs) {
    EXPECT_EQ(x->name, y->name);
    EXPECT_EQ(x->where, y->where);
    EXPECT_EQ(x->kind, y->kind);
    EXPECT_EQ(x->type, y->type);
  }
  EXPECT_EQ(a2->type.unit_dims, 0b101);
  EXPECT_TRUE(a2->type.unit_stride);
}

/// Constants come back bit for bit: NaN payloads and signs, -0.0, infinities, subnormals, integer extremes.
TEST(Serialize, ConstantsAreBitExact) {
  const double payload = std::bit_cast<double>(std::uint64_t{0x7ff8000000000123});
  const double negative_nan = std::bit_cast<double>(std::uint64_t{0xfff4000000000001});  // signalling, negative
  const double float_payload = static_cast<double>(std::bit_cast<float>(std::uint32_t{0x7fc00123}));
  const std::vector<Expr> constants = {
      f64c(payload), f64c(negative_nan), f64c(-0.0), f64c(0.0), f64c(kInf), f64c(-kInf), f64c(5e-324),
      f64c(std::numeric_limits<double>::max()), f32c(float_payload), f32c(-0.0), f32c(-kInf),
      f32c(std::numeric_limits<float>::denorm_min()), i64c(std::numeric_limits<std::int64_t>::min()),
      i64c(std::numeric_limits<std::int64_t>::max()), i32c(std::numeric_limits<std::int32_t>::min()), i32c(-1),
      ir::make_bool(true), ir::make_bool(false)};
  std::vector<Stmt> body;
  for (size_t k = 0; k < constants.size(); ++k)
    body.push_back(let(local("c" + std::to_string(k), constants[k]->type), constants[k]));
  const ir::Function g = round_trip(function("constants", {}, std::move(body)));
  const auto& stmts = g.body->as<ir::BlockStmt>().stmts;
  ASSERT_EQ(stmts.size(), constants.size());
  for (size_t k = 0; k < constants.size(); ++k) {
    const auto& want = constants[k]->as<ir::ConstExpr>();
    const auto& got = stmts[k]->as<ir::LetStmt>().init->as<ir::ConstExpr>();
    EXPECT_EQ(got.type, want.type) << k;
    EXPECT_EQ(got.i, want.i) << k;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got.f), std::bit_cast<std::uint64_t>(want.f)) << k;
  }
}

// ---- traced kernels, lowered for the CPU and for CUDA --------------------------------------------------------

passes::PipelineOptions for_target(Target t) {
  passes::PipelineOptions o;
  o.target = t;
  return o;
}

/// The outcome of the interpreter with every byte it produced: results must match bit for bit, NaNs included.
void expect_same_run(const testing::Outcome& x, const testing::Outcome& y, const std::string& what) {
  EXPECT_EQ(x.error, y.error) << what;
  EXPECT_EQ(x.result, y.result) << what;
  EXPECT_EQ(x.shape, y.shape) << what;
  EXPECT_EQ(x.arrays, y.arrays) << what;
}

/// The bytes of every member of a tuple result of `f` (scalars, and arrays' elements) run on the 1-d array x
/// (testing::interpret takes single results only).
std::vector<unsigned char> tuple_outcome(const ir::Function& f, std::vector<double> x) {
  ArrayDesc arg{};
  arg.data = x.data();
  arg.shape[0] = static_cast<std::int64_t>(x.size());
  arg.strides[0] = 1;
  void* args[] = {&arg};
  std::vector<ScalarSlot> scalars(f.tuple.size());
  std::vector<ArrayDesc> arrays(f.tuple.size());
  std::vector<void*> outs;
  for (size_t k = 0; k < f.tuple.size(); ++k)
    outs.push_back(f.tuple[k].array ? static_cast<void*>(&arrays[k]) : static_cast<void*>(&scalars[k]));
  ir::interpret(f, args, outs.data());
  std::vector<unsigned char> bytes;
  for (size_t k = 0; k < f.tuple.size(); ++k) {
    if (!f.tuple[k].array) {
      const auto* p = reinterpret_cast<const unsigned char*>(&scalars[k]);
      bytes.insert(bytes.end(), p, p + size_of(f.tuple[k].scalar->type));
      continue;
    }
    const ir::Type& t = f.tuple[k].array->type;
    const auto e = testing::elements(arrays[k], t.rank, size_of(t.elem));
    bytes.insert(bytes.end(), e.begin(), e.end());
    std::free(arrays[k].data);
  }
  return bytes;
}

/// Round trips of the traced function and of what each pipeline makes of it (the CUDA one ends in launches), and
/// the interpreter on the lowered ones before and after.
template <class... A>
void check_traced(const ir::Function& traced, const A&... args) {
  SCOPED_TRACE(traced.name);
  round_trip(traced);
  for (Target t : {Target::cpu, Target::cuda}) {
    const ir::Function lowered = passes::run_pipeline(traced, nullptr, for_target(t));
    const ir::Function back = round_trip(lowered);
    const std::string what = traced.name + " for " + std::string(t == Target::cpu ? "cpu" : "cuda");
    if constexpr (sizeof...(A) == 1 && (std::is_same_v<A, std::vector<double>> && ...)) {
      if (traced.returns_tuple()) {
        EXPECT_EQ(tuple_outcome(lowered, args...), tuple_outcome(back, args...)) << what;
        continue;
      }
    }
    expect_same_run(testing::interpret(lowered, args...), testing::interpret(back, args...), what);
  }
}

int count_launches(const ir::Function& f) {
  struct Launches : ir::IRVisitor {
    int n = 0;
    void visit(const ir::LaunchStmt& l) override {
      ++n;
      IRVisitor::visit(l);
    }
  } v;
  v.walk(f);
  return v.n;
}

TEST(Serialize, TracedKernelsThroughBothPipelines) {
  using namespace testing::sample_kernels;  // NOLINT(google-build-using-namespace): softmax, normalize, shifted, products
  auto centre = [](Array<double, 1> x) {  // a tuple result
    auto mean = kiln::mean(x);
    return std::tuple{mean, x - mean, kiln::argmax(x)};
  };
  const auto v = testing::random_values(7, 3, -3, 3, true);
  const NDArray<double> m = testing::random_matrix(7, 7, 4, true);
  check_traced(testing::trace_ir("softmax", {"a"}, softmax, v), v);
  check_traced(testing::trace_ir("normalize", {"x"}, normalize, m), m);
  check_traced(testing::trace_ir("shifted", {"a"}, shifted, v), v);
  check_traced(testing::trace_ir("products", {"m", "v"}, products, m, v), m, v);
  const ir::Function tuple = testing::trace_ir("centre", {"x"}, centre, v);
  EXPECT_TRUE(tuple.returns_tuple());
  check_traced(tuple, v);
  EXPECT_GT(count_launches(passes::run_pipeline(tuple, nullptr, for_target(Target::cuda))), 0);
}

/// A hand-built 2-d stencil in every border mode, before lowering and after both pipelines, interpreted.
TEST(Serialize, StencilsBeforeAndAfterLowering) {
  for (Border border : {Border::constant, Border::nearest, Border::wrap, Border::reflect, Border::mirror, Border::skip}) {
    const Var a = array_var("a", DType::F64, 2, ir::VarKind::Param), out = array_var("out", DType::F64, 2, ir::VarKind::Local);
    const Var i = index("i"), j = index("j");
    const Expr value = at(a, {val(i) - i64c(1), val(j)}) + f64c(2) * at(a, {val(i), val(j) + i64c(2)}) - at(a, {val(i), val(j)});
    const ir::Function f =
        function("stencil", {a},
                 {ir::make_stencil(out, true, {i, j}, {dim(a, 0), dim(a, 1)}, {}, value, {a}, {-1, 0}, {0, 2}, border,
                                   border == Border::constant ? f64c(-7.5) : nullptr, "user.cpp:4")},
                 nullptr, out);
    check_traced(f, testing::random_matrix(5, 6, static_cast<std::uint64_t>(border), true));
  }
}

/// kiln-fuzz's random programs (maps, reductions, stencils, sorts, atomics, parfors with every kind of reduction), traced and
/// lowered both ways, interpreted before and after on the generator's own arguments.
TEST(Serialize, FuzzProgramsRoundTrip) {
  fuzz::GeneratorOptions options;
  options.large_sizes = false;
  Kinds traced;  // what the programs held: the test is only as wide as they are
  int launches = 0;
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    SCOPED_TRACE("kiln-fuzz seed " + std::to_string(seed));
    const fuzz::Program p = fuzz::generate(seed, options);
    traced.walk(p.function);
    round_trip(p.function);
    const fuzz::Args inputs = fuzz::make_args(p, seed);
    for (Target t : {Target::cpu, Target::cuda}) {
      const ir::Function lowered = passes::run_pipeline(p.function, nullptr, for_target(t));
      launches += count_launches(lowered);
      const ir::Function back = round_trip(lowered);
      test_support::Run x = start_run(lowered, inputs), y = start_run(back, inputs);
      ir::interpret(lowered, x.argv.data(), x.result);
      ir::interpret(back, y.argv.data(), y.result);
      EXPECT_EQ(std::memcmp(&x.outcome->result, &y.outcome->result, sizeof(ScalarSlot)), 0);
      ASSERT_EQ(x.outcome->args.size(), y.outcome->args.size());
      for (size_t k = 0; k < x.outcome->args.size(); ++k) {
        if (!x.outcome->args[k].array) continue;
        const TestArray &xa = *x.outcome->args[k].array, &ya = *y.outcome->args[k].array;
        for (std::int64_t e = 0; e < xa.size(); ++e)
          ASSERT_EQ(std::memcmp(xa.element(e), ya.element(e), static_cast<size_t>(size_of(xa.elem()))), 0)
              << "argument " << k << " element " << e;
      }
      if (lowered.returns_array()) {
        const ArrayDesc &xr = x.outcome->result_array, &yr = y.outcome->result_array;
        const int rank = lowered.result_array->type.rank, esize = size_of(lowered.result_array->type.elem);
        EXPECT_EQ(testing::elements(xr, rank, esize), testing::elements(yr, rank, esize));
      }
    }
  }
  for (auto k : {ir::StmtKind::Parfor, ir::StmtKind::Map, ir::StmtKind::Reduce, ir::StmtKind::ReduceAxis,
                 ir::StmtKind::Stencil, ir::StmtKind::Sort, ir::StmtKind::Atomic})
    EXPECT_TRUE(traced.stmts.count(k)) << "no program held statement kind " << static_cast<int>(k);
  EXPECT_GT(launches, 25);
}

// ---- hostile input -------------------------------------------------------------------------------------------

std::string error_of(std::string_view bytes) {
  try {
    ir::deserialize(bytes);
  } catch (const ir::IRError& e) {
    return e.what();
  }
  return "";
}

TEST(Serialize, EveryTruncationIsRefused) {
  const std::string bytes = ir::serialize(every_node());
  for (size_t n = 0; n < bytes.size(); ++n)
    ASSERT_NE(error_of(std::string_view(bytes).substr(0, n)), "") << "a prefix of " << n << " bytes was accepted";
  EXPECT_NE(error_of(bytes + '\0'), "");
  EXPECT_EQ(error_of(bytes), "");
}

/// Random byte changes: each is refused with IRError or decodes to a function that verifies and encodes back to
/// exactly the changed bytes (the format has one encoding per function). Nothing else may happen.
TEST(Serialize, RandomMutationsAreRefusedOrDecodeToValidFunctions) {
  const auto start = std::chrono::steady_clock::now();
  const std::string original = ir::serialize(every_node());
  std::mt19937_64 rng(20261124);
  int refused = 0, accepted = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string bytes = original;
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < changes; ++c) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 5) {
        case 0: bytes[at] = static_cast<char>(rng()); break;                            // any byte
        case 1: bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8))); break;  // one bit
        case 2: bytes[at] = static_cast<char>(bytes[at] + (rng() % 2 ? 1 : -1)); break;  // an off-by-one
        case 3: bytes.erase(at, 1 + rng() % 4); break;                                  // bytes missing
        case 4: bytes.insert(at, bytes.substr(rng() % bytes.size(), 1 + rng() % 8)); break;  // bytes repeated
      }
    }
    try {
      const ir::Function f = ir::deserialize(bytes);
      ++accepted;
      ASSERT_EQ(problems_of(f), "") << "round " << round;
      ASSERT_EQ(ir::serialize(f), bytes) << "round " << round;
    } catch (const ir::IRError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d mutations refused, %d accepted, in %.2f s\n", refused, accepted, seconds);
}

// Hand-written input in the documented format (ir/serialize.hpp).
void put(std::string& s, std::uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) s += static_cast<char>(v >> (8 * k));
}
/// A function with no variables, an empty body and the scalar result `levels - 1` negations of 1.0; the first
/// expression starts at byte 22.
std::string negations(int levels) {
  std::string s;
  put(s, ir::kSerialFormatVersion, 4);
  put(s, 0, 4);  // variables
  put(s, 0, 4);  // name
  put(s, 0, 4);  // parameters
  put(s, static_cast<std::uint8_t>(ir::StmtKind::Block), 1);
  put(s, 0, 4);
  put(s, 1, 1);  // a scalar result
  for (int k = 1; k < levels; ++k) {
    put(s, static_cast<std::uint8_t>(ir::ExprKind::Unary), 1);
    put(s, static_cast<std::uint8_t>(UnaryOp::Neg), 1);
  }
  put(s, static_cast<std::uint8_t>(ir::ExprKind::Const), 1);
  put(s, static_cast<std::uint8_t>(DType::F64), 1);
  put(s, std::bit_cast<std::uint64_t>(1.0), 8);
  put(s, 0, 1);  // no array result
  put(s, 0, 4);  // tuple
  put(s, 0, 4);  // locations
  return s;
}

TEST(Serialize, DeepNestingIsRefusedNotOverflowingTheStack) {
  // The format as documented: this is exactly what serialize writes for the same function.
  Expr e = f64c(1);
  for (int k = 1; k < ir::kMaxSerialDepth; ++k) e = ir::make_unary(UnaryOp::Neg, e);
  const ir::Function deepest = function("", {}, {}, e);
  EXPECT_EQ(ir::serialize(deepest), negations(ir::kMaxSerialDepth));
  EXPECT_EQ(ir::to_string(ir::deserialize(negations(ir::kMaxSerialDepth))), ir::to_string(deepest));
  // One level more is refused both ways; the decoder names the node that went one level too deep.
  const ir::Function deeper = function("", {}, {}, ir::make_unary(UnaryOp::Neg, e));
  EXPECT_THROW(ir::serialize(deeper), ir::IRError);
  const std::string at = "at byte " + std::to_string(22 + 2 * ir::kMaxSerialDepth) + ": nested deeper than";
  EXPECT_NE(error_of(negations(ir::kMaxSerialDepth + 1)).find(at), std::string::npos)
      << error_of(negations(ir::kMaxSerialDepth + 1));
  // A million levels claimed, of expressions and of blocks.
  EXPECT_NE(error_of(negations(1'000'000)).find("nested deeper than"), std::string::npos);
  std::string blocks = negations(1).substr(0, 16);
  for (int k = 0; k < 1'000'000; ++k) {
    put(blocks, static_cast<std::uint8_t>(ir::StmtKind::Block), 1);
    put(blocks, 1, 4);
  }
  EXPECT_NE(error_of(blocks).find("nested deeper than"), std::string::npos);
}

TEST(Serialize, MalformedHeadersAndReferencesAreRefusedWithTheirOffset) {
  const std::string good = negations(3);
  ASSERT_EQ(error_of(good), "");
  std::string other_version = good;
  other_version[0] = static_cast<char>(ir::kSerialFormatVersion + 1);
  const std::string refusal = "at byte 0: format version " + std::to_string(ir::kSerialFormatVersion + 1) +
                              ", but this build reads version " + std::to_string(ir::kSerialFormatVersion);
  EXPECT_NE(error_of(other_version).find(refusal), std::string::npos) << error_of(other_version);
  EXPECT_NE(error_of("").find("at byte 0: input ends inside the format version"), std::string::npos);

  std::string huge_table = good;
  huge_table.replace(4, 4, "\xff\xff\xff\xff");
  EXPECT_NE(error_of(huge_table).find("at byte 4: variable table claims 4294967295 items"), std::string::npos)
      << error_of(huge_table);

  std::string unknown_statement = good;
  unknown_statement[16] = static_cast<char>(200);  // beyond every statement kind, however many there are
  EXPECT_NE(error_of(unknown_statement).find("at byte 16: unknown statement kind 200"), std::string::npos)
      << error_of(unknown_statement);

  // A parameter numbered outside the (empty) variable table.
  std::string bad_param = good;
  bad_param.replace(12, 4, std::string("\x01\x00\x00\x00\x00\x00\x00\x00", 8));
  EXPECT_NE(error_of(bad_param).find("at byte 16: variable number 0 out of range (the table has 0)"), std::string::npos)
      << error_of(bad_param);

  // A cast to the operand's own type (make_cast never builds one) and a builder's refusal, both located.
  std::string self_cast = good;
  self_cast[22] = static_cast<char>(ir::ExprKind::Cast), self_cast[23] = static_cast<char>(DType::F64);
  EXPECT_NE(error_of(self_cast).find("at byte 22: cast of a f64 value to its own type"), std::string::npos)
      << error_of(self_cast);
  std::string not_bool = good;
  not_bool[23] = static_cast<char>(UnaryOp::Not);
  EXPECT_NE(error_of(not_bool).find("at byte 22: malformed IR: logical not needs bool"), std::string::npos)
      << error_of(not_bool);

  // Well formed node by node but out of scope: the verifier's refusal.
  const Var v = local("v", DType::F64);
  ir::Function unscoped = function("unscoped", {}, {}, val(v));
  EXPECT_NE(error_of(ir::serialize(unscoped)).find("v is used out of scope"), std::string::npos);
}

}  // namespace
}  // namespace kiln
