// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parfors cut into pieces other than equal lengths (ir/uneven_work.hpp, kiln_rt_parfor_split): a triangle's
// rows into pieces of equal work, a body in vector lanes into pieces that start at multiples of its lane
// count. The runtime's pieces tile the range; the decision and the loop that causes it reach the diagnostics;
// results stay bitwise the interpreter's for any thread count (the iterations of a parfor without reductions
// may run anywhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ir/uneven_work.hpp"
#include "passes/pipeline.hpp"
#include "tests/codegen_llvm_support.hpp"

namespace kiln {
namespace {

using namespace llvm_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary

struct Ranges {
  std::mutex m;
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;
  static void chunk(void* ctx, std::int64_t lo, std::int64_t hi, void* partial) {
    EXPECT_EQ(partial, nullptr);
    auto* r = static_cast<Ranges*>(ctx);
    std::lock_guard<std::mutex> lock(r->m);
    r->seen.emplace_back(lo, hi);
  }
};

TEST(SplitRuntime, PiecesTileTheRangeAtMultiplesOfTheAlignment) {
  const std::pair<double, double> weights[] = {{1, 1}, {1, 100}, {100, 1}, {0, 0}, {0, 5}};
  for (int threads : {1, 2, 3, 16}) {
    ThreadCount tc(threads);
    for (std::int64_t n : {0, 1, 2, 7, 8, 9, 100, 1001}) {
      for (std::int64_t align : {1, 8}) {
        for (const auto& [first, last] : weights) {
          SCOPED_TRACE("threads " + std::to_string(threads) + " n " + std::to_string(n) + " align " + std::to_string(align) +
                       " weights " + std::to_string(first) + ".." + std::to_string(last));
          Ranges r;
          const std::int64_t begin = -5;
          kiln_rt_parfor_split(&Ranges::chunk, &r, begin, begin + n, 1, align, first, last);
          std::sort(r.seen.begin(), r.seen.end());
          std::int64_t at = begin;
          for (const auto& [lo, hi] : r.seen) {
            EXPECT_EQ(lo, at);
            EXPECT_LT(lo, hi);
            EXPECT_EQ((lo - begin) % align, 0);
            at = hi;
          }
          EXPECT_EQ(at, begin + n);
          EXPECT_LE(static_cast<int>(r.seen.size()), threads);
        }
      }
    }
  }
}

TEST(SplitRuntime, ATrianglesPiecesHoldEqualWork) {
  // Row i of a 520-row lower triangle costs i + 1: with 16 equal lengths the last piece holds 1.94x the mean.
  const std::int64_t n = 520;
  const double total = static_cast<double>(n) * (n + 1) / 2;
  for (std::int64_t align : {1, 8}) {
    ThreadCount tc(16);
    Ranges r;
    kiln_rt_parfor_split(&Ranges::chunk, &r, 0, n, 1, align, 1.0, static_cast<double>(n));
    ASSERT_EQ(r.seen.size(), 16u);
    for (const auto& [lo, hi] : r.seen) {
      const double work = (static_cast<double>(hi) * (hi + 1) - static_cast<double>(lo) * (lo + 1)) / 2;
      // Within the rounding to `align` rows (at most align / 2 rows of up to n each, at both ends).
      EXPECT_LE(work, total / 16 + static_cast<double>(align * n)) << lo << ".." << hi;
    }
  }
}

/// c[i, j] = sum over k of a[i, k] a[j, k] for the rows j of [lo(i), hi(i)) (a triangle of c), in order.
ir::Function triangle(const std::string& name, const std::function<std::pair<Expr, Expr>(const Var&, const Var&)>& bounds) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), c = array_param("c", t, 2);
  Var i = index("i"), j = index("j"), k = index("k");
  Var s = local("s", t);
  Stmt dot = for_loop(k, i64c(0), dim(a, 1), assign(s, val(s) + at(a, {val(i), val(k)}) * at(a, {val(j), val(k)})));
  auto [lo, hi] = bounds(i, c);
  Stmt row = for_loop(j, lo, hi, block({let(s, num(t, 0)), dot, store(c, {val(i), val(j)}, val(s) + at(c, {val(i), val(j)}))}));
  return function(name, {a, c}, {parfor1(i, dim(c), row, {}, name)});
}

const ir::ParforStmt& only_parfor(const ir::Function& f) {
  for (const auto& s : f.body->as<ir::BlockStmt>().stmts)
    if (const auto* p = ir::dyn<ir::ParforStmt>(s)) return *p;
  throw std::logic_error("no parfor in " + f.name);
}

TEST(SplitParfors, TrianglesSplitByWorkAndMatchTheInterpreter) {
  const ir::Function lower = triangle("lower", [](const Var& i, const Var&) { return std::pair{i64c(0), val(i) + i64c(1)}; });
  const ir::Function upper = triangle("upper", [](const Var& i, const Var& c) { return std::pair{val(i), dim(c, 1)}; });
  for (const ir::Function* f : {&lower, &upper}) {
    SCOPED_TRACE(f->name);
    EXPECT_TRUE(ir::splits_by_work(only_parfor(*f)));
    cpu::CpuOptions keep;
    keep.keep_llvm_ir = true;
    for (bool lanes : {true, false}) {
      keep.lanes = lanes;
      const codegen::CompiledKernel k = cpu::compile(*f, {}, keep);
      EXPECT_NE(k.llvm_ir.find("call void @kiln_rt_parfor_split("), std::string::npos);
      for (std::int64_t n : {0, 1, 9, 37}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        check_kernel(k, *f, {array_arg(random_array(DType::F64, {std::max<std::int64_t>(n, 1), 5})),
                             array_arg(random_array(DType::F64, {n, n}))},
                     {}, {1, 2, 3, 16});
      }
    }
  }
}

TEST(SplitParfors, RectangularBodiesAndReductionsKeepEqualLengths) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), out = array_param("out", t, 1);
  Var i = index("i"), j = index("j");
  Var s = local("s", t), total = local("total", t);
  // A row loop whose bounds do not follow i: alike iterations.
  Stmt row = block({let(s, num(t, 0)), for_loop(j, i64c(0), dim(a, 1), assign(s, val(s) + at(a, {val(i), val(j)}))),
                    store(out, {val(i)}, val(s))});
  EXPECT_EQ(ir::uneven_work(only_parfor(function("rows", {a, out}, {parfor1(i, dim(out), row)}))), "");
  // A triangle summed into a reduction: its blocks fix the order of the sum, so the lengths stay equal.
  Stmt tri = for_loop(j, i64c(0), val(i) + i64c(1), assign(total, val(total) + at(a, {val(i), val(j)})));
  const ir::Function f = function("tri_sum", {a, out},
                                  {let(total, num(t, 0)), parfor1(i, dim(a), tri, {ir::Reduction{total, ReduceOp::Add}}),
                                   store(out, {i64c(0)}, val(total))});
  EXPECT_FALSE(ir::splits_by_work(only_parfor(f)));
  EXPECT_EQ(ir::uneven_work(only_parfor(f)), "for j in 0 .. (i + 1)");
}

TEST(SplitParfors, TheDecisionAndItsReasonAreInTheDiagnostics) {
  passes::PipelineReport report;
  passes::run_pipeline(triangle("lower", [](const Var& i, const Var&) { return std::pair{i64c(0), val(i) + i64c(1)}; }),
                       &report);
  const auto note = std::find_if(report.notes.begin(), report.notes.end(), [](const passes::Note& n) { return n.pass == "plan_splits"; });
  ASSERT_NE(note, report.notes.end());
  EXPECT_EQ(note->text, "lower: pieces of equal work, not of equal length: the trip count of `for j in 0 .. (i + 1)` changes with i");
}

}  // namespace
}  // namespace kiln
