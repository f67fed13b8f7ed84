// The host executor: the skeleton compiled into closures over a frame of host scalars and device array
// descriptors (the same scheme as the interpreter), with each top-level parfor bound to its kernel.
#include "codegen/cuda/host_program.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#include "codegen/cuda/geometry.hpp"
#include "ir/builder.hpp"
#include "ir/semantics.hpp"
#include "ir/status.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {
namespace {

using Value = ScalarSlot;

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

struct Frame {
  std::vector<Value> scalars;
  std::vector<ArrayDesc> arrays;
  std::vector<CUdeviceptr> sites;  ///< per allocation site: its current array (freed when the site runs again)
  CallState* call = nullptr;
};

using ExprFn = std::function<Value(Frame&)>;
using StmtFn = std::function<void(Frame&)>;

/// The cap on 1-d elementwise grids in device-filling waves (0: no cap): CudaOptions::waves if set. Measured
/// on an H200 (docs/gpu.md): unrolled kernels stream fastest uncapped (4 iterations per thread), kernels
/// without unrolling (KILN_CUDA_UNROLL=1) with 8 waves of long-lived blocks.
int wave_cap(int setting, int unroll) { return setting >= 0 ? setting : unroll > 1 ? 0 : 8; }

[[noreturn]] void fail(CallState& c, std::int32_t code, const std::string& message) {
  c.status->code = code;
  std::snprintf(c.status->message, sizeof c.status->message, "%s", message.c_str());
  throw KernelFailed{code};
}

std::string shape_text(const std::int64_t* ext, int rank) {
  std::string s = "(";
  for (int k = 0; k < rank; ++k) s += (k ? ", " : "") + std::to_string(ext[k]);
  return s + (rank == 1 ? ",)" : ")");
}

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

}  // namespace

// ---- CallState ----------------------------------------------------------------------------------------

CallState::CallState(gpu::Device& d, const gpu::Module& m, const Program& prog, KernelStatus* s)
    : dev(d), module(m), status(s) {
  std::size_t scratch_bytes = 0;
  bool may_fail = false;
  for (const auto& k : prog.gpu_kernels) {
    scratch_bytes = std::max(scratch_bytes, k.scratch_bytes());
    may_fail |= k.may_fail;
  }
  if (scratch_bytes) scratch = dev.scratch(scratch_bytes);
  if (may_fail) {
    device_status = dev.scratch(sizeof(KernelStatus));
    gpu::check(gpu::driver().cuMemsetD8Async(device_status.ptr(), 0, sizeof(KernelStatus), dev.stream()), "clearing the kernel status");
  }
}

CallState::~CallState() {
  for (CUdeviceptr p : owned_) gpu::driver().cuMemFreeAsync(p, dev.stream());
}

CUdeviceptr CallState::alloc(std::size_t bytes, const std::string& what) {
  if (bytes == 0) return 0;
  CUdeviceptr p = 0;
  const CUresult r = gpu::driver().cuMemAllocAsync(&p, bytes, dev.stream());
  if (r != CUDA_SUCCESS)
    throw DeviceError((r == CUDA_ERROR_OUT_OF_MEMORY ? "out of device memory allocating " : "cannot allocate ") + what + " (" +
                      std::to_string(bytes) + " bytes) on CUDA device " + std::to_string(dev.info().ordinal) + " (" +
                      dev.info().name + "): " + gpu::error_text(r));
  owned_.push_back(p);
  return p;
}

void CallState::release(CUdeviceptr p) noexcept {
  for (std::size_t i = 0; i < owned_.size(); ++i) {
    if (owned_[i] != p) continue;
    gpu::driver().cuMemFreeAsync(p, dev.stream());
    owned_.erase(owned_.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

void CallState::synchronize(const std::string& kernel) {
  check(gpu::driver().cuStreamSynchronize(dev.stream()), "kernel '" + kernel + "'");
  pending.clear();
}

void CallState::check(CUresult r, const std::string& what) const {
  if (r == CUDA_SUCCESS) return;
  std::string list;
  for (const auto& n : pending) list += (list.empty() ? "" : ", ") + n;
  throw DeviceError(what + ": the GPU reported " + gpu::error_text(r) +
                    (list.empty() ? std::string() : " (CUDA kernels launched since the last synchronization: " + list +
                                                        "; KILN_CUDA_SYNC=1 checks after every launch)"));
}

// ---- the compiled skeleton ------------------------------------------------------------------------------

struct HostProgram::Impl {
  std::shared_ptr<const Program> prog;
  std::unordered_map<const ir::VarNode*, int> scalar_slots, array_slots;
  int sites = 0;
  std::vector<int> param_slots;
  StmtFn body;
  /// The result's members in order (a single result is one): a scalar's function or an array's slot (-1).
  std::vector<ExprFn> results;
  std::vector<int> result_arrays;
  bool sync_each = false;  ///< CudaOptions::sync_each_launch
  int waves = -1;          ///< CudaOptions::waves

  const std::string& kernel_name() const { return prog->function->name; }

  int scalar_slot(const ir::VarNode* v) { return scalar_slots.emplace(v, static_cast<int>(scalar_slots.size())).first->second; }
  int array_slot(const ir::VarNode* v) { return array_slots.emplace(v, static_cast<int>(array_slots.size())).first->second; }

  ExprFn expr(const ir::Expr& e);
  ExprFn binary(const ir::BinaryExpr& b);
  ExprFn call(const ir::CallExpr& c);
  std::function<CUdeviceptr(Frame&)> address(const ir::Var& array, const std::vector<ir::Expr>& indices);
  StmtFn stmt(const ir::Stmt& s);
  StmtFn allocate(const ir::AllocateStmt& a);
  StmtFn check(const ir::CheckStmt& c);
  StmtFn parfor(const ir::ParforStmt& p);
};

ExprFn HostProgram::Impl::expr(const ir::Expr& e) {
  switch (e->kind) {
    case ir::ExprKind::Const: {
      const auto& c = e->as<ir::ConstExpr>();
      const Value v = ir::sem::with_type(c.type, [&](auto t) {
        using T = decltype(t);
        if constexpr (std::is_floating_point_v<T>) return make<T>(static_cast<T>(c.f));
        else return make<T>(static_cast<T>(c.i));
      });
      return [v](Frame&) { return v; };
    }
    case ir::ExprKind::VarRef: {
      const int s = scalar_slot(e->as<ir::VarRefExpr>().var.get());
      return [s](Frame& fr) { return fr.scalars[static_cast<std::size_t>(s)]; };
    }
    case ir::ExprKind::Load: {
      const auto& l = e->as<ir::LoadExpr>();
      auto addr = address(l.array, l.indices);
      const std::size_t size = static_cast<std::size_t>(size_of(l.type));
      return [addr, size, this](Frame& fr) {
        const CUdeviceptr p = addr(fr);
        Value v;
        std::memset(&v, 0, sizeof v);
        CallState& c = *fr.call;
        c.check(gpu::driver().cuMemcpyDtoHAsync(&v, p, size, c.dev.stream()), "reading an array element");
        c.synchronize(kernel_name());
        return v;
      };
    }
    case ir::ExprKind::Dim: {
      const auto& d = e->as<ir::DimExpr>();
      const int s = array_slot(d.array.get());
      const int axis = d.axis;
      return [s, axis](Frame& fr) { return make<std::int64_t>(fr.arrays[static_cast<std::size_t>(s)].shape[axis]); };
    }
    case ir::ExprKind::Unary: {
      const auto& u = e->as<ir::UnaryExpr>();
      ExprFn a = expr(u.a);
      const UnaryOp op = u.op;
      return ir::sem::with_type(u.type, [&](auto t) -> ExprFn {
        using T = decltype(t);
        return [a, op](Frame& fr) { return make<T>(ir::sem::unary<T>(op, get<T>(a(fr)))); };
      });
    }
    case ir::ExprKind::Binary: return binary(e->as<ir::BinaryExpr>());
    case ir::ExprKind::Select: {
      const auto& s = e->as<ir::SelectExpr>();
      ExprFn c = expr(s.cond), a = expr(s.a), b = expr(s.b);
      return [c, a, b](Frame& fr) { return c(fr).b ? a(fr) : b(fr); };
    }
    case ir::ExprKind::Cast: {
      const auto& c = e->as<ir::CastExpr>();
      ExprFn a = expr(c.a);
      return ir::sem::with_type(c.type, [&](auto to) -> ExprFn {
        using To = decltype(to);
        return ir::sem::with_type(c.a->type, [&](auto from) -> ExprFn {
          using From = decltype(from);
          return [a](Frame& fr) { return make<To>(ir::sem::cast<To, From>(get<From>(a(fr)))); };
        });
      });
    }
    case ir::ExprKind::Call: return call(e->as<ir::CallExpr>());
  }
  throw CompileError("kiln CUDA backend: unknown expression kind in the host code of kernel '" + kernel_name() + "'", {});
}

ExprFn HostProgram::Impl::binary(const ir::BinaryExpr& b) {
  ExprFn x = expr(b.a), y = expr(b.b);
  const BinaryOp op = b.op;
  if (op == BinaryOp::And) return [x, y](Frame& fr) { return make<bool>(x(fr).b && y(fr).b); };
  if (op == BinaryOp::Or) return [x, y](Frame& fr) { return make<bool>(x(fr).b || y(fr).b); };
  return ir::sem::with_type(b.a->type, [&](auto t) -> ExprFn {
    using T = decltype(t);
    if (ir::is_comparison(op))
      return [x, y, op](Frame& fr) { return make<bool>(ir::sem::compare<T>(op, get<T>(x(fr)), get<T>(y(fr)))); };
    return [x, y, op](Frame& fr) {
      const T a = get<T>(x(fr));
      return make<T>(ir::sem::binary<T>(op, a, get<T>(y(fr))));
    };
  });
}

ExprFn HostProgram::Impl::call(const ir::CallExpr& c) {
  std::vector<ExprFn> args;
  for (const auto& a : c.args) args.push_back(expr(a));
  const Intrinsic fn = c.fn;
  return ir::sem::with_type(c.args[0]->type, [&](auto t) -> ExprFn {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool>) {
      throw CompileError("kiln CUDA backend: intrinsic on bool in kernel '" + kernel_name() + "'", {});
    } else {
      if (ir::returns_bool(fn)) {
        if constexpr (std::is_floating_point_v<T>)
          return [args, fn](Frame& fr) { return make<bool>(ir::sem::predicate<T>(fn, get<T>(args[0](fr)))); };
        throw CompileError("kiln CUDA backend: predicate on an integer in kernel '" + kernel_name() + "'", {});
      }
      return [args, fn](Frame& fr) {
        T v[3] = {};
        for (std::size_t k = 0; k < args.size(); ++k) v[k] = get<T>(args[k](fr));
        return make<T>(ir::sem::call<T>(fn, v[0], v[1], v[2]));
      };
    }
  });
}

// Host accesses are checked (an element copy past the end would be a driver error, not a clean one).
std::function<CUdeviceptr(Frame&)> HostProgram::Impl::address(const ir::Var& array, const std::vector<ir::Expr>& indices) {
  std::vector<ExprFn> idx;
  for (const auto& i : indices) idx.push_back(expr(i));
  const int slot = array_slot(array.get());
  const std::int64_t esize = size_of(array->type.elem);
  const std::string name = array->name;
  return [idx, slot, esize, name](Frame& fr) -> CUdeviceptr {
    const ArrayDesc& d = fr.arrays[static_cast<std::size_t>(slot)];
    std::int64_t offset = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      const std::int64_t i = idx[k](fr).i64;
      if (i < 0 || i >= d.shape[k])
        fail(*fr.call, kIndexOutOfRange,
             "index " + std::to_string(i) + " out of range on axis " + std::to_string(k) + " of " + name + " (shape " +
                 shape_text(d.shape, static_cast<int>(idx.size())) + ")");
      offset += i * d.strides[k];
    }
    return reinterpret_cast<CUdeviceptr>(d.data) + static_cast<CUdeviceptr>(offset * esize);
  };
}

StmtFn HostProgram::Impl::stmt(const ir::Stmt& s) {
  switch (s->kind) {
    case ir::StmtKind::Block: {
      std::vector<StmtFn> parts;
      for (const auto& x : s->as<ir::BlockStmt>().stmts) parts.push_back(stmt(x));
      return [parts](Frame& fr) {
        for (const auto& p : parts) p(fr);
      };
    }
    case ir::StmtKind::Let:
    case ir::StmtKind::Assign: {
      const bool let = s->kind == ir::StmtKind::Let;
      const ir::Var& v = let ? s->as<ir::LetStmt>().var : s->as<ir::AssignStmt>().var;
      ExprFn value = expr(let ? s->as<ir::LetStmt>().init : s->as<ir::AssignStmt>().value);
      const int slot = scalar_slot(v.get());
      return [value, slot](Frame& fr) { fr.scalars[static_cast<std::size_t>(slot)] = value(fr); };
    }
    case ir::StmtKind::Store: {
      const auto& st = s->as<ir::StoreStmt>();
      auto addr = address(st.array, st.indices);
      ExprFn value = expr(st.value);
      const std::size_t size = static_cast<std::size_t>(size_of(st.array->type.elem));
      return [this, addr, value, size](Frame& fr) {
        const Value v = value(fr);  // the value before the address, as the other backends do
        const CUdeviceptr p = addr(fr);
        CallState& c = *fr.call;
        c.check(gpu::driver().cuMemcpyHtoDAsync(p, &v, size, c.dev.stream()), "writing an array element");
        c.synchronize(kernel_name());  // `v` lives on this stack frame
      };
    }
    case ir::StmtKind::For: {
      const auto& f = s->as<ir::ForStmt>();
      ExprFn begin = expr(f.begin), end = expr(f.end);
      const int idx = scalar_slot(f.index.get());
      StmtFn body = stmt(f.body);
      return [begin, end, idx, body](Frame& fr) {
        const std::int64_t hi = end(fr).i64;
        for (std::int64_t i = begin(fr).i64; i < hi; ++i) {
          fr.scalars[static_cast<std::size_t>(idx)] = make<std::int64_t>(i);
          body(fr);
        }
      };
    }
    case ir::StmtKind::If: {
      const auto& i = s->as<ir::IfStmt>();
      ExprFn cond = expr(i.cond);
      StmtFn then_body = stmt(i.then_body);
      StmtFn else_body = i.else_body ? stmt(i.else_body) : StmtFn([](Frame&) {});
      return [cond, then_body, else_body](Frame& fr) {
        if (cond(fr).b) then_body(fr);
        else else_body(fr);
      };
    }
    case ir::StmtKind::Parfor: return parfor(s->as<ir::ParforStmt>());
    case ir::StmtKind::Bind: {
      // A binding is a descriptor in the frame: rebinding copies one, and each launch passes whatever array
      // the binding names at that moment.
      const auto& b = s->as<ir::BindStmt>();
      const int target = array_slot(b.target.get()), source = array_slot(b.source.get());
      return [target, source](Frame& fr) { fr.arrays[static_cast<std::size_t>(target)] = fr.arrays[static_cast<std::size_t>(source)]; };
    }
    case ir::StmtKind::Allocate: return allocate(s->as<ir::AllocateStmt>());
    case ir::StmtKind::Check: return check(s->as<ir::CheckStmt>());
    default:
      throw CompileError("kiln CUDA backend: kernel '" + kernel_name() + "': statement kind " +
                             std::to_string(static_cast<int>(s->kind)) + " cannot run on the GPU target",
                         {});
  }
}

StmtFn HostProgram::Impl::allocate(const ir::AllocateStmt& a) {
  std::vector<ExprFn> shape;
  for (const auto& e : a.shape) shape.push_back(expr(e));
  const int slot = array_slot(a.array.get());
  const int site = sites++;
  const std::int64_t esize = size_of(a.array->type.elem);
  const std::string name = a.array->name;
  return [shape, slot, site, esize, name](Frame& fr) {
    CallState& c = *fr.call;
    const int rank = static_cast<int>(shape.size());
    ArrayDesc d;
    for (int k = 0; k < rank; ++k) d.shape[k] = shape[static_cast<std::size_t>(k)](fr).i64;
    // kiln::array_size's rule, with kiln_rt_alloc's messages and status codes.
    const ArraySize size = array_size(d.shape, rank, esize);
    if (size.negative_axis >= 0)
      fail(c, kShapeMismatch, "cannot allocate array '" + name + "' of shape " + shape_text(d.shape, rank) +
                                  ": negative extent on axis " + std::to_string(size.negative_axis));
    if (size.too_large)
      fail(c, kShapeMismatch, "cannot allocate array '" + name + "' of shape " + shape_text(d.shape, rank) + " with " +
                                  std::to_string(esize) + "-byte elements: its size in bytes exceeds " +
                                  std::to_string(kMaxArrayBytes));
    const auto bytes = static_cast<std::size_t>(size.bytes);
    CUdeviceptr& current = fr.sites[static_cast<std::size_t>(site)];
    if (current) c.release(current);  // the site runs again: its previous array's scope has ended
    current = 0;
    current = c.alloc(bytes, "array " + name + " of shape " + shape_text(d.shape, rank));
    d.data = reinterpret_cast<void*>(current);
    std::int64_t stride = 1;
    for (int k = rank; k-- > 0;) {
      d.strides[k] = stride;
      stride *= d.shape[k];
    }
    fr.arrays[static_cast<std::size_t>(slot)] = d;
  };
}

StmtFn HostProgram::Impl::check(const ir::CheckStmt& ch) {
  ExprFn cond = expr(ch.cond);
  std::vector<ExprFn> args;
  for (const auto& a : ch.args) args.push_back(expr(a));
  const std::int32_t code = ch.code;
  const std::string message = ch.message;
  return [cond, args, code, message](Frame& fr) {
    if (cond(fr).b) return;
    std::vector<std::int64_t> values;
    for (const auto& a : args) values.push_back(a(fr).i64);
    fail(*fr.call, code, ir::format_message(message, values.data(), values.size()));
  };
}

StmtFn HostProgram::Impl::parfor(const ir::ParforStmt& p) {
  const std::size_t k = prog->kernel_of.at(&p);
  const GpuKernel* gk = &prog->gpu_kernels[k];
  std::vector<ExprFn> begins, ends;
  for (std::size_t d = 0; d < p.indices.size(); ++d) {
    begins.push_back(expr(p.begins[d]));
    ends.push_back(expr(p.ends[d]));
  }
  struct Binding {
    ParamKind kind;
    int slot;
    int axis;
  };
  std::vector<Binding> binds;
  for (const Param& prm : gk->params) {
    int slot = -1;
    switch (prm.kind) {
      case ParamKind::Scalar: slot = scalar_slot(prm.var); break;
      case ParamKind::Data:
      case ParamKind::Extent:
      case ParamKind::Stride: slot = array_slot(prm.var); break;
      default: break;
    }
    binds.push_back({prm.kind, slot, prm.axis});
  }
  std::vector<std::pair<int, int>> red_slots;  // (value slot, index slot or -1) per reduction
  for (const auto& r : gk->reductions) red_slots.emplace_back(scalar_slot(r.var.get()), r.index ? scalar_slot(r.index.get()) : -1);
  struct ArgumentArray {
    int slot, rank;
    std::int64_t esize;
    bool written;
  };
  std::vector<ArgumentArray> arguments;
  if (gk->alias_entry >= 0)
    for (const auto& [v, written] : gk->argument_arrays)
      arguments.push_back({array_slot(v), v->type.rank, size_of(v->type.elem), written});

  return [this, gk, begins, ends, binds, red_slots, arguments](Frame& fr) {
    CallState& c = *fr.call;
    const int rank = gk->rank;
    std::int64_t b[kMaxRank] = {};
    std::uint64_t n[kMaxRank] = {};
    for (int d = 0; d < rank; ++d) {
      const std::int64_t lo = begins[static_cast<std::size_t>(d)](fr).i64, hi = ends[static_cast<std::size_t>(d)](fr).i64;
      if (hi <= lo) return;  // empty: nothing runs, and every reduction keeps its value
      b[d] = lo;
      n[d] = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    }
    CUdeviceptr scratch = c.scratch.ptr(), status = c.device_status.ptr();
    std::vector<void*> params;
    params.reserve(binds.size());
    for (const Binding& x : binds) {
      switch (x.kind) {
        case ParamKind::Begin: params.push_back(&b[x.axis]); break;
        case ParamKind::Count: params.push_back(&n[x.axis]); break;
        case ParamKind::Scalar: params.push_back(&fr.scalars[static_cast<std::size_t>(x.slot)]); break;
        case ParamKind::Data: params.push_back(&fr.arrays[static_cast<std::size_t>(x.slot)].data); break;
        case ParamKind::Extent: params.push_back(&fr.arrays[static_cast<std::size_t>(x.slot)].shape[x.axis]); break;
        case ParamKind::Stride: params.push_back(&fr.arrays[static_cast<std::size_t>(x.slot)].strides[x.axis]); break;
        case ParamKind::Scratch: params.push_back(&scratch); break;
        case ParamKind::Status: params.push_back(&status); break;
      }
    }
    // __restrict__ holds unless a written argument overlaps another argument (one array passed twice).
    int entry = gk->entry;
    for (std::size_t a = 0; a < arguments.size() && entry == gk->entry; ++a) {
      const auto ra = byte_range(fr.arrays[static_cast<std::size_t>(arguments[a].slot)], arguments[a].rank, arguments[a].esize);
      for (std::size_t b = a + 1; b < arguments.size(); ++b) {
        if (!arguments[a].written && !arguments[b].written) continue;
        const auto rb = byte_range(fr.arrays[static_cast<std::size_t>(arguments[b].slot)], arguments[b].rank, arguments[b].esize);
        if (ra.first < ra.second && rb.first < rb.second && ra.first < rb.second && rb.first < ra.second) entry = gk->alias_entry;
      }
    }
    const gpu::LoadedFunction& main = c.module.function(static_cast<std::size_t>(entry));
    const gpu::DeviceInfo& info = c.dev.info();
    const DeviceShape shape{info.sm_count, info.max_threads_per_sm, static_cast<unsigned>(info.max_grid[0])};
    // The alias variant of a stencil kernel is a plain grid-stride kernel: any geometry covers its space.
    // Plain 1-d elementwise kernels take the compact block (runtime/cuda/module.hpp); tiled stencils and
    // 2-d/3-d kernels keep the occupancy API's, whose rows their tiles are shaped from.
    const bool compact = rank == 1 && gk->strategy == Strategy::Elementwise && !gk->stencil_columns;
    const Geometry g = geometry(gk->strategy, rank, n, compact ? main.compact_block_size : main.block_size, shape, wave_cap(waves, gk->unroll),
                                gk->stencil_columns ? gk->stencil_columns : gk->unroll, gk->stencil_rows);
    gpu::launch(c.dev, main, {g.grid.x, g.grid.y, g.grid.z}, {g.block.x, g.block.y, g.block.z}, params.data());
    c.pending.push_back(main.name);
    if (!gk->fold_name.empty()) {
      unsigned blocks = static_cast<unsigned>(g.grid.count());
      void* fold_params[] = {&scratch, &blocks};
      const gpu::LoadedFunction& fold = c.module.function(static_cast<std::size_t>(gk->fold_entry));
      gpu::launch(c.dev, fold, {1, 1, 1}, {static_cast<unsigned>(kMaxReduceBlocks), 1, 1}, fold_params);
      c.pending.push_back(fold.name);
    }
    if (sync_each) c.synchronize(kernel_name());
    if (gk->may_fail) {
      std::int32_t code = 0;
      c.check(gpu::driver().cuMemcpyDtoHAsync(&code, status, sizeof code, c.dev.stream()), "reading the kernel status");
      c.synchronize(kernel_name());
      if (code != 0) {
        c.check(gpu::driver().cuMemcpyDtoHAsync(c.status, status, sizeof(KernelStatus), c.dev.stream()), "reading the kernel status");
        c.synchronize(kernel_name());
        throw KernelFailed{code};
      }
    }
    if (gk->slots == 0) return;
    // The reductions' totals come back to the host, which combines them with the variables' values.
    std::vector<std::uint64_t> totals(static_cast<std::size_t>(gk->slots));
    const std::uint64_t* out = totals.data();
    c.check(gpu::driver().cuMemcpyDtoHAsync(totals.data(), scratch + gk->result_offset(0), totals.size() * kSlotBytes, c.dev.stream()),
               "reading reduction results");
    c.synchronize(kernel_name());
    for (std::size_t i = 0; i < gk->reductions.size(); ++i) {
      const ir::Reduction& r = gk->reductions[i];
      const auto [vs, is] = red_slots[i];
      Value& var = fr.scalars[static_cast<std::size_t>(vs)];
      const std::uint64_t* slot = out + gk->slot[i];
      ir::sem::with_type(r.var->type.elem, [&](auto t) {
        using T = decltype(t);
        if constexpr (!std::is_same_v<T, bool>) {
          T total;
          std::memcpy(&total, slot, sizeof total);
          if (ir::is_arg_reduction(r.op)) {
            Value& index = fr.scalars[static_cast<std::size_t>(is)];
            if (arg_takes<T>(r.op, gk->clauses[i], total, get<T>(var), index.i64)) {
              var = make<T>(total);
              index = make<std::int64_t>(static_cast<std::int64_t>(slot[1]));
            }
          } else {
            var = make<T>(ir::sem::binary<T>(ir::combiner(r.op), get<T>(var), total));
          }
        }
      });
    }
  };
}

// ---- HostProgram --------------------------------------------------------------------------------------

HostProgram::HostProgram(std::shared_ptr<const Program> program, const CudaOptions& opts)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.prog = std::move(program);
  m.sync_each = opts.sync_each_launch;
  m.waves = opts.waves;
  const ir::Function& f = *m.prog->function;
  for (const auto& p : f.params) m.param_slots.push_back(p->type.is_array() ? m.array_slot(p.get()) : m.scalar_slot(p.get()));
  m.body = m.stmt(f.body);
  auto member = [&m](const ir::Expr& scalar, const ir::Var& array) {
    m.results.push_back(scalar ? m.expr(scalar) : ExprFn());
    m.result_arrays.push_back(array ? m.array_slot(array.get()) : -1);
  };
  if (f.result || f.result_array) member(f.result, f.result_array);
  for (const auto& t : f.tuple) member(t.scalar, t.array);
}

HostProgram::~HostProgram() = default;

void HostProgram::run(CallState& call, void* const* args, void* const* outs) const {
  const Impl& m = *impl_;
  const ir::Function& f = *m.prog->function;
  Frame fr;
  fr.scalars.resize(m.scalar_slots.size());
  fr.arrays.resize(m.array_slots.size());
  fr.sites.assign(static_cast<std::size_t>(m.sites), 0);
  fr.call = &call;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const std::size_t slot = static_cast<std::size_t>(m.param_slots[i]);
    if (f.params[i]->type.is_array()) {
      fr.arrays[slot] = *static_cast<const ArrayDesc*>(args[i]);
    } else {
      Value v;
      std::memset(&v, 0, sizeof v);
      std::memcpy(&v, args[i], static_cast<std::size_t>(size_of(f.params[i]->type.elem)));
      fr.scalars[slot] = v;
    }
  }
  m.body(fr);
  for (std::size_t i = 0; i < m.results.size(); ++i) {
    if (m.results[i]) {
      const Value v = m.results[i](fr);
      const DType t = f.result ? f.result->type : f.tuple[i].scalar->type;
      std::memcpy(outs[i], &v, static_cast<std::size_t>(size_of(t)));
    } else {
      *static_cast<ArrayDesc*>(outs[i]) = fr.arrays[static_cast<std::size_t>(m.result_arrays[i])];
    }
  }
}

}  // namespace kiln::codegen::cuda
