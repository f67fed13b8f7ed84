// The CUDA backend without a GPU: every test kernel, example kernel and benchmark kernel is emitted as CUDA
// C and compiled by NVRTC to PTX and CUBIN for sm_90; golden sources pin the emitted code of a few;
// errors, launch geometry, and the no-driver behaviour of Target::cuda.
#include <cstdint>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "bench/gpu/kiln_kernels.hpp"
#include "codegen/cuda/cuda_backend.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/geometry.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_kernels.hpp"
#include "frontend/trace_context.hpp"
#include "ir/verifier.hpp"
#include "kiln/kiln.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using namespace cudatest;

/// Traces a kernel lambda as kiln::jit would for arrays of `rank` with unit stride, then runs the passes.
template <class F>
ir::Function lower(const std::string& name, const F& fn, std::vector<std::string> names, int rank = 1) {
  std::vector<detail::ParamInstance> inst;
  for (const detail::ParamSpec& s : detail::param_specs<F>()) {
    detail::ParamInstance p;
    p.spec = s;
    if (s.is_array) {
      p.rank = s.rank ? s.rank : rank;
      p.unit_stride = true;
    }
    inst.push_back(p);
  }
  ir::Function traced;
  {
    detail::TraceContext ctx(name, inst, std::move(names));
    detail::trace_erased<F>(&fn);
    traced = ctx.finish();
  }
  return passes::run_pipeline(traced);
}

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

/// Emits and compiles for sm_90; checks that every entry is in the PTX and that the CUBIN is an ELF image.
cu::Program compile_for_sm90(const ir::Function& f, codegen::CodegenOptions opts = {}) {
  cu::Program prog = cu::emit_program(f);
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
    EXPECT_EQ(prog.gpu_kernels.size(), prog.kernel_of.size());
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
  compile_for_sm90(lower("black_scholes", benchgpu::black_scholes, {"s", "k", "t", "call", "put", "r", "v"}));
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
  expect_golden("saxpy.cu", cu::emit_program(lower("saxpy", saxpy, {"a", "x", "y"})).kernels);
}

TEST(CudaCodegen, GoldenDot) {
  auto dot = [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
    return s;
  };
  expect_golden("dot.cu", cu::emit_program(lower("dot", dot, {"x", "y"})).kernels);
}

TEST(CudaCodegen, GoldenJacobi2d) {
  expect_golden("jacobi2d.cu", cu::emit_program(lower("jacobi2d", benchgpu::jacobi2d, {"a", "out"})).kernels);
}

TEST(CudaCodegen, GoldenArgmin) {
  for (const KernelCase& c : kernel_catalogue())
    if (c.name == "argmin_f64_nan_empty_1d") expect_golden("argmin.cu", cu::emit_program(c.f).kernels);
}

// ---- emitted code properties ------------------------------------------------------------------------------

TEST(CudaCodegen, UnitStrideArraysIndexWithoutStrides) {
  auto saxpy = [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  };
  const cu::Program p = cu::emit_program(lower("saxpy", saxpy, {"a", "x", "y"}));
  EXPECT_NE(p.kernels.find("y[i] = ((a * x[i]) + y[i]);"), std::string::npos) << p.kernels;
  EXPECT_NE(p.kernels.find("const float* x"), std::string::npos) << p.kernels;  // read-only arrays are const
  EXPECT_EQ(p.gpu_kernels[0].strategy, cu::Strategy::Elementwise);
}

TEST(CudaCodegen, NamesThatCollideWithCudaAreRenamed) {
  Var exp = param("exp", DType::F64), x = array_param("threadIdx", DType::F64, 1, true), kiln_n0 = param("kiln_n0", DType::F64);
  Var i = index("i");
  const ir::Function f = function("names", {exp, x, kiln_n0},
                                  {parfor({i}, {dim(x)}, store(x, {val(i)}, call(Intrinsic::Exp, {val(exp)}) + val(kiln_n0)))});
  const cu::Program p = cu::emit_program(f);
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
  const std::string src = cu::emit_program(f).kernels;
  EXPECT_NE(src.find("out[i] = (twice + 1.0f);"), std::string::npos) << src;
  EXPECT_NE(src.find("x[i] = ((x[i] * 2.0f) + 3.0f);"), std::string::npos) << src;
  EXPECT_NE(src.find("x[0LL] = (x[0LL] + 1.0f);"), std::string::npos) << src;
  require_nvrtc();
  compile_for_sm90(f);
}

TEST(CudaCodegen, ReductionStrategies) {
  for (const KernelCase& c : kernel_catalogue()) {
    if (c.name != "argmin_f64_nan_empty_1d" && c.name != "reduce_add_f32" && c.name != "saxpy_f32_unit") continue;
    const cu::Program p = cu::emit_program(c.f);
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
  EXPECT_THROW(cu::emit_program(top), CompileError);
  const ir::Function inner = function("map_inner", {x}, {parfor({j}, {dim(x)}, ir::make_map(y, {i}, {dim(x)}, at(x, {val(i)})))});
  EXPECT_THROW(cu::emit_program(inner), CompileError);
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
