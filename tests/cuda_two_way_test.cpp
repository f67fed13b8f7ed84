// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Two reductions of one matrix in opposite directions as one pass over it (passes/two_way_products.hpp, the CUDA
// walk in codegen/cuda/emit_cooperative.cpp): the decision and its refusals in the diagnostics, the pass's IR
// against the interpreter (no GPU needed), the emitted walk through NVRTC, and on a GPU the kernels against the
// interpreter and run to run, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "bench/suite/kernels.hpp"
#include "codegen/cuda/cuda_backend.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "frontend/settings.hpp"
#include "ir/printer.hpp"
#include "kiln/kiln.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
namespace sk = suite::kiln_kernels;
using namespace cudatest;

// ---- kernels --------------------------------------------------------------------------------------------------

/// bicg into arguments: r^T A and A p, each added to an array the caller passes (a map between the reductions).
const auto bicg_into = [](Array<double, 2> A, Array<double, 1> r, Array<double, 1> p, Array<double, 1> s, Array<double, 1> q) {
  s += kiln::dot(r, A);
  q += kiln::dot(A, p);
};

/// The column and row sums of one matrix (the values alone: -0.0 and the infinities reach the sums unchanged).
const auto both_sums = [](Array<double, 2> A, Array<double, 1> cols, Array<double, 1> rows) {
  cols += kiln::sum(A, 0);
  rows += kiln::sum(A, 1);
};

/// f32, the row direction first, another operator: the rows' sums and the column maxima (with the check that a
/// column is not empty between them).
const auto sums_and_maxima = [](Array<float, 2> A, Array<float, 1> cols, Array<float, 1> rows) {
  rows += kiln::sum(A, 1);
  cols += kiln::max(A, 0);
};

/// keepdims: the sums as a 1 x m and an n x 1 array.
const auto kept_sums = [](Array<double, 2> A, Array<double, 2> cols, Array<double, 2> rows) {
  cols += kiln::sum(A, 0, kiln::keepdims);
  rows += kiln::sum(A, 1, kiln::keepdims);
};

/// A x, then y^T A where y reads A x: the second needs all of the first (atax's dependence), refused.
const auto dependent = [](Array<double, 2> A, Array<double, 1> x, Array<double, 1> out) {
  auto t = kiln::dot(A, x);
  out += kiln::dot(t, A);
};

std::string notes_of(const passes::PipelineReport& r) {
  std::string s;
  for (const passes::Note& n : r.notes) s += n.pass + ": " + n.text + "\n";
  return s;
}

template <class F>
std::string cuda_notes(const std::string& name, const F& fn, std::vector<std::string> params) {
  passes::PipelineReport report;
  rows::lower_for_cuda(name, fn, std::move(params), 1, false, &report);
  return notes_of(report);
}

// ---- the decision ---------------------------------------------------------------------------------------------

TEST(TwoWay, OppositeReductionsOfOneMatrixBecomeOnePass) {
  const std::string bicg = cuda_notes("bicg", sk::bicg, {"A", "r", "p"});
  EXPECT_NE(bicg.find("two_way_products: `dot(r, A)"), std::string::npos) << bicg;
  EXPECT_NE(bicg.find(": one pass over A for both (tiles of 128 x 256 elements"), std::string::npos) << bicg;
  // mvt: `x1 += A y1` between the products moves below the second.
  const std::string mvt = cuda_notes("mvt", sk::mvt, {"x1", "x2", "A", "y1", "y2"});
  EXPECT_NE(mvt.find("one pass over A for both"), std::string::npos) << mvt;
  EXPECT_NE(mvt.find("statement(s) moved below them"), std::string::npos) << mvt;
  const std::string sums = cuda_notes("both_sums", both_sums, {"A", "cols", "rows"});
  EXPECT_NE(sums.find("one pass over A for both"), std::string::npos) << sums;
}

TEST(TwoWay, RefusedWhereTheSecondReadsTheFirstsResult) {
  for (const std::string& notes :
       {cuda_notes("atax", sk::atax, {"A", "x"}), cuda_notes("dependent", dependent, {"A", "x", "out"})}) {
    EXPECT_NE(notes.find("not one pass over A: the second reads"), std::string::npos) << notes;
    EXPECT_EQ(notes.find("one pass over A for both"), std::string::npos) << notes;
  }
  // row_stats: the row means feed the variances' sums of deviations along the same rows, the column sums those
  // of the columns: those passes read x anyway, and the sums share them.
  const std::string stats = cuda_notes("row_stats", sk::row_stats, {"x"});
  EXPECT_NE(stats.find("not one pass over x: `"), std::string::npos) << stats;
  EXPECT_NE(stats.find("reads x again and depends on their results"), std::string::npos) << stats;
  EXPECT_EQ(stats.find("one pass over x for both"), std::string::npos) << stats;
  // gesummv's two products read two matrices, one each: nothing to share, nothing noted.
  const std::string gesummv = cuda_notes("gesummv", sk::gesummv, {"A", "B", "x", "alpha", "beta"});
  EXPECT_EQ(gesummv.find("two_way_products"), std::string::npos) << gesummv;
}

TEST(TwoWay, HostTargetsKeepFusionsOwnPass) {
  // On the CPU fuse_parfors' prefix fusion reads each row of A once for both products: the pass does not run.
  passes::PipelineReport report;
  passes::PipelineOptions o;
  o.target = Target::cpu;
  passes::run_pipeline(rows::trace_kernel("bicg", sk::bicg, {"A", "r", "p"}), &report, o);
  const std::string notes = notes_of(report);
  EXPECT_EQ(notes.find("two_way_products"), std::string::npos) << notes;
  EXPECT_NE(notes.find(": fused"), std::string::npos) << notes;
}

// ---- the pass's IR against the interpreter (no GPU) --------------------------------------------------------------

/// Shapes: empty either way, one element, primes across tile edges, exactly one tile and one past it, non-square.
std::vector<std::pair<std::int64_t, std::int64_t>> shapes() {
  return {{0, 5}, {5, 0}, {1, 1}, {3, 2}, {128, 256}, {129, 257}, {131, 263}, {300, 517}, {7, 1031}, {1031, 7}};
}

/// A (n x m) with NaN, +Inf, -Inf and a row and a column of -0.0 where it is large enough to keep them apart.
TestArray matrix(DType t, std::int64_t n, std::int64_t m) {
  TestArray a = random_array(t, {n, m}, Layout::RowMajor, -1, 1);
  if (n >= 6 && m >= 6) {
    a.set_number(1 * m + 2, std::numeric_limits<double>::quiet_NaN());
    a.set_number(2 * m + 3, std::numeric_limits<double>::infinity());
    a.set_number(3 * m + 4, -std::numeric_limits<double>::infinity());
    for (std::int64_t j = 0; j < m; ++j) a.set_number(4 * m + j, -0.0);
    for (std::int64_t i = 0; i < n; ++i) a.set_number(i * m + 5, -0.0);
  }
  return a;
}

/// Inputs for a kernel (A, v1, v2, out1, out2) or (A, out1, out2): the other arrays' shapes given.
Args inputs(DType t, std::int64_t n, std::int64_t m, const std::vector<std::vector<std::int64_t>>& shapes) {
  Args in = {array_arg(matrix(t, n, m))};
  for (const auto& s : shapes) in.push_back(array_arg(random_array(t, s, Layout::RowMajor, -1, 1)));
  return in;
}

struct Case {
  ir::Function traced;
  DType t;
  /// The other arrays' shapes for a matrix of n x m.
  std::function<std::vector<std::vector<std::int64_t>>(std::int64_t, std::int64_t)> sizes;
};

std::vector<Case> cases() {
  return {
      {rows::trace_kernel("bicg_into", bicg_into, {"A", "r", "p", "s", "q"}, 1, true), DType::F64,
       [](std::int64_t n, std::int64_t m) { return std::vector<std::vector<std::int64_t>>{{n}, {m}, {m}, {n}}; }},
      {rows::trace_kernel("both_sums", both_sums, {"A", "cols", "rows"}, 1, true), DType::F64,
       [](std::int64_t n, std::int64_t m) { return std::vector<std::vector<std::int64_t>>{{m}, {n}}; }},
      {rows::trace_kernel("sums_and_maxima", sums_and_maxima, {"A", "cols", "rows"}, 1, true), DType::F32,
       [](std::int64_t n, std::int64_t m) { return std::vector<std::vector<std::int64_t>>{{m}, {n}}; }},
      {rows::trace_kernel("kept_sums", kept_sums, {"A", "cols", "rows"}, 1, true), DType::F64,
       [](std::int64_t n, std::int64_t m) { return std::vector<std::vector<std::int64_t>>{{1, m}, {n, 1}}; }},
      {rows::trace_kernel("mvt", sk::mvt, {"x1", "x2", "A", "y1", "y2"}, 1, true), DType::F64, nullptr},
  };
}

/// mvt's arguments are (x1, x2, A, y1, y2) of a square A (n x n: m unused).
Args case_inputs(const Case& c, std::int64_t n, std::int64_t m) {
  if (c.sizes) return inputs(c.t, n, m, c.sizes(n, m));
  return {array_arg(random_array(c.t, {n})), array_arg(random_array(c.t, {n})), array_arg(matrix(c.t, n, n)), array_arg(random_array(c.t, {n})),
          array_arg(random_array(c.t, {n}))};
}

/// Sums of up to 1501 terms of at most 1 in magnitude in another order, which cancel: within an absolute bound.
Tolerance tolerance(DType t) { return Tolerance{4096, t == DType::F32 ? 2e-4 : 1e-11}; }

TEST(TwoWay, PassMatchesTheInterpreter) {
  for (const Case& c : cases()) {
    passes::PassContext ctx;
    ctx.device = true;
    const ir::Function fused = passes::run_pass("two_way_products", c.traced, ctx);
    ASSERT_NE(ir::to_string(fused).find("two_way_row_tiles"), std::string::npos) << ir::to_string(fused);
    for (const auto& [n, m] : shapes()) {
      SCOPED_TRACE(c.traced.name + " " + std::to_string(n) + " x " + std::to_string(m));
      const Args in = case_inputs(c, n, m);
      const auto want = run_interpreter(c.traced, in);
      const auto got = run_interpreter(fused, in);
      expect_same(c.traced, *want, *got, tolerance(c.t));
    }
  }
}

// ---- the CUDA walk, through NVRTC (no GPU) ----------------------------------------------------------------------

TEST(TwoWayNvrtc, TheTileIsOneWalkOverItsElements) {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  for (const Case& c : cases()) {
    passes::PipelineOptions o;
    o.target = Target::cuda;
    const ir::Function lowered = passes::run_pipeline(c.traced, nullptr, o);
    cu::Program program;
    compile_for_sm90(lowered, {}, &program);
    const std::string source = program.source();
    EXPECT_NE(source.find("// two-way tile: the column sums of"), std::string::npos) << c.traced.name << "\n" << source;
    EXPECT_NE(source.find("kiln_group_reduce"), std::string::npos) << c.traced.name;
  }
}

// ---- on a GPU ---------------------------------------------------------------------------------------------------

class TwoWayGpu : public GpuTest {};

TEST_F(TwoWayGpu, MatchesTheInterpreterAndRepeatsBitwise) {
  for (const Case& c : cases()) {
    passes::PipelineOptions o;
    o.target = Target::cuda;
    const ir::Function lowered = passes::run_pipeline(c.traced, nullptr, o);
    const cu::Compiled compiled = cu::compile(lowered, {}, kiln::detail::cuda_options());
    std::vector<std::pair<std::int64_t, std::int64_t>> all = shapes();
    all.emplace_back(1000, 1501);  // many tiles each way
    for (const auto& [n, m] : all) {
      SCOPED_TRACE(c.traced.name + " " + std::to_string(n) + " x " + std::to_string(m));
      const Args in = case_inputs(c, n, m);
      const auto want = run_interpreter(c.traced, in);
      const auto first = run_kernel(compiled.kernel, lowered, in);
      expect_same(c.traced, *want, *first, tolerance(c.t));
      expect_same(c.traced, *first, *run_kernel(compiled.kernel, lowered, in), Tolerance{});
    }
  }
}

}  // namespace
}  // namespace kiln
