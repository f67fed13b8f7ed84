// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Contractions (ContractionPlan, emitter.hpp): a 2-d parfor whose elements (i, j) each run one loop over a range
// they all share, reading arrays at indices of (i, k) and of (j, k) — kiln::dot(A, B) as lower_array_ops gives
// it to a device (a thread per element, a reduction parfor along k), a Gram product or a triangle as
// spread_loops leaves them (an element per thread, a sequential loop along k, the triangle's test of i and j
// around it). A thread per element reads 2 K elements for its K steps, every one of them also read by the other
// threads of its row or column: ncu on the suite's gemm (2000 x 2100 x 2200 f64, H100) showed 19 % of compute
// and the L1 at 41 %, syrk's L1 at 96 % with 32 sectors a request.
//
// The `_tiles` variant: a block of kContractionThreads threads takes a kContractionTile-square tile of
// elements, thread (tx, ty) the kContractionPerThread^2 elements at rows ty + 16 m and columns tx + 16 n, or, on
// a side whose operands are f64 (f32), in runs of 2 (4): rows 2 ty + (m % 2) + 32 (m / 2) (4 ty + m), read from the
// tiles one 16-byte vector a run (contraction_offset: 4 shared loads a step for 16 elements where scalar reads
// take 8; a warp's column reads still one run of a tile row). The
// loop runs in chunks of kContractionSteps steps: the block stages each planned operand's chunk in a shared tile
// (a row of the tile per element row or column, a cell per step; consecutive threads fetch along the array's
// contiguous index, into registers one chunk ahead, so that the next chunk's loads travel while this chunk's
// steps run), waits at a barrier, and every thread then runs the chunk's steps in order, each step once per
// element copy, reading the operands from the tiles (a step's row values are broadcasts, its column values one
// line per warp). Per step a thread reads 2 x 4 tile cells for 16 elements' arithmetic, against 2 loads per
// element for one thread per element. A full chunk's steps are unrolled (constant tile offsets), the last
// chunk's run in a loop. With 4- and 8-byte operands the next chunk is copied by cp.async into a second set of
// tiles while the steps read the first (one barrier a chunk, no registers holding the next chunk's cells).
// Measured on an H100 (suite rows, f64, median of 7): vector reads and unrolled chunks took gemm 1.707 -> 1.581
// ms, covariance 0.986 -> 0.817; cp.async then covariance to 0.772 (gemm 1.569); ncu on gemm: the FP64 pipe
// at 75.8 % of its peak (69.2 % before), 120 registers.
//
// The ceiling: kiln rounds a*b + c twice (ir/semantics.hpp, docs/gpu.md: `--fmad=false`), so each step of each
// element is a multiply and an add, two issues of the FP64 (FP32) pipe. On an H100 SXM (132 SMs, 64 FP64 and 128
// FP32 lanes an SM, 1.98 GHz at most) that is 8.4 T steps/s in f64 (16.7 T in f32); with fast_math NVVM fuses them
// into FMAs, twice that. cuBLAS' DGEMM runs on the FP64 tensor cores (DMMA), which no form kiln's rounding allows
// uses: see docs/gpu.md.
//
// Each element's statements run in the order of its loop with the same expressions: the bits are those of one
// thread per element (and of the interpreter). The rule keeps that true and the barriers reachable:
// - the body is lets, assignments and branches before one loop (a sequential loop, or a 1-d parfor, which a
//   thread runs in order), then straight-line statements, or all of that under one test of i, j and shared
//   values (a triangle); the statements before the loop store nothing; nothing in the body can fail (a failing
//   thread would leave before the barriers);
// - the loop's steps are lets and assignments; its bounds read only values every element shares;
// - a planned load's array is never written by the kernel (nor aliased by a written binding), and its indices
//   read the loop's index, one of i and j, and shared values, no element. A cell is fetched only when its
//   indices lie within the array's extents (a tile's rows past the parfor's last row, or steps past the end);
// - under a triangle's test (one that reads i or j), every other load before the loop and in its steps reads
//   only the loop's index and shared values (the copies that fail the test run them too).
// Element copies past the parfor's last row or column run as its last row or column (their loads stay in
// bounds); they and the copies that fail the triangle's test run the loop with the others and store nothing. A
// tile with no element to compute is skipped by the whole block (`__syncthreads_or`).
#include <algorithm>
#include <functional>

#include "codegen/cuda/emitter.hpp"
#include "codegen/cuda/loads_in.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {
namespace {

constexpr int kW = kContractionTile / kContractionPerThread;  // threads along a tile's side
static_assert(kW * kW == kContractionThreads && kContractionThreads % 32 == 0 && kW <= 32 && 32 % kW == 0,
              "a warp holds whole rows of the thread grid: its column reads are one run of a tile row");
static_assert(kContractionSteps * kContractionTile % kContractionThreads == 0, "the block fetches a tile in whole rounds");

}  // namespace

void Emitter::plan_contraction() {
  if (k_.strategy != Strategy::Elementwise || k_.rank != 2 || opts_.halo_reads || !p_.array_reductions.empty() || ir::can_fail(p_.body))
    return;
  ContractionPlan plan;
  std::vector<ir::Stmt> stmts;
  flatten_blocks(p_.body, stmts);
  if (stmts.size() == 1 && stmts[0]->kind == ir::StmtKind::If && !stmts[0]->as<ir::IfStmt>().else_body) {
    plan.guard = stmts[0]->as<ir::IfStmt>().cond;
    const ir::Stmt inner = stmts[0]->as<ir::IfStmt>().then_body;
    stmts.clear();
    flatten_blocks(inner, stmts);
  }
  std::size_t at = 0;
  while (at < stmts.size() && stmts[at]->kind != ir::StmtKind::For && stmts[at]->kind != ir::StmtKind::Parfor) {
    if (!last_row_safe(stmts[at]) || !ir::stored_arrays(stmts[at]).empty()) return;
    ++at;
  }
  if (at == stmts.size()) return;
  const ir::Stmt& loop = stmts[at];
  if (loop->kind == ir::StmtKind::For) {
    const auto& f = loop->as<ir::ForStmt>();
    plan.k = f.index.get();
    plan.begin = f.begin;
    plan.end = f.end;
    plan.steps = f.body;
  } else {
    const auto& q = loop->as<ir::ParforStmt>();
    if (q.indices.size() != 1 || !q.array_reductions.empty()) return;
    plan.k = q.indices[0].get();
    plan.begin = q.begins[0];
    plan.end = q.ends[0];
    plan.steps = q.body;
  }
  plan.before.assign(stmts.begin(), stmts.begin() + static_cast<std::ptrdiff_t>(at));
  plan.after.assign(stmts.begin() + static_cast<std::ptrdiff_t>(at) + 1, stmts.end());
  for (const ir::Stmt& s : plan.after)
    if (!last_row_safe(s)) return;
  std::vector<ir::Stmt> steps;
  flatten_blocks(plan.steps, steps);
  for (const ir::Stmt& s : steps)
    if (s->kind != ir::StmtKind::Let && s->kind != ir::StmtKind::Assign) return;

  // Values that differ between elements: the indices and whatever the body declares or assigns, but the lets
  // before the loop whose values are shared.
  const ir::VarNode* iv = p_.indices[0].get();
  const ir::VarNode* jv = p_.indices[1].get();
  ir::VarSet varying = ir::declared_in(p_.body);
  const ir::VarSet assigned = ir::assigned_vars(p_.body);
  for (const ir::VarNode* v : assigned) varying.insert(v);
  varying.insert(iv);
  varying.insert(jv);
  ir::LetValues lets;
  for (const ir::Stmt& s : plan.before)
    if (s->kind == ir::StmtKind::Let && !assigned.count(s->as<ir::LetStmt>().var.get()))
      lets[s->as<ir::LetStmt>().var.get()] = s->as<ir::LetStmt>().init;
  // `shared(e, allowed)`: e reads no element and only values every element shares, and the variables allowed.
  std::function<bool(const ir::Expr&, const ir::VarSet&, int)> shared = [&](const ir::Expr& e, const ir::VarSet& allowed, int depth) {
    if (depth > 16 || ir::has_load(e)) return false;
    for (const ir::Var& v : ir::free_vars(e)) {
      if (allowed.count(v.get()) || !varying.count(v.get())) continue;
      const auto it = lets.find(v.get());
      if (it == lets.end() || !shared(it->second, {}, depth + 1)) return false;
    }
    return true;
  };
  if (plan.guard && !shared(plan.guard, {iv, jv}, 0)) return;
  if (!shared(plan.begin, {}, 0) || !shared(plan.end, {}, 0)) return;

  std::int64_t bytes = 0;
  bool rows = false, columns = false;
  for (const ir::LoadExpr* l : loads_in(plan.steps)) {
    const ir::VarNode* a = l->array.get();
    if (varying.count(a) || written_.count(a)) continue;
    bool aliased = false;
    for (const ir::VarNode* w : written_) aliased = aliased || ir::may_alias(w, a);
    if (aliased) continue;
    bool ok = true, reads_k = false, reads_i = false, reads_j = false;
    for (const ir::Expr& x : l->indices) {
      ok = ok && shared(x, {plan.k, iv, jv}, 0);
      reads_k = reads_k || ir::uses(x, plan.k);
      reads_i = reads_i || ir::uses(x, iv);
      reads_j = reads_j || ir::uses(x, jv);
    }
    // A load of neither i nor j is the same for the whole block (read in place: a broadcast); of both, or not
    // of k, it is no operand of a contraction.
    if (!ok || !reads_k || reads_i == reads_j) continue;
    int site = site_of(plan.sites, *l);
    if (site < 0) {
      // A tile row is padded by the side's vector width, at most 4 elements (contraction_loops); cp.async's
      // staging (4- and 8-byte operands) holds two sets.
      const int size = size_of(a->type.elem), sets = opts_.contraction_async && (size == 4 || size == 8) ? 2 : 1;
      const std::int64_t tile = static_cast<std::int64_t>(sets) * kContractionSteps * (kContractionTile + 4) * static_cast<std::int64_t>(size);
      if (bytes + tile > kMaxStencilTileBytes) continue;  // read in place
      bytes += tile;
      ContractionPlan::Site s;
      s.array = a;
      s.indices = l->indices;
      s.row = reads_i;
      s.k_fast = a->type.unit_stride && ir::uses(l->indices.back(), plan.k);
      plan.sites.push_back(std::move(s));
      site = static_cast<int>(plan.sites.size()) - 1;
    }
    plan.loads[l] = site;
    rows = rows || plan.sites[static_cast<std::size_t>(site)].row;
    columns = columns || !plan.sites[static_cast<std::size_t>(site)].row;
  }
  // Operands of one side only are shared by a row (or column) of elements, which the plain form's caches serve.
  if (!rows || !columns) return;
  // The copies that fail the triangle's test run the statements before the loop and its steps as well (every
  // thread must reach the barriers), where the plain form does not run them: the test may be what keeps an
  // index in range (`if (j <= i)` around a load of X(i - j, k)). So every load there that no tile fetches (a
  // tile's cells are fetched only within the extents) must read what every element of the block reads. A test
  // of shared values alone (spread_loops' `k's range is not empty` around a promoted element) fails for every
  // copy or for none, and a tile with no copy inside is skipped.
  if (plan.guard && (ir::uses(plan.guard, iv) || ir::uses(plan.guard, jv))) {
    auto uniform = [&](const ir::Stmt& s) {
      for (const ir::LoadExpr* l : loads_in(s))
        if (!plan.loads.count(l))
          for (const ir::Expr& x : l->indices)
            if (!shared(x, {plan.k}, 0)) return false;
      return true;
    };
    if (!uniform(plan.steps) || !std::all_of(plan.before.begin(), plan.before.end(), uniform)) return;
  }
  // A side's tiles are read a vector at a time (one 16-byte shared load for 2 f64 or 4 f32 elements, where scalar
  // reads would issue one load per element): the thread's elements along that side are then consecutive in
  // pairs or fours (contraction_offset). Any other type keeps scalar reads.
  for (int side = 0; side < 2; ++side) {
    int w = kContractionPerThread;
    for (const ContractionPlan::Site& s : plan.sites)
      if (s.row == (side == 0)) w = std::min(w, s.array->type.elem == DType::F32 ? 4 : s.array->type.elem == DType::F64 ? 2 : 1);
    plan.width[side] = w;
  }
  plan.async = opts_.contraction_async && std::all_of(plan.sites.begin(), plan.sites.end(), [](const ContractionPlan::Site& s) {
    return size_of(s.array->type.elem) == 4 || size_of(s.array->type.elem) == 8;
  });
  for (const ContractionPlan::Site& s : plan.sites) guarded_arrays_.insert(s.array);
  contraction_ = std::move(plan);
  k_.tiles_name = k_.name + "_tiles";
}

void Emitter::contraction_loops() {
  const ContractionPlan& cp = *contraction_;
  const int P = kContractionPerThread, copies = P * P;
  const std::string T = std::to_string(kContractionTile), S = std::to_string(kContractionSteps), W = std::to_string(kW);
  for (std::size_t s = 0; s < cp.sites.size(); ++s) {
    const ContractionPlan::Site& site = cp.sites[s];
    std::string what = site.array->name + "(";
    for (std::size_t d = 0; d < site.indices.size(); ++d) what += (d ? ", " : "") + ir::to_string(site.indices[d]);
    // Rows padded by the side's vector width: vector reads stay aligned, and a chunk's staging stores along
    // steps (k_fast) fall in different banks.
    line("__shared__ __align__(16) " + std::string(type_name(site.array->type.elem)) + " kiln_ct" + std::to_string(s) + (cp.async ? "[2]" : "") + "[" +
         S + "][" + T + " + " + std::to_string(cp.width[site.row ? 0 : 1]) + "];  // " + what + ") at a chunk's steps, a " +
         (site.row ? "row" : "column") + " of the tile each" + (cp.async ? "; two sets, one read while the next chunk is copied into the other" : ""));
  }
  const ir::VarNode* iv = p_.indices[0].get();
  const ir::VarNode* jv = p_.indices[1].get();
  line("const unsigned kiln_tx = threadIdx.x % " + W + ", kiln_ty = threadIdx.x / " + W + ";");
  line("const unsigned long long kiln_tiles_y = (kiln_n0 + " + T + " - 1) / " + T + ", kiln_tiles_x = (kiln_n1 + " + T + " - 1) / " + T + ";");
  line("for (unsigned long long kiln_by = blockIdx.y; kiln_by < kiln_tiles_y; kiln_by += gridDim.y) {");
  ++depth_;
  line("for (unsigned long long kiln_bx = blockIdx.x; kiln_bx < kiln_tiles_x; kiln_bx += gridDim.x) {");
  ++depth_;
  line("const unsigned long long kiln_r0 = kiln_by * " + T + ", kiln_c0 = kiln_bx * " + T + ";");
  // The copies' indices: past the last row or column, the last one (its loads stay in bounds; it stores nothing).
  std::vector<std::string> in(static_cast<std::size_t>(P)), jn(static_cast<std::size_t>(P));
  for (int m = 0; m < P; ++m) {
    in[static_cast<std::size_t>(m)] = fresh(iv->name);
    line("const long long " + in[static_cast<std::size_t>(m)] + " = kiln_b0 + (long long)min(kiln_r0 + " + contraction_offset(0, m) +
         ", kiln_n0 - 1);");
  }
  for (int n = 0; n < P; ++n) {
    jn[static_cast<std::size_t>(n)] = fresh(jv->name);
    line("const long long " + jn[static_cast<std::size_t>(n)] + " = kiln_b1 + (long long)min(kiln_c0 + " + contraction_offset(1, n) +
         ", kiln_n1 - 1);");
  }
  const ir::VarSet declared = ir::declared_in(p_.body);
  std::vector<std::unordered_map<const ir::VarNode*, std::string>> copy_names(static_cast<std::size_t>(copies));
  auto enter = [&](int c) {
    names_[iv] = in[static_cast<std::size_t>(c / P)];
    names_[jv] = jn[static_cast<std::size_t>(c % P)];
    for (const auto& [v, n] : copy_names[static_cast<std::size_t>(c)]) names_[v] = n;
  };
  auto leave = [&](int c) {
    for (const ir::VarNode* v : declared)
      if (auto it = names_.find(v); it != names_.end()) copy_names[static_cast<std::size_t>(c)][v] = it->second;
  };
  auto live = [](int c) { return "kiln_live" + std::to_string(c); };
  line("bool kiln_any = false;");
  for (int c = 0; c < copies; ++c) {
    enter(c);
    std::string cond = "kiln_r0 + " + contraction_offset(0, c / P) + " < kiln_n0 && kiln_c0 + " + contraction_offset(1, c % P) + " < kiln_n1";
    if (cp.guard) cond += " && " + expr(cp.guard);
    line("const bool " + live(c) + " = " + cond + ";");
    line("kiln_any = kiln_any || " + live(c) + ";");
  }
  line("if (!__syncthreads_or(kiln_any)) continue;  // no element of the tile is computed");
  // A list of statements as a block's (lets read where nothing was assigned since), in the current scope.
  auto statements = [&](const std::vector<ir::Stmt>& list) {
    lets_.emplace_back();
    for (const ir::Stmt& x : list) {
      stmt(x);
      if (x->kind != ir::StmtKind::Let) lets_.back().clear();
    }
    lets_.pop_back();
  };
  for (int c = 0; c < copies; ++c) {
    enter(c);
    statements(cp.before);
    leave(c);
  }
  enter(copies - 1);  // the loop's bounds read shared values only: any copy's names
  line("const long long kiln_kb = " + expr(cp.begin) + ", kiln_ke = " + expr(cp.end) + ";");
  // The next chunk's loads are issued before the current chunk's steps run, so that their latency passes under
  // the arithmetic (two blocks an SM would otherwise both wait at the same barrier for their loads): copied
  // asynchronously (cp.async) into the second set of tiles (`async`: one barrier a chunk, no registers held),
  // or else carried by each thread in registers and stored into the one set after the chunk's steps.
  const int cells = kContractionSteps * kContractionTile / kContractionThreads;
  if (!cp.async)
    for (std::size_t s = 0; s < cp.sites.size(); ++s)
      line(std::string(type_name(cp.sites[s].array->type.elem)) + " kiln_cell" + std::to_string(s) + "[" + std::to_string(cells) + "] = {};");
  // The cell's step and row (or column) for thread t's q-th cell: consecutive threads on the array's contiguous index.
  auto cell_position = [&](const ContractionPlan::Site& site) {
    line("const unsigned kiln_f = threadIdx.x + kiln_q * " + std::to_string(kContractionThreads) + ";");
    line(site.k_fast ? "const unsigned kiln_fs = kiln_f % " + S + ", kiln_fr = kiln_f / " + S + ";  // consecutive threads, consecutive steps"
                     : "const unsigned kiln_fs = kiln_f / " + T + ", kiln_fr = kiln_f % " + T + ";  // consecutive threads, consecutive " +
                           (site.row ? "rows" : "columns"));
  };
  // Loads the chunk that starts at step `first` into the registers, or copies it into tile set `set` (a cell only
  // within the array's extents).
  auto fetch = [&](const std::string& first, const std::string& set) {
    for (std::size_t s = 0; s < cp.sites.size(); ++s) {
      const ContractionPlan::Site& site = cp.sites[s];
      line("#pragma unroll");
      line("for (unsigned kiln_q = 0; kiln_q < " + std::to_string(cells) + "; ++kiln_q) {");
      ++depth_;
      cell_position(site);
      const std::string k = bind(cp.k);
      line("const long long " + k + " = " + first + " + kiln_fs;");
      const std::string x = fresh(site.row ? iv->name : jv->name);
      names_[site.row ? iv : jv] = x;
      line("const long long " + x + " = " + (site.row ? "kiln_b0 + (long long)(kiln_r0" : "kiln_b1 + (long long)(kiln_c0") + " + kiln_fr);");
      lets_.emplace_back();
      const std::string inside = fetched_in_extents(site.array, site.indices, s);
      if (!cp.async) {
        line("if (" + inside + ") kiln_cell" + std::to_string(s) + "[kiln_q] = " + element(site.array, site.indices) + ";");
      } else {
        const std::string cell = "kiln_ct" + std::to_string(s) + "[" + set + "][kiln_fs][kiln_fr]";
        const std::string source = element(site.array, site.indices);  // (any lines it needs come first)
        line("if (" + inside + ") {");
        line("#if __CUDA_ARCH__ >= 800");
        line("  asm volatile(\"cp.async.ca.shared.global [%0], [%1], " + std::to_string(size_of(site.array->type.elem)) +
             ";\" :: \"r\"((unsigned)__cvta_generic_to_shared(&" + cell + ")), \"l\"(&" + source + ") : \"memory\");");
        line("#else");
        line("  " + cell + " = " + source + ";");
        line("#endif");
        line("}");
      }
      lets_.pop_back();
      --depth_;
      line("}");
    }
  };
  const char* copies_done = "asm volatile(\"cp.async.wait_all;\" ::: \"memory\");";
  fetch("kiln_kb", "0");
  if (cp.async) line("unsigned kiln_set = 0;");
  line("for (long long kiln_k0 = kiln_kb; kiln_k0 < kiln_ke; kiln_k0 += " + S + ") {");
  ++depth_;
  if (cp.async) {
    // This thread's copies of the chunk are in; after the barrier every thread's are, and every thread is done
    // reading the other set (the previous chunk), into which the next chunk goes.
    line("#if __CUDA_ARCH__ >= 800");
    line(copies_done);
    line("#endif");
    line("__syncthreads();");
    line("if (kiln_k0 + " + S + " < kiln_ke) {  // the next chunk's copies, in flight while this chunk's steps run");
    ++depth_;
    fetch("(kiln_k0 + " + S + ")", "kiln_set ^ 1u");
    --depth_;
    line("}");
  }
  for (std::size_t s = 0; s < cp.sites.size() && !cp.async; ++s) {
    line("#pragma unroll");
    line("for (unsigned kiln_q = 0; kiln_q < " + std::to_string(cells) + "; ++kiln_q) {");
    ++depth_;
    cell_position(cp.sites[s]);
    line("kiln_ct" + std::to_string(s) + "[kiln_fs][kiln_fr] = kiln_cell" + std::to_string(s) + "[kiln_q];");
    --depth_;
    line("}");
  }
  if (!cp.async) {
    line("__syncthreads();");
    line("if (kiln_k0 + " + S + " < kiln_ke) {  // the next chunk's loads, in flight while this chunk's steps run");
    ++depth_;
    fetch("(kiln_k0 + " + S + ")", "");
    --depth_;
    line("}");
  }
  line("const long long kiln_round = min((long long)" + S + ", kiln_ke - kiln_k0);");
  // A full chunk runs its steps unrolled (the tiles' step offsets are constants: no index arithmetic between the
  // operands' reads and the arithmetic); the last, partial chunk runs them in a loop. Same steps, same order.
  const std::string k = bind(cp.k);
  auto chunk_steps = [&] {
    line("[[maybe_unused]] const long long " + k + " = kiln_k0 + kiln_kk;");
    // The step's operands, a vector load per site and group of the thread's rows (or columns).
    for (std::size_t s = 0; s < cp.sites.size(); ++s) {
      const ContractionPlan::Site& site = cp.sites[s];
      const int w = cp.width[site.row ? 0 : 1];
      if (w == 1) continue;
      const std::string vt = std::string(type_name(site.array->type.elem)) + std::to_string(w);
      for (int h = 0; h < P / w; ++h)
        line("const " + vt + " kiln_v" + std::to_string(s) + "_" + std::to_string(h) + " = *reinterpret_cast<const " + vt + "*>(&kiln_ct" +
             std::to_string(s) + (cp.async ? "[kiln_set]" : "") + "[kiln_kk][" + contraction_offset(site.row ? 0 : 1, h * w) + "]);");
    }
    contraction_on_ = true;
    for (int c = 0; c < copies; ++c) {
      enter(c);
      names_[cp.k] = k;
      contraction_m_ = c / P;
      contraction_n_ = c % P;
      lets_.emplace_back();
      stmt(cp.steps);
      lets_.pop_back();
      leave(c);
    }
    contraction_on_ = false;
  };
  line("if (kiln_round == " + S + ") {");
  ++depth_;
  line("#pragma unroll");
  line("for (int kiln_kk = 0; kiln_kk < " + S + "; ++kiln_kk) {  // the chunk's steps, in order, for every element");
  ++depth_;
  chunk_steps();
  --depth_;
  line("}");
  --depth_;
  line("} else {");
  ++depth_;
  line("#pragma unroll 1");
  line("for (int kiln_kk = 0; kiln_kk < (int)kiln_round; ++kiln_kk) {  // the last chunk's steps");
  ++depth_;
  chunk_steps();
  --depth_;
  line("}");
  --depth_;
  line("}");
  if (cp.async) {
    line("kiln_set ^= 1u;");
  } else {
    line("__syncthreads();  // every element is done with the chunk's tiles");
  }
  --depth_;
  line("}");
  if (cp.async) {
    // No copy outlives the tile (an empty loop's first chunk): the next tile's copies go to the same cells.
    line("#if __CUDA_ARCH__ >= 800");
    line(copies_done);
    line("#endif");
  }
  for (int c = 0; c < copies; ++c) {
    enter(c);
    line("if (" + live(c) + ") {");
    ++depth_;
    statements(cp.after);
    --depth_;
    line("}");
    leave(c);
  }
  --depth_;
  line("}");
  --depth_;
  line("}");
}

std::string Emitter::contraction_offset(int side, int m) const {
  const int w = contraction_->width[side];
  const std::string t = side == 0 ? "kiln_ty" : "kiln_tx";
  if (w == 1) return t + " + " + std::to_string(kW * m);
  return std::to_string(w) + " * " + t + " + " + std::to_string(m % w + w * kW * (m / w));
}

std::string Emitter::contraction_cell(int site) const {
  const ContractionPlan::Site& s = contraction_->sites[static_cast<std::size_t>(site)];
  const int side = s.row ? 0 : 1, m = s.row ? contraction_m_ : contraction_n_, w = contraction_->width[side];
  if (w > 1) return "kiln_v" + std::to_string(site) + "_" + std::to_string(m / w) + "." + "xyzw"[m % w];
  return "kiln_ct" + std::to_string(site) + (contraction_->async ? "[kiln_set]" : "") + "[kiln_kk][" + contraction_offset(side, m) + "]";
}

}  // namespace kiln::codegen::cuda
