// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencils on the CUDA target through the tiled form (codegen/cuda/emit_stencil.cpp): kiln::stencil with every
// border mode in 1-, 2- and 3-d, and stencils written as pranges whose reads clamp their indices (band_clamps
// gives them the interior test that lower_stencils gives a kiln::stencil). Without a GPU: each kernel is tiled,
// 3-d ones march along z, border elements take the whole body, and NVRTC compiles them without warnings in a
// bounded amount of CUDA C. On a GPU: every one against the interpreter, bit for bit, on sizes of 1, primes,
// shapes smaller than a strip or a tile, several z chunks, NaN and infinities, in the default form and in
// forms with other rows and rounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/gpu/kiln_kernels.hpp"
#include "bench/suite/kernels.hpp"
#include "codegen/cuda/cuda_backend.hpp"
#include "codegen/cuda/geometry.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "frontend/settings.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using namespace cudatest;

/// The borders of kiln::stencil (kiln::Border), each as StencilOptions.
struct BorderCase {
  const char* name;
  StencilOptions opts;
};
std::vector<BorderCase> borders() {
  return {{"constant", kiln::constant(2.5)},         {"nearest", kiln::border(Border::nearest)}, {"wrap", kiln::border(Border::wrap)},
          {"reflect", kiln::border(Border::reflect)}, {"mirror", kiln::border(Border::mirror)},   {"skip", kiln::border(Border::skip)}};
}

/// Asymmetric weights: a read at the wrong offset changes the result.
float weight(int dz, int dy, int dx) { return 1.0f / static_cast<float>(2 + (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1)); }

/// A stencil of each shape the tests use, applied into `out` (ranks 1-3; 3-d with 7 or 27 points).
template <int N>
ir::Function stencil_kernel(const std::string& name, int points, const StencilOptions& border) {
  if constexpr (N == 1) {
    // Reaches two to the left and one to the right: the tiles' halos are not symmetric.
    const auto st = kiln::stencil(name, [](Window<float, 1> a) { return 0.5f * a(-2) + 0.25f * a(-1) + a(0) + 0.125f * a(1); }, border);
    auto k = [&](Array<float, 1> in, Array<float, 1> out) { st.into(out, in); };
    return rows::lower_for_cuda(name, k, {"in", "out"}, 1);
  } else if constexpr (N == 2) {
    const auto st = kiln::stencil(name, [](Window<float, 2> a) {
      return a(0, 0) + 0.5f * a(-1, 0) + 0.25f * a(1, 0) + 0.125f * a(0, -1) + 0.0625f * a(0, 1) + 0.03125f * a(1, 1);
    }, border);
    auto k = [&](Array<float, 2> in, Array<float, 2> out) { st.into(out, in); };
    return rows::lower_for_cuda(name, k, {"in", "out"}, 2);
  } else if (points == 7) {
    const auto st = kiln::stencil(name, [](Window<float, 3> a) {
      return weight(0, 0, 0) * a(0, 0, 0) + weight(-1, 0, 0) * a(-1, 0, 0) + weight(1, 0, 0) * a(1, 0, 0) + weight(0, -1, 0) * a(0, -1, 0) +
             weight(0, 1, 0) * a(0, 1, 0) + weight(0, 0, -1) * a(0, 0, -1) + weight(0, 0, 1) * a(0, 0, 1);
    }, border);
    auto k = [&](Array<float, 3> in, Array<float, 3> out) { st.into(out, in); };
    return rows::lower_for_cuda(name, k, {"in", "out"}, 3);
  } else {
    const auto st = kiln::stencil(name, [](Window<float, 3> a) {
      Float s = 0.0f;
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) s = s + weight(dz, dy, dx) * a(dz, dy, dx);
      return s;
    }, border);
    auto k = [&](Array<float, 3> in, Array<float, 3> out) { st.into(out, in); };
    return rows::lower_for_cuda(name, k, {"in", "out"}, 3);
  }
}

/// 3-d stencils beyond 7 and 27 points: a double star of radius 2 (13 points, planes z - 2 .. z + 2), and two
/// float inputs where the second is read at its own plane only (a marching group of one plane beside one of
/// three).
ir::Function wide_star_kernel(const std::string& name, const StencilOptions& border) {
  const auto st = kiln::stencil(name, [](Window<double, 3> a) {
    Double s = 0.0;
    for (int r = -2; r <= 2; ++r) {
      s = s + static_cast<double>(weight(r / 2, r % 2, 0)) * a(r, 0, 0);
      if (r != 0) s = s + static_cast<double>(weight(0, r / 2, r % 2)) * a(0, r, 0) + static_cast<double>(weight(r % 2, 0, r / 2)) * a(0, 0, r);
    }
    return s;
  }, border);
  auto k = [&](Array<double, 3> in, Array<double, 3> out) { st.into(out, in); };
  return rows::lower_for_cuda(name, k, {"in", "out"}, 3);
}
ir::Function two_input_kernel(const std::string& name, const StencilOptions& border) {
  const auto st = kiln::stencil(name, [](Window<float, 3> a, Window<float, 3> b) {
    return (a(-1, 0, 0) + a(1, 0, -1) + 0.5f * a(0, 1, 1)) * b(0, 0, 0) + 0.25f * (b(0, -1, 0) + b(0, 0, 1));
  }, border);
  auto k = [&](Array<float, 3> a, Array<float, 3> b, Array<float, 3> out) { st.into(out, a, b); };
  return rows::lower_for_cuda(name, k, {"a", "b", "out"}, 3);
}

/// The 27-point stencil summed from plane z + 1 down: the planes arrive along the walk in the other order than the
/// fold's, so it keeps every live plane in registers (no running sums).
ir::Function down_cube_kernel(const std::string& name) {
  const auto st = kiln::stencil(name, [](Window<float, 3> a) {
    Float s = 0.0f;
    for (int dz = 1; dz >= -1; --dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) s = s + weight(dz, dy, dx) * a(dz, dy, dx);
    return s;
  }, kiln::border(Border::nearest));
  auto k = [&](Array<float, 3> in, Array<float, 3> out) { st.into(out, in); };
  return rows::lower_for_cuda(name, k, {"in", "out"}, 3);
}

/// The same stencils (nearest border) as pranges clamping every read's indices.
Int clamp_to(const Int& i, const Int& n) { return kiln::min(kiln::max(i, 0), n - 1); }
ir::Function clamped_kernel(int rank, int points, passes::PipelineReport* report = nullptr) {
  if (rank == 1) {
    auto k = [](Array<float, 1> in, Array<float, 1> out) {
      const Int n = in.shape(0);
      prange(n, [&](Int i) { out[i] = 0.5f * in[clamp_to(i - 2, n)] + 0.25f * in[clamp_to(i - 1, n)] + in[i] + 0.125f * in[clamp_to(i + 1, n)]; });
    };
    return rows::lower_for_cuda("clamped1", k, {"in", "out"}, 1, false, report);
  }
  if (rank == 2) {
    auto k = [](Array<float, 2> in, Array<float, 2> out) {
      const Int ny = in.shape(0), nx = in.shape(1);
      prange(shape(ny, nx), [&](Int y, Int x) {
        auto a = [&](int dy, int dx) { return in(clamp_to(y + dy, ny), clamp_to(x + dx, nx)); };
        out(y, x) = a(0, 0) + 0.5f * a(-1, 0) + 0.25f * a(1, 0) + 0.125f * a(0, -1) + 0.0625f * a(0, 1) + 0.03125f * a(1, 1);
      });
    };
    return rows::lower_for_cuda("clamped2", k, {"in", "out"}, 2, false, report);
  }
  auto body = [points](Array<float, 3> in, Array<float, 3> out) {
    const Int nz = in.shape(0), ny = in.shape(1), nx = in.shape(2);
    prange(shape(nz, ny, nx), [&](Int z, Int y, Int x) {
      Float s = 0.0f;
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            if (points == 27 || std::abs(dz) + std::abs(dy) + std::abs(dx) <= 1)
              s = s + weight(dz, dy, dx) * in(clamp_to(z + dz, nz), clamp_to(y + dy, ny), clamp_to(x + dx, nx));
      out(z, y, x) = s;
    });
  };
  return rows::lower_for_cuda(points == 7 ? "clamped7" : "clamped27", body, {"in", "out"}, 3, false, report);
}

/// In-place 2-d updates, where an iteration loads the element it stores (fdtd-2d's): across rows (ey's), along
/// rows (ex's), both in one function, a clamped read (interior tests, border elements), and a store under an if.
/// The strips' copies load all of their elements before they store (emit_stencil.cpp, strip_copies).
ir::Function in_place_kernel(int variant) {
  const auto all = kiln::all;
  const auto tail = slice(1, kiln::none), head = slice(0, -1);
  switch (variant) {
    case 0: {
      auto k = [&](Array<float, 2> b, Array<float, 2> a) { a(tail, all) -= 0.5f * (b(tail, all) - b(head, all)); };
      return rows::lower_for_cuda("in_place_rows", k, {"b", "a"}, 2);
    }
    case 1: {
      auto k = [&](Array<float, 2> b, Array<float, 2> a) { a(all, tail) -= 0.5f * (b(all, tail) - b(all, head)); };
      return rows::lower_for_cuda("in_place_columns", k, {"b", "a"}, 2);
    }
    case 2: {
      auto k = [&](Array<float, 2> b, Array<float, 2> a, Array<float, 2> c) {
        a(tail, all) -= 0.5f * (b(tail, all) - b(head, all));
        c(all, tail) -= 0.25f * (b(all, tail) - b(all, head));
      };
      return rows::lower_for_cuda("in_place_both", k, {"b", "a", "c"}, 2);
    }
    case 3: {
      auto k = [](Array<float, 2> b, Array<float, 2> a) {
        const Int ny = b.shape(0), nx = b.shape(1);
        prange(shape(ny, nx), [&](Int y, Int x) { a(y, x) = a(y, x) + 0.5f * b(clamp_to(y - 1, ny), x) + 0.25f * b(y, clamp_to(x + 1, nx)); });
      };
      return rows::lower_for_cuda("in_place_clamped", k, {"b", "a"}, 2);
    }
    default: {
      auto k = [](Array<float, 2> b, Array<float, 2> a) {
        const Int ny = b.shape(0), nx = b.shape(1);
        prange(shape(ny, nx), [&](Int y, Int x) {
          if_(b(y, x) > 0.0f, [&] { a(y, x) = a(y, x) - 0.5f * (b(y, x) - b(clamp_to(y - 1, ny), x)); });
        });
      };
      return rows::lower_for_cuda("in_place_if", k, {"b", "a"}, 2);
    }
  }
}
constexpr int kInPlaceVariants = 5;

/// The first kernel of `p` that is a stencil kernel, or null.
const cu::GpuKernel* stencil_of(const cu::Program& p) {
  for (const cu::GpuKernel& k : p.gpu_kernels)
    if (k.stencil_columns > 0) return &k;
  return nullptr;
}

/// The emission settings the rules are stated for (the environment's may turn the stencil form off).
cu::EmitOptions tiled() {
  cu::EmitOptions o;
  o.unroll = 4;
  o.stencil = {cu::StencilMode::Shared, 4, 4};
  return o;
}

/// The same with marching kernels in the warp form (emit_march.cpp): each thread's rows of every live plane in
/// registers, which the tests of the registers' plans are about.
cu::EmitOptions warp() {
  cu::EmitOptions o = tiled();
  o.stencil.march_form = cu::MarchForm::Warp;
  return o;
}

/// The registers a marching kernel's plan counted ("about N registers a thread" in GpuKernel::plan).
int estimate(const std::string& plan) {
  const std::size_t at = plan.find("about ");
  return at == std::string::npos ? 1 << 20 : std::atoi(plan.c_str() + at + 6);
}

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

// ---- without a GPU: the form chosen, the CUDA C, NVRTC ------------------------------------------------------------

TEST(CudaStencilTiles, ClampedPrangesTakeTheInteriorTestAndTheTiledForm) {
  for (int rank : {1, 2, 3})
    for (int points : rank == 3 ? std::vector<int>{7, 27} : std::vector<int>{0}) {
      passes::PipelineReport report;
      const ir::Function f = clamped_kernel(rank, points, &report);
      SCOPED_TRACE(f.name);
      std::string notes;
      for (const auto& n : report.notes)
        if (n.pass == "band_clamps") notes += n.text + "\n";
      EXPECT_NE(notes.find("clamps "), std::string::npos) << notes;
      EXPECT_NE(notes.find("each element tests"), std::string::npos) << notes;
      // The offload pass's note says what the CUDA backend does with the shape.
      std::string offload;
      for (const auto& n : report.notes)
        if (n.pass == "offload") offload += n.text + "\n";
      EXPECT_NE(offload.find("bounds test(s) of the indices mark an interior"), std::string::npos) << offload;
      EXPECT_EQ(offload.find("2.5-d blocking") != std::string::npos, rank == 3) << offload;
      const cu::Program p = cu::emit_program(offloaded(f), tiled());
      const cu::GpuKernel* k = stencil_of(p);
      ASSERT_NE(k, nullptr) << p.kernels;
      EXPECT_EQ(k->stencil_march, rank == 3) << p.kernels;
      EXPECT_NE(p.kernels.find("bounds test(s) compute the interior arm"), std::string::npos) << p.kernels;
      // The interior arm reads the windows: no clamp is left in the copies before the border loop.
      const std::string main = p.kernels.substr(0, p.kernels.find("while (kiln_border)"));
      const std::size_t first_copy = main.find(rank == 3 ? "if ((kiln_run >> 0) & 1u)" : "if (kiln_t + 0ull");
      ASSERT_NE(first_copy, std::string::npos) << p.kernels;
      EXPECT_EQ(main.find("kiln_min(", first_copy), std::string::npos) << p.kernels;
    }
}

TEST(CudaStencilTiles, EveryBorderModeAndRankIsTiled) {
  for (const BorderCase& b : borders()) {
    for (int rank : {1, 2, 3}) {
      for (int points : rank == 3 ? std::vector<int>{7, 27} : std::vector<int>{0}) {
        const std::string name = std::string("st_") + b.name + std::to_string(rank) + "_" + std::to_string(points);
        SCOPED_TRACE(name);
        const ir::Function f = rank == 1 ? stencil_kernel<1>(name, points, b.opts)
                               : rank == 2 ? stencil_kernel<2>(name, points, b.opts)
                                           : stencil_kernel<3>(name, points, b.opts);
        const cu::Program p = cu::emit_program(offloaded(f), tiled());
        const cu::GpuKernel* k = stencil_of(p);
        ASSERT_NE(k, nullptr) << p.kernels;
        EXPECT_EQ(k->stencil_march, rank == 3) << p.kernels;
        EXPECT_EQ(k->stencil_mode, cu::StencilMode::Shared);
        // A skip border into an existing array computes its interior only: nothing to test.
        const bool tests = p.kernels.find("bounds test(s) compute the interior arm") != std::string::npos;
        EXPECT_EQ(tests, std::string(b.name) != "skip") << p.kernels;
      }
    }
  }
}

TEST(CudaStencilTiles, MarchingKernelsHoldEveryReadInRegisters) {
  // The body of a marching kernel reads registers only: each step stores its newest plane's rows to the tile
  // and reads the neighbours back once, whatever the shape, radius, border, element type or input count.
  struct Case {
    std::string name;
    ir::Function f;
  };
  std::vector<Case> cases;
  for (const BorderCase& b : borders()) {
    cases.push_back({std::string("cube_") + b.name, stencil_kernel<3>(std::string("cube_") + b.name, 27, b.opts)});
    cases.push_back({std::string("wide_") + b.name, wide_star_kernel(std::string("wide_") + b.name, b.opts)});
    cases.push_back({std::string("two_") + b.name, two_input_kernel(std::string("two_") + b.name, b.opts)});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const cu::Program p = cu::emit_program(offloaded(c.f), warp());
    const cu::GpuKernel* k = stencil_of(p);
    ASSERT_NE(k, nullptr) << p.kernels;
    EXPECT_TRUE(k->stencil_march) << p.kernels;
    const std::size_t walk = p.kernels.find("for (unsigned long long kiln_z = kiln_zbeg;");
    ASSERT_NE(walk, std::string::npos) << p.kernels;
    // The copies run on a bit of kiln_run (inside the array and the interior), or of kiln_live without tests.
    const std::size_t bodies = std::min(p.kernels.find("if ((kiln_run >> 0) & 1u)", walk), p.kernels.find("if ((kiln_live >> 0) & 1u)", walk));
    const std::size_t end = std::min(p.kernels.find("while (kiln_border)", walk), p.kernels.find("each plane moves one down", walk));
    ASSERT_NE(bodies, std::string::npos) << p.kernels;
    // Between the first body copy and the border loop (or the step's end): no tile read and no load; and the
    // bounds tests of the rows and columns were decided before the walk (kiln_inner), the plane's once a step.
    const std::string copies = p.kernels.substr(bodies, end - bodies);
    EXPECT_EQ(copies.find("kiln_tile"), std::string::npos) << copies;
    EXPECT_EQ(copies.find("in["), std::string::npos) << copies;
    EXPECT_EQ(copies.find("_lo1"), std::string::npos) << copies;
    EXPECT_EQ(copies.find("_lo2"), std::string::npos) << copies;
    EXPECT_EQ(copies.find("_lo0"), std::string::npos) << copies;
    // Each copy stores through the step's pointer at a constant offset or a multiple of the row stride.
    EXPECT_EQ(copies.find("out["), std::string::npos) << copies;
    EXPECT_NE(copies.find("kiln_o0["), std::string::npos) << copies;
    // Whatever the bounds tests, they read one index each here: the border elements run after the walk, not
    // beside the kept planes' registers inside it.
    const std::size_t step_end = p.kernels.find("each plane moves one down", walk);
    EXPECT_EQ(p.kernels.substr(walk, step_end - walk).find("kiln_border"), std::string::npos) << p.kernels;
    if (c.name.find("skip") == std::string::npos) {
      EXPECT_NE(p.kernels.find("while (kiln_border)", step_end), std::string::npos) << p.kernels;
    }
    // The prefetch is kept where its registers fit, and the plan says how many it counted.
    const bool ahead = p.kernels.find("loading the next plane while a step computes") != std::string::npos;
    EXPECT_NE(k->plan.find(ahead ? "1 plane(s) loaded ahead" : "0 plane(s) loaded ahead"), std::string::npos) << k->plan;
    EXPECT_LE(estimate(k->plan), 128 + 24) << k->plan;  // the cap and a few words to spill
  }
  // The registers of the form fit the budget (the launch bounds' cap, or a smaller override): a 27-point float
  // stencil gives up its prefetch, then rows (the prefetch decided again for each), as the budget shrinks.
  const ir::Function cube = down_cube_kernel("cube_rows");
  int last_rows = 16, last_ahead = 1;
  for (int budget : {0, 112, 96, 80, 64}) {
    cu::EmitOptions o = warp();
    o.stencil.march_registers = budget;
    const cu::GpuKernel* k = stencil_of(cu::emit_program(offloaded(cube), o));
    ASSERT_NE(k, nullptr);
    SCOPED_TRACE(k->plan);
    const int ahead = k->plan.find("1 plane(s) loaded ahead") != std::string::npos ? 1 : 0;
    EXPECT_LE(estimate(k->plan), budget ? budget : 128 + 24);
    EXPECT_LE(2 * k->stencil_rows + ahead, 2 * last_rows + last_ahead) << "budget " << budget;
    last_rows = k->stencil_rows, last_ahead = ahead;
  }
  EXPECT_EQ(last_rows, 1);
  EXPECT_EQ(last_ahead, 0);
  {
    cu::EmitOptions o = warp();
    o.stencil.march_registers = 48;  // under what even one row needs: said, and ptxas left to spill
    const cu::GpuKernel* k = stencil_of(cu::emit_program(offloaded(cube), o));
    ASSERT_NE(k, nullptr);
    EXPECT_NE(k->plan.find("even the smallest form passes the budget"), std::string::npos) << k->plan;
  }
  // A cube of doubles (the suite's stencil27, clamped reads): twice the words per value. 4 rows without the
  // prefetch (24 KiB in flight) are estimated at 150 registers, within the cap and the 24 words that may spill
  // (ptxas: 128 registers and 88 bytes of spills; 1.882 ms on the H100 against 2.106 with 2 rows).
  cu::EmitOptions d = warp();
  const cu::GpuKernel* k27 = stencil_of(cu::emit_program(offloaded(rows::lower_for_cuda("stencil27", suite::kiln_kernels::stencil27, {"out", "in"}, 3)), d));
  ASSERT_NE(k27, nullptr);
  EXPECT_TRUE(k27->stencil_march);
  EXPECT_LE(estimate(k27->plan), 128 + 24) << k27->plan;
  EXPECT_NE(k27->plan.find("4 row(s), 1 round(s), 0 plane(s) loaded ahead"), std::string::npos) << k27->plan;
  EXPECT_NE(k27->plan.find("put 24576 bytes in flight"), std::string::npos) << k27->plan;
  // The prefetch by the bytes a step has in flight: a float 7-point stencil at 4 rows (6 window rows x 4 bytes x
  // 512 threads, 12 KiB) asks for it; the suite's double heat-3d at 4 rows (24 KiB) does not.
  const cu::GpuKernel* s7 = stencil_of(cu::emit_program(offloaded(rows::lower_for_cuda("star7", benchgpu::star7_stencil, {"in", "out"}, 3)), d));
  ASSERT_NE(s7, nullptr);
  EXPECT_NE(s7->plan.find("4 row(s), 1 round(s), 1 plane(s) loaded ahead"), std::string::npos) << s7->plan;
  EXPECT_NE(s7->plan.find("put 12288 bytes in flight"), std::string::npos) << s7->plan;
  const cu::Program heat = cu::emit_program(offloaded(rows::lower_for_cuda("heat_3d", suite::kiln_kernels::heat_3d, {"A", "B", "tsteps"}, 3)), d);
  for (const cu::GpuKernel& k : heat.gpu_kernels) {
    if (!k.stencil_march) continue;
    EXPECT_NE(k.plan.find("4 row(s), 1 round(s), 0 plane(s) loaded ahead"), std::string::npos) << k.plan;
    EXPECT_NE(k.plan.find("put 24576 bytes in flight"), std::string::npos) << k.plan;
  }
  // Without prefetch each step loads its own plane; two planes ahead, a trip runs two steps on two buffers.
  cu::EmitOptions o = warp();
  o.stencil.march_prefetch = 0;
  const cu::Program p = cu::emit_program(offloaded(cube), o);
  EXPECT_EQ(p.kernels.find("in flight while this step computes"), std::string::npos) << p.kernels;
  EXPECT_EQ(p.kernels.find("kiln_nb0_"), std::string::npos) << p.kernels;
  EXPECT_NE(cu::emission_settings(o).find("march_prefetch=0"), std::string::npos);
  o.stencil.march_prefetch = 2;
  o.stencil.march_min_blocks = 1;  // 255 registers: room for two planes ahead
  const cu::Program two = cu::emit_program(offloaded(cube), o);
  EXPECT_NE(two.kernels.find("kiln_z += 2"), std::string::npos) << two.kernels;
  EXPECT_NE(two.kernels.find("kiln_nb0_"), std::string::npos) << two.kernels;
  EXPECT_THROW(cu::emit_program(offloaded(cube), [] {
                 cu::EmitOptions bad = warp();
                 bad.stencil.march_prefetch = 3;
                 return bad;
               }()),
               ValueError);
}

TEST(CudaStencilTiles, RunningSumsWhereTheFoldIsOrderedByPlane) {
  // A body whose value is a left fold of terms each reading one plane, in the order the planes arrive, marches as
  // running sums (march_sums): only the newest plane in registers (no register of an older plane), a sum per output
  // plane; the plan says so. Anything else keeps every live plane, and the plan says what stopped it.
  auto plan_of = [](const ir::Function& f) {
    const cu::Program p = cu::emit_program(offloaded(f), warp());
    const cu::GpuKernel* k = stencil_of(p);
    EXPECT_NE(k, nullptr) << p.kernels;
    return std::make_pair(k ? k->plan : std::string(), p.kernels);
  };
  struct Case {
    std::string name;
    ir::Function f;
    const char* why;  ///< nullptr: running sums
  };
  std::vector<Case> cases;
  for (const BorderCase& b : borders()) cases.push_back({std::string("cube_") + b.name, stencil_kernel<3>(std::string("cube_") + b.name, 27, b.opts), nullptr});
  cases.push_back({"cube27", rows::lower_for_cuda("cube27", benchgpu::cube27_stencil, {"in", "out"}, 3), nullptr});
  // star7's first term reads plane z and its second planes z - 1, z and z + 1; the wide star alternates planes.
  cases.push_back({"star7", rows::lower_for_cuda("star7", benchgpu::star7_stencil, {"in", "out"}, 3), "reads 3 planes"});
  cases.push_back({"wide", wide_star_kernel("wide", kiln::border(Border::nearest)), "not ordered by plane"});
  cases.push_back({"two_inputs", two_input_kernel("two_inputs", kiln::border(Border::nearest)), "more than one window"});
  cases.push_back({"down27", down_cube_kernel("down27"), "not ordered by plane"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto [plan, kernels] = plan_of(c.f);
    if (c.why) {
      EXPECT_NE(plan.find("no running sums: "), std::string::npos) << plan;
      EXPECT_NE(plan.find(c.why), std::string::npos) << plan;
      EXPECT_EQ(kernels.find("kiln_s0_0_0"), std::string::npos) << kernels;
      continue;
    }
    EXPECT_NE(plan.find("running sums: the store's value is a left fold of"), std::string::npos) << plan;
    EXPECT_NE(kernels.find("kiln_s0_0_0 = "), std::string::npos) << kernels;
    EXPECT_EQ(kernels.find("_p0_0"), std::string::npos) << kernels;  // plane z - 1's registers
    EXPECT_NE(kernels.find("_p2_0"), std::string::npos) << kernels;  // the newest plane's
    EXPECT_LE(estimate(plan), 128) << plan;
  }
  // The float cube's registers leave room for twice the rows (8), within the cap and without spill words.
  EXPECT_NE(plan_of(cases[1].f).first.find("rows doubled from 4"), std::string::npos);
}

TEST(CudaStencilTiles, BlockFormStagesEachPlaneOnceInSharedTiles) {
  // By default a marching kernel whose reads are all of 3-d arrays at [z + dz, y + d, x + c] takes the block form
  // (emit_march_block.cpp): blocks of 32 x 8 threads, one tile of (y, x) a block, a ring of shared slots per array
  // (a slot per plane read, one more: one barrier a step), and every read of the step's copies a shared load at a
  // constant offset from the thread's cell. KILN_CUDA_MARCH_FORM=warp keeps the warp form.
  struct Case {
    std::string name;
    ir::Function f;
    std::vector<std::string> tiles;  ///< each group's ring, as its declaration's comment says
  };
  std::vector<Case> cases;
  cases.push_back({"star7", rows::lower_for_cuda("star7", benchgpu::star7_stencil, {"in", "out"}, 3), {"4 planes of a 34 x 34 tile"}});
  // Running sums read the newest plane only: two slots.
  cases.push_back({"cube27", rows::lower_for_cuda("cube27", benchgpu::cube27_stencil, {"in", "out"}, 3), {"2 planes of a 34 x 34 tile"}});
  cases.push_back({"cube27_clamped", rows::lower_for_cuda("cube27_clamped", benchgpu::cube27_clamped, {"in", "out"}, 3), {"4 planes of a 18 x 34 tile"}});
  cases.push_back({"wide", wide_star_kernel("wide", kiln::border(Border::mirror)), {"6 planes of a 12 x 36 tile"}});
  cases.push_back({"two_inputs", two_input_kernel("two_inputs", kiln::border(Border::wrap)), {"4 planes of a 33 x 34 tile", "2 planes of a 33 x 33 tile"}});
  cases.push_back({"heat_3d", rows::lower_for_cuda("heat_3d", suite::kiln_kernels::heat_3d, {"A", "B", "tsteps"}, 3), {"4 planes of a 18 x 34 tile"}});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const cu::Program p = cu::emit_program(offloaded(c.f), tiled());
    int marching = 0;
    for (const cu::GpuKernel& k : p.gpu_kernels) {
      if (!k.stencil_march) continue;
      ++marching;
      EXPECT_EQ(k.march_block_rows, 8) << k.plan;
      EXPECT_EQ(k.stencil_columns, 1);
      EXPECT_LE(estimate(k.plan), 64) << k.plan;  // four blocks of 256 an SM
      EXPECT_NE(k.plan.find("block form: blocks of 32 x 8 threads walk one tile of (y, x) each, " + std::to_string(k.stencil_rows) + " row(s) a thread"),
                std::string::npos)
          << k.plan;
      EXPECT_NE(k.plan.find("2 plane(s) loaded ahead"), std::string::npos) << k.plan;
      const std::size_t begin = p.kernels.find(k.name + "(");
      ASSERT_NE(begin, std::string::npos) << p.kernels;
      const std::string kernel = p.kernels.substr(begin, p.kernels.find("\n}\n", begin) - begin);
      EXPECT_NE(p.kernels.rfind("__launch_bounds__(256, 4) " + k.name + "(", begin), std::string::npos) << p.kernels;
      for (std::size_t g = 0; g < c.tiles.size(); ++g) EXPECT_NE(kernel.find("kiln_bt" + std::to_string(g) + "["), std::string::npos) << kernel;
      for (const std::string& t : c.tiles) EXPECT_NE(kernel.find(t), std::string::npos) << t << "\n" << kernel;
      // The walk: two steps a trip, a barrier each; the copies read the step's slots, never an array.
      const std::size_t walk = kernel.find("for (unsigned long long kiln_z = kiln_zbeg; kiln_z < kiln_zend; kiln_z += 2)");
      ASSERT_NE(walk, std::string::npos) << kernel;
      const std::size_t end = kernel.find("__syncthreads();  // the next tile's planes", walk);
      ASSERT_NE(end, std::string::npos) << kernel;
      const std::string steps = kernel.substr(walk, end - walk);
      std::size_t barriers = 0;
      for (std::size_t at = steps.find("__syncthreads()"); at != std::string::npos; at = steps.find("__syncthreads()", at + 1)) ++barriers;
      EXPECT_EQ(barriers, 2u) << steps;
      const std::size_t bodies = std::min(steps.find("if ((kiln_run >> 0) & 1u)"), steps.find("if ((kiln_live >> 0) & 1u)"));
      ASSERT_NE(bodies, std::string::npos) << steps;
      const std::string copies = steps.substr(bodies, steps.find("if (kiln_z + 1 >= kiln_zend) break;", bodies) - bodies);
      // The copies read the slots (running sums: the sums did, and a copy stores its finished sum).
      const bool sums = k.plan.find("; running sums: ") != std::string::npos;
      const std::size_t barrier = steps.find("__syncthreads()");
      EXPECT_NE(steps.substr(barrier, bodies - barrier).find(sums ? "kiln_s0_0_0 = (kiln_s0_0_0 + " : "kiln_t0_"),
                std::string::npos)
          << steps;
      EXPECT_NE(copies.find(sums ? "kiln_s0_" : "kiln_t0_"), std::string::npos) << copies;
      for (const char* a : {"in[", "a[", "b[", "A[", "B["}) EXPECT_EQ(copies.find(a), std::string::npos) << a << "\n" << copies;
      EXPECT_EQ(copies.find("kiln_border"), std::string::npos) << copies;  // border elements after the walk
    }
    EXPECT_GE(marching, 1) << p.kernels;
    // The warp form on request, and in the cache key.
    const cu::Program w = cu::emit_program(offloaded(c.f), warp());
    for (const cu::GpuKernel& k : w.gpu_kernels) {
      EXPECT_EQ(k.march_block_rows, 0) << k.plan;
      EXPECT_EQ(k.plan.find("block form"), std::string::npos) << k.plan;
    }
  }
  EXPECT_NE(cu::emission_settings(warp()).find("march_form=warp"), std::string::npos);
  EXPECT_EQ(cu::emission_settings(tiled()).find("march_form"), std::string::npos);
  // The launch: blocks of 32 x 8, a block per tile of the plane, the chunks of march_chunks for 256-thread blocks.
  const cu::DeviceShape h100{132, 2048, 2147483647u};
  std::uint64_t cube[] = {512, 512, 512};
  const cu::Geometry g = cu::geometry(cu::Strategy::Elementwise, 3, cube, 256, h100, 0, 1, 1, true, 2048, 2, 8);
  EXPECT_EQ(g.block.x, 32u);
  EXPECT_EQ(g.block.y, 8u);
  EXPECT_EQ(g.grid.x, 16u);
  EXPECT_EQ(g.grid.y, 64u);
  EXPECT_EQ(g.grid.z, cu::march_chunks(512, 16 * 64, 132 * 8, 2));
}

TEST(CudaStencilTiles, InPlaceStripsLoadEveryElementBeforeTheyStore) {
  // Each stencil kernel of an in-place update computes its copies' values into registers and stores them after
  // the strip (a flag per store and copy); the _alias variant, for overlapping arguments, keeps the plain order;
  // an update that writes another array (Jacobi) has nothing to wait for and keeps its stores where they are.
  require_nvrtc();
  for (int variant = 0; variant < kInPlaceVariants; ++variant) {
    const ir::Function f = in_place_kernel(variant);
    SCOPED_TRACE(f.name);
    cu::Program p;
    compile_for_sm90(f, {}, &p);
    int stencils = 0;
    for (const cu::GpuKernel& k : p.gpu_kernels) {
      if (k.stencil_columns == 0) continue;
      ++stencils;
      EXPECT_NE(k.plan.find("each strip computes all its copies' values before it stores them"), std::string::npos) << k.plan;
      const std::size_t begin = p.kernels.find(k.name + "(");
      ASSERT_NE(begin, std::string::npos) << p.kernels;
      ASSERT_FALSE(k.alias_name.empty()) << p.kernels;
      const std::size_t alias = p.kernels.find(k.alias_name + "(", begin);
      ASSERT_NE(alias, std::string::npos) << p.kernels;
      const std::string main = p.kernels.substr(begin, alias - begin);
      EXPECT_NE(main.find("kiln_df0[kiln_s]"), std::string::npos) << main;
      // The copies store to no array (only to their slots and the tiles): the stores follow all of them.
      const std::size_t flush = main.find("for (unsigned kiln_s = 0;");
      ASSERT_NE(flush, std::string::npos) << main;
      std::istringstream copies(main.substr(0, flush));
      for (std::string line; std::getline(copies, line);) {
        const std::size_t at = line.find_first_not_of(' ');
        if (at == std::string::npos || line.compare(at, 5, "kiln_") == 0) continue;
        const std::size_t bracket = line.find('[', at);
        const bool store = bracket != std::string::npos && line.find("] = ", bracket) != std::string::npos &&
                           line.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", at) == bracket;
        EXPECT_FALSE(store) << line;
      }
      const std::size_t alias_end = p.kernels.find("\n}\n", alias);
      EXPECT_EQ(p.kernels.substr(alias, alias_end - alias).find("kiln_df"), std::string::npos) << p.kernels;
    }
    EXPECT_GE(stencils, 1) << p.kernels;
  }
  const cu::Program jacobi = cu::emit_program(offloaded(rows::lower_for_cuda("jacobi2d", benchgpu::jacobi2d, {"a", "out"}, 2)), tiled());
  ASSERT_NE(stencil_of(jacobi), nullptr) << jacobi.kernels;
  EXPECT_EQ(jacobi.kernels.find("kiln_df"), std::string::npos) << jacobi.kernels;
  EXPECT_EQ(stencil_of(jacobi)->stencil_rows, 4) << stencil_of(jacobi)->plan;  // 54 words at 4 rows: within the cap
  // fdtd-2d's hz update (f64, two windows, 16 values waiting at 4 x 4: about 184 registers) takes 2 rows to fit two
  // blocks an SM, and says so; KILN_CUDA_STRIP_REGISTERS=255 keeps 4.
  const ir::Function fdtd = rows::lower_for_cuda("fdtd_2d", suite::kiln_kernels::fdtd_2d, {"ex", "ey", "hz", "fict", "tmax"}, 2);
  for (int budget : {0, 255}) {
    cu::EmitOptions o = tiled();
    o.stencil.strip_registers = budget;
    const cu::Program p = cu::emit_program(offloaded(fdtd), o);
    const cu::GpuKernel& hz = p.gpu_kernels.back();
    EXPECT_EQ(hz.stencil_rows, budget ? 4 : 2) << hz.plan;
    EXPECT_EQ(hz.plan.find("(cut from 4 row(s), 4 round(s) to fit)") != std::string::npos, budget == 0) << hz.plan;
    EXPECT_NE(hz.plan.find(budget ? "KILN_CUDA_STRIP_REGISTERS allows" : "two blocks of 256 threads per SM leave"), std::string::npos) << hz.plan;
    EXPECT_EQ(cu::emission_settings(o).find("strip_registers=255") != std::string::npos, budget == 255);
  }
}

TEST(CudaStencilTiles, ThreeDStencilsCompileWarningFreeInBoundedSource) {
  // The 3-d stencils of kiln-bench-gpu (each form) and of this test through NVRTC. A tiled kernel holds rows x
  // rounds copies of the interior arm and one of the whole body: the CUDA C of the largest, a 27-point
  // stencil with a nearest border, stays under a line budget that keeps NVRTC near 100 ms on the GPU machine
  // (it ran 7 s when every copy held the border's clamps). The times printed are this machine's.
  require_nvrtc();
  struct Case {
    std::string name;
    ir::Function f;
  };
  std::vector<Case> cases;
  cases.push_back({"star7", rows::lower_for_cuda("star7", benchgpu::star7_stencil, {"in", "out"}, 3)});
  cases.push_back({"cube27", rows::lower_for_cuda("cube27", benchgpu::cube27_stencil, {"in", "out"}, 3)});
  cases.push_back({"star7_clamped", rows::lower_for_cuda("star7_clamped", benchgpu::star7_clamped, {"in", "out"}, 3)});
  cases.push_back({"cube27_clamped", rows::lower_for_cuda("cube27_clamped", benchgpu::cube27_clamped, {"in", "out"}, 3)});
  cases.push_back({"wide13_f64", wide_star_kernel("wide13_f64", kiln::border(Border::nearest))});
  cases.push_back({"two_inputs", two_input_kernel("two_inputs", kiln::border(Border::reflect))});
  cases.push_back({"cube27_skip", stencil_kernel<3>("cube27_skip", 27, kiln::border(Border::skip))});
  // The bench's 2-d Jacobi sweep, 21 ms of NVRTC on the H200 (docs/gpu.md), calibrates this machine's times.
  const double jacobi_ms = compile_for_sm90(rows::lower_for_cuda("jacobi2d", benchgpu::jacobi2d, {"a", "out"}, 2)).compile_ms;
  std::printf("[ nvrtc    ] jacobi2d (the calibration) NVRTC %.1f ms\n", jacobi_ms);
  for (const Case& c : cases)
    for (const cu::MarchForm form : {cu::MarchForm::Auto, cu::MarchForm::Warp}) {
      cu::EmitOptions eo = kiln::detail::cuda_options().emit;
      eo.stencil.march_form = form;
      const cu::Program p = cu::emit_program(offloaded(c.f), eo);
      const cu::Binary bin = cu::compile_source(p.source(), c.f.name, "sm_90", {});
      EXPECT_EQ(bin.log, "") << c.name << ": NVRTC warned\n" << p.kernels;
      const cu::GpuKernel* k = stencil_of(p);
      ASSERT_NE(k, nullptr) << c.name << "\n" << p.kernels;
      EXPECT_TRUE(k->stencil_march) << c.name;
      EXPECT_EQ(k->march_block_rows > 0, form == cu::MarchForm::Auto) << c.name << ": " << k->plan;
      const auto lines = std::count(p.kernels.begin(), p.kernels.end(), '\n');
      EXPECT_LT(lines, 2500) << c.name << "\n" << p.kernels;
      std::printf("[ nvrtc    ] %-16s %-5s %4ld lines of kernels, NVRTC %.1f ms (%.1f x jacobi2d)\n", c.name.c_str(),
                  form == cu::MarchForm::Warp ? "warp" : "block", static_cast<long>(lines), bin.compile_ms, bin.compile_ms / jacobi_ms);
    }
}

TEST(CudaStencilTiles, MarchingGridsCutTheFirstDimensionIntoChunks) {
  // Grid z of a marching kernel: chunks of about 32 planes, at least 4 waves of the blocks that reside at the
  // kernel's occupancy (one wave of chunks of 256 planes ran the 3-d stencils 1.4x slower on the H100:
  // gpustencil3's request 2), then up to half as many again, the count that fills the last wave best (waves x
  // (chunk + halo) least); none under 8 planes.
  const cu::DeviceShape h100{132, 2048, 2147483647u};
  std::uint64_t cube[] = {512, 512, 512};
  // 256 threads as 128 x 2, 2 rounds and 4 rows per thread: 128 blocks per plane; 2 blocks per SM reside (264).
  const cu::Geometry g = cu::geometry(cu::Strategy::Elementwise, 3, cube, 256, h100, 0, 2, 4, true, 512, 2);
  EXPECT_EQ(g.block.x, 128u);
  EXPECT_EQ(g.block.y, 2u);
  EXPECT_EQ(g.grid.x, 2u);
  EXPECT_EQ(g.grid.y, 64u);
  // 16 chunks of 32 planes: 7.8 waves, the last one nearly full (17-24 chunks take 9-12 waves of shorter chunks).
  EXPECT_EQ(g.grid.z, 16u);
  EXPECT_EQ(cu::march_chunks(512, 128, 264, 2), 16u);
  // 3 blocks per SM (396): 16 chunks take 6 waves, the last a sixth full; 18 take 6 full ones of 29 planes.
  EXPECT_EQ(cu::march_chunks(512, 128, 396, 2), 18u);
  // A plane of blocks past 4 waves: chunks of 32 planes still.
  EXPECT_EQ(cu::march_chunks(384, 4096, 264, 2), 12u);
  // A radius of 2 (halo 4) or few planes: never under 8 planes a chunk.
  EXPECT_EQ(cu::march_chunks(40, 128, 264, 4), 5u);
  // Without the kernel's occupancy (0), the device's most threads per SM: 8 blocks of 256.
  EXPECT_EQ(cu::geometry(cu::Strategy::Elementwise, 3, cube, 256, h100, 0, 2, 4, true).grid.z, cu::march_chunks(512, 128, 1056, 2));
  std::uint64_t tall[] = {40, 9, 9};
  EXPECT_EQ(cu::geometry(cu::Strategy::Elementwise, 3, tall, 256, h100, 0, 2, 4, true).grid.z, 5u);  // 8 planes each
  std::uint64_t flat[] = {3, 600, 600};
  EXPECT_EQ(cu::geometry(cu::Strategy::Elementwise, 3, flat, 256, h100, 0, 2, 4, true).grid.z, 1u);
  // Without marching, a block z per plane.
  EXPECT_EQ(cu::geometry(cu::Strategy::Elementwise, 3, cube, 256, h100, 0, 2, 4).grid.z, 512u);
}

// ---- on a GPU: against the interpreter ------------------------------------------------------------------------------

class CudaStencilTilesGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kiln::cuda::available()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  }
};

std::vector<std::vector<std::int64_t>> shapes(int rank) {
  if (rank == 1) return {{1}, {2}, {3}, {5}, {31}, {33}, {97}, {1031}};
  if (rank == 2) return {{1, 1}, {1, 5}, {5, 1}, {2, 3}, {7, 31}, {13, 97}, {33, 65}};
  // several z chunks (40 planes), one plane, shapes under a strip (32 x rounds) and a tile's rows
  return {{1, 1, 1}, {1, 1, 7}, {2, 3, 5}, {3, 3, 3}, {7, 13, 29}, {19, 5, 67}, {11, 33, 40}, {40, 9, 9}};
}

/// Input sets for a kernel (inputs..., out) of element type t over `rank`-d shapes; every other set holds a NaN
/// and infinities in its first input.
template <class T>
void poison(TestArray& a) {
  if (a.size() == 0) return;  // nothing to set (and an element's position divides by the extents)
  a.set<T>(0, std::numeric_limits<T>::quiet_NaN());
  a.set<T>(a.size() / 2, std::numeric_limits<T>::infinity());
  a.set<T>(a.size() - 1, -std::numeric_limits<T>::infinity());
}
std::vector<Args> inputs(int rank, DType t, int count, const std::vector<std::vector<std::int64_t>>* given = nullptr, bool poison_out = false) {
  std::vector<Args> in;
  int set = 0;
  for (const auto& s : given ? *given : shapes(rank)) {
    Args args;
    for (int i = 0; i < count; ++i) {
      TestArray a = random_array(t, s, (set + i) % 3 == 2 ? Layout::RowGaps : Layout::RowMajor, -4, 4);
      if (i == 0 && set % 2 == 1) t == DType::F64 ? poison<double>(a) : poison<float>(a);
      args.push_back(array_arg(a));
    }
    TestArray out = random_array(t, s);
    if (poison_out && set % 2 == 1) t == DType::F64 ? poison<double>(out) : poison<float>(out);
    args.push_back(array_arg(out));
    in.push_back(std::move(args));
    ++set;
  }
  return in;
}

void expect_matches(const ir::Function& f, int rank, DType t = DType::F32, int count = 1, const std::vector<std::vector<std::int64_t>>* given = nullptr,
                    bool poison_out = false) {
  const std::vector<Args> in = inputs(rank, t, count, given, poison_out);
  // The default form, other rows and rounds; for marching kernels the block form (emit_march_block.cpp, the
  // default where the kernel allows it) with one, two and three planes ahead (A steps a trip: chunks of every
  // length modulo A), and the warp form (emit_march.cpp): its default plan, 3 rows of one round, one row without
  // the prefetch, the smallest register budget.
  std::vector<cu::StencilSettings> forms = {{cu::StencilMode::Shared, 4, 4}, {cu::StencilMode::Shared, 3, 1}, {cu::StencilMode::Shared, 1, 2}};
  if (rank == 3) {
    forms = {{cu::StencilMode::Shared, 4, 4}, {cu::StencilMode::Shared, 4, 4}, {cu::StencilMode::Shared, 4, 4}};
    forms[1].march_prefetch = 0;
    forms[2].march_prefetch = 2;
    for (int w = 0; w < 4; ++w) {
      forms.push_back({cu::StencilMode::Shared, w == 1 ? 3 : 4, w == 1 ? 1 : 4});
      forms.back().march_form = cu::MarchForm::Warp;
    }
    forms[4].march_rows = 3;
    forms[5].march_rows = 1;
    forms[5].march_prefetch = 0;
    forms[6].march_registers = 8;
  }
  // The interpreter's outcome once per input set (the run does not change its inputs), every form against it.
  std::vector<std::unique_ptr<Outcome>> refs;
  for (const Args& a : in) refs.push_back(run_interpreter(f, a));
  for (const cu::StencilSettings& form : forms) {
    cu::CudaOptions opts = kiln::detail::cuda_options();
    opts.emit.stencil = form;
    const cu::Compiled compiled = cu::compile(f, {}, opts);
    for (std::size_t set = 0; set < in.size(); ++set) {
      SCOPED_TRACE(f.name + " in form " + cu::emission_settings(opts.emit) + ", input set " + std::to_string(set));
      expect_same(f, *refs[set], *run_kernel(compiled.kernel, f, in[set]), Tolerance{});
    }
  }
}

/// Every border mode's stencils of the given ranks (3-d: of the given points) against the interpreter, in every form.
void expect_borders_match(const std::vector<int>& ranks, int points) {
  for (const BorderCase& b : borders())
    for (int rank : ranks) {
      const std::string name = std::string("st_") + b.name + std::to_string(rank) + "_" + std::to_string(rank == 3 ? points : 0);
      const ir::Function f = rank == 1 ? stencil_kernel<1>(name, points, b.opts)
                             : rank == 2 ? stencil_kernel<2>(name, points, b.opts)
                                         : stencil_kernel<3>(name, points, b.opts);
      expect_matches(f, rank);
    }
}

TEST_F(CudaStencilTilesGpu, EveryBorderModeRankAndShapeMatchesTheInterpreter) { expect_borders_match({1, 2}, 0); }
TEST_F(CudaStencilTilesGpu, EveryBorderModeOf7PointStencilsMatchesTheInterpreter) { expect_borders_match({3}, 7); }
TEST_F(CudaStencilTilesGpu, EveryBorderModeOf27PointStencilsMatchesTheInterpreter) { expect_borders_match({3}, 27); }

TEST_F(CudaStencilTilesGpu, WideDoubleAndTwoInputStencilsMatchTheInterpreter) {
  for (const BorderCase& b : borders()) {
    expect_matches(wide_star_kernel(std::string("wide_") + b.name, b.opts), 3, DType::F64);
    expect_matches(two_input_kernel(std::string("two_") + b.name, b.opts), 3, DType::F32, 2);
  }
}

TEST_F(CudaStencilTilesGpu, ClampedPrangesMatchTheInterpreter) {
  for (int rank : {1, 2, 3})
    for (int points : rank == 3 ? std::vector<int>{7, 27} : std::vector<int>{0}) expect_matches(clamped_kernel(rank, points), rank);
}

TEST_F(CudaStencilTilesGpu, InPlaceStripsMatchTheInterpreter) {
  // Empty, one element, primes, a strip's edge, and larger than a few strips of rows: the stored-after copies
  // (a flag each: copies past the edges, border elements, stores under an if) against the interpreter, with NaN and
  // infinities in the array updated in place.
  const std::vector<std::vector<std::int64_t>> sizes = {{0, 7}, {5, 0}, {1, 1}, {1, 37}, {2, 3}, {7, 31}, {13, 97}, {33, 129}, {131, 257}, {509, 1031}};
  for (int variant = 0; variant < kInPlaceVariants; ++variant)
    expect_matches(in_place_kernel(variant), 2, DType::F32, variant == 2 ? 2 : 1, &sizes, true);
}

}  // namespace
}  // namespace kiln

