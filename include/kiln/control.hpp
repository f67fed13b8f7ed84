// Traced control flow: parallel and sequential loops, and branches.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <utility>

#include "kiln/traced.hpp"

namespace kiln {

/// The extents of an n-d iteration space: `prange(kiln::shape(n, m), [&](Int i, Int j) {...})`.
template <int N>
struct Extents {
  static_assert(N >= 1 && N <= kMaxRank);
  Int lo[N];
  Int hi[N];
};

template <class... S>
  requires(sizeof...(S) >= 1 && sizeof...(S) <= kMaxRank)
Extents<sizeof...(S)> shape(const S&... extents) {
  return Extents<sizeof...(S)>{{(static_cast<void>(extents), Int(0))...}, {detail::to_scalar<std::int64_t>(extents)...}};
}

namespace detail {

enum class LoopKind : std::uint8_t { Parallel, Sequential };

/// Opens a loop's scope on construction and emits the loop on finish(); on an exception the scope is
/// discarded (the trace is abandoned anyway).
class LoopTrace {
 public:
  LoopTrace(LoopKind kind, int rank, const Int* lo, const Int* hi, Where where);
  LoopTrace(const LoopTrace&) = delete;
  LoopTrace& operator=(const LoopTrace&) = delete;
  ~LoopTrace();
  Int index(int d) const;
  void finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// One if/elif/else chain being traced.
class BranchTrace {
 public:
  BranchTrace(const TracedValue& cond, Where where);  ///< starts the chain and its first branch
  BranchTrace(std::uint64_t chain, const TracedValue* cond, Where where);  ///< an elif (cond) or else (null)
  BranchTrace(const BranchTrace&) = delete;
  BranchTrace& operator=(const BranchTrace&) = delete;
  ~BranchTrace();
  void finish();
  std::uint64_t chain() const { return chain_; }

 private:
  std::uint64_t chain_ = 0;
  std::uint64_t scope_ = 0;
  bool done_ = false;
};

template <int N, class F, std::size_t... D>
void run_loop(LoopKind kind, const Int* lo, const Int* hi, F& body, Where where, std::index_sequence<D...>) {
  LoopTrace loop(kind, N, lo, hi, where);
  body(loop.index(static_cast<int>(D))...);
  loop.finish();
}

template <class F>
concept Body1 = std::invocable<F&, Int>;

}  // namespace detail

/// A parallel loop over [0, n): iterations may run concurrently in any order. Scalars declared outside
/// may only be updated as reductions (`s += e`, `s -= e`, `s *= e`, `s /= e`, `s = min(s, e)`,
/// `s = max(s, e)`); any other write to them is a TraceError.
template <detail::Body1 F>
void prange(const Int& n, F&& body, std::source_location l = std::source_location::current()) {
  const Int lo = 0;
  detail::run_loop<1>(detail::LoopKind::Parallel, &lo, &n, body, detail::Where::here(l), std::make_index_sequence<1>{});
}

/// A parallel loop over [lo, hi).
template <detail::Body1 F>
void prange(const Int& lo, const Int& hi, F&& body, std::source_location l = std::source_location::current()) {
  detail::run_loop<1>(detail::LoopKind::Parallel, &lo, &hi, body, detail::Where::here(l), std::make_index_sequence<1>{});
}

/// A parallel loop over an n-d index space, collapsed into one parallel region.
template <int N, class F>
void prange(const Extents<N>& e, F&& body, std::source_location l = std::source_location::current()) {
  detail::run_loop<N>(detail::LoopKind::Parallel, e.lo, e.hi, body, detail::Where::here(l), std::make_index_sequence<N>{});
}

/// A sequential loop over [0, n).
template <detail::Body1 F>
void range(const Int& n, F&& body, std::source_location l = std::source_location::current()) {
  const Int lo = 0;
  detail::run_loop<1>(detail::LoopKind::Sequential, &lo, &n, body, detail::Where::here(l), std::make_index_sequence<1>{});
}

/// A sequential loop over [lo, hi).
template <detail::Body1 F>
void range(const Int& lo, const Int& hi, F&& body, std::source_location l = std::source_location::current()) {
  detail::run_loop<1>(detail::LoopKind::Sequential, &lo, &hi, body, detail::Where::here(l), std::make_index_sequence<1>{});
}

/// A sequential n-d loop nest (row-major order).
template <int N, class F>
void range(const Extents<N>& e, F&& body, std::source_location l = std::source_location::current()) {
  detail::run_loop<N>(detail::LoopKind::Sequential, e.lo, e.hi, body, detail::Where::here(l), std::make_index_sequence<N>{});
}

/// The value of `if_`: chain `.elif_(cond, body)` and `.else_(body)` in the same statement.
class IfChain {
 public:
  explicit IfChain(std::uint64_t chain) : chain_(chain) {}

  template <std::invocable F>
  IfChain& elif_(const Bool& cond, F&& body, std::source_location l = std::source_location::current()) {
    detail::BranchTrace b(chain_, &cond, detail::Where::here(l));
    body();
    b.finish();
    return *this;
  }

  template <std::invocable F>
  void else_(F&& body, std::source_location l = std::source_location::current()) {
    detail::BranchTrace b(chain_, nullptr, detail::Where::here(l));
    body();
    b.finish();
  }

 private:
  std::uint64_t chain_;
};

/// A traced branch: `if_(x > 0, [&] { ... }).elif_(x < 0, [&] { ... }).else_([&] { ... });`
template <std::invocable F>
IfChain if_(const Bool& cond, F&& body, std::source_location l = std::source_location::current()) {
  detail::BranchTrace b(cond, detail::Where::here(l));
  body();
  b.finish();
  return IfChain(b.chain());
}

}  // namespace kiln
