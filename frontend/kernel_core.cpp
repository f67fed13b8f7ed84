// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The non-template half of kiln::Kernel: argument checking, the per-signature table, and compilation
// (trace -> passes -> backend).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

#include "codegen/backend.hpp"
#include "codegen/cuda/arg_memory.hpp"
#include "frontend/argument_overlap.hpp"
#include "frontend/compiler.hpp"
#include "frontend/settings.hpp"
#include "frontend/source_listing.hpp"
#include "frontend/source_names.hpp"
#include "frontend/trace_context.hpp"
#include "frontend/trace_summary.hpp"
#include "ir/analysis.hpp"
#include "ir/semantics.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/status.hpp"
#include "runtime/cache/compile_log.hpp"

namespace kiln::detail {
namespace {

constexpr std::size_t kMaxParams = 32;

/// What selects a compiled variant: the options and, per argument, array rank and unit stride.
struct SigKey {
  std::uint32_t options = 0;
  std::uint32_t n = 0;
  std::array<std::uint8_t, kMaxParams> codes{};
  bool operator==(const SigKey& o) const {
    return options == o.options && n == o.n && std::memcmp(codes.data(), o.codes.data(), n) == 0;
  }
};

/// The options of a variant that shape its traced IR, not only its compilation.
struct TraceShape {
  bool halo_reads = false;     ///< Options::halo_reads (TraceContext::halo_reads)
  bool lockstep_rows = false;  ///< the CUDA target (TraceContext::lockstep_rows: how scans along the last axis run)
  static TraceShape of(const Options& o) { return {o.halo_reads, o.target == Target::cuda}; }
};

struct Variant {
  SigKey key;
  Target target = Target::cpu;  ///< the options' target, read by every call without the kernel's lock
  codegen::CompiledKernel code;  ///< a copy of shared->code, one indirection closer for dispatch
  std::uint32_t written = 0;  ///< bit i: the kernel stores to array parameter i
  int result_rank = 0;
  std::vector<int> member_ranks;  ///< a tuple result: each member's rank (0: a scalar)
  std::shared_ptr<const VariantCode> shared;  ///< possibly also used by other kernels with the same cache key
  std::string checked_ir;  ///< check mode: the canonical traced IR every call must reproduce; else empty
  std::vector<std::string> locations;  ///< this kernel's source positions, for `{@k}` in check messages
  /// Throws the kiln::Error for a failed call's status: at the call, or (asynchronous calls) at the stream's
  /// next synchronization, which keeps a copy.
  std::function<void(const KernelStatus&)> throw_failure;
  TraceShape shape;  ///< the options it was traced with that shape the IR (check mode traces again the same way)
  SourceListing listing;  ///< the kernel's source as traced, for the report's source listing

  // Diagnostics, in this kernel's own names. When the code came from a cache the passes did not run; they
  // run again only if the lowered IR or the report is asked for.
  std::string report_head, report_timing;
  ir::Function traced;  ///< kept until `lowering` is known
  passes::PipelineOptions pipeline;  ///< the passes that made this code (e.g. bounds checks), to describe them
  mutable std::once_flag lowering_once;
  mutable std::optional<LoweringReport> lowering;

  const LoweringReport& lowered() const {
    std::call_once(lowering_once, [this] {
      if (lowering) return;
      try {
        lowering = describe_lowering(traced, pipeline);
      } catch (const std::exception& e) {
        lowering = LoweringReport{"", std::string("passes: not available: ") + e.what() + "\n"};
      }
    });
    return *lowering;
  }

  std::string report() const {
    const LoweringReport& l = lowered();
    // The passes' notes quote check messages, which name source positions as {@k} (Function::locations).
    return report_head + ir::resolve_locations(l.pass_report, locations) + source_listing_text(listing, l.parfors) +
           (code.describe ? code.describe() : std::string()) + report_timing + "IR after passes:\n" + l.lowered_ir;
  }
};

}  // namespace

/// What the typed path runs a repeated call by (KernelCore::call_typed): one launch plan of one variant, run
/// directly for as long as the arguments match it. Immutable; the kernel keeps it (and the variant, and the plan
/// its code owns) until it goes. Laid out in the order a call reads it.
struct TypedBinding {
  const KernelCore* core = nullptr;  ///< whose it is: a caller's kept binding is run by its own kernel only
  std::uint32_t options = 0;         ///< the variant's options id
  std::uint32_t written = 0;         ///< the variant's written parameters
  codegen::cuda::PlanHandle plan;
  int result_rank = 0;
  const Variant* variant = nullptr;
  std::atomic<const Variant*>* last = nullptr;  ///< the kernel's latest variant (Impl::last), kept as any call keeps it
};

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string type_text(const ParamSpec& p) {
  if (!p.is_array) return std::string(name_of(p.dtype));
  return p.rank ? fmt::format("{} array of rank {}", name_of(p.dtype), p.rank) : fmt::format("{} array", name_of(p.dtype));
}

std::string arg_text(const ArgValue& a) {
  if (!a.is_array) return fmt::format("{} of type {}", a.cpp_type, name_of(a.dtype));
  return fmt::format("{} of {} with rank {}", a.cpp_type, name_of(a.dtype), a.rank);
}

/// An array argument's part of the signature: 0x80 | rank-1 | unit innermost stride << 2 | unit extents << 3.
/// (Scalars contribute 0: their values are parameters.)
std::uint8_t array_code(const ArgValue& a) {
  const int r = a.rank;
  const bool unit_stride = a.array.strides[r - 1] == 1 || a.array.shape[r - 1] <= 1;
  unsigned unit_dims = 0;
  for (int d = 0; d < r; ++d)
    if (a.array.shape[d] == 1) unit_dims |= 1u << d;
  return static_cast<std::uint8_t>(0x80u | static_cast<unsigned>(r - 1) | (unit_stride ? 4u : 0u) | (unit_dims << 3));
}

/// Converts a scalar argument to the parameter's type as C++ converts implicitly (so a double passed for a
/// Float parameter is rounded, to nearest-even through f32 for a Half), except that floats never become
/// integers, nothing becomes or stops being bool, and an integer must fit its parameter's type (a negative
/// value never becomes unsigned). Returns an error text when the conversion is refused.
std::string convert_scalar(const ArgValue& a, DType to, ScalarSlot& out) {
  const DType from = a.dtype;
  if (from == to) {
    out = a.scalar;
    return {};
  }
  if (to == DType::Bool || from == DType::Bool)
    return fmt::format("a {} value cannot be passed for a {} parameter", name_of(from), name_of(to));
  if (is_int(to) && is_float(from))
    return "a floating-point value cannot be passed for an integer parameter (convert it explicitly)";
  return ir::sem::with_type(from, [&](auto f) -> std::string {
    using F = decltype(f);
    F v;
    std::memcpy(&v, &a.scalar, sizeof v);
    return ir::sem::with_type(to, [&](auto t) -> std::string {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, bool> || std::is_same_v<F, bool>) {
        return "unsupported conversion";  // refused above
      } else if constexpr (std::is_integral_v<T> && std::is_integral_v<F>) {
        if (!std::in_range<T>(v)) return fmt::format("the value {} does not fit in {}", v, name_of(to));
        const T r = static_cast<T>(v);
        std::memcpy(&out, &r, sizeof r);
        return {};
      } else if constexpr (is_float_element_v<T>) {
        const T r = ir::sem::cast<T, F>(v);
        std::memcpy(&out, &r, sizeof r);
        return {};
      } else {
        return "unsupported conversion";  // float to integer: refused above
      }
    });
  });
}

}  // namespace

struct KernelCore::Impl {
  std::string name;
  std::vector<ParamSpec> params;
  Tracer tracer;
  std::shared_ptr<const void> fn;
  std::vector<std::string> names;
  Where where;  ///< the kiln::jit call

  std::mutex mutex;  // guards options, all, and compilation
  std::vector<Options> options;
  std::vector<std::unique_ptr<Variant>> all;
  // Lock-free lookup for the first variants: append-only slots published with a release store.
  static constexpr std::size_t kFast = 32;
  std::array<std::atomic<const Variant*>, kFast> fast{};
  std::atomic<std::size_t> nfast{0};
  std::atomic<const Variant*> last{nullptr};
  /// The variant the latest asynchronous call ran, when its target can repeat calls by a plan (repeat below).
  std::atomic<const Variant*> planned{nullptr};
  /// The launch plan the latest typed call ran (call_typed): the next one tries it first.
  std::atomic<const TypedBinding*> bound{nullptr};
  /// Each (variant, plan) pair bound so far, kept with the kernel: found without a lock (append-only, published
  /// with a release store, as `fast`), so that calls alternating between two plans rebind at no lock's cost.
  static constexpr std::size_t kBindings = 64;
  std::array<std::atomic<const TypedBinding*>, kBindings> bindings{};
  std::atomic<std::size_t> nbindings{0};
  std::mutex bind_mutex;  // guards appending to bindings, and owned
  std::vector<std::unique_ptr<TypedBinding>> owned;

  /// Makes `ran`, a plan of `v`, the one the next typed call tries first (no more than kBindings pairs: past
  /// them a call takes the plan's lookup every time).
  /// Returns the pair's binding, or null when there was no room for it.
  const TypedBinding* bind(const KernelCore& core, const Variant& v, const codegen::cuda::PlanHandle& ran) {
    const auto find_bound = [&](std::size_t n) -> const TypedBinding* {
      for (std::size_t i = 0; i < n; ++i) {
        const TypedBinding* b = bindings[i].load(std::memory_order_relaxed);
        if (b->variant == &v && b->plan.plan == ran.plan) return b;
      }
      return nullptr;
    };
    const TypedBinding* b = find_bound(nbindings.load(std::memory_order_acquire));
    if (!b) {
      std::lock_guard lock(bind_mutex);
      const std::size_t n = nbindings.load(std::memory_order_relaxed);
      b = find_bound(n);
      if (!b) {
        if (n == kBindings) return nullptr;
        owned.push_back(std::make_unique<TypedBinding>(
            TypedBinding{&core, v.key.options, v.written, ran, v.result_rank, &v, &last}));
        b = owned.back().get();
        bindings[n].store(b, std::memory_order_relaxed);
        nbindings.store(n + 1, std::memory_order_release);
      }
    }
    if (bound.load(std::memory_order_relaxed) != b) bound.store(b, std::memory_order_release);
    return b;
  }

  // Calls whose overlapping array arguments were copied first (frontend/argument_overlap.hpp).
  std::atomic<std::uint64_t> overlap_copies{0};
  mutable std::mutex overlap_mutex;
  std::string overlap_note;  ///< the last such call's note

  void note_overlap(std::string note) {
    overlap_copies.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(overlap_mutex);
    overlap_note = std::move(note);
  }

  const Variant* find(const SigKey& k) {
    const std::size_t n = nfast.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) {
      const Variant* v = fast[i].load(std::memory_order_relaxed);
      if (v->key == k) return v;
    }
    if (n < kFast) return nullptr;
    std::lock_guard lock(mutex);
    return find_locked(k);
  }

  const Variant* find_locked(const SigKey& k) const {
    for (const auto& v : all)
      if (v->key == k) return v.get();
    return nullptr;
  }

  std::string arg_name(std::size_t i) const { return i < names.size() ? names[i] : "arg" + std::to_string(i); }

  [[noreturn]] void type_error(std::size_t i, const std::string& what) const {
    throw TypeError(fmt::format("kernel '{}': argument {} of {} ('{}') {}", name, i + 1, params.size(), arg_name(i), what));
  }

  /// DeviceArray arguments (bit i: argument i) are GPU memory: only the CUDA target takes them.
  void check_device_arrays(Target target, std::uint32_t device_arrays, std::size_t nargs) const {
    if (!device_arrays || target == Target::cuda) return;
    for (std::size_t i = 0; i < nargs; ++i)
      if ((device_arrays >> i) & 1u)
        type_error(i, fmt::format("is a kiln::DeviceArray (GPU memory), but the kernel runs on the {} target: copy it "
                                  "with to_host(), or call kernel.on(kiln::Target::cuda)",
                                  name_of(target)));
  }

  /// A call of `v` repeated by the target's launch plan (CompiledKernel::repeat, codegen/cuda/launch_plan.hpp):
  /// the arguments are compared with what selects `v` (types and ranks, device arrays on the placement's
  /// device, written ones writable, scalars of their parameter's own type), and the plan, which holds the
  /// shapes and strides it was recorded for, checks the rest. False, having done nothing: the call takes the
  /// general path, which checks and reports everything as before.
  bool repeat(const Variant& v, int options_id, ArgValue* args, std::size_t nargs, void* result,
              const CallPlacement& where) const {
    if (v.key.options != static_cast<std::uint32_t>(options_id) || nargs != params.size()) return false;
    std::array<void*, kMaxParams + 1> argv;
    std::uint32_t device_arrays = 0;
    for (std::size_t i = 0; i < nargs; ++i) {
      const ParamSpec& p = params[i];
      ArgValue& a = args[i];
      if (a.is_array != p.is_array || a.dtype != p.dtype) return false;
      if (p.is_array) {
        // The rank selects the variant; the plan compares the shape and strides, which decide the rest of
        // array_code.
        if (!a.on_device || a.device != where.device || a.rank != (v.key.codes[i] & 3) + 1 ||
            (!a.writable && ((v.written >> i) & 1u)))
          return false;
        argv[i] = &a.array;
        device_arrays |= 1u << i;
      } else {
        argv[i] = &a.scalar;
      }
    }
    codegen::cuda::ArgMemory memory;
    memory.device_arrays = device_arrays;
    memory.device = where.device;
    memory.shared = 0;  // the plan runs only when no written argument overlaps another
    memory.stream = where.stream.get();
    memory.pending = where.pending;
    argv[nargs] = &memory;
    return v.code.repeat(argv.data(), result);
  }

  const Variant* compile(const SigKey& key, const ArgValue* args);
  /// The traced IR; with `listing`, also the kernel's source lines as the trace found them.
  ir::Function trace(const SigKey& key, const ArgValue* args, const TraceShape& shape, SourceListing* listing = nullptr) const;

  void check_trace(const Variant& v, const ArgValue* args) const;

  /// An asynchronous call (kernel.async(stream)): every array argument must be a DeviceArray on the stream's
  /// device, since the call returns before any copy back to host memory could happen.
  void place_async(const CallPlacement& where, const ArgValue* args, std::size_t nargs, codegen::cuda::ArgMemory& memory) const {
    for (std::size_t i = 0; i < nargs; ++i) {
      if (!args[i].is_array) continue;
      if (!args[i].on_device)
        type_error(i, fmt::format("is host memory ({}), but an asynchronous call (kernel.async(stream)) takes kiln::DeviceArray "
                                  "arguments only: copy it with kiln::to_device, or call the kernel synchronously",
                                  args[i].cpp_type));
      if (args[i].device != where.device)
        type_error(i, fmt::format("is on CUDA device {}, but the call's stream is on device {}: make the stream on the "
                                  "arrays' device",
                                  args[i].device, where.device));
    }
    memory.stream = where.stream.get();
    memory.device = where.device;
    memory.pending = where.pending;
  }
};

/// Runs the lambda on traced parameters of this call signature.
ir::Function KernelCore::Impl::trace(const SigKey& key, const ArgValue* args, const TraceShape& shape,
                                     SourceListing* listing) const {
  std::vector<ParamInstance> inst;
  for (std::size_t i = 0; i < params.size(); ++i) {
    ParamInstance pi{params[i], 0, false, 0};
    if (params[i].is_array) {
      pi.rank = args[i].rank;
      pi.unit_stride = (key.codes[i] >> 2) & 1;
      pi.unit_dims = static_cast<std::uint8_t>((key.codes[i] >> 3) & 0xF);
    }
    inst.push_back(pi);
  }
  TraceContext ctx(name, inst, names);
  ctx.halo_reads = shape.halo_reads;
  ctx.lockstep_rows = shape.lockstep_rows;
  ctx.code = reinterpret_cast<const void*>(tracer);
  try {
    tracer(fn.get());
  } catch (const ir::IRError& e) {
    ctx.fail(e.what());
  }
  ir::Function f = ctx.finish();
  if (listing) *listing = record_source_listing(ctx, where);
  return f;
}

/// Check mode: the lambda must still trace to the IR that was compiled. A `[&]`-captured host value is a
/// constant of the traced IR, so a changed value shows up here instead of being silently ignored.
void KernelCore::Impl::check_trace(const Variant& v, const ArgValue* args) const {
  const std::string now = ir::to_string(trace(v.key, args, v.shape), ir::PrintOptions{.canonical = true});
  if (now == v.checked_ir) return;
  auto lines = [](const std::string& s) {
    std::vector<std::string> out;
    for (std::size_t b = 0, e; b < s.size(); b = e + 1) {
      e = s.find('\n', b);
      if (e == std::string::npos) e = s.size();
      out.push_back(s.substr(b, e - b));
    }
    return out;
  };
  const std::vector<std::string> was = lines(v.checked_ir), is = lines(now);
  std::size_t i = 0;
  while (i < was.size() && i < is.size() && was[i] == is[i]) ++i;
  auto trimmed = [](const std::vector<std::string>& l, std::size_t k) {
    if (k >= l.size()) return std::string("(nothing)");
    const std::size_t b = l[k].find_first_not_of(' ');
    return b == std::string::npos ? l[k] : l[k].substr(b);
  };
  throw TraceError("kernel '" + name + "': check mode (Options::check, KILN_CHECK=1): the lambda now traces to other IR "
                   "than the code compiled at its first call, so that code would compute something else. A value it "
                   "captured (e.g. by [&]) or other host state it reads has changed since. Pass such values as kernel "
                   "parameters (kiln::Double, kiln::Int, ...): their values are read at every call. First difference, "
                   "line " + std::to_string(i + 1) + ": compiled `" + trimmed(was, i) + "`, now `" + trimmed(is, i) + "`");
}

namespace {
/// The parameters' names as the lambda's source spells them; a complex scalar parameter `z` is two kernel
/// parameters, `z.re` and `z.im`.
std::vector<std::string> source_param_names(const std::vector<ParamSpec>& params, const Where& where, const void* code) {
  const std::size_t arity =
      static_cast<std::size_t>(std::count_if(params.begin(), params.end(), [](const ParamSpec& p) { return p.part != 2; }));
  const std::vector<std::string> names = lambda_param_names(where, arity, code);
  if (names.empty() || arity == params.size()) return names;
  std::vector<std::string> out;
  std::size_t k = 0;
  for (const ParamSpec& p : params) {
    if (p.part == 0) out.push_back(names[k++]);
    else if (p.part == 1) out.push_back(names[k] + ".re");
    else out.push_back(names[k++] + ".im");
  }
  return out;
}
}  // namespace

KernelCore::KernelCore(std::string name, std::vector<ParamSpec> params, Tracer tracer, std::shared_ptr<const void> fn,
                       std::vector<std::string> arg_names, Where where)
    : impl_(std::make_unique<Impl>()) {
  if (params.size() > kMaxParams) throw TypeError(fmt::format("kernel '{}': at most {} parameters are supported", name, kMaxParams));
  impl_->name = std::move(name);
  impl_->names = arg_names.empty() ? source_param_names(params, where, reinterpret_cast<const void*>(tracer)) : std::move(arg_names);
  impl_->params = std::move(params);
  impl_->tracer = tracer;
  impl_->fn = std::move(fn);
  impl_->where = where;
}

KernelCore::~KernelCore() = default;

const std::string& KernelCore::name() const { return impl_->name; }

int KernelCore::options_id(const Options& o) {
  std::lock_guard lock(impl_->mutex);
  auto& all = impl_->options;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].target == o.target && all[i].opt_level == o.opt_level && all[i].fast_math == o.fast_math &&
        all[i].keep_llvm_ir == o.keep_llvm_ir && all[i].boundscheck == o.boundscheck && all[i].check == o.check &&
        all[i].halo_reads == o.halo_reads)
      return static_cast<int>(i);
  if (o.opt_level < 0 || o.opt_level > 3)
    throw ValueError(fmt::format("kernel '{}': opt_level must be 0..3, got {}", impl_->name, o.opt_level));
  all.push_back(o);
  return static_cast<int>(all.size() - 1);
}

int KernelCore::call(int options_id, ArgValue* args, std::size_t nargs, void* result, int* member_ranks,
                     const CallPlacement* placement) {
  Impl& m = *impl_;
  if (placement) {
    if (const Variant* v = m.planned.load(std::memory_order_acquire); v && m.repeat(*v, options_id, args, nargs, result, *placement)) {
      if (m.last.load(std::memory_order_relaxed) != v) m.last.store(v, std::memory_order_release);
      return v->result_rank;  // plans return no tuple: member_ranks has nothing to say
    }
  }
  if (nargs != m.params.size()) {
    std::vector<std::string> list;
    for (std::size_t i = 0; i < m.params.size(); ++i) list.push_back(fmt::format("{}: {}", m.arg_name(i), type_text(m.params[i])));
    throw TypeError(fmt::format("kernel '{}' takes {} arguments ({}), but was called with {}", m.name, m.params.size(),
                                fmt::join(list, ", "), nargs));
  }
  SigKey key;
  key.options = static_cast<std::uint32_t>(options_id);
  key.n = static_cast<std::uint32_t>(nargs);
  std::array<ScalarSlot, kMaxParams> slots;
  std::array<void*, kMaxParams + 1> argv;  // + 1: where the array arguments live (codegen/cuda/arg_memory.hpp)
  codegen::cuda::ArgMemory memory;
  std::uint32_t read_only = 0;
  int arrays = 0;
  for (std::size_t i = 0; i < nargs; ++i) {
    const ParamSpec& p = m.params[i];
    ArgValue& a = args[i];
    if (p.is_array != a.is_array || (p.is_array && (a.dtype != p.dtype || (p.rank && a.rank != p.rank))))
      m.type_error(i, fmt::format("expects {}, got {}", type_text(p), arg_text(a)));
    if (p.is_array) {
      ++arrays;
      key.codes[i] = array_code(a);
      argv[i] = &a.array;
      if (!a.writable) read_only |= 1u << i;
      if (a.on_device) {
        if (memory.device >= 0 && memory.device != a.device)
          m.type_error(i, fmt::format("is on CUDA device {}, but an earlier DeviceArray argument is on device {}", a.device,
                                      memory.device));
        memory.device_arrays |= 1u << i;
        memory.device = a.device;
      }
    } else {
      if (std::string err = convert_scalar(a, p.dtype, slots[i]); !err.empty())
        m.type_error(i, fmt::format("expects {}: {}", type_text(p), err));
      argv[i] = &slots[i];
    }
  }
  // A compiled variant knows its target; a call that compiles reads it from the options first, so that a
  // DeviceArray passed to a CPU kernel is refused before anything is compiled.
  const Variant* v = m.find(key);
  if (v) {
    m.check_device_arrays(v->target, memory.device_arrays, nargs);
  } else if (memory.device_arrays) {
    Target target;
    {
      std::lock_guard lock(m.mutex);
      target = m.options.at(static_cast<std::size_t>(options_id)).target;
    }
    m.check_device_arrays(target, memory.device_arrays, nargs);
  }
  if (placement) m.place_async(*placement, args, nargs, memory);
  argv[nargs] = &memory;
  // A first call's time, split into finding (or compiling) its code and running it (KILN_LOG=compile).
  std::optional<std::chrono::steady_clock::time_point> first_call;
  double compile_ms = 0;
  long faults = 0;
  if (!v) {
    if (cache::compile_log_enabled()) faults = cache::minor_faults();
    first_call = std::chrono::steady_clock::now();
    v = m.compile(key, args);
    compile_ms = ms_since(*first_call);
  } else if (!v->checked_ir.empty()) {
    m.check_trace(*v, args);
  }
  if (placement) memory.report = &v->throw_failure;
  if (v->written & read_only) {
    for (std::size_t i = 0; i < nargs; ++i)
      if ((v->written & read_only) & (1u << i))
        m.type_error(i, fmt::format("is written by the kernel but was passed read-only (const {})", args[i].cpp_type));
  }
  OverlapCopies copies;  // outlives the call
  memory.shared = 0;  // one array, or none written: nothing a kernel writes can share memory with another
  if (arrays > 1 && v->shared->access.stored) {
    memory.shared = separate_overlapping_arguments(m.name, v->shared->access, args, nargs, m.names, copies);
    if (!copies.note.empty()) m.note_overlap(std::move(copies.note));
  }
  KernelStatus status;
  const long compiled_faults = first_call && cache::compile_log_enabled() ? cache::minor_faults() : 0;
  const auto run = first_call ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (v->code(argv.data(), result, &status) != 0)
    v->throw_failure(status);
  if (first_call && cache::compile_log_enabled()) {
    const double run_ms = ms_since(run);
    cache::log_first_call(m.name, ms_since(*first_call) * 1e3, compile_ms * 1e3, run_ms * 1e3, compiled_faults - faults,
                          cache::minor_faults() - compiled_faults);
  }
  // Release: diagnostics() on another thread reads the Variant through `last` (TSan found the relaxed store).
  // Stored only when it changes: a pipeline's calls from several threads then share the line, not write it.
  if (m.last.load(std::memory_order_relaxed) != v) m.last.store(v, std::memory_order_release);
  // The next asynchronous call tries this variant's launch plan first (Impl::repeat).
  if (placement && v->code.repeat && v->checked_ir.empty() && m.planned.load(std::memory_order_relaxed) != v)
    m.planned.store(v, std::memory_order_release);
  if (member_ranks) std::copy(v->member_ranks.begin(), v->member_ranks.end(), member_ranks);
  return v->result_rank;
}

int KernelCore::call_typed(int options_id, void** argv, std::size_t nargs, std::uint32_t read_only,
                           const CallPlacement& placement, void* result, std::atomic<const TypedBinding*>& kept) {
  kiln::cuda::detail::StreamState& stream = *placement.stream.get();
  // A binding runs its plan directly: the plan compares what selects it and itself (the arguments' ranks, shapes,
  // strides and device, overlaps), the kernel, options and writability are compared here. Types and the argument
  // count were compared by the C++ types.
  const auto run = [&](const TypedBinding* b) {
    if (!b || b->core != this || b->options != static_cast<std::uint32_t>(options_id) || (b->written & read_only) ||
        !b->plan.run(b->plan.plan, argv, stream, result))
      return false;
    if (b->last->load(std::memory_order_relaxed) != b->variant) b->last->store(b->variant, std::memory_order_release);
    return true;
  };
  // The caller's own binding first (no lookup: an AsyncKernel's latest plan), then the kernel's latest.
  const TypedBinding* const mine = kept.load(std::memory_order_acquire);
  if (run(mine)) return mine->result_rank;
  Impl& m = *impl_;
  if (const TypedBinding* b = m.bound.load(std::memory_order_acquire); b != mine && run(b)) {
    kept.store(b, std::memory_order_release);
    return b->result_rank;
  }
  // Otherwise the plans of the variant the latest asynchronous call ran, any of which may match.
  const Variant* v = m.planned.load(std::memory_order_acquire);
  if (!v || v->key.options != static_cast<std::uint32_t>(options_id) || (v->written & read_only) || nargs != m.params.size())
    return -1;
  codegen::cuda::ArgMemory memory;
  memory.device = placement.device;
  memory.shared = 0;  // the plan runs only when no written argument overlaps another
  memory.stream = &stream;
  memory.pending = placement.pending;
  memory.heads = true;
  codegen::cuda::PlanHandle ran;
  memory.ran = &ran;
  argv[nargs] = &memory;
  if (!v->code.repeat(argv, result)) return -1;
  if (m.last.load(std::memory_order_relaxed) != v) m.last.store(v, std::memory_order_release);
  if (const TypedBinding* b = m.bind(*this, *v, ran)) kept.store(b, std::memory_order_release);
  return v->result_rank;
}

const Variant* KernelCore::Impl::compile(const SigKey& key, const ArgValue* args) {
  std::lock_guard lock(mutex);
  if (const Variant* v = find_locked(key)) return v;  // another thread compiled it meanwhile
  const Options opts = options.at(key.options);
  auto v = std::make_unique<Variant>();
  v->key = key;
  v->target = opts.target;

  auto t0 = std::chrono::steady_clock::now();
  v->shape = TraceShape::of(opts);
  ir::Function traced = trace(key, args, v->shape, &v->listing);
  const double trace_ms = ms_since(t0);
  if (opts.check) v->checked_ir = ir::to_string(traced, ir::PrintOptions{.canonical = true});
  v->locations = traced.locations;
  // Copied for every asynchronous call whose kernels may fail (its check waits for the stream's next
  // synchronization): what it needs is shared, so that a copy is a reference count, not a string and a list.
  using Names = std::pair<std::string, std::vector<std::string>>;
  v->throw_failure = [names = std::make_shared<const Names>(name, v->locations)](const KernelStatus& s) {
    ir::throw_status(s.code, "kernel '" + names->first + "': " + ir::resolve_locations(s.message, names->second));
  };

  // From this process's loaded kernels, the disk cache or the compiler (frontend/compiler.cpp).
  const BuiltVariant built = build_variant(traced, opts, trace_ms * 1e3);
  v->shared = built.code;
  v->code = built.code->code;
  v->written = built.code->written;
  v->result_rank = built.code->result_rank;
  v->member_ranks = built.code->member_ranks;

  // Diagnostics: what the passes did and where the time went.
  const CompileRecord& r = built.record;
  v->report_head = fmt::format("kernel {} on {}\n", r.signature, name_of(opts.target));
  v->report_timing = fmt::format("compile: trace {:.3f} ms, passes {:.3f} ms, codegen {:.3f} ms, load {:.3f} ms (cache: {})\n",
                                 trace_ms, r.passes_us / 1000.0, r.codegen_ms, r.load_us / 1000.0, name_of(r.cache));
  if (built.lowering) v->lowering = built.lowering;
  else {
    v->traced = std::move(traced);
    v->pipeline = pipeline_options(opts);
  }
  if (print_diagnostics()) std::fprintf(stderr, "=== kiln diagnostics ===\n%s", v->report().c_str());

  const Variant* out = v.get();
  all.push_back(std::move(v));
  const std::size_t n = nfast.load(std::memory_order_relaxed);
  if (n < kFast) {
    fast[n].store(out, std::memory_order_relaxed);
    nfast.store(n + 1, std::memory_order_release);
  }
  last.store(out, std::memory_order_release);  // publishes the new Variant to diagnostics() readers
  return out;
}

std::string KernelCore::diagnostics() const {
  const Variant* v = impl_->last.load(std::memory_order_acquire);
  std::string out = v ? v->report() : fmt::format("kernel '{}' has not been compiled yet\n", impl_->name);
  if (const std::uint64_t n = impl_->overlap_copies.load(std::memory_order_relaxed)) {
    std::lock_guard lock(impl_->overlap_mutex);
    out += fmt::format("argument overlap: {} call(s) copied an argument first; the last: {}\n", n, impl_->overlap_note);
  }
  return out;
}

std::string KernelCore::lowered_ir() const {
  const Variant* v = impl_->last.load(std::memory_order_acquire);
  return v ? v->lowered().lowered_ir : std::string();
}

std::string KernelCore::llvm_ir() const {
  const Variant* v = impl_->last.load(std::memory_order_acquire);
  return v ? v->shared->code.llvm_ir : std::string();
}

TraceSummary KernelCore::summarize(int options_id, ArgValue* args, std::size_t nargs) {
  Impl& m = *impl_;
  if (nargs != m.params.size())
    throw TypeError(fmt::format("kernel '{}' takes {} arguments, but was given {}", m.name, m.params.size(), nargs));
  SigKey key;
  key.options = static_cast<std::uint32_t>(options_id);
  key.n = static_cast<std::uint32_t>(nargs);
  for (std::size_t i = 0; i < nargs; ++i) {
    const ParamSpec& p = m.params[i];
    const ArgValue& a = args[i];
    if (p.is_array != a.is_array || (p.is_array && (a.dtype != p.dtype || (p.rank && a.rank != p.rank))))
      m.type_error(i, fmt::format("expects {}, got {}", type_text(p), arg_text(a)));
    if (p.is_array) key.codes[i] = array_code(a);
  }
  std::lock_guard lock(m.mutex);
  return summarize_trace(m.trace(key, args, TraceShape::of(m.options.at(key.options))));
}

std::size_t KernelCore::compiled_variants() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->all.size();
}

// ---- trace-time hooks -----------------------------------------------------------------------------------

Node scalar_param(int index) {
  TraceContext& ctx = TraceContext::active("a kernel parameter");
  return Node{ir::make_ref(ctx.param(index)), ctx.param(index)->type.elem, false, false};
}

ArrayHandle array_param(int index) {
  TraceContext& ctx = TraceContext::active("a kernel parameter");
  const ir::Var v = ctx.param(index);
  return ArrayHandle{v, v->type.rank, ctx.root_scope()};
}

void set_result(const TracedValue& v) {
  TraceContext& ctx = TraceContext::active("a kernel result");
  ctx.begin_statement();
  ctx.set_result(v.read().expr);
}

namespace {

/// The array a kernel hands to its caller for `a`: `a` itself if the kernel allocated it and does not
/// return it already, else a copy (the caller's memory must not be handed over, nor one buffer twice).
ir::Var returned_array(TraceContext& ctx, const ArrayHandle& a) {
  ctx.check_array(a, "return");
  ctx.begin_statement();
  if (a.var->kind == ir::VarKind::Local && !ctx.returns_array(a.var.get())) return a.var;
  std::vector<ir::Expr> shape;
  std::vector<ir::Var> idx;
  std::vector<ir::Expr> lo, refs;
  for (int d = 0; d < a.rank; ++d) {
    shape.push_back(ir::make_dim(a.var, d));
    idx.push_back(ctx.new_index(std::string(1, "ijkl"[d])));
    lo.push_back(ir::make_i64(0));
    refs.push_back(ir::make_ref(idx.back()));
  }
  const ir::Var copy = ctx.new_array(a.var->type.elem, a.rank, a.var->name + "_copy", {});
  ctx.emit(ir::make_allocate(copy, shape));
  ctx.emit(ir::make_parfor(idx, lo, shape, ir::make_block({ir::make_store(copy, refs, ir::make_load(a.var, refs))}), {},
                           "copy of returned " + std::string(a.var->kind == ir::VarKind::Local ? "array " : "parameter ") +
                               a.var->name));
  return copy;
}

}  // namespace

void set_result_array(const ArrayHandle& a) {
  TraceContext& ctx = TraceContext::active("a kernel result");
  ctx.set_result_array(returned_array(ctx, a));
}

void add_result_member(const TracedValue& v) {
  TraceContext& ctx = TraceContext::active("a kernel result");
  ctx.begin_statement();
  ctx.add_result_member({v.read().expr, nullptr});
}

void add_result_member_array(const ArrayHandle& a) {
  TraceContext& ctx = TraceContext::active("a kernel result");
  ctx.add_result_member({nullptr, returned_array(ctx, a)});
}

}  // namespace kiln::detail
