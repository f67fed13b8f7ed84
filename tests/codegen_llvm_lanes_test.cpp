// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parfor bodies run in vector lanes (ir/lanes.hpp, codegen/llvm/emit_lanes.cpp): which bodies the rule takes
// and why, that the compiled kernel really runs in lanes, and that every result is bitwise the scalar one —
// the interpreter's, and the same kernel compiled with lanes off — for sizes around the lane count, every
// thread count, and NaN, infinities and -0 among the inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <regex>
#include <string>

#include "ir/lanes.hpp"
#include "passes/pipeline.hpp"
#include "tests/codegen_llvm_support.hpp"

namespace kiln {
namespace {

using namespace llvm_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary

const std::vector<std::int64_t> kLaneSizes = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 101};

/// The one parfor of `f`.
const ir::ParforStmt& only_parfor(const ir::Function& f) {
  for (const auto& s : f.body->as<ir::BlockStmt>().stmts)
    if (const auto* p = ir::dyn<ir::ParforStmt>(s)) return *p;
  throw std::logic_error("no parfor in " + f.name);
}

/// out[i] = sum over j in order of m[j] dx / (r2 sqrt(r2)), dx = x[j] - x[i], r2 = dx^2 + eps: n-body's
/// inner loop in one dimension.
ir::Function nbody1d(DType t) {
  Var x = array_param("x", t, 1, true), m = array_param("m", t, 1, true), out = array_param("out", t, 1, true);
  Var eps = param("eps", t);
  Var i = index("i"), j = index("j");
  Var s = local("s", t), dx = local("dx", t), r2 = local("r2", t);
  Stmt inner = block({let(dx, at(x, {val(j)}) - at(x, {val(i)})), let(r2, val(dx) * val(dx) + val(eps)),
                      assign(s, val(s) + at(m, {val(j)}) * val(dx) / (val(r2) * call(Intrinsic::Sqrt, {val(r2)})))});
  Stmt body = block({let(s, num(t, 0)), for_loop(j, i64c(0), dim(x), inner), store(out, {val(i)}, val(s))});
  return function("nbody1d", {x, m, out, eps}, {parfor1(i, dim(x), body)});
}

/// True if the elements at a and b are the same bits, or both NaN (which NaN an operation returns depends
/// on the order of its operands in the machine instruction, which LLVM may swap; kiln does not define it).
bool same_value(const TestArray& a, const TestArray& b, std::int64_t e) {
  const size_t bytes = size_of(a.elem());
  if (std::memcmp(a.element(e), b.element(e), bytes) == 0) return true;
  if (a.elem() == DType::F64) return std::isnan(a.get<double>(e)) && std::isnan(b.get<double>(e));
  if (a.elem() == DType::F32) return std::isnan(a.get<float>(e)) && std::isnan(b.get<float>(e));
  return false;
}

/// Runs `k` and the same function compiled with lanes off, and the interpreter, on `inputs` with each
/// thread count: all three must agree bit for bit, up to which NaN (the iterations after the whole groups
/// of lanes run in masked vector lanes too, where the kernel with lanes off runs scalar code, whose
/// instructions may take a NaN operand in the other order).
void check_bitwise(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs,
                   cpu::CpuOptions scalar = {}) {
  scalar.lanes = false;
  const codegen::CompiledKernel plain = cpu::compile(f, {}, scalar);
  auto ref = run_interpreter(f, inputs);
  for (int t : {1, 2, 3, 8}) {
    SCOPED_TRACE("threads " + std::to_string(t));
    ThreadCount tc(t);
    auto got = run_kernel(k, f, inputs);
    auto want = run_kernel(plain, f, inputs);
    ASSERT_EQ(got->status, 0) << got->message;
    for (size_t a = 0; a < inputs.size(); ++a) {
      if (!inputs[a].array) continue;
      const TestArray& g = *got->args[a].array;
      const TestArray& w = *want->args[a].array;
      const TestArray& r = *ref->args[a].array;
      for (std::int64_t e = 0; e < g.size(); ++e) {
        EXPECT_TRUE(same_value(g, w, e)) << "argument " << a << " element " << e << " (lanes off)";
        EXPECT_TRUE(same_value(g, r, e)) << "argument " << a << " element " << e << " (interpreter)";
      }
    }
  }
}

codegen::CompiledKernel compile_keeping_ir(const ir::Function& f) {
  cpu::CpuOptions keep;
  keep.keep_llvm_ir = true;
  return cpu::compile(f, {}, keep);
}

/// Some special values among random ones.
TestArray with_specials(DType t, std::int64_t n, double lo, double hi) {
  TestArray a = random_array(t, {n}, Layout::RowMajor, lo, hi);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), -0.0};
  for (std::int64_t k = 0; k < 4 && 3 * k + 2 < n; ++k) set_number(a, 3 * k + 2, specials[k]);
  return a;
}

TEST(LanePlan, AnInOrderInnerSumRunsInLanes) {
  const ir::LanePlan plan = ir::plan_lanes(only_parfor(nbody1d(DType::F64)));
  EXPECT_TRUE(plan.wanted);
  EXPECT_TRUE(plan.eligible) << plan.reason;
  EXPECT_EQ(plan.float_bits, 64);
  EXPECT_NE(plan.reason.find("carries s in order"), std::string::npos) << plan.reason;
}

TEST(LanePlan, TheDecisionAndItsReasonAreInTheDiagnostics) {
  passes::PipelineReport report;
  passes::run_pipeline(nbody1d(DType::F64), &report);
  const auto note = std::find_if(report.notes.begin(), report.notes.end(), [](const passes::Note& n) { return n.pass == "plan_lanes"; });
  ASSERT_NE(note, report.notes.end());
  EXPECT_EQ(note->text, "test: lanes across i: a sequential loop carries s in order, each lane one i");
}

TEST(LanePlan, LinearSubscriptsAreFollowedThroughLets) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 1, true), out = array_param("out", t, 1, true);
  Var i = index("i"), j = index("j");
  Var s = local("s", t), k = local("k", DType::I64);
  Stmt body = block({let(s, num(t, 0)), let(k, i64c(2) * val(i) + i64c(1)),
                     for_loop(j, i64c(0), i64c(4), assign(s, val(s) * at(a, {val(k)}))), store(out, {val(i)}, val(s))});
  const ir::Function f = function("linear", {a, out}, {parfor1(i, dim(out), body)});
  const ir::LanePlan plan = ir::plan_lanes(only_parfor(f));
  ASSERT_TRUE(plan.eligible) << plan.reason;
  EXPECT_EQ(ir::lane_stride(plan, val(k)), 2);
  EXPECT_EQ(ir::lane_stride(plan, val(i) - i64c(3)), 1);
  EXPECT_EQ(ir::lane_stride(plan, val(j)), 0);
  EXPECT_EQ(ir::lane_stride(plan, val(i) * val(i)), std::nullopt);
  EXPECT_TRUE(ir::varies(plan, val(s)));
  EXPECT_FALSE(ir::varies(plan, at(a, {val(j)})));
}

TEST(LanePlan, BodiesWithoutAnInOrderLoopAreLeftToTheVectorizer) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 1, true), out = array_param("out", t, 1, true);
  Var i = index("i");
  const ir::Function f = function("map", {a, out}, {parfor1(i, dim(a), store(out, {val(i)}, at(a, {val(i)}) * num(t, 2)))});
  const ir::LanePlan plan = ir::plan_lanes(only_parfor(f));
  EXPECT_FALSE(plan.wanted);
  EXPECT_FALSE(plan.eligible);
  EXPECT_TRUE(plan.reason.empty());
}

TEST(LanePlan, RefusalsNameTheirReason) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 1, true), out = array_param("out", t, 1, true);
  Var i = index("i"), j = index("j");
  Var s = local("s", t);
  auto plan_of = [&](Stmt inner_loop, Stmt after) {
    Stmt body = block({let(s, num(t, 0)), std::move(inner_loop), std::move(after)});
    return ir::plan_lanes(only_parfor(function("refused", {a, out}, {parfor1(i, dim(a), body)})));
  };
  const Stmt sum = assign(s, val(s) + at(a, {val(j)}));
  // Every lane writing one element.
  ir::LanePlan p = plan_of(for_loop(j, i64c(0), i64c(3), sum), store(out, {i64c(0)}, val(s)));
  EXPECT_NE(p.reason.find("every lane stores to the same element of out"), std::string::npos) << p.reason;
  // Reading elements that other lanes write.
  p = plan_of(for_loop(j, i64c(0), i64c(3), assign(s, val(s) + at(out, {val(j)}))), store(out, {val(i)}, val(s)));
  EXPECT_NE(p.reason.find("reads out at other elements than it writes"), std::string::npos) << p.reason;
  EXPECT_TRUE(p.wanted);
  EXPECT_FALSE(p.eligible);
  // Reading and writing out[i + j] over j: the same subscripts, but not one element for the iteration.
  const Expr moving = val(i) + val(j);
  p = plan_of(for_loop(j, i64c(0), i64c(3), block({assign(s, val(s) + at(out, {moving})), store(out, {moving}, val(s))})),
              store(a, {val(i)}, val(s)));
  EXPECT_NE(p.reason.find("reads out at other elements than it writes"), std::string::npos) << p.reason;
  // out[i] read and written inside the loop is one element for the whole iteration: lanes.
  p = plan_of(for_loop(j, i64c(0), i64c(3), block({assign(s, val(s) + at(out, {val(i)})), store(out, {val(i)}, val(s))})),
              store(a, {val(i)}, val(s)));
  EXPECT_TRUE(p.eligible) << p.reason;
}

// A triangular loop (bounds that differ between lanes) runs over the union of the lanes' ranges, each lane
// masked off outside its own; inside it a second loop of lane-dependent length and a divergent branch.
TEST(Lanes, LoopsWithBoundsThatDifferBetweenLanesRunMasked) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), c = array_param("c", t, 2);
  Var i = index("i"), j = index("j"), k = index("k");
  Var s = local("s", t);
  // c[i, j] = sum over k < m of a[i, k] a[j, k] for j <= i (syrk's lower triangle), then a tail over
  // k in [j, i) when i - j is odd.
  Stmt dot = for_loop(k, i64c(0), dim(a, 1), assign(s, val(s) + at(a, {val(i), val(k)}) * at(a, {val(j), val(k)})));
  Stmt tail = ir::make_if(bin(BinaryOp::Ne, bin(BinaryOp::Mod, val(i) - val(j), i64c(2)), i64c(0)),
                          for_loop(k, val(j), val(i), assign(s, val(s) * num(t, 0.5) + at(a, {val(k), i64c(0)}))), nullptr);
  Stmt row = for_loop(j, i64c(0), val(i) + i64c(1), block({let(s, num(t, 0)), dot, tail, store(c, {val(i), val(j)}, val(s))}));
  const ir::Function f = function("triangle", {a, c}, {parfor1(i, dim(c), row)});
  const ir::LanePlan plan = ir::plan_lanes(only_parfor(f));
  ASSERT_TRUE(plan.eligible) << plan.reason;
  const codegen::CompiledKernel k_ = compile_keeping_ir(f);
  EXPECT_NE(k_.llvm_ir.find("i.lanes"), std::string::npos);
  for (std::int64_t n : {0, 1, 2, 8, 9, 19}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    check_bitwise(k_, f, {array_arg(random_array(t, {std::max<std::int64_t>(n, 1), 5})), array_arg(random_array(t, {n, n}))});
  }
}

// syrk as users write it: c[i, j] = beta c[i, j] + alpha (a[i, :] . a[j, :]) for j <= i. Each lane reads and
// writes only its own row of c (the first subscript is i in every access of c), so the read of c at the inner
// loop's j is no other lane's element: lanes, bitwise the scalar loop.
TEST(Lanes, ALaneMayReadAndWriteAnywhereInASliceOfItsOwn) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), c = array_param("c", t, 2);
  Var alpha = param("alpha", t), beta = param("beta", t);
  Var i = index("i"), j = index("j"), k = index("k");
  Var s = local("s", t);
  Stmt dot = for_loop(k, i64c(0), dim(a, 1), assign(s, val(s) + at(a, {val(i), val(k)}) * at(a, {val(j), val(k)})));
  Stmt update = store(c, {val(i), val(j)}, val(beta) * at(c, {val(i), val(j)}) + val(alpha) * val(s));
  Stmt row = for_loop(j, i64c(0), val(i) + i64c(1), block({let(s, num(t, 0)), dot, update}));
  const ir::Function f = function("syrk", {a, c, alpha, beta}, {parfor1(i, dim(c), row)});
  const ir::LanePlan plan = ir::plan_lanes(only_parfor(f));
  ASSERT_TRUE(plan.eligible) << plan.reason;
  const codegen::CompiledKernel k_ = compile_keeping_ir(f);
  EXPECT_NE(k_.llvm_ir.find("i.lanes"), std::string::npos);
  for (std::int64_t n : {0, 1, 7, 9, 17, 33}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    check_bitwise(k_, f, {array_arg(random_array(t, {std::max<std::int64_t>(n, 1), 6})), array_arg(random_array(t, {n, n})),
                          scalar_arg(1.5), scalar_arg(-0.75)});
  }
}

// The slice rule needs one subscript shared by every access of the array that differs between lanes and
// holds for the whole iteration; otherwise a lane may read an element another lane writes.
TEST(LanePlan, ASliceOfItsOwnNeedsOneLaneDependentSubscriptInEveryAccess) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 1, true), c = array_param("c", t, 2);
  Var i = index("i"), j = index("j");
  Var s = local("s", t);
  auto plan_of = [&](const Expr& read0, const Expr& read1, const Expr& write0, const Expr& write1) {
    Stmt loop = for_loop(j, i64c(0), dim(c, 1), block({assign(s, val(s) + at(c, {read0, read1}) * at(a, {val(j)})),
                                                       store(c, {write0, write1}, val(s))}));
    Stmt body = block({let(s, num(t, 0)), loop});
    return ir::plan_lanes(only_parfor(function("slices", {a, c}, {parfor1(i, dim(c), body)})));
  };
  // Row i read and written at every column: the lane's own row.
  EXPECT_TRUE(plan_of(val(i), val(j), val(i), val(j)).eligible);
  // Reading c[j, i] while writing c[i, j]: lane i reads the rows other lanes write.
  ir::LanePlan p = plan_of(val(j), val(i), val(i), val(j));
  EXPECT_FALSE(p.eligible);
  EXPECT_NE(p.reason.find("reads c at other elements than it writes"), std::string::npos) << p.reason;
  // Row i + j moves with the inner loop into the next lanes' rows.
  p = plan_of(val(i) + val(j), i64c(0), val(i) + val(j), i64c(0));
  EXPECT_FALSE(p.eligible);
  // Row i / 2 is shared by two lanes (no known lane stride).
  p = plan_of(val(i) / i64c(2), val(j), val(i) / i64c(2), val(j));
  EXPECT_FALSE(p.eligible);
}

TEST(Lanes, NBodyRunsInLanesBitwiseAsTheScalarLoop) {
  for (DType t : {DType::F64, DType::F32}) {
    SCOPED_TRACE(name_of(t));
    const ir::Function f = nbody1d(t);
    const codegen::CompiledKernel k = compile_keeping_ir(f);
    EXPECT_NE(k.llvm_ir.find("i.lanes"), std::string::npos) << "no lane loop in the LLVM IR";
    for (std::int64_t n : kLaneSizes) {
      SCOPED_TRACE("n = " + std::to_string(n));
      Args args{array_arg(with_specials(t, n, -5, 5)), array_arg(random_array(t, {n}, Layout::RowMajor, 0.5, 2)),
                array_arg(random_array(t, {n})), t == DType::F64 ? scalar_arg(1e-3) : scalar_arg(1e-3f)};
      check_bitwise(k, f, args);
    }
  }
}

// Lanes that take different arms: both arms run under masks, a load in an untaken arm is not made (the
// index array holds out-of-range subscripts exactly where the arm is not taken), and assignments merge.
TEST(Lanes, DivergentBranchesRunUnderMasks) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true), idx = array_param("idx", DType::I64, 1, true);
  Var out = array_param("out", t, 1, true);
  Var i = index("i"), j = index("j");
  Var s = local("s", t), c = local("c", DType::I64);
  const Expr in_range = bin(BinaryOp::Lt, at(idx, {val(i)}), dim(y));
  Stmt inner = ir::make_if(bin(BinaryOp::Gt, at(x, {val(j)}), at(x, {val(i)})),
                           block({assign(s, val(s) + at(x, {val(j)}) * at(y, {val(i)})), assign(c, val(c) + i64c(1))}),
                           ir::make_if(in_range, assign(s, val(s) * num(t, 0.5) + at(y, {at(idx, {val(i)})})), nullptr));
  Stmt body = block({let(s, num(t, 0)), let(c, i64c(0)), for_loop(j, i64c(0), dim(x), inner),
                     store(out, {val(i)}, val(s) + cast(t, val(c)))});
  const ir::Function f = function("divergent", {x, y, idx, out}, {parfor1(i, dim(x), body)});
  ASSERT_TRUE(ir::plan_lanes(only_parfor(f)).eligible) << ir::plan_lanes(only_parfor(f)).reason;
  const codegen::CompiledKernel k = compile_keeping_ir(f);
  EXPECT_NE(k.llvm_ir.find("i.lanes"), std::string::npos);
  for (std::int64_t n : kLaneSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    TestArray subscripts(DType::I64, {n});
    // Every third lane would read far out of bounds if its masked-off arm loaded.
    subscripts.fill<std::int64_t>([n](std::int64_t k) { return k % 3 == 1 ? std::int64_t{1} << 40 : (k * 7) % std::max<std::int64_t>(n, 1); });
    Args args{array_arg(with_specials(t, n, -1, 1)), array_arg(random_array(t, {n})), array_arg(subscripts),
              array_arg(random_array(t, {n}))};
    check_bitwise(k, f, args);
  }
}

// Accesses that are not contiguous across lanes: a subscript of lane stride 2 (a gather), a column of a
// row-major matrix (stride: the row length), stores through a permutation (a scatter); a 2-d parfor whose
// inner index is the lanes'; an i32 subscript.
TEST(Lanes, GathersAndScattersKeepEveryLanesElement) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 1, true), m = array_param("m", t, 2), perm = array_param("perm", DType::I64, 1, true);
  Var out = array_param("out", t, 2);
  Var r = index("r"), i = index("i"), j = index("j");
  Var s = local("s", t), k32 = local("k32", DType::I32);
  Stmt inner = assign(s, val(s) * num(t, 0.75) + at(a, {i64c(2) * val(i)}) * at(m, {val(j), val(i)}));
  Stmt body = block({let(s, cast(t, val(r))), let(k32, cast(DType::I32, val(i))), for_loop(j, i64c(0), dim(m, 0), inner),
                     store(out, {val(r), at(perm, {val(i)})}, val(s) + at(a, {cast(DType::I64, val(k32))}))});
  const ir::Function f =
      function("strided", {a, m, perm, out}, {parfor({r, i}, {dim(out, 0), dim(m, 1)}, body)});
  const codegen::CompiledKernel k = compile_keeping_ir(f);
  EXPECT_NE(k.llvm_ir.find("i.lanes"), std::string::npos);
  EXPECT_NE(k.llvm_ir.find("masked.gather"), std::string::npos);
  EXPECT_NE(k.llvm_ir.find("masked.scatter"), std::string::npos);
  for (std::int64_t n : {0, 1, 5, 8, 13, 40}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    TestArray p(DType::I64, {n});
    p.fill<std::int64_t>([n](std::int64_t q) { return (q * 5 + 3) % n; });  // a permutation when gcd(5, n) = 1
    if (n % 5 == 0) p.fill<std::int64_t>([n](std::int64_t q) { return n - 1 - q; });
    Args args{array_arg(random_array(t, {2 * n + 1})), array_arg(random_array(t, {6, n}, Layout::ColumnMajor)),
              array_arg(p), array_arg(random_array(t, {3, n}, Layout::ColumnMajor))};
    check_bitwise(k, f, args);
  }
}

// Library functions run lane by lane and selects evaluate the loading arm only for the lanes that take it;
// integer division, shifts and saturating float-to-int conversions on vectors; bool arrays in and out.
TEST(Lanes, LibraryFunctionsSelectsAndIntegerOpsMatchScalarCode) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), flags = array_param("flags", DType::Bool, 1, true);
  Var out = array_param("out", t, 1, true), counts = array_param("counts", DType::I32, 1, true);
  Var hits = array_param("hits", DType::Bool, 1, true);
  Var i = index("i"), j = index("j");
  Var s = local("s", t), q = local("q", DType::I32);
  const Expr xi = at(x, {val(i)});
  const Expr pick = ir::make_select(at(flags, {val(i)}), at(x, {val(j)}), xi);
  Stmt inner = block({
      assign(s, val(s) + call(Intrinsic::Exp, {pick * num(t, 0.01)}) + call(Intrinsic::Pow, {call(Intrinsic::Abs, {xi}), num(t, 0.3)})),
      assign(q, bin(BinaryOp::Div, val(q) + cast(DType::I32, xi * num(t, 1e9)), cast(DType::I32, val(j)) - ir::make_const(DType::I32, 2))),
      assign(q, bin(BinaryOp::Shl, val(q), cast(DType::I32, val(j)))),
  });
  Stmt body = block({let(s, num(t, 0)), let(q, cast(DType::I32, val(i))), for_loop(j, i64c(0), dim(x), inner),
                     store(out, {val(i)}, val(s)), store(counts, {val(i)}, val(q)),
                     store(hits, {val(i)}, bin(BinaryOp::Gt, val(s), num(t, 5)))});
  const ir::Function f = function("library", {x, flags, out, counts, hits}, {parfor1(i, dim(x), body)});
  const codegen::CompiledKernel k = compile_keeping_ir(f);
  EXPECT_NE(k.llvm_ir.find("i.lanes"), std::string::npos);
  for (std::int64_t n : kLaneSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    TestArray b(DType::Bool, {n});
    b.fill<bool>([](std::int64_t q) { return q % 3 != 0; });
    Args args{array_arg(with_specials(t, n, -3, 3)), array_arg(b), array_arg(random_array(t, {n})),
              array_arg(random_array(DType::I32, {n})), array_arg(TestArray(DType::Bool, {n}))};
    check_bitwise(k, f, args);
  }
}

// A parfor reduction over lanes: each lane keeps a partial, folded in lane order after the groups, so the
// sum is reassociated (as kiln's reductions are, within fixed blocks) and the same for every thread count.
// The update under a condition that differs between lanes is masked.
TEST(Lanes, ReductionsKeepAPartialPerLaneAndDoNotDependOnTheThreadCount) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true);
  Var i = index("i"), j = index("j");
  Var s = local("s", t), total = local("total", t), hi = local("hi", t);
  Stmt body = block({let(s, num(t, 1)), for_loop(j, i64c(0), i64c(6), assign(s, val(s) * num(t, 0.5) + at(x, {val(j)}) * at(x, {val(i)}))),
                     assign(total, val(total) + val(s)),
                     ir::make_if(bin(BinaryOp::Gt, val(s), num(t, 0)), assign(hi, bin(BinaryOp::Max, val(hi), val(s))), nullptr)});
  Stmt loop = parfor1(i, dim(x), body, {{total, ReduceOp::Add, nullptr}, {hi, ReduceOp::Max, nullptr}});
  const ir::Function f = function("reduced", {x}, {let(total, num(t, 0)), let(hi, num(t, -1e300)), loop}, val(total) + val(hi));
  const ir::LanePlan plan = ir::plan_lanes(only_parfor(f));
  ASSERT_TRUE(plan.eligible) << plan.reason;
  EXPECT_NE(plan.reason.find("a partial per lane for total, hi"), std::string::npos) << plan.reason;
  const codegen::CompiledKernel k = compile_keeping_ir(f);
  EXPECT_NE(k.llvm_ir.find("i.lanes"), std::string::npos);
  for (std::int64_t n : {0, 1, 7, 8, 9, 1000, 100003}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const Args args{array_arg(random_array(t, {std::max<std::int64_t>(n, 6)}, Layout::RowMajor, 0, 1))};
    check_kernel(k, f, args, Tolerance{1e6, 1e-9});
    double first = 0;
    for (int threads : {1, 2, 3, 8}) {
      ThreadCount tc(threads);
      const double got = run_kernel(k, f, args)->result.f64;
      if (threads == 1) first = got;
      EXPECT_EQ(std::memcmp(&got, &first, sizeof got), 0) << "threads " << threads;
    }
  }
}

// Conditions the same in every lane (the inner index's loads, a flag) stay scalar branches, also when they
// load in a short-circuit operand or a select arm (kiln-fuzz found them becoming lane vectors, which a branch
// cannot take).
TEST(Lanes, UniformConditionsWithLoadsStayScalarBranches) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), flags = array_param("flags", DType::Bool, 1, true);
  Var out = array_param("out", t, 1, true), p = param("p", DType::Bool);
  Var i = index("i"), j = index("j");
  Var s = local("s", t);
  const Expr uniform = bin(BinaryOp::Or, val(p), at(flags, {val(j)}));
  const Expr picked = ir::make_select(at(flags, {val(j)}), at(x, {val(j)}), num(t, 1));
  Stmt inner = ir::make_if(uniform, assign(s, val(s) * picked + at(x, {val(i)})), assign(s, val(s) - num(t, 1)));
  Stmt body = block({let(s, num(t, 0)), for_loop(j, i64c(0), dim(x), inner), store(out, {val(i)}, val(s))});
  const ir::Function f = function("uniform_if", {x, flags, out, p}, {parfor1(i, dim(x), body)});
  const codegen::CompiledKernel k = compile_keeping_ir(f);
  EXPECT_NE(k.llvm_ir.find("i.lanes"), std::string::npos);
  for (bool flag : {false, true})
    for (std::int64_t n : {0, 1, 9, 33}) {
      TestArray b(DType::Bool, {n});
      b.fill<bool>([](std::int64_t q) { return q % 2 == 0; });
      check_bitwise(k, f, {array_arg(random_array(t, {n}, Layout::RowMajor, -1, 1)), array_arg(b), array_arg(random_array(t, {n})),
                           scalar_arg(flag)});
    }
}

// Library functions lane by lane stay scalar libm calls: the SLP vectorizer must not fuse the lanes' calls
// into libmvec's vector variants (which differ in the last bits), as it did for tanh with 8 lanes and for exp
// and sin with 4 (a review's probe). Checked with 256-bit and 512-bit vectors.
TEST(Lanes, LibraryCallsStayTheScalarFunctionsOnEveryVectorWidth) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), out = array_param("out", t, 1, true);
  Var i = index("i"), j = index("j");
  Var s = local("s", t);
  const Expr xy = at(x, {val(i)}) * at(x, {val(j)});
  Stmt inner = assign(s, val(s) + call(Intrinsic::Tanh, {xy}) + call(Intrinsic::Exp, {xy}) + call(Intrinsic::Sin, {xy}) +
                             call(Intrinsic::Log, {call(Intrinsic::Abs, {xy}) + num(t, 1)}));
  Stmt body = block({let(s, num(t, 0)), for_loop(j, i64c(0), dim(x), inner), store(out, {val(i)}, val(s))});
  const ir::Function f = function("libm_lanes", {x, out}, {parfor1(i, dim(x), body)});
  for (const char* features : {"", "+prefer-256-bit"}) {
    SCOPED_TRACE(std::string("features ") + features);
    cpu::CpuOptions opts;
    opts.features = features;
    opts.keep_llvm_ir = true;
    const codegen::CompiledKernel k = cpu::compile(f, {}, opts);
    EXPECT_NE(k.llvm_ir.find("i.lanes"), std::string::npos);
    // (Their declarations may stay listed in @llvm.compiler.used; no call may reach them.)
    EXPECT_FALSE(std::regex_search(k.llvm_ir, std::regex("call [^\n]*@_ZGV"))) << "a call of a libmvec variant";
    for (std::int64_t n : {8, 67}) check_bitwise(k, f, {array_arg(random_array(t, {n}, Layout::RowMajor, -2, 2)), array_arg(random_array(t, {n}))}, opts);
  }
}

// Where the lanes walk down rows (several vectors at a time), the iterations after the whole groups run as
// groups of one vector masked to the range (emit_lanes.cpp, tail_lanes), not as one vector's groups and a scalar
// copy of the body: each lane still computes its scalar iteration, bitwise, and lanes past the range neither
// load nor store (out is longer than the range: its elements past it keep their values, which check_bitwise
// compares with the interpreter's). Other bodies (nbody1d) and a parfor with a scalar reduction keep the scalar
// loop after their groups: the reduction's lane partials fold first, then the rest continues in order.
TEST(Lanes, TheRestAfterWholeGroupsRunsInMaskedLanes) {
  for (DType t : {DType::F64, DType::F32}) {
    SCOPED_TRACE(name_of(t));
    // out[i] = a[0, i] * c + a[1, i] * c + ... in order: a scan down the columns of a.
    Var a = array_param("a", t, 2, true), out = array_param("out", t, 1, true), c = param("c", t);
    Var i = index("i"), k = index("k");
    Var s = local("s", t);
    Stmt body = block({let(s, num(t, 0)), for_loop(k, i64c(0), dim(a, 0), assign(s, val(s) + at(a, {val(k), val(i)}) * val(c))),
                       store(out, {val(i)}, val(s))});
    const ir::Function f = function("column_sums", {a, out, c}, {parfor1(i, dim(a, 1), body)});
    const ir::LanePlan plan = ir::plan_lanes(only_parfor(f));
    ASSERT_TRUE(plan.eligible && plan.walks) << plan.reason;
    const codegen::CompiledKernel compiled = compile_keeping_ir(f);
    EXPECT_NE(compiled.llvm_ir.find("i.tail"), std::string::npos) << "no masked groups after the lanes";
    EXPECT_EQ(compiled.llvm_ir.find("\ni.body"), std::string::npos) << "a scalar loop after the lanes";
    for (std::int64_t n : {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 35, 63, 101}) {
      SCOPED_TRACE("n = " + std::to_string(n));
      TestArray in = random_array(t, {5, n}, Layout::RowMajor, -5, 5);
      const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), -0.0};
      for (std::int64_t q = 0; q < 3 && q < n; ++q) set_number(in, (q + 1) * n - 1 - q, specials[q]);  // in the last columns
      Args args{array_arg(std::move(in)), array_arg(random_array(t, {n + 9})), t == DType::F64 ? scalar_arg(0.75) : scalar_arg(0.75f)};
      check_bitwise(compiled, f, args);
    }
  }
  EXPECT_EQ(compile_keeping_ir(nbody1d(DType::F64)).llvm_ir.find("i.tail"), std::string::npos) << "masked groups after lanes that do not walk";
  const DType t = DType::F64;
  Var x = array_param("x", t, 2, true);
  Var i = index("i"), j = index("j");
  Var s = local("s", t), total = local("total", t);
  Stmt body = block({let(s, num(t, 1)), for_loop(j, i64c(0), dim(x, 0), assign(s, val(s) * num(t, 0.5) + at(x, {val(j), val(i)}))),
                     assign(total, val(total) + val(s))});
  const ir::Function reduced = function("reduced", {x}, {let(total, num(t, 0)), parfor1(i, dim(x, 1), body, {{total, ReduceOp::Add, nullptr}})},
                                        val(total));
  ASSERT_TRUE(ir::plan_lanes(only_parfor(reduced)).walks);
  const codegen::CompiledKernel r = compile_keeping_ir(reduced);
  EXPECT_NE(r.llvm_ir.find("i.lanes"), std::string::npos);
  EXPECT_EQ(r.llvm_ir.find("i.tail"), std::string::npos) << "masked groups after the lanes of a reduction";
  EXPECT_TRUE(std::regex_search(r.llvm_ir, std::regex("\ni\\.(header|body|exit)"))) << "no scalar loop after the lanes of a reduction";
}

TEST(Lanes, OffLeavesTheBodyScalar) {
  const ir::Function f = nbody1d(DType::F64);
  cpu::CpuOptions opts;
  opts.keep_llvm_ir = true;
  opts.lanes = false;
  EXPECT_EQ(cpu::compile(f, {}, opts).llvm_ir.find("i.lanes"), std::string::npos);
}

}  // namespace
}  // namespace kiln
