// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lower_stencils and array bindings on the CPU: every border mode in 1-d, 2-d and 3-d, symmetric and
// asymmetric neighbourhoods, extents from 1 (and 0) to primes and arrays only just larger than the
// neighbourhood (empty interior), each compared three ways (tests/stencil_ir_util.hpp). Also the lowered
// form (golden IR), vectorization of the interior, the size check, and time loops that swap buffers.
#include <fstream>
#include <regex>
#include <sstream>

#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "tests/stencil_ir_util.hpp"

namespace kiln::stencil_test {
namespace {

const Border kBorders[] = {Border::constant, Border::nearest, Border::wrap, Border::reflect, Border::mirror, Border::skip};

/// Wrap, reflect and mirror need |offset| < extent (the frontend checks it); the others take any extent.
bool admissible(const StencilSpec& s, const std::vector<std::int64_t>& shape) {
  const bool folds = s.border == Border::wrap || s.border == Border::reflect || s.border == Border::mirror;
  for (size_t d = 0; d < shape.size(); ++d)
    if (folds && shape[d] > 0 && std::max(-s.lo[d], s.hi[d]) >= shape[d]) return false;
  return true;
}

void run_shapes(const StencilSpec& s, const std::vector<std::vector<std::int64_t>>& shapes) {
  const ir::Function f = stencil_function(s);
  const ir::Function lowered = passes::run_pipeline(f);
  const auto kernel = compile(lowered);
  int ran = 0;
  for (const auto& shape : shapes) {
    if (!admissible(s, shape)) continue;
    std::string text;
    for (auto n : shape) text += std::to_string(n) + " ";
    SCOPED_TRACE("border " + std::string(ir::name_of(s.border)) + ", shape " + text);
    expect_three_way(f, lowered, kernel, stencil_args(s, shape));
    ++ran;
  }
  EXPECT_GT(ran, 2);  // each configuration meets several admissible shapes
}

std::vector<std::vector<std::int64_t>> shapes_1d() { return {{0}, {1}, {2}, {3}, {4}, {5}, {7}, {13}, {31}, {1009}}; }
std::vector<std::vector<std::int64_t>> shapes_2d() {
  return {{1, 1}, {1, 7}, {2, 3}, {3, 2}, {3, 4}, {4, 4}, {5, 13}, {13, 5}, {7, 31}, {0, 5}, {37, 67}};
}
std::vector<std::vector<std::int64_t>> shapes_3d() {
  return {{1, 1, 1}, {2, 2, 2}, {3, 4, 5}, {4, 3, 3}, {5, 1, 7}, {7, 5, 3}, {13, 11, 17}, {2, 0, 3}};
}

TEST(StencilLowering, OneDimensional) {
  for (Border b : kBorders)
    for (auto [lo, hi] : {std::pair{-1, 1}, {-2, 1}, {0, 3}, {-3, 0}}) {
      StencilSpec s{{lo}, {hi}, b};
      run_shapes(s, shapes_1d());
    }
}

TEST(StencilLowering, TwoDimensional) {
  for (Border b : kBorders) {
    run_shapes(StencilSpec{{-1, -1}, {1, 1}, b}, shapes_2d());
    run_shapes(StencilSpec{{-2, 0}, {1, 2}, b}, shapes_2d());
    run_shapes(StencilSpec{{0, -1}, {0, 1}, b}, shapes_2d());  // a 1-d neighbourhood: extent 1 along axis 0
  }
}

TEST(StencilLowering, ThreeDimensional) {
  for (Border b : kBorders) {
    run_shapes(StencilSpec{{-1, -1, -1}, {1, 1, 1}, b}, shapes_3d());
    run_shapes(StencilSpec{{-1, 0, -2}, {2, 1, 0}, b}, shapes_3d());
  }
}

TEST(StencilLowering, IntoExistingArraysTwoWindowsFloatAndStridedViews) {
  for (Border b : kBorders) {
    StencilSpec s{{-1, -2}, {2, 1}, b};
    s.allocate = false;  // skip keeps the target's own elements on the border
    s.two_windows = true;
    run_shapes(s, shapes_2d());
    s.elem = DType::F32;
    s.unit_stride = false;
    run_shapes(s, shapes_2d());
  }
}

TEST(StencilLowering, IntegerElements) {
  for (Border b : kBorders) {
    StencilSpec s{{-1}, {2}, b, DType::I32};
    s.cval = 7;
    run_shapes(s, shapes_1d());
  }
}

/// The shared pipeline's form, before partition_loops (a host-only pass) cuts loops at their tests: what
/// the CUDA backend sees.
ir::Function shared_form(const ir::Function& f) {
  passes::PipelineOptions device;
  device.target = Target::cuda;
  return passes::run_pipeline(f, nullptr, device);
}

TEST(StencilLowering, OneParforPerStencil) {
  // Every mode, 3-d, neighbourhood reaching both sides of every axis: one parfor over the whole space (one
  // fork of the team), the interior tested per axis inside it; no stencil left.
  for (Border b : kBorders) {
    const ir::Function lowered = shared_form(stencil_function(StencilSpec{{-1, -1, -1}, {1, 1, 1}, b}));
    EXPECT_EQ(count_parfors(lowered.body), 1) << ir::to_string(lowered);
    EXPECT_EQ(count_stencils(lowered.body), 0);
  }
  // One-sided neighbourhoods test one side only; skip into an existing array runs the interior alone.
  const std::string one_sided = ir::to_string(shared_form(stencil_function(StencilSpec{{0, -1}, {2, 0}, Border::wrap})));
  EXPECT_NE(one_sided.find("if (i < s0_hi0)"), std::string::npos) << one_sided;
  EXPECT_NE(one_sided.find("if (s0_lo1 <= j)"), std::string::npos) << one_sided;
  StencilSpec skip{{-1, -1}, {1, 1}, Border::skip};
  skip.allocate = false;
  const ir::Function interior = passes::run_pipeline(stencil_function(skip));
  EXPECT_EQ(count_parfors(interior.body), 1);
  EXPECT_EQ(ir::to_string(interior).find("if "), std::string::npos) << ir::to_string(interior);
}

/// The parfors of `s` that hold no parfor, whose bodies hold an `if`: innermost loops that still test.
int testing_loops(const Stmt& s) {
  struct Finder : ir::IRVisitor {
    int n = 0;
    void visit(const ir::ParforStmt& p) override {
      if (count_parfors(p.body) == 0) {
        struct Ifs : ir::IRVisitor {
          bool found = false;
          void visit(const ir::IfStmt&) override { found = true; }
        } ifs;
        ifs.walk(p.body);
        n += ifs.found ? 1 : 0;
      }
      ir::IRVisitor::visit(p);
    }
  } f;
  f.walk(s);
  return f.n;
}

int count_fors(const ir::Stmt& s) {
  struct Fors : ir::IRVisitor {
    int n = 0;
    using ir::IRVisitor::visit;
    void visit(const ir::ForStmt& f) override {
      ++n;
      ir::IRVisitor::visit(f);
    }
  } f;
  f.walk(s);
  return f.n;
}

TEST(StencilLowering, HostTargetsPartitionTheBandTests) {
  // partition_loops cuts the innermost dimension at the band tests and decides the outer axes' tests
  // around the loops: no innermost loop tests anything, a 1-d stencil becomes three parfors (low band,
  // interior, high band), a 2-d one keeps its parfor over rows holding 4 loops (the else arm of the row's
  // test, and 3 for the columns), a 3-d one 5 (an else arm for each outer axis), and the decisions are in
  // the notes. The CUDA target keeps the shared form.
  for (Border b : kBorders) {
    SCOPED_TRACE(std::string(ir::name_of(b)));
    for (size_t rank : {1, 2, 3}) {
      const ir::Function f = stencil_function(StencilSpec{std::vector<std::int64_t>(rank, -1), std::vector<std::int64_t>(rank, 1), b});
      passes::PipelineReport report;
      const ir::Function cpu = passes::run_pipeline(f, &report);
      EXPECT_EQ(testing_loops(cpu.body), 0) << ir::to_string(cpu);
      // Inside an outer axis, the rims on both sides of a row that read at clamps of the index (constant and
      // nearest borders) are one sequential loop (partition_loops.cpp).
      const bool clamps = b == Border::constant || b == Border::nearest;
      EXPECT_EQ(count_parfors(cpu.body) + count_fors(cpu.body), rank == 1 ? 3 : rank == 2 ? (clamps ? 4 : 5) : (clamps ? 5 : 6))
          << ir::to_string(cpu);
      bool noted = false;
      for (const auto& n : report.notes) noted |= n.pass == "partition_loops" && n.text.find("loops over") != std::string::npos;
      EXPECT_TRUE(noted);
      EXPECT_EQ(testing_loops(shared_form(f).body), 1);
    }
  }
}

TEST(StencilLowering, SplitLoopsKeepTheBranchesMeaning) {
  // partition_loops cuts a parfor's innermost loop at the bounds of tests on its index and decides tests of
  // loop-invariant values around the loops. Bounds below, inside and beyond the range, crossed and equal,
  // and a row test in 2-d, each against the interpreter.
  const ir::Type t1 = ir::Type::array(DType::F64, 1, true), t2 = ir::Type::array(DType::F64, 2, true);
  const Var a = ir::make_var("a", t1, ir::VarKind::Param), m = ir::make_var("m", t2, ir::VarKind::Param);
  const Var lo = param("lo", DType::I64), hi = param("hi", DType::I64);
  const Var out = local_array("out", DType::F64, 1), out2 = local_array("out2", DType::F64, 2);
  const Var i = index("i"), r = index("r"), c = index("c");
  const Expr in_range = bin(BinaryOp::And, bin(BinaryOp::Le, val(lo), val(i)), bin(BinaryOp::Lt, val(i), val(hi)));
  const Expr odd_lo = bin(BinaryOp::Eq, bin(BinaryOp::Mod, val(lo), i64c(2)), i64c(1));  // invariant
  const Stmt body1 = block({ir::make_if(bin(BinaryOp::And, in_range, odd_lo), block({store(out, {val(i)}, at(a, {val(i)}) * num(DType::F64, 2))}),
                                        block({store(out, {val(i)}, at(a, {val(i)}) + num(DType::F64, 1))}))});
  const ir::Function f1 = function("split1", {a, lo, hi}, {ir::make_allocate(out, {dim(a, 0)}), parfor({i}, {dim(a, 0)}, body1)}, nullptr, out);
  const Expr row_in = bin(BinaryOp::Lt, val(r), val(lo));
  const Expr col_in = bin(BinaryOp::And, bin(BinaryOp::Ge, val(c), val(lo)), bin(BinaryOp::Gt, val(hi), val(c)));
  const Stmt body2 = block({ir::make_if(row_in, block({ir::make_if(col_in, block({store(out2, {val(r), val(c)}, at(m, {val(r), val(c)}) * num(DType::F64, 3))}),
                                                                    block({store(out2, {val(r), val(c)}, num(DType::F64, 7))}))}),
                                        block({store(out2, {val(r), val(c)}, at(m, {val(r), val(c)}) - num(DType::F64, 1))}))});
  const ir::Function f2 = function("split2", {m, lo, hi}, {ir::make_allocate(out2, {dim(m, 0), dim(m, 1)}), parfor({r, c}, {dim(m, 0), dim(m, 1)}, body2)},
                                   nullptr, out2);
  const ir::Function l1 = passes::run_pipeline(f1), l2 = passes::run_pipeline(f2);
  const auto k1 = compile(l1), k2 = compile(l2);
  for (std::int64_t n : {0, 1, 5, 37})
    for (auto [x, y] : {std::pair<std::int64_t, std::int64_t>{-3, 2}, {1, 4}, {3, 3}, {5, 2}, {2, 100}, {-10, -5}, {41, 50}, {0, 37}}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", bounds " + std::to_string(x) + " " + std::to_string(y));
      expect_three_way(f1, l1, k1, {array_arg(random_array(DType::F64, {n})), scalar_arg<std::int64_t>(x), scalar_arg<std::int64_t>(y)});
      expect_three_way(f2, l2, k2, {array_arg(random_array(DType::F64, {n, n + 2})), scalar_arg<std::int64_t>(x), scalar_arg<std::int64_t>(y)});
    }
}

TEST(StencilLowering, GoldenTwoDimensional) {
  StencilSpec s{{-1, -1}, {1, 1}, Border::reflect};
  const std::string text = ir::to_string(passes::run_pipeline(stencil_function(s, "blur")));
  const std::string path = std::string(KILN_GOLDEN_DIR) + "/stencil_lowered_2d.ir";
  if (const char* u = std::getenv("KILN_UPDATE_GOLDEN"); u && *u && std::string(u) != "0") {
    std::ofstream(path, std::ios::binary) << text;
    ADD_FAILURE() << "rewrote golden file " << path << "; review it and rerun without KILN_UPDATE_GOLDEN";
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), text);
}

TEST(StencilLowering, InteriorIsVectorized) {
  // Jacobi's 5-point stencil in 2-d and a 3-point smoother in 1-d, double and float: the interior chunk
  // (the first parfor in 2-d, whose rows run the interior loop inline; the second in 1-d, between the
  // bands' parfors) holds vector loads and arithmetic, with no run-time alias checks.
  for (DType t : {DType::F64, DType::F32}) {
    for (int rank : {1, 2}) {
      StencilSpec s{std::vector<std::int64_t>(static_cast<size_t>(rank), -1), std::vector<std::int64_t>(static_cast<size_t>(rank), 1),
                    Border::nearest, t};
      cpu::CpuOptions keep_ir;
      keep_ir.keep_llvm_ir = true;
      const auto k = cpu::compile(passes::run_pipeline(stencil_function(s, "vec")), {}, keep_ir);
      const std::string interior = llvm_function(k.llvm_ir, rank == 1 ? "vec.parfor1" : "vec.parfor0");
      ASSERT_FALSE(interior.empty()) << k.llvm_ir;
      const std::string elem = t == DType::F64 ? "double" : "float";
      EXPECT_TRUE(std::regex_search(interior, std::regex("load <[0-9]+ x " + elem + ">"))) << interior;
      EXPECT_TRUE(std::regex_search(interior, std::regex("fmul <[0-9]+ x " + elem + ">"))) << interior;
      EXPECT_EQ(interior.find("vector.memcheck"), std::string::npos) << interior;
    }
  }
}

// A constant border on the host: each remapped read is loaded first (its index is clamped into the window, so
// it is in range) and the border value chosen by a select, not a branch around the load; the rims on both
// sides of a row are one loop. Together: one copy of the 25 taps fewer, and no branch per tap, in each of
// conv5x5's border loops. The results are the definition's at every extent (also those where the rims meet).
TEST(StencilLowering, ConstantBorderReadsFirstAndBothRimsInOneLoop) {
  StencilSpec s{{-2, -2}, {2, 2}, Border::constant};
  const ir::Function f = stencil_function(s, "conv");
  const ir::Function lowered = passes::run_pipeline(f);
  const std::string text = ir::to_string(lowered);
  EXPECT_EQ(count_matches(text, std::regex("for j_rim")), 1) << text;
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const auto k = cpu::compile(lowered, {}, keep_ir);
  EXPECT_EQ(k.llvm_ir.find("sel.then"), std::string::npos) << k.llvm_ir;
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{0, 3}, {1, 1}, {1, 4}, {2, 5}, {3, 3}, {4, 4}, {5, 5}, {6, 2}, {7, 31}, {37, 67}}) {
    SCOPED_TRACE(std::to_string(shape[0]) + " x " + std::to_string(shape[1]));
    expect_three_way(f, lowered, k, stencil_args(s, shape));
  }
}

TEST(StencilLowering, FoldingBordersCheckTheExtent) {
  // Without the frontend's check (IR built directly), a mirror border over an axis shorter than the reach
  // stops with a shape error instead of reading outside the array.
  StencilSpec s{{-2}, {2}, Border::mirror};
  const ir::Function lowered = passes::run_pipeline(stencil_function(s));
  const auto kernel = compile(lowered);
  Args args = stencil_args(s, {2});
  auto got = run_kernel(kernel, lowered, args);
  EXPECT_EQ(got->status, kShapeMismatch);
  EXPECT_NE(got->message.find("reaches 2 along axis 0 of an array of extent 2"), std::string::npos) << got->message;
  EXPECT_THROW(run_interpreter(lowered, args), ShapeError);
  EXPECT_THROW(run_interpreter(stencil_function(s), args), IndexError);  // the definition reads out of range
}

// ---- array bindings --------------------------------------------------------------------------------------

/// `steps` Jacobi sweeps of `a` (2-d, reflect border) ping-ponging between a and a temporary through
/// bindings; the final state is copied into a fresh result array. With `copy_back` the state also goes
/// back into a (a parameter written through a binding).
ir::Function jacobi_steps(bool copy_back) {
  const ir::Type t = ir::Type::array(DType::F64, 2, true);
  const Var a = ir::make_var("a", t, ir::VarKind::Param);
  const Var steps = param("steps", DType::I64);
  const Var tmp = local_array("tmp", DType::F64, 2), res = local_array("res", DType::F64, 2);
  const Var cur = ir::make_var("cur", t, ir::VarKind::Binding), nxt = ir::make_var("nxt", t, ir::VarKind::Binding),
            spare = ir::make_var("spare", t, ir::VarKind::Binding);
  const Var i = index("i"), j = index("j"), step = index("t");
  const Expr value = num(DType::F64, 0.25) * (at(cur, {val(i) - i64c(1), val(j)}) + at(cur, {val(i) + i64c(1), val(j)}) +
                                              at(cur, {val(i), val(j) - i64c(1)}) + at(cur, {val(i), val(j) + i64c(1)}));
  const Stmt sweep = ir::make_stencil(nxt, false, {i, j}, {dim(cur, 0), dim(cur, 1)}, {val(i), val(j)}, value, {cur},
                                      {-1, -1}, {1, 1}, Border::reflect, nullptr, "jacobi");
  const Stmt loop = for_loop(step, i64c(0), val(steps),
                             block({sweep, ir::make_bind(spare, cur, false), ir::make_bind(cur, nxt, false),
                                    ir::make_bind(nxt, spare, false)}));
  const Var ci = index("ci"), cj = index("cj");
  std::vector<Stmt> body{ir::make_allocate(tmp, {dim(a, 0), dim(a, 1)}),
                         ir::make_bind(cur, a, true),
                         ir::make_bind(nxt, tmp, true),
                         ir::make_bind(spare, a, true),
                         loop,
                         ir::make_allocate(res, {dim(a, 0), dim(a, 1)}),
                         parfor({ci, cj}, {dim(a, 0), dim(a, 1)}, block({store(res, {val(ci), val(cj)}, at(cur, {val(ci), val(cj)}))}))};
  if (copy_back) {
    const Var bi = index("bi"), bj = index("bj");
    body.push_back(parfor({bi, bj}, {dim(a, 0), dim(a, 1)}, block({store(a, {val(bi), val(bj)}, at(cur, {val(bi), val(bj)}))})));
  }
  return function(copy_back ? "jacobi_back" : "jacobi", {a, steps}, body, nullptr, res);
}

TEST(StencilBindings, JacobiTimeLoopSwapsBuffers) {
  for (bool copy_back : {false, true}) {
    const ir::Function f = jacobi_steps(copy_back);
    ASSERT_TRUE(ir::verify(f).empty()) << ir::to_string(f);
    const ir::Function lowered = passes::run_pipeline(f);
    // The temporary is reached only through bindings: no pass may remove or share it.
    EXPECT_NE(ir::to_string(lowered).find("alloc tmp:"), std::string::npos) << ir::to_string(lowered);
    const auto kernel = compile(lowered);
    for (std::int64_t steps : {0, 1, 2, 3, 10})
      for (std::vector<std::int64_t> shape : {std::vector<std::int64_t>{2, 2}, {5, 7}, {64, 33}}) {
        SCOPED_TRACE("steps " + std::to_string(steps) + ", " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]));
        expect_three_way(f, lowered, kernel, {array_arg(random_array(DType::F64, shape)), scalar_arg<std::int64_t>(steps)});
      }
    // Many calls: a leak or a double free of the swapped buffers would show up under the sanitizers, and a
    // free of a buffer a binding still names as wrong results here.
    Args args{array_arg(random_array(DType::F64, {33, 17})), scalar_arg<std::int64_t>(7)};
    auto ref = run_interpreter(f, args);
    for (int k = 0; k < 50; ++k) {
      auto got = run_kernel(kernel, lowered, args);
      expect_same(f, *ref, *got, {});
    }
  }
}

TEST(StencilBindings, BindingsInsideParforsAndPassesKeepBoundBuffers) {
  // A binding declared inside a parfor body (the chunk owns its slots) names one of two rows' sources.
  const ir::Type t = ir::Type::array(DType::F64, 1, true);
  const Var a = ir::make_var("a", t, ir::VarKind::Param), b = ir::make_var("b", t, ir::VarKind::Param);
  const Var out = local_array("out", DType::F64, 1), tmp = local_array("tmp", DType::F64, 1);
  const Var pick = ir::make_var("pick", t, ir::VarKind::Binding);
  const Var i = index("i"), k = index("k");
  const Stmt body = block({ir::make_bind(pick, a, true),
                           ir::make_if(bin(BinaryOp::Eq, bin(BinaryOp::Mod, val(i), i64c(2)), i64c(0)),
                                       ir::make_bind(pick, tmp, false)),
                           store(out, {val(i)}, at(pick, {val(i)}) + cast(DType::F64, dim(pick, 0)))});
  const ir::Function f =
      function("pick", {a, b},
               {ir::make_allocate(tmp, {dim(a, 0)}), parfor({k}, {dim(a, 0)}, block({store(tmp, {val(k)}, at(b, {val(k)}) * num(DType::F64, 3))})),
                ir::make_allocate(out, {dim(a, 0)}), parfor({i}, {dim(a, 0)}, body)},
               nullptr, out);
  ASSERT_TRUE(ir::verify(f).empty()) << ir::to_string(f);
  const ir::Function lowered = passes::run_pipeline(f);
  EXPECT_NE(ir::to_string(lowered).find("alloc tmp:"), std::string::npos) << ir::to_string(lowered);
  const auto kernel = compile(lowered);
  for (std::int64_t n : {1, 2, 9, 1000})
    expect_three_way(f, lowered, kernel, {array_arg(random_array(DType::F64, {n})), array_arg(random_array(DType::F64, {n}))});
}

TEST(StencilBindings, StoresThroughABindingToAParameterSurviveSimplify) {
  // `bind w = a; w[i] = ...` is a visible write of a even though w is never read.
  const ir::Type t = ir::Type::array(DType::F64, 1, true);
  const Var a = ir::make_var("a", t, ir::VarKind::Param);
  const Var w = ir::make_var("w", t, ir::VarKind::Binding);
  const Var i = index("i");
  const ir::Function f = function("through", {a}, {ir::make_bind(w, a, true),
                                                   parfor({i}, {dim(a, 0)}, block({store(w, {val(i)}, cast(DType::F64, val(i)))}))});
  const ir::Function lowered = passes::run_pipeline(f);
  EXPECT_EQ(count_parfors(lowered.body), 1) << ir::to_string(lowered);
  expect_three_way(f, lowered, compile(lowered), {array_arg(random_array(DType::F64, {100}))});
}

}  // namespace
}  // namespace kiln::stencil_test
