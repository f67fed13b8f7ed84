// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencils: elementwise parfors that read arrays at the index plus small constant offsets — the interiors
// that lower_stencils produces, and stencils written with prange. Emitted as plain grid-stride loops, each
// neighbour is a load of its own: a 3-point average loads every element three times and a 5-point Jacobi
// sweep four times, and although the caches absorb most of the DRAM traffic, the kernel is bound by the
// L1/L2 requests (ncu on an H200: L2 the busiest unit, 55 % L1 hits, 58-81 % of the copy ceiling).
//
// Here each warp takes a strip of `columns` runs of 32 consecutive elements of the contiguous axis (lane l
// computes elements l, l + 32, ...: every load and store of the warp is one coalesced line) and, when the
// stencil reaches across rows, `rows` consecutive rows. Each window row is loaded once into registers and
// the neighbours come from other lanes, through warp shuffles or a per-warp shared-memory tile; rows shared
// by several output rows of a thread are loaded once for all of them. The loads are guarded by the array's
// extents (a window may reach past what the body reads, e.g. behind a border branch) and are the same loads
// the body makes, so results are bit-identical to the plain loops.
//
// A body that branches on bounds of its indices (a kiln::stencil's interior test, a clamped prange's from
// band_clamps) is planned on its interior arm alone: each copy of the body tests the element and runs that
// arm on the windows, and the strip's border elements (a bit each) run the whole body with plain loads once
// the copies are done. The copies hold no border code, which kept NVRTC at 7 s for a 27-point 3-d stencil.
//
// A 3-d parfor reading an array at several planes z + dz marches (2.5-d blocking, emit_march.cpp): block z
// takes a chunk of planes, and each thread walks it in order with every value the body reads of the live
// planes in registers; a step loads only its newest plane, then the registers move one plane down. Without it
// each plane is loaded once per dz that reads it.
#include <algorithm>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/interior.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {
namespace {

/// What a parfor body defines per iteration (lets, loop and nested parfor indices), its lets by
/// initializer, its loads, and whether it can leave a thread's iterations early (a warp's shuffles need
/// every lane).
struct BodyFacts : ir::IRVisitor {
  ir::VarSet defined;
  ir::LetValues lets;
  std::vector<const ir::LoadExpr*> loads;
  bool leaves_early = false;

 protected:
  void visit(const ir::LetStmt& s) override {
    defined.insert(s.var.get());
    lets[s.var.get()] = s.init;
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::ForStmt& s) override {
    defined.insert(s.index.get());
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::ParforStmt& s) override {
    for (const auto& i : s.indices) defined.insert(i.get());
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::CheckStmt& s) override {
    leaves_early = true;
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::AllocateStmt& s) override {
    leaves_early = true;
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::BindStmt&) override { leaves_early = true; }
  void visit(const ir::LoadExpr& e) override {
    loads.push_back(&e);
    ir::IRVisitor::visit(e);
  }
};

/// Shared-memory tile row: the warp's 32 x columns elements with room for the farthest neighbours.
constexpr std::int64_t kTileHalo = 2 * kMaxStencilOffset;
std::int64_t tile_width(int columns) { return 32 * columns + 2 * kTileHalo; }

std::string ll(std::int64_t v) { return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + "LL"; }

/// The bytes a marching step's loads must have in flight on an SM to cover the memory's latency (Little's law: on
/// the H100 about 3.3 TB/s x 0.8 us / 132 SMs); below it the next plane is loaded while a step computes
/// (plan_march).
constexpr std::int64_t kMarchBytesInFlight = 20 * 1024;
/// The words of a marching thread's estimate that may pass the launch bounds' register cap (plan_march).
constexpr int kMarchSpillWords = 24;
/// A strip thread's own registers besides its values (indices, bounds, the lane's and warp's numbers, addresses).
/// ptxas for sm_90 gave fdtd-2d's ey and ex updates as one launch (f64, 4 rounds) 70, 140 and 222 registers at 1, 2
/// and 4 rows, where the values below count 58, 108 and 208: 12 to 32 more (plan_strip).
constexpr int kStripFixedWords = 24;

/// The registers a strip thread holds across its copies, estimated (plan_strip): every window value (a row's
/// rounds, and the edge rounds that reach past the strip), and for each store that waits for the strip's loads its
/// value, offset and flag per copy.
int strip_registers(const StencilPlan& plan, const std::vector<const ir::StoreStmt*>& deferred) {
  auto words = [](DType t) { return std::max(1, size_of(t) / 4); };
  int n = kStripFixedWords;
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    for (const WindowRow& w : window_rows(plan, static_cast<int>(g)))
      n += (plan.columns + (w.lo() < 0 ? 1 : 0) + (w.hi() > 0 ? 1 : 0)) * words(plan.groups[g].array->type.elem);
  for (const ir::StoreStmt* s : deferred) n += plan.rows * plan.columns * (words(s->array->type.elem) + 3);
  return n;
}

}  // namespace

std::vector<WindowRow> window_rows(const StencilPlan& plan, int g) {
  const auto& group = plan.groups[static_cast<std::size_t>(g)];
  std::map<std::int64_t, std::map<std::int64_t, int>> need;  // row -> column offset -> uses
  for (const auto& [d, cs] : group.offsets)
    for (int v = 0; v < (group.vertical ? plan.rows : 1); ++v)
      for (std::int64_t c : cs) ++need[v + d][c];
  std::vector<WindowRow> rows;
  for (const auto& [r, cs] : need) {
    WindowRow w;
    w.row = r;
    int best = -1;
    for (const auto& [c, n] : cs)
      if (n > best || (n == best && std::llabs(c) < std::llabs(w.base))) best = n, w.base = c;
    for (const auto& [c, n] : cs)
      if (c != w.base) w.deltas.push_back(c - w.base);
    rows.push_back(w);
  }
  return rows;
}

void Emitter::plan_stencil() {
  const StencilSettings& st = opts_.stencil;
  // Windows are loaded ahead of the body, which is right only where the arrays read do not overlap the
  // arrays written: the __restrict__ kernels (unroll > 1), whose host checks that at each launch.
  if (st.mode == StencilMode::Off || opts_.halo_reads || k_.strategy != Strategy::Elementwise || k_.unroll <= 1 || !p_.array_reductions.empty()) return;
  BodyFacts facts;
  facts.walk(p_.body);
  if (facts.leaves_early) return;
  const ir::VarSet assigned = ir::assigned_vars(p_.body);
  for (const ir::VarNode* v : assigned) facts.lets.erase(v);
  const int r = k_.rank;
  const ir::VarNode* col = p_.indices[static_cast<std::size_t>(r - 1)].get();
  const ir::VarNode* row = r >= 2 ? p_.indices[static_cast<std::size_t>(r - 2)].get() : nullptr;
  // Marching needs the tiles (a plane's neighbours come from its tile) and a z that is one dimension.
  const ir::VarNode* zv = r == 3 && st.mode == StencilMode::Shared ? p_.indices[0].get() : nullptr;
  auto invariant = [&](const ir::Expr& e) {
    if (ir::has_load(e)) return false;
    for (const ir::Var& v : ir::free_vars(e))
      if (v.get() == col || v.get() == row || facts.defined.count(v.get())) return false;
    return true;
  };
  StencilPlan plan;
  plan.mode = st.mode;
  plan.columns = st.rounds;
  plan.interior = ir::split_interior(p_.body, plan.tests, [&](const ir::Expr& e) {
    if (ir::has_load(e)) return false;
    for (const ir::Var& v : ir::free_vars(e))
      if (facts.defined.count(v.get()) || assigned.count(v.get())) return false;
    for (const ir::Var& i : p_.indices)
      if (ir::uses(e, i.get())) return false;
    return true;
  }, p_.indices, &plan.border);
  // The interior's loads make the windows: the border runs the body with plain loads.
  BodyFacts planned;
  planned.walk(plan.tests.empty() ? p_.body : plan.interior);
  struct Candidate {
    const ir::LoadExpr* load;
    std::int64_t d, c;
    bool vertical;
    std::size_t leading;
    std::optional<std::int64_t> dz;  ///< the last leading index is z + dz (a marching candidate)
  };
  std::vector<Candidate> found;
  for (const ir::LoadExpr* l : planned.loads) {
    const ir::VarNode* a = l->array.get();
    if (written_.count(a) || !a->type.unit_stride) continue;
    const std::size_t rank = l->indices.size();
    const auto c = ir::index_offset(l->indices[rank - 1], col, &facts.lets);
    if (!c || std::llabs(*c) > kMaxStencilOffset) continue;
    Candidate k{l, 0, *c, false, rank - 1, std::nullopt};
    if (row && rank >= 2)
      if (const auto dd = ir::index_offset(l->indices[rank - 2], row, &facts.lets); dd && std::llabs(*dd) <= kMaxStencilOffset) {
        k.vertical = true;
        k.d = *dd;
        k.leading = rank - 2;
      }
    bool ok = true;
    for (std::size_t q = 0; q < k.leading; ++q) ok = ok && invariant(l->indices[q]);
    if (!ok) continue;
    if (zv && k.leading >= 1)
      if (const auto dz = ir::index_offset(l->indices[k.leading - 1], zv, &facts.lets); dz && std::llabs(*dz) <= kMaxStencilOffset) {
        bool others = true;
        for (std::size_t q = 0; q + 1 < k.leading; ++q) others = others && !ir::uses(l->indices[q], zv);
        if (others) k.dz = dz;
      }
    found.push_back(k);
  }
  // March where an array is read at two planes or more (ir::plane_reads, the rule the offload pass's note
  // states): each plane is then loaded once per thread, not once per plane that reads it.
  if (zv)
    for (const ir::PlaneReads& pr : ir::plane_reads(plan.tests.empty() ? p_.body : plan.interior, p_, kMaxStencilOffset, &facts.lets))
      for (const Candidate& k : found) plan.march = plan.march || (k.dz && k.load->array.get() == pr.array);
  for (const Candidate& k : found) {
    const ir::LoadExpr* l = k.load;
    const bool marching = plan.march && k.dz;
    const std::size_t compared = marching ? k.leading - 1 : k.leading;  // a marching group's z index may differ
    int g = -1;
    for (std::size_t q = 0; q < plan.groups.size() && g < 0; ++q) {
      const StencilPlan::Group& G = plan.groups[q];
      if (G.array != l->array.get() || G.vertical != k.vertical || G.marching != marching || G.prefix.size() != k.leading) continue;
      bool same = true;
      for (std::size_t i = 0; i < compared; ++i) same = same && ir::equal(G.prefix[i], l->indices[i]);
      if (same) g = static_cast<int>(q);
    }
    if (g < 0) {
      StencilPlan::Group G;
      G.array = l->array.get();
      G.vertical = k.vertical;
      G.marching = marching;
      G.prefix.assign(l->indices.begin(), l->indices.begin() + static_cast<std::ptrdiff_t>(k.leading));
      if (marching) G.zlo = G.zhi = *k.dz;
      plan.groups.push_back(std::move(G));
      g = static_cast<int>(plan.groups.size()) - 1;
    }
    StencilPlan::Group& G = plan.groups[static_cast<std::size_t>(g)];
    G.offsets[k.d].insert(k.c);
    if (marching) G.zlo = std::min(G.zlo, *k.dz), G.zhi = std::max(G.zhi, *k.dz);
    plan.loads[l] = {g, k.d, k.c, marching ? *k.dz : 0};
  }
  // Worth it only where an element is read by more than one iteration.
  bool reuse = false, across_rows = false;
  for (const auto& G : plan.groups) {
    std::size_t pairs = 0;
    for (const auto& [d, cs] : G.offsets) pairs += cs.size();
    reuse = reuse || pairs >= 2 || G.planes() >= 2;
    across_rows = across_rows || (G.vertical && G.offsets.size() >= 2);
  }
  if (!reuse) return;
  plan.rows = across_rows ? st.rows : 1;
  auto halo = [&] {
    std::int64_t h = 0;
    for (std::size_t g = 0; g < plan.groups.size(); ++g)
      for (const WindowRow& w : window_rows(plan, static_cast<int>(g))) h = std::max({h, -w.lo(), w.hi()});
    return h;
  };
  if (plan.march) plan_march(plan);
  else plan_strip(plan);
  if (plan.mode == StencilMode::Shared && !plan.block) {  // the block form fitted its ring (plan_march_block)
    // Static shared memory: past 40 KiB the tiles would limit occupancy (and 48 KiB is the static limit).
    // Fewer rows per thread need fewer tile rows; if even one row's tiles do not fit, the plain loops
    // (measured faster than the shuffle form, docs/gpu.md).
    auto tile_bytes = [&] {
      std::int64_t bytes = 0;
      const std::int64_t width = plan.march ? 32 * plan.columns + 2 * halo() : tile_width(plan.columns);
      for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        std::int64_t exchanged = 0;
        for (const WindowRow& w : window_rows(plan, static_cast<int>(g))) exchanged += !w.deltas.empty();
        bytes += kStencilTileWarps * exchanged * width * size_of(plan.groups[g].array->type.elem);  // a marching group's newest plane only
      }
      return bytes;
    };
    // A marching kernel gives up rounds first, as for its registers: its rows save loads of every plane.
    while (tile_bytes() > kMaxStencilTileBytes && plan.march && plan.columns > 1) plan.columns /= 2;
    while (tile_bytes() > kMaxStencilTileBytes && plan.rows > 1) plan.rows /= 2;
    if (tile_bytes() > kMaxStencilTileBytes) return;
  }
  plan.halo = plan.march ? halo() : kTileHalo;
  // One bit per body copy records the border elements of a strip.
  if (!plan.tests.empty() && plan.rows * plan.columns > 64) plan.tests.clear(), plan.interior = plan.border = nullptr, plan.sums.reset();
  for (const auto& G : plan.groups) guarded_arrays_.insert(G.array);
  k_.stencil_columns = plan.columns;
  k_.stencil_rows = plan.rows;
  k_.stencil_mode = plan.mode;
  k_.stencil_march = plan.march;
  k_.march_block_rows = plan.block ? kMarchBlockRows : 0;
  for (const auto& G : plan.groups)
    if (G.marching) k_.march_halo = std::max<int>(k_.march_halo, static_cast<int>(G.planes()) - 1);
  stencil_ = std::move(plan);
}

void Emitter::plan_march(StencilPlan& plan) const {
  // Every live plane's window values stay in registers, and the planes loaded ahead of the step stay live
  // while it computes: past the kernel's cap ptxas spills (the f64 27-point suite stencil with 2 rows and its
  // prefetch: 128 registers, spills, 2.88 ms against 2.16 before marching). The form starts from march_rows
  // rows (4: on the H100, with this emission, 4 rows ran star7 0.760 ms against 0.912 with 8, cube27 1.274
  // against 1.400, heat-3d 4.139 against 10.1 (spills), stencil27-clamp 1.882 against 2.843) and is cut until
  // the estimate fits: first the rounds (they save only a strip's edge loads and cost the most registers), then
  // the prefetch, then the rows (the prefetch is decided again for each).
  //
  // The prefetch pays where a step's own loads are too few bytes in flight to cover the memory's latency (Little's
  // law): the resident threads of an SM (the launch bounds' blocks) times a step's loads per thread (window
  // rows x rounds x the element's bytes) under kMarchBytesInFlight. On the H100, float stencils at 4 rows (12 KiB
  // an SM) ran faster with it (star7 0.760 against 0.809 ms, cube27 1.274 against 1.375), double ones at 4 rows
  // (24 KiB) without it (stencil27-clamp 1.882 against 2.294, heat-3d 4.112 against 4.139), and at 2 rows (16 KiB)
  // stencil27-clamp with it (1.907 against 2.106).
  const StencilSettings& st = opts_.stencil;
  std::string sums_why;
  plan.sums = march_sums(plan, p_, plan.tests.empty() ? p_.body : plan.interior, &sums_why);
  if (plan_march_block(plan, sums_why)) return;
  const int cap = march_register_cap(st.march_min_blocks);
  // Rounds are cut until the estimate fits the cap. Rows may keep a few words over it, spilled to the stack (L1):
  // that costs less than half the rows, which load every plane's window rows again. The f64 27-point suite stencil
  // at 4 rows, estimated 150, took 128 registers and 88 bytes of spills in ptxas and ran 1.882 ms on the H100,
  // against 2.106 at 2 rows without spills (119 registers). Large spills do not pay: heat-3d at 8 rows with the
  // prefetch (estimated 218) ran 10.1 ms against 4.1. An experiment's budget (KILN_CUDA_MARCH_REGISTERS) is exact.
  const int fitted = st.march_registers > 0 ? st.march_registers : cap;
  const int budget = st.march_registers > 0 ? st.march_registers : cap + kMarchSpillWords;
  for (const StencilPlan::Group& G : plan.groups)
    if (G.vertical && G.offsets.size() >= 2) plan.rows = st.march_rows;  // the stencil reaches across rows
  // Running sums spend what they free on rows (below), which save window rows of every plane; a round saves only
  // the strip's edge lanes: one round.
  if (plan.sums && plan.rows > 1) plan.columns = 1;
  const int rows = plan.rows, columns = plan.columns;
  const std::int64_t threads = 32LL * kStencilTileWarps * st.march_min_blocks;
  auto step_bytes = [&] {  // what one step's loads of the newest planes put in flight on an SM
    std::int64_t b = 0;
    for (std::size_t g = 0; g < plan.groups.size(); ++g)
      if (plan.groups[g].marching)
        b += static_cast<std::int64_t>(window_rows(plan, static_cast<int>(g)).size()) * plan.columns *
             static_cast<std::int64_t>(size_of(plan.groups[g].array->type.elem));
    return b * threads;
  };
  auto ahead = [&] { return step_bytes() < kMarchBytesInFlight ? st.march_prefetch : 0; };
  auto fits = [&](int n) { return march_registers(plan, plan.ahead).total() <= n; };
  plan.ahead = ahead();
  while (!fits(fitted) && plan.columns > 1) {
    plan.columns /= 2;
    plan.ahead = ahead();
  }
  while (!fits(budget)) {
    if (plan.ahead > 0) {
      plan.ahead = 0;
    } else if (plan.rows > 1) {
      plan.rows /= 2;
      plan.ahead = ahead();
    } else {
      break;
    }
  }
  // Running sums keep one plane where the plain walk keeps every live plane: the registers that frees hold more
  // rows (fewer window rows loaded per output, (rows + 2) / rows for a radius of 1), doubled while the form still
  // fits the cap without spilling. The 27-point float stencil by hand (bench/gpu/stencil3d_forms.cu, H100): 8 rows
  // 0.510 ms against 0.558 at 4.
  bool doubled = false;
  if (plan.sums && st.march_registers == 0 && plan.rows == rows && rows > 1)
    while (2 * plan.rows <= 16) {
      const int r0 = plan.rows, a0 = plan.ahead;
      plan.rows = 2 * r0;
      plan.ahead = ahead();
      if (fits(fitted)) {
        doubled = true;
        continue;
      }
      plan.rows = r0, plan.ahead = a0;
      break;
    }
  const MarchRegisters r = march_registers(plan, plan.ahead);
  plan.why = sums_why + "; " + (doubled ? fmt::format("rows doubled from {} while the sums' form fits {} registers; ", rows, fitted) : std::string()) +
             fmt::format("about {} registers a thread ({} window values of the live planes, {} of the planes loaded ahead, {} for the walk) "
                         "of the {} that {}: {} row(s), {} round(s), {} plane(s) loaded ahead",
                         r.total(), r.values, r.ahead, r.fixed, budget,
                         st.march_registers > 0 ? std::string("KILN_CUDA_MARCH_REGISTERS allows")
                                                : fmt::format("{} blocks of {} threads per SM leave ({}) and {} words spilled allow", st.march_min_blocks,
                                                              32 * kStencilTileWarps, cap, kMarchSpillWords),
                         plan.rows, plan.columns, plan.ahead);
  plan.why += fmt::format("; a step's loads put {} bytes in flight on an SM ({} threads), {} the {} under which the next plane is loaded "
                          "while a step computes",
                          step_bytes(), threads, step_bytes() < kMarchBytesInFlight ? "under" : "not under", kMarchBytesInFlight);
  if (!doubled && (plan.rows != rows || plan.columns != columns || plan.ahead != ahead()))
    plan.why += fmt::format(" (cut from {} row(s), {} round(s), {} ahead to fit)", rows, columns, ahead() ? st.march_prefetch : 0);
  if (r.total() > budget) plan.why += "; even the smallest form passes the budget: ptxas may spill";
}

void Emitter::plan_strip(StencilPlan& plan) const {
  // Every window value stays in a register until the last copy that reads it, and an in-place update's copies hold
  // their values, offsets and flags until the strip stores (strip_copies): rows x rounds of each. Past two blocks of
  // 256 threads an SM (128 registers, the marching kernels' cap) the occupancy halves and the strip's phases no
  // longer overlap: fdtd-2d's ey and ex updates as one launch at 4 rows x 4 rounds took 222 registers (ptxas), one
  // block an SM, and ran 971 us a step at 46 % of DRAM on the H100 (ncu). So rows are cut (they multiply both the
  // window rows and the copies), then rounds, until the estimate fits.
  const std::vector<const ir::StoreStmt*> deferred = deferrable_stores(plan.tests.empty() ? p_.body : plan.interior, /*branches=*/true);
  const int cap = opts_.stencil.strip_registers > 0 ? opts_.stencil.strip_registers : march_register_cap(2);
  const int rows = plan.rows, columns = plan.columns;
  while (strip_registers(plan, deferred) > cap && plan.rows > 1) plan.rows /= 2;
  while (strip_registers(plan, deferred) > cap && plan.columns > 1) plan.columns /= 2;
  plan.why = fmt::format("about {} registers a thread ({} store(s) waiting for the strip's loads) of the {} that {}", strip_registers(plan, deferred),
                         deferred.size(), cap,
                         opts_.stencil.strip_registers > 0 ? std::string("KILN_CUDA_STRIP_REGISTERS allows")
                                                           : fmt::format("two blocks of {} threads per SM leave", 32 * kStencilTileWarps));
  if (plan.rows != rows || plan.columns != columns) plan.why += fmt::format(" (cut from {} row(s), {} round(s) to fit)", rows, columns);
}

std::string Emitter::stencil_value(const StencilPlan::Use& use) const {
  if (stencil_->block) return march_block_value(use);
  const StencilPlan::Group& G = stencil_->groups[static_cast<std::size_t>(use.group)];
  const std::int64_t r = G.vertical ? stencil_v_ + use.d : 0;
  // Running sums read each plane's terms as it arrives: from the newest plane's registers.
  return stencil_values_.at({use.group, stencil_->sums ? G.zhi : use.dz, r, stencil_u_, use.c});
}

void Emitter::stencil_window(int g) {
  const StencilPlan& sp = *stencil_;
  const StencilPlan::Group& G = sp.groups[static_cast<std::size_t>(g)];
  const int U = sp.columns;
  const bool shared = sp.mode == StencilMode::Shared;
  const ArrayNames& n = array(G.array);
  const int rank = G.array->type.rank;
  const std::string T = type_name(G.array->type.elem), gs = std::to_string(g);
  const std::vector<WindowRow> windows = window_rows(sp, g);
  const std::int64_t h = sp.halo;
  line("// window " + gs + ": " + G.array->name + (G.vertical ? ", rows " : ", row ") + std::to_string(windows.front().row) + ".." +
       std::to_string(windows.back().row));
  std::string guard, at;
  for (std::size_t k = 0; k < G.prefix.size(); ++k) {
    const std::string p = "kiln_g" + gs + "_i" + std::to_string(k);
    line("const long long " + p + " = " + expr(G.prefix[k]) + ";");
    guard += (guard.empty() ? "" : " && ") + std::string("(unsigned long long)") + p + " < (unsigned long long)" + n.extent[k];
    at += (at.empty() ? "" : " + ") + p + " * " + n.stride[k];
  }
  int row_slot = 0;
  for (std::size_t wi = 0; wi < windows.size(); ++wi) {
    const WindowRow& w = windows[wi];
    const std::string wn = "kiln_w" + gs + "_" + std::to_string(wi);
    std::string ok = guard, off = at;
    if (G.vertical) {
      const std::string rv = wn + "_row";
      line("const long long " + rv + " = kiln_i0 + " + ll(w.row) + ";");
      ok += (ok.empty() ? "" : " && ") + std::string("(unsigned long long)") + rv + " < (unsigned long long)" + n.extent[rank - 2];
      off += (off.empty() ? "" : " + ") + rv + " * " + n.stride[rank - 2];
    }
    if (ok.empty()) ok = "true";
    if (off.empty()) off = "0LL";
    line("const bool " + wn + "_ok = " + ok + ";");
    line("const long long " + wn + "_at = " + off + ";");
    // Round u holds element base + 32 u of the lane; round -1 (the last lanes) and round U (the first)
    // hold what the warp's edge lanes need from beyond the strip.
    auto reg = [&](int u) { return wn + "_" + (u < 0 ? std::string("m") : std::to_string(u)); };
    auto load = [&](int u, const std::string& lanes) {
      const std::string colv = "kiln_j0 + " + ll(w.base + 32 * static_cast<std::int64_t>(u));
      line("const " + T + " " + reg(u) + " = " + wn + "_ok" + lanes + " && (unsigned long long)(" + colv + ") < (unsigned long long)" +
           n.extent[rank - 1] + " ? " + n.data + "[" + wn + "_at + " + colv + "] : (" + T + ")0;");
    };
    const std::int64_t lo = w.lo(), hi = w.hi();
    if (lo < 0) load(-1, " && kiln_lane >= " + std::to_string(32 + lo) + "u");
    for (int u = 0; u < U; ++u) load(u, "");
    if (hi > 0) load(U, " && kiln_lane < " + std::to_string(hi) + "u");
    for (int u = 0; u < U; ++u) stencil_values_[{g, 0, w.row, u, w.base}] = reg(u);
    if (w.deltas.empty()) continue;
    if (shared) {
      const std::string tile = "kiln_tile" + gs + "[kiln_warp][" + std::to_string(row_slot) + "]";
      if (lo < 0) line("if (kiln_lane >= " + std::to_string(32 + lo) + "u) " + tile + "[kiln_lane - " + std::to_string(32 - h) + "] = " + reg(-1) + ";");
      for (int u = 0; u < U; ++u) line(tile + "[kiln_lane + " + std::to_string(h + 32 * u) + "] = " + reg(u) + ";");
      if (hi > 0) line("if (kiln_lane < " + std::to_string(hi) + "u) " + tile + "[kiln_lane + " + std::to_string(h + 32 * U) + "] = " + reg(U) + ";");
      for (std::int64_t dlt : w.deltas)
        for (int u = 0; u < U; ++u) stencil_values_[{g, 0, w.row, u, w.base + dlt}] = tile + "[kiln_lane + " + std::to_string(h + 32 * u + dlt) + "]";
      ++row_slot;
      continue;
    }
    for (std::int64_t dlt : w.deltas) {
      // x_u: round u of lane (l + delta) mod 32. Lanes whose neighbour lies beyond the warp take the
      // next (or previous) round of it.
      const std::string dn = wn + (dlt < 0 ? "_m" : "_p") + std::to_string(std::llabs(dlt));
      const int first = dlt < 0 ? -1 : 0, last = dlt > 0 ? U : U - 1;
      auto x = [&](int u) { return dn + "_x" + (u < 0 ? std::string("m") : std::to_string(u)); };
      for (int u = first; u <= last; ++u)
        line("const " + T + " " + x(u) + " = kiln_shfl(" + reg(u) + ", (kiln_lane + " + std::to_string(dlt & 31) + "u) & 31u);");
      for (int u = 0; u < U; ++u) {
        const std::string name = dn + "_" + std::to_string(u);
        if (dlt < 0)
          line("const " + T + " " + name + " = kiln_lane < " + std::to_string(-dlt) + "u ? " + x(u - 1) + " : " + x(u) + ";");
        else
          line("const " + T + " " + name + " = kiln_lane >= " + std::to_string(32 - dlt) + "u ? " + x(u + 1) + " : " + x(u) + ";");
        stencil_values_[{g, 0, w.row, u, w.base + dlt}] = name;
      }
    }
  }
}

void Emitter::stencil_loops() {
  const StencilPlan& sp = *stencil_;
  const int r = k_.rank, U = sp.columns, V = sp.rows;
  const bool shared = sp.mode == StencilMode::Shared;
  const std::string strip = std::to_string(32 * U);
  const std::string nx = "kiln_n" + std::to_string(r - 1), bx = "kiln_b" + std::to_string(r - 1);
  stencil_values_.clear();
  if (sp.march && sp.block) return march_block_loops();

  // Whether any group exchanges neighbours through a tile: a stencil whose offsets all lie across rows (fdtd's
  // hz[i] - hz[i - 1]) reuses its window rows in registers and declares no tile, nor the warp's tile index.
  bool tiles = false;
  for (std::size_t g = 0; g < sp.groups.size(); ++g) {
    if (!shared) continue;
    const StencilPlan::Group& G = sp.groups[g];
    int exchanged = 0;
    for (const WindowRow& w : window_rows(sp, static_cast<int>(g))) exchanged += !w.deltas.empty();
    tiles = tiles || exchanged > 0;
    if (exchanged)
      line("__shared__ " + std::string(type_name(G.array->type.elem)) + " kiln_tile" + std::to_string(g) + "[" + std::to_string(kStencilTileWarps) +
           "][" + std::to_string(exchanged) + "][" + std::to_string(32 * U + 2 * sp.halo) + "];");
  }

  int open = 0;
  auto index = [&](int d, const std::string& t) {
    line("const long long " + bind(p_.indices[static_cast<std::size_t>(d)].get()) + " = kiln_b" + std::to_string(d) + " + (long long)" + t + ";");
  };
  if (sp.march) {
    // Block z walks one chunk of the planes, in order (the launch picks gridDim.z: geometry.cpp).
    line("const unsigned long long kiln_zlen = (kiln_n0 + gridDim.z - 1) / gridDim.z;");
    line("const unsigned long long kiln_zbeg = (unsigned long long)blockIdx.z * kiln_zlen;");
    line("const unsigned long long kiln_zend = min(kiln_n0, kiln_zbeg + kiln_zlen);");
  } else if (r >= 3) {
    std::string count = "kiln_n0";
    for (int d = 1; d < r - 2; ++d) count += " * kiln_n" + std::to_string(d);
    line("for (unsigned long long kiln_tz = (unsigned long long)blockIdx.z * blockDim.z + threadIdx.z; kiln_tz < " + count +
         "; kiln_tz += (unsigned long long)gridDim.z * blockDim.z) {");
    ++depth_, ++open;
    if (r == 3) {
      index(0, "kiln_tz");
    } else {
      index(0, "(kiln_tz / kiln_n1)");
      index(1, "(kiln_tz % kiln_n1)");
    }
  }
  const std::string ny = "kiln_n" + std::to_string(r - 2), vv = std::to_string(V);
  if (r >= 2) {
    // Each thread takes V consecutive rows: the window rows between them are loaded once.
    line("for (unsigned long long kiln_ty = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; kiln_ty * " + vv + " < " + ny +
         "; kiln_ty += (unsigned long long)gridDim.y * blockDim.y) {");
    ++depth_, ++open;
    line("const long long kiln_i0 = kiln_b" + std::to_string(r - 2) + " + (long long)(kiln_ty * " + vv + ");");
  }
  // Strips start at multiples of 32 of the index (aligned lines when the rows are); blockDim.x is a
  // multiple of 32 (geometry), so a warp's lanes share their row and run the loops below together.
  line("const unsigned kiln_lane = threadIdx.x & 31u;");
  if (tiles) line("const unsigned kiln_warp = (threadIdx.x + blockDim.x * threadIdx.y) >> 5;");
  line("const long long kiln_wa = " + bx + " - (((" + bx + " % 32) + 32) % 32);");
  line("const unsigned long long kiln_off = (unsigned long long)(" + bx + " - kiln_wa);");
  line("const unsigned long long kiln_wsx = ((unsigned long long)gridDim.x * blockDim.x) >> 5;");
  line("for (unsigned long long kiln_wx = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; kiln_wx * " + strip +
       " < kiln_off + " + nx + "; kiln_wx += kiln_wsx) {");
  ++depth_, ++open;
  line("const unsigned long long kiln_t = kiln_wx * " + strip + " + kiln_lane;");
  line("const long long kiln_j0 = kiln_wa + (long long)kiln_t;");

  if (sp.march) {
    march_loops();
  } else {
    for (std::size_t g = 0; g < sp.groups.size(); ++g) stencil_window(static_cast<int>(g));
    if (shared) line("__syncwarp();");
    stencil_bodies();
    if (shared) line("__syncwarp();  // the tile is written again by the next strip");
  }
  while (open-- > 0) {
    --depth_;
    line("}");
  }
}

void Emitter::stencil_copy(int v, int u, const std::string& test, const std::string& bits, bool record) {
  const StencilPlan& sp = *stencil_;
  stencil_v_ = v;
  stencil_u_ = u;
  lets_.emplace_back();
  if (test == "true") {
    stmt(sp.interior);
  } else if (!test.empty()) {
    line("if (" + test + ") {");
    ++depth_;
    stmt(sp.interior);
    --depth_;
    if (record) {
      line("} else {");
      line("  kiln_border |= (" + bits + ")1 << " + std::to_string(v * sp.columns + u) + ";");
    }
    line("}");
  } else {
    stmt(p_.body);
  }
  lets_.pop_back();
}

void Emitter::strip_copies(const std::string& bits) {
  const StencilPlan& sp = *stencil_;
  const int r = k_.rank, U = sp.columns, V = sp.rows;
  const std::string ny = "kiln_n" + std::to_string(r - 2), nx = "kiln_n" + std::to_string(r - 1), vv = std::to_string(V);
  const bool split = !sp.tests.empty();
  // An in-place update (fdtd's `ey[i, j] -= c * (hz[i, j] - hz[i - 1, j])`) loads in each copy the element it
  // stores; copy after copy, each load waits for the store before it (the compiler cannot tell the elements
  // apart), so a strip of V x U copies is V x U DRAM round trips in a row. The copies are distinct iterations,
  // and this variant runs only on arguments that do not overlap (the call-time check picks the _alias variant
  // otherwise), so every copy computes its values and offsets into registers first and the stores follow
  // (plan_deferred_stores says when the body allows it: deferrable_stores). A flag per store and copy: a store
  // under an if, or a copy past the edge, may not run.
  const int slots = V * U;
  const bool defer = !strip_deferred_.empty();
  if (defer)
    for (std::size_t k = 0; k < strip_deferred_.size(); ++k) {
      const std::string t = type_name(strip_deferred_[k]->array->type.elem), ks = std::to_string(k), n = std::to_string(slots);
      line(t + " kiln_dv" + ks + "[" + n + "] = {};");
      line("long long kiln_do" + ks + "[" + n + "] = {};");
      line("bool kiln_df" + ks + "[" + n + "] = {};");
    }
  for (int v = 0; v < V; ++v) {
    bool row_open = false;
    if (r >= 2) {
      if (V > 1) {
        line("if (kiln_ty * " + vv + " + " + std::to_string(v) + " < " + ny + ") {");
        ++depth_;
        row_open = true;
      }
      line("const long long " + bind(p_.indices[static_cast<std::size_t>(r - 2)].get()) + " = kiln_i0 + " + std::to_string(v) + ";");
    }
    for (int u = 0; u < U; ++u) {
      line("if (kiln_t + " + std::to_string(32 * u) + "ull - kiln_off < " + nx + ") {");
      ++depth_;
      line("const long long " + bind(p_.indices[static_cast<std::size_t>(r - 1)].get()) + " = kiln_j0 + " + std::to_string(32 * u) + ";");
      std::string test;
      if (split)
        for (const ir::Expr& t : sp.tests) test += (test.empty() ? "" : " && ") + expr(t);
      deferring_ = defer_strip_ = defer;
      defer_slot_ = std::to_string(v * U + u);
      stencil_copy(v, u, test, bits);
      deferring_ = defer_strip_ = false;
      defer_slot_ = "kiln_u";
      --depth_;
      line("}");
    }
    if (row_open) {
      --depth_;
      line("}");
    }
  }
  if (!defer) return;
  line("#pragma unroll");
  line("for (unsigned kiln_s = 0; kiln_s < " + std::to_string(slots) + "; ++kiln_s) {");
  ++depth_;
  for (std::size_t k = 0; k < strip_deferred_.size(); ++k) {
    const std::string ks = std::to_string(k);
    line("if (kiln_df" + ks + "[kiln_s]) " + array(strip_deferred_[k]->array.get()).data + "[kiln_do" + ks + "[kiln_s]] = kiln_dv" + ks +
         "[kiln_s];");
  }
  --depth_;
  line("}");
}

void Emitter::stencil_bodies() {
  const StencilPlan& sp = *stencil_;
  const int U = sp.columns, V = sp.rows;
  const bool split = !sp.tests.empty();
  const std::string bits = V * U <= 32 ? "unsigned" : "unsigned long long";
  // Border elements (some test fails) set their bit; they run the whole body after the strip's interior
  // (a marching kernel's, where it can, after the walk: march_border_pass).
  if (sp.march && march_border_after()) return march_copies(bits);
  if (split) line(bits + " kiln_border = 0;");
  if (sp.march)
    march_copies(bits);
  else
    strip_copies(bits);
  if (split) border_loop(bits);
}

void Emitter::border_loop(const std::string& bits) {
  const StencilPlan& sp = *stencil_;
  const int r = k_.rank, U = sp.columns;
  line("while (kiln_border) {");
  ++depth_;
  line(std::string("const int kiln_bit = ") + (bits == "unsigned" ? "__ffs" : "__ffsll") + "(kiln_border) - 1;");
  line("kiln_border &= kiln_border - 1;");
  if (r >= 2)
    line("const long long " + bind(p_.indices[static_cast<std::size_t>(r - 2)].get()) + " = kiln_i0 + kiln_bit / " + std::to_string(U) + ";");
  line("const long long " + bind(p_.indices[static_cast<std::size_t>(r - 1)].get()) + " = kiln_j0 + 32 * (kiln_bit % " + std::to_string(U) + ");");
  stencil_on_ = false;  // the body as written: each load where it reads
  lets_.emplace_back();
  stmt(sp.border);
  lets_.pop_back();
  stencil_on_ = true;
  --depth_;
  line("}");
}

}  // namespace kiln::codegen::cuda
