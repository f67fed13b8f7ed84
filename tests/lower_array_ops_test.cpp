// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lower_array_ops: every array-level statement becomes loops with exactly the interpreter's meaning. Each
// test runs the interpreter on the IR before and after the pass (bit for bit, errors included), on
// hand-built statements of every kind and on traced kernels, including random array programs.
#include <cmath>

#include "ir/builder.hpp"
#include "ir/visitor.hpp"
#include "passes/lower_array_ops.hpp"
#include "passes/pipeline.hpp"
#include "tests/array_test_util.hpp"
#include "tests/random_array_programs.hpp"

namespace kiln {
namespace {

using namespace kiln::testing;
using ir::Expr;
using ir::Stmt;
using ir::Var;

Var array_param(const std::string& name, DType t, int rank) {
  return ir::make_var(name, ir::Type::array(t, rank, true), ir::VarKind::Param);
}
Var local_array(const std::string& name, DType t, int rank) {
  return ir::make_var(name, ir::Type::array(t, rank, true), ir::VarKind::Local);
}
Var local(const std::string& name, DType t) { return ir::make_var(name, ir::Type::scalar(t), ir::VarKind::Local); }
Var index(const std::string& name) { return ir::make_var(name, ir::Type::scalar(DType::I64), ir::VarKind::Index); }
Expr val(const Var& v) { return ir::make_ref(v); }
Expr dim(const Var& a, int d) { return ir::make_dim(a, d); }
Expr load(const Var& a, std::vector<Expr> i) { return ir::make_load(a, std::move(i)); }

ir::Function function(std::string name, std::vector<Var> params, std::vector<Stmt> body, Expr result = nullptr,
                      Var result_array = nullptr) {
  ir::Function f;
  f.name = std::move(name);
  f.params = std::move(params);
  f.body = ir::make_block(std::move(body));
  f.result = std::move(result);
  f.result_array = std::move(result_array);
  return f;
}

/// True if any array-level statement is left.
bool has_array_statements(const ir::Function& f) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void visit(const ir::MapStmt&) override { found = true; }
    void visit(const ir::ReduceStmt&) override { found = true; }
    void visit(const ir::ReduceAxisStmt&) override { found = true; }
  } finder;
  finder.walk(f);
  return finder.found;
}

ir::Function lowered(const ir::Function& f, const std::vector<std::function<Outcome(const ir::Function&)>>& runs) {
  passes::PassContext ctx;
  ir::Function g = passes::lower_array_ops(f, ctx);
  const auto problems = ir::verify(g);
  EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems[0]) << "\n" << ir::to_string(g);
  EXPECT_FALSE(has_array_statements(g)) << ir::to_string(g);
  for (const auto& run : runs) EXPECT_TRUE(run(f) == run(g)) << "IR before:\n" << ir::to_string(f) << "after:\n" << ir::to_string(g);
  return g;
}

// =========================================================================================================
// Hand-built statements
// =========================================================================================================

TEST(LowerMap, AllocatingAndIntoAnExistingArray) {
  const Var a = array_param("a", DType::F64, 2), out = array_param("out", DType::F64, 1);
  const Var t = local_array("t", DType::F64, 2), i = index("i"), j = index("j"), k = index("k");
  // t = a * 2 over a's shape; out[n - 1 - k] = t[k, 0] + 1 (a reversed target index).
  const ir::Function f = function(
      "maps", {a, out},
      {ir::make_map(t, {i, j}, {dim(a, 0), dim(a, 1)}, ir::make_binary(BinaryOp::Mul, load(a, {val(i), val(j)}), ir::make_float(DType::F64, 2)), "t"),
       ir::make_map_into(out, {k}, {dim(a, 0)},
                         {ir::make_binary(BinaryOp::Sub, ir::make_binary(BinaryOp::Sub, dim(out, 0), ir::make_i64(1)), val(k))},
                         ir::make_binary(BinaryOp::Add, load(t, {val(k), ir::make_i64(0)}), ir::make_float(DType::F64, 1)), "into")},
      nullptr, t);
  for (std::int64_t m : {0, 1, 5}) {
    const NDArray<double> x = random_matrix(m, 3, 1);
    std::vector<double> o(static_cast<size_t>(m), 0.0);
    const ir::Function g = lowered(f, {[&](const ir::Function& h) { return interpret(h, x, o); }});
    EXPECT_CONTAINS(ir::to_string(g), "alloc t: f64[:, ::1] (dim(a, 0), dim(a, 1))");
    EXPECT_CONTAINS(ir::to_string(g), "# into");
  }
}

TEST(LowerReduce, EveryOperatorOnEveryTypeAndEmptySpaces) {
  for (DType t : {DType::F64, DType::F32, DType::I32, DType::I64}) {
    for (ReduceOp op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax}) {
      const Var a = array_param("a", t, 2), i = index("i"), j = index("j");
      const Var r = local("r", ir::reduce_result_type(op, t));
      const ir::Function f = function("reduce", {a}, {ir::make_reduce(r, op, {i, j}, {dim(a, 0), dim(a, 1)}, load(a, {val(i), val(j)}), "red")},
                                      val(r));
      for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{0, 3}, {1, 1}, {3, 7}, {31, 2}}) {
        for (bool specials : {false, true}) {
          const NDArray<double> x = random_matrix(m, n, static_cast<std::uint64_t>(m * 7 + n), specials);
          auto run = [&](const ir::Function& h) -> Outcome {
            switch (t) {
              case DType::F32: {
                NDArray<float> y({m, n});
                for (std::int64_t q = 0; q < m * n; ++q) y[q] = static_cast<float>(x[q]);
                return interpret(h, y);
              }
              case DType::I32: {
                NDArray<std::int32_t> y({m, n});
                for (std::int64_t q = 0; q < m * n; ++q) y[q] = static_cast<std::int32_t>((q * 7919) % 23) - 11;
                return interpret(h, y);
              }
              case DType::I64: {
                NDArray<std::int64_t> y({m, n});
                for (std::int64_t q = 0; q < m * n; ++q) y[q] = (q * 7919) % 23 - 11;
                return interpret(h, y);
              }
              default: return interpret(h, x);
            }
          };
          lowered(f, {run});
        }
      }
    }
  }
}

TEST(LowerReduce, ArgReductionsGiveTheFirstFlatIndexAndNaNWins) {
  const Var a = array_param("a", DType::F64, 2), i = index("i"), j = index("j"), r = local("r", DType::I64);
  const ir::Function f = function("argmax", {a}, {ir::make_reduce(r, ReduceOp::ArgMax, {i, j}, {dim(a, 0), dim(a, 1)}, load(a, {val(i), val(j)}))},
                                  val(r));
  passes::PassContext ctx;
  const ir::Function g = passes::lower_array_ops(f, ctx);
  NDArray<double> x({3, 4});
  x(1, 2) = 5, x(2, 0) = 5;  // the first of equal maxima
  std::int64_t got = 0;
  const Outcome o = interpret(g, x);
  std::memcpy(&got, o.result.data(), 8);
  EXPECT_EQ(got, 6);
  x(2, 3) = kNaN;
  std::memcpy(&got, interpret(g, x).result.data(), 8);
  EXPECT_EQ(got, 11);
  std::memcpy(&got, interpret(g, NDArray<double>({2, 0})).result.data(), 8);
  EXPECT_EQ(got, -1);  // an empty space finds nothing (the frontend checks before)
  EXPECT_CONTAINS(ir::to_string(g), "reduce(argmax r_value @r)");
}

/// `t = reduce(op, a, axis)` of an f64 array `a` of `rank`, returning t (with the axis kept as 1 when `keep`).
ir::Function axis_reduction(int rank, int axis, bool keep, ReduceOp op) {
  const Var a = array_param("a", DType::F64, rank);
  std::vector<Var> idx;
  std::vector<Expr> shape, at;
  for (int d = 0; d < rank; ++d) {
    idx.push_back(index(std::string(1, "ijk"[d])));
    shape.push_back(dim(a, d));
    at.push_back(val(idx.back()));
  }
  const Var t = local_array("t", ir::reduce_result_type(op, DType::F64), keep ? rank : rank - 1);
  return function("axis", {a}, {ir::make_reduce_axis(t, op, axis, keep, idx, shape, load(a, at), "ax")}, nullptr, t);
}

TEST(LowerReduceAxis, EveryAxisKeepdimsAndBothSchedules) {
  for (int rank : {2, 3}) {
    for (int axis = 0; axis < rank; ++axis) {
      for (bool keep : {false, true}) {
        for (ReduceOp op : {ReduceOp::Add, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::Mul}) {
          const ir::Function f = axis_reduction(rank, axis, keep, op);
          // Wide last axes (33 blocks of 1024) take the blocked schedule, narrow ones the whole-space one.
          for (std::int64_t n : {0, 1, 3, 300, -1}) {
            NDArray<double> x(n < 0 ? (rank == 2 ? std::vector<std::int64_t>{3, 33000} : std::vector<std::int64_t>{1, 2, 33000})
                                    : rank == 2 ? std::vector<std::int64_t>{n, 5} : std::vector<std::int64_t>{2, n, 3});
            const auto v = random_values(static_cast<size_t>(x.size()), 5 + static_cast<std::uint64_t>(n), -2, 2, true);
            std::copy(v.begin(), v.end(), x.data());
            const ir::Function g = lowered(f, {[&](const ir::Function& h) { return interpret(h, x); }});
            const bool blocked = axis < rank - 1 && !ir::is_arg_reduction(op);
            EXPECT_EQ(ir::to_string(g).find("_block in 0") != std::string::npos, blocked) << ir::to_string(g);
            EXPECT_EQ(ir::to_string(g).find(" reduce(" + std::string(ir::name_of(op)) + " t[*])") != std::string::npos, blocked)
                << ir::to_string(g);
          }
        }
      }
    }
  }
}

// A device target (PassContext::device): a reduction along a leading axis runs a thread per output element, or,
// with fewer outputs than keep a GPU busy, chunks of the axis whose partials are folded in chunk order. The
// values are whole numbers (and NaN, infinities, signed zeros), whose sums are exact in any order: the
// chunked form's results equal the interpreter's bit for bit. "Busy" is PassContext::device_threads: the default,
// and 8 (so that the chunk count comes from it rather than from the axis's length).
TEST(LowerReduceAxis, DeviceScheduleThreadPerOutputOrChunksOfTheAxis) {
  for (const std::int64_t threads : {passes::kDefaultDeviceThreads, std::int64_t{8}}) {
    for (int rank : {2, 3}) {
      for (int axis = 0; axis < rank - 1; ++axis) {
        for (bool keep : {false, true}) {
          for (ReduceOp op : {ReduceOp::Add, ReduceOp::Max}) {
            const ir::Function f = axis_reduction(rank, axis, keep, op);
            passes::PassContext ctx;
            ctx.device = true;
            ctx.device_threads = threads;
            const ir::Function g = passes::lower_array_ops(f, ctx);
            const auto problems = ir::verify(g);
            ASSERT_TRUE(problems.empty()) << problems[0] << "\n" << ir::to_string(g);
            EXPECT_FALSE(has_array_statements(g));
            const std::string text = ir::to_string(g);
            EXPECT_EQ(text.find("_block in 0"), std::string::npos) << text;  // no CPU blocks of the last axis
            EXPECT_NE(text.find("_chunk in 0"), std::string::npos) << text;
            EXPECT_CONTAINS(ctx.notes.at(0).text, "on a device -> a thread per output element");
            EXPECT_CONTAINS(ctx.notes.at(0).text, "fewer than " + std::to_string(threads) + " outputs");
            // The axis's length: 0, 1, a few (one chunk: a thread per output), and 1000 with few outputs (chunks of
            // at least 64 elements, their partials folded in order).
            for (std::int64_t n : {0, 1, 5, 1000}) {
              std::vector<std::int64_t> dims(static_cast<std::size_t>(rank), 3);
              dims[static_cast<std::size_t>(axis)] = n;
              NDArray<double> x(dims);
              auto v = random_values(static_cast<size_t>(x.size()), 7 + static_cast<std::uint64_t>(n), -40, 40, true);
              for (double& e : v) e = std::isfinite(e) ? std::round(e) : e;
              std::copy(v.begin(), v.end(), x.data());
              EXPECT_TRUE(interpret(f, x) == interpret(g, x))
                  << "rank " << rank << " axis " << axis << " n " << n << "\n"
                  << text;
            }
          }
        }
      }
    }
  }
}

TEST(LowerArrayOps, NotesAndOrigins) {
  auto fn = [](Array<double, 2> x) { return kiln::sum(x, 0) + kiln::max(x); };
  const ir::Function f = trace_ir("notes", {"x"}, fn, random_matrix(2, 2, 1));
  passes::PassContext ctx;
  const ir::Function g = passes::lower_array_ops(f, ctx);
  std::string notes;
  for (const auto& n : ctx.notes) notes += n.text + "\n";
  EXPECT_CONTAINS(notes, "lower_array_ops: `sum(x, 0) at lower_array_ops_test.cpp:");
  EXPECT_CONTAINS(notes, "reduce along axis 0 -> parfor over blocks of 1024");
  EXPECT_CONTAINS(notes, "reduce -> parfor with a max reduction");
  EXPECT_CONTAINS(notes, "map -> allocation + parfor");
  EXPECT_CONTAINS(ir::to_string(g), "{  # max(x) at lower_array_ops_test.cpp:");
}

// =========================================================================================================
// Traced kernels
// =========================================================================================================

TEST(LowerArrayOps, TracedKernelsKeepTheirMeaning) {
  using namespace sample_kernels;  // NOLINT(google-build-using-namespace): softmax, normalize, shifted, products
  const auto& stencil = shifted;
  for (std::int64_t n : {1, 2, 7, 100}) {
    const auto v = random_values(static_cast<size_t>(n), 3, -3, 3, true);
    const NDArray<double> m = random_matrix(n, n, 4, n > 2);
    for (const ir::Function& f : {trace_ir("softmax", {"a"}, softmax, v), trace_ir("stencil", {"a"}, stencil, v)})
      differential(passes::lower_array_ops, f, v);
    differential(passes::lower_array_ops, trace_ir("normalize", {"x"}, normalize, m), m);
    differential(passes::lower_array_ops, trace_ir("products", {"m", "v"}, products, m, v), m, v);
  }
}

TEST(LowerArrayOps, RandomProgramsKeepTheirMeaning) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    const bool column = seed % 3 == 0;
    const RandomProgram program{seed, column};
    for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{4, 5}, {1, 6}, {7, 1}}) {
      const NDArray<double> a = random_matrix(m, n, seed), c = random_matrix(m, column ? 1 : n, seed + 1);
      const auto b = random_values(static_cast<size_t>(n), seed + 2, -2, 2);
      const ir::Function f = trace_ir("random", {"a", "b", "c", "s"}, program, a, b, c, 0.75);
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(m) + "x" + std::to_string(n));
      differential(passes::lower_array_ops, f, a, b, c, 0.75);
    }
  }
}

}  // namespace
}  // namespace kiln
