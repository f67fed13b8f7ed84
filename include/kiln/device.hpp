// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU memory for the CUDA target: kiln::DeviceArray<T>, pinned host buffers, streams for asynchronous
// copies, and device selection. No CUDA header is needed: kiln opens the driver at run time, and every
// function here throws kiln::DeviceError("no CUDA driver/GPU: ...") on a machine without one.
//
//   auto x = kiln::to_device(host_x);              // std::vector, std::span or kiln::NDArray
//   auto y = kiln::DeviceArray<float>({n});        // uninitialized device memory
//   saxpy.on(kiln::Target::cuda)(2.0f, x, y);      // no copies: the kernel works on device memory
//   std::vector<float> out = y.to_vector();        // or y.to_host() for an NDArray
//
//   kiln::cuda::Stream s;                          // asynchronous, device-resident calls (docs/gpu.md):
//   auto z = step.on(kiln::Target::cuda).async(s)(x, y);  // queued on s; returns a DeviceArray at once
//   s.synchronize();                               // waits; a kernel's failure is thrown here, naming it
//
// Kernels called with host arrays on the CUDA target copy them to the device and the written ones back
// (see docs/gpu.md); DeviceArray arguments avoid those copies. Passing a DeviceArray to a kernel compiled
// for another target, or one of the wrong element type, is a kiln::TypeError.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/abi.hpp"
#include "kiln/dtype.hpp"
#include "kiln/error.hpp"
#include "kiln/kernel.hpp"
#include "kiln/ndarray.hpp"

namespace kiln {
namespace cuda {

class Graph;

/// True when the CUDA driver loads and sees at least one device.
bool available();
/// Why available() is false ("" when it is true).
std::string unavailable_reason();
/// The number of devices (0 without a driver).
int device_count();
/// Selects the device for the calling thread: host-argument calls of CUDA kernels run there and new
/// DeviceArrays are allocated there. The default is KILN_CUDA_DEVICE, else 0.
void set_device(int ordinal);
int current_device();

struct DeviceProperties {
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
};
DeviceProperties properties(int ordinal);

/// Waits for all work on the device: kiln's own queue and every stream (cuCtxSynchronize), then reports the
/// first failure of an asynchronous kernel call on any of the device's kiln::cuda::Streams (as Stream does).
void synchronize(int ordinal = current_device());

class Event;

namespace detail {
/// The scalar results of one asynchronous call, still on their way from the device (codegen/cuda implements
/// it). Thread-safe.
class PendingScalars {
 public:
  virtual ~PendingScalars() = default;
  /// Waits for the values and returns result member `member` (0 for a single result). Throws the call's
  /// kiln::Error if one of its kernels failed, as the stream's synchronize() would.
  virtual ScalarSlot value(std::size_t member) = 0;
  /// Whether value() would return without waiting for the device.
  virtual bool ready() const = 0;
};
}  // namespace detail

/// A scalar result of an asynchronous call (`kernel.async(stream)`). A total the kernel returns is copied back
/// on the stream and the call returns without waiting for it; get() waits for that copy only (not for later
/// work on the stream) and computes the result from it. A call whose host part itself needs a device value
/// waits for it, and then its Future is ready at once.
template <class T>
class Future {
 public:
  Future() = default;
  explicit Future(T ready) : value_(ready) {}
  Future(std::shared_ptr<detail::PendingScalars> pending, std::size_t member) : pending_(std::move(pending)), member_(member) {}

  /// The value; waits for the device if it has not arrived. Throws the kernel's kiln::Error if it failed.
  T get() const {
    if (!pending_) return value_;
    const ScalarSlot s = pending_->value(member_);
    T v;
    std::memcpy(&v, &s, sizeof v);
    return v;
  }
  operator T() const { return get(); }
  /// Whether get() returns without waiting.
  bool ready() const { return !pending_ || pending_->ready(); }

 private:
  T value_{};
  std::shared_ptr<detail::PendingScalars> pending_;
  std::size_t member_ = 0;
};

/// A queue of asynchronous work on one device: copies, and kernel calls made with `kernel.async(stream)`.
/// Work on one stream runs in order; work on different streams may overlap. Everything queued returns at
/// once; the memory involved must stay alive and unchanged until the work is done. Host memory should be a
/// PinnedBuffer for a copy to overlap with other work (pageable memory is copied synchronously by the driver).
/// Copies of a Stream are handles to the same stream; it is destroyed with its last handle and the last
/// DeviceArray allocated on it.
class Stream {
 public:
  explicit Stream(int device = current_device());
  /// Waits for everything queued so far. A kernel of an asynchronous call that failed (an index out of
  /// range, ...) is reported here as the kiln::Error the synchronous call would have thrown, naming the
  /// kernel; the calls queued after it have run on whatever it left.
  void synchronize() const;
  /// Work queued on this stream from now on waits until `e` has happened.
  void wait(const Event& e) const;
  int device() const { return device_; }
  void* handle() const { return handle_; }  ///< the CUstream
  const std::shared_ptr<detail::StreamState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::StreamState> state_;
  void* handle_ = nullptr;
  int device_ = 0;
};

/// A point in a stream's work: record() marks it, other streams wait() for it, the host synchronize()s on it,
/// and two recorded events time the work between them.
class Event {
 public:
  explicit Event(int device = current_device());
  /// Marks the end of the work queued on `s` so far.
  void record(const Stream& s);
  /// Waits until the recorded work has finished.
  void synchronize() const;
  /// Whether the recorded work has finished (never waits).
  bool done() const;
  /// Milliseconds between two recorded events (both finished; start recorded before end).
  static float elapsed_ms(const Event& start, const Event& end);
  int device() const { return device_; }
  void* handle() const { return handle_.get(); }  ///< the CUevent

 private:
  std::shared_ptr<void> handle_;
  int device_ = 0;
};

namespace detail {
struct GraphState;
Graph capture_graph(const Stream& s, const std::function<void()>& work);
}  // namespace detail

/// A recorded sequence of a stream's work (kernel calls, copies), replayed with one launch: the per-launch
/// cost of the CPU side (kiln's host function, the driver's checks) is paid once, at capture. Kernels of a
/// captured call that fail are reported at the next synchronization of the stream the graph was launched on.
class Graph {
 public:
  /// Queues the whole recorded sequence on `s` (a stream of the device it was captured on).
  void launch(const Stream& s) const;
  /// The number of operations (kernels, copies, memory operations) in the graph.
  std::size_t nodes() const;

 private:
  friend Graph detail::capture_graph(const Stream& s, const std::function<void()>& work);
  std::shared_ptr<detail::GraphState> state_;
};

/// Records what `work()` queues on `s` into a Graph instead of running it. Only asynchronous work may be
/// queued: kernel calls made with `.async(s)` that need no value back from the device (a reduction's total
/// is one: such a call is a kiln::DeviceError naming the kernel) and return no new array (write into
/// DeviceArray arguments instead), and copies on `s`. The arrays the calls see are baked into the graph:
/// replays read and write the same DeviceArrays (the graph keeps its calls' arrays alive; memory given to
/// copies must outlive it) with the same scalar arguments.
template <class F>
Graph capture(const Stream& s, F&& work) {
  return detail::capture_graph(s, std::function<void()>(std::forward<F>(work)));
}

/// kiln's device memory on one device: DeviceArrays, call results and temporaries.
struct MemoryStats {
  std::int64_t in_use_bytes = 0;    ///< allocated by kiln and not yet freed
  std::int64_t peak_bytes = 0;      ///< the most in use at once since the last reset_memory_peak()
  std::uint64_t allocations = 0;    ///< allocations made, ever
  std::int64_t pool_reserved_bytes = 0;  ///< what the stream-ordered pool holds from the driver (freed memory kept for reuse)
  std::uint64_t host_transfers = 0;  ///< copies between host and device memory, ever: arguments, results, values read back
};
MemoryStats memory_stats(int device = current_device());
void reset_memory_peak(int device = current_device());

namespace detail {
// The untyped operations DeviceArray and PinnedBuffer are built on (exported by libkiln).
void* device_alloc(std::size_t bytes, int device);
void device_free(void* p, std::size_t bytes, int device) noexcept;
/// Stream-ordered memory from the device's pool: usable by work queued on `stream` after this call, returned
/// to the pool when the stream reaches the free (the stream's state is kept alive until then).
void* device_alloc_async(std::size_t bytes, const std::shared_ptr<StreamState>& stream);
/// Whether `stream` records a graph now (kiln::cuda::capture).
bool recording(const StreamState& stream);
/// While `stream` records a graph, the graph keeps `memory` (an argument's) alive: its replays use it.
void keep_while_recording(const std::shared_ptr<StreamState>& stream, std::shared_ptr<const void> memory);
void device_free_async(void* p, std::size_t bytes, const std::shared_ptr<StreamState>& stream) noexcept;
void copy_to_device(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream);
void copy_to_host(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream);
void copy_on_device(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream);
/// `runs` runs of `run_bytes` bytes, their starts `pitch` bytes apart, with the same layout at both ends: a
/// strided slab of an array (one cuMemcpy2D, where a copy per run would pay the driver's latency each time).
void copy_runs_to_device(void* dst, const void* src, std::size_t run_bytes, std::size_t runs, std::size_t pitch, int device,
                         const Stream* stream);
void copy_runs_to_host(void* dst, const void* src, std::size_t run_bytes, std::size_t runs, std::size_t pitch, int device,
                       const Stream* stream);
void* pinned_alloc(std::size_t bytes);
void pinned_free(void* p) noexcept;
}  // namespace detail

/// Page-locked host memory of n elements (uninitialized): the fast path for transfers and the only host
/// memory that asynchronous copies on a Stream truly overlap with.
template <Element T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n)
      : data_(static_cast<T*>(detail::pinned_alloc(n * sizeof(T))), &detail::pinned_free), size_(n) {}
  T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) const { return data_.get()[i]; }
  std::span<T> span() const { return {data_.get(), size_}; }

 private:
  std::shared_ptr<T> data_;
  std::size_t size_ = 0;
};

}  // namespace cuda

/// A row-major array in GPU memory. Copies share the buffer (like NDArray); clone() copies the data. The
/// element pointer data() is a device address: pass the array to kernels, do not dereference it on the host.
template <Element T>
class DeviceArray {
 public:
  DeviceArray() = default;

  /// Uninitialized device memory of this shape on `device`.
  explicit DeviceArray(const std::vector<std::int64_t>& shape, int device = cuda::current_device()) {
    head_.device = device;
    set_shape(shape);
    own(std::shared_ptr<T>(static_cast<T*>(cuda::detail::device_alloc(bytes(), device)),
                           [device, n = bytes()](T* p) { cuda::detail::device_free(p, n, device); }));
  }
  explicit DeviceArray(std::initializer_list<std::int64_t> shape, int device = cuda::current_device())
      : DeviceArray(std::vector<std::int64_t>(shape), device) {}

  /// Uninitialized memory from the device's stream-ordered pool, for work queued on `stream` (see
  /// cuda::detail::device_alloc_async): cheaper than the plain constructor, which waits for the device.
  DeviceArray(const std::vector<std::int64_t>& shape, const cuda::Stream& stream) {
    head_.device = stream.device();
    set_shape(shape);
    auto owner = stream.state();
    own(std::shared_ptr<T>(static_cast<T*>(cuda::detail::device_alloc_async(bytes(), owner)),
                           [owner, n = bytes()](T* p) { cuda::detail::device_free_async(p, n, owner); }));
  }

  DeviceArray(const DeviceArray&) = default;
  DeviceArray& operator=(const DeviceArray&) = default;
  /// A moved-from array keeps its shape and has no memory, as its shared_ptr has none: the descriptor that
  /// calls read (head()) says so too, so that no call can reach the memory through it.
  DeviceArray(DeviceArray&& o) noexcept : data_(std::move(o.data_)), head_(o.head_) { o.head_.desc.data = nullptr; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      data_ = std::move(o.data_);
      head_ = o.head_;
      o.head_.desc.data = nullptr;
    }
    return *this;
  }

  /// Row-major device memory someone else owns, kept alive by `data` (kiln/dlpack.hpp imports through it).
  static DeviceArray share(std::shared_ptr<T> data, const std::vector<std::int64_t>& shape, int device) {
    DeviceArray a;
    a.head_.device = device;
    a.set_shape(shape);
    a.own(std::move(data));
    return a;
  }
  /// The memory's owner, shared (kiln/dlpack.hpp exports through it).
  const std::shared_ptr<T>& shared_data() const { return data_; }

  /// Takes over an array an asynchronous kernel call made in stream-ordered memory on `owner`'s stream.
  static DeviceArray adopt(const ArrayDesc& d, int rank, int device, const std::shared_ptr<cuda::detail::StreamState>& owner) {
    // Row-major: the call made it dense. The call checked the shape, so it is taken as it is (this is on the
    // path of every call that returns an array).
    DeviceArray a;
    a.head_.device = device;
    a.head_.rank = rank;
    for (int k = 0; k < rank; ++k) a.head_.desc.shape[k] = d.shape[k];
    kiln::detail::row_major_strides(rank, a.head_.desc.shape, a.head_.desc.strides);
    const std::size_t n = a.bytes();
    a.own(std::shared_ptr<T>(static_cast<T*>(d.data), [owner, n](T* p) { cuda::detail::device_free_async(p, n, owner); }));
    return a;
  }

  int rank() const { return head_.rank; }
  int device() const { return head_.device; }
  std::int64_t shape(int d) const { return head_.desc.shape[d]; }
  std::vector<std::int64_t> shape() const { return {head_.desc.shape, head_.desc.shape + head_.rank}; }
  std::int64_t stride(int d) const { return head_.desc.strides[d]; }
  std::int64_t size() const {
    std::int64_t n = head_.rank ? 1 : 0;
    for (int d = 0; d < head_.rank; ++d) n *= head_.desc.shape[d];
    return n;
  }
  std::size_t bytes() const { return static_cast<std::size_t>(size()) * sizeof(T); }
  T* data() const { return data_.get(); }
  ArrayDesc desc() const { return head_.desc; }
  /// The descriptor, rank and device as one record: what an asynchronous call's typed path passes in place of
  /// the array (AsyncKernel), with no copy.
  const DeviceArgHead& head() const { return head_; }

  /// Copies size() elements from host memory. With a stream the copy is asynchronous (see cuda::Stream).
  void copy_from(std::span<const T> host, const cuda::Stream* stream = nullptr) {
    check_count(host.size());
    cuda::detail::copy_to_device(data(), host.data(), bytes(), head_.device, stream);
  }
  /// Copies size() elements to host memory. With a stream the copy is asynchronous (see cuda::Stream).
  void copy_to(std::span<T> host, const cuda::Stream* stream = nullptr) const {
    check_count(host.size());
    cuda::detail::copy_to_host(host.data(), data(), bytes(), head_.device, stream);
  }
  /// Copies another device array of the same shape into this one.
  void copy_from(const DeviceArray& other, const cuda::Stream* stream = nullptr) {
    check_count(static_cast<std::size_t>(other.size()));
    cuda::detail::copy_on_device(data(), other.data(), bytes(), head_.device, stream);
  }

  NDArray<T> to_host() const {
    NDArray<T> h(shape());
    if (size() > 0) cuda::detail::copy_to_host(h.data(), data(), bytes(), head_.device, nullptr);
    return h;
  }
  std::vector<T> to_vector() const {
    std::vector<T> v(static_cast<std::size_t>(size()));
    if (!v.empty()) cuda::detail::copy_to_host(v.data(), data(), bytes(), head_.device, nullptr);
    return v;
  }
  DeviceArray clone() const {
    DeviceArray c(shape(), head_.device);
    if (size() > 0) cuda::detail::copy_on_device(c.data(), data(), bytes(), head_.device, nullptr);
    return c;
  }

 private:
  void set_shape(const std::vector<std::int64_t>& shape) {
    const int rank = static_cast<int>(shape.size());
    if (rank < 1 || rank > kMaxRank) kiln::detail::throw_bad_shape(rank, shape.data(), "DeviceArray rank must be 1..4");
    head_.rank = rank;
    for (int d = 0; d < rank; ++d) head_.desc.shape[d] = shape[static_cast<std::size_t>(d)];
    kiln::detail::new_array_bytes(rank, head_.desc.shape, sizeof(T), "DeviceArray");
    kiln::detail::row_major_strides(rank, head_.desc.shape, head_.desc.strides);
  }
  /// Takes the memory: the owner, and its address in the descriptor.
  void own(std::shared_ptr<T> data) {
    data_ = std::move(data);
    head_.desc.data = data_.get();
  }
  void check_count(std::size_t n) const {
    if (n != static_cast<std::size_t>(size()))
      throw ShapeError("DeviceArray copy of " + std::to_string(n) + " elements into an array of " + std::to_string(size()));
  }
  std::shared_ptr<T> data_;
  DeviceArgHead head_;  ///< head_.desc.data is data_.get()
};

/// A device copy of host data (rank 1 for vectors and spans, the array's shape for NDArray).
template <Element T>
DeviceArray<T> to_device(std::span<const T> host, int device = cuda::current_device()) {
  DeviceArray<T> d({static_cast<std::int64_t>(host.size())}, device);
  if (!host.empty()) d.copy_from(host);
  return d;
}
template <Element T>
DeviceArray<T> to_device(const std::vector<T>& host, int device = cuda::current_device()) {
  return to_device(std::span<const T>(host), device);
}
template <Element T>
DeviceArray<T> to_device(const NDArray<T>& host, int device = cuda::current_device()) {
  DeviceArray<T> d(host.shape(), device);
  if (host.size() > 0) d.copy_from(std::span<const T>(host.data(), static_cast<std::size_t>(host.size())));
  return d;
}
template <Element T>
NDArray<T> to_host(const DeviceArray<T>& d) {
  return d.to_host();
}

namespace detail {

/// The result of an asynchronous call: arrays stay on the device; scalars are futures (`Future`), or, as
/// the call's ABI delivers them (`Raw`), values that a pending call fills in later.
template <class R, bool Raw>
struct device_result {
  using type = std::conditional_t<Raw || std::is_void_v<R>, R, cuda::Future<R>>;
};
template <class T, bool Raw>
struct device_result<NDArray<T>, Raw> {
  using type = DeviceArray<T>;
};
/// A complex result arrives as its two parts: the call waits for them (no Future).
template <class T, bool Raw>
struct device_result<std::complex<T>, Raw> {
  using type = std::complex<T>;
};
template <class... M, bool Raw>
struct device_result<std::tuple<M...>, Raw> {
  using type = std::tuple<typename device_result<M, Raw>::type...>;
};
template <class A, class B, bool Raw>
struct device_result<std::pair<A, B>, Raw> {
  using type = std::pair<typename device_result<A, Raw>::type, typename device_result<B, Raw>::type>;
};

/// A raw result member as the caller gets it: a scalar becomes a Future (pending or ready), an array passes.
template <class M, class R>
M to_future(R&& raw, const std::shared_ptr<cuda::detail::PendingScalars>& pending, std::size_t member) {
  if constexpr (is_element_v<std::remove_cvref_t<R>>) {
    return pending ? M(pending, member) : M(raw);
  } else {
    return std::forward<R>(raw);
  }
}

}  // namespace detail

namespace detail {

template <class X>
inline constexpr bool is_device_array = false;
template <class T>
inline constexpr bool is_device_array<DeviceArray<T>> = true;

/// Whether argument X for kernel parameter P can take an asynchronous call's typed path (AsyncKernel): a
/// DeviceArray of the parameter's element type, or a number of the scalar parameter's own type (another number
/// is converted and checked by the general path). Complex parameters, two kernel parameters each, take the
/// general path.
template <class P, class X>
constexpr bool typed_arg() {
  using D = std::remove_cvref_t<X>;
  if constexpr (param_width<P> != 1) {
    return false;
  } else if constexpr (requires { P::static_rank; }) {
    if constexpr (is_device_array<D>) return std::is_same_v<host_element_t<D>, typename P::value_type>;
    else return false;
  } else {
    return std::is_same_v<D, typename P::value_type>;
  }
}

/// Whether a call with these arguments can take the typed path: every argument can, and the kernel returns
/// nothing or one array (a launch plan returns nothing else: codegen/cuda/launch_plan.hpp).
template <class Params, class R, class... A>
constexpr bool typed_call() {
  if constexpr (std::tuple_size_v<Params> != sizeof...(A) || !(std::is_void_v<R> || is_device_array<R>)) {
    return false;
  } else {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (typed_arg<std::tuple_element_t<I, Params>, A>() && ... && true);
    }(std::index_sequence_for<A...>{});
  }
}

/// One argument of the typed path: a DeviceArray as its head, a number in its slot (the rest of the slot zero).
template <class P, class X>
void put_typed(void*& arg, ScalarSlot& slot, const X& x) {
  if constexpr (requires { P::static_rank; }) {
    arg = const_cast<DeviceArgHead*>(&x.head());
  } else {
    slot.u64 = 0;
    std::memcpy(&slot, &x, sizeof x);
    arg = &slot;
  }
}

}  // namespace detail

/// A kernel bound to a CUDA stream (kernel.async(stream)). Each call is queued on the stream and returns without
/// waiting for the GPU: array arguments must be DeviceArrays on the stream's device, arrays the kernel returns
/// stay on the device (DeviceArrays in the stream's memory pool), scalar results are cuda::Futures, and a
/// kernel's failure is reported by the stream's next synchronize() (or by the Future of the call's result). A
/// call whose host part itself computes with a value from the device (a total that a later step of the kernel
/// uses, an array element read outside a parfor) waits for that value on the stream.
template <class F>
class AsyncKernel {
  using raw_type = typename detail::device_result<typename Kernel<F>::result_type, true>::type;

 public:
  using result_type = typename detail::device_result<typename Kernel<F>::result_type, false>::type;

  AsyncKernel(Kernel<F> kernel, const cuda::Stream& stream)
      : kernel_(std::move(kernel)), where_{stream.state(), stream.device()}, device_(stream.device()) {}
  // A copy keeps the binding with the kernel it belongs to (the binding names its kernel too: KernelCore::call_typed).
  AsyncKernel(const AsyncKernel& o)
      : kernel_(o.kernel_), where_(o.where_), device_(o.device_), bound_(o.bound_.load(std::memory_order_acquire)) {}
  AsyncKernel& operator=(const AsyncKernel& o) {
    kernel_ = o.kernel_;
    where_ = o.where_;
    device_ = o.device_;
    bound_.store(o.bound_.load(std::memory_order_acquire), std::memory_order_release);
    return *this;
  }

  template <class... A>
  result_type operator()(A&&... args) const {
    if constexpr (detail::typed_call<typename detail::lambda_traits<F>::params, result_type, A...>()) {
      // The typed path: DeviceArrays and numbers of the parameters' own types, checked by their C++ types.
      if constexpr (std::is_void_v<result_type>) {
        if (call_typed<A...>(nullptr, args...) >= 0) return;
      } else {
        ArrayDesc made;
        if (const int rank = call_typed<A...>(&made, args...); rank >= 0) return result_type::adopt(made, rank, device_, where_.stream);
      }
    }
    if (cuda::detail::recording(*where_.stream)) (keep_if_recorded(args), ...);
    if constexpr (std::is_same_v<raw_type, result_type>) {  // no scalar results: nothing can be pending
      return kernel_.template invoke<result_type>(DeviceArrays{device_, where_.stream}, &where_, std::forward<A>(args)...);
    } else {
      std::shared_ptr<cuda::detail::PendingScalars> pending;
      detail::CallPlacement where = where_;
      where.pending = &pending;
      raw_type raw = kernel_.template invoke<raw_type>(DeviceArrays{device_, where_.stream}, &where, std::forward<A>(args)...);
      if constexpr (is_element_v<raw_type>) {
        return detail::to_future<result_type>(raw, pending, 0);
      } else {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
          return result_type(detail::to_future<std::tuple_element_t<I, result_type>>(std::get<I>(std::move(raw)), pending, I)...);
        }(std::make_index_sequence<std::tuple_size_v<raw_type>>{});
      }
    }
  }

  const Kernel<F>& kernel() const { return kernel_; }

 private:
  /// Arrays the call made: stream-ordered device memory the DeviceArray takes over.
  struct DeviceArrays {
    int device;
    const std::shared_ptr<cuda::detail::StreamState>& owner;  // the AsyncKernel's, which outlives the call
    template <class M>
    M operator()(const ArrayDesc& d, int rank) const {
      return M::adopt(d, rank, device, owner);
    }
  };
  /// The typed path (KernelCore::call_typed): each array passes as its DeviceArray's own head and each number in
  /// a slot, with no conversion; a new array's descriptor lands in `made`. Returns the result's rank, or -1: the
  /// call takes the general path.
  template <class... A, class... X>
  int call_typed(ArrayDesc* made, const X&... args) const {
    using Params = typename detail::lambda_traits<F>::params;
    constexpr std::size_t n = sizeof...(A);
    constexpr std::uint32_t read_only = [] {
      std::uint32_t m = 0, bit = 1;
      ((m |= std::is_const_v<std::remove_reference_t<A>> ? bit : 0u, bit <<= 1), ...);
      return m;
    }();
    void* argv[n + 1];
    ScalarSlot slots[n + 1];
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (detail::put_typed<std::tuple_element_t<I, Params>>(argv[I], slots[I], args), ...);
    }(std::index_sequence_for<A...>{});
    return kernel_.core()->call_typed(kernel_.options_id(), argv, n, read_only, where_, made, bound_);
  }
  /// A graph being recorded replays into its calls' arrays: it keeps them alive, so none can be freed under it.
  template <class X>
  void keep_if_recorded(const X& x) const {
    if constexpr (requires { x.shared_data(); x.device(); })
      cuda::detail::keep_while_recording(where_.stream, std::shared_ptr<const void>(x.shared_data()));
  }

  Kernel<F> kernel_;
  detail::CallPlacement where_;
  int device_;
  /// The launch plan this object's latest typed call ran: its next call runs it first, with no lookup.
  mutable std::atomic<const detail::TypedBinding*> bound_{nullptr};
};

template <class F>
template <class S>
auto Kernel<F>::async(const S& stream) const {
  static_assert(std::is_same_v<S, cuda::Stream>, "kernel.async takes a kiln::cuda::Stream");
  return AsyncKernel<F>(on(Target::cuda), stream);
}

}  // namespace kiln
