// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The block form of a marching 3-d stencil (2.5-d blocking through shared tiles): a block of 32 x kMarchBlockRows
// threads takes one tile of (y, x) and walks it along z through its chunk of planes. Each step loads the newest
// plane's tile and the halo the body's reads reach once (the block's own 32-wide rows coalesced, one element a
// thread, the halo's cells spread over the block), stores it to a ring of shared slots (one per plane the body
// reads, plus one: a step writes the slot no thread still reads, so one barrier a step suffices), and every
// thread computes its element of the step's output plane with each read a shared load at a constant offset.
//
// Why beside the warp form (emit_march.cpp), where each thread holds rows of every live plane in registers: the
// warp form needs 94-128 registers a thread (two blocks of 256 an SM, 15 % of the warps active on the H100's
// ncu) and its warps load their own halo rows; this form needs few registers, so many blocks reside and their
// loads cover the memory's latency, and loads each element of a plane once per block (the halo rows and columns
// besides). Running sums (march_sums) keep one plane in the ring: a step adds the newest plane's terms to the
// sums of the outputs that read it, in the fold's order.
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"

namespace kiln::codegen::cuda {
namespace {

constexpr int kBlockThreads = 32 * kMarchBlockRows;
/// The blocks per SM the block form is compiled for (__launch_bounds__): 64 registers a thread, 32 warps an SM.
constexpr int kMarchBlockMinBlocks = 4;
/// Planes the block form loads ahead of the step by default: the next steps' tiles are in flight while a step
/// computes (Little's law: at 1024 resident threads an SM, two float planes put 8 KiB in flight from the
/// block's own rows alone).
constexpr int kMarchBlockAhead = 2;
/// The registers a block-form thread keeps besides its values (march_block_registers): the chunk's bounds, the
/// tile's origin, each load's 64-bit offset, mask and cell, the step's slot pointers and store pointer. Calibrated
/// with ptxas -v (CUDA 13.0, sm_90, __launch_bounds__(256, 4)) on hand copies of this form: the 7-point float
/// stencil at 4 rows used 64 registers without spills (estimated 54) and at 8 rows spilled 8 bytes (66); the 27-point
/// running sums at 4 rows used 64 without spills (62).
constexpr int kMarchBlockFixedRegisters = 32;
/// A copy's working values, in words of the widest element: the fold's sum, the term and its operands.
constexpr int kMarchBlockCopyWords = 8;

/// A group's tile: the block's 32 x (kMarchBlockRows x v) elements (v rows a thread) and the halo the body's reads
/// reach (ylo rows above, yhi below, xlo columns left, xhi right), `slots` planes of it in a ring.
struct BlockTile {
  std::int64_t v = 1;
  std::int64_t ylo = 0, yhi = 0, xlo = 0, xhi = 0;
  int planes = 1;  ///< planes a step reads from the ring (1 with running sums: the newest)
  int slots = 2;   ///< planes + 1
  std::int64_t own() const { return kMarchBlockRows * v; }  ///< the block's rows of elements
  std::int64_t rows() const { return own() + ylo + yhi; }
  std::int64_t cols() const { return 32 + xlo + xhi; }
  std::int64_t cells() const { return rows() * cols(); }
  std::int64_t halo() const { return cells() - kBlockThreads * v; }
  /// The loads of a plane a thread makes: its own v elements, then the halo's cells spread over the block.
  int loads() const { return static_cast<int>(v + (halo() + kBlockThreads - 1) / kBlockThreads); }
};

BlockTile block_tile(const StencilPlan& plan, int g) {
  const StencilPlan::Group& G = plan.groups[static_cast<std::size_t>(g)];
  BlockTile t;
  t.v = plan.rows;
  for (const auto& [d, cs] : G.offsets) {
    t.ylo = std::max(t.ylo, -d), t.yhi = std::max(t.yhi, d);
    for (std::int64_t c : cs) t.xlo = std::max(t.xlo, -c), t.xhi = std::max(t.xhi, c);
  }
  t.planes = plan.sums ? 1 : G.planes();
  t.slots = t.planes + 1;
  return t;
}

std::string buf(int g, int b, int k) {
  return "kiln_nb" + std::to_string(g) + "_" + std::to_string(b) + "_" + std::to_string(k);
}

}  // namespace

bool Emitter::plan_march_block(StencilPlan& plan, const std::string& sums_why) const {
  const StencilSettings& st = opts_.stencil;
  if (st.march_form == MarchForm::Warp) return false;
  // Every read is of a 3-d array at [z + dz, y + d, x + c]: a tile of (y, x) per plane.
  for (const StencilPlan::Group& G : plan.groups)
    if (!G.marching || !G.vertical || G.prefix.size() != 1) return false;
  plan.ahead = st.march_prefetch + kMarchBlockAhead - 1;  // KILN_CUDA_MARCH_PREFETCH=0, 1 (default), 2: 1, 2, 3 planes
  plan.columns = 1;
  // Rows a thread: each row past the first reads its neighbours in rows shared with the thread's other rows (the
  // compiler loads a slot's cell once a step for all of them) and shares the step's addresses, barrier and loop;
  // from march_rows, halved until the estimate fits the launch bounds' registers.
  plan.rows = std::max(1, st.march_rows);
  auto bytes = [&] {
    std::int64_t b = 0;
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
      const BlockTile t = block_tile(plan, static_cast<int>(g));
      b += t.slots * t.cells() * size_of(plan.groups[g].array->type.elem);
    }
    return b;
  };
  const int cap = st.march_registers > 0 ? st.march_registers : march_register_cap(kMarchBlockMinBlocks);
  while (plan.rows > 1 && (march_block_registers(plan) > cap || bytes() > kMaxStencilTileBytes)) plan.rows /= 2;
  if (bytes() > kMaxStencilTileBytes) return false;
  std::int64_t loads = 0;
  for (std::size_t g = 0; g < plan.groups.size(); ++g) loads += block_tile(plan, static_cast<int>(g)).loads();
  plan.block = true;
  plan.why = fmt::format(
      "block form: blocks of {} x {} threads walk one tile of (y, x) each, {} row(s) a thread; a step loads the newest "
      "plane's "
      "tile and halo once ({} load(s) a thread) into a ring of shared slots ({} bytes: a slot per plane read, and one "
      "more so "
      "that one barrier a step suffices) and reads every neighbour from it; about {} registers a thread of the {} that "
      "{} "
      "blocks an SM leave, {} plane(s) loaded ahead of the step; {}",
      32, kMarchBlockRows, plan.rows, loads, bytes(), march_block_registers(plan), cap, kMarchBlockMinBlocks,
      plan.ahead, plan.sums ? sums_why.substr(0, sums_why.find(", and keeps")) + ", one plane in the ring" : sums_why);
  return true;
}

int march_block_registers(const StencilPlan& plan) {
  // What a thread holds while a step computes: the cells that more than one of its copies read (loaded once a step,
  // kept from the first copy that reads them to the last), a copy's working values, the running sums, the planes
  // loaded ahead, and the walk's own (indices, addresses, masks). A cell that one copy reads is loaded where it is
  // used: the copies of a fold need their values one at a time; running sums add each cell to every sum that reads
  // it as it is loaded.
  std::int64_t words = kMarchBlockFixedRegisters, widest = 1;
  const auto w = [](DType t) { return std::max<std::int64_t>(1, size_of(t) / 4); };
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    const StencilPlan::Group& G = plan.groups[g];
    const BlockTile t = block_tile(plan, static_cast<int>(g));
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::set<int>>
        readers;  // (plane, row, column) -> copies
    for (const auto& [load, use] : plan.loads)
      if (use.group == static_cast<int>(g))
        for (int v = 0; v < plan.rows; ++v) readers[{plan.sums ? 0 : use.dz, v + use.d, use.c}].insert(v);
    for (const auto& [cell, copies] : readers) words += copies.size() > 1 && !plan.sums ? w(G.array->type.elem) : 0;
    words += plan.ahead * t.loads() * w(G.array->type.elem);
    if (plan.sums) words += G.planes() * plan.rows * w(plan.sums->type);
    widest = std::max(widest, w(G.array->type.elem));
  }
  return static_cast<int>(words + kMarchBlockCopyWords * widest);
}

int march_block_min_blocks() { return kMarchBlockMinBlocks; }

std::string Emitter::march_block_value(const StencilPlan::Use& use) const {
  const StencilPlan::Group& G = stencil_->groups[static_cast<std::size_t>(use.group)];
  const BlockTile t = block_tile(*stencil_, use.group);
  const std::int64_t p = stencil_->sums ? 0 : use.dz - G.zlo;
  return "kiln_t" + std::to_string(use.group) + "_" + std::to_string(p) + "[" +
         std::to_string((stencil_v_ + use.d) * t.cols() + use.c) + "]";
}

void Emitter::march_block_load(int g, const std::string& z, int b) {
  const StencilPlan::Group& G = stencil_->groups[static_cast<std::size_t>(g)];
  const BlockTile t = block_tile(*stencil_, g);
  const ArrayNames& n = array(G.array);
  const std::string T = type_name(G.array->type.elem), gs = std::to_string(g);
  line("{");
  ++depth_;
  line("const long long kiln_pz = " + z + ";");
  line("const bool kiln_pok = (unsigned long long)kiln_pz < (unsigned long long)" + n.extent[0] + ";");
  line("const " + T + "* kiln_pp = " + n.data + " + kiln_pz * " + n.stride[0] + ";");
  for (int k = 0; k < t.loads(); ++k)
    line(buf(g, b, k) + " = kiln_pok && kiln_m" + gs + "_" + std::to_string(k) + " ? kiln_pp[kiln_a" + gs + "_" +
         std::to_string(k) + "] : (" + T + ")0;");
  --depth_;
  line("}");
}

void Emitter::march_block_store(int g, const std::string& slot, int b) {
  const BlockTile t = block_tile(*stencil_, g);
  const std::string gs = std::to_string(g),
                    at = "kiln_bt" + gs + "[(" + slot + ") * " + std::to_string(t.cells()) + "u + kiln_c" + gs + "_";
  for (int k = 0; k < t.v; ++k) line(at + std::to_string(k) + "] = " + buf(g, b, k) + ";");
  for (int k = static_cast<int>(t.v); k < t.loads(); ++k)
    line("if (kiln_c" + gs + "_" + std::to_string(k) + " >= 0) " + at + std::to_string(k) + "] = " + buf(g, b, k) +
         ";");
}

void Emitter::march_block_views(int g, const std::string& newest) {
  const BlockTile t = block_tile(*stencil_, g);
  const std::string gs = std::to_string(g),
                    T = type_name(stencil_->groups[static_cast<std::size_t>(g)].array->type.elem);
  // Plane p of the step's window (the newest is planes - 1) sits in slot (newest - (planes - 1 - p)) % slots; a
  // pointer for each plane the body reads.
  std::set<std::int64_t> read;
  for (const auto& [load, use] : stencil_->loads)
    if (use.group == g) read.insert(stencil_->sums ? 0 : use.dz - stencil_->groups[static_cast<std::size_t>(g)].zlo);
  for (int p = 0; p < t.planes; ++p)
    if (read.count(p))
      line("const " + T + "* const kiln_t" + gs + "_" + std::to_string(p) + " = kiln_bt" + gs + " + ((" + newest +
           " - " + std::to_string(t.planes - 1 - p) + "u) % " + std::to_string(t.slots) + "u) * " +
           std::to_string(t.cells()) + "u + kiln_c" + gs + "_0;");
}

void Emitter::march_block_shift() {
  const StencilPlan& sp = *stencil_;
  for (int j = 0; j + 1 < sp.groups.front().planes(); ++j)
    for (int v = 0; v < sp.rows; ++v) line(march_sum_reg(j, v, 0) + " = " + march_sum_reg(j + 1, v, 0) + ";");
}

void Emitter::march_block_step(const std::string& z, int b) {
  const StencilPlan& sp = *stencil_;
  line("{");
  ++depth_;
  line("const long long " + bind(p_.indices[0].get()) + " = kiln_b0 + (long long)" + z + ";");
  for (std::size_t g = 0; g < sp.groups.size(); ++g) {
    const StencilPlan::Group& G = sp.groups[g];
    const int gi = static_cast<int>(g);
    const BlockTile t = block_tile(sp, gi);
    // The newest plane's number in the chunk's walk: the planes below the first step's newest came first.
    const std::string q = "kiln_q" + std::to_string(g);
    line("const unsigned " + q + " = (unsigned)(" + z + " - kiln_zbeg) + " + std::to_string(G.planes() - 1) +
         "u;  // 32 bits: a slot's arithmetic");
    march_block_store(gi, q + " % " + std::to_string(t.slots) + "u", b);
  }
  line("if (" + z + " + " + std::to_string(sp.ahead) + " < kiln_zend) {  // the plane " + std::to_string(sp.ahead) +
       " step(s) on, in flight");
  ++depth_;
  for (std::size_t g = 0; g < sp.groups.size(); ++g)
    march_block_load(static_cast<int>(g), march_plane(z, sp.groups[g].zhi + sp.ahead), b);
  --depth_;
  line("}");
  line("__syncthreads();");
  for (std::size_t g = 0; g < sp.groups.size(); ++g)
    march_block_views(static_cast<int>(g), "kiln_q" + std::to_string(g));
  if (sp.sums) {
    line("// the newest plane's terms added to the sums of the outputs that read it; the step's output is finished");
    march_sums_add(0);
  }
  stencil_bodies();
  if (sp.sums) march_block_shift();
  --depth_;
  line("}");
}

void Emitter::march_block_loops() {
  const StencilPlan& sp = *stencil_;
  const int A = sp.ahead;
  const std::string by = std::to_string(kMarchBlockRows * sp.rows), V = std::to_string(sp.rows);
  for (std::size_t g = 0; g < sp.groups.size(); ++g) {
    const BlockTile t = block_tile(sp, static_cast<int>(g));
    line("__shared__ " + std::string(type_name(sp.groups[g].array->type.elem)) + " kiln_bt" + std::to_string(g) + "[" +
         std::to_string(t.slots * t.cells()) + "];  // " + std::to_string(t.slots) + " planes of a " +
         std::to_string(t.rows()) + " x " + std::to_string(t.cols()) + " tile");
  }
  bool halo = false;
  for (std::size_t g = 0; g < sp.groups.size(); ++g) halo = halo || block_tile(sp, static_cast<int>(g)).loads() > 1;
  if (halo) line("const int kiln_tid = (int)(threadIdx.x + 32u * threadIdx.y);");
  // Block z walks one chunk of the planes, in order (the launch picks gridDim.z: geometry.cpp).
  line("const unsigned long long kiln_zlen = (kiln_n0 + gridDim.z - 1) / gridDim.z;");
  line("const unsigned long long kiln_zbeg = (unsigned long long)blockIdx.z * kiln_zlen;");
  line("const unsigned long long kiln_zend = min(kiln_n0, kiln_zbeg + kiln_zlen);");
  // Tiles go to blocks, not threads: every thread of a block runs the same trips, so the barriers are reached by all.
  line("for (unsigned long long kiln_tile_y = (unsigned long long)blockIdx.y * " + by +
       "ull; kiln_tile_y < kiln_n1; kiln_tile_y += (unsigned long long)gridDim.y * " + by + "ull) {");
  ++depth_;
  line(
      "for (unsigned long long kiln_tile_x = (unsigned long long)blockIdx.x * 32ull; kiln_tile_x < kiln_n2; "
      "kiln_tile_x += (unsigned long long)gridDim.x * 32ull) {");
  ++depth_;
  line("const long long kiln_i0 = kiln_b1 + (long long)(kiln_tile_y + threadIdx.y * " + V + "u);");
  line("const long long kiln_j0 = kiln_b2 + (long long)(kiln_tile_x + threadIdx.x);");
  // Each thread's cells of a group's tile: its own element (k = 0), then halo cells kiln_tid + 256 (k - 1): the
  // rows above, the columns beside the block's rows, the rows below. Their offsets in a plane and whether they lie
  // inside the array do not change along the walk.
  for (std::size_t g = 0; g < sp.groups.size(); ++g) {
    const BlockTile t = block_tile(sp, static_cast<int>(g));
    const ArrayNames& n = array(sp.groups[g].array);
    const std::string gs = std::to_string(g), TX = std::to_string(t.cols()), W = std::to_string(t.xlo + t.xhi);
    const std::string top = std::to_string(t.ylo * t.cols()), mid = std::to_string(t.own() * (t.xlo + t.xhi));
    for (int k = 0; k < t.v; ++k) {
      const std::string ks = gs + "_" + std::to_string(k);
      line("const int kiln_c" + ks + " = ((int)threadIdx.y * " + V + " + " + std::to_string(t.ylo + k) + ") * " + TX +
           " + (int)threadIdx.x + " + std::to_string(t.xlo) + ";");
      line("const bool kiln_m" + ks + " = (unsigned long long)(kiln_i0 + " + std::to_string(k) +
           ") < (unsigned long long)" + n.extent[1] + " && (unsigned long long)kiln_j0 < (unsigned long long)" +
           n.extent[2] + ";");
      line("const long long kiln_a" + ks + " = (kiln_i0 + " + std::to_string(k) + ") * " + n.stride[1] + " + kiln_j0;");
    }
    for (int k = static_cast<int>(t.v); k < t.loads(); ++k) {
      const std::string ks = gs + "_" + std::to_string(k);
      line("int kiln_c" + ks + " = -1;");
      line("bool kiln_m" + ks + " = false;");
      line("long long kiln_a" + ks + " = 0;");
      const std::string first = std::to_string(kBlockThreads * (k - t.v));
      line("if (kiln_tid + " + first + " < " + std::to_string(t.halo()) + ") {");
      ++depth_;
      line("const int kiln_h = kiln_tid + " + first + ";");
      line("int kiln_r, kiln_x;");
      std::string chain = "if (kiln_h < " + top + ") {\n" + std::string(2 * (depth_ + 1), ' ') + "kiln_r = kiln_h / " +
                          TX + ", kiln_x = kiln_h % " + TX + ";\n" + std::string(2 * depth_, ' ') + "}";
      if (t.xlo + t.xhi > 0)
        chain += " else if (kiln_h < " + top + " + " + mid + ") {\n" + std::string(2 * (depth_ + 1), ' ') +
                 "const int kiln_hm = kiln_h - " + top + ";\n" + std::string(2 * (depth_ + 1), ' ') +
                 "kiln_r = " + std::to_string(t.ylo) + " + kiln_hm / " + W + ", kiln_x = kiln_hm % " + W + ";\n" +
                 std::string(2 * (depth_ + 1), ' ') + "if (kiln_x >= " + std::to_string(t.xlo) + ") kiln_x += 32;\n" +
                 std::string(2 * depth_, ' ') + "}";
      chain += " else {\n" + std::string(2 * (depth_ + 1), ' ') + "const int kiln_hm = kiln_h - " + top + " - " + mid +
               ";\n" + std::string(2 * (depth_ + 1), ' ') + "kiln_r = " + std::to_string(t.ylo + t.own()) +
               " + kiln_hm / " + TX + ", kiln_x = kiln_hm % " + TX + ";\n" + std::string(2 * depth_, ' ') + "}";
      line(chain);
      line("kiln_c" + ks + " = kiln_r * " + TX + " + kiln_x;");
      line("const long long kiln_row = kiln_b1 + (long long)kiln_tile_y + (kiln_r - " + std::to_string(t.ylo) +
           "), kiln_col = kiln_b2 + (long long)kiln_tile_x + (kiln_x - " + std::to_string(t.xlo) + ");");
      line("kiln_m" + ks + " = (unsigned long long)kiln_row < (unsigned long long)" + n.extent[1] +
           " && (unsigned long long)kiln_col < (unsigned long long)" + n.extent[2] + ";");
      line("kiln_a" + ks + " = kiln_row * " + n.stride[1] + " + kiln_col;");
      --depth_;
      line("}");
    }
    const std::string T = type_name(sp.groups[g].array->type.elem);
    for (int b = 0; b < A; ++b) {
      std::string decl;
      for (int k = 0; k < t.loads(); ++k) decl += (k ? ", " : "") + buf(static_cast<int>(g), b, k) + " = 0";
      line(T + " " + decl + ";");
    }
  }
  const std::string bits = "unsigned";
  march_masks(bits);
  if (sp.sums) {
    std::string regs;
    for (int j = 0; j < sp.groups.front().planes(); ++j)
      for (int v = 0; v < sp.rows; ++v) regs += std::string(regs.empty() ? "" : ", ") + march_sum_reg(j, v, 0) + " = 0";
    line(std::string(type_name(sp.sums->type)) + " " + regs + ";  // the sums of the outputs 0, 1, ... plane(s) on");
  }
  // The planes below the first step's newest, into their slots (running sums: each through the ring's one plane,
  // its terms added to the sums of the chunk's first outputs that read it).
  for (std::size_t g = 0; g < sp.groups.size(); ++g) {
    const StencilPlan::Group& G = sp.groups[g];
    const BlockTile t = block_tile(sp, static_cast<int>(g));
    for (int p = 0; p + 1 < G.planes(); ++p) {
      march_block_load(static_cast<int>(g), march_plane("kiln_zbeg", G.zlo + p), 0);
      march_block_store(static_cast<int>(g), std::to_string(p % t.slots), 0);
      if (!sp.sums) continue;
      line("{");
      ++depth_;
      line("__syncthreads();");
      march_block_views(static_cast<int>(g), std::to_string(p));
      march_sums_add(G.planes() - 1 - p);
      march_block_shift();
      --depth_;
      line("}");
    }
  }
  for (int b = 0; b < A; ++b) {
    line("if (kiln_zbeg + " + std::to_string(b) + " < kiln_zend) {");
    ++depth_;
    for (std::size_t g = 0; g < sp.groups.size(); ++g)
      march_block_load(static_cast<int>(g), march_plane("kiln_zbeg", sp.groups[g].zhi + b), b);
    --depth_;
    line("}");
  }
  // A steps a trip, each storing its own buffer and loading it A planes on: a buffer is read A steps after its
  // loads were issued (a copy between buffers would wait for them at once).
  line("for (unsigned long long kiln_z = kiln_zbeg; kiln_z < kiln_zend; kiln_z += " + std::to_string(A) + ") {");
  ++depth_;
  for (int b = 0; b < A; ++b) {
    const std::string z = b ? "kiln_z" + std::to_string(b) : "kiln_z";
    if (b) {
      line("if (kiln_z + " + std::to_string(b) + " >= kiln_zend) break;");
      line("const unsigned long long " + z + " = kiln_z + " + std::to_string(b) + ";");
    }
    march_block_step(z, b);
  }
  --depth_;
  line("}");
  line("__syncthreads();  // the next tile's planes are written to the slots this walk's last steps read");
  if (march_border_after()) march_border_pass(bits);
  --depth_;
  line("}");
  --depth_;
  line("}");
}

}  // namespace kiln::codegen::cuda
