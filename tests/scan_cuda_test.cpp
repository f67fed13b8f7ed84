// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Prefix scans (kiln/scan.hpp) on the CUDA target. Without a GPU: every scan form is offloaded, emitted as CUDA
// C and compiled by NVRTC for sm_90 without a warning, each of the passes its own launch, and the
// float additions stay uncontracted. On a GPU (skipped without one): every operator, kind, axis and type
// against the interpreter bit for bit, and the same bits run to run.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>

#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/geometry.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/scan_kernels.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "frontend/settings.hpp"
#include "passes/pipeline.hpp"
#include "ir/printer.hpp"
#include "ir/semantics.hpp"
#include "ir/serialize.hpp"
#include "ir/visitor.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using cudatest::compile_for_sm90;
namespace rows = cudatest::rows;

constexpr std::int64_t kB = ir::sem::kScanBlock;

// The kernels of both halves: 1-d (flat), every axis of 2-d and 3-d arrays, each operator and kind.
const auto scan_1d = [](Array<double, 1> x) {
  return std::tuple{kiln::cumsum(x), kiln::cumprod(x), kiln::cummin(x, kiln::exclusive), kiln::cummax(x)};
};
const auto scan_2d = [](Array<float, 2> x) {
  return std::tuple{kiln::cumsum(x, 0), kiln::cumsum(x, 1, kiln::exclusive), kiln::cummax(x, 0, kiln::exclusive),
                    kiln::cumprod(x, 1), kiln::cumsum(x)};
};
const auto scan_3d_int = [](Array<std::int32_t, 3> x) {
  return std::tuple{kiln::cumsum(x, 0), kiln::cumsum(x, 1), kiln::scan(x, ReduceOp::Add, 2, kiln::exclusive),
                    kiln::cummin(x, 2), kiln::cumprod(x)};
};
const auto scan_fused = [](Array<double, 2> x, Array<double, 1> w) { return kiln::cumsum(x * w, 1) * 0.5 + 1.0; };

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

TEST(ScanCudaCodegen, EveryFormCompilesWithoutWarnings) {
  require_nvrtc();
  // One scan of each form (NVRTC takes a few seconds for a kernel of several scans; the GPU tests run them).
  cu::Program prog;
  const cu::Binary bin = compile_for_sm90(rows::lower_for_cuda("scan_forms", [](Array<double, 1> x, Array<float, 2> m, Array<std::int32_t, 3> v) {
    return std::tuple{kiln::cummin(x, kiln::exclusive), kiln::cumsum(m, 0), kiln::cumprod(m, 1, kiln::exclusive),
                      kiln::scan(v, ReduceOp::Max, 1), kiln::cumsum(v)};
  }, {"x", "m", "v"}), {}, &prog);
  // A staged walk's thread fetches its chunk cells into an array indexed only in unrolled loops: registers. A
  // local-memory frame would send every staged load through memory twice.
  EXPECT_NE(prog.source().find("kiln_fetch0[kiln_r]"), std::string::npos) << prog.source();
  EXPECT_EQ(bin.ptx.find(".local"), std::string::npos) << prog.source();
  compile_for_sm90(rows::lower_for_cuda("scan_checked", [](Array<double, 1> x) { return kiln::cumsum(x); }, {"x"}, 1,
                               /*boundscheck=*/true));
}

TEST(ScanCudaCodegen, EachPassIsALaunchAndSumsAreNotContracted) {
  require_nvrtc();
  // Along the last axis of a matrix the passes run for lines of fewer blocks than a single-pass tile.
  const auto cumsum = [](Array<double, 2> x, Array<double, 1> y) { return kiln::cumsum(x * y, 1); };
  const ir::Function f = rows::lower_for_cuda("cumsum_xy", cumsum, {"x", "y"});
  cu::Program prog;
  const cu::Binary bin = compile_for_sm90(f, {}, &prog);
  // Block totals, carries, blocks with their carries (the product x * y is recomputed in both, or read from
  // its own launch: either way at least the scan's three).
  EXPECT_GE(prog.entries().size(), 3u) << prog.source();
  EXPECT_EQ(bin.ptx.find("fma.rn.f64"), std::string::npos) << "a contracted x * y + acc:\n" << prog.source();
}

// A walk: each row of x scanned in its own loop (a prange over rows, a sequential range along the row), the
// form every scan pass takes. With Shrink 1 rows have different lengths (row r walks the first n - r
// elements); with 0 every row walks all n, so blocks of 128 rows are uniform (their runs a run-time row
// stride apart).
template <int Shrink>
const auto walk = [](Array<double, 2> x, Array<double, 2> y, Array<double, 1> total) {
  prange(x.shape(0), [&](Int r) {
    Double acc = 0.0;
    range(x.shape(1) - r * Shrink, [&](Int k) {
      acc = acc + x(r, k) * 0.5;
      y(r, k) = acc;
    });
    total[r] = acc;
  });
};
const auto row_walk = walk<1>;
const auto even_walk = walk<0>;

// The same walk over runs a constant apart (a flat array, rows of 300): every full block of rows is uniform, so
// its cells go at constant offsets from one pointer; 300 steps end in a part chunk.
const auto flat_walk = [](Array<double, 1> x, Array<double, 1> y, Array<double, 1> total) {
  prange(total.shape(0), [&](Int r) {
    Double acc = 0.0;
    range(300, [&](Int k) {
      acc = acc + x[r * 300 + k] * 0.5;
      y[r * 300 + k] = acc;
    });
    total[r] = acc;
  });
};

std::vector<cu::Strategy> strategies(const ir::Function& f, std::string* source = nullptr) {
  cu::Program prog;
  compile_for_sm90(f, {}, &prog);
  if (source) *source = prog.source();
  std::vector<cu::Strategy> out;
  for (const cu::GpuKernel& k : prog.gpu_kernels) out.push_back(k.strategy);
  return out;
}

TEST(ScanCudaCodegen, EveryPassOfALongScanIsStaged) {
  require_nvrtc();
  // 1-d: block totals, the carries folded in groups (a row a group), the groups' chain (one row: a block of
  // threads fetches it ahead), blocks with carries; every type alike.
  // (A 1-d scan of compact memory is one statement on a GPU, ScansOfCompactMemoryAreOneStatement; the values of
  // a 1-d view with a step are not compact: the passes.)
  std::string src;
  const auto one_d = strategies(rows::lower_for_cuda("cumsum_1d", [](Array<double, 2> x) {
    return kiln::cummin(x(0, kiln::all), kiln::exclusive); }, {"x"}), &src);
  EXPECT_EQ(one_d, std::vector<cu::Strategy>(4, cu::Strategy::Staged)) << src;
  EXPECT_NE(src.find("__syncthreads_or"), std::string::npos) << src;
  EXPECT_EQ(strategies(rows::lower_for_cuda("cumsum_int", [](Array<std::int64_t, 2> x) { return kiln::cumsum(x(1, kiln::all)); }, {"x"})),
            std::vector<cu::Strategy>(4, cu::Strategy::Staged));
  // Blocks of a line lie a constant apart: a block whose rows are all so (checked at run time) addresses its
  // cells from one pointer at constant offsets. The block rescan's input and output share one tile.
  EXPECT_NE(src.find("kiln_uniform = __syncthreads_and("), std::string::npos) << src;
  EXPECT_NE(src.find("kiln_p0[kiln_s0 + kiln_r * 8192LL]"), std::string::npos) << src;
  std::size_t tiles = 0;
  for (std::size_t at = src.find("__shared__ double kiln_tile"); at != std::string::npos; at = src.find("__shared__ double kiln_tile", at + 1)) ++tiles;
  EXPECT_EQ(tiles, 4u) << src;  // one a pass: the in-place folds' and the rescan's stores share their loads' tiles
  // Along the last axis the passes over (row, block), staged, for any number of rows: a GPU does not take the
  // rows form there (a thread per row would read its row a row apart from its neighbours').
  EXPECT_EQ(strategies(rows::lower_for_cuda("cumsum_rows", [](Array<float, 2> x) { return kiln::cumsum(x, 1); }, {"x"})),
            std::vector<cu::Strategy>(4, cu::Strategy::Staged));
  // Along a leading axis the rows form stays (neighbouring threads, neighbouring columns: coalesced as it is).
  EXPECT_EQ(strategies(rows::lower_for_cuda("cumsum_cols", [](Array<float, 2> x) { return kiln::cumsum(x, 0); }, {"x"}))[0],
            cu::Strategy::Elementwise);
}

TEST(ScanCudaCodegen, WalksStageOnlyWhatIsSafeAndPays) {
  require_nvrtc();
  std::string src;
  EXPECT_EQ(strategies(rows::lower_for_cuda("row_walk", row_walk, {"x", "y", "total"}), &src),
            std::vector<cu::Strategy>{cu::Strategy::Staged}) << src;
  // Rows of a matrix lie a run-time stride apart: a block reads it off its first two rows (and checks the
  // rest); rows of a flat array a constant apart: immediate offsets, y's stores sharing x's tile.
  EXPECT_NE(src.find("const long long kiln_apart1 = kiln_off1[1] - kiln_off1[0];"), std::string::npos) << src;
  EXPECT_EQ(strategies(rows::lower_for_cuda("flat_walk", flat_walk, {"x", "y", "total"}), &src),
            std::vector<cu::Strategy>{cu::Strategy::Staged}) << src;
  EXPECT_NE(src.find("kiln_uniform = __syncthreads_and("), std::string::npos) << src;
  EXPECT_NE(src.find("kiln_r * 2400LL]"), std::string::npos) << src;  // 8 rows of 300 a cell
  EXPECT_NE(src.find("__shared__ double kiln_tile1[128 * (16 + 1)];  // x, y (stored)"), std::string::npos) << src;
  // A step that reads what the step before wrote cannot read a copy fetched before the chunk.
  const auto recurrence = [](Array<double, 2> y) {
    prange(y.shape(0), [&](Int r) { range(1, y.shape(1), [&](Int k) { y(r, k) = y(r, k - 1) * 0.5 + y(r, k); }); });
  };
  EXPECT_EQ(strategies(rows::lower_for_cuda("recurrence", recurrence, {"y"})), std::vector<cu::Strategy>{cu::Strategy::Elementwise});
  // Every row reading the same run (n-body) is a broadcast: staging would copy it once per row; the block
  // shares it through tiles instead (emit_tiled.cpp).
  const auto forces = [](Array<float, 1> x, Array<float, 1> f) {
    prange(x.shape(0), [&](Int i) {
      Float acc = 0.0f;
      range(x.shape(0), [&](Int j) { acc += x[j] - x[i]; });
      f[i] = acc;
    });
  };
  EXPECT_EQ(strategies(rows::lower_for_cuda("forces", forces, {"x", "f"})), std::vector<cu::Strategy>{cu::Strategy::Tiled});
  // Bounds checks may leave a thread's iterations early, before the block's barriers: a pass that keeps a check
  // is not staged (the passes whose accesses are proved in range, the groups' chain here, may be).
  cu::Program checked;
  compile_for_sm90(rows::lower_for_cuda("cumsum_checked", [](Array<double, 2> x) { return kiln::cumsum(x(0, kiln::all)); }, {"x"}, 1,
                                        /*boundscheck=*/true), {}, &checked);
  int failing = 0;
  for (const cu::GpuKernel& k : checked.gpu_kernels) {
    if (!k.may_fail) continue;
    ++failing;
    EXPECT_NE(k.strategy, cu::Strategy::Staged) << k.name;
  }
  EXPECT_GE(failing, 2) << checked.source();  // the block totals and the blocks with their carries at least
}

int scan_statements_in(const ir::Function& f) {
  struct Count : ir::IRVisitor {
    int n = 0;
    void visit(const ir::ScanStmt&) override { ++n; }
  } c;
  c.walk(f);
  return c.n;
}

TEST(ScanCudaCodegen, ScansOfCompactMemoryAreOneStatement) {
  // A 1-d parameter of unit stride, a flattened copy, an array expression: one ScanStmt each on the CUDA target
  // (the single pass, scan_kernels.hpp), and no launch of passes for the 1-d ones.
  const ir::Function one_d = rows::lower_for_cuda("scan_stmt_1d", [](Array<double, 1> x, Array<std::int32_t, 1> c) {
    return std::tuple{kiln::cumsum(x), kiln::cumsum(c, kiln::exclusive), kiln::cummax(x)};
  }, {"x", "c"});
  EXPECT_EQ(scan_statements_in(one_d), 3) << ir::to_string(one_d);
  // It goes through the kernel cache's encoding unchanged.
  EXPECT_EQ(ir::to_string(ir::deserialize(ir::serialize(one_d))), ir::to_string(one_d));
  if (std::string why; cu::nvrtc_available(&why)) {
    EXPECT_TRUE(strategies(one_d).empty());
  }
  EXPECT_EQ(scan_statements_in(rows::lower_for_cuda("scan_stmt_flat", [](Array<float, 2> m) { return kiln::cumsum(m); }, {"m"})), 1);
  // Along the last axis of an array the kernel made: the statement for lines of at least a tile's blocks, else the
  // passes (decided at run time); of an expression (fused into the passes, read twice: less than a copy and one
  // read) and of a parameter whose rows the caller lays out: the passes; along axis 0: the rows form.
  EXPECT_EQ(scan_statements_in(rows::lower_for_cuda("scan_stmt_made", [](Array<float, 2> m) {
    auto t = kiln::empty_like(m);
    t(all, all) = m * 2.0f;
    return kiln::cumsum(t, 1);
  }, {"m"})), 1);
  EXPECT_EQ(scan_statements_in(rows::lower_for_cuda("scan_stmt_expr", [](Array<float, 2> m) { return kiln::cumsum(m * 2.0f, 1); }, {"m"})), 0);
  EXPECT_EQ(scan_statements_in(rows::lower_for_cuda("scan_stmt_param", [](Array<float, 2> m) { return kiln::cumsum(m, 1); }, {"m"})), 0);
  EXPECT_EQ(scan_statements_in(rows::lower_for_cuda("scan_stmt_axis0", [](Array<float, 2> m) { return kiln::cumsum(m * 2.0f, 0); }, {"m"})), 0);
  // The CPU's trace keeps the passes (they run two-pass over blocks of threads there).
  EXPECT_EQ(scan_statements_in(rows::trace_kernel("scan_stmt_cpu", [](Array<double, 1> x) { return kiln::cumsum(x); }, {"x"})), 0);
}

TEST(ScanCudaCodegen, TheSinglePassKernelCompilesForEveryKindOfType) {
  require_nvrtc();
  // Tiles of a power of two blocks (groups of carries start at tile boundaries), up to 32 (a lane of warp 0 walks
  // each: a tile of 64 blocks of bytes left half of them unwalked, their totals never published).
  EXPECT_EQ(cu::scan_tile_rows(DType::F64, 32), 4);
  EXPECT_EQ(cu::scan_tile_rows(DType::F32, 32), 8);
  EXPECT_EQ(cu::scan_tile_rows(DType::I8, 32), 32);
  EXPECT_EQ(cu::scan_tile_rows(DType::F64, 8), 1);
  EXPECT_EQ(cu::scan_tile_rows(DType::F64, 96), 8);
  EXPECT_EQ(cu::scan_tile_rows(DType::U8, 96), 32);
  EXPECT_EQ(cu::scan_tile_rows(DType::U8, 64), 32);
  const cu::ScanForm four{false, 4};
  EXPECT_THROW(cu::scan_source(DType::I64, DType::I32, DType::I32, ReduceOp::Add, four), ValueError);  // narrowing
  EXPECT_THROW(cu::scan_source(DType::F64, DType::F64, DType::F64, ReduceOp::Add, cu::ScanForm{false, 3}), ValueError);
  EXPECT_THROW(cu::scan_source(DType::U8, DType::U8, DType::U8, ReduceOp::Add, cu::ScanForm{false, 64}), ValueError);
  // The tree (any association) only where every association gives the defined bits, with values of 4 or 8 bytes.
  EXPECT_THROW(cu::scan_source(DType::F64, DType::F64, DType::F64, ReduceOp::Add, cu::ScanForm{true, 0}), ValueError);
  EXPECT_THROW(cu::scan_source(DType::F32, DType::F32, DType::F32, ReduceOp::Mul, cu::ScanForm{true, 0}), ValueError);
  EXPECT_TRUE(cu::scan_form(DType::I32, ReduceOp::Add, 32).any_order);
  EXPECT_TRUE(cu::scan_form(DType::I64, ReduceOp::Mul, 32).any_order);
  EXPECT_TRUE(cu::scan_form(DType::F64, ReduceOp::Max, 32).any_order);
  EXPECT_TRUE(cu::scan_form(DType::F32, ReduceOp::Min, 32).any_order);
  EXPECT_FALSE(cu::scan_form(DType::F64, ReduceOp::Add, 32).any_order);
  EXPECT_EQ(cu::scan_form(DType::F32, ReduceOp::Mul, 32).rows, 8);
  EXPECT_FALSE(cu::scan_form(DType::I16, ReduceOp::Add, 32).any_order);  // 2 bytes: kiln's order (also exact)
  EXPECT_NE(cu::scan_form_reason(DType::I64, ReduceOp::Add, 32).find("integers wrap"), std::string::npos);
  EXPECT_NE(cu::scan_form_reason(DType::F64, ReduceOp::Add, 32).find("in order"), std::string::npos);
  struct Case {
    DType from, t, to;
    ReduceOp op;
  };
  const Case cases[] = {{DType::F64, DType::F64, DType::F64, ReduceOp::Add}, {DType::F64, DType::F64, DType::F64, ReduceOp::Min},
                        {DType::F32, DType::F32, DType::F32, ReduceOp::Mul}, {DType::I64, DType::I64, DType::I64, ReduceOp::Max},
                        {DType::I32, DType::I64, DType::I64, ReduceOp::Add}, {DType::Bool, DType::I64, DType::I64, ReduceOp::Add},
                        {DType::Bool, DType::I32, DType::Bool, ReduceOp::Min}, {DType::U8, DType::U8, DType::U8, ReduceOp::Mul},
                        {DType::I16, DType::I16, DType::I16, ReduceOp::Add}, {DType::I32, DType::I32, DType::I32, ReduceOp::Add},
                        {DType::F32, DType::F32, DType::F32, ReduceOp::Max}, {DType::U32, DType::U32, DType::U32, ReduceOp::Mul}};
  for (const Case& c : cases) {
    const std::string src = cu::scan_source(c.from, c.t, c.to, c.op, cu::scan_form(c.t, c.op, cu::kScanTileKib));
    const cu::Binary bin = cu::compile_source(src, "kiln_scan", "sm_90", {});
    EXPECT_TRUE(bin.log.empty()) << bin.log;
    // The row walks' chunks in registers, not a local-memory frame; float steps not contracted (nothing to
    // contract: the check that --fmad=false is on).
    EXPECT_EQ(bin.ptx.find(".local"), std::string::npos) << src;
    EXPECT_EQ(bin.ptx.find("fma.rn"), std::string::npos) << src;
    // Published values read and written as whole 64-bit words (relaxed, gpu scope: no fence), tiles loaded by
    // asynchronous 16-byte copies.
    EXPECT_NE(bin.ptx.find("ld.relaxed.gpu.global"), std::string::npos) << src;
    EXPECT_NE(bin.ptx.find("st.relaxed.gpu.global"), std::string::npos) << src;
    EXPECT_EQ(bin.ptx.find("membar"), std::string::npos) << src;
    EXPECT_EQ(bin.ptx.find("fence"), std::string::npos) << src;
    if (c.from == c.t) {
      EXPECT_NE(bin.ptx.find("cp.async.cg.shared.global"), std::string::npos) << src;
    }
  }
}

TEST(ScanCudaCodegen, TheOrderedFormCompilesForEveryTileSize) {
  require_nvrtc();
  // kiln's order at every tile KILN_CUDA_SCAN_TILE_KIB can give, 1 to 32 blocks: the group's folder reads
  // min(rows, 4) totals a lane, 32 * min(rows, 4) / rows tiles a round; no local memory, no fence.
  const std::pair<DType, int> cases[] = {{DType::F64, 1}, {DType::F32, 2}, {DType::F64, 8}, {DType::F32, 16}, {DType::U8, 32}};
  for (const auto& [t, rows] : cases) {
    const std::string src = cu::scan_source(t, t, t, ReduceOp::Add, cu::ScanForm{false, rows});
    const cu::Binary bin = cu::compile_source(src, "kiln_scan", "sm_90", {});
    EXPECT_TRUE(bin.log.empty()) << bin.log;
    EXPECT_EQ(bin.ptx.find(".local"), std::string::npos) << rows << " rows";
    EXPECT_EQ(bin.ptx.find("membar"), std::string::npos) << rows << " rows";
    EXPECT_EQ(bin.ptx.find("fence"), std::string::npos) << rows << " rows";
    // A whole tile lands in 8 bands, a group of copies each, and the walks wait for one band at a time.
    EXPECT_NE(bin.ptx.find("cp.async.commit_group"), std::string::npos) << rows << " rows";
    EXPECT_NE(bin.ptx.find("cp.async.wait_group 7"), std::string::npos) << rows << " rows";
  }
  EXPECT_NE(cu::scan_form_reason(DType::F32, ReduceOp::Add, 32).find("folded in order by one warp"), std::string::npos);
  EXPECT_NE(cu::scan_form_reason(DType::F64, ReduceOp::Add, 32).find("in 8 bands"), std::string::npos);
}

TEST(ScanCudaCodegen, ColumnWalksKeepTheirLoadsAheadOfTheirStores) {
  require_nvrtc();
  // Along a leading axis a thread walks its column down the rows (neighbouring threads, neighbouring columns). Its
  // pointers are __restrict__, so that each step's load need not wait for the step before to store; calls whose
  // arguments overlap take the variant without (emit_kernel.cpp).
  cu::Program prog;
  compile_for_sm90(rows::lower_for_cuda("cumsum_cols_into", [](Array<double, 2> x, Array<double, 2> o) { o(all, all) = kiln::cumsum(x, 0); },
                                        {"x", "o"}), {}, &prog);
  const cu::GpuKernel& k = prog.gpu_kernels.at(0);
  EXPECT_EQ(k.strategy, cu::Strategy::Elementwise) << prog.source();
  ASSERT_FALSE(k.alias_name.empty()) << prog.source();
  const std::string src = prog.source();
  const std::size_t main = src.find(k.name + "("), alias = src.find(k.alias_name + "(");
  ASSERT_NE(main, std::string::npos);
  ASSERT_NE(alias, std::string::npos);
  EXPECT_NE(src.substr(main, alias - main).find("__restrict__"), std::string::npos) << src;
  EXPECT_EQ(src.substr(alias, src.find(')', alias) - alias).find("__restrict__"), std::string::npos) << src;
  EXPECT_NE(src.find("so that the loop's loads go ahead of its stores"), std::string::npos) << src;
}

TEST(ScanCudaCodegen, FewStagedRowsSpreadOverTheSMs) {
  // A staged walk's grid: 128 rows a block once that fills every SM, fewer rows over two blocks an SM (the
  // kernel gives a block ceil(rows / grid) of them), a single row one block.
  const cu::DeviceShape h100;  // 132 SMs
  auto grid = [&](std::uint64_t rows) { return cu::geometry(cu::Strategy::Staged, 1, &rows, 128, h100, 0).grid.x; };
  EXPECT_EQ(grid(131071), 1024u);  // a 1-d scan of 2^27: 128 blocks of 1024 elements a block of threads
  EXPECT_EQ(grid(132 * 128), 132u);
  EXPECT_EQ(grid(10000), 264u);    // 38 rows a block
  EXPECT_EQ(grid(128), 128u);      // the groups of a 2^27 scan's carries: a block each
  EXPECT_EQ(grid(1), 1u);
  EXPECT_EQ(cu::geometry(cu::Strategy::Staged, 1, std::array<std::uint64_t, 1>{1000}.data(), 128, h100, 0).block.x, 128u);
}

// ---- on a GPU ---------------------------------------------------------------------------------------------------

class ScanGpu : public kiln::cudatest::GpuTest {};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return false;
  }
  return true;
}

bool same_bits(const std::vector<bool>& a, const std::vector<bool>& b) { return a == b; }

template <class... A, std::size_t... K>
void expect_members(const std::tuple<A...>& got, const std::tuple<A...>& want, const std::string& what,
                    std::index_sequence<K...>) {
  const bool same[] = {same_bits(std::get<K>(got).to_vector(), std::get<K>(want).to_vector())...};
  for (std::size_t k = 0; k < sizeof...(K); ++k) EXPECT_TRUE(same[k]) << what << " member " << k;
}
template <class... A>
void expect_tuple_bits(const std::tuple<A...>& got, const std::tuple<A...>& want, const std::string& what) {
  expect_members(got, want, what, std::index_sequence_for<A...>{});
}

template <class T>
NDArray<T> random_nd(std::vector<std::int64_t> shape, std::uint64_t seed) {
  NDArray<T> a(shape);
  std::mt19937_64 rng(seed);
  for (std::int64_t i = 0; i < a.size(); ++i) {
    if constexpr (std::is_integral_v<T>) a.data()[i] = static_cast<T>(static_cast<std::int64_t>(rng() % 7) - 3);
    else a.data()[i] = static_cast<T>(0.5 + static_cast<double>(rng() % 1000) / 1000.0) * (i % 2 ? T(-1) : T(1));
  }
  // -0 first (it survives the first sums), an infinity and a NaN last (they would swamp everything after them).
  if constexpr (std::is_floating_point_v<T>)
    if (a.size() > 7) {
      a.data()[0] = a.data()[1] = T(-0.0);
      a.data()[a.size() - 3] = -std::numeric_limits<T>::infinity();
      a.data()[a.size() - 1] = std::numeric_limits<T>::quiet_NaN();
    }
  return a;
}

TEST_F(ScanGpu, EveryFormMatchesTheInterpreterBitwise) {
  auto g1 = jit("scan_1d", scan_1d, Options().on(Target::cuda));
  auto i1 = jit("scan_1d", scan_1d, Options().on(Target::interpreter));
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, kB, kB + 1, 5 * kB + 3, std::int64_t{1000003}}) {
    const NDArray<double> x = random_nd<double>({n}, static_cast<std::uint64_t>(n));
    expect_tuple_bits(g1(x), i1(x), "1-d n=" + std::to_string(n));
  }
  auto g2 = jit("scan_2d", scan_2d, Options().on(Target::cuda));
  auto i2 = jit("scan_2d", scan_2d, Options().on(Target::interpreter));
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{0, 3}, {1, 1}, {13, 7}, {2 * kB + 5, 33}, {17, 3 * kB + 1}}) {
    const NDArray<float> x = random_nd<float>({m, n}, static_cast<std::uint64_t>(m * 31 + n));
    expect_tuple_bits(g2(x), i2(x), "2-d " + std::to_string(m) + "x" + std::to_string(n));
  }
  auto g3 = jit("scan_3d_int", scan_3d_int, Options().on(Target::cuda));
  auto i3 = jit("scan_3d_int", scan_3d_int, Options().on(Target::interpreter));
  for (auto shape : {std::vector<std::int64_t>{2, 0, 3}, {3, 5, 7}, {kB + 3, 2, 5}, {2, 3, kB + 9}}) {
    const NDArray<std::int32_t> x = random_nd<std::int32_t>(shape, 9);
    expect_tuple_bits(g3(x), i3(x), "3-d int32 " + ::testing::PrintToString(shape));
  }
  auto gf = jit("scan_fused", scan_fused, Options().on(Target::cuda));
  auto inf = jit("scan_fused", scan_fused, Options().on(Target::interpreter));
  const NDArray<double> x = random_nd<double>({37, 2 * kB + 11}, 4);
  const NDArray<double> w = random_nd<double>({2 * kB + 11}, 5);
  EXPECT_TRUE(same_bits(gf(x, w).to_vector(), inf(x, w).to_vector()));
}

/// Values with -0, +0, ±inf and NaN at places inside later blocks too (not only at the ends), integers small.
template <class T>
NDArray<T> awkward(std::vector<std::int64_t> shape, std::uint64_t seed) {
  NDArray<T> a = random_nd<T>(shape, seed);
  if constexpr (std::is_floating_point_v<T>) {
    const std::int64_t n = a.size();
    const T specials[] = {T(-0.0), T(0.0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                          std::numeric_limits<T>::quiet_NaN()};
    // At sevenths of the array: inside blocks other than the first, with ordinary numbers between them.
    if (n > 8)
      for (std::int64_t k = 0; k < 5; ++k) a.data()[(k + 1) * n / 7] = specials[k];
  }
  return a;
}

/// Runs `f` (traced, then the pipeline for the interpreter) on copies of `inputs` with the interpreter.
std::unique_ptr<cudatest::Outcome> interpret_traced(const ir::Function& traced, const cudatest::Args& inputs) {
  passes::PipelineOptions o;
  o.target = Target::interpreter;
  return cudatest::run_interpreter(passes::run_pipeline(traced, nullptr, o), inputs);
}

TEST(ScanCudaCodegen, TheGpuFormOfThePassesHasTheDefinedBits) {
  // A CUDA trace runs each block's loop of the totals and the rescan from offset 0, its first step a select
  // (ir/scan.cpp, fold_from_zero: the staged runs start aligned). The interpreter running that IR must give the
  // bits of the interpreter running the CPU's form: every operator and kind, in 1-d past one group of carries
  // and along the last axis of a matrix.
  const auto scans = [](Array<double, 1> x, Array<double, 1> a, Array<double, 1> b, Array<double, 1> c, Array<double, 1> d,
                        Array<float, 2> m, Array<float, 2> e, Array<float, 2> f) {
    a(all) = kiln::cumsum(x);
    b(all) = kiln::cumsum(x, kiln::exclusive);
    c(all) = kiln::cummax(x);
    d(all) = kiln::scan(x, ReduceOp::Min, kiln::exclusive);
    e(all, all) = kiln::cumprod(m, 1, kiln::exclusive);
    f(all, all) = kiln::cumsum(m, 1);
  };
  const std::vector<std::string> names = {"x", "a", "b", "c", "d", "m", "e", "f"};
  const ir::Function gpu = rows::trace_kernel("scans", scans, names, 1, /*lockstep_rows=*/true);
  const ir::Function cpu = rows::trace_kernel("scans", scans, names, 1, /*lockstep_rows=*/false);
  const std::int64_t n = kB * (kB + 3) + 7, cols = 2 * kB + 5;
  const NDArray<double> xv = awkward<double>({n}, 50);
  const NDArray<float> mv = awkward<float>({3, cols}, 51);
  cudatest::Args args;
  cudatest::TestArray x(DType::F64, {n}), m(DType::F32, {3, cols});
  for (std::int64_t i = 0; i < n; ++i) x.set<double>(i, xv.data()[i]);
  for (std::int64_t i = 0; i < 3 * cols; ++i) m.set<float>(i, mv.data()[i]);
  args.push_back(cudatest::array_arg(x));
  for (int r = 0; r < 4; ++r) args.push_back(cudatest::array_arg(cudatest::TestArray(DType::F64, {n})));
  args.push_back(cudatest::array_arg(m));
  for (int r = 0; r < 2; ++r) args.push_back(cudatest::array_arg(cudatest::TestArray(DType::F32, {3, cols})));
  const auto want = interpret_traced(cpu, args), got = interpret_traced(gpu, args);
  ASSERT_EQ(want->status, 0) << want->message;
  ASSERT_EQ(got->status, 0) << got->message;
  for (std::size_t p : {1, 2, 3, 4, 6, 7}) {
    const cudatest::TestArray& w = *want->args[p].array;
    const cudatest::TestArray& g = *got->args[p].array;
    std::int64_t differ = 0;
    for (std::int64_t i = 0; i < w.size(); ++i)
      differ += std::memcmp(w.element(i), g.element(i), p < 5 ? 8 : 4) != 0 && !(p < 5 ? std::isnan(w.get<double>(i)) && std::isnan(g.get<double>(i))
                                                                              : std::isnan(w.get<float>(i)) && std::isnan(g.get<float>(i)));
    EXPECT_EQ(differ, 0) << names[p];
  }
}

TEST(ScanCudaCodegen, TheScanStatementHasTheDefinedBits) {
  // The interpreter's ScanStmt (ir/scan_rows.cpp, what the GPU's single pass is tested against) against the
  // passes of the CPU's trace: integer types converted on the way in (int32 and bool sums in int64), min of bools
  // (in int32, stored as bool), narrow wrapping integers, floats with -0/inf/NaN inside later blocks, exclusive
  // scans, past one group of carries.
  const auto scans = [](Array<std::int32_t, 1> c, Array<bool, 1> b, Array<std::uint8_t, 1> u, Array<float, 1> f,
                        Array<std::int64_t, 1> a, Array<std::int64_t, 1> e, Array<bool, 1> m, Array<std::uint8_t, 1> p,
                        Array<float, 1> q, Array<float, 1> r) {
    a(all) = kiln::cumsum(c);
    e(all) = kiln::cumsum(b, kiln::exclusive);
    m(all) = kiln::cummin(b);
    p(all) = kiln::scan(u, ReduceOp::Mul, kiln::exclusive);
    q(all) = kiln::cumsum(f);
    r(all) = kiln::scan(f, ReduceOp::Max, kiln::exclusive);
  };
  const std::vector<std::string> names = {"c", "b", "u", "f", "a", "e", "m", "p", "q", "r"};
  const ir::Function gpu = rows::trace_kernel("scan_stmt", scans, names, 1, /*lockstep_rows=*/true);
  const ir::Function cpu = rows::trace_kernel("scan_stmt", scans, names, 1, /*lockstep_rows=*/false);
  ASSERT_EQ(scan_statements_in(gpu), 6);
  ASSERT_EQ(scan_statements_in(cpu), 0);
  const std::int64_t n = kB * (kB + 3) + 7;
  const NDArray<float> fv = awkward<float>({n}, 52);
  const DType in_types[] = {DType::I32, DType::Bool, DType::U8, DType::F32};
  const DType out_types[] = {DType::I64, DType::I64, DType::Bool, DType::U8, DType::F32, DType::F32};
  cudatest::Args args;
  std::mt19937_64 rng(53);
  for (DType t : in_types) {
    cudatest::TestArray x(t, {n});
    for (std::int64_t i = 0; i < n; ++i) {
      if (t == DType::F32) x.set<float>(i, fv.data()[i]);
      else if (t == DType::Bool) x.set_number(i, rng() % 97 ? 1.0 : 0.0);
      else x.set_number(i, static_cast<double>(rng() % 5) - (t == DType::I32 ? 2.0 : 0.0));
    }
    args.push_back(cudatest::array_arg(x));
  }
  for (DType t : out_types) args.push_back(cudatest::array_arg(cudatest::TestArray(t, {n})));
  const auto want = interpret_traced(cpu, args), got = interpret_traced(gpu, args);
  ASSERT_EQ(want->status, 0) << want->message;
  ASSERT_EQ(got->status, 0) << got->message;
  for (std::size_t k = 4; k < names.size(); ++k) {
    const cudatest::TestArray& w = *want->args[k].array;
    const cudatest::TestArray& g = *got->args[k].array;
    const auto bytes = static_cast<std::size_t>(size_of(out_types[k - 4]));
    std::int64_t differ = 0;
    for (std::int64_t i = 0; i < w.size(); ++i)
      differ += std::memcmp(w.element(i), g.element(i), bytes) != 0 &&
                !(out_types[k - 4] == DType::F32 && std::isnan(w.get<float>(i)) && std::isnan(g.get<float>(i)));
    EXPECT_EQ(differ, 0) << names[k];
  }
}

template <class T>
void every_operator_and_kind(const std::string& type) {
  // Every operator inclusive and exclusive, 1-d, at sizes around the block and well beyond it (primes).
  const auto all8 = [](Array<T, 1> x) {
    return std::tuple{kiln::scan(x, ReduceOp::Add), kiln::scan(x, ReduceOp::Add, kiln::exclusive), kiln::scan(x, ReduceOp::Mul),
                      kiln::scan(x, ReduceOp::Mul, kiln::exclusive), kiln::scan(x, ReduceOp::Min),
                      kiln::scan(x, ReduceOp::Min, kiln::exclusive), kiln::scan(x, ReduceOp::Max),
                      kiln::scan(x, ReduceOp::Max, kiln::exclusive)};
  };
  auto g = jit("scan_all8_" + type, all8, Options().on(Target::cuda));
  auto in = jit("scan_all8_" + type, all8, Options().on(Target::interpreter));
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{1021}, kB, std::int64_t{1031},
                         std::int64_t{65537}, (std::int64_t{1} << 20) + 3}) {
    const NDArray<T> x = awkward<T>({n}, static_cast<std::uint64_t>(n) + 11);
    expect_tuple_bits(g(x), in(x), type + " 1-d n=" + std::to_string(n));
  }
}

TEST_F(ScanGpu, EveryTypeOperatorAndKindMatchesTheInterpreterBitwise) {
  every_operator_and_kind<double>("f64");
  every_operator_and_kind<float>("f32");
  every_operator_and_kind<std::int64_t>("i64");
  every_operator_and_kind<std::int32_t>("i32");
}

TEST_F(ScanGpu, IntegerCarriesInGroupsMatchASequentialScan) {
  // More than two groups of kB carries (the last partial): integers are exact in any order, so the grouped
  // carries must give NumPy's sequential results (a host loop).
  const std::int64_t n = kB * (2 * kB + 300) + 17;
  const NDArray<std::int64_t> x = random_nd<std::int64_t>({n}, 12);
  auto k = jit("scan_groups", [](Array<std::int64_t, 1> x) {
    return std::tuple{kiln::cumsum(x), kiln::scan(x, ReduceOp::Max, kiln::exclusive), kiln::cumprod(x)};
  }, Options().on(Target::cuda));
  auto [s, emx, p] = k(x);
  std::vector<std::int64_t> ws(static_cast<size_t>(n)), wmx(static_cast<size_t>(n)), wp(static_cast<size_t>(n));
  std::uint64_t sum = 0, prod = 1;
  std::int64_t mx = std::numeric_limits<std::int64_t>::min();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t v = x.data()[i];
    wmx[static_cast<size_t>(i)] = mx;
    mx = std::max(mx, v);
    sum += static_cast<std::uint64_t>(v), prod *= static_cast<std::uint64_t>(v);  // wrapping, as kiln's int64
    ws[static_cast<size_t>(i)] = static_cast<std::int64_t>(sum), wp[static_cast<size_t>(i)] = static_cast<std::int64_t>(prod);
  }
  EXPECT_TRUE(same_bits(s.to_vector(), ws));
  EXPECT_TRUE(same_bits(emx.to_vector(), wmx));
  EXPECT_TRUE(same_bits(p.to_vector(), wp));
}

TEST_F(ScanGpu, SinglePassTilesAndGroupsMatchTheInterpreterBitwise) {
  // The single pass (scan_kernels.hpp): sizes around a tile (4 blocks of doubles by default), around a group of
  // carries (2^20 elements: 256 tiles of doubles), several groups of many tiles, a prime.
  auto g1 = jit("scan_1d_tiles", scan_1d, Options().on(Target::cuda));
  auto i1 = jit("scan_1d_tiles", scan_1d, Options().on(Target::interpreter));
  const std::int64_t group = kB * kB;
  for (std::int64_t n : {4 * kB - 1, 4 * kB, 4 * kB + 1, 12 * kB + 1, group - 1, group, group + 1, group + 4 * kB,
                         group + 4 * kB + 1, 3 * group + 4 * kB + 5, std::int64_t{2000003}}) {
    const NDArray<double> x = awkward<double>({n}, static_cast<std::uint64_t>(n) + 21);
    expect_tuple_bits(g1(x), i1(x), "1-d n=" + std::to_string(n));
  }
  // Types the kernel converts on the way in or out, and narrow wrapping integers.
  const auto typed = [](Array<std::int32_t, 1> c, Array<bool, 1> b, Array<std::uint8_t, 1> u, Array<std::int16_t, 1> h) {
    return std::tuple{kiln::cumsum(c), kiln::cumsum(b, kiln::exclusive), kiln::cummin(b), kiln::scan(u, ReduceOp::Add),
                      kiln::scan(h, ReduceOp::Max, kiln::exclusive), kiln::scan(u, ReduceOp::Mul)};
  };
  auto gt = jit("scan_typed", typed, Options().on(Target::cuda));
  auto it = jit("scan_typed", typed, Options().on(Target::interpreter));
  for (std::int64_t n : {std::int64_t{1}, 33 * kB + 7, group + 33 * kB + 7}) {
    const NDArray<std::int32_t> c = random_nd<std::int32_t>({n}, 31);
    NDArray<bool> b({n});
    NDArray<std::uint8_t> u({n});
    NDArray<std::int16_t> h({n});
    std::mt19937_64 rng(static_cast<std::uint64_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      b.data()[i] = rng() % 101 != 0;
      u.data()[i] = static_cast<std::uint8_t>(rng() % 7);
      h.data()[i] = static_cast<std::int16_t>(static_cast<int>(rng() % 60001) - 30000);
    }
    expect_tuple_bits(gt(c, b, u, h), it(c, b, u, h), "typed n=" + std::to_string(n));
  }
  // Along the last axis of an array the kernel made: lines of at least a tile's blocks in the single pass, shorter
  // ones in the passes; a few lines past one group.
  const auto rows2 = [](Array<double, 2> m) {
    auto t = kiln::empty_like(m);
    t(all, all) = m * 2.0;
    return std::tuple{kiln::cumsum(t, 1), kiln::scan(t, ReduceOp::Max, -1, kiln::exclusive)};
  };
  auto g2 = jit("scan_rows_expr", rows2, Options().on(Target::cuda));
  auto i2 = jit("scan_rows_expr", rows2, Options().on(Target::interpreter));
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{3, 4 * kB + 5}, {5, 100}, {70, 4 * kB}, {2, group + 3 * kB + 1}, {0, 5000}}) {
    const NDArray<double> x = awkward<double>({m, n}, static_cast<std::uint64_t>(m * 7 + n));
    expect_tuple_bits(g2(x), i2(x), "rows " + std::to_string(m) + "x" + std::to_string(n));
  }
}

TEST_F(ScanGpu, LastAxisRowsMatchTheRowsFormBitwise) {
  // On the GPU the last axis always runs the three passes; the interpreter takes the rows form from 64 rows:
  // the two forms must give the same bits (short rows, rows of one block, rows of several, few and many rows).
  const auto rowsum = [](Array<double, 2> x) {
    return std::tuple{kiln::cumsum(x, 1), kiln::cummax(x, -1, kiln::exclusive), kiln::cumprod(x, 1, kiln::exclusive)};
  };
  auto g = jit("scan_last_axis", rowsum, Options().on(Target::cuda));
  auto in = jit("scan_last_axis", rowsum, Options().on(Target::interpreter));
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{64, 1}, {1000, 5}, {64, kB}, {200, kB + 1}, {130, 3 * kB + 7}, {3, 5 * kB}}) {
    const NDArray<double> x = awkward<double>({m, n}, static_cast<std::uint64_t>(m + n));
    expect_tuple_bits(g(x), in(x), "rows " + std::to_string(m) + "x" + std::to_string(n));
  }
}

TEST_F(ScanGpu, LargeCumsumIsTheSameBitsRunToRun) {
  auto k = jit("scan_large", [](Array<double, 1> x) { return kiln::cumsum(x); }, Options().on(Target::cuda));
  auto ki = jit("scan_large", [](Array<double, 1> x) { return kiln::cumsum(x); }, Options().on(Target::interpreter));
  // 17409 blocks of 1024: 128 of them a block of threads (uniform blocks, then a part one) on an H100.
  const NDArray<double> x = random_nd<double>({(1 << 24) + (1 << 20) + 17}, 6);
  const auto first = k(x).to_vector();
  EXPECT_TRUE(same_bits(first, k(x).to_vector()));
  EXPECT_TRUE(same_bits(first, ki(x).to_vector()));
}

/// Runs a walk (x -> y, total) on the GPU and on the interpreter from the same x (y filled with 7.0 first, so
/// that an element a row does not walk must stay as it was), comparing both results bit for bit.
template <class F>
void expect_walk_matches(const std::string& name, const F& fn, const NDArray<double>& x, std::int64_t rows) {
  auto g = jit(name, fn, Options().on(Target::cuda));
  auto in = jit(name, fn, Options().on(Target::interpreter));
  NDArray<double> y(x.shape()), t({rows}), yi(x.shape()), ti({rows});
  std::fill(y.data(), y.data() + y.size(), 7.0);
  std::fill(yi.data(), yi.data() + yi.size(), 7.0);
  g(x, y, t);
  in(x, yi, ti);
  EXPECT_TRUE(same_bits(y.to_vector(), yi.to_vector())) << name << ", " << rows << " rows";
  EXPECT_TRUE(same_bits(t.to_vector(), ti.to_vector())) << name << ", " << rows << " rows";
}

TEST_F(ScanGpu, StagedWalksOfEveryLengthMatchTheInterpreterBitwise) {
  // Row counts that leave a block of 128 rows part full, and a single row (its block stages 2048 steps of it
  // at a time).
  for (std::int64_t rows : {std::int64_t{1}, std::int64_t{3}, std::int64_t{130}, std::int64_t{300}})
    expect_walk_matches("row_walk", row_walk, random_nd<double>({rows, std::max<std::int64_t>(rows, 2500)}, static_cast<std::uint64_t>(rows)), rows);
  // Blocks of uniform rows (a run-time stride apart) and a part block after them (the general cells).
  for (std::int64_t rows : {std::int64_t{3}, std::int64_t{17005}})
    expect_walk_matches("even_walk", even_walk, random_nd<double>({rows, 45}, static_cast<std::uint64_t>(rows) + 5), rows);
  // Blocks of uniform rows (constant offsets) and a part block after them. From 132 * 128 rows (an H100's SMs)
  // blocks take 128 rows each, the last one part full: 17005 rows give 132 uniform blocks and a part one;
  // fewer rows spread over more blocks (the general cells).
  for (std::int64_t rows : {std::int64_t{1}, std::int64_t{130}, std::int64_t{1000}, std::int64_t{17005}})
    expect_walk_matches("flat_walk", flat_walk, random_nd<double>({rows * 300}, static_cast<std::uint64_t>(rows) + 3), rows);
}

TEST_F(ScanGpu, FloatCarriesInGroupsMatchTheInterpreterBitwise) {
  // Past kB + 1 blocks the carries fold in groups of kB (ir/semantics.hpp): more than two groups, the last
  // partial, in 1-d; two groups along each axis of matrices of a few lines.
  const std::int64_t n = kB * (2 * kB + 300) + 17, m = kB * (kB + 5) + 3;
  auto g1 = jit("scan_groups_1d", scan_1d, Options().on(Target::cuda));
  auto i1 = jit("scan_groups_1d", scan_1d, Options().on(Target::interpreter));
  const NDArray<double> x = awkward<double>({n}, 40);
  expect_tuple_bits(g1(x), i1(x), "1-d n=" + std::to_string(n));
  const auto axes = [](Array<float, 2> a, Array<float, 2> b) {
    return std::tuple{kiln::cumsum(a, 1), kiln::cummax(a, 1, kiln::exclusive), kiln::cumsum(b, 0), kiln::cumsum(a)};
  };
  auto g2 = jit("scan_groups_2d", axes, Options().on(Target::cuda));
  auto i2 = jit("scan_groups_2d", axes, Options().on(Target::interpreter));
  const NDArray<float> a = random_nd<float>({3, m}, 41), b = random_nd<float>({m, 3}, 42);
  expect_tuple_bits(g2(a, b), i2(a, b), "2-d, " + std::to_string(m) + " along the axis");
}

TEST_F(ScanGpu, TreeScansMatchTheInterpreterBitwise) {
  // The any-association form (scan_kernels.hpp, scan_any_order): tiles of 4096 4-byte or 2048 8-byte values; sizes
  // around a tile, past 32 tiles (the look-back's window) and many windows, primes; int32 sums and products that
  // wrap, int32 summed in int64, float min/max with NaN, infinities and -0 inside later tiles, exclusive forms.
  const auto tree = [](Array<std::int32_t, 1> c, Array<std::int64_t, 1> l, Array<double, 1> d, Array<float, 1> f) {
    return std::tuple{kiln::scan(c, ReduceOp::Add), kiln::scan(c, ReduceOp::Mul, kiln::exclusive), kiln::cumsum(c),
                      kiln::cumsum(l, kiln::exclusive), kiln::scan(l, ReduceOp::Min), kiln::cummax(d),
                      kiln::scan(d, ReduceOp::Min, kiln::exclusive), kiln::scan(f, ReduceOp::Max, kiln::exclusive)};
  };
  auto g = jit("scan_tree", tree, Options().on(Target::cuda));
  auto in = jit("scan_tree", tree, Options().on(Target::interpreter));
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{2047}, std::int64_t{2048},
                         std::int64_t{2049}, std::int64_t{4095}, std::int64_t{4096}, std::int64_t{4097}, std::int64_t{65537},
                         std::int64_t{33 * 4096 + 5}, std::int64_t{4194319}}) {
    NDArray<std::int32_t> c({n});
    NDArray<std::int64_t> l({n});
    std::mt19937_64 rng(static_cast<std::uint64_t>(n) + 70);
    for (std::int64_t i = 0; i < n; ++i) {
      // Large values: the int32 sums wrap many times, the products too (odd factors keep them from reaching 0).
      c.data()[i] = static_cast<std::int32_t>(rng() >> 33) | 1;
      l.data()[i] = static_cast<std::int64_t>(rng());
    }
    const NDArray<double> d = awkward<double>({n}, static_cast<std::uint64_t>(n) + 71);
    const NDArray<float> f = awkward<float>({n}, static_cast<std::uint64_t>(n) + 72);
    expect_tuple_bits(g(c, l, d, f), in(c, l, d, f), "tree n=" + std::to_string(n));
  }
  // Lines of a kernel-made matrix: lines that start off 16-byte boundaries (odd lengths) take the element path.
  const auto lines = [](Array<std::int32_t, 2> m) {
    auto t = kiln::empty_like(m);
    t(all, all) = m * 3;
    return std::tuple{kiln::scan(t, ReduceOp::Add, 1), kiln::scan(t, ReduceOp::Max, 1, kiln::exclusive)};
  };
  auto gl = jit("scan_tree_lines", lines, Options().on(Target::cuda));
  auto il = jit("scan_tree_lines", lines, Options().on(Target::interpreter));
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{3, 4 * kB + 5}, {70, 4 * kB}, {2, 40 * 4096 + 3}}) {
    const NDArray<std::int32_t> x = random_nd<std::int32_t>({m, n}, static_cast<std::uint64_t>(m * 5 + n));
    expect_tuple_bits(gl(x), il(x), "tree lines " + std::to_string(m) + "x" + std::to_string(n));
  }
}

TEST_F(ScanGpu, OrderedTilesMatchTheInterpreterBitwise) {
  // kiln's order (float sums and products): f32 tiles of 8 blocks and f64 tiles of 4, full (whole 16-byte chunks)
  // and part; the look-back past 32 tiles' totals; NaN, infinities and -0 inside later blocks; exclusive forms.
  const auto ordered = [](Array<float, 1> f, Array<double, 1> d) {
    return std::tuple{kiln::cumsum(f), kiln::cumprod(f, kiln::exclusive), kiln::cumsum(d, kiln::exclusive), kiln::cumprod(d)};
  };
  auto g = jit("scan_ordered", ordered, Options().on(Target::cuda));
  auto in = jit("scan_ordered", ordered, Options().on(Target::interpreter));
  for (std::int64_t n : {std::int64_t{4093}, 8 * kB, 8 * kB + 1, 33 * 8 * kB - 1, 70 * 4 * kB + 13, std::int64_t{3145739}}) {
    NDArray<float> f = awkward<float>({n}, static_cast<std::uint64_t>(n) + 80);
    NDArray<double> d = awkward<double>({n}, static_cast<std::uint64_t>(n) + 81);
    for (std::int64_t i = 0; i < n; ++i) {  // products near 1, so that they neither vanish nor overflow at once
      f.data()[i] = std::isfinite(f.data()[i]) && f.data()[i] != 0 ? 1.0f + f.data()[i] / 4096.0f : f.data()[i];
      d.data()[i] = std::isfinite(d.data()[i]) && d.data()[i] != 0 ? 1.0 + d.data()[i] / 4096.0 : d.data()[i];
    }
    expect_tuple_bits(g(f, d), in(f, d), "ordered n=" + std::to_string(n));
  }
}

TEST_F(ScanGpu, OrderedChainsAcrossGroupsMatchTheInterpreterBitwise) {
  // kiln's order: tiles copied band by band (whole tiles) or element by element (part tiles, lines off 16-byte
  // boundaries), each group's folder publishing the chain through its group for the next. Finite values almost
  // everywhere (-0 first, -inf and NaN at the end), so that every group's chain decides later bits: sizes 0, 1, a
  // prime, just past two groups, three groups and a prime's part tile; lines of a kernel-made matrix past a group.
  const std::int64_t group = kB * kB;
  const auto sums = [](Array<double, 1> d, Array<float, 1> f) {
    return std::tuple{kiln::cumsum(d), kiln::cumsum(d, kiln::exclusive), kiln::cumsum(f), kiln::cumprod(f, kiln::exclusive)};
  };
  auto g = jit("scan_chains", sums, Options().on(Target::cuda));
  auto in = jit("scan_chains", sums, Options().on(Target::interpreter));
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7919}, 2 * group + 1, 3 * group + 4099}) {
    const NDArray<double> d = random_nd<double>({n}, static_cast<std::uint64_t>(n) + 90);
    NDArray<float> f = random_nd<float>({n}, static_cast<std::uint64_t>(n) + 91);
    for (std::int64_t i = 0; i + 3 < n; ++i) f.data()[i] = 1.0f + f.data()[i] / 8192.0f;  // products near 1
    expect_tuple_bits(g(d, f), in(d, f), "chains n=" + std::to_string(n));
  }
  const auto lines = [](Array<float, 2> m) {
    auto t = kiln::empty_like(m);
    t(all, all) = m * 0.5f;
    return std::tuple{kiln::cumsum(t, 1), kiln::cumsum(t, -1, kiln::exclusive)};
  };
  auto gl = jit("scan_chain_lines", lines, Options().on(Target::cuda));
  auto il = jit("scan_chain_lines", lines, Options().on(Target::interpreter));
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{2, 2 * group + 8 * kB}, {2, group + 8 * kB + 3}}) {
    const NDArray<float> x = random_nd<float>({m, n}, static_cast<std::uint64_t>(m * 13 + n));
    expect_tuple_bits(gl(x), il(x), "chain lines " + std::to_string(m) + "x" + std::to_string(n));
  }
}

TEST_F(ScanGpu, ColumnScansIntoArgumentsMatchTheInterpreterBitwise) {
  // Along axis 0 into an argument (the rows form, a thread a column, __restrict__ pointers), and in place (the same
  // array in and out: the variant without __restrict__): rows of 1, a prime, past a block of 1024 rows; columns
  // from 64 (the rows form's threshold); NaN, infinities and -0 inside later blocks.
  const auto into = [](Array<double, 2> x, Array<double, 2> o) { o(all, all) = kiln::cumsum(x, 0); };
  const auto maxes = [](Array<float, 2> x, Array<float, 2> o) { o(all, all) = kiln::cummax(x, 0, kiln::exclusive); };
  auto g = jit("scan_cols_into", into, Options().on(Target::cuda));
  auto in = jit("scan_cols_into", into, Options().on(Target::interpreter));
  auto gm = jit("scan_cols_max", maxes, Options().on(Target::cuda));
  auto im = jit("scan_cols_max", maxes, Options().on(Target::interpreter));
  for (auto [m, c] : {std::pair<std::int64_t, std::int64_t>{1, 64}, {1031, 67}, {2 * kB + 5, 130}, {0, 70}}) {
    const NDArray<double> x = awkward<double>({m, c}, static_cast<std::uint64_t>(m * 3 + c));
    NDArray<double> o({m, c}), oi({m, c});
    g(x, o);
    in(x, oi);
    EXPECT_TRUE(same_bits(o.to_vector(), oi.to_vector())) << "into " << m << "x" << c;
    NDArray<double> y = x.clone(), yi = x.clone();  // in place
    g(y, y);
    in(yi, yi);
    EXPECT_TRUE(same_bits(y.to_vector(), yi.to_vector())) << "in place " << m << "x" << c;
    const NDArray<float> f = awkward<float>({m, c}, static_cast<std::uint64_t>(m * 5 + c));
    NDArray<float> fo({m, c}), foi({m, c});
    gm(f, fo);
    im(f, foi);
    EXPECT_TRUE(same_bits(fo.to_vector(), foi.to_vector())) << "max " << m << "x" << c;
  }
}

}  // namespace
}  // namespace kiln
