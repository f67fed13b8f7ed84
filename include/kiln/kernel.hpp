// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::jit: a C++ lambda traced into IR, compiled per argument signature, and called like a function.
#pragma once

#include <array>
#include <atomic>
#include <cstring>
#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kiln/abi.hpp"
#include "kiln/array.hpp"
#include "kiln/complex.hpp"
#include "kiln/ndarray.hpp"
#include "kiln/options.hpp"
#include "kiln/traced.hpp"

namespace kiln {

namespace cuda::detail {
struct StreamState;     // a CUDA stream and the checks deferred to its next synchronization (kiln/device.hpp)
class PendingScalars;   // scalar results of an asynchronous call still on their way (kiln/device.hpp)
}

namespace detail {

/// Where an asynchronous CUDA call runs (kernel.async(stream), kiln/device.hpp): it is queued on `stream`, takes
/// and returns device arrays only, and its kernels' failures are reported at the stream's next synchronization.
struct CallPlacement {
  std::shared_ptr<cuda::detail::StreamState> stream;
  int device = 0;  ///< the stream's device
  /// Set by the call when its scalar results are still on their way from the device (kiln::cuda::Future).
  std::shared_ptr<cuda::detail::PendingScalars>* pending = nullptr;
};

/// A parameter of a kernel lambda, as declared.
struct ParamSpec {
  bool is_array = false;
  DType dtype = DType::F64;
  int rank = 0;  ///< arrays: declared rank, 0 = any
  std::uint8_t part = 0;  ///< 1, 2: the real, imaginary part of a complex scalar parameter (two kernel parameters)
};

/// A parameter as instantiated for one call signature.
struct ParamInstance {
  ParamSpec spec;
  int rank = 0;
  bool unit_stride = false;
  std::uint8_t unit_dims = 0;  ///< bit d: this call's extent along d is 1
};

/// One call argument, type-erased.
struct ArgValue {
  bool is_array = false;
  DType dtype = DType::F64;
  int rank = 0;
  bool writable = true;
  bool is_float_scalar = false;  ///< the C++ argument was a floating-point value
  ScalarSlot scalar{};
  ArrayDesc array{};
  const char* cpp_type = "";
  bool on_device = false;  ///< a kiln::DeviceArray: `array.data` is a device address (CUDA target only)
  int device = -1;         ///< its CUDA device
};

template <class X>
ArgValue make_arg(X&& x);

template <class P>
struct param_spec;
template <Element T>
struct param_spec<Scalar<T>> {
  static constexpr ParamSpec value{false, kiln::dtype_of<T>(), 0};
};
template <Element T, int R>
struct param_spec<Array<T, R>> {
  static constexpr ParamSpec value{true, kiln::dtype_of<T>(), R};
};
/// A complex array is the real array of its parts, with one more dimension (kiln/complex.hpp).
template <class T, int R>
struct param_spec<Array<std::complex<T>, R>> {
  static constexpr ParamSpec value{true, kiln::dtype_of<T>(), R == 0 ? 0 : R + 1};
};
/// A complex scalar parameter is two real parameters, its parts: `param_width` counts them.
template <class T>
struct param_spec<Complex<T>> {
  static constexpr ParamSpec value{false, kiln::dtype_of<T>(), 0};
};
template <class P>
inline constexpr std::size_t param_width = 1;
template <class T>
inline constexpr std::size_t param_width<Complex<T>> = 2;

/// The first kernel parameter of each lambda parameter, and their total.
template <class Params>
constexpr auto param_offsets() {
  constexpr std::size_t n = std::tuple_size_v<Params>;
  std::array<std::size_t, n + 1> o{};
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((o[I + 1] = o[I] + param_width<std::tuple_element_t<I, Params>>), ...);
  }(std::make_index_sequence<n>{});
  return o;
}

template <class Params, class... A>
std::array<ArgValue, param_offsets<Params>()[sizeof...(A)]> make_args(A&&... args);

/// A lambda's result and parameter types. One with `auto` parameters has no single operator() and gets none
/// (check_kernel_lambda says why).
template <class F>
struct lambda_traits {
  using result = void;
  using params = std::tuple<>;
  static constexpr std::size_t arity = 0;
};
template <class F>
  requires requires { &F::operator(); }
struct lambda_traits<F> : lambda_traits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct lambda_traits<R (C::*)(A...) const> {
  using result = R;
  using params = std::tuple<std::remove_cvref_t<A>...>;
  static constexpr std::size_t arity = sizeof...(A);
};
template <class C, class R, class... A>
struct lambda_traits<R (C::*)(A...)> : lambda_traits<R (C::*)(A...) const> {};

template <class R>
struct host_result {
  static_assert(sizeof(R) == 0,
                "a kernel returns nothing, a kiln::Scalar<T>, a kiln::Array<T>, or a std::tuple / std::pair of them");
};
template <>
struct host_result<void> {
  using type = void;
};
template <Element T>
struct host_result<Scalar<T>> {
  using type = T;
};
template <Element T>
struct host_result<ElementRef<T>> {
  using type = T;
};
template <Element T, int R>
struct host_result<Array<T, R>> {
  using type = NDArray<T>;
};
template <class T>
struct host_result<Complex<T>> {
  using type = std::complex<T>;
};
template <class T>
struct host_result<ComplexRef<T>> {
  using type = std::complex<T>;
};

// ---- compile-time checks -------------------------------------------------------------------------------
// Mistakes the C++ types already show fail with one line that names the fix, before any template error.

template <class P>
inline constexpr bool is_kernel_param = false;
template <Element T>
inline constexpr bool is_kernel_param<Scalar<T>> = true;
template <ArrayElement T, int R>
inline constexpr bool is_kernel_param<Array<T, R>> = true;
template <class T>
inline constexpr bool is_kernel_param<Complex<T>> = true;

template <class P>
constexpr bool check_kernel_param() {
  static_assert(!std::is_arithmetic_v<P>,
                "kiln::jit: declare a number parameter as kiln::Double, kiln::Float, kiln::Int, kiln::Int32 or kiln::Bool, not a C++ number");
  static_assert(std::is_arithmetic_v<P> || is_kernel_param<P>,
                "kiln::jit: declare an array parameter as kiln::Array<T> or kiln::Array<T, N> (and a number as kiln::Double, kiln::Int, ...)");
  return is_kernel_param<P>;
}

/// True for a lambda whose parameters are all traced types; otherwise a static assertion names the fix.
template <class F>
constexpr bool check_kernel_lambda() {
  static_assert(requires { &F::operator(); },
                "kiln::jit: give every kernel parameter a type (kiln::Double x, kiln::Array<float> a), not auto");
  if constexpr (requires { &F::operator(); }) {
    using Params = typename lambda_traits<F>::params;
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (check_kernel_param<std::tuple_element_t<I, Params>>() && ... && true);
    }(std::make_index_sequence<std::tuple_size_v<Params>>{});
  } else {
    return false;
  }
}

/// The element type of a host array argument, where its C++ type has one (std::vector, std::span,
/// kiln::NDArray, kiln::ArrayRef, kiln::DeviceArray).
template <class D>
using host_element_t = std::remove_cvref_t<decltype(*std::declval<D&>().data())>;

template <class D>
inline constexpr bool is_rank1_host_array = false;  // std::vector and std::span: rank 1 by type
template <class T, class A>
inline constexpr bool is_rank1_host_array<std::vector<T, A>> = true;
template <class T, std::size_t N>
inline constexpr bool is_rank1_host_array<std::span<T, N>> = true;

/// Checks one call argument against its parameter where the argument's C++ type decides it: an array for a
/// scalar, a number for an array, and an array's element type and (for std::vector/std::span) rank. Values
/// (an integer range, a float for an integer) and the ranks of NDArray/ArrayRef are checked at the call.
template <class P, class X>
constexpr bool check_kernel_arg() {
  using D = std::remove_cvref_t<X>;
  if constexpr (requires { P::static_rank; }) {  // a kiln::Array parameter
    static_assert(!std::is_arithmetic_v<D>, "kiln kernel call: a number was passed for a kiln::Array parameter");
    if constexpr (requires { typename host_element_t<D>; }) {
      static_assert(std::is_same_v<host_element_t<D>, typename P::value_type>,
                    "kiln kernel call: the array's element type is not the kiln::Array<T> parameter's T (convert the data or change T)");
      static_assert(!is_rank1_host_array<D> || P::static_rank <= 1,
                    "kiln kernel call: a std::vector or std::span has rank 1, so pass a kiln::NDArray or kiln::ArrayRef for a kiln::Array<T, N> with N > 1");
    }
  } else {
    static_assert(std::is_arithmetic_v<D> || !requires { typename host_element_t<D>; },
                  "kiln kernel call: an array was passed for a scalar parameter (kiln::Double, kiln::Int, ...)");
    static_assert(param_width<P> == 2 || !is_complex_element_v<D>,
                  "kiln kernel call: a std::complex was passed for a real parameter (declare it kiln::Complex64 or "
                  "kiln::Complex128, or pass z.real())");
  }
  return true;
}

template <class Params, class... A>
constexpr bool check_kernel_args() {
  static_assert(std::tuple_size_v<Params> == sizeof...(A),
                "kiln kernel call: pass one argument per parameter of the kernel's lambda");
  if constexpr (std::tuple_size_v<Params> == sizeof...(A)) {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (check_kernel_arg<std::tuple_element_t<I, Params>, A>() && ... && true);
    }(std::index_sequence_for<A...>{});
  } else {
    return true;  // the count's assertion has failed; one message is enough
  }
}

/// A member of a tuple result: a traced scalar or array (not void, not another tuple).
template <class M>
using host_member_t = typename host_result<std::remove_cvref_t<M>>::type;

template <class R>
struct is_result_tuple : std::false_type {};
template <class... M>
struct is_result_tuple<std::tuple<M...>> : std::true_type {};
template <class A, class B>
struct is_result_tuple<std::pair<A, B>> : std::true_type {};

/// A kernel returning several values: std::tuple<host values...> (or std::pair), 2..ir::kMaxResults (8) members.
template <class... M>
struct host_result<std::tuple<M...>> {
  static_assert(sizeof...(M) >= 2 && sizeof...(M) <= 8, "a kernel returns a std::tuple of 2 to 8 values");
  static_assert((!is_result_tuple<std::remove_cvref_t<M>>::value && ...), "a kernel's std::tuple result cannot nest tuples");
  using type = std::tuple<host_member_t<M>...>;
};
template <class A, class B>
struct host_result<std::pair<A, B>> {
  static_assert(!is_result_tuple<std::remove_cvref_t<A>>::value && !is_result_tuple<std::remove_cvref_t<B>>::value,
                "a kernel's std::pair result cannot nest tuples");
  using type = std::pair<host_member_t<A>, host_member_t<B>>;
};

// Trace-time hooks used by the Kernel template; they act on the trace in progress.
Node scalar_param(int index);
ArrayHandle array_param(int index);
void set_result(const TracedValue& v);
void set_result_array(const ArrayHandle& a);
void add_result_member(const TracedValue& v);
void add_result_member_array(const ArrayHandle& a);

template <class M>
void add_member(const M& m) {
  if constexpr (requires { m.handle(); }) add_result_member_array(m.handle());
  else add_result_member(Scalar<host_member_t<M>>(m));
}

/// One stencil application of a traced kernel, as the distributed layer (kiln/distributed.hpp) needs it.
struct StencilUse {
  std::string origin;                  ///< "stencil jacobi (at file.cpp:12)"
  std::vector<int> windows;            ///< per input window: the kernel parameter it is, or -1 (made inside)
  std::vector<std::string> window_names;
  int target = -1;                     ///< the parameter written into, or -1 (a new array)
  std::vector<std::int64_t> lo, hi;    ///< the neighbourhood, per dimension (lo <= 0 <= hi)
  std::uint8_t border = 0;             ///< a kiln::Border
  double cval = 0;                     ///< Border::constant's value
};

/// What a kernel traces to for one call signature, without compiling it (frontend/trace_summary.cpp).
struct TraceSummary {
  std::vector<StencilUse> stencils;    ///< in trace order
  std::uint64_t ir_hash_lo = 0, ir_hash_hi = 0;  ///< the structural hash of the traced IR
  bool has_result = false;             ///< it returns a value (scalar, array or tuple)
  std::vector<std::string> param_names;  ///< the kernel's parameters, for messages
};

/// A launch plan of one compiled variant that the typed path ran (frontend/kernel_core.cpp): immutable, owned by
/// the kernel's core, so a pointer to it stays valid for as long as the kernel.
struct TypedBinding;

/// The non-template part of a kernel: signature table, compilation, dispatch. frontend/kernel_core.cpp.
class KernelCore {
 public:
  using Tracer = void (*)(const void* fn);
  KernelCore(std::string name, std::vector<ParamSpec> params, Tracer tracer, std::shared_ptr<const void> fn,
             std::vector<std::string> arg_names, Where where);
  ~KernelCore();
  KernelCore(const KernelCore&) = delete;
  KernelCore& operator=(const KernelCore&) = delete;

  /// Interns a set of options; calls name the options by this id.
  int options_id(const Options& o);
  /// Checks the arguments, compiles on the first call of a signature, runs. Returns the result's rank
  /// for array results (0 otherwise). A tuple result: `result` is `void* outs[n]` (ir::Function::tuple),
  /// and `member_ranks[i]` receives member i's rank (0 for a scalar).
  /// With a placement the call is asynchronous on its stream (CallPlacement).
  int call(int options_id, ArgValue* args, std::size_t nargs, void* result, int* member_ranks = nullptr,
           const CallPlacement* placement = nullptr);
  /// An asynchronous call whose argument types the C++ types already decided (AsyncKernel's typed path,
  /// kiln/device.hpp): argv[i] is a `DeviceArgHead*` for an array parameter and a `ScalarSlot*` holding the
  /// parameter's own type for a scalar one, argv[nargs] is the callee's; `read_only` bit i: argument i is const.
  /// Runs the call by a launch plan of the variant the latest asynchronous call ran (codegen/cuda/launch_plan.hpp)
  /// when the options, the arguments' ranks, shapes, strides and devices match it and no written argument
  /// overlaps another, and returns the result's rank (0: none). Otherwise returns -1 having done nothing, and the
  /// caller makes the call by `call`, which checks and reports everything.
  /// `kept`: the caller's own binding (an AsyncKernel's), tried first and replaced by the plan that ran, so that
  /// the caller's next call reaches its plan without the kernel's lookup.
  int call_typed(int options_id, void** argv, std::size_t nargs, std::uint32_t read_only, const CallPlacement& placement,
                 void* result, std::atomic<const TypedBinding*>& kept);

  const std::string& name() const;
  /// Human-readable report of the last compiled signature: IR after the passes, decisions, timings.
  std::string diagnostics() const;
  /// The IR after all passes of the last compiled signature.
  std::string lowered_ir() const;
  /// The optimized LLVM IR of the last compiled signature (CPU target, Options with keep_llvm_ir).
  std::string llvm_ir() const;
  /// How many signatures have been compiled.
  std::size_t compiled_variants() const;
  /// Traces the kernel for the signature these arguments select (checked as `call` checks them) and says
  /// what it does; compiles nothing. The distributed layer reads stencil neighbourhoods from it.
  TraceSummary summarize(int options_id, ArgValue* args, std::size_t nargs);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

template <class F, class... P, std::size_t... I>
void trace_lambda(const F& f, std::tuple<P...>*, std::index_sequence<I...>) {
  using R = typename lambda_traits<F>::result;
  constexpr auto first = param_offsets<std::tuple<P...>>();
  auto make = [](auto tag, std::size_t at) {
    using X = typename decltype(tag)::type;
    const int index = static_cast<int>(at);
    if constexpr (param_width<X> == 2) {
      using T = typename X::value_type::value_type;
      return X(Scalar<T>(scalar_param(index)), Scalar<T>(scalar_param(index + 1)));
    } else if constexpr (param_spec<X>::value.is_array) {
      return X(array_param(index));
    } else {
      return X(scalar_param(index));
    }
  };
  if constexpr (std::is_void_v<R>) {
    f(make(std::type_identity<P>{}, first[I])...);
  } else if constexpr (requires(R r) { r.handle(); }) {
    R r = f(make(std::type_identity<P>{}, first[I])...);
    set_result_array(r.handle());
  } else if constexpr (is_result_tuple<std::remove_cvref_t<R>>::value) {
    const auto r = f(make(std::type_identity<P>{}, first[I])...);
    std::apply([](const auto&... m) { (add_member(m), ...); }, r);
  } else if constexpr (is_complex_element_v<typename host_result<std::remove_cvref_t<R>>::type>) {
    // A complex result is returned as the tuple of its parts (Kernel::invoke puts them together).
    using T = typename host_result<std::remove_cvref_t<R>>::type::value_type;
    const Complex<T> r = f(make(std::type_identity<P>{}, first[I])...);
    add_result_member(r.real());
    add_result_member(r.imag());
  } else {
    const auto r = f(make(std::type_identity<P>{}, first[I])...);
    set_result(Scalar<typename host_result<std::remove_cvref_t<R>>::type>(r));
  }
}

template <class F>
void trace_erased(const void* fn) {
  using Params = typename lambda_traits<F>::params;
  trace_lambda(*static_cast<const F*>(fn), static_cast<Params*>(nullptr),
               std::make_index_sequence<lambda_traits<F>::arity>{});
}

template <class F>
std::vector<ParamSpec> param_specs() {
  using Params = typename lambda_traits<F>::params;
  std::vector<ParamSpec> specs;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          using P = std::tuple_element_t<I, Params>;
          ParamSpec s = param_spec<P>::value;
          for (std::size_t k = 0; k < param_width<P>; ++k) {
            if (param_width<P> == 2) s.part = static_cast<std::uint8_t>(k + 1);
            specs.push_back(s);
          }
        }(),
        ...);
  }(std::make_index_sequence<std::tuple_size_v<Params>>{});
  return specs;
}

}  // namespace detail

/// A compiled-on-demand kernel. Copies share their compiled code. Thread-safe: several threads may call
/// it at once; concurrent first calls of one signature compile it once.
template <class F>
class Kernel {
  using Traits = detail::lambda_traits<F>;

 public:
  using result_type = typename detail::host_result<std::remove_cvref_t<typename Traits::result>>::type;

  Kernel(std::shared_ptr<detail::KernelCore> core, Options opts)
      : core_(std::move(core)), opts_(std::move(opts)), options_id_(core_->options_id(opts_)) {}

  template <class... A>
  result_type operator()(A&&... args) const {
    return invoke<result_type>(HostArrays{}, nullptr, std::forward<A>(args)...);
  }

  /// Asynchronous, device-resident calls on a CUDA stream: `kernel.async(stream)(args...)` queues the call and
  /// returns kiln::DeviceArray results (kiln/device.hpp defines it; include kiln/kiln.hpp or kiln/device.hpp).
  template <class S>
  auto async(const S& stream) const;

  /// One call: `Result` is the C++ result (host or device arrays), `adopt(desc, rank)` turns an array the kernel
  /// made into the result's array type, `where` places an asynchronous call (null: a synchronous one).
  template <class Result, class Adopt, class... A>
  Result invoke(const Adopt& adopt, const detail::CallPlacement* where, A&&... args) const {
    static_assert(detail::check_kernel_args<typename Traits::params, A...>());
    auto av = detail::make_args<typename Traits::params>(std::forward<A>(args)...);
    if constexpr (std::is_void_v<Result>) {
      core_->call(options_id_, av.data(), av.size(), nullptr, nullptr, where);
    } else if constexpr (is_complex_element_v<Result>) {
      using T = typename Result::value_type;
      std::array<ScalarSlot, 2> parts{};
      std::array<void*, 2> outs{&parts[0], &parts[1]};
      std::array<int, 2> ranks{};
      core_->call(options_id_, av.data(), av.size(), outs.data(), ranks.data(), where);
      T re, im;
      std::memcpy(&re, &parts[0], sizeof re);
      std::memcpy(&im, &parts[1], sizeof im);
      return Result(re, im);
    } else if constexpr (is_element_v<Result>) {
      ScalarSlot out{};
      core_->call(options_id_, av.data(), av.size(), &out, nullptr, where);
      Result r;
      std::memcpy(&r, &out, sizeof r);
      return r;
    } else if constexpr (detail::is_result_tuple<Result>::value) {
      return call_tuple<Result>(adopt, where, av, std::make_index_sequence<std::tuple_size_v<Result>>{});
    } else {
      ArrayDesc out{};
      const int rank = core_->call(options_id_, av.data(), av.size(), &out, nullptr, where);
      return adopt.template operator()<Result>(out, rank);
    }
  }

  /// The same kernel compiled for another target (shares the kernel's compiled signatures table).
  Kernel on(Target t) const {
    if (t == opts_.target) return *this;  // `kernel.async(s)(...)` on every call of a pipeline: no options lookup
    Options o = opts_;
    o.target = t;
    return Kernel(core_, o);
  }
  /// The same kernel with other options.
  Kernel with(const Options& o) const { return Kernel(core_, o); }

  const Options& options() const { return opts_; }
  const std::string& name() const { return core_->name(); }
  std::string diagnostics() const { return core_->diagnostics(); }
  std::string lowered_ir() const { return core_->lowered_ir(); }
  std::string llvm_ir() const { return core_->llvm_ir(); }
  std::size_t compiled_variants() const { return core_->compiled_variants(); }
  /// The shared core behind the kernel and this object's options, for callers that dispatch themselves
  /// (kiln/distributed.hpp).
  const std::shared_ptr<detail::KernelCore>& core() const { return core_; }
  int options_id() const { return options_id_; }

 private:
  /// Arrays a synchronous call returns: host memory the NDArray takes over.
  struct HostArrays {
    template <class M>
    M operator()(const ArrayDesc& d, int rank) const {
      return M::adopt(d, rank);
    }
  };

  template <class Result, class Adopt, class AV, std::size_t... I>
  Result call_tuple(const Adopt& adopt, const detail::CallPlacement* where, AV& av, std::index_sequence<I...>) const {
    constexpr std::size_t n = sizeof...(I);
    std::array<ScalarSlot, n> scalars{};
    std::array<ArrayDesc, n> arrays{};
    std::array<int, n> ranks{};
    std::array<void*, n> outs{(is_element_v<std::tuple_element_t<I, Result>> ? static_cast<void*>(&scalars[I])
                                                                                     : static_cast<void*>(&arrays[I]))...};
    core_->call(options_id_, av.data(), av.size(), outs.data(), ranks.data(), where);
    // Every array is adopted before anything else can throw, so none is leaked.
    return Result(member<std::tuple_element_t<I, Result>>(adopt, scalars[I], arrays[I], ranks[I])...);
  }
  template <class M, class Adopt>
  static M member(const Adopt& adopt, const ScalarSlot& s, const ArrayDesc& a, int rank) {
    if constexpr (is_element_v<M>) {
      M r;
      std::memcpy(&r, &s, sizeof r);
      return r;
    } else {
      return adopt.template operator()<M>(a, rank);
    }
  }

  std::shared_ptr<detail::KernelCore> core_;
  Options opts_;
  int options_id_;
};

/// Makes a kernel from a lambda whose parameters are kiln::Scalar<T> (Int, Double, ...) and
/// kiln::Array<T, Rank> and which returns nothing, a traced scalar, a traced array, or a std::tuple or
/// std::pair of 2..8 traced scalars and arrays (the call returns std::tuple<double, kiln::NDArray<float>, ...>).
template <class F>
Kernel<std::decay_t<F>> jit(std::string name, F&& fn, Options opts = {},
                            std::source_location where = std::source_location::current()) {
  using G = std::decay_t<F>;
  if constexpr (detail::check_kernel_lambda<G>()) {
    auto stored = std::make_shared<const G>(std::forward<F>(fn));
    auto core = std::make_shared<detail::KernelCore>(std::move(name), detail::param_specs<G>(), &detail::trace_erased<G>,
                                                     std::shared_ptr<const void>(stored), opts.arg_names,
                                                     detail::Where::here(where));
    return Kernel<G>(std::move(core), std::move(opts));
  } else {
    __builtin_unreachable();  // check_kernel_lambda's static assertion has failed: no further errors
  }
}

// ---- argument conversion -------------------------------------------------------------------------------

namespace detail {

/// A number passed for a scalar parameter: its own kiln type and value (the call converts it to the
/// parameter's type, checking that an integer fits: frontend/kernel_core.cpp).
template <class T>
ArgValue scalar_arg(T v, const char* type_name) {
  using K = kiln_type_t<T>;
  ArgValue a;
  a.is_array = false;
  a.cpp_type = type_name;
  a.dtype = kiln::dtype_of<K>();
  a.is_float_scalar = is_float_element_v<K>;
  const K k = static_cast<K>(v);
  std::memcpy(&a.scalar, &k, sizeof k);
  return a;
}

template <Element T>
ArgValue array_arg(T* data, int rank, const std::int64_t* shape, const std::int64_t* strides, bool writable,
                   const char* type_name) {
  ArgValue a;
  a.is_array = true;
  a.dtype = kiln::dtype_of<T>();
  a.rank = rank;
  a.writable = writable;
  a.cpp_type = type_name;
  a.array.data = const_cast<std::remove_const_t<T>*>(data);
  for (int d = 0; d < rank; ++d) {
    a.array.shape[d] = shape[d];
    a.array.strides[d] = strides[d];
  }
  // Arguments follow the rule of the arrays kiln makes (a std::span of more than INT64_MAX elements arrives
  // with a negative extent; a view with zero strides may claim any size), so arrays shaped like them do too.
  if (!array_size(shape, rank, static_cast<std::int64_t>(sizeof(T))).ok())
    throw_bad_shape(rank, shape, (std::string(type_name) + " argument with a negative extent or more than "
                                                           "kiln::kMaxArrayBytes bytes of elements").c_str());
  return a;
}

template <class X>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

/// A host array of std::complex<T>: the real array of its parts, one more innermost dimension of extent 2 and
/// stride 1, every other stride doubled (in elements of T). No copy.
template <class T>
ArgValue complex_array_arg(std::complex<T>* data, int rank, const std::int64_t* shape, const std::int64_t* strides,
                           bool writable, const char* type_name) {
  if (rank >= kMaxRank)
    throw_bad_shape(rank, shape, (std::string(type_name) + " of complex numbers with more than 3 dimensions "
                                                           "(their parts take the fourth)").c_str());
  std::int64_t s[kMaxRank], t[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    s[d] = shape[d];
    t[d] = strides[d] * 2;
  }
  s[rank] = 2;
  t[rank] = 1;
  // std::complex<T> is an array of two T ([complex.numbers.general]): its parts may be addressed as T.
  return array_arg(reinterpret_cast<T*>(data), rank + 1, s, t, writable, type_name);
}

template <class X>
ArgValue make_arg(X&& x) {
  using D = std::remove_cvref_t<X>;
  constexpr bool is_const = std::is_const_v<std::remove_reference_t<X>>;
  if constexpr (std::is_arithmetic_v<D> || std::is_same_v<D, half> || std::is_same_v<D, bfloat16>) {
    return scalar_arg(x, "scalar");
  } else if constexpr (requires { typename host_element_t<D>; } && (is_vector<D>::value || requires { x.extent; }) &&
                       is_complex_element_v<std::remove_const_t<host_element_t<D>>>) {
    using C = std::remove_const_t<host_element_t<D>>;
    const std::int64_t n = static_cast<std::int64_t>(x.size()), s = 1;
    constexpr bool writable = !is_const && !std::is_const_v<std::remove_reference_t<decltype(*x.data())>>;
    return complex_array_arg(const_cast<C*>(x.data()), 1, &n, &s, writable,
                             is_vector<D>::value ? "std::vector" : "std::span");
  } else if constexpr (is_vector<D>::value) {
    static_assert(Element<typename D::value_type>, "std::vector arguments must hold bool, int8_t ... int64_t, uint8_t ... uint64_t, float, double, kiln::half or kiln::bfloat16 (std::vector<bool> is not an array)");
    static_assert(!std::is_same_v<typename D::value_type, bool>, "std::vector<bool> is packed bits, not an array; use std::vector<char>-backed NDArray<bool>");
    const std::int64_t n = static_cast<std::int64_t>(x.size()), s = 1;
    return array_arg(x.data(), 1, &n, &s, !is_const, "std::vector");
  } else if constexpr (requires { typename D::element_type; x.extent; }) {  // std::span
    using T = typename D::element_type;
    const std::int64_t n = static_cast<std::int64_t>(x.size()), s = 1;
    return array_arg<std::remove_const_t<T>>(const_cast<std::remove_const_t<T>*>(x.data()), 1, &n, &s,
                                             !std::is_const_v<T>, "std::span");
  } else if constexpr (requires { x.desc(); x.rank(); x.device(); }) {  // kiln::DeviceArray (kiln/device.hpp)
    // Its shape passed kiln's rule when it was made (DeviceArray checks every shape it takes): not again here,
    // on the path of every call of a device-resident pipeline.
    using T = std::remove_cvref_t<decltype(*x.data())>;
    ArgValue a;
    a.is_array = true;
    a.dtype = kiln::dtype_of<T>();
    a.rank = x.rank();
    a.writable = !is_const;
    a.cpp_type = "kiln::DeviceArray";
    a.array = x.desc();
    a.on_device = true;
    a.device = x.device();
    return a;
  } else if constexpr (requires { x.desc(); x.rank(); }) {  // NDArray
    const ArrayDesc d = x.desc();
    using T = std::remove_cvref_t<decltype(*x.data())>;
    return array_arg(static_cast<T*>(d.data), x.rank(), d.shape, d.strides, !is_const, "kiln::NDArray");
  } else if constexpr (requires { x.stride(0); x.rank(); x.data(); }) {  // ArrayRef
    using P = decltype(x.data());
    using T = std::remove_pointer_t<P>;
    std::int64_t shape[kMaxRank], strides[kMaxRank];
    for (int d = 0; d < x.rank(); ++d) {
      shape[d] = x.shape(d);
      strides[d] = x.stride(d);
    }
    if constexpr (is_complex_element_v<std::remove_const_t<T>>)
      return complex_array_arg(const_cast<std::remove_const_t<T>*>(x.data()), x.rank(), shape, strides,
                               !std::is_const_v<T>, "kiln::ArrayRef");
    else
    return array_arg<std::remove_const_t<T>>(const_cast<std::remove_const_t<T>*>(x.data()), x.rank(), shape, strides,
                                             !std::is_const_v<T>, "kiln::ArrayRef");
  } else {
    static_assert(sizeof(D) == 0,
                  "unsupported kernel argument: pass numbers, std::vector, std::span, kiln::NDArray, kiln::ArrayRef or kiln::DeviceArray");
  }
}

/// One argument for parameter type P, appended at av[k]: a complex scalar parameter takes two, its parts
/// (a real number passes as x + 0i).
template <class P, class X>
void append_arg(ArgValue* av, std::size_t& k, X&& x) {
  if constexpr (param_width<P> == 2) {
    using D = std::remove_cvref_t<X>;
    static_assert(std::is_arithmetic_v<D> || is_complex_element_v<D>,
                  "kiln kernel call: pass a std::complex or a number for a kiln::Complex64 / kiln::Complex128 parameter");
    if constexpr (is_complex_element_v<D>) {
      av[k++] = scalar_arg(x.real(), "std::complex");
      av[k++] = scalar_arg(x.imag(), "std::complex");
    } else {
      av[k++] = scalar_arg(x, "scalar");
      av[k++] = scalar_arg(static_cast<kiln_type_t<D>>(0), "scalar");
    }
  } else {
    av[k++] = make_arg(std::forward<X>(x));
  }
}

/// The type-erased arguments of one call, one per kernel parameter.
template <class Params, class... A>
std::array<ArgValue, param_offsets<Params>()[sizeof...(A)]> make_args(A&&... args) {
  // One argument per parameter (no complex scalar parameter): each made in place, on the path of every call.
  if constexpr (param_offsets<Params>()[sizeof...(A)] == sizeof...(A)) {
    return {make_arg(std::forward<A>(args))...};
  } else {
    std::array<ArgValue, param_offsets<Params>()[sizeof...(A)]> av{};
    std::size_t k = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (append_arg<std::tuple_element_t<I, Params>>(av.data(), k, std::forward<A>(args)), ...);
    }(std::index_sequence_for<A...>{});
    return av;
  }
}

}  // namespace detail
}  // namespace kiln
