// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// partition_loops at clamps of the innermost index (passes/index_clamps.hpp): `a[min(max(i + c, lo), hi)]`
// runs as `a[i + c]` where no clamp is active and as written in the rims. Every kernel is compared three
// ways (the interpreter on the traced IR, the interpreter after the pipeline, the CPU JIT with 1 and 3
// threads; tests/stencil_ir_util.hpp) over extents 0, 1, 2, primes and larger, in 1-d, 2-d and 3-d; the
// clamps come in every order and form, one- and two-sided, with constant and run-time offsets and bounds
// (their limits included, where the bounds of the cut saturate). Clamps that are not of the index plus an
// invariant offset stay, with no cut. Also the shape of the loops, the notes, the vector loads of the
// middle loop, the CUDA form (no cut) and a traced prange like the suite's stencil27-clamp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <regex>
#include <sstream>

#include "ir/analysis.hpp"
#include "ir/printer.hpp"
#include "kiln/kiln.hpp"
#include "tests/stencil_ir_util.hpp"

namespace kiln::stencil_test {
namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

Expr min_(Expr a, Expr b) { return bin(BinaryOp::Min, std::move(a), std::move(b)); }
Expr max_(Expr a, Expr b) { return bin(BinaryOp::Max, std::move(a), std::move(b)); }
Expr clamp(Expr x, Expr lo, Expr hi) { return min_(max_(std::move(x), std::move(lo)), std::move(hi)); }
/// The last valid subscript of axis `d` of `a`.
Expr last(const Var& a, int d = 0) { return dim(a, d) - i64c(1); }

ir::Type f64_array(int rank) { return ir::Type::array(DType::F64, rank, true); }
Var array_in(const std::string& name, int rank) { return ir::make_var(name, f64_array(rank), ir::VarKind::Param); }

/// A loop of the pipeline's output: a parfor over one index, or a sequential loop (the rims of a cut
/// nested in an outer parfor).
struct Loop {
  Var index;
  Expr begin, end;
  Stmt body;
  bool parallel;
};

/// The innermost loops of `s` (those holding no loop), in program order.
std::vector<Loop> innermost_loops(const Stmt& s) {
  struct Finder : ir::IRVisitor {
    std::vector<Loop> found;
    static bool has_loop(const Stmt& body) {
      struct Any : ir::IRVisitor {
        bool found = false;
        void visit(const ir::ParforStmt&) override { found = true; }
        void visit(const ir::ForStmt&) override { found = true; }
      } any;
      any.walk(body);
      return any.found;
    }
    void visit(const ir::ParforStmt& p) override {
      if (!has_loop(p.body)) found.push_back({p.indices.back(), p.begins.back(), p.ends.back(), p.body, true});
      ir::IRVisitor::visit(p);
    }
    void visit(const ir::ForStmt& f) override {
      if (!has_loop(f.body)) found.push_back({f.index, f.begin, f.end, f.body, false});
      ir::IRVisitor::visit(f);
    }
  } f;
  f.walk(s);
  return f.found;
}

/// The min and max in `s` whose operands use `v`.
int clamps_of(const Stmt& s, const Var& v);

/// The loops of an n-d kernel (n > 1) cut in two: a parfor without clamps of its index, and one sequential loop
/// over the rims on both sides, whose body first binds the index from the loop's counter and keeps the clamps.
void expect_rims_and_middle(const std::vector<Loop>& loops, const ir::Function& lowered) {
  ASSERT_EQ(loops.size(), 2u) << ir::to_string(lowered);
  EXPECT_TRUE(loops[0].parallel);
  EXPECT_FALSE(loops[1].parallel);
  EXPECT_EQ(clamps_of(loops[0].body, loops[0].index), 0) << ir::to_string(lowered);
  ASSERT_EQ(loops[1].body->kind, ir::StmtKind::Block);
  const auto& rims = loops[1].body->as<ir::BlockStmt>();
  ASSERT_FALSE(rims.stmts.empty());
  ASSERT_EQ(rims.stmts[0]->kind, ir::StmtKind::Let) << ir::to_string(lowered);
  const auto& index = rims.stmts[0]->as<ir::LetStmt>();
  EXPECT_TRUE(ir::uses(index.init, loops[1].index.get()));
  EXPECT_GT(clamps_of(loops[1].body, index.var), 0) << ir::to_string(lowered);
}

/// The min and max in `s` whose operands use `v`.
int clamps_of(const Stmt& s, const Var& v) {
  struct Counter : ir::IRVisitor {
    const ir::VarNode* v = nullptr;
    int n = 0;
    void visit(const ir::BinaryExpr& e) override {
      if ((e.op == BinaryOp::Min || e.op == BinaryOp::Max) && (ir::uses(e.a, v) || ir::uses(e.b, v))) ++n;
      ir::IRVisitor::visit(e);
    }
  } c;
  c.v = v.get();
  c.walk(s);
  return c.n;
}

/// The text of partition_loops' notes for `f` on the CPU ("" when it cut nothing).
std::string partition_notes(const ir::Function& f) {
  passes::PipelineReport report;
  passes::run_pipeline(f, &report);
  std::string text;
  for (const auto& n : report.notes)
    if (n.pass == "partition_loops") text += n.text + "\n";
  return text;
}

ir::Function cuda_form(const ir::Function& f) {
  passes::PipelineOptions device;
  device.target = Target::cuda;
  return passes::run_pipeline(f, nullptr, device);
}

/// The range [begin, end) of the second loop of a 1-d kernel cut in three, evaluated by the interpreter on
/// `args`: a function of the kernel's parameters and the lets before its loops that returns each bound.
std::pair<std::int64_t, std::int64_t> middle_range(const ir::Function& lowered, const Args& args) {
  std::vector<Stmt> lets;
  for (const Stmt& s : lowered.body->as<ir::BlockStmt>().stmts)
    if (ir::dyn<ir::LetStmt>(s)) lets.push_back(s);
  const auto loops = innermost_loops(lowered.body);
  EXPECT_EQ(loops.size(), 3u) << ir::to_string(lowered);
  auto eval = [&](const Expr& e) {
    const auto outcome = run_interpreter(function("bound", lowered.params, lets, e), args);
    std::int64_t v = 0;
    std::memcpy(&v, &outcome->result, sizeof v);
    return v;
  };
  return {eval(loops.at(1).begin), eval(loops.at(1).end)};
}

void run_sizes(const ir::Function& f, const std::vector<std::vector<std::int64_t>>& shapes, const std::vector<Args>& extra = {{}}) {
  const ir::Function lowered = passes::run_pipeline(f);
  const auto kernel = compile(lowered);
  for (const auto& shape : shapes)
    for (const auto& more : extra) {
      std::string text;
      for (auto n : shape) text += std::to_string(n) + " ";
      SCOPED_TRACE("shape " + text);
      Args args{array_arg(random_array(DType::F64, shape))};
      args.insert(args.end(), more.begin(), more.end());
      expect_three_way(f, lowered, kernel, args);
    }
}

const std::vector<std::vector<std::int64_t>> kShapes1 = {{0}, {1}, {2}, {3}, {4}, {5}, {7}, {13}, {31}, {1009}};

/// A 5-point smoother whose reads are clamped to the array, each clamp written another way: min of max,
/// max of min, the operands commuted, the index alone, `i - 2` and `i + -1`. Each coefficient distinct.
ir::Function smoother_1d() {
  const Var a = array_in("a", 1), out = local_array("out", DType::F64, 1), i = index("i");
  const Expr zero = i64c(0);
  const std::vector<Expr> reads = {
      at(a, {clamp(val(i) - i64c(2), zero, last(a))}),
      at(a, {max_(min_(val(i) + i64c(-1), last(a)), zero)}),
      at(a, {clamp(val(i), zero, last(a))}),
      at(a, {min_(last(a), max_(zero, i64c(1) + val(i)))}),
      at(a, {max_(zero, min_(val(i) + i64c(2), last(a)))}),
  };
  Expr value;
  for (size_t k = 0; k < reads.size(); ++k) {
    const Expr term = num(DType::F64, 0.125 * static_cast<double>(k + 1)) * reads[k];
    value = value ? value + term : term;
  }
  return function("smooth", {a}, {ir::make_allocate(out, {dim(a)}), parfor({i}, {dim(a)}, block({store(out, {val(i)}, value)}))}, nullptr, out);
}

TEST(PartitionClamps, OneDimensionalTwoSided) {
  const ir::Function f = smoother_1d();
  run_sizes(f, kShapes1);
  // three loops: the rims keep the clamps, the middle one reads i - 2 .. i + 2
  const ir::Function lowered = passes::run_pipeline(f);
  const auto loops = innermost_loops(lowered.body);
  ASSERT_EQ(loops.size(), 3u) << ir::to_string(lowered);
  EXPECT_GT(clamps_of(loops[0].body, loops[0].index), 0) << ir::to_string(lowered);
  EXPECT_EQ(clamps_of(loops[1].body, loops[1].index), 0) << ir::to_string(lowered);
  EXPECT_GT(clamps_of(loops[2].body, loops[2].index), 0) << ir::to_string(lowered);
  EXPECT_TRUE(loops[0].parallel && loops[1].parallel && loops[2].parallel);  // 1-d: the rims run in parallel too
  // the middle loop is all of the range where no clamp is active: [2, n - 2)
  for (std::int64_t n : {0, 1, 3, 4, 5, 10, 1009}) {
    const std::int64_t begin = std::min<std::int64_t>(2, n);
    EXPECT_EQ(middle_range(lowered, {array_arg(random_array(DType::F64, {n}))}), std::make_pair(begin, std::max(n - 2, begin))) << n;
  }
  // the notes name the cut; the CUDA target keeps the one loop and its clamps
  EXPECT_NE(partition_notes(f).find("3 loops over i (cut at a clamp of i)"), std::string::npos) << partition_notes(f);
  const ir::Function device = cuda_form(f);
  EXPECT_EQ(count_parfors(device.body), 1) << ir::to_string(device);
  EXPECT_GT(clamps_of(device.body, innermost_loops(device.body).at(0).index), 0) << ir::to_string(device);
}

TEST(PartitionClamps, MiddleLoopLoadsVectors) {
  // The reason for the cut: the middle loop's reads are affine, so they load vectors where the clamped
  // ones would gather. The three loops are the kernel's parfor0..2.
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const auto k = cpu::compile(passes::run_pipeline(smoother_1d()), {}, keep_ir);
  const std::string middle = llvm_function(k.llvm_ir, "smooth.parfor1");
  ASSERT_FALSE(middle.empty()) << k.llvm_ir;
  EXPECT_TRUE(std::regex_search(middle, std::regex("load <[0-9]+ x double>"))) << middle;
  EXPECT_EQ(middle.find("gather"), std::string::npos) << middle;
}

TEST(PartitionClamps, OneSided) {
  // An upper clamp alone cuts off the high rim only (2 loops); a lower and an upper one, of different
  // reads, need both rims.
  const Var a = array_in("a", 1), out = local_array("out", DType::F64, 1), i = index("i");
  const ir::Function forward = function(
      "forward", {a}, {ir::make_allocate(out, {dim(a)}), parfor({i}, {dim(a)}, block({store(out, {val(i)}, at(a, {min_(val(i) + i64c(1), last(a))}) - at(a, {val(i)}))}))},
      nullptr, out);
  const ir::Function both = function(
      "both", {a},
      {ir::make_allocate(out, {dim(a)}),
       parfor({i}, {dim(a)}, block({store(out, {val(i)}, at(a, {min_(val(i) + i64c(2), last(a))}) + num(DType::F64, 0.5) * at(a, {max_(val(i) - i64c(3), i64c(0))}))}))},
      nullptr, out);
  run_sizes(forward, kShapes1);
  run_sizes(both, kShapes1);
  EXPECT_EQ(count_parfors(passes::run_pipeline(forward).body), 2);
  EXPECT_EQ(count_parfors(passes::run_pipeline(both).body), 3);
}

TEST(PartitionClamps, RunTimeOffsetsAndBoundsAtTheLimits) {
  // The clamped values themselves (no loads, so any offset and bounds are valid): i + s, s + i and i - s
  // under two-sided and one-sided clamps with run-time bounds, s, lo and hi taken from the middle of the
  // range and from its limits, where i + s wraps and the cut's bounds saturate; lo > hi too. One kernel
  // per form, so that no clamp's bounds hide another's; and one with all of them.
  const Var a = array_in("a", 1), out = local_array("out", DType::I64, 1), i = index("i");
  const Var s = param("s", DType::I64), lo = param("lo", DType::I64), hi = param("hi", DType::I64);
  const std::vector<Expr> forms = {clamp(val(i) + val(s), val(lo), val(hi)), max_(val(i) - val(s), val(lo)), min_(val(s) + val(i), val(hi)),
                                   max_(min_(val(i) - val(s), val(hi)), val(lo)), min_(val(i) + val(s), val(hi)), max_(val(lo), val(s) + val(i)),
                                   max_(min_(val(i) - i64c(4), val(hi)), val(lo)), min_(val(i) + i64c(kMax), val(hi)),
                                   max_(val(i) - i64c(kMin), val(lo)), clamp(val(i) + i64c(kMin), val(lo), val(hi))};
  Expr all;
  for (size_t k = 0; k < forms.size(); ++k) all = all ? all + i64c(static_cast<std::int64_t>(2 * k + 1)) * forms[k] : forms[k];
  std::vector<Args> params;
  const std::int64_t offsets[] = {0, -1, 3, -40, 1000, kMax, kMin, kMax - 1, kMin + 1, kMin + 2};
  const std::pair<std::int64_t, std::int64_t> bounds[] = {{0, 30}, {-5, 5}, {10, 3}, {kMin, kMax}, {kMin, 12}, {4, kMax}, {kMax - 2, kMax}, {kMin, kMin + 3}, {10, -3}, {kMax, kMin}};
  for (std::int64_t off : offsets)
    for (auto [l, h] : bounds) params.push_back({scalar_arg<std::int64_t>(off), scalar_arg<std::int64_t>(l), scalar_arg<std::int64_t>(h)});
  std::vector<Expr> kernels = forms;
  kernels.push_back(all);
  for (size_t k = 0; k < kernels.size(); ++k) {
    SCOPED_TRACE("form " + std::to_string(k) + ": " + ir::to_string(kernels[k]));
    const ir::Function f = function("offsets", {a, s, lo, hi},
                                    {ir::make_allocate(out, {dim(a)}), parfor({i}, {dim(a)}, block({store(out, {val(i)}, kernels[k])}))}, nullptr, out);
    EXPECT_GE(count_parfors(passes::run_pipeline(f).body), 2);
    run_sizes(f, {{0}, {1}, {2}, {7}, {37}}, params);
  }
}

TEST(PartitionClamps, IndexRangesNearTheLimits) {
  // A loop over [b, b + n) with b down to MIN and up to MAX - 40: i - 1 and i + s wrap there, which a
  // one-sided clamp does not guard against; its other side bounds the cut. From 0, `min(i - 1, hi)` needs
  // no low rim (2 loops).
  const Var a = array_in("a", 1), out = local_array("out", DType::I64, 1), i = index("i");
  const Var b = param("b", DType::I64), s = param("s", DType::I64), lo = param("lo", DType::I64), hi = param("hi", DType::I64);
  const std::vector<Expr> forms = {min_(val(i) - i64c(1), val(hi)), min_(val(i) + val(s), val(hi)), max_(val(i) + i64c(1), val(lo)),
                                   max_(val(i) - val(s), val(lo)), min_(val(i) + i64c(kMin), val(hi)), max_(val(i) + i64c(kMax), val(lo))};
  std::vector<Args> params;
  for (std::int64_t start : {0L, -5L, kMin, kMin + 1, kMax - 40})
    for (std::int64_t off : {0L, 2L, -3L, kMax, kMin})
      for (auto [l, h] : {std::pair<std::int64_t, std::int64_t>{-4, 20}, {kMin, kMax}, {kMax - 7, kMin + 9}})
        params.push_back({scalar_arg<std::int64_t>(start), scalar_arg<std::int64_t>(off), scalar_arg<std::int64_t>(l), scalar_arg<std::int64_t>(h)});
  for (size_t k = 0; k < forms.size(); ++k) {
    SCOPED_TRACE("form " + std::to_string(k) + ": " + ir::to_string(forms[k]));
    const Stmt loop = ir::make_parfor({i}, {val(b)}, {val(b) + dim(a)}, block({store(out, {val(i) - val(b)}, forms[k])}), {}, "test");
    const ir::Function f = function("near_limits", {a, b, s, lo, hi}, {ir::make_allocate(out, {dim(a)}), loop}, nullptr, out);
    run_sizes(f, {{0}, {1}, {2}, {37}}, params);
  }
  const Stmt from0 = parfor({i}, {dim(a)}, block({store(out, {val(i)}, forms[0])}));
  const ir::Function f0 = function("from0", {a, hi}, {ir::make_allocate(out, {dim(a)}), from0}, nullptr, out);
  EXPECT_EQ(count_parfors(passes::run_pipeline(f0).body), 2) << ir::to_string(passes::run_pipeline(f0));
}

TEST(PartitionClamps, RunTimeOffsetInASubscript) {
  // a[clamp(i + s)] + a[clamp(i - s)]: the middle loop's reads are i + s and i - s for any s.
  const Var a = array_in("a", 1), out = local_array("out", DType::F64, 1), i = index("i"), s = param("s", DType::I64);
  const Expr value = at(a, {clamp(val(i) + val(s), i64c(0), last(a))}) * num(DType::F64, 2) + at(a, {clamp(val(i) - val(s), i64c(0), last(a))});
  const ir::Function f = function("shift", {a, s}, {ir::make_allocate(out, {dim(a)}), parfor({i}, {dim(a)}, block({store(out, {val(i)}, value)}))}, nullptr, out);
  std::vector<Args> params;
  for (std::int64_t off : {0L, 1L, -2L, 5L, 40L, -1000L, kMax, kMin}) params.push_back({scalar_arg<std::int64_t>(off)});
  run_sizes(f, kShapes1, params);
  const ir::Function lowered = passes::run_pipeline(f);
  const auto loops = innermost_loops(lowered.body);
  ASSERT_EQ(loops.size(), 3u) << ir::to_string(lowered);
  EXPECT_EQ(clamps_of(loops[1].body, loops[1].index), 0) << ir::to_string(lowered);
  // and it is all of the range where neither clamp is active, [|s|, n - |s|)
  for (std::int64_t n : {0, 1, 7, 100})
    for (std::int64_t off : {0, 1, -2, 5, 40, -1000}) {
      const std::int64_t begin = std::min(std::abs(off), n);
      EXPECT_EQ(middle_range(lowered, {array_arg(random_array(DType::F64, {n})), scalar_arg<std::int64_t>(off)}),
                std::make_pair(begin, std::max(n - std::abs(off), begin)))
          << n << " " << off;
    }
}

TEST(PartitionClamps, ClampsInsideIndexArithmetic) {
  // Clamps of i nested in the subscripts' arithmetic and in a local are still cut at: b[2 * clamp(i - 1) + 1]
  // (b twice as long) and a[(clamp(i - 1) + min(i + 1, n - 1)) / 2].
  const Var a = array_in("a", 1), b = array_in("b", 1), out = local_array("out", DType::F64, 1), i = index("i");
  const Var left = local("left", DType::I64);
  const Expr n1 = last(a);
  const Stmt body = block({let(left, clamp(val(i) - i64c(1), i64c(0), n1)),
                           store(out, {val(i)}, at(b, {i64c(2) * val(left) + i64c(1)}) + at(a, {(val(left) + min_(val(i) + i64c(1), n1)) / i64c(2)}))});
  const ir::Function f = function("nested", {a, b}, {ir::make_allocate(out, {dim(a)}), parfor({i}, {dim(a)}, body)}, nullptr, out);
  const ir::Function lowered = passes::run_pipeline(f);
  const auto kernel = compile(lowered);
  for (std::int64_t n : {0, 1, 2, 3, 11, 101}) {
    SCOPED_TRACE("n " + std::to_string(n));
    expect_three_way(f, lowered, kernel, {array_arg(random_array(DType::F64, {n})), array_arg(random_array(DType::F64, {2 * n}))});
  }
  const auto loops = innermost_loops(lowered.body);
  ASSERT_EQ(loops.size(), 3u) << ir::to_string(lowered);
  EXPECT_EQ(clamps_of(loops[1].body, loops[1].index), 0) << ir::to_string(lowered);
}

TEST(PartitionClamps, OtherClampsAreLeftAlone) {
  // Clamps of 2i - 1, i * i, i + i, of i plus a variable of the body (a sequential loop's index) and of a
  // load are no clamps of the index plus an invariant offset: no cut, the same results.
  const Var a = array_in("a", 1), out = local_array("out", DType::F64, 1), i = index("i"), t = index("t");
  const Var acc = local("acc", DType::F64);
  const Expr zero = i64c(0), n1 = last(a);
  const Expr direct = at(a, {clamp(i64c(2) * val(i) - i64c(1), zero, n1)}) + at(a, {clamp(val(i) * val(i), zero, n1)}) +
                      at(a, {clamp(val(i) + val(i), zero, n1)}) +
                      at(a, {clamp(cast(DType::I64, at(a, {val(i)}) * num(DType::F64, 0.0)) + val(i), zero, n1)});
  const Stmt body = block({let(acc, direct),
                           for_loop(t, i64c(0), i64c(3), block({assign(acc, val(acc) + at(a, {clamp(val(i) + (val(t) - i64c(1)), zero, n1)}))})),
                           store(out, {val(i)}, val(acc))});
  const ir::Function f = function("others", {a}, {ir::make_allocate(out, {dim(a)}), parfor({i}, {dim(a)}, body)}, nullptr, out);
  run_sizes(f, kShapes1);
  const ir::Function lowered = passes::run_pipeline(f);
  EXPECT_EQ(count_parfors(lowered.body), 1) << ir::to_string(lowered);
  EXPECT_EQ(partition_notes(f), "");
}

TEST(PartitionClamps, TwoDimensionalCutsTheInnermostIndexOnly) {
  // A 3x3 clamped stencil plus a read at a run-time column offset: the columns are cut (3 loops inside the
  // parfor over rows), the rows' clamps stay in every loop. A clamp of the row index alone cuts nothing.
  const Var a = array_in("a", 2), out = local_array("out", DType::F64, 2), r = index("r"), c = index("c"), s = param("s", DType::I64);
  Expr value;
  int k = 0;
  for (std::int64_t dr = -1; dr <= 1; ++dr)
    for (std::int64_t dc = -1; dc <= 1; ++dc) {
      const Expr term = num(DType::F64, 0.125 * ++k) * at(a, {clamp(shifted(r, dr), i64c(0), last(a, 0)), clamp(shifted(c, dc), i64c(0), last(a, 1))});
      value = value ? value + term : term;
    }
  value = value + at(a, {val(r), clamp(val(c) + val(s), i64c(0), last(a, 1))});
  const ir::Function f = function("blur", {a, s},
                                  {ir::make_allocate(out, {dim(a, 0), dim(a, 1)}), parfor({r, c}, {dim(a, 0), dim(a, 1)}, block({store(out, {val(r), val(c)}, value)}))},
                                  nullptr, out);
  std::vector<Args> params;
  for (std::int64_t off : {0L, -1L, 3L, 100L}) params.push_back({scalar_arg<std::int64_t>(off)});
  run_sizes(f, {{0, 5}, {5, 0}, {1, 1}, {2, 2}, {2, 3}, {3, 7}, {13, 5}, {37, 67}}, params);
  // Inside the parfor over rows: the rims as sequential loops (a column or two of a row, too short to be
  // worth vectorizing, and compiled faster so), the middle a parfor.
  const ir::Function lowered = passes::run_pipeline(f);
  EXPECT_EQ(count_parfors(lowered.body), 2) << ir::to_string(lowered);
  expect_rims_and_middle(innermost_loops(lowered.body), lowered);
  EXPECT_GT(clamps_of(innermost_loops(lowered.body).at(1).body, r), 0) << ir::to_string(lowered);

  const Var out2 = local_array("out2", DType::F64, 2);
  const ir::Function rows = function(
      "rows", {a},
      {ir::make_allocate(out2, {dim(a, 0), dim(a, 1)}),
       parfor({r, c}, {dim(a, 0), dim(a, 1)}, block({store(out2, {val(r), val(c)}, at(a, {clamp(val(r) - i64c(1), i64c(0), last(a, 0)), val(c)}))}))},
      nullptr, out2);
  run_sizes(rows, {{0, 3}, {1, 1}, {2, 5}, {7, 3}});
  EXPECT_EQ(count_parfors(passes::run_pipeline(rows).body), 1);
  EXPECT_EQ(partition_notes(rows), "");
}

TEST(PartitionClamps, ThreeDimensional27Points) {
  // The suite's stencil27-clamp in IR: a mean of 27 clamped reads. The innermost index is cut; the notes
  // say so.
  const Var a = array_in("a", 3), out = local_array("out", DType::F64, 3), i = index("i"), j = index("j"), k = index("k");
  Expr value;
  int n = 0;
  for (std::int64_t di = -1; di <= 1; ++di)
    for (std::int64_t dj = -1; dj <= 1; ++dj)
      for (std::int64_t dk = -1; dk <= 1; ++dk) {
        const Expr term = num(DType::F64, 0.0625 * (++n % 5 + 1)) *
                          at(a, {clamp(shifted(i, di), i64c(0), last(a, 0)), clamp(shifted(j, dj), i64c(0), last(a, 1)), clamp(shifted(k, dk), i64c(0), last(a, 2))});
        value = value ? value + term : term;
      }
  const ir::Function f = function("box27", {a},
                                  {ir::make_allocate(out, {dim(a, 0), dim(a, 1), dim(a, 2)}),
                                   parfor({i, j, k}, {dim(a, 0), dim(a, 1), dim(a, 2)}, block({store(out, {val(i), val(j), val(k)}, value)}))},
                                  nullptr, out);
  run_sizes(f, {{1, 1, 1}, {2, 2, 2}, {3, 4, 5}, {7, 5, 3}, {5, 1, 7}, {13, 11, 17}, {2, 0, 3}, {3, 3, 0}});
  const ir::Function lowered = passes::run_pipeline(f);
  EXPECT_EQ(count_parfors(lowered.body), 2) << ir::to_string(lowered);
  expect_rims_and_middle(innermost_loops(lowered.body), lowered);
  EXPECT_NE(partition_notes(f).find("2 loops over k (cut at a clamp of k; both rims of k in one loop)"), std::string::npos) << partition_notes(f);
}

TEST(PartitionClamps, AfterATestWithinTheLoopBudget) {
  // A test of the index and clamps in both arms: the loop is cut at the test first (3 loops), the middle
  // again at its clamps (3 of its own): 5 loops; the rims of the test keep the clamps. Bounds of the test
  // below, inside and beyond the range.
  const Var a = array_in("a", 1), out = local_array("out", DType::F64, 1), i = index("i");
  const Var lo = param("lo", DType::I64), hi = param("hi", DType::I64);
  const Expr n1 = last(a), zero = i64c(0);
  const Expr in_range = bin(BinaryOp::And, bin(BinaryOp::Le, val(lo), val(i)), bin(BinaryOp::Lt, val(i), val(hi)));
  const Stmt body = block({ir::make_if(in_range, block({store(out, {val(i)}, at(a, {clamp(val(i) - i64c(1), zero, n1)}) + at(a, {clamp(val(i) + i64c(1), zero, n1)}))}),
                                       block({store(out, {val(i)}, at(a, {clamp(val(i) + i64c(2), zero, n1)}) * num(DType::F64, 2))}))});
  const ir::Function f = function("tested", {a, lo, hi}, {ir::make_allocate(out, {dim(a)}), parfor({i}, {dim(a)}, body)}, nullptr, out);
  std::vector<Args> params;
  for (auto [x, y] : {std::pair<std::int64_t, std::int64_t>{-3, 2}, {1, 4}, {3, 3}, {5, 2}, {2, 100}, {0, 37}, {kMin, kMax}})
    params.push_back({scalar_arg<std::int64_t>(x), scalar_arg<std::int64_t>(y)});
  run_sizes(f, {{0}, {1}, {2}, {5}, {37}}, params);
  const ir::Function lowered = passes::run_pipeline(f);
  EXPECT_EQ(count_parfors(lowered.body), 5) << ir::to_string(lowered);
  const std::string notes = partition_notes(f);
  EXPECT_NE(notes.find("5 loops over i (cut at a test of i; cut at a clamp of i)"), std::string::npos) << notes;
}

TEST(PartitionClamps, TracedPrangeNamesTheCut) {
  // A user's program: a 27-point mean over a prange with clamped subscripts (bench/suite's stencil27-clamp),
  // against plain C++; the kernel's diagnostics name the cut.
  auto k = kiln::jit("clamped27", [](Array<double, 3> out, Array<double, 3> in) {
    const Int n = in.shape(0);
    kiln::prange(kiln::shape(n, n, n), [&](Int i, Int j, Int k) {
      Double s = 0.0;
      for (int di = -1; di <= 1; ++di)
        for (int dj = -1; dj <= 1; ++dj)
          for (int dk = -1; dk <= 1; ++dk)
            s += in(kiln::min(kiln::max(i + di, 0), n - 1), kiln::min(kiln::max(j + dj, 0), n - 1), kiln::min(kiln::max(k + dk, 0), n - 1));
      out(i, j, k) = s * (1.0 / 27.0);
    });
  });
  for (long n : {1L, 2L, 3L, 11L}) {
    SCOPED_TRACE("n " + std::to_string(n));
    kiln::NDArray<double> in({n, n, n}), out({n, n, n});
    for (long x = 0; x < n * n * n; ++x) in.data()[x] = std::sin(0.7 * static_cast<double>(x)) + 0.01 * static_cast<double>(x % 13);
    k(out, in);
    auto c = [n](long x) { return std::min(std::max(x, 0L), n - 1); };
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j)
        for (long z = 0; z < n; ++z) {
          double s = 0.0;
          for (int di = -1; di <= 1; ++di)
            for (int dj = -1; dj <= 1; ++dj)
              for (int dk = -1; dk <= 1; ++dk) s += in.data()[(c(i + di) * n + c(j + dj)) * n + c(z + dk)];
          ASSERT_EQ(out.data()[(i * n + j) * n + z], s * (1.0 / 27.0)) << i << " " << j << " " << z;
        }
  }
  EXPECT_NE(k.diagnostics().find("2 loops over k (cut at a clamp of k; both rims of k in one loop)"), std::string::npos) << k.diagnostics();
}

}  // namespace
}  // namespace kiln::stencil_test
