// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/executable.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "codegen/cuda/arg_memory.hpp"
#include "codegen/cuda/compile_parts.hpp"
#include "codegen/cuda/deferred_scalars.hpp"
#include "ir/analysis.hpp"
#include "ir/argument_access.hpp"
#include "ir/builder.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {
namespace {

std::int64_t element_count(const ArrayDesc& d, int rank) {
  std::int64_t n = 1;
  for (int k = 0; k < rank; ++k) n *= d.shape[k];
  return n;
}

/// Row-major without gaps: the elements are one block of memory starting at data.
bool is_dense(const ArrayDesc& d, int rank) {
  std::int64_t s = 1;
  for (int k = rank; k-- > 0;) {
    if (d.shape[k] > 1 && d.strides[k] != s) return false;
    s *= d.shape[k];
  }
  return true;
}

/// Calls f(byte offset of the element) for every element in row-major order.
template <class F>
void each_element(const ArrayDesc& d, int rank, std::int64_t esize, F&& f) {
  const std::int64_t n = element_count(d, rank);
  std::int64_t idx[kMaxRank] = {};
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t off = 0;
    for (int k = 0; k < rank; ++k) off += idx[k] * d.strides[k];
    f(off * esize);
    for (int k = rank; k-- > 0;) {
      if (++idx[k] < d.shape[k]) break;
      idx[k] = 0;
    }
  }
}

ArrayDesc dense_like(const ArrayDesc& d, int rank, void* data) {
  ArrayDesc out;
  out.data = data;
  std::int64_t s = 1;
  for (int k = rank; k-- > 0;) {
    out.shape[k] = d.shape[k];
    out.strides[k] = s;
    s *= d.shape[k];
  }
  return out;
}

bool same_view(const ArrayDesc& a, const ArrayDesc& b, int rank) {
  if (a.data != b.data) return false;
  for (int k = 0; k < rank; ++k)
    if (a.shape[k] != b.shape[k] || a.strides[k] != b.strides[k]) return false;
  return true;
}

/// The host function on the host executor; a statement it cannot run is the backend's CompileError.
ir::Executor executor(const ir::Function& f, const DeviceMachine& machine) {
  try {
    return ir::Executor(f, &machine);
  } catch (const ir::IRError& e) {
    throw CompileError(fmt::format("kiln CUDA backend: {}", e.what()), {});
  }
}

/// A host array argument and its device copy.
struct HostCopy {
  std::size_t param;
  const ArrayDesc* host;
  ArrayDesc device;
};

}  // namespace

Executable::Executable(std::shared_ptr<const Program> program, Binary binary, const CodegenOptions& opts,
                       const CudaOptions& cuda)
    : program_(std::move(program)),
      binary_(std::move(binary)),
      opts_(opts),
      cuda_(cuda),
      machine_(program_, cuda),
      host_(executor(*program_->function, machine_)),
      needs_(*program_) {
  const ir::Function& f = *program_->function;
  // The frontend's cap too (kernel_core.cpp): bit masks and the call's fixed arrays hold this many.
  if (f.params.size() > static_cast<std::size_t>(ir::ArgumentAccess::kMaxParams))
    throw CompileError(fmt::format("kiln CUDA backend: kernel '{}' has more than {} parameters", f.name,
                                   ir::ArgumentAccess::kMaxParams),
                       {});
  const auto stored = arrays_written(f.body);  // through array bindings too
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    if (stored.count(f.params[i].get())) written_ |= 1u << i;
    if (f.params[i]->type.is_array()) array_params_ |= 1u << i;
  }
  makes_arrays_ = static_cast<bool>(f.result_array);
  for (const auto& m : f.tuple) makes_arrays_ |= static_cast<bool>(m.array);
  plans_ = std::make_unique<LaunchPlans>(*program_, written_, array_params_, cuda_, machine_);
}

const gpu::Module& Executable::module_for(gpu::Device& dev, double* load_us) {
  const auto ord = static_cast<std::size_t>(dev.info().ordinal);
  if (const gpu::Module* m = loaded_.at(ord).load(std::memory_order_acquire)) return *m;
  std::lock_guard lock(mutex_);
  auto& slot = modules_.at(ord);
  if (!slot) {
    const std::string arch = dev.info().arch();
    const std::vector<std::string> names = program_->entries();
    // PTX for compute_XY runs on XY and newer; an older device needs its own compilation.
    const auto images = [](const Binary& b) {
      std::vector<gpu::Image> out{{&b.cubin, &b.ptx}};
      for (const Binary::Part& p : b.more) out.push_back({&p.cubin, &p.ptx});
      return out;
    };
    if (arch != binary_.arch && std::atoi(arch.c_str() + 3) < std::atoi(binary_.arch.c_str() + 3)) {
      const Binary own = compile_program(*program_, program_->function->name, arch, opts_, cuda_.lineinfo, cuda_.compile_threads,
                                         cuda_.fast_compile);
      slot = std::make_unique<gpu::Module>(dev, own.arch, images(own), names, load_us, cuda_.block_size);
    } else {
      slot = std::make_unique<gpu::Module>(dev, binary_.arch, images(binary_), names, load_us, cuda_.block_size);
    }
    loaded_[ord].store(slot.get(), std::memory_order_release);
  }
  return *slot;
}

std::int32_t Executable::call(void* const* args, void* result, KernelStatus* status) {
  const ir::Function& f = *program_->function;
  const std::size_t nparams = f.params.size();
  const auto* memory = static_cast<const ArgMemory*>(args[nparams]);
  kiln::cuda::detail::StreamState* async = memory ? memory->stream : nullptr;
  const int ordinal = async ? async->device : memory && memory->device >= 0 ? memory->device : gpu::current_device();
  gpu::Device& dev = gpu::device(ordinal);
  dev.bind();
  const gpu::Module& module = module_for(dev);
  const gpu::DriverApi& d = gpu::driver();

  CallState call(dev, module, needs_, status, async);
  if (memory) call.shared_arguments = memory->shared;
  const CUstream stream = call.stream;
  if (async) return call_async(args, result, call, *memory);
  // At most kMaxParams parameters (the constructor checks): every slot used is written before it is read.
  std::array<void*, ir::ArgumentAccess::kMaxParams> argv;
  std::copy(args, args + nparams, argv.data());
  std::vector<HostCopy> copies;
  // The device copies' descriptors, made (and zeroed) only by a call with a host array argument: a call on
  // DeviceArrays needs none.
  std::optional<std::array<ArrayDesc, ir::ArgumentAccess::kMaxParams>> descs;
  std::vector<std::vector<char>> staging;
  for (std::size_t i = 0; i < nparams; ++i) {
    const ir::Var& p = f.params[i];
    if (!p->type.is_array() || (memory && (memory->device_arrays >> i) & 1u)) continue;
    const int rank = p->type.rank;
    const auto* host = static_cast<const ArrayDesc*>(args[i]);
    if (!descs) descs.emplace();
    ArrayDesc* device_descs = descs->data();
    // The same host array passed twice gets one device copy, so writes through one are seen by the other.
    const HostCopy* same = nullptr;
    for (const auto& c : copies)
      if (f.params[c.param]->type.rank == rank && same_view(*c.host, *host, rank)) same = &c;
    if (same) {
      device_descs[i] = same->device;
      copies.push_back({i, host, device_descs[i]});
    } else {
      const std::int64_t esize = size_of(p->type.elem);
      const std::size_t bytes = static_cast<std::size_t>(element_count(*host, rank) * esize);
      const CUdeviceptr dp = call.alloc(bytes, "a device copy of argument '" + p->name + "'");
      if (bytes > 0) {
        const void* src = host->data;
        if (!is_dense(*host, rank)) {
          staging.emplace_back(bytes);
          char* out = staging.back().data();
          each_element(*host, rank, esize, [&](std::int64_t off) {
            std::memcpy(out, static_cast<const char*>(host->data) + off, static_cast<std::size_t>(esize));
            out += esize;
          });
          src = staging.back().data();
        }
        dev.count_transfer();
        if (const CUresult r = d.cuMemcpyHtoDAsync(dp, src, bytes, stream); r != CUDA_SUCCESS)
          call.fail(r, "copying argument '" + p->name + "' to the device");
      }
      device_descs[i] = dense_like(*host, rank, reinterpret_cast<void*>(dp));
      copies.push_back({i, host, device_descs[i]});
    }
    argv[i] = &device_descs[i];
  }

  // The result's members (a single result is one; a tuple's `result` is `void* outs[n]`): scalars are
  // written to the caller's outputs, arrays first to device descriptors and copied back below.
  struct Returned {
    ir::Var array;      ///< null for a scalar member
    void* out;          ///< the caller's output
    ArrayDesc device{};
  };
  std::vector<Returned> returned;
  if (f.result || f.result_array) returned.push_back({f.result_array, result});
  for (std::size_t i = 0; i < f.tuple.size(); ++i) returned.push_back({f.tuple[i].array, static_cast<void* const*>(result)[i]});
  std::vector<void*> outs;
  for (auto& r : returned) outs.push_back(r.array ? &r.device : r.out);
  try {
    host_.run(argv.data(), f.returns_tuple() ? static_cast<void*>(outs.data()) : outs.empty() ? nullptr : outs[0], &call);
  } catch (const KernelFailed& failed) {
    call.synchronize(f.name);
    return failed.code;
  }
  call.synchronize(f.name);  // a kernel that failed is named here, before any copy could report it instead

  // Written host arrays go back (each once, also when passed twice); nothing else is copied.
  bool copied = false;  // whether anything is on its way back (else the call has waited for everything already)
  std::vector<std::pair<const HostCopy*, const char*>> scatter;  // staged data, not the vector: staging grows
  for (const auto& c : copies) {
    const ir::Var& p = f.params[c.param];
    const int rank = p->type.rank;
    const std::size_t bytes = static_cast<std::size_t>(element_count(*c.host, rank) * size_of(p->type.elem));
    if (!((written_ >> c.param) & 1u) || bytes == 0) continue;
    bool first = true;
    for (const auto& other : copies)
      if (&other != &c && other.device.data == c.device.data && other.param < c.param && ((written_ >> other.param) & 1u)) first = false;
    if (!first) continue;
    dev.count_transfer();
    void* to = c.host->data;
    if (!is_dense(*c.host, rank)) {
      staging.emplace_back(bytes);
      to = staging.back().data();
      scatter.emplace_back(&c, staging.back().data());
    }
    if (const CUresult r = d.cuMemcpyDtoHAsync(to, reinterpret_cast<CUdeviceptr>(c.device.data), bytes, stream); r != CUDA_SUCCESS)
      call.fail(r, "copying argument '" + p->name + "' back from the device");
    copied = true;
  }

  using HostBuffer = std::unique_ptr<void, decltype(&std::free)>;
  std::vector<HostBuffer> host_results;
  std::vector<ArrayDesc> out_descs;
  for (const auto& r : returned) {
    if (!r.array) continue;
    const int rank = r.array->type.rank;
    const std::size_t bytes = static_cast<std::size_t>(element_count(r.device, rank) * size_of(r.array->type.elem));
    // Like kiln_rt_alloc: 64-byte aligned, at least one block, freed by the caller with std::free.
    host_results.emplace_back(std::aligned_alloc(64, std::max<std::size_t>(64, (bytes + 63) / 64 * 64)), &std::free);
    if (!host_results.back()) throw std::bad_alloc();
    if (bytes > 0) dev.count_transfer();
    if (bytes > 0)
      if (const CUresult e = d.cuMemcpyDtoHAsync(host_results.back().get(), reinterpret_cast<CUdeviceptr>(r.device.data), bytes, stream);
          e != CUDA_SUCCESS)
        call.fail(e, "copying the result array " + r.array->name + " from the device");
    copied |= bytes > 0;
    out_descs.push_back(dense_like(r.device, rank, host_results.back().get()));
  }
  if (copied) call.synchronize(f.name);
  for (const auto& [c, buf] : scatter) {
    const char* in = buf;
    const std::int64_t esize = size_of(f.params[c->param]->type.elem);
    each_element(*c->host, f.params[c->param]->type.rank, esize, [&](std::int64_t off) {
      std::memcpy(static_cast<char*>(c->host->data) + off, in, static_cast<std::size_t>(esize));
      in += esize;
    });
  }
  std::size_t next = 0;
  for (const auto& r : returned) {
    if (!r.array) continue;
    *static_cast<ArrayDesc*>(r.out) = out_descs[next];
    host_results[next++].release();
  }
  return 0;
}

std::int32_t Executable::call_async(void* const* args, void* result, CallState& call, const ArgMemory& memory) {
  const ir::Function& f = *program_->function;
  if (const std::uint32_t host = array_params_ & ~memory.device_arrays) {
    const auto i = static_cast<std::size_t>(__builtin_ctz(host));
    backend_error(f.name, fmt::format("argument '{}' of an asynchronous call is not a DeviceArray", f.params[i]->name));
  }
  // A graph's allocation that outlives the graph's work would make the graph impossible to launch again.
  if (makes_arrays_ && memory.stream->recording)
    throw DeviceError(fmt::format("kernel '{}' returns a new array while its stream records a graph: a graph replays "
                                  "into the same memory, so write into a DeviceArray argument instead, or call it "
                                  "outside kiln::cuda::capture",
                                  f.name));

  // On the stack, and a tuple's only for a tuple: this is on the path of every call (a tuple has at most
  // ir::kMaxResults members).
  ArrayDesc single;
  std::optional<std::array<ArrayDesc, ir::kMaxResults>> members;
  if (!f.tuple.empty()) members.emplace();
  std::array<void*, ir::kMaxResults + 1> outs{};
  std::size_t nouts = 0;
  if (f.result || f.result_array) outs[nouts++] = f.result_array ? &single : result;
  for (std::size_t i = 0; i < f.tuple.size(); ++i)
    outs[nouts++] = f.tuple[i].array ? &(*members)[i] : static_cast<void* const*>(result)[i];
  call.may_defer = memory.pending != nullptr;
  // The first call with these shapes records what it does, for the next ones (launch_plan.hpp); only calls whose
  // arguments share no memory, outside a graph.
  PlanRecorder recorder;
  const bool record = memory.shared == 0 && !memory.stream->recording && plans_->may_record(args, call.dev.info().ordinal);
  if (record) call.recorder = &recorder;
  ir::PendingRun pending;
  bool results_pending = false;
  try {
    results_pending = host_.run(args, f.returns_tuple() ? static_cast<void*>(outs.data()) : outs[0], &call, &pending);
  } catch (const KernelFailed& failed) {
    return failed.code;  // a check on the host side: reported now, like a synchronous call's
  }
  if (results_pending) {
    // The results wait for totals on their way: the status of the call's kernels travels with them, and the
    // slot's event marks their arrival.
    std::ptrdiff_t status_offset = -1;
    if (call.device_status) {
      void* at = call.host_bytes(sizeof(KernelStatus), true);  // kept free by every earlier host_bytes
      call.dev.count_transfer();
      call.check(gpu::driver().cuMemcpyDtoHAsync(at, call.device_status, sizeof(KernelStatus), call.stream),
                 "reading the kernel status");
      status_offset = static_cast<char*>(at) - static_cast<char*>(call.host->host);
    }
    call.check(gpu::driver().cuEventRecord(call.host->done, call.stream), "recording the arrival of the results");
    *memory.pending = std::make_shared<DeferredScalars>(shared_from_this(), host_, f, std::move(pending), std::move(call.deferred),
                                                        call.dev, std::exchange(call.host, nullptr), status_offset,
                                                        memory.report ? *memory.report : nullptr);
  }
  if (call.device_status) memory.stream->defer(call.device_status, memory.report ? *memory.report : nullptr);

  // Arrays the kernel made stay on the device and belong to the caller from now on; one the call does not
  // own (an argument returned as the result) is copied, since a result is always a new array.
  const auto hand_over = [&](const ir::Var& array, const ArrayDesc& dev_desc, void* out) {
    const int rank = array->type.rank;
    const std::size_t bytes = static_cast<std::size_t>(element_count(dev_desc, rank) * size_of(array->type.elem));
    auto p = reinterpret_cast<CUdeviceptr>(dev_desc.data);
    // The lowering makes every array result a dense allocation, as the synchronous copy back assumes too.
    if (bytes > 0 && !is_dense(dev_desc, rank))
      backend_error(f.name, fmt::format("the result array {} is a strided view of device memory", array->name));
    if (!call.adopt(p)) {
      const CUdeviceptr fresh = call.alloc(bytes, "the result array " + array->name);
      if (bytes > 0)
        call.check(gpu::driver().cuMemcpyDtoDAsync(fresh, p, bytes, call.stream), "copying the result array " + array->name);
      call.adopt(fresh);
      p = fresh;
    }
    *static_cast<ArrayDesc*>(out) = dense_like(dev_desc, rank, reinterpret_cast<void*>(p));
  };
  if (f.result_array) hand_over(f.result_array, single, result);
  for (std::size_t i = 0; i < f.tuple.size(); ++i)
    if (f.tuple[i].array) hand_over(f.tuple[i].array, (*members)[i], static_cast<void* const*>(result)[i]);
  if (record) plans_->publish(recorder, args, call.dev, f.result_array ? static_cast<const ArrayDesc*>(result) : nullptr);
  return 0;
}

}  // namespace kiln::codegen::cuda
