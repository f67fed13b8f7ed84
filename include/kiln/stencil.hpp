// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencils: a function of the neighbourhood of each element, applied to every element of n-d arrays.
//
//   auto lap = kiln::stencil("lap", [](kiln::Window<double, 2> a) {
//     return a(-1, 0) + a(1, 0) + a(0, -1) + a(0, 1) - 4.0 * a(0, 0);
//   }, kiln::border(kiln::Border::nearest));
//   kiln::NDArray<double> y = lap(x);                 // stand-alone: compiled like a kiln::jit kernel
//   lap.into(y, x);                                   // ... or into an existing array of x's shape
//   auto k = kiln::jit("k", [&](kiln::Array<double, 2> x) { return lap(lap(x)); });  // inside kernels
//
// The lambda's leading parameters are Windows (the input arrays, read relative to the element computed:
// `a(0, 1)` is the right neighbour); any further parameters are ordinary kernel values (weight arrays
// indexed absolutely, scalars). Offsets that are C++ integers give the neighbourhood; offsets that are
// traced values (the index of a `kiln::range` over offsets, a scalar parameter) need a declared one:
// `kiln::neighborhood({-2, 2}, {-2, 2})`. What is read outside the arrays is decided by the border
// (kiln::Border, scipy.ndimage's modes). docs/stencils.md has the rules and pictures.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/array.hpp"
#include "kiln/kernel.hpp"
#include "kiln/math.hpp"
#include "kiln/ops.hpp"
#include "kiln/options.hpp"

namespace kiln {

/// The offsets a stencil reads along one dimension: lo..hi inclusive, lo <= 0 <= hi.
struct Offsets {
  std::int64_t lo = 0, hi = 0;
};

/// How a stencil treats its borders and neighbourhood. Combine the helpers below with `|` (the right
/// operand's given settings win): `kiln::neighborhood({-2, 2}, {-2, 2}) | kiln::border(kiln::Border::wrap)`.
struct StencilOptions {
  std::optional<Border> border;      ///< what is read outside the arrays; default Border::reflect (scipy's)
  std::optional<double> cval;        ///< the value read outside with Border::constant (default 0)
  std::vector<Offsets> neighborhood;  ///< one per dimension; empty: inferred from constant offsets
  std::optional<Options> kernel;     ///< how stand-alone calls compile (target, opt level...)
};

inline StencilOptions operator|(StencilOptions a, const StencilOptions& b) {
  if (b.border) a.border = b.border;
  if (b.cval) a.cval = b.cval;
  if (!b.neighborhood.empty()) a.neighborhood = b.neighborhood;
  if (b.kernel) a.kernel = b.kernel;
  return a;
}

inline StencilOptions border(Border b) {
  StencilOptions o;
  o.border = b;
  return o;
}
/// Border::constant: positions outside the arrays read `cval` (converted to the element type).
inline StencilOptions constant(double cval) {
  StencilOptions o;
  o.border = Border::constant;
  o.cval = cval;
  return o;
}
/// Declares the neighbourhood, one {lo, hi} per dimension: needed when offsets are traced values.
inline StencilOptions neighborhood(Offsets d0) { return StencilOptions{{}, {}, {d0}, {}}; }
inline StencilOptions neighborhood(Offsets d0, Offsets d1) { return StencilOptions{{}, {}, {d0, d1}, {}}; }
inline StencilOptions neighborhood(Offsets d0, Offsets d1, Offsets d2) { return StencilOptions{{}, {}, {d0, d1, d2}, {}}; }
inline StencilOptions neighborhood(Offsets d0, Offsets d1, Offsets d2, Offsets d3) {
  return StencilOptions{{}, {}, {d0, d1, d2, d3}, {}};
}
/// Compile options of stand-alone calls (`lap(x)` on host arrays).
inline StencilOptions kernel_options(Options o) {
  StencilOptions s;
  s.kernel = std::move(o);
  return s;
}

template <Element T, int N>
class Window;

namespace detail {

/// A stencil as declared: what the frontend needs besides the lambda.
struct StencilSpec {
  std::string name;
  Border border = Border::reflect;
  double cval = 0;
  std::vector<Offsets> declared;  ///< empty: inferred
  std::vector<std::string> param_names;  ///< the lambda's parameter names, when they can be read
  Where where;
};

/// One offset of a window access: a C++ integer, or a traced value.
struct OffsetArg {
  const Int* traced = nullptr;
  std::int64_t value = 0;
};

/// One application of a stencil being traced (frontend/stencil.cpp): checks the inputs, gives the windows
/// their proxies, traces the body in a scope of its own, and turns it into a StencilStmt.
class StencilTrace {
 public:
  /// `windows[k]` are the input arrays; `out`, when given, the array written into.
  StencilTrace(const StencilSpec& spec, DType elem, int rank, const ArrayHandle* const* windows, int nwindows,
               const ArrayHandle* out);
  StencilTrace(const StencilTrace&) = delete;
  StencilTrace& operator=(const StencilTrace&) = delete;
  ~StencilTrace();

  /// The state a Window refers to (it must not outlive the body's trace).
  struct State;
  const std::shared_ptr<State>& state() const { return s_; }

  /// Ends the body: `value` is what the lambda returned, already of the element type. Returns the
  /// array written (new, or `out`).
  ArrayHandle finish(const TracedValue& value);

 private:
  std::shared_ptr<State> s_;
};

/// `window(offsets...)` while the body is traced.
Node window_load(const std::shared_ptr<StencilTrace::State>& s, int window, const OffsetArg* offsets, int n);
/// The extent of window `window` along `axis`.
Node window_dim(const std::shared_ptr<StencilTrace::State>& s, int window, int axis);

/// The lambda's parameter names read from its source (empty where they cannot be read).
std::vector<std::string> stencil_param_names(const Where& where, std::size_t n);

template <class X>
struct window_traits {
  static constexpr bool value = false;
};
template <Element T, int N>
struct window_traits<Window<T, N>> {
  static constexpr bool value = true;
  using elem = T;
  static constexpr int rank = N;
};
template <class X>
concept IsWindow = window_traits<std::remove_cvref_t<X>>::value;

template <class Params, std::size_t... I>
constexpr std::size_t leading_windows(std::index_sequence<I...>) {
  std::size_t n = 0;
  bool leading = true;
  ((leading = leading && IsWindow<std::tuple_element_t<I, Params>>, n += leading ? 1 : 0), ...);
  return n;
}

template <class F>
struct stencil_traits {
  using Params = typename lambda_traits<F>::params;
  static constexpr std::size_t arity = lambda_traits<F>::arity;
  static constexpr std::size_t windows = leading_windows<Params>(std::make_index_sequence<arity>{});
  static_assert(windows >= 1, "a stencil's first parameter must be a kiln::Window<T, N>");
  using First = window_traits<std::tuple_element_t<0, Params>>;
  using elem = typename First::elem;
  static constexpr int rank = First::rank;
  template <std::size_t... I>
  static constexpr bool windows_agree(std::index_sequence<I...>) {
    return ((std::is_same_v<typename window_traits<std::tuple_element_t<I, Params>>::elem, elem> &&
             window_traits<std::tuple_element_t<I, Params>>::rank == rank) && ...);
  }
  static_assert(windows_agree(std::make_index_sequence<windows>{}),
                "all kiln::Window parameters of a stencil must have one element type and rank");
  template <std::size_t... I>
  static constexpr bool no_late_windows(std::index_sequence<I...>) {
    return (!IsWindow<std::tuple_element_t<I + windows, Params>> && ...);
  }
  static_assert(no_late_windows(std::make_index_sequence<arity - windows>{}),
                "a stencil's Window parameters come first, then its other (absolutely indexed) parameters");
};

/// The kernel parameter a stencil lambda parameter becomes in a stand-alone call.
template <class P>
struct stencil_param_spec {
  static constexpr ParamSpec value = param_spec<P>::value;
};
template <Element T, int N>
struct stencil_param_spec<Window<T, N>> {
  static constexpr ParamSpec value{true, kiln::dtype_of<T>(), N};
};

}  // namespace detail

/// A stencil's view of one input array, relative to the element being computed: `a(0, 0)` is the element
/// itself, `a(-1, 0)` its neighbour one row up. Offsets are C++ integers or traced Ints.
template <Element T, int N>
class Window {
  static_assert(N >= 1 && N <= kMaxRank, "a kiln::Window has rank 1..4");

 public:
  using value_type = T;
  static constexpr int rank = N;

  Window(std::shared_ptr<detail::StencilTrace::State> s, int index) : s_(std::move(s)), index_(index) {}

  template <class... O>
    requires(sizeof...(O) == N && ((std::is_integral_v<std::remove_cvref_t<O>> ||
                                    std::is_convertible_v<const O&, const Int&>) && ...))
  Scalar<T> operator()(const O&... offsets) const {
    const detail::OffsetArg args[] = {offset(offsets)...};
    return Scalar<T>(detail::window_load(s_, index_, args, N));
  }

  /// The input array's extent along `axis` (the extent of the space the stencil computes).
  Int shape(int axis) const { return Int(detail::window_dim(s_, index_, axis)); }

 private:
  template <class O>
  static detail::OffsetArg offset(const O& o) {
    if constexpr (std::is_integral_v<std::remove_cvref_t<O>>) return detail::OffsetArg{nullptr, static_cast<std::int64_t>(o)};
    else return detail::OffsetArg{&static_cast<const Int&>(o), 0};
  }

  std::shared_ptr<detail::StencilTrace::State> s_;
  int index_;
};

/// A stencil: call it on traced arrays inside a kernel, or on host arrays (then it is compiled like a
/// kiln::jit kernel, one variant per argument signature). Copies share the compiled code.
template <class F>
class Stencil {
  using Traits = detail::stencil_traits<F>;
  using T = typename Traits::elem;
  static constexpr int N = Traits::rank;
  static constexpr std::size_t W = Traits::windows;
  static constexpr std::size_t Arity = Traits::arity;
  using Params = typename Traits::Params;

 public:
  using result_type = Array<T, N>;

  Stencil(std::string name, F fn, const StencilOptions& o, std::source_location where)
      : state_(std::make_shared<State>(State{std::move(fn), {}})) {
    detail::StencilSpec& s = state_->spec;
    s.name = std::move(name);
    s.border = o.border.value_or(Border::reflect);
    s.cval = o.cval.value_or(0.0);
    s.declared = o.neighborhood;
    s.where = detail::Where::here(where);
    s.param_names = detail::stencil_param_names(s.where, Arity);
    opts_ = o.kernel.value_or(Options{});
    std::vector<std::string> names = s.param_names, into_names = s.param_names;
    if (!names.empty()) into_names.insert(into_names.begin(), "out");
    std::shared_ptr<const void> erased(state_, state_.get());
    std::vector<detail::ParamSpec> specs = param_specs(), into_specs = specs;
    into_specs.insert(into_specs.begin(), detail::ParamSpec{true, dtype_of<T>(), N});
    if (opts_.arg_names.empty()) opts_.arg_names = names;
    new_core_ = std::make_shared<detail::KernelCore>(s.name, specs, &trace_new, erased, names, s.where);
    into_core_ = std::make_shared<detail::KernelCore>(s.name + "_into", into_specs, &trace_into, erased, into_names, s.where);
    bind_options();
  }

  /// Inside a kernel, on traced arrays: a new traced array. On host arrays: a new NDArray<T>.
  template <class... A>
    requires(sizeof...(A) == Arity)
  auto operator()(A&&... args) const {
    if constexpr (is_traced<A...>()) {
      return result_type(apply(nullptr, std::forward<A>(args)...));
    } else {
      std::array<detail::ArgValue, Arity> av{detail::make_arg(std::forward<A>(args))...};
      ArrayDesc out{};
      const int rank = new_core_->call(new_id_, av.data(), av.size(), &out);
      return NDArray<T>::adopt(out, rank);
    }
  }

  /// Writes into `out` (of the inputs' shape; Border::skip leaves its border elements as they are).
  template <class Out, class... A>
    requires(sizeof...(A) == Arity)
  void into(Out&& out, A&&... args) const {
    if constexpr (detail::IsArray<Out>) {
      static_assert(is_traced<A...>(), "inside a kernel, a stencil's inputs are traced kiln::Arrays");
      static_assert(std::is_same_v<typename detail::array_traits<std::remove_cvref_t<Out>>::elem, T>,
                    "a stencil writes into an array of its windows' element type");
      apply(&out.traced_handle(), std::forward<A>(args)...);
    } else {
      std::array<detail::ArgValue, Arity + 1> av{detail::make_arg(std::forward<Out>(out)),
                                                 detail::make_arg(std::forward<A>(args))...};
      into_core_->call(into_id_, av.data(), av.size(), nullptr);
    }
  }

  /// The same stencil compiled for another target / with other options in stand-alone calls.
  Stencil on(Target t) const {
    Options o = opts_;
    o.target = t;
    return with(o);
  }
  Stencil with(const Options& o) const {
    Stencil s = *this;
    s.opts_ = o;
    if (s.opts_.arg_names.empty()) s.opts_.arg_names = state_->spec.param_names;
    s.bind_options();
    return s;
  }

  const std::string& name() const { return state_->spec.name; }
  const Options& options() const { return opts_; }
  /// The kernel behind `into(out, inputs...)` and this object's options for it, for callers that dispatch
  /// themselves (kiln/distributed.hpp).
  const std::shared_ptr<detail::KernelCore>& into_core() const { return into_core_; }
  int into_options_id() const { return into_id_; }
  /// Report of the last stand-alone compilation (`lap(x)`; `into` calls: into_diagnostics).
  std::string diagnostics() const { return new_core_->diagnostics(); }
  std::string into_diagnostics() const { return into_core_->diagnostics(); }
  std::string lowered_ir() const { return new_core_->lowered_ir(); }

 private:
  struct State {
    F fn;
    detail::StencilSpec spec;
  };

  template <class... A>
  static constexpr bool is_traced() {
    using First = std::tuple_element_t<0, std::tuple<std::remove_cvref_t<A>...>>;
    return detail::IsArray<First>;
  }

  void bind_options() {
    new_id_ = new_core_->options_id(opts_);
    Options into = opts_;
    if (!into.arg_names.empty()) into.arg_names.insert(into.arg_names.begin(), "out");
    into_id_ = into_core_->options_id(into);
  }

  static std::vector<detail::ParamSpec> param_specs() {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return std::vector<detail::ParamSpec>{detail::stencil_param_spec<std::tuple_element_t<I, Params>>::value...};
    }(std::make_index_sequence<Arity>{});
  }

  /// The handle of argument I when it is a window (an input array), else null.
  template <std::size_t I, class X>
  static const detail::ArrayHandle* window_handle(const X& x) {
    if constexpr (I < W) {
      static_assert(detail::IsArray<X>, "a stencil's window arguments inside a kernel are kiln::Arrays");
      static_assert(std::is_same_v<typename detail::array_traits<std::remove_cvref_t<X>>::elem, T>,
                    "a window argument must have the Window's element type");
      constexpr int R = detail::array_traits<std::remove_cvref_t<X>>::rank;
      static_assert(R == 0 || R == N, "a window argument must have the Window's rank");
      return &x.traced_handle();
    } else {
      return nullptr;
    }
  }

  template <std::size_t I, class X>
  static decltype(auto) param(const std::shared_ptr<detail::StencilTrace::State>& s, X&& x) {
    using P = std::tuple_element_t<I, Params>;
    if constexpr (I < W) return P(s, static_cast<int>(I));
    else return std::forward<X>(x);
  }

  template <class... A>
  detail::ArrayHandle apply(const detail::ArrayHandle* out, A&&... args) const {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      const detail::ArrayHandle* all[] = {window_handle<I>(args)...};
      detail::StencilTrace tr(state_->spec, dtype_of<T>(), N, all, static_cast<int>(W), out);
      const Scalar<T> v = kiln::cast<T>(state_->fn(param<I>(tr.state(), std::forward<A>(args))...));
      return tr.finish(v);
    }(std::make_index_sequence<Arity>{});
  }

  /// Stand-alone kernels: the lambda's parameters become kernel parameters (Windows become arrays).
  template <std::size_t I>
  static auto kernel_param(int index) {
    using P = std::tuple_element_t<I, Params>;
    if constexpr (detail::IsWindow<P>) return Array<T, N>(detail::array_param(index));
    else if constexpr (detail::param_spec<P>::value.is_array) return P(detail::array_param(index));
    else return P(detail::scalar_param(index));
  }

  static void trace_new(const void* p) {
    const Stencil self(static_cast<const State*>(p));
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      const Array<T, N> r(self.apply(nullptr, kernel_param<I>(static_cast<int>(I))...));
      detail::set_result_array(r.handle());
    }(std::make_index_sequence<Arity>{});
  }

  static void trace_into(const void* p) {
    const Stencil self(static_cast<const State*>(p));
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      const Array<T, N> out(detail::array_param(0));
      self.apply(&out.traced_handle(), kernel_param<I>(static_cast<int>(I) + 1)...);
    }(std::make_index_sequence<Arity>{});
  }

  /// A non-owning stencil for tracing its stand-alone kernels (the kernel core holds the state).
  explicit Stencil(const State* s) : state_(std::shared_ptr<State>(), const_cast<State*>(s)) {}

  std::shared_ptr<State> state_;
  Options opts_;
  std::shared_ptr<detail::KernelCore> new_core_, into_core_;
  int new_id_ = 0, into_id_ = 0;
};

/// Makes a stencil from a lambda whose leading parameters are kiln::Window<T, N> (one element type and
/// rank) and whose other parameters are kernel values (kiln::Array, kiln::Scalar); it returns the element's
/// new value (converted to T).
template <class F>
Stencil<std::decay_t<F>> stencil(std::string name, F&& fn, const StencilOptions& options = {},
                                 std::source_location where = std::source_location::current()) {
  return Stencil<std::decay_t<F>>(std::move(name), std::forward<F>(fn), options, where);
}

}  // namespace kiln
