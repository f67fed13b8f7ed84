// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The offload pass (passes/offload.hpp) and the host executor with a Machine (ir/interpreter.hpp): what a device
// target receives and how its host function runs, tested on the CPU with a Machine over host memory that
// records what the executor asks of it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/interpreter.hpp"
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "kiln/error.hpp"
#include "passes/offload.hpp"
#include "passes/pipeline.hpp"
#include "tools/test_support/ir_shorthands.hpp"

namespace kiln {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary

ir::Function offloaded(const ir::Function& f, passes::PassContext* notes = nullptr) {
  passes::PassContext ctx;
  ir::Function out = passes::offload(f, notes ? *notes : ctx);
  ir::verify_or_throw(out, "offload_test");
  return out;
}

ArrayDesc desc(std::vector<double>& v) {
  ArrayDesc d{};
  d.data = v.data();
  d.shape[0] = static_cast<std::int64_t>(v.size());
  d.strides[0] = 1;
  return d;
}

/// x: f64[n], steps: i64. For each step: y = x * 2 (a parfor), then a reduction of y into s; the host
/// reads y[0] and adds it to s; after the loop a branch picks one of two parfors. Returns s.
struct TimeLoop {
  Var x = array_param("x", DType::F64), steps = param("steps", DType::I64);
  Var y = local_array("y", DType::F64, 1), s = local("s", DType::F64), first = local("first", DType::F64);
  Var t = index("t"), i = index("i"), j = index("j"), k = index("k"), m = index("m");
  ir::Function f;

  TimeLoop() {
    const Stmt step = block({
        parfor1(i, dim(x), store(y, {val(i)}, at(x, {val(i)}) * num(DType::F64, 2))),
        parfor1(j, dim(y), assign(s, val(s) + at(y, {val(j)})), {{s, ReduceOp::Add}}),
        let(first, at(y, {i64c(0)})),
        assign(s, val(s) + val(first)),
    });
    const Stmt branch = ir::make_if(bin(BinaryOp::Gt, val(s), num(DType::F64, 0)),
                                    parfor1(k, dim(x), store(x, {val(k)}, val(s))),
                                    parfor1(m, dim(x), store(x, {val(m)}, num(DType::F64, -1))));
    f = function("time_loop", {x, steps},
                 {ir::make_allocate(y, {dim(x)}), let(s, num(DType::F64, 0)), for_loop(t, i64c(0), val(steps), step), branch},
                 val(s));
  }
};

TEST(Offload, ParforsOutsideParforsBecomeNumberedLaunches) {
  TimeLoop tl;
  passes::PassContext ctx;
  const ir::Function g = offloaded(tl.f, &ctx);
  EXPECT_EQ(ir::to_string(g),
            "kernel time_loop(x: f64[:], steps: i64) -> f64 {\n"
            "  alloc y: f64[::1] (dim(x, 0))\n"
            "  let s: f64 = 0.0\n"
            "  for t in 0 .. steps {\n"
            "    launch kernel 0 {\n"
            "      parfor (i in 0 .. dim(x, 0)) {  # test\n"
            "        y[i] = (x[i] * 2.0)\n"
            "      }\n"
            "    }\n"
            "    launch kernel 1 {\n"
            "      parfor (j in 0 .. dim(y, 0)) reduce(add s) {  # test\n"
            "        s = (s + y[j])\n"
            "      }\n"
            "    }\n"
            "    let first: f64 = y[0]\n"
            "    s = (s + first)\n"
            "  }\n"
            "  if (s > 0.0) {\n"
            "    launch kernel 2 {\n"
            "      parfor (k in 0 .. dim(x, 0)) {  # test\n"
            "        x[k] = s\n"
            "      }\n"
            "    }\n"
            "  } else {\n"
            "    launch kernel 3 {\n"
            "      parfor (m in 0 .. dim(x, 0)) {  # test\n"
            "        x[m] = -1.0\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "  return s\n"
            "}\n");
  ASSERT_EQ(ctx.notes.size(), 4u);
  EXPECT_EQ(ctx.notes[0].text, "kernel 0: the parfor (i in 0 .. dim(x, 0)) from test runs on the device; the host launches it");
  // Offloading an offloaded function changes nothing.
  EXPECT_EQ(ir::to_string(offloaded(g)), ir::to_string(g));
}

TEST(Offload, AParforInsideAParforStaysInItsKernel) {
  Var x = array_param("x", DType::F64, 2), i = index("i"), j = index("j");
  const ir::Function f = function(
      "rows", {x}, {parfor1(i, dim(x, 0), parfor1(j, dim(x, 1), store(x, {val(i), val(j)}, num(DType::F64, 1))))});
  const std::string text = ir::to_string(offloaded(f));
  EXPECT_NE(text.find("launch kernel 0"), std::string::npos) << text;
  EXPECT_EQ(text.find("launch kernel 1"), std::string::npos) << text;
}

TEST(Offload, LaunchesWhoseTotalsOnlyTheResultReadsAreFound) {
  // An asynchronous CUDA call returns such totals as futures (codegen/cuda/deferred_scalars.hpp): the rule
  // must not take a total that a later statement or a loop's next trip reads, nor a result that loads.
  Var x = array_param("x", DType::F64), s = local("s", DType::F64), m = local("m", DType::F64);
  Var i = index("i"), j = index("j"), t = index("t");
  const auto sum_into = [&](Var v, Var k) { return parfor1(k, dim(x), assign(v, val(v) + at(x, {val(k)})), {{v, ReduceOp::Add}}); };
  const auto launches = [](const ir::Function& f) { return ir::result_only_launches(offloaded(f)).size(); };
  // The mean: total / n in the result, and a second total returned beside it.
  EXPECT_EQ(launches(function("mean", {x}, {let(s, num(DType::F64, 0)), sum_into(s, i), let(m, num(DType::F64, 0)), sum_into(m, j)},
                              val(s) / num(DType::F64, 2) + val(m))),
            2u);
  // A later statement reads the first total: only the second launch's may arrive late.
  EXPECT_EQ(launches(function("scaled", {x},
                              {let(s, num(DType::F64, 0)), sum_into(s, i), parfor1(t, dim(x), store(x, {val(t)}, at(x, {val(t)}) / val(s))),
                               let(m, num(DType::F64, 0)), sum_into(m, j)},
                              val(m))),
            1u);
  // In a loop the next trip reads the total.
  Var steps = param("steps", DType::I64);
  EXPECT_EQ(launches(function("looped", {x, steps}, {let(s, num(DType::F64, 0)), for_loop(t, i64c(0), val(steps), sum_into(s, i))}, val(s))),
            0u);
  // A result that reads an element needs the device at the end of the call.
  EXPECT_EQ(launches(function("loads", {x}, {let(s, num(DType::F64, 0)), sum_into(s, i)}, val(s) + at(x, {i64c(0)}))), 0u);
}

TEST(Offload, TheReportSaysWhenAParforRunsOneIterationPerThread) {
  // The CUDA emitter does not unroll a parfor whose body runs a sequential loop; the report says why.
  Var x = array_param("x", DType::F64), y = array_param("y", DType::F64), acc = local("acc", DType::F64);
  Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "sums", {x, y},
      {parfor1(i, dim(x), block({let(acc, num(DType::F64, 0)), for_loop(j, i64c(0), dim(x), assign(acc, val(acc) + at(x, {val(j)}))),
                                 store(y, {val(i)}, val(acc))}))});
  passes::PassContext ctx;
  offloaded(f, &ctx);
  ASSERT_EQ(ctx.notes.size(), 1u);
  EXPECT_NE(ctx.notes[0].text.find("one iteration per thread, not unrolled: the body runs a sequential loop"), std::string::npos)
      << ctx.notes[0].text;
}

TEST(Offload, TheVerifierKeepsLaunchesFlatAndInOrder) {
  Var x = array_param("x", DType::F64), i = index("i"), j = index("j");
  const Stmt p = parfor1(i, dim(x), store(x, {val(i)}, num(DType::F64, 1)));
  const Stmt q = parfor1(j, dim(x), store(x, {val(j)}, num(DType::F64, 2)));
  const auto problems = [&](std::vector<Stmt> body) { return ir::verify(function("k", {x}, std::move(body))); };
  EXPECT_TRUE(problems({ir::make_launch(0, p), ir::make_launch(1, q)}).empty());
  EXPECT_FALSE(problems({ir::make_launch(1, p)}).empty());                          // kernel 0 is next
  EXPECT_FALSE(problems({ir::make_launch(0, p), ir::make_launch(0, q)}).empty());  // numbered twice
  Var k = index("k");
  EXPECT_FALSE(problems({parfor1(k, dim(x), ir::make_launch(0, q))}).empty());      // nested in a parfor
  EXPECT_THROW(ir::make_launch(0, store(x, {i64c(0)}, num(DType::F64, 1))), ir::IRError);  // not a parfor
}

TEST(Offload, OnlyTheDevicePipelineOffloads) {
  TimeLoop tl;
  passes::PipelineOptions cuda;
  cuda.target = Target::cuda;
  EXPECT_NE(ir::to_string(passes::run_pipeline(tl.f, nullptr, cuda)).find("launch kernel"), std::string::npos);
  EXPECT_EQ(ir::to_string(passes::run_pipeline(tl.f)).find("launch"), std::string::npos);
}

TEST(Offload, AnOffloadedFunctionMeansWhatTheFunctionMeant) {
  TimeLoop tl;
  const ir::Function g = offloaded(tl.f);
  for (std::int64_t n : {0, 1, 7}) {
    for (std::int64_t steps : {0, 3}) {
      std::vector<double> a(static_cast<std::size_t>(n)), b;
      for (std::size_t e = 0; e < a.size(); ++e) a[e] = 0.5 + static_cast<double>(e);
      b = a;
      ArrayDesc da = desc(a), db = desc(b);
      double ra = 0, rb = 0;
      void* args_a[] = {&da, &steps};
      void* args_b[] = {&db, &steps};
      if (n == 0 && steps > 0) {  // y[0] of an empty array
        EXPECT_THROW(ir::interpret(tl.f, args_a, &ra), IndexError);
        EXPECT_THROW(ir::interpret(g, args_b, &rb), IndexError);
        continue;
      }
      ir::interpret(tl.f, args_a, &ra);
      ir::interpret(g, args_b, &rb);
      EXPECT_EQ(ra, rb) << n << " " << steps;
      EXPECT_EQ(a, b) << n << " " << steps;
    }
  }
}

/// A Machine over host memory that records what the executor asks of it. Its launches do not run the
/// kernel: they record the bounds and set each reduction variable to (its value + the iteration count).
class RecordingMachine final : public ir::Machine {
 public:
  mutable int reads = 0, writes = 0;
  mutable std::vector<std::string> log;
  mutable std::vector<std::vector<char>> memory;

  void read(ir::Frame&, const void* element, void* out, std::size_t bytes) const override {
    ++reads;
    std::memcpy(out, element, bytes);
  }
  void write(ir::Frame&, void* element, const void* in, std::size_t bytes) const override {
    ++writes;
    std::memcpy(element, in, bytes);
  }
  void* allocate(ir::Frame&, int site, std::size_t bytes, const ir::NewArray& what) const override {
    log.push_back("allocate site " + std::to_string(site) + " " + std::to_string(bytes) + " bytes: " + what.text());
    memory.emplace_back(bytes);
    return memory.back().data();
  }
  std::function<void(ir::Frame&)> launch(const ir::LaunchStmt& l, ir::HostScope& scope) const override {
    const ir::ParforStmt& p = l.parfor();
    auto lo = scope.value(p.begins[0]), hi = scope.value(p.ends[0]);
    std::vector<int> sums;
    for (const auto& r : p.reductions) sums.push_back(scope.scalar(r.var.get()));
    const int kernel = l.kernel;
    return [this, lo, hi, sums, kernel](ir::Frame& fr) {
      const std::int64_t n = hi(fr).i64 - lo(fr).i64;
      log.push_back("launch " + std::to_string(kernel) + " over " + std::to_string(n));
      for (int s : sums) fr.scalars[static_cast<std::size_t>(s)].f64 += static_cast<double>(n);
    };
  }
  [[noreturn]] void fail(ir::Frame& fr, std::int32_t code, const std::string& message) const override {
    EXPECT_EQ(fr.machine_state, this);
    throw std::runtime_error("failed with " + std::to_string(code) + ": " + message);
  }
};

TEST(HostExecutor, AMachineSeesEveryElementAccessAllocationAndLaunch) {
  TimeLoop tl;
  const ir::Function g = offloaded(tl.f);
  RecordingMachine machine;
  const ir::Executor exec(g, &machine);
  std::vector<double> x = {1, 2, 3};
  ArrayDesc dx = desc(x);
  std::int64_t steps = 2;
  void* args[] = {&dx, &steps};
  double s = -1;
  exec.run(args, &s, &machine);
  // The recorded launches did not write y: the host reads the machine's zeroed memory (0.0).
  EXPECT_EQ(s, 6.0);  // two steps of (s + 3 iterations) + y[0] = 0
  EXPECT_EQ(machine.reads, 2);   // y[0], once per step
  EXPECT_EQ(machine.writes, 0);  // the host stores nothing itself
  EXPECT_EQ(machine.log, (std::vector<std::string>{"allocate site 0 24 bytes: array y of shape (3,)", "launch 0 over 3",
                                                   "launch 1 over 3", "launch 0 over 3", "launch 1 over 3",
                                                   "launch 2 over 3"}));
  // A failure is the Machine's, without the kernel's name (the caller adds it).
  std::int64_t none = 1;
  std::vector<double> empty;
  ArrayDesc de = desc(empty);
  void* bad[] = {&de, &none};
  try {
    exec.run(bad, &s, &machine);
    FAIL() << "y[0] of an empty array was read";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "failed with 3: index 0 out of range on axis 0 of y (shape (0))");
  }
}

TEST(HostExecutor, StatementsLeftForThePassesAreRefusedWithAMachine) {
  RecordingMachine machine;
  Var x = array_param("x", DType::F64), i = index("i");
  const ir::Function bare = function("bare", {x}, {parfor1(i, dim(x), store(x, {val(i)}, num(DType::F64, 1)))});
  EXPECT_THROW(ir::Executor(bare, &machine), ir::IRError);  // a parfor outside every launch
  EXPECT_NO_THROW(ir::Executor{bare});                        // on host memory it runs where it is
  Var y = local_array("y", DType::F64, 1), j = index("j");
  const ir::Function map = function("map", {x}, {ir::make_map(y, {j}, {dim(x)}, at(x, {val(j)}))});
  EXPECT_THROW(ir::Executor(map, &machine), ir::IRError);
}

}  // namespace
}  // namespace kiln
