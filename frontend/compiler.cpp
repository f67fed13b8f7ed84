// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/compiler.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "codegen/target_options.hpp"
#include "frontend/settings.hpp"
#include "ir/analysis.hpp"
#include "ir/printer.hpp"
#include "kiln/error.hpp"
#include "passes/insert_bounds_checks.hpp"
#include "passes/report.hpp"
#include "runtime/cache/background.hpp"
#include "runtime/cache/bytes.hpp"
#include "runtime/cache/compile_log.hpp"
#include "runtime/cache/key.hpp"
#include "runtime/cache/stats.hpp"
#include "runtime/cache/store.hpp"

namespace kiln::detail {

passes::PipelineOptions pipeline_options(const Options& opts) {
  passes::PipelineOptions p{opts.boundscheck, opts.target};
  p.halo_reads = opts.halo_reads;
  if (opts.target == Target::cuda) p.device_threads = device_threads();
  return p;
}

CompiledVariant compile_traced(const ir::Function& traced, const Options& opts, const codegen::TargetOptions& topts) {
  CompiledVariant out;
  const auto t0 = std::chrono::steady_clock::now();
  out.lowered = passes::run_pipeline(traced, &out.report, with_pipeline_dumps(pipeline_options(opts)));
  out.passes_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.code = codegen::backend_for(opts.target).compile(out.lowered, topts, out.payloads);
  return out;
}

// ---- the cache in front of compile_traced ------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

/// The frontend's part of a cache entry: what dispatch needs besides the code (a VariantCode minus code).
constexpr std::string_view kVariantPayload = "kiln.variant";

std::string encode_variant(const VariantCode& v) {
  cache::ByteWriter w;
  w.u32(v.written);
  w.u32(static_cast<std::uint32_t>(v.result_rank));
  w.u32(static_cast<std::uint32_t>(v.member_ranks.size()));
  for (int rank : v.member_ranks) w.u32(static_cast<std::uint32_t>(rank));
  w.u32(v.access.loaded);
  w.u32(v.access.stored);
  for (std::uint32_t bits : v.access.before) w.u32(bits);
  for (std::uint32_t bits : v.access.same_view) w.u32(bits);
  return std::move(w.bytes());
}

bool decode_variant(std::string_view data, VariantCode& v) {
  cache::ByteReader r(data);
  v.written = r.u32();
  v.result_rank = static_cast<int>(r.u32());
  const std::uint32_t members = r.u32();
  if (members > static_cast<std::uint32_t>(ir::kMaxResults)) return false;
  for (std::uint32_t i = 0; i < members; ++i) v.member_ranks.push_back(static_cast<int>(r.u32()));
  v.access.loaded = r.u32();
  v.access.stored = r.u32();
  for (std::uint32_t& bits : v.access.before) bits = r.u32();
  for (std::uint32_t& bits : v.access.same_view) bits = r.u32();
  return r.ok() && r.at_end();
}

/// Code loaded in this process, by cache key: a second kernel object (or signature) whose traced IR is the
/// same shares it instead of reading the disk again. Slots are weak, so code is freed with the last kernel
/// using it — except the most recently used few, held here, so that a kernel re-created at each call of a
/// user's function (a `kiln::jit` in a loop) costs a trace and a hash, not a disk read and a link. They are
/// let go when the cache settings change (a fresh directory means fresh code, as tests expect).
class LoadedCode {
 public:
  static constexpr std::size_t kKeptAlive = 64;

  std::shared_ptr<const VariantCode> find(const cache::Key& key, const std::string& canonical_ir,
                                          const std::shared_ptr<cache::DiskStore>& store) {
    std::lock_guard lock(mutex_);
    forget_recent_unless(store);
    const auto it = slots_.find({key.lo, key.hi});
    if (it == slots_.end() || it->second.canonical_ir != canonical_ir) return nullptr;
    std::shared_ptr<const VariantCode> code = it->second.code.lock();
    if (code) keep_alive(code);
    return code;
  }

  void add(const cache::Key& key, const std::string& canonical_ir, std::shared_ptr<const VariantCode> code,
           const std::shared_ptr<cache::DiskStore>& store) {
    std::lock_guard lock(mutex_);
    forget_recent_unless(store);
    if (slots_.size() >= sweep_at_) {  // drop the slots of freed code now and then
      std::erase_if(slots_, [](const auto& s) { return s.second.code.expired(); });
      sweep_at_ = 2 * slots_.size() + 64;
    }
    keep_alive(code);
    slots_[{key.lo, key.hi}] = Slot{canonical_ir, std::move(code)};
  }

 private:
  struct Slot {
    std::string canonical_ir;
    std::weak_ptr<const VariantCode> code;
  };

  void keep_alive(const std::shared_ptr<const VariantCode>& code) {
    const auto it = std::find(recent_.begin(), recent_.end(), code);
    if (it != recent_.end()) recent_.erase(it);
    else if (recent_.size() == kKeptAlive) recent_.pop_back();
    recent_.push_front(code);
  }

  void forget_recent_unless(const std::shared_ptr<cache::DiskStore>& store) {
    if (store_.lock() == store) return;  // (an expired store_ is never equal: no reuse of its address)
    store_ = store;
    recent_.clear();
  }

  std::mutex mutex_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Slot> slots_;
  std::size_t sweep_at_ = 64;
  std::deque<std::shared_ptr<const VariantCode>> recent_;  ///< most recently used first
  std::weak_ptr<cache::DiskStore> store_;                  ///< the settings `recent_` belongs to
};

LoadedCode& loaded_code() {
  static LoadedCode* const table = new LoadedCode();  // never destroyed: kernels may outlive static destruction
  return *table;
}

std::string signature_text(const ir::Function& f) {
  std::string sig;
  for (const auto& p : f.params) sig += (sig.empty() ? "" : ", ") + p->name + ": " + ir::to_string(p->type);
  return f.name + "(" + sig + ")";
}

LoweringReport lowering_report(const ir::Function& lowered, const passes::PipelineReport& report) {
  LoweringReport out;
  out.lowered_ir = ir::to_string(lowered);
  out.pass_report = passes::report_text(report);  // timings, then one section per topic
  out.parfors = report.parfors;
  return out;
}

std::shared_ptr<VariantCode> from_compiled(CompiledVariant& c) {
  auto v = std::make_shared<VariantCode>();
  v->code = std::move(c.code);
  for (const ir::VarNode* a : ir::stored_arrays(c.lowered.body))
    for (std::size_t i = 0; i < c.lowered.params.size(); ++i)
      if (c.lowered.params[i].get() == a) v->written |= 1u << i;
  v->result_rank = c.lowered.result_array ? c.lowered.result_array->type.rank : 0;
  for (const auto& m : c.lowered.tuple) v->member_ranks.push_back(m.array ? m.array->type.rank : 0);
  v->access = ir::argument_access(c.lowered);
  return v;
}

/// True if the payload's result ranks are the traced kernel's: the caller adopts arrays by these ranks.
bool describes_results(const VariantCode& v, const ir::Function& traced) {
  if (v.result_rank != (traced.result_array ? traced.result_array->type.rank : 0)) return false;
  if (v.member_ranks.size() != traced.tuple.size()) return false;
  for (std::size_t i = 0; i < traced.tuple.size(); ++i)
    if (v.member_ranks[i] != (traced.tuple[i].array ? traced.tuple[i].array->type.rank : 0)) return false;
  return true;
}

/// The VariantCode of an entry found on disk, or nullptr (the entry is then discarded). A DeviceError (no
/// GPU here for a CUDA entry) propagates: the entry is not at fault, and compiling would fail the same way.
std::shared_ptr<const VariantCode> restore(const cache::Entry& e, const ir::Function& traced, const Options& opts,
                                           const codegen::TargetOptions& topts, cache::DiskStore& store) {
  auto v = std::make_shared<VariantCode>();
  const cache::Blob* variant = e.payload(kVariantPayload);
  if (!variant || !decode_variant(variant->data, *v)) {
    store.discard(e.key, "no valid \"kiln.variant\" payload");
    return nullptr;
  }
  if (!describes_results(*v, traced)) {
    store.discard(e.key, "its \"kiln.variant\" payload describes other results than the kernel returns");
    return nullptr;
  }
  try {
    v->code = codegen::backend_for(opts.target).load(e, traced.name, topts);
  } catch (const DeviceError&) {
    throw;
  } catch (const Error& err) {
    store.discard(e.key, err.what());
    return nullptr;
  }
  return v;
}

}  // namespace

LoweringReport describe_lowering(const ir::Function& traced, const passes::PipelineOptions& popts) {
  passes::PipelineReport report;
  const ir::Function lowered = passes::run_pipeline(traced, &report, with_pipeline_dumps(popts));
  return lowering_report(lowered, report);
}

BuiltVariant build_variant(const ir::Function& traced, const Options& opts, double trace_us) {
  BuiltVariant out;
  CompileRecord& rec = out.record;
  rec.kernel = traced.name;
  rec.target = name_of(opts.target);
  rec.signature = signature_text(traced);
  rec.trace_us = trace_us;
  cache::Counters& counters = cache::counters();

  const codegen::TargetOptions topts = target_options(opts);
  const codegen::Backend& backend = codegen::backend_for(opts.target);
  const std::shared_ptr<cache::DiskStore> store = cache::current_store();
  const std::optional<codegen::CacheIdentity> target =
      store->readable() ? backend.cache_identity(topts) : std::nullopt;
  std::string canonical;
  cache::Key key;
  rec.cache = CacheSource::off;
  if (target) {
    rec.cache = CacheSource::miss;
    canonical = ir::to_string(traced, ir::PrintOptions{.canonical = true});
    const std::string options =
        "opt_level=" + std::to_string(opts.opt_level) + ";fast_math=" + std::to_string(opts.fast_math ? 1 : 0) +
        // Absent when off, so the keys of before stay valid. The checks' messages name arrays, which the
        // canonical IR does not.
        (opts.boundscheck ? ";boundscheck=1" : "") + (opts.halo_reads ? ";halo_reads=1" : "") +
        (opts.target == Target::cuda && device_threads() != passes::kDefaultDeviceThreads
             ? ";device_threads=" + std::to_string(device_threads())
             : "") +
        (opts.boundscheck || target->code_names_arrays ? ";names=" + passes::check_message_names(traced) : "") +
        (target->code_names_kernel ? ";kernel=" + traced.name : "");
    key = cache::make_key({canonical, rec.target, target->description, options, target->llvm_version,
                           target->nvrtc_version});
    rec.key = key.hex();
    // LLVM IR and IR dumps exist only when the compiler runs, so asking for them skips the lookups.
    if (!wants_compiler_output(opts)) {
      const auto t0 = Clock::now();
      if ((out.code = loaded_code().find(key, canonical, store))) {
        cache::bump(counters.memory_hits);
        rec.cache = CacheSource::memory;
        rec.load_us = us_since(t0);
        cache::log_compile(rec);
        return out;
      }
      if (std::optional<cache::Entry> e = store->lookup(key, canonical)) {
        if ((out.code = restore(*e, traced, opts, topts, *store))) {
          cache::bump(counters.disk_hits);
          loaded_code().add(key, canonical, out.code, store);
          rec.cache = CacheSource::disk;
          rec.load_us = us_since(t0);
          cache::log_compile(rec);
          return out;
        }
      }
    }
  }

  CompiledVariant compiled = compile_traced(traced, opts, topts);
  if (opts.target != Target::interpreter) cache::bump(counters.compiles);
  std::vector<cache::Blob> payloads = std::move(compiled.payloads);
  const std::shared_ptr<VariantCode> code = from_compiled(compiled);
  out.lowering = lowering_report(compiled.lowered, compiled.report);
  rec.passes_us = compiled.passes_ms * 1e3;
  rec.codegen_ms = code->code.codegen_ms;
  rec.codegen_cpu_ms = code->code.codegen_cpu_ms;
  rec.codegen_cpu_longest_ms = code->code.codegen_cpu_longest_ms;
  rec.load_us = code->code.load_us;
  if (target && !payloads.empty()) {
    loaded_code().add(key, canonical, code, store);
    if (store->writable()) {
      cache::Entry e;
      e.key = key;
      e.payloads = std::move(payloads);
      e.payloads.push_back(cache::Blob{std::string(kVariantPayload), encode_variant(*code)});
      e.canonical_ir = std::move(canonical);
      e.meta = cache::Metadata{rec.kernel, rec.target, target->description, cache::kiln_identity(),
                               static_cast<std::int64_t>(std::time(nullptr))};
      // The fsync is not the caller's to wait for. Until the entry is on disk, the code stays loaded so that
      // a kernel created meanwhile shares it instead of compiling again.
      cache::store_in_background(store, std::move(e), code);
    }
  }
  out.code = code;
  cache::log_compile(rec);
  return out;
}

}  // namespace kiln::detail
