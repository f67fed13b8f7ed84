// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/launch_plan.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "codegen/cuda/arg_memory.hpp"
#include "codegen/cuda/device_machine.hpp"
#include "codegen/cuda/small_list.hpp"
#include "ir/straight_line.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/stream_state.hpp"

namespace kiln::codegen::cuda {
namespace {

/// The host function's values that are functions of the arguments' extents and constants alone.
struct ExtentValues {
  std::set<const ir::VarNode*> scalars;  ///< lets computed from extents
  std::set<const ir::VarNode*> arrays;   ///< parameters and allocated arrays, whose extents are known per plan

  bool known(const ir::Expr& e) const {
    switch (e->kind) {
      case ir::ExprKind::Const: return true;
      case ir::ExprKind::Dim: return arrays.count(e->as<ir::DimExpr>().array.get()) > 0;
      case ir::ExprKind::VarRef: return scalars.count(e->as<ir::VarRefExpr>().var.get()) > 0;
      case ir::ExprKind::Unary: return known(e->as<ir::UnaryExpr>().a);
      case ir::ExprKind::Binary: return known(e->as<ir::BinaryExpr>().a) && known(e->as<ir::BinaryExpr>().b);
      case ir::ExprKind::Select: {
        const auto& s = e->as<ir::SelectExpr>();
        return known(s.cond) && known(s.a) && known(s.b);
      }
      case ir::ExprKind::Cast: return known(e->as<ir::CastExpr>().a);
      default: return false;  // an element of device memory, a math call
    }
  }
  bool known(const std::vector<ir::Expr>& es) const {
    return std::all_of(es.begin(), es.end(), [&](const ir::Expr& e) { return known(e); });
  }
};

const char* stmt_text(ir::StmtKind k) {
  switch (k) {
    case ir::StmtKind::Assign: return "an assignment";
    case ir::StmtKind::Store: return "an element write";
    case ir::StmtKind::For: return "a loop";
    case ir::StmtKind::If: return "a branch";
    case ir::StmtKind::Bind: return "an array binding";
    case ir::StmtKind::Sort: return "a sort";
    case ir::StmtKind::Atomic: return "an atomic update";
    default: return "a statement outside launches";
  }
}

/// The byte range an array's elements may occupy, relative to its pointer: [lo, hi), lo == hi when empty.
void byte_offsets(PlanEntry::Array& a, std::int64_t esize) {
  std::int64_t lo = 0, hi = esize;
  for (int d = 0; d < a.rank; ++d) {
    if (a.shape[d] <= 0) {
      a.lo = a.hi = 0;
      return;
    }
    const std::int64_t reach = (a.shape[d] - 1) * a.strides[d] * esize;
    (reach < 0 ? lo : hi) += reach;
  }
  a.lo = lo;
  a.hi = hi;
}

}  // namespace

std::string plan_refusal(const Program& program) {
  const ir::Function& f = *program.function;
  if (f.result) return "it returns a scalar";
  if (f.returns_tuple()) return "it returns a tuple";
  ExtentValues known;
  for (const ir::Var& p : f.params)
    if (p->type.is_array()) known.arrays.insert(p.get());
  std::vector<ir::Stmt> body;
  ir::straight_line(f.body, body);
  for (const ir::Stmt& s : body) {
    switch (s->kind) {
      case ir::StmtKind::Let: {
        const auto& l = s->as<ir::LetStmt>();
        if (!known.known(l.init)) return fmt::format("the host computes {} from a scalar argument or device data", l.var->name);
        known.scalars.insert(l.var.get());
        break;
      }
      case ir::StmtKind::Check: {
        const auto& c = s->as<ir::CheckStmt>();
        if (!known.known(c.cond) || !known.known(c.args)) return "a check reads more than the arguments' extents";
        break;
      }
      case ir::StmtKind::Allocate: {
        const auto& a = s->as<ir::AllocateStmt>();
        if (!known.known(a.shape)) return fmt::format("the shape of {} depends on more than the arguments' extents", a.array->name);
        known.arrays.insert(a.array.get());
        break;
      }
      case ir::StmtKind::Launch: {
        const auto& l = s->as<ir::LaunchStmt>();
        const GpuKernel& gk = program.gpu_kernels.at(static_cast<std::size_t>(l.kernel));
        if (gk.slots) return fmt::format("kernel {} reduces into host values", gk.name);
        if (gk.may_fail) return fmt::format("kernel {} may fail (its status is read)", gk.name);
        if (!gk.fold_name.empty()) return fmt::format("kernel {} has a fold kernel", gk.name);
        const ir::ParforStmt& p = l.parfor();
        if (!known.known(p.begins) || !known.known(p.ends) || (gk.row_length && !known.known(gk.row_length)))
          return fmt::format("the bounds of kernel {} depend on more than the arguments' extents", gk.name);
        for (const Param& prm : gk.params) {
          if (prm.kind == ParamKind::Scratch || prm.kind == ParamKind::Status)
            return fmt::format("kernel {} takes scratch or status memory", gk.name);
          if (prm.kind == ParamKind::Scalar && prm.var->kind != ir::VarKind::Param && !known.scalars.count(prm.var))
            return fmt::format("kernel {} takes {}, computed on the host from more than extents", gk.name, prm.var->name);
          if ((prm.kind == ParamKind::Data || prm.kind == ParamKind::Extent || prm.kind == ParamKind::Stride) &&
              !known.arrays.count(prm.var))
            return fmt::format("kernel {} takes {}, not an argument or an allocated array", gk.name, prm.var->name);
        }
        break;
      }
      default: return fmt::format("the host function runs {}", stmt_text(s->kind));
    }
  }
  return {};
}

// ---- recording ------------------------------------------------------------------------------------------

void PlanRecorder::allocation(CUdeviceptr p, std::size_t bytes, const ir::NewArray& what) {
  if (bytes == 0) ok = false;  // no address: nothing to find it by
  allocations.push_back({p, {bytes, what.text()}});
}

void PlanRecorder::launch(std::size_t kernel, const gpu::LoadedFunction& fn, const LaunchChoice& choice,
                          const std::uint64_t* counts, int rank, std::int64_t rows, const PlanParamSource* from,
                          void* const* params, std::size_t n) {
  if (n > PlanLaunch::kMaxParams) ok = false;
  if (!ok) return;
  PlanLaunch l;
  l.fn = &fn;
  l.function = fn.fn;
  const Geometry& g = choice.geometry;
  l.grid[0] = g.grid.x, l.grid[1] = g.grid.y, l.grid[2] = g.grid.z;
  l.block[0] = g.block.x, l.block[1] = g.block.y, l.block[2] = g.block.z;
  l.kernel = kernel;
  l.choice = choice;
  std::copy(counts, counts + rank, l.counts);
  l.rank = rank;
  l.rows = rows;
  l.nvalues = static_cast<std::uint8_t>(n);
  for (std::size_t k = 0; k < n; ++k) {
    std::memcpy(&l.values[k], params[k], sizeof(std::uint64_t));  // every parameter is read from an 8-byte slot
    PlanParamSource s = from[k];
    if (s.source == PlanSource::Refused) {
      ok = false;
      return;
    }
    if (s.source == PlanSource::Allocation) {  // which of the call's allocations: found by its address
      CUdeviceptr p;
      std::memcpy(&p, &l.values[k], sizeof p);
      const auto at = std::find_if(allocations.begin(), allocations.end(), [&](const Alloc& a) { return a.p == p; });
      if (at == allocations.end()) {
        ok = false;
        return;
      }
      s.index = static_cast<std::uint8_t>(at - allocations.begin());
    }
    if (s.source == PlanSource::Fixed) continue;
    if (l.npatches == PlanLaunch::kMaxPatches) {
      ok = false;
      return;
    }
    l.patches[l.npatches++] = {static_cast<std::uint8_t>(k), s};
  }
  launches.push_back(std::move(l));
}

// ---- the plans ------------------------------------------------------------------------------------------

LaunchPlans::LaunchPlans(const Program& program, std::uint32_t written, std::uint32_t arrays, const CudaOptions& opts,
                         const DeviceMachine& machine)
    : nparams_(program.function->params.size()), written_(written), arrays_(arrays), machine_(&machine) {
  for (const ir::Var& p : program.function->params) {
    ranks_.push_back(p->type.is_array() ? p->type.rank : 0);
    esizes_.push_back(size_of(p->type.elem));
  }
  if (!opts.launch_plans) refusal_ = "KILN_CUDA_PLANS=0";
  else if (opts.sync_each_launch) refusal_ = "KILN_CUDA_SYNC=1 waits after every launch";
  else if (nparams_ > 32) refusal_ = "more than 32 parameters";
  else refusal_ = plan_refusal(program);
}

LaunchPlans::~LaunchPlans() {
  for (std::size_t i = 0; i < n_.load(std::memory_order_acquire); ++i) delete entries_[i].load(std::memory_order_relaxed);
}

const PlanEntry* LaunchPlans::find(void* const* args, int device) const {
  const std::size_t n = n_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    const PlanEntry* e = entries_[i].load(std::memory_order_relaxed);
    if (e->ordinal != device) continue;
    bool same = true;
    for (const PlanEntry::Array& a : e->arrays) {
      const auto* d = static_cast<const ArrayDesc*>(args[a.param]);
      for (int k = 0; k < a.rank; ++k) same &= d->shape[k] == a.shape[k] && d->strides[k] == a.strides[k];
      if (!same) break;
    }
    if (same) return e;
  }
  return nullptr;
}

namespace {

/// Whether `e` is the plan for these DeviceArgHeads on `device`: the ranks and devices, which nothing compared
/// before, then the shapes and strides.
bool heads_match(const PlanEntry& e, void* const* args, int device) {
  if (e.ordinal != device) return false;
  for (const PlanEntry::Array& a : e.arrays) {
    const auto* h = static_cast<const DeviceArgHead*>(args[a.param]);
    if (h->rank != a.rank || h->device != device) return false;
    for (int k = 0; k < a.rank; ++k)
      if (h->desc.shape[k] != a.shape[k] || h->desc.strides[k] != a.strides[k]) return false;
  }
  return true;
}

/// Whether array `w`'s and `r`'s elements may share bytes.
bool share_bytes(const PlanEntry::Array& w, const PlanEntry::Array& r, void* const* args) {
  const auto bw = reinterpret_cast<std::uintptr_t>(static_cast<const ArrayDesc*>(args[w.param])->data);
  const auto br = reinterpret_cast<std::uintptr_t>(static_cast<const ArrayDesc*>(args[r.param])->data);
  return bw + static_cast<std::uintptr_t>(w.lo) < br + static_cast<std::uintptr_t>(r.hi) &&
         br + static_cast<std::uintptr_t>(r.lo) < bw + static_cast<std::uintptr_t>(w.hi);
}

/// Whether a written argument overlaps another: then the executor's path decides (a copy, the
/// __restrict__-free kernel, or an AliasError), as for every call before plans.
bool overlaps(const PlanEntry& e, void* const* args) {
  const PlanEntry::Array* a = e.arrays.data();
  if (e.npairs != PlanEntry::kManyPairs) {
    for (std::uint8_t i = 0; i < e.npairs; ++i)
      if (share_bytes(a[e.pairs[i][0]], a[e.pairs[i][1]], args)) return true;
    return false;
  }
  for (const PlanEntry::Array& w : e.arrays) {
    if (!w.written || w.lo == w.hi) continue;
    for (const PlanEntry::Array& r : e.arrays)
      if (&r != &w && r.lo != r.hi && share_bytes(w, r, args)) return true;
  }
  return false;
}

/// The launches of plan `e` with this call's arguments and allocations (`alloc`, one per e.allocations).
void launch_all(const PlanEntry& e, void* const* args, const CUdeviceptr* alloc, kiln::cuda::detail::StreamState& stream) {
  // Planned kernels have no private-copy candidates (device_machine.cpp), so no element counts enter the record.
  static constexpr std::uint64_t kNoElements[kMaxPrivateArrays] = {};
  for (const PlanLaunch& l : e.launches) {
    // The driver copies each parameter from where params[k] points when the launch is queued: a patched one
    // points at this call's own value (its argument's descriptor's pointer, its scalar's slot, its allocation),
    // the rest at the plan's recorded values.
    void* params[PlanLaunch::kMaxParams];
    // Most kernels have at most 8 parameters: copied as one fixed block (a few vector moves, where a copy of a
    // variable length is a string instruction with its start-up cost); the rest of the block is never read.
    if (l.nvalues <= 8) std::memcpy(params, l.params, 8 * sizeof(void*));
    else std::memcpy(params, l.params, l.nvalues * sizeof(void*));
    for (std::size_t i = 0; i < l.npatches; ++i) {
      const PlanLaunch::Patch& p = l.patches[i];
      switch (p.from.source) {
        case PlanSource::ArgData: params[p.param] = &static_cast<ArrayDesc*>(args[p.from.index])->data; break;
        case PlanSource::ArgScalar: params[p.param] = args[p.from.index]; break;  // a ScalarSlot: its value first
        case PlanSource::Allocation: params[p.param] = const_cast<CUdeviceptr*>(&alloc[p.from.index]); break;
        default: break;  // the recorded value
      }
    }
    if (const CUresult r = e.launch_kernel(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                                                    l.block[2], 0, stream.stream, params, nullptr);
        r != CUDA_SUCCESS)
      gpu::launch(stream.stream, *l.fn, {l.grid[0], l.grid[1], l.grid[2]}, {l.block[0], l.block[1], l.block[2]}, params);  // throws, naming it
    // The kernel's latest launch is this one: recorded unless the record is already this launch's.
    if (l.memo->source() != &l) l.memo->record(l.counts, l.rank, l.fn, l.rows, kNoElements, l.choice, &l);
  }
}

/// Runs plan `e` with this call's arguments (the checks made): its allocations from the stream, each launch's
/// recorded parameters with this call's pointers and scalars patched in, the kernel's latest launch noted.
void launch_plan(const PlanEntry& e, void* const* args, void* result, kiln::cuda::detail::StreamState& stream) {
  gpu::Device& dev = *e.device;
  if (CUcontext cur = nullptr; e.current_context(&cur) != CUDA_SUCCESS || cur != e.context) dev.bind();
  const std::size_t nalloc = e.allocations.size();
  if (nalloc == 0) {  // into the arguments
    launch_all(e, args, nullptr, stream);
    return;
  }
  SmallArray<CUdeviceptr, 8> alloc(nalloc);
  std::size_t made = 0;
  const auto free_all = [&]() noexcept {
    for (std::size_t i = 0; i < made; ++i) {
      stream.free(alloc[i], e.allocations[i].bytes);
      dev.count_free(e.allocations[i].bytes);
    }
  };
  for (; made < nalloc; ++made) {
    const PlanAllocation& a = e.allocations[made];
    if (const CUresult r = stream.allocate(a.bytes, &alloc[made]); r != CUDA_SUCCESS) {
      free_all();
      throw_alloc_failed(dev, r, a.bytes, a.what);
    }
    dev.count_alloc(a.bytes);
  }
  try {
    launch_all(e, args, alloc.data(), stream);
  } catch (...) {
    free_all();
    throw;
  }
  // The call's temporaries go back at this point of the stream, as the executor's path frees them.
  for (std::size_t i = 0; i < nalloc; ++i) {
    if (static_cast<int>(i) == e.result) continue;
    stream.free(alloc[i], e.allocations[i].bytes);
    dev.count_free(e.allocations[i].bytes);
  }
  if (e.result >= 0) {
    ArrayDesc& out = *static_cast<ArrayDesc*>(result);
    out = e.result_desc;
    out.data = reinterpret_cast<void*>(alloc[static_cast<std::size_t>(e.result)]);
  }
}

}  // namespace

const PlanEntry* LaunchPlans::find_heads(void* const* args, int device) const {
  const std::size_t n = n_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    const PlanEntry* e = entries_[i].load(std::memory_order_relaxed);
    if (heads_match(*e, args, device)) return e;
  }
  return nullptr;
}

bool LaunchPlans::may_record(void* const* args, int device) const {
  return enabled() && n_.load(std::memory_order_acquire) < kMaxEntries && !find(args, device);
}

void LaunchPlans::publish(const PlanRecorder& rec, void* const* args, gpu::Device& dev, const ArrayDesc* result) {
  if (!rec.ok) return;
  auto e = std::make_unique<PlanEntry>();
  e->device = &dev;
  e->ordinal = dev.info().ordinal;
  e->context = dev.context();
  e->current_context = gpu::driver().cuCtxGetCurrent;
  e->launch_kernel = gpu::driver().cuLaunchKernel;
  for (std::size_t i = 0; i < nparams_; ++i) {
    if (!((arrays_ >> i) & 1u)) continue;
    const auto* d = static_cast<const ArrayDesc*>(args[i]);
    PlanEntry::Array a;
    a.param = static_cast<std::uint8_t>(i);
    a.rank = static_cast<std::uint8_t>(ranks_[i]);
    a.written = (written_ >> i) & 1u;
    std::copy(d->shape, d->shape + a.rank, a.shape);
    std::copy(d->strides, d->strides + a.rank, a.strides);
    byte_offsets(a, esizes_[i]);
    e->arrays.push_back(a);
  }
  for (const auto& a : rec.allocations) e->allocations.push_back(a.a);
  for (std::size_t w = 0; w < e->arrays.size(); ++w) {
    const PlanEntry::Array& aw = e->arrays[w];
    if (!aw.written || aw.lo == aw.hi) continue;
    for (std::size_t r = 0; r < e->arrays.size(); ++r) {
      if (r == w || e->arrays[r].lo == e->arrays[r].hi) continue;
      if (e->npairs == PlanEntry::kMaxPairs) e->npairs = PlanEntry::kManyPairs;
      if (e->npairs == PlanEntry::kManyPairs) break;
      e->pairs[e->npairs][0] = static_cast<std::uint8_t>(w);
      e->pairs[e->npairs][1] = static_cast<std::uint8_t>(r);
      ++e->npairs;
    }
  }
  e->launches = rec.launches;  // where they stay: their parameter arrays point into them
  for (PlanLaunch& l : e->launches) {
    l.memo = &machine_->memo(l.kernel);
    for (std::size_t k = 0; k < l.nvalues; ++k) l.params[k] = &l.values[k];
  }
  if (result) {
    const auto at = std::find_if(rec.allocations.begin(), rec.allocations.end(),
                                 [&](const PlanRecorder::Alloc& a) { return a.p == reinterpret_cast<CUdeviceptr>(result->data); });
    if (at == rec.allocations.end()) return;  // not one of the call's allocations
    e->result = static_cast<int>(at - rec.allocations.begin());
    e->result_desc = *result;
    e->result_desc.data = nullptr;
  }
  std::lock_guard lock(publish_);
  const std::size_t n = n_.load(std::memory_order_relaxed);
  if (n >= kMaxEntries || find(args, dev.info().ordinal)) return;
  entries_[n].store(e.release(), std::memory_order_relaxed);
  n_.store(n + 1, std::memory_order_release);
}

bool LaunchPlans::run(void* const* args, void* result) const {
  const auto& memory = *static_cast<const ArgMemory*>(args[nparams_]);
  kiln::cuda::detail::StreamState& stream = *memory.stream;
  // The typed path leaves a graph being recorded to the general path, which keeps the graph's arrays alive.
  if (memory.heads && stream.recording) return false;
  const PlanEntry* e = memory.heads ? find_heads(args, stream.device) : find(args, stream.device);
  if (!e) return false;
  // A graph being recorded cannot make arrays (the executor's path says why); launches alone are recorded as any.
  if (stream.recording && !e->allocations.empty()) return false;
  if (overlaps(*e, args)) return false;
  launch_plan(*e, args, result, stream);
  (memory.heads ? e->typed_runs : e->runs).fetch_add(1, std::memory_order_relaxed);
  if (memory.ran) *memory.ran = {e, &LaunchPlans::run_bound};
  return true;
}

bool LaunchPlans::run_bound(const void* plan, void* const* heads, kiln::cuda::detail::StreamState& stream, void* result) {
  const PlanEntry& e = *static_cast<const PlanEntry*>(plan);
  if (stream.recording || !heads_match(e, heads, stream.device) || overlaps(e, heads)) return false;
  launch_plan(e, heads, result, stream);
  e.typed_runs.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::string LaunchPlans::describe() const {
  if (!enabled()) return fmt::format("repeated asynchronous calls: through the host executor ({})\n", refusal_);
  const std::size_t n = n_.load(std::memory_order_acquire);
  std::uint64_t runs = 0, typed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const PlanEntry* e = entries_[i].load(std::memory_order_relaxed);
    runs += e->runs.load(std::memory_order_relaxed);
    typed += e->typed_runs.load(std::memory_order_relaxed);
  }
  return fmt::format("repeated asynchronous calls: launch plans (codegen/cuda/launch_plan.hpp), {} recorded (of {} kept), "
                     "{} call(s) run by them, {} of those by the typed path (DeviceArrays and numbers of the parameters' "
                     "own types: kiln/device.hpp)\n",
                     n, kMaxEntries, runs + typed, typed);
}

}  // namespace kiln::codegen::cuda
