// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA backend without a GPU: every test kernel, example kernel and benchmark kernel is emitted as CUDA
// C and compiled by NVRTC to PTX and CUBIN for sm_90; golden sources pin the emitted code of a few;
// errors, launch geometry, and the no-driver behaviour of Target::cuda.
#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sys/stat.h>
#include <sstream>

#include "bench/gpu/kiln_kernels.hpp"
#include "codegen/cuda/cuda_backend.hpp"
#include "frontend/settings.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/geometry.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_kernels.hpp"
#include "cuda_rows.hpp"
#include "frontend/trace_context.hpp"
#include "ir/printer.hpp"
#include "ir/serialize.hpp"
#include "runtime/cache/entry.hpp"
#include "ir/verifier.hpp"
#include "kiln/kiln.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using namespace cudatest;

/// The pipeline's options for the CUDA target: host-only passes (partition_loops) do not run.
passes::PipelineOptions for_cuda(bool boundscheck = false) {
  passes::PipelineOptions o;
  o.boundscheck = boundscheck;
  o.target = Target::cuda;
  return o;
}

/// Traces a kernel lambda as kiln::jit would for arrays of `rank` with unit stride, then runs the passes
/// for the CUDA target.
template <class F>
ir::Function lower(const std::string& name, const F& fn, std::vector<std::string> names, int rank = 1,
                   const passes::PipelineOptions& popts = for_cuda()) {
  return passes::run_pipeline(rows::trace_kernel(name, fn, std::move(names), rank, popts.target == Target::cuda), nullptr, popts);
}

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

/// The emission options kiln's driver uses in this process (KILN_CUDA_UNROLL and KILN_CUDA_STENCIL* as the
/// environment sets them).
cu::EmitOptions emit_options() { return kiln::detail::cuda_options().emit; }

/// Emits `f` with emit_options().
cu::Program emit(const ir::Function& f) { return cu::emit_program(offloaded(f), emit_options()); }

/// Emits (with `emission`) and compiles for sm_90; checks that every entry is in the PTX and that the CUBIN
/// is an ELF image.
cu::Program compile_for_sm90(const ir::Function& f, codegen::CodegenOptions opts = {},
                             const cu::EmitOptions& emission = emit_options()) {
  cu::Program prog = cu::emit_program(offloaded(f), emission);
  const cu::Binary bin = cu::compile_source(prog.source(), f.name, "sm_90", opts);
  EXPECT_EQ(bin.arch, "sm_90");
  EXPECT_NE(bin.ptx.find(".target sm_90"), std::string::npos) << f.name;
  for (const std::string& entry : prog.entries())
    EXPECT_NE(bin.ptx.find(".entry " + entry), std::string::npos) << f.name << ": no entry " << entry << " in\n" << bin.ptx;
  EXPECT_EQ(bin.cubin.substr(0, 4), std::string("\x7f" "ELF")) << f.name;
  EXPECT_GT(bin.compile_ms, 0);
  return prog;
}

TEST(CudaCodegen, EveryTestKernelCompiles) {
  require_nvrtc();
  for (const KernelCase& c : kernel_catalogue()) {
    SCOPED_TRACE(c.name);
    ir::verify_or_throw(c.f, "test kernel " + c.name);
    const cu::Program prog = compile_for_sm90(c.f);
    for (std::size_t k = 0; k < prog.gpu_kernels.size(); ++k) EXPECT_NE(prog.gpu_kernels[k].parfor, nullptr) << k;
  }
}

TEST(CudaCodegen, FastMathAndOptLevelsCompile) {
  require_nvrtc();
  const ir::Function f = lower("black_scholes", benchgpu::black_scholes, {"s", "k", "t", "call", "put", "r", "v"});
  codegen::CodegenOptions fast;
  fast.fast_math = true;
  compile_for_sm90(f, fast);
  codegen::CodegenOptions o1;
  o1.opt_level = 1;
  compile_for_sm90(f, o1);
}

TEST(CudaCodegen, BoundsCheckedKernelsCompile) {
  // Bounds-checked mode: checks before a parfor run on the host, checks inside one (data-dependent indices)
  // in the GPU kernel, which then reports failures through its status.
  require_nvrtc();
  const passes::PipelineOptions checked = for_cuda(true);
  const ir::Function hist = lower("histogram", [](Array<std::int64_t> bins, Array<std::int64_t> hist) {
    prange(bins.shape(0), [&](Int i) { hist[bins[i]] += 1; });
  }, {"bins", "hist"}, 1, checked);
  const cu::Program p = compile_for_sm90(hist);
  EXPECT_NE(p.kernels.find("kiln_fail(kiln_status, 3, \"index {} out of range for axis 0 of array 'hist' with extent {}\""),
            std::string::npos) << p.kernels;
  const ir::Function shifted = lower("shifted", [](Array<double, 2> a, Array<double, 2> out) {
    prange(shape(a.shape(0), a.shape(1)), [&](Int i, Int j) { out(i, j) = a(i, j + 1) + a(i + 1, j); });
  }, {"a", "out"}, 2, checked);
  const std::string text = ir::to_string(shifted);
  EXPECT_NE(text.find("array 'a' with extent"), std::string::npos) << text;
  compile_for_sm90(shifted);
}

TEST(CudaCodegen, ExampleAndBenchmarkKernelsCompile) {
  require_nvrtc();
  // The kernels of examples/pi.cpp, saxpy.cpp and dot.cpp, as written there.
  auto pi = [](kiln::Int n) {
    kiln::Double sum = 0.0, step = 1.0 / kiln::to_double(n);
    kiln::prange(n, [&](kiln::Int i) {
      auto x = (kiln::to_double(i) + 0.5) * step;
      sum += 4.0 / (1.0 + x * x);
    });
    return sum * step;
  };
  auto saxpy = [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  };
  auto dot = [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
    return s;
  };
  compile_for_sm90(lower("pi", pi, {"n"}));
  compile_for_sm90(lower("saxpy", saxpy, {"a", "x", "y"}));
  compile_for_sm90(lower("dot", dot, {"x", "y"}));
  compile_for_sm90(lower("fused_abc", benchgpu::fused_abc, {"a", "b", "c", "out"}));
  compile_for_sm90(lower("dot32", benchgpu::dot, {"x", "y"}));
  compile_for_sm90(lower("pi", benchgpu::pi, {"n"}));
  const cu::Program softmax = compile_for_sm90(lower("softmax", benchgpu::softmax, {"x", "out"}));
  EXPECT_EQ(softmax.gpu_kernels.size(), 3u);  // max, sum, write: one kernel each
  compile_for_sm90(lower("smooth1d", benchgpu::smooth1d, {"x", "out"}));
  compile_for_sm90(lower("jacobi2d", benchgpu::jacobi2d, {"a", "out"}));
  // A time loop with swapped bindings: its step is a stencil form whatever the launch model decides.
  EXPECT_GT(compile_for_sm90(lower("wave2d", benchgpu::wave2d, {"prev", "cur", "next", "steps"})).gpu_kernels.at(0).stencil_columns, 0);
  compile_for_sm90(lower("black_scholes", benchgpu::black_scholes, {"s", "k", "t", "call", "put", "r", "v"}));
  EXPECT_EQ(compile_for_sm90(lower("row_stats", benchgpu::row_stats, {"x", "mean", "var", "sd"})).gpu_kernels.at(0).strategy,
            cu::Strategy::Cooperative);
}

// ---- golden sources ---------------------------------------------------------------------------------------

/// Line numbers in source locations vary with unrelated edits: the golden files have <line> instead.
void expect_golden(const std::string& file, const std::string& emitted) {
  const std::string text = std::regex_replace(emitted, std::regex(R"((\.[ch]pp):[0-9]+)"), "$1:<line>");
  const std::string path = std::string(KILN_GOLDEN_DIR) + "/cuda/" + file;
  if (const char* u = std::getenv("KILN_UPDATE_GOLDEN"); u && *u == '1') {
    std::ofstream(path) << text;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << " (KILN_UPDATE_GOLDEN=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "emitted CUDA differs from " << path << " (KILN_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(CudaCodegen, GoldenSaxpy) {
  auto saxpy = [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  };
  expect_golden("saxpy.cu", emit(lower("saxpy", saxpy, {"a", "x", "y"})).kernels);
}

TEST(CudaCodegen, GoldenDot) {
  auto dot = [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
    return s;
  };
  expect_golden("dot.cu", emit(lower("dot", dot, {"x", "y"})).kernels);
}

TEST(CudaCodegen, GoldenJacobi2d) {
  expect_golden("jacobi2d.cu", emit(lower("jacobi2d", benchgpu::jacobi2d, {"a", "out"})).kernels);
}

TEST(CudaCodegen, GoldenArgmin) {
  for (const KernelCase& c : kernel_catalogue())
    if (c.name == "argmin_f64_nan_empty_1d") expect_golden("argmin.cu", emit(c.f).kernels);
}

// ---- emitted code properties ------------------------------------------------------------------------------

TEST(CudaCodegen, UnitStrideArraysIndexWithoutStrides) {
  auto saxpy = [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  };
  const cu::Program p = emit(lower("saxpy", saxpy, {"a", "x", "y"}));
  // y is updated in place: each round keeps the offsets and values of its iterations (kiln_do0, kiln_dv0), then
  // stores them.
  EXPECT_NE(p.kernels.find("kiln_do0[kiln_u] = i;"), std::string::npos) << p.kernels;
  EXPECT_NE(p.kernels.find("kiln_dv0[kiln_u] = ((a * x[i]) + y[i]);"), std::string::npos) << p.kernels;
  EXPECT_NE(p.kernels.find("const float* x"), std::string::npos) << p.kernels;  // read-only arrays are const
  EXPECT_EQ(p.gpu_kernels[0].strategy, cu::Strategy::Elementwise);
}

TEST(CudaCodegen, InPlaceStoresUnderAnIfWaitForTheRoundsLoads) {
  // A clip in place: both arms store y, each under its own flag, after every iteration of the round has loaded.
  if (emit_options().unroll < 2) GTEST_SKIP() << "KILN_CUDA_UNROLL=1: nothing is unrolled";
  for (const KernelCase& c : kernel_catalogue()) {
    if (c.name != "clip_in_place_f64") continue;
    const cu::Program p = emit(c.f);
    EXPECT_NE(p.kernels.find("kiln_df0[kiln_u] = true;"), std::string::npos) << p.kernels;
    EXPECT_NE(p.kernels.find("kiln_df1[kiln_u] = true;"), std::string::npos) << p.kernels;
    EXPECT_NE(p.kernels.find("if (kiln_df1[kiln_u]) y[kiln_do1[kiln_u]] = kiln_dv1[kiln_u];"), std::string::npos) << p.kernels;
    EXPECT_NE(p.gpu_kernels[0].plan.find("each round computes its iterations' values before it stores them"), std::string::npos)
        << p.gpu_kernels[0].plan;
    require_nvrtc();
    compile_for_sm90(c.f);
  }
}

TEST(CudaCodegen, ParforsWhoseBodyRunsALoopAreNotUnrolled) {
  // Each iteration runs a sequential loop (a triangle: its range depends on the row, so it is not a tiled
  // loop), so it is one thread's work; unrolled 4x the grid would have a quarter of the threads. A
  // straight-line body keeps the unrolled rounds.
  auto forces = [](kiln::Array<float> x, kiln::Array<float> f) {
    kiln::prange(x.shape(0), [&](kiln::Int i) {
      kiln::Float acc = 0.0f;
      kiln::range(i, [&](kiln::Int j) { acc += x[j] - x[i]; });
      f[i] = acc;
    });
  };
  auto saxpy = [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  };
  if (emit_options().unroll < 2) GTEST_SKIP() << "KILN_CUDA_UNROLL=1: nothing is unrolled";
  const cu::Program loop = emit(lower("forces", forces, {"x", "f"}));
  EXPECT_EQ(loop.gpu_kernels[0].unroll, 1);
  EXPECT_NE(loop.kernels.find("one iteration per thread: the body runs a sequential loop"), std::string::npos) << loop.kernels;
  EXPECT_EQ(loop.kernels.find("kiln_u"), std::string::npos) << loop.kernels;
  const cu::Program straight = emit(lower("saxpy", saxpy, {"a", "x", "y"}));
  EXPECT_EQ(straight.gpu_kernels[0].unroll, emit_options().unroll);
  EXPECT_NE(straight.kernels.find("kiln_u"), std::string::npos) << straight.kernels;
  require_nvrtc();
  compile_for_sm90(lower("forces", forces, {"x", "f"}));
}

TEST(CudaCodegen, NamesThatCollideWithCudaAreRenamed) {
  Var exp = param("exp", DType::F64), x = array_param("threadIdx", DType::F64, 1, true), kiln_n0 = param("kiln_n0", DType::F64);
  Var i = index("i");
  const ir::Function f = function("names", {exp, x, kiln_n0},
                                  {parfor({i}, {dim(x)}, store(x, {val(i)}, call(Intrinsic::Exp, {val(exp)}) + val(kiln_n0)))});
  const cu::Program p = emit(f);
  EXPECT_NE(p.kernels.find("v_threadIdx[i] = (exp(v_exp) + v_kiln_n0);"), std::string::npos) << p.kernels;
  require_nvrtc();
  compile_for_sm90(f);
}

TEST(CudaCodegen, RepeatedValuesReuseLetsOnlyWhereNothingChanged) {
  const DType t = DType::F32;
  Var x = array_param("x", t, 1, true), out = array_param("out", t, 1, true), twice = local("twice", t), first = local("first", t);
  Var i = index("i"), k = index("k");
  Expr x2 = at(x, {val(i)}) * num(t, 2);
  const ir::Function f = function(
      "reuse", {x, out},
      {parfor({i}, {dim(x)},
              block({let(twice, x2), store(out, {val(i)}, x2 + num(t, 1)),  // the let's value: reused
                     store(x, {val(i)}, x2 + num(t, 3)),                     // after a store: recomputed
                     let(first, at(x, {i64c(0)})),
                     for_loop(k, i64c(0), i64c(3), store(x, {i64c(0)}, at(x, {i64c(0)}) + num(t, 1)))}))});  // a loop body: recomputed
  const std::string src = emit(f).kernels;
  EXPECT_NE(src.find("out[i] = (twice + 1.0f);"), std::string::npos) << src;
  EXPECT_NE(src.find("x[i] = ((x[i] * 2.0f) + 3.0f);"), std::string::npos) << src;
  EXPECT_NE(src.find("x[0LL] = (x[0LL] + 1.0f);"), std::string::npos) << src;
  require_nvrtc();
  compile_for_sm90(f);
}

TEST(CudaCodegen, RepeatedMathCallsInLetsAreComputedOnce) {
  // Black-Scholes: d1 (with its logarithm) is part of both erf arguments.
  const cu::Program bs = emit(lower("black_scholes", benchgpu::black_scholes, {"s", "k", "t", "call", "put", "r", "v"}));
  const std::string main = bs.kernels.substr(0, bs.kernels.find(bs.gpu_kernels.at(0).alias_name + "("));
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(main, "logf("), 2) << main;  // once in the unrolled loop, once in the remainder loop
  EXPECT_EQ(count(main, "erff("), 4) << main;
  EXPECT_EQ(count(main, "expf("), 2) << main;
  // Under the arm of ?: a call may guard a load that must not run: nothing is hoisted from there.
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), out = array_param("out", t, 1, true), a = local("a", t), b = local("b", t);
  Var i = index("i");
  Expr first = bin(BinaryOp::Eq, val(i), i64c(0));
  Expr far = call(Intrinsic::Exp, {at(x, {val(i) * i64c(1000000000)})});
  const ir::Function guarded = function(
      "guarded", {x, out},
      {parfor({i}, {dim(x)}, block({let(a, ir::make_select(first, far, num(t, 0))), let(b, ir::make_select(first, far, num(t, 1))),
                                    store(out, {val(i)}, val(a) + val(b))}))});
  const std::string src = emit(guarded).kernels;
  EXPECT_EQ(src.find("cse"), std::string::npos) << src;
  EXPECT_EQ(count(src, "exp("), 8) << src;  // twice in each loop of the kernel and of its alias variant
}

TEST(CudaCodegen, ReductionStrategies) {
  for (const KernelCase& c : kernel_catalogue()) {
    if (c.name != "argmin_f64_nan_empty_1d" && c.name != "reduce_add_f32" && c.name != "saxpy_f32_unit") continue;
    const cu::Program p = emit(c.f);
    ASSERT_EQ(p.gpu_kernels.size(), 1u);
    const cu::GpuKernel& k = p.gpu_kernels[0];
    if (c.name == "saxpy_f32_unit") {
      EXPECT_EQ(k.strategy, cu::Strategy::Elementwise);
      EXPECT_TRUE(k.fold_name.empty());
    } else {
      EXPECT_EQ(k.strategy, c.name == "reduce_add_f32" ? cu::Strategy::Reduce : cu::Strategy::ArgReduce);
      EXPECT_EQ(k.fold_name, k.name + "_fold");
      EXPECT_EQ(p.entries().size(), 2u);
    }
  }
}

TEST(CudaCodegen, UnloweredStatementsAreCompileErrors) {
  Var x = array_param("x", DType::F64, 1, true), y = local_array("y", DType::F64, 1);
  Var i = index("i"), j = index("j");
  // A map at the top level and one inside a parfor: both must have been lowered to parfors.
  const ir::Function top = function("map_top", {x}, {ir::make_map(y, {i}, {dim(x)}, at(x, {val(i)}))});
  EXPECT_THROW(emit(top), CompileError);
  const ir::Function inner = function("map_inner", {x}, {parfor({j}, {dim(x)}, ir::make_map(y, {i}, {dim(x)}, at(x, {val(i)})))});
  EXPECT_THROW(emit(inner), CompileError);
}

TEST(CudaCodegen, NvrtcFailureIsACompileErrorWithSourceAndLog) {
  require_nvrtc();
  const std::string bad = "extern \"C\" __global__ void k() {\n  this is not CUDA;\n}\n";
  try {
    cu::compile_source(bad, "broken", "sm_90", {});
    FAIL() << "NVRTC accepted broken code";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos) << e.what();
    EXPECT_NE(e.code().find("    2 |   this is not CUDA;"), std::string::npos) << e.code();
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
  }
  EXPECT_FALSE(cu::nvrtc_version().empty());
}

// ---- stencils ---------------------------------------------------------------------------------------------

bool is_stencil_case(const std::string& name) { return name.rfind("stencil_", 0) == 0 || name == "time_steps" || name == "bindings"; }

TEST(CudaStencil, EveryFormIsChosenAndCompiles) {
  require_nvrtc();
  if (emit_options().unroll == 1) GTEST_SKIP() << "KILN_CUDA_UNROLL=1 turns the stencil form off";
  using M = cu::StencilMode;
  for (const cu::StencilSettings form : {cu::StencilSettings{M::Shuffle, 4, 4}, cu::StencilSettings{M::Shuffle, 3, 1},
                                         cu::StencilSettings{M::Shared, 2, 4}, cu::StencilSettings{M::Shared, 1, 3},
                                         cu::StencilSettings{M::Off, 4, 4}}) {
    cu::EmitOptions emission = emit_options();
    emission.stencil = form;
    for (const KernelCase& c : kernel_catalogue()) {
      if (!is_stencil_case(c.name)) continue;
      SCOPED_TRACE(c.name + " in form " + cu::emission_settings(emission));
      const cu::Program prog = compile_for_sm90(c.f, {}, emission);
      const cu::GpuKernel& k = prog.gpu_kernels.at(0);
      const bool across_rows = c.name == "stencil_jacobi2d" || c.name == "stencil_rows" || c.name == "stencil_3d";
      if (form.mode == M::Off) {
        EXPECT_EQ(k.stencil_columns, 0);
        EXPECT_EQ(prog.kernels.find("// stencil:"), std::string::npos) << prog.kernels;
        continue;
      }
      EXPECT_EQ(k.stencil_mode, form.mode);
      // The 3-d stencil reads three planes of its array: with tiles it walks them (2.5-d blocking), holding
      // three planes' windows in registers and tiles, which may take fewer rounds than the form's.
      const bool march = form.mode == M::Shared && c.name == "stencil_3d";
      EXPECT_EQ(k.stencil_march, march) << prog.kernels;
      // A strip's rows, then rounds, are cut until its registers fit two blocks an SM (plan_strip), and the plan
      // says so; the others keep the form's.
      const bool cut = !march && k.plan.find("to fit)") != std::string::npos;
      EXPECT_NE(k.plan.find("registers a thread"), std::string::npos) << k.plan;
      if (march || cut) {
        EXPECT_GE(k.stencil_columns, 1);
        EXPECT_LE(k.stencil_columns, form.rounds);
      } else {
        EXPECT_EQ(k.stencil_columns, form.rounds);
      }
      if (march) {  // its rows start from march_rows and are cut until its registers fit (plan_march)
        EXPECT_GE(k.stencil_rows, 1);
        EXPECT_LE(k.stencil_rows, form.march_rows);
      } else if (cut) {
        EXPECT_TRUE(across_rows) << k.plan;  // the stencils within a row fit at 4 rounds
        EXPECT_GE(k.stencil_rows, 1);
        EXPECT_LE(k.stencil_rows, form.rows);
      } else {
        EXPECT_EQ(k.stencil_rows, across_rows ? form.rows : 1);
      }
      // Neighbours come from other lanes, never from a second load of the same row.
      const std::size_t main_end = k.alias_name.empty() ? std::string::npos : prog.kernels.find(k.alias_name + "(");
      const std::string main = prog.kernels.substr(0, main_end);
      if (form.mode == M::Shuffle) {
        EXPECT_NE(main.find("kiln_shfl("), std::string::npos) << main;
        EXPECT_EQ(main.find("__shared__"), std::string::npos) << main;
      } else {
        EXPECT_NE(main.find("__shared__"), std::string::npos) << main;
        // A strip's warps exchange through their own tiles; a marching kernel's block shares each plane's tile
        // (its block form, emit_march_block.cpp: a barrier a step, four blocks an SM).
        EXPECT_NE(main.find(march ? "__syncthreads();" : "__syncwarp();"), std::string::npos) << main;
        EXPECT_EQ(k.march_block_rows, march ? 8 : 0) << k.plan;
        // 256 threads at most (the tiles' warps)
        EXPECT_NE(main.find(march ? "__launch_bounds__(256, 4)" : "__launch_bounds__(256)"), std::string::npos) << main;
      }
      // Overlapping arguments get the plain loops, which read every element where the body reads it.
      if (!k.alias_name.empty()) {
        const std::size_t alias_end = prog.kernels.find("extern \"C\"", main_end);  // the next kernel's
        const std::string alias = prog.kernels.substr(main_end, alias_end == std::string::npos ? std::string::npos : alias_end - main_end);
        EXPECT_EQ(alias.find("kiln_shfl("), std::string::npos) << alias;
        EXPECT_EQ(alias.find("__shared__"), std::string::npos) << alias;
      }
    }
  }
  const ir::Function& stencil = kernel_catalogue().front().f;  // any kernel: the settings are checked first
  EXPECT_THROW(cu::emit_program(stencil, {4, {M::Shuffle, 0, 4}}), ValueError);
  EXPECT_THROW(cu::emit_program(stencil, {4, {M::Shuffle, 4, 17}}), ValueError);
}

// kiln::dist's kernels read ghost layers beyond their views: plain loops, which load where the body reads.
TEST(CudaStencil, HaloReadsTakeThePlainLoops) {
  require_nvrtc();
  // Settings under which the stencil forms are chosen (not the environment's, which may turn them off).
  cu::EmitOptions tiled;
  tiled.unroll = 4;
  tiled.stencil = {cu::StencilMode::Shared, 4, 4};
  cu::EmitOptions emission = tiled;
  emission.halo_reads = true;
  EXPECT_NE(cu::emission_settings(emission), cu::emission_settings(tiled));
  int stencils = 0;
  for (const KernelCase& c : kernel_catalogue()) {
    if (!is_stencil_case(c.name)) continue;
    SCOPED_TRACE(c.name);
    ++stencils;
    EXPECT_GT(cu::emit_program(offloaded(c.f), tiled).gpu_kernels.at(0).stencil_columns, 0);  // the control
    const cu::Program prog = compile_for_sm90(c.f, {}, emission);
    EXPECT_EQ(prog.gpu_kernels.at(0).stencil_columns, 0);
    EXPECT_EQ(prog.kernels.find("// stencil:"), std::string::npos) << prog.kernels;
  }
  EXPECT_GT(stencils, 3);
}

TEST(CudaStencil, KilnStencilKernelsCompile) {
  // kiln::stencil as the examples use it: lowered to an interior parfor (the stencil form) and border
  // parfors; heat3d's time loop swaps its buffers through bindings on the host.
  require_nvrtc();
  const auto heat_step = kiln::stencil("heat_step", [](kiln::Window<double, 3> u) {
    return u(0, 0, 0) + 0.1 * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) + u(0, 0, 1) - 6.0 * u(0, 0, 0));
  }, kiln::border(kiln::Border::nearest));
  auto heat = [&](kiln::Array<double, 3> u0, kiln::Int nsteps) {
    kiln::Array<double, 3> u = kiln::empty_like(u0), v = kiln::empty_like(u0);
    u(kiln::all) = u0;
    kiln::range(nsteps, [&](kiln::Int) {
      heat_step.into(v, u);
      kiln::swap(u, v);
    });
    return u;
  };
  const cu::Program h = compile_for_sm90(lower("heat3d", heat, {"u0", "nsteps"}, 3));
  int stencil_kernels = 0;
  for (const cu::GpuKernel& k : h.gpu_kernels) stencil_kernels += k.stencil_columns > 0;
  EXPECT_GE(stencil_kernels, 1) << h.kernels;
  const auto jacobi = kiln::stencil("jacobi", [](kiln::Window<double, 2> a) { return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0)); },
                                    kiln::border(kiln::Border::skip));
  auto run = [&](kiln::Array<double, 2> a) { return jacobi(a); };
  const cu::Program j = compile_for_sm90(lower("run_jacobi", run, {"a"}, 2));
  stencil_kernels = 0;
  for (const cu::GpuKernel& k : j.gpu_kernels) stencil_kernels += k.stencil_columns > 0;
  EXPECT_GE(stencil_kernels, 1) << j.kernels;
}

TEST(CudaStencil, EmissionSettingsNameTheForm) {
  const std::string shared = cu::emission_settings({4, {cu::StencilMode::Shared, 3, 2}});
  EXPECT_EQ(shared, "unroll=4;stencil=shared;rows=3;rounds=2");
  EXPECT_NE(cu::emission_settings({4, {cu::StencilMode::Shuffle, 3, 2}}), shared);
  EXPECT_NE(cu::emission_settings({2, {cu::StencilMode::Shared, 3, 2}}), shared);
}

TEST(CudaStencil, WhatIsNotAStencil) {
  const DType t = DType::F32;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true), z = array_param("z", t, 1, false);
  Var i = index("i");
  Expr n = dim(x) - i64c(1);
  auto first_kernel = [](const ir::Function& f) { return emit(f).gpu_kernels.at(0); };
  auto interior = [&](Stmt body) { return ir::make_parfor({i}, {i64c(1)}, {n}, std::move(body), {}, "t"); };
  // Reads of the array the parfor writes are loads where they are.
  EXPECT_EQ(first_kernel(function("inplace", {x}, {interior(store(x, {val(i)}, at(x, {val(i) - i64c(1)}) + at(x, {val(i) + i64c(1)})))})).stencil_columns, 0);
  // A single offset reads each element once: nothing to share.
  EXPECT_EQ(first_kernel(function("shift", {x, y}, {interior(store(y, {val(i)}, at(x, {val(i) + i64c(1)})))})).stencil_columns, 0);
  // Offsets beyond the limit, and arrays without a unit innermost stride.
  EXPECT_EQ(first_kernel(function("far", {x, y}, {interior(store(y, {val(i)}, at(x, {val(i) - i64c(9)}) + at(x, {val(i) + i64c(9)})))})).stencil_columns, 0);
  EXPECT_EQ(first_kernel(function("strided", {z, y}, {interior(store(y, {val(i)}, at(z, {val(i) - i64c(1)}) + at(z, {val(i) + i64c(1)})))})).stencil_columns, 0);
  // A check may leave a thread's iterations early, which warp-wide exchanges cannot allow.
  Stmt checked = block({ir::make_check(bin(BinaryOp::Gt, at(x, {val(i)}), num(t, 0)), kValueError, "not positive", {}),
                        store(y, {val(i)}, at(x, {val(i) - i64c(1)}) + at(x, {val(i) + i64c(1)}))});
  EXPECT_EQ(first_kernel(function("checked", {x, y}, {interior(checked)})).stencil_columns, 0);
  // The same stencil without any of those is one.
  EXPECT_GT(first_kernel(function("plain", {x, y}, {interior(store(y, {val(i)}, at(x, {val(i) - i64c(1)}) + at(x, {val(i) + i64c(1)})))})).stencil_columns, 0);
}

// ---- array bindings ---------------------------------------------------------------------------------------

TEST(CudaBindings, KernelsTakeWhatTheBindingsName) {
  for (const KernelCase& c : kernel_catalogue()) {
    if (c.name != "bindings") continue;
    ir::verify_or_throw(c.f, "bindings");
    const cu::Program prog = emit(c.f);
    ASSERT_EQ(prog.gpu_kernels.size(), 2u);
    // The step kernel's arrays are the bindings themselves, bound at each launch; they may name one buffer,
    // so the kernel has a variant for overlapping arrays.
    const cu::GpuKernel& step = prog.gpu_kernels[0];
    std::vector<std::string> data;
    for (const cu::Param& p : step.params)
      if (p.kind == cu::ParamKind::Data) data.push_back(p.var->name);
    std::sort(data.begin(), data.end());
    EXPECT_EQ(data, (std::vector<std::string>{"cur", "nxt"}));
    EXPECT_EQ(step.argument_arrays.size(), 2u);
    EXPECT_FALSE(step.alias_name.empty());
    // Inside a parfor a binding is a pointer with its extents, reassigned.
    EXPECT_NE(prog.kernels.find("const double* src = a;  // binding"), std::string::npos) << prog.kernels;
    EXPECT_NE(prog.kernels.find("src = cur;  // rebinding"), std::string::npos) << prog.kernels;
    // Both buffers are written through `nxt`: both are copied back to host arrays.
    const auto written = cu::arrays_written(c.f.body);
    EXPECT_TRUE(written.count(c.f.params[0].get()) && written.count(c.f.params[1].get()));
    require_nvrtc();
    compile_for_sm90(c.f);
  }
}

TEST(CudaBindings, TheVerifierFollowsWhatABindingMayName) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 1, true);
  auto binding = [t](const std::string& name) { return ir::make_var(name, ir::Type::array(t, 1, true), ir::VarKind::Binding); };
  Var cur = binding("cur"), scratch = local_array("scratch", t, 1);
  Var s = index("s");
  // A binding declared outside a loop rebound to an array allocated in it would name freed memory after the
  // loop, also when the array reaches it through a temporary binding.
  const ir::Function direct = function("direct", {a}, {ir::make_bind(cur, a, true),
                                                       for_loop(s, i64c(0), i64c(2), block({ir::make_allocate(scratch, {i64c(4)}), ir::make_bind(cur, scratch, false)}))});
  EXPECT_FALSE(ir::verify(direct).empty());
  Var cur2 = binding("cur"), tmp2 = binding("tmp"), scratch2 = local_array("scratch", t, 1);
  const ir::Function indirect = function(
      "indirect", {a}, {ir::make_bind(cur2, a, true),
                        for_loop(s, i64c(0), i64c(2), block({ir::make_allocate(scratch2, {i64c(4)}), ir::make_bind(tmp2, scratch2, true), ir::make_bind(cur2, tmp2, false)}))});
  const auto problems = ir::verify(indirect);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("array binding cur may name an array declared in a scope that ends"), std::string::npos) << problems[0];
  // The swap through a temporary declared in the loop names only the outer arrays: accepted.
  for (const KernelCase& c : kernel_catalogue()) {
    if (c.name == "bindings") {
      EXPECT_TRUE(ir::verify(c.f).empty());
    }
  }
}

// ---- the disk cache's CUDA arm ------------------------------------------------------------------------------

TEST(CudaCache, TheDescriptionNamesArchitectureAndEmission) {
  // Through the driver's settings, as a kernel's key is made: KILN_CUDA_ARCH and KILN_CUDA_LINEINFO are read
  // at each compilation.
  setenv("KILN_CUDA_ARCH", "sm_80", 1);
  const std::string sm80 = cu::cache_description(kiln::detail::cuda_options());
  setenv("KILN_CUDA_ARCH", "sm_90", 1);
  const cu::CudaOptions opts = kiln::detail::cuda_options();
  const std::string sm90 = cu::cache_description(opts);
  EXPECT_EQ(sm90.rfind("sm_90;", 0), 0u) << sm90;
  EXPECT_NE(sm80, sm90);
  EXPECT_NE(sm90.find(cu::emission_settings(opts.emit)), std::string::npos) << sm90;
  cu::CudaOptions off = opts;
  off.emit.stencil = {cu::StencilMode::Off, 4, 4};
  EXPECT_NE(cu::cache_description(off), sm90);  // another emission, another binary
  setenv("KILN_CUDA_LINEINFO", "1", 1);
  EXPECT_EQ(cu::cache_description(kiln::detail::cuda_options()), sm90 + ";lineinfo");
  unsetenv("KILN_CUDA_LINEINFO");
  unsetenv("KILN_CUDA_ARCH");
  EXPECT_TRUE(kiln::detail::cuda_options().arch.empty());  // the device's (or sm_90 without one)
}

TEST(CudaCache, NvrtcIsIdentifiedByItsFile) {
  require_nvrtc();
  const std::string id = cu::nvrtc_identity();
  // path:size:mtime of the library that compiles (it is loaded by now: the same file as before loading).
  const std::size_t colon = id.find(':');
  ASSERT_NE(colon, std::string::npos) << id;
  EXPECT_NE(id.find("libnvrtc"), std::string::npos) << id;
  struct stat st {};
  EXPECT_EQ(stat(id.substr(0, colon).c_str(), &st), 0) << id;
  EXPECT_EQ(id, cu::nvrtc_identity());
}

TEST(CudaCache, EntriesAreCheckedAgainstTheEmittedProgram) {
  require_nvrtc();
  KernelCase jacobi;
  for (const KernelCase& c : kernel_catalogue()) {
    if (c.name == "stencil_jacobi2d") jacobi = c;
  }
  const cu::CudaOptions opts = kiln::detail::cuda_options();
  const cu::Program prog = cu::emit_program(jacobi.f, opts.emit);
  const cu::Binary good = cu::compile_source(prog.source(), jacobi.f.name, cu::target_arch(opts), {});
  auto expect_cache_error = [&](cu::Binary b, const std::string& why) {
    try {
      cu::load_binary(jacobi.f, std::move(b), {}, opts);
      FAIL() << "accepted a binary with " << why;
    } catch (const CacheError& e) {
      SUCCEED() << e.what();
    } catch (const Error& e) {
      FAIL() << why << ": " << e.what();
    }
  };
  cu::Binary other_arch = good;
  other_arch.arch = "sm_75";
  expect_cache_error(other_arch, "another architecture");
  cu::Binary not_elf = good;
  not_elf.cubin[0] = 'X';
  expect_cache_error(not_elf, "a CUBIN that is no ELF image");
  // Code compiled for another program (another form of the stencil: the alias variant's name is missing).
  cu::Binary other_program = good;
  const std::string alias = ".entry " + prog.gpu_kernels.at(0).alias_name + "(";
  const std::size_t at = other_program.ptx.find(alias);
  ASSERT_NE(at, std::string::npos);
  other_program.ptx.replace(at, alias.size(), ".entry renamed_kernel(");
  expect_cache_error(other_program, "a missing __global__ function");
  // A good entry loads where there is a device; without one the call fails as a compilation would.
  if (!kiln::cuda::available()) {
    EXPECT_THROW(cu::load_binary(jacobi.f, good, {}, opts), DeviceError);
  } else {
    EXPECT_TRUE(static_cast<bool>(cu::load_binary(jacobi.f, good, {}, opts).call));
  }
}

TEST(CudaCache, AnEntryHoldsTheHostFunctionAndNoPassRunsOnLoad) {
  require_nvrtc();
  KernelCase jacobi;
  for (const KernelCase& c : kernel_catalogue())
    if (c.name == "stencil_jacobi2d") jacobi = c;
  const cu::CudaOptions cuda = kiln::detail::cuda_options();
  const cu::Program prog = cu::emit_program(jacobi.f, cuda.emit);
  const cu::Binary bin = cu::compile_source(prog.source(), jacobi.f.name, cu::target_arch(cuda), {});
  codegen::TargetOptions t;
  t.cuda = cuda;
  const codegen::Backend& backend = codegen::backend_for(Target::cuda);
  ASSERT_TRUE(backend.cache_identity(t)->code_names_arrays);  // the host function's errors name arrays
  auto entry = [&](const std::string& host) {
    cache::Entry e;
    e.payloads = {{"host", host}, {"arch", bin.arch}, {"ptx", bin.ptx}, {"cubin", bin.cubin}};
    return e;
  };
  auto expect_cache_error = [&](const cache::Entry& e, const std::string& why) {
    try {
      backend.load(e, jacobi.f.name, t);
      FAIL() << "loaded an entry with " << why;
    } catch (const CacheError& err) {
      SUCCEED() << err.what();
    }
  };
  expect_cache_error(cache::Entry{}, "no payloads");
  cache::Entry no_host = entry("");
  no_host.payloads.erase(no_host.payloads.begin());
  expect_cache_error(no_host, "no host function");
  const std::string host = ir::serialize(jacobi.f);
  expect_cache_error(entry(host.substr(0, host.size() / 2)), "a truncated host function");
  // The stored function is the one the program was emitted from: the emitter's kernels are the binary's.
  EXPECT_EQ(ir::to_string(ir::deserialize(host)), ir::to_string(jacobi.f));
  if (!kiln::cuda::available()) {
    EXPECT_THROW(backend.load(entry(host), jacobi.f.name, t), DeviceError);
  } else {
    EXPECT_TRUE(static_cast<bool>(backend.load(entry(host), jacobi.f.name, t).call));
  }
}

// ---- launch geometry ------------------------------------------------------------------------------------------

TEST(CudaGeometry, ReductionsDependOnlyOnTheCounts) {
  const cu::DeviceShape h100{132, 2048, 2147483647u}, other{20, 1024, 65535u};
  for (std::vector<std::uint64_t> counts : {std::vector<std::uint64_t>{1}, {1000}, {1ull << 33}, {3, 5}, {70000, 70000}, {2, 3, 4}, {9, 9, 9, 9}}) {
    const int rank = static_cast<int>(counts.size());
    const cu::Geometry a = cu::geometry(cu::Strategy::Reduce, rank, counts.data(), 1024, h100, 0);
    const cu::Geometry b = cu::geometry(cu::Strategy::Reduce, rank, counts.data(), 128, other, 4);
    EXPECT_EQ(a.grid.count(), b.grid.count());
    EXPECT_EQ(a.block.x, b.block.x);
    EXPECT_EQ(a.block.y, b.block.y);
    EXPECT_LE(a.grid.count(), static_cast<std::uint64_t>(cu::kMaxReduceBlocks));
    EXPECT_EQ(a.block.count(), static_cast<std::uint64_t>(cu::kReduceThreads));
    EXPECT_EQ(a.block.x % 32, 0u);
  }
}

TEST(CudaGeometry, ElementwiseCoalescesTheLastAxis) {
  const cu::DeviceShape h100{132, 2048, 2147483647u};
  std::uint64_t c1[] = {1ull << 27};
  const cu::Geometry g1 = cu::geometry(cu::Strategy::Elementwise, 1, c1, 1024, h100, 0);
  EXPECT_EQ(g1.block.x, 1024u);
  EXPECT_EQ(g1.grid.x, (1u << 27) / 1024);
  const cu::Geometry capped = cu::geometry(cu::Strategy::Elementwise, 1, c1, 1024, h100, 2);
  EXPECT_EQ(capped.grid.x, 132u * 2 * 2);
  const cu::Geometry unrolled = cu::geometry(cu::Strategy::Elementwise, 1, c1, 1024, h100, 8, 4);
  EXPECT_EQ(unrolled.grid.x, 132u * 2 * 8);  // 8 waves, each thread four iterations per round
  std::uint64_t small[] = {10000};
  EXPECT_EQ(cu::geometry(cu::Strategy::Elementwise, 1, small, 256, h100, 8, 4).grid.x, 10u);
  std::uint64_t c2[] = {16382, 16382};
  const cu::Geometry g2 = cu::geometry(cu::Strategy::Elementwise, 2, c2, 256, h100, 0, 4);
  EXPECT_EQ(g2.block.x, 128u);  // rows of 128 threads along the contiguous axis, tiles of 2 rows
  EXPECT_EQ(g2.block.y, 2u);
  EXPECT_EQ(g2.grid.x, 32u);  // 16382 / (128 * 4)
  EXPECT_EQ(g2.grid.y, 8191u);
  std::uint64_t narrow[] = {100000, 3};
  const cu::Geometry g3 = cu::geometry(cu::Strategy::Elementwise, 2, narrow, 256, h100, 0);
  EXPECT_EQ(g3.block.x, 32u);  // at least a warp along x
  EXPECT_EQ(g3.block.y, 8u);
  EXPECT_EQ(g3.grid.y, 12500u);
  std::uint64_t big[] = {100000, 100000, 2};
  const cu::Geometry g4 = cu::geometry(cu::Strategy::Elementwise, 3, big, 256, h100, 0);
  EXPECT_EQ(g4.grid.z, 65535u);  // the grid-stride loops cover the rest
}

// ---- cooperative rows ------------------------------------------------------------------------------------

/// The kernels of `f` after emission with the process's options (cooperative rows on unless
/// KILN_CUDA_COOPERATIVE=0), compiled for sm_90.
cu::Program rows_program(const ir::Function& f, bool cooperative = true) {
  cu::EmitOptions o = emit_options();
  o.cooperative = cooperative;
  return compile_for_sm90(f, {}, o);
}

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CudaCooperative, RowReductionsShareEachRowAmongAGroup) {
  require_nvrtc();
  const ir::Function stats = rows::lower_for_cuda("row_stats", rows::row_stats<float>, {"x", "m", "v", "s"});
  const ir::Function stats64 = rows::lower_for_cuda("row_stats64", rows::row_stats<double>, {"x", "m", "v", "s"});
  const ir::Function sum32 = rows::lower_for_cuda("row_sum_i32", rows::row_sum<std::int32_t>, {"x"}, 2);
  const ir::Function sumf = rows::lower_for_cuda("row_sum_f32", rows::row_sum<float>, {"x"}, 2);
  const ir::Function moments = rows::lower_for_cuda("row_moments", rows::row_moments, {"x", "out"});
  for (const ir::Function* f : {&stats, &stats64, &sum32, &sumf, &moments}) {
    SCOPED_TRACE(f->name);
    const cu::Program prog = rows_program(*f);
    ASSERT_EQ(prog.gpu_kernels.size(), 1u);
    const cu::GpuKernel& k = prog.gpu_kernels[0];
    EXPECT_EQ(k.strategy, cu::Strategy::Cooperative);
    EXPECT_TRUE(k.fold_name.empty());  // each row's total stays on the device
    EXPECT_NE(k.row_length, nullptr);  // dim(x, 1): the host sizes the group at launch
    const std::string& src = prog.kernels;
    EXPECT_NE(src.find("__launch_bounds__(1024) " + k.name + "("), std::string::npos);
    EXPECT_NE(src.find("for (unsigned long long kiln_row = (unsigned long long)blockIdx.x * blockDim.y + threadIdx.y;"), std::string::npos);
    // Threads take iterations lane, lane + G, ... in rounds of the unroll factor, then the rest.
    EXPECT_NE(src.find("unsigned long long kiln_c0 = kiln_lane;"), std::string::npos);
    EXPECT_NE(src.find("kiln_c0 += kiln_group) {"), std::string::npos);
    EXPECT_NE(src.find("kiln_group_reduce("), std::string::npos);
    EXPECT_NE(src.find("if (kiln_lane == 0) {"), std::string::npos);  // one thread stores the row's results
    // The rows never read what they store: no barriers beyond the reductions' own.
    EXPECT_EQ(src.find("kiln_group_sync();"), std::string::npos);
    EXPECT_NE(src.find("// a group of threads per row: "), std::string::npos);
  }
  // mean, var and std of one row: the sum, then the squared deviations in a second pass over the row; var's and
  // std's own sums and std's squared deviations are those (reuse_reductions).
  const std::string& src = rows_program(stats).kernels;
  EXPECT_EQ(occurrences(src, "kiln_group_reduce(") % 2, 0);
  EXPECT_NE(src.find("// a group of threads per row: 2 reductions read x contiguously"), std::string::npos) << src;
  const std::string& m = rows_program(moments).kernels;
  EXPECT_NE(m.find("// a group of threads per row: 4 reductions read x contiguously"), std::string::npos) << m;
  EXPECT_EQ(occurrences(m, "if (kiln_lane == 0) {"), 2 * 5);  // five stores per row, in both variants
  // The i32 rows accumulate in i64 and combine with the i64 identity.
  EXPECT_NE(rows_program(sum32).kernels.find("kiln_group_reduce(sum_acc, kiln_op_add(), 0LL, kiln_coop_shared)"), std::string::npos)
      << rows_program(sum32).kernels;
}

TEST(CudaCooperative, RowsThatReadBackWhatTheyStoreSynchronizeTheGroup) {
  require_nvrtc();
  const ir::Function softmax = rows::lower_for_cuda("row_softmax", rows::row_softmax, {"x", "y", "check"});
  const cu::Program sp = rows_program(softmax);
  ASSERT_EQ(sp.gpu_kernels.size(), 1u);
  EXPECT_EQ(sp.gpu_kernels[0].strategy, cu::Strategy::Cooperative);
  // The elementwise nested parfor writing y is spread too; the row then sums y: barriers around the writes.
  const std::string& s = sp.kernels;
  EXPECT_NE(s.find("unsigned long long kiln_c2 = kiln_lane;"), std::string::npos) << s;
  EXPECT_GE(occurrences(s, "kiln_group_sync();"), 2);
  const ir::Function scaled = rows::lower_for_cuda("row_scaled", rows::row_scaled, {"x", "scaled", "out"});
  const std::string& t = rows_program(scaled).kernels;
  // scaled[i, 0] by one thread, with a barrier before (the reads before it) and after (the reads after it);
  // out[i] is never read: no barrier.
  EXPECT_NE(t.find("kiln_group_sync();\n    if (kiln_lane == 0) {\n      scaled["), std::string::npos) << t;
  EXPECT_EQ(occurrences(t, "kiln_group_sync();"), 2 * 2);
}

TEST(CudaCooperative, WhatStaysOneThreadPerRow) {
  require_nvrtc();
  auto strategy = [](const ir::Function& f, bool cooperative = true) {
    const cu::Program p = rows_program(f, cooperative);
    EXPECT_EQ(p.gpu_kernels.size(), 1u) << f.name;
    return p.gpu_kernels.empty() ? cu::Strategy::Reduce : p.gpu_kernels[0].strategy;
  };
  // Column sums: one thread per column reads consecutive columns already.
  EXPECT_EQ(strategy(rows::lower_for_cuda("column_sums", rows::column_sums, {"x", "out"})), cu::Strategy::Elementwise);
  // argmin along the rows: a sequential loop (its first-index rule is an order), nothing to spread.
  EXPECT_EQ(strategy(rows::lower_for_cuda("row_argmin", [](Array<float, 2> x) { return kiln::argmin(x, 1); }, {"x"})),
            cu::Strategy::Elementwise);
  // A row whose reduction reads a data-dependent index checks it in bounds-checked mode: a thread that fails
  // would leave its group.
  const ir::Function gathered = rows::lower_for_cuda(
      "row_gather",
      [](Array<float, 2> x, Array<std::int64_t, 2> at, Array<float, 1> out) {
        prange(x.shape(0), [&](Int i) {
          Float s = 0.0f;
          prange(x.shape(1), [&](Int j) { s += x(i, at(i, j)); });
          out[i] = s;
        });
      },
      {"x", "at", "out"}, 1, true);
  EXPECT_EQ(strategy(gathered), cu::Strategy::Elementwise);
  // The override turns the form off (an emission setting, so part of the cache key).
  const ir::Function stats = rows::lower_for_cuda("row_stats", rows::row_stats<float>, {"x", "m", "v", "s"});
  EXPECT_EQ(strategy(stats, false), cu::Strategy::Elementwise);
  cu::EmitOptions off;
  off.cooperative = false;
  EXPECT_NE(cu::emission_settings(off), cu::emission_settings(cu::EmitOptions{}));
  // A range that depends on the row: still shared, but the group's size cannot come from the row length.
  const cu::Program tri = rows_program(rows::lower_for_cuda("triangle_sums", rows::triangle_sums, {"x", "out"}));
  EXPECT_EQ(tri.gpu_kernels[0].strategy, cu::Strategy::Cooperative);
  EXPECT_EQ(tri.gpu_kernels[0].row_length, nullptr);
}

TEST(CudaCooperative, TheReportSaysHowRowsRunAndWhy) {
  passes::PipelineReport report;
  rows::lower_for_cuda("row_stats", rows::row_stats<float>, {"x", "m", "v", "s"}, 1, false, &report);
  std::string all;
  for (const passes::Note& n : report.notes) all += n.text + "\n";
  EXPECT_NE(all.find("a group of threads per row: 2 reductions read x contiguously along the row"), std::string::npos) << all;
  EXPECT_NE(all.find("chosen at launch from the rows, the row length and the SM count"), std::string::npos) << all;
  passes::PipelineReport columns;
  rows::lower_for_cuda("column_sums", rows::column_sums, {"x", "out"}, 1, false, &columns);
  all.clear();
  for (const passes::Note& n : columns.notes) all += n.text + "\n";
  EXPECT_NE(all.find("one thread per row: the reductions read along the rows' index"), std::string::npos) << all;
}

TEST(CudaGeometry, CooperativeRowsTakeAWarpOrABlockPerRow) {
  const cu::DeviceShape h100{132, 2048, 2147483647u}, small{20, 1024, 65535u};
  // Many rows: a warp per row, eight rows per 256-thread block.
  const cu::Geometry many = cu::cooperative_geometry(100000, 5000, h100);
  EXPECT_EQ(cu::cooperative_geometry(20000, 5000, h100).block.x, 32u);
  EXPECT_EQ(many.block.x, 32u);
  EXPECT_EQ(many.block.y, 8u);
  EXPECT_EQ(many.grid.x, 12500u);
  // 4000 rows of 5000 on 132 SMs: 4000 warps fill under half the device's 270336 thread slots; blocks of
  // 128 give two device-fulls.
  const cu::Geometry stats = cu::cooperative_geometry(4000, 5000, h100);
  EXPECT_EQ(stats.block.x, 128u);
  EXPECT_EQ(stats.block.y, 1u);
  EXPECT_EQ(stats.grid.x, 4000u);
  // One long row: a block of 1024; a short one stays a warp (16 elements per thread at least).
  EXPECT_EQ(cu::cooperative_geometry(1, 10000000, h100).block.x, 1024u);
  EXPECT_EQ(cu::cooperative_geometry(1, 1000, h100).block.x, 32u);
  EXPECT_EQ(cu::cooperative_geometry(1, 0, h100).block.x, 32u);
  EXPECT_EQ(cu::cooperative_geometry(3, 4096, h100).block.x, 256u);
  // The row length unknown at launch: a warp; the device changes the choice (and so the order), the
  // same arguments never do.
  EXPECT_EQ(cu::cooperative_geometry(4, -1, h100).block.x, 32u);
  EXPECT_EQ(cu::cooperative_geometry(100, 100000, small).block.x, 256u);
  EXPECT_EQ(cu::cooperative_geometry(100, 100000, h100).block.x, 1024u);
  // The override, and a grid capped at the device's limit (the row loop strides over the rest).
  EXPECT_EQ(cu::cooperative_geometry(4000, 5000, h100, 32).block.x, 32u);
  EXPECT_EQ(cu::cooperative_geometry(4000, 5000, h100, 512).block.x, 512u);
  EXPECT_EQ(cu::cooperative_geometry(1u << 30, 10, small).grid.x, 65535u);
}

// ---- without a driver ------------------------------------------------------------------------------------

TEST(CudaTarget, WithoutADriverTheGpuTargetReportsWhy) {
  if (kiln::cuda::available()) GTEST_SKIP() << "a CUDA device is present (cuda_gpu_test covers it)";
  auto k = kiln::jit("saxpy", [](kiln::Float a, kiln::Array<float> x) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = a * x[i]; });
  }, kiln::Options().on(kiln::Target::cuda));
  std::vector<float> x(10, 1.0f);
  try {
    k(2.0f, x);
    FAIL() << "the CUDA target ran without a driver";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("no CUDA driver/GPU: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(kiln::cuda::device_count(), 0);
  EXPECT_FALSE(kiln::cuda::unavailable_reason().empty());
  EXPECT_THROW(kiln::DeviceArray<float>({4}), DeviceError);
  // The CPU target and the interpreter are unaffected.
  k.on(kiln::Target::interpreter)(2.0f, x);
  EXPECT_EQ(x[3], 2.0f);
}

}  // namespace
}  // namespace kiln
