// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Programs kiln-fuzz found (tools/kiln_fuzz), reduced to their core: each ran wrongly, crashed or was rejected
// somewhere between the interpreter, the pass pipeline and the CPU backend. Each is checked through the whole
// pipeline and the JIT against the interpreter on the IR as written.
#include "codegen_llvm_support.hpp"
#include "ir/printer.hpp"
#include "kiln/kiln.hpp"
#include "passes/pipeline.hpp"

namespace kiln::llvm_test {
namespace {

/// The pipeline accepts `f`, the optimized IR means the same, and so does the compiled kernel.
void check_pipeline(const ir::Function& f, const Args& inputs) {
  SCOPED_TRACE(ir::to_string(f));
  ir::Function opt;
  ASSERT_NO_THROW(opt = passes::run_pipeline(f));
  auto ref = run_interpreter(f, inputs);
  expect_same(f, *ref, *run_interpreter(opt, inputs), {});
  check_kernel(cpu::compile(opt, {}), opt, inputs, {}, {1, 3});
}

// Seeds 112 and 5: an update whose term folds to the identity (`s = s + 0`, `hist[k] = hist[k] + 0`) became
// `s = s`, which is no reduction update, so the verifier rejected simplify's output.
TEST(FuzzRegressions, UpdatesThatFoldToNoOpsLeaveTheReductionWellFormed) {
  Var x = array_param("x", DType::I64), hist = array_param("hist", DType::I32), zero = local("zero", DType::I64);
  Var s = local("s", DType::I64), i = index("i");
  Expr k = ir::make_binary(BinaryOp::Mod, at(x, {val(i)}), dim(hist));
  Stmt body = block({let(zero, i64c(0)), assign(s, val(s) + val(zero)),
                     store(hist, {k}, at(hist, {k}) + ir::make_int(DType::I32, 0))});
  ir::Function f = function("noop_updates", {x, hist},
                            {let(s, i64c(5)),
                             ir::make_parfor({i}, {i64c(0)}, {dim(x)}, body, {{s, ReduceOp::Add}},
                                             {{hist, ReduceOp::Add}}, "fuzz")},
                            val(s));
  TestArray xs(DType::I64, {100}), h(DType::I32, {7});
  xs.fill<std::int64_t>([](std::int64_t n) { return n * 3; });
  h.fill<std::int32_t>([](std::int64_t n) { return static_cast<std::int32_t>(n); });
  check_pipeline(f, {array_arg(xs), array_arg(h)});
}

// Seeds 25 and 39: an argmin whose candidate is a constant. Folding `isnan(c) && !isnan(best)` removed the NaN
// clause (or, for c = NaN, the comparison), leaving a condition that is no argmin update.
TEST(FuzzRegressions, ArgminOfAConstantKeepsTheShapeOfItsUpdate) {
  for (double c : {-4.25, kNaN}) {
    Var x = array_param("x", DType::F32), best = local("best", DType::F32), at_ = local("at", DType::I64);
    Var i = index("i");
    Expr cand = num(DType::F32, c);
    Expr nan_wins = ir::make_binary(BinaryOp::And, call(Intrinsic::IsNan, {cand}),
                                    ir::make_unary(UnaryOp::Not, call(Intrinsic::IsNan, {val(best)})));
    Expr cond = ir::make_binary(BinaryOp::Or, bin(BinaryOp::Lt, val(at_), i64c(0)),
                                ir::make_binary(BinaryOp::Or, bin(BinaryOp::Lt, cand, val(best)), nan_wins));
    Stmt update = ir::make_if(cond, block({assign(best, cand), assign(at_, val(i))}));
    ir::Function f = function("argmin_const", {x},
                              {let(best, num(DType::F32, kInf)), let(at_, i64c(-1)),
                               ir::make_parfor({i}, {i64c(0)}, {dim(x)}, block({update}), {{best, ReduceOp::ArgMin, at_}},
                                               {}, "fuzz"),
                               store(x, {i64c(0)}, val(best))},
                              val(at_));
    check_pipeline(f, {array_arg(random_array(DType::F32, {5000}))});
  }
}

// Seed 8 (second campaign): an axis reduction of a 1-d space with keepdims keeps no dimension, and lowering it
// built a parfor of zero dimensions, which the IR builder rejects. The frontend allows it (sum(a, 0, keepdims)).
TEST(FuzzRegressions, AxisReductionOfA1dArrayWithKeepdims) {
  for (Target t : {Target::interpreter, Target::cpu}) {
    Options o;
    o.target = t;
    auto total = jit("keep_total", [](Array<double, 1> a) { return kiln::sum(a, 0, keepdims); }, o);
    auto where = jit("keep_where", [](Array<float, 1> a) { return kiln::argmin(a, 0, keepdims); }, o);
    const std::vector<double> a = {1, 2, 3.5};
    const NDArray<double> s = total(a);
    ASSERT_EQ(s.rank(), 1);
    EXPECT_EQ(s.shape(0), 1);
    EXPECT_EQ(s.to_vector(), std::vector<double>{6.5});
    const std::vector<float> b = {3, -1, 2, -1};
    EXPECT_EQ(where(b).to_vector(), std::vector<std::int64_t>{1});
  }
}

// Seeds 1698, 1922 and 8093: a stencil whose only window is a map that reads no array (`m = dim(x, 0)`).
// fuse_stencils recomputed the producer inside the stencil and left it with no window, which the builder rejects.
TEST(FuzzRegressions, StencilOverAMapThatReadsNoArrayKeepsItsWindow) {
  Var x = array_param("x", DType::I64), out = array_param("out", DType::I64);
  Var m = local_array("m", DType::I64, 1), st = local_array("st", DType::I64, 1);
  Var e = index("e"), s = index("s"), c = index("c");
  Stmt map = ir::make_map(m, {e}, {dim(x)}, dim(x) * i64c(3), "map");
  Stmt stencil = ir::make_stencil(st, true, {s}, {dim(x)}, {}, at(m, {val(s) + i64c(-1)}) + at(m, {val(s) + i64c(1)}), {m},
                                  {-1}, {1}, Border::nearest, nullptr, "stencil");
  Stmt copy = ir::make_map_into(out, {c}, {dim(x)}, {val(c)}, at(st, {val(c)}), "copy");
  ir::Function f = function("constant_window", {x, out}, {map, stencil, copy});
  for (std::int64_t n : {0, 1, 5}) check_pipeline(f, {array_arg(TestArray(DType::I64, {n})), array_arg(TestArray(DType::I64, {n}))});
}

}  // namespace
}  // namespace kiln::llvm_test
