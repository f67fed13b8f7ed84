// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA target's ir::Machine: device memory for the host executor, and the launches of the kernels.
#include "codegen/cuda/device_machine.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "codegen/cuda/launch_model.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/semantics.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {
namespace {

using Value = ScalarSlot;
using ir::Frame;

template <class T>
T get(const Value& v) {
  T x;
  std::memcpy(&x, &v, sizeof x);
  return x;
}

template <class T>
Value make(T x) {
  Value v;
  std::memset(&v, 0, sizeof v);
  std::memcpy(&v, &x, sizeof x);
  return v;
}

CallState& call_of(Frame& fr) { return *static_cast<CallState*>(fr.machine_state); }

/// The bytes an array's elements span, [lo, hi); empty for an array without elements.
std::pair<std::uintptr_t, std::uintptr_t> byte_range(const ArrayDesc& d, int rank, std::int64_t esize) {
  std::int64_t lo = 0, hi = 0;
  for (int k = 0; k < rank; ++k) {
    if (d.shape[k] <= 0) return {0, 0};
    const std::int64_t reach = (d.shape[k] - 1) * d.strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(d.data);
  return {base + static_cast<std::uintptr_t>(lo * esize), base + static_cast<std::uintptr_t>((hi + 1) * esize)};
}

/// argmin/argmax: does the later candidate (x, k) replace the running (v, i)? As kiln_arg_takes in the prelude.
template <class T>
bool arg_takes(ReduceOp op, const ArgClauses& c, T x, T v, std::int64_t i) {
  bool take = op == ReduceOp::ArgMin ? x < v : x > v;
  if constexpr (std::is_floating_point_v<T>)
    if (c.nan_wins) take = take || (std::isnan(x) && !std::isnan(v));
  if (c.empty_loses) take = take || i < 0;
  return take;
}

/// A launch's bound as the host evaluates it at every launch: a constant and an argument's extent are read
/// directly (the usual `0` and `x.shape(0)`), anything else through the executor's closure.
class LaunchBound {
 public:
  LaunchBound(const ir::Expr& e, ir::HostScope& scope) {
    if (e->kind == ir::ExprKind::Const) {
      constant_ = e->as<ir::ConstExpr>().i;
    } else if (e->kind == ir::ExprKind::Dim) {
      slot_ = scope.array(e->as<ir::DimExpr>().array.get());
      axis_ = e->as<ir::DimExpr>().axis;
    } else {
      value_ = scope.value(e);
    }
  }
  std::int64_t operator()(Frame& fr) const {
    if (value_) return value_(fr).i64;
    if (slot_ >= 0) return fr.arrays[static_cast<std::size_t>(slot_)].shape[axis_];
    return constant_;
  }

 private:
  std::int64_t constant_ = 0;
  int slot_ = -1, axis_ = 0;
  std::function<Value(Frame&)> value_;
};

}  // namespace

// ---- CallState ----------------------------------------------------------------------------------------

CallNeeds::CallNeeds(const Program& prog) {
  for (const auto& k : prog.gpu_kernels) {
    scratch_bytes = std::max(scratch_bytes, k.scratch_bytes());
    may_fail |= k.may_fail;
  }
}

CallState::CallState(gpu::Device& d, const gpu::Module& m, const CallNeeds& needs, KernelStatus* s,
                     kiln::cuda::detail::StreamState* a)
    : dev(d), module(m), status(s), async(a), stream(a ? a->stream : d.stream()) {
  const std::size_t scratch_bytes = needs.scratch_bytes;
  const bool may_fail = needs.may_fail;
  if (async) {
    // Stream-ordered: the device's shared buffers are only safe for work on its own stream.
    if (scratch_bytes) scratch = alloc(scratch_bytes, "reduction scratch");
    if (may_fail) device_status = async->status_slot();
    return;
  }
  if (scratch_bytes) {
    scratch_ = dev.scratch(scratch_bytes);
    scratch = scratch_.ptr();
  }
  if (may_fail) {
    status_ = dev.scratch(sizeof(KernelStatus));
    device_status = status_.ptr();
    gpu::check(gpu::driver().cuMemsetD8Async(device_status, 0, sizeof(KernelStatus), stream), "clearing the kernel status");
  }
}

CallState::~CallState() {
  if (host) {  // not handed to a Future (the call failed): reusable once the copies into it have landed
    gpu::driver().cuEventRecord(host->done, stream);
    dev.host_slots().give_back(host);
  }
  for (std::size_t i = 0; i < owned_.size(); ++i) free_at_stream(owned_[i].first, owned_[i].second);
}

void CallState::free_at_stream(CUdeviceptr p, std::size_t bytes) noexcept {
  if (async) async->free(p, bytes);
  else dev.blocks().free(p, bytes);
  dev.count_free(bytes);
}

CUresult CallState::try_alloc(std::size_t bytes, CUdeviceptr* p) {
  const CUresult r = async ? async->allocate(bytes, p) : dev.blocks().allocate(bytes, p);
  if (r != CUDA_SUCCESS) return r;
  owned_.push_back({*p, bytes});
  dev.count_alloc(bytes);
  return r;
}

void throw_alloc_failed(const gpu::Device& dev, CUresult r, std::size_t bytes, std::string_view what) {
  throw DeviceError(fmt::format("{} {} ({} bytes) on CUDA device {} ({}): {}",
                                r == CUDA_ERROR_OUT_OF_MEMORY ? "out of device memory allocating" : "cannot allocate", what,
                                bytes, dev.info().ordinal, dev.info().name, gpu::error_text(r)));
}

CUdeviceptr CallState::alloc(std::size_t bytes, std::string_view what) {
  CUdeviceptr p = 0;
  if (bytes == 0) return p;
  if (const CUresult r = try_alloc(bytes, &p); r != CUDA_SUCCESS) throw_alloc_failed(dev, r, bytes, what);
  return p;
}

CUdeviceptr CallState::alloc(std::size_t bytes, const ir::NewArray& what) {
  CUdeviceptr p = 0;
  if (bytes == 0) return p;
  if (const CUresult r = try_alloc(bytes, &p); r != CUDA_SUCCESS) throw_alloc_failed(dev, r, bytes, what.text());
  return p;
}

void CallState::release(CUdeviceptr p) noexcept {
  for (std::size_t i = 0; i < owned_.size(); ++i) {
    if (owned_[i].first != p) continue;
    free_at_stream(p, owned_[i].second);
    owned_.remove(i);
    return;
  }
}

bool CallState::adopt(CUdeviceptr p) noexcept {
  for (std::size_t i = 0; i < owned_.size(); ++i) {
    if (owned_[i].first != p) continue;
    owned_.remove(i);
    for (std::size_t k = 0; k < sites.size(); ++k)
      if (sites[k] == p) sites[k] = 0;
    return true;
  }
  return false;
}

void* CallState::host_bytes(std::size_t bytes, bool status) {
  const auto round = [](std::size_t n) { return (n + 15) / 16 * 16; };
  // Room for the kernels' status stays free for the end of the call, which copies it after the totals.
  const std::size_t reserve = device_status && !status ? round(sizeof(KernelStatus)) : 0;
  bytes = round(bytes);
  if (host_used + bytes + reserve > gpu::HostSlots::kBytes) return nullptr;
  if (!host) host = dev.host_slots().take();
  void* p = static_cast<char*>(host->host) + host_used;
  host_used += bytes;
  return p;
}

void CallState::synchronize(const std::string& kernel) {
  if (async && async->recording)
    throw DeviceError(fmt::format("kernel '{}' needs a value back from the device (a reduction's total, a scalar "
                                  "result, or an array element read outside a parfor) while its stream records a graph, "
                                  "where nothing can wait: call it outside kiln::cuda::capture",
                                  kernel));
  if (const CUresult r = gpu::driver().cuStreamSynchronize(stream); r != CUDA_SUCCESS) fail(r, fmt::format("kernel '{}'", kernel));
  pending.clear();
}

void CallState::fail(CUresult r, std::string_view what) const {
  std::string launched;
  for (std::size_t i = 0; i < pending.size(); ++i) launched += (i ? ", " : "") + *pending[i];
  if (!launched.empty())
    launched = fmt::format(" (CUDA kernels launched since the last synchronization: {}; KILN_CUDA_SYNC=1 checks after "
                           "every launch)",
                           launched);
  throw DeviceError(fmt::format("{}: the GPU reported {}{}", what, gpu::error_text(r), launched));
}

// ---- the machine ----------------------------------------------------------------------------------------

DeviceMachine::DeviceMachine(std::shared_ptr<const Program> program, const CudaOptions& opts)
    : prog_(std::move(program)),
      result_only_(ir::result_only_launches(*prog_->function)),
      sync_each_(opts.sync_each_launch),
      overrides_{opts.waves, opts.row_threads, opts.coarsen_waves, opts.contraction, opts.private_copies, opts.march_chunks},
      sort_items_(opts.sort_items),
      sort_match_(opts.sort_match),
      scan_tile_kib_(opts.scan_tile_kib),
      last_(std::make_unique<LaunchMemo[]>(prog_->gpu_kernels.size())) {}

std::string DeviceMachine::describe() const {
  std::string out = "CUDA kernels (launch model: codegen/cuda/launch_model.hpp):\n";
  for (std::size_t i = 0; i < prog_->gpu_kernels.size(); ++i) {
    const GpuKernel& k = prog_->gpu_kernels[i];
    out += fmt::format("  {}: {}-d, {}; {}\n", k.name, k.rank, name_of(k.strategy), k.plan);
    const std::optional<LaunchRecord> l = last_[i].latest();
    if (!l) {
      out += "    not launched yet\n";
      continue;
    }
    const Geometry& g = l->choice.geometry;
    out += fmt::format("    last launch: {} iterations, grid {} x {} x {}, blocks of {} x {} x {}, {} per thread per round: {} [{}]\n",
                       l->iterations, g.grid.x, g.grid.y, g.grid.z, g.block.x, g.block.y, g.block.z, l->choice.per_thread,
                       reason_text(l->choice.reason), l->choice.tiles ? k.tiles_name : l->function->name);
    if (k.privates.empty()) continue;
    // The private-copy clause: which arrays updated copies in shared memory, and why.
    std::string arrays;
    for (std::size_t a = 0; a < k.privates.size(); ++a) {
      const unsigned bits = l->choice.private_mask >> (2 * a);
      arrays += fmt::format("{}{} ({} elements{})", a ? ", " : "", k.privates[a].array->name, l->elements[a],
                            !(bits & 1u) ? ": not copied" : (bits & 2u) ? ", counted in 32 bits per block" : "");
    }
    out += fmt::format("    array reductions {}: {}; {} iterations per block, {} bytes of shared memory per block\n", arrays,
                       reason_text(l->choice.private_reason), l->choice.block_iterations, l->choice.shared_bytes);
  }
  for (const std::string& s : sort_plans_) out += "  " + s + "\n";
  for (const std::string& s : scan_plans_) out += "  " + s + "\n";
  return out;
}

void fold_totals(const GpuKernel& gk, const ReductionSlots& slots, const std::uint64_t* totals, std::vector<Value>& scalars) {
  for (std::size_t i = 0; i < gk.reductions.size(); ++i) {
    const ir::Reduction& r = gk.reductions[i];
    const auto [vs, is] = slots[i];
    Value& var = scalars[static_cast<std::size_t>(vs)];
    const std::uint64_t* slot = totals + gk.slot[i];
    ir::sem::with_type(r.var->type.elem, [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, bool> && !ir::sem::is_half_v<T>) {  // the builder refuses both
        T total;
        std::memcpy(&total, slot, sizeof total);
        if (ir::is_arg_reduction(r.op)) {
          Value& index = scalars[static_cast<std::size_t>(is)];
          if (arg_takes<T>(r.op, gk.clauses[i], total, get<T>(var), index.i64)) {
            var = make<T>(total);
            index = make<std::int64_t>(static_cast<std::int64_t>(slot[1]));
          }
        } else {
          var = make<T>(ir::sem::binary<T>(ir::combiner(r.op), get<T>(var), total));
        }
      }
    });
  }
}

void DeviceMachine::read(Frame& fr, const void* element, void* out, std::size_t bytes) const {
  CallState& c = call_of(fr);
  c.dev.count_transfer();
  c.check(gpu::driver().cuMemcpyDtoHAsync(out, reinterpret_cast<CUdeviceptr>(element), bytes, c.stream),
          "reading an array element");
  c.synchronize(prog_->function->name);
}

void DeviceMachine::write(Frame& fr, void* element, const void* in, std::size_t bytes) const {
  CallState& c = call_of(fr);
  c.dev.count_transfer();
  c.check(gpu::driver().cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(element), in, bytes, c.stream),
          "writing an array element");
  c.synchronize(prog_->function->name);  // `in` lives on the executor's stack
}

void* DeviceMachine::allocate(Frame& fr, int site, std::size_t bytes, const ir::NewArray& what) const {
  CallState& c = call_of(fr);
  c.sites.grow(static_cast<std::size_t>(site) + 1, 0);
  CUdeviceptr& current = c.sites[static_cast<std::size_t>(site)];
  if (current) c.release(current);  // the site runs again: its previous array's scope has ended
  current = 0;
  current = c.alloc(bytes, what);
  if (c.recorder) c.recorder->allocation(current, bytes, what);
  return reinterpret_cast<void*>(current);
}

void DeviceMachine::fail(Frame& fr, std::int32_t code, const std::string& message) const {
  CallState& c = call_of(fr);
  c.status->code = code;
  std::snprintf(c.status->message, sizeof c.status->message, "%s", message.c_str());
  throw KernelFailed{code};
}

std::function<void(Frame&)> DeviceMachine::launch(const ir::LaunchStmt& l, ir::HostScope& scope) const {
  const ir::ParforStmt& p = l.parfor();
  if (static_cast<std::size_t>(l.kernel) >= prog_->gpu_kernels.size() || prog_->gpu_kernels[static_cast<std::size_t>(l.kernel)].parfor != &p)
    backend_error(prog_->function->name, fmt::format("launch {} is not a kernel of the emitted program", l.kernel));
  const GpuKernel* gk = &prog_->gpu_kernels[static_cast<std::size_t>(l.kernel)];
  std::vector<LaunchBound> begins, ends;
  for (std::size_t d = 0; d < p.indices.size(); ++d) {
    begins.emplace_back(p.begins[d], scope);
    ends.emplace_back(p.ends[d], scope);
  }
  struct Binding {
    ParamKind kind;
    int slot;
    int axis;
  };
  std::vector<Binding> binds;
  // Where each parameter comes from, for a call that records a launch plan (launch_plan.hpp).
  std::vector<PlanParamSource> sources;
  const auto param_index = [&](const ir::VarNode* v) {
    const auto& all = prog_->function->params;
    const auto at = std::find_if(all.begin(), all.end(), [v](const ir::Var& p) { return p.get() == v; });
    return at == all.end() ? -1 : static_cast<int>(at - all.begin());
  };
  for (const Param& prm : gk->params) {
    int slot = -1;
    PlanParamSource from{PlanSource::Fixed, 0};
    switch (prm.kind) {
      case ParamKind::Scalar:
        slot = scope.scalar(prm.var);
        if (const int i = param_index(prm.var); i >= 0) from = {PlanSource::ArgScalar, static_cast<std::uint8_t>(i)};
        break;
      case ParamKind::Data:
        slot = scope.array(prm.var);
        if (const int i = param_index(prm.var); i >= 0) from = {PlanSource::ArgData, static_cast<std::uint8_t>(i)};
        else from = {PlanSource::Allocation, 0};
        break;
      case ParamKind::Extent:
      case ParamKind::Stride: slot = scope.array(prm.var); break;
      case ParamKind::Scratch:
      case ParamKind::Status: from = {PlanSource::Refused, 0}; break;
      default: break;
    }
    binds.push_back({prm.kind, slot, prm.axis});
    sources.push_back(from);
  }
  // Private-copy candidates: their arrays, whose element counts the launch model weighs.
  std::vector<int> private_slots;
  for (const PrivateCandidate& pc : gk->privates) private_slots.push_back(scope.array(pc.array));
  ReductionSlots red_slots;
  for (const auto& r : gk->reductions) red_slots.emplace_back(scope.scalar(r.var.get()), r.index ? scope.scalar(r.index.get()) : -1);
  struct ArgumentArray {
    int slot, rank;
    std::int64_t esize;
    bool written;
  };
  std::vector<ArgumentArray> arguments;
  // Which kernel arguments they are (bit i: parameter i); all bits when one is not an argument (a binding).
  std::uint32_t argument_params = 0;
  if (gk->alias_entry >= 0)
    for (const auto& [v, written] : gk->argument_arrays) {
      arguments.push_back({scope.array(v), v->type.rank, size_of(v->type.elem), written});
      const auto& fparams = prog_->function->params;
      const auto at = std::find_if(fparams.begin(), fparams.end(), [v = v](const ir::Var& p) { return p.get() == v; });
      argument_params |= at != fparams.end() && at - fparams.begin() < 32 ? 1u << (at - fparams.begin()) : ~0u;
    }

  // Cooperative kernels: the row length sizes the group (geometry.hpp, cooperative_geometry).
  std::function<Value(Frame&)> row_length;
  if (gk->row_length) row_length = scope.value(gk->row_length);
  const std::string name = prog_->function->name;
  const bool result_only = std::find(result_only_.begin(), result_only_.end(), &l) != result_only_.end();
  return [this, gk, begins, ends, binds, sources, red_slots, arguments, argument_params, name, row_length, result_only,
          private_slots](Frame& fr) {
    CallState& c = call_of(fr);
    const int rank = gk->rank;
    std::int64_t b[kMaxRank] = {};
    std::uint64_t n[kMaxRank] = {};
    for (int d = 0; d < rank; ++d) {
      const std::int64_t lo = begins[static_cast<std::size_t>(d)](fr), hi = ends[static_cast<std::size_t>(d)](fr);
      if (hi <= lo) return;  // empty: nothing runs, and every reduction keeps its value
      b[d] = lo;
      n[d] = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    }
    CUdeviceptr scratch = c.scratch, status = c.device_status;
    unsigned private_mask = 0;
    // The parameters' addresses: on the stack for the usual kernel (a launch is on every call's path).
    void* few[64];
    std::vector<void*> many(binds.size() > std::size(few) ? binds.size() : 0);
    void** params = many.empty() ? few : many.data();
    std::size_t k = 0;
    for (const Binding& x : binds) {
      switch (x.kind) {
        case ParamKind::Begin: params[k++] = &b[x.axis]; break;
        case ParamKind::Count: params[k++] = &n[x.axis]; break;
        case ParamKind::Scalar: params[k++] = &fr.scalars[static_cast<std::size_t>(x.slot)]; break;
        case ParamKind::Data: params[k++] = &fr.arrays[static_cast<std::size_t>(x.slot)].data; break;
        case ParamKind::Extent: params[k++] = &fr.arrays[static_cast<std::size_t>(x.slot)].shape[x.axis]; break;
        case ParamKind::Stride: params[k++] = &fr.arrays[static_cast<std::size_t>(x.slot)].strides[x.axis]; break;
        case ParamKind::Scratch: params[k++] = &scratch; break;
        case ParamKind::Status: params[k++] = &status; break;
        case ParamKind::Private: params[k++] = &private_mask; break;
      }
    }
    // __restrict__ holds unless a written argument overlaps another argument (one array passed twice). When
    // they are all kernel arguments that the call's overlap check found sharing nothing, nothing to compare.
    int entry = gk->entry;
    const bool compare = (argument_params & c.shared_arguments) != 0;
    for (std::size_t a = 0; compare && a < arguments.size() && entry == gk->entry; ++a) {
      const auto ra = byte_range(fr.arrays[static_cast<std::size_t>(arguments[a].slot)], arguments[a].rank, arguments[a].esize);
      for (std::size_t b = a + 1; b < arguments.size(); ++b) {
        if (!arguments[a].written && !arguments[b].written) continue;
        const auto rb = byte_range(fr.arrays[static_cast<std::size_t>(arguments[b].slot)], arguments[b].rank, arguments[b].esize);
        if (ra.first < ra.second && rb.first < rb.second && ra.first < rb.second && rb.first < ra.second) entry = gk->alias_entry;
      }
    }
    const gpu::LoadedFunction& main = c.module.function(static_cast<std::size_t>(entry));
    // The model's choice depends only on these inputs: a launch like the kernel's latest reuses it.
    const std::int64_t rows = row_length ? std::max<std::int64_t>(0, row_length(fr).i64) : -1;
    LaunchMemo& memo = last_[static_cast<std::size_t>(gk - prog_->gpu_kernels.data())];
    std::uint64_t elements[kMaxPrivateArrays] = {};
    PrivateInput privates[kMaxPrivateArrays];
    for (std::size_t a = 0; a < private_slots.size(); ++a) {
      const ArrayDesc& d = fr.arrays[static_cast<std::size_t>(private_slots[a])];
      const PrivateCandidate& pc = gk->privates[a];
      std::uint64_t e = 1;
      for (int x = 0; x < pc.array->type.rank; ++x) e *= static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.shape[x]));
      elements[a] = e;
      privates[a] = {e, size_of(pc.elem), pc.narrow_bound};
    }
    std::optional<LaunchChoice> known = memo.find(n, rank, &main, rows, elements);
    if (!known) {
      const gpu::DeviceInfo& info = c.dev.info();
      DeviceShape shape{info.sm_count, info.max_threads_per_sm, static_cast<unsigned>(info.max_grid[0])};
      shape.shared_per_block = info.shared_per_block;
      shape.shared_per_sm = info.shared_per_sm;
      shape.shared_reserved = info.shared_reserved;
      shape.max_blocks_per_sm = info.max_blocks_per_sm;
      // The alias variant of a stencil kernel is a plain grid-stride kernel: any geometry covers its space.
      known = choose_launch(*gk, n, {main.block_size, main.compact_block_size, main.resident_threads, main.static_shared}, shape, overrides_,
                            rows, private_slots.empty() ? nullptr : privates);
      memo.record(n, rank, &main, rows, elements, *known);
    }
    const Geometry& g = known->geometry;
    // A contraction's tiles variant takes the same parameters (emit_contraction.cpp); the alias variant has none.
    const gpu::LoadedFunction& fn = known->tiles && entry == gk->entry ? c.module.function(static_cast<std::size_t>(gk->tiles_entry)) : main;
    private_mask = known->private_mask;
    gpu::launch(c.stream, fn, {g.grid.x, g.grid.y, g.grid.z}, {g.block.x, g.block.y, g.block.z}, params, known->shared_bytes);
    if (c.recorder) {
      // A plan is for arguments that share no memory, and replays a plain launch: the tiles variant and
      // kernels with private-copy candidates (dynamic shared memory, the copies' mask argument) take the general path.
      if (entry != gk->entry || known->tiles || !gk->privates.empty() || known->shared_bytes != 0) c.recorder->ok = false;
      c.recorder->launch(static_cast<std::size_t>(gk - prog_->gpu_kernels.data()), fn, *known, n, rank, rows, sources.data(),
                         params, k);
    }
    c.pending.push_back(&fn.name);
    if (!gk->fold_name.empty()) {
      unsigned blocks = static_cast<unsigned>(g.grid.count());
      void* fold_params[] = {&scratch, &blocks};
      const gpu::LoadedFunction& fold = c.module.function(static_cast<std::size_t>(gk->fold_entry));
      gpu::launch(c.stream, fold, {1, 1, 1}, {static_cast<unsigned>(kMaxReduceBlocks), 1, 1}, fold_params);
      c.pending.push_back(&fold.name);
    }
    if (sync_each_ && !(c.async && c.async->recording)) c.synchronize(name);
    // An asynchronous call's status is read when its stream is synchronized (runtime/cuda/stream_state.hpp).
    if (gk->may_fail && !c.async) {
      std::int32_t code = 0;
      c.dev.count_transfer();
      c.check(gpu::driver().cuMemcpyDtoHAsync(&code, status, sizeof code, c.stream), "reading the kernel status");
      c.synchronize(name);
      if (code != 0) {
        c.dev.count_transfer();
        c.check(gpu::driver().cuMemcpyDtoHAsync(c.status, status, sizeof(KernelStatus), c.stream), "reading the kernel status");
        c.synchronize(name);
        throw KernelFailed{code};
      }
    }
    if (gk->slots == 0) return;
    const std::size_t bytes = static_cast<std::size_t>(gk->slots) * kSlotBytes;
    // Totals only the results read: an asynchronous call copies them back without waiting, and its Future
    // folds them in when it is read (codegen/cuda/deferred_scalars.hpp).
    if (result_only && c.may_defer && !c.async->recording) {
      if (void* host = c.host_bytes(bytes)) {
        c.dev.count_transfer();
        c.check(gpu::driver().cuMemcpyDtoHAsync(host, scratch + gk->result_offset(0), bytes, c.stream), "reading reduction results");
        c.deferred.push_back({gk, red_slots, static_cast<std::size_t>(static_cast<char*>(host) - static_cast<char*>(c.host->host))});
        fr.results_pending = true;
        return;
      }
    }
    // The reductions' totals come back to the host, which combines them with the variables' values.
    std::vector<std::uint64_t> totals(static_cast<std::size_t>(gk->slots));
    c.dev.count_transfer();
    c.check(gpu::driver().cuMemcpyDtoHAsync(totals.data(), scratch + gk->result_offset(0), bytes, c.stream), "reading reduction results");
    c.synchronize(name);
    fold_totals(*gk, red_slots, totals.data(), fr.scalars);
  };
}

}  // namespace kiln::codegen::cuda
