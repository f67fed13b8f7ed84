// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

/// Traces one loop. The bounds are our own copies: once read they are released, so that assignments in
/// the body do not snapshot them.
template <int N, class F, std::size_t... D>
void run_loop(LoopKind kind, const Int* lo, const Int* hi, F& body, Where where, std::index_sequence<D...>) {
  LoopTrace loop(kind, N, lo, hi, where);
  for (int d = 0; d < N; ++d) {
    lo[d].release();
    hi[d].release();
  }
  body(loop.index(static_cast<int>(D))...);
  loop.finish();
}

template <class F>
concept Body1 = std::invocable<F&, Int>;
template <class N>
concept Bound = std::convertible_to<N, Int>;

/// A loop bound as our own Int; an expiring traced temporary it came from is released.
template <class N>
Int bound(N&& n) {
  Int b = n;
  expire(std::forward<N>(n));
  return b;
}

/// A branch condition as our own Bool (released once read by BranchTrace).
template <class C>
Bool bound_cond(C&& c) {
  Bool b = c;
  expire(std::forward<C>(c));
  return b;
}

template <int N, class F>
void run_extents(LoopKind kind, const Extents<N>& e, F& body, Where where) {
  run_loop<N>(kind, e.lo, e.hi, body, where, std::make_index_sequence<N>{});
}

}  // namespace detail

/// A parallel loop over [0, n): iterations may run concurrently in any order. Scalars declared outside
/// may only be updated as reductions (`s += e`, `s -= e`, `s *= e`, `s /= e`, `s = min(s, e)`,
/// `s = max(s, e)`, argmin/argmax pairs `if_(x < s, [&] { s = x; k = i; })`), and arrays written at
/// indices that repeat across iterations only as `a[k] op= e`; any other such write is a TraceError.
template <detail::Bound N, detail::Body1 F>
void prange(N&& n, F&& body, std::source_location l = std::source_location::current()) {
  const Int lo = 0, hi = detail::bound(std::forward<N>(n));
  detail::run_loop<1>(detail::LoopKind::Parallel, &lo, &hi, body, detail::Where::here(l), std::make_index_sequence<1>{});
}

/// A parallel loop over [lo, hi).
template <detail::Bound L, detail::Bound H, detail::Body1 F>
void prange(L&& lo, H&& hi, F&& body, std::source_location l = std::source_location::current()) {
  const Int b = detail::bound(std::forward<L>(lo)), e = detail::bound(std::forward<H>(hi));
  detail::run_loop<1>(detail::LoopKind::Parallel, &b, &e, body, detail::Where::here(l), std::make_index_sequence<1>{});
}

/// A parallel loop over an n-d index space, collapsed into one parallel region.
template <int N, class F>
void prange(const Extents<N>& e, F&& body, std::source_location l = std::source_location::current()) {
  detail::run_extents<N>(detail::LoopKind::Parallel, e, body, detail::Where::here(l));
}

/// A sequential loop over [0, n).
template <detail::Bound N, detail::Body1 F>
void range(N&& n, F&& body, std::source_location l = std::source_location::current()) {
  const Int lo = 0, hi = detail::bound(std::forward<N>(n));
  detail::run_loop<1>(detail::LoopKind::Sequential, &lo, &hi, body, detail::Where::here(l), std::make_index_sequence<1>{});
}

/// A sequential loop over [lo, hi).
template <detail::Bound L, detail::Bound H, detail::Body1 F>
void range(L&& lo, H&& hi, F&& body, std::source_location l = std::source_location::current()) {
  const Int b = detail::bound(std::forward<L>(lo)), e = detail::bound(std::forward<H>(hi));
  detail::run_loop<1>(detail::LoopKind::Sequential, &b, &e, body, detail::Where::here(l), std::make_index_sequence<1>{});
}

/// A sequential n-d loop nest (row-major order).
template <int N, class F>
void range(const Extents<N>& e, F&& body, std::source_location l = std::source_location::current()) {
  detail::run_extents<N>(detail::LoopKind::Sequential, e, body, detail::Where::here(l));
}

/// The value of `if_`: chain `.elif_(cond, body)` and `.else_(body)` in the same statement.
class IfChain {
 public:
  explicit IfChain(std::uint64_t chain) : chain_(chain) {}

  template <class C, std::invocable F>
    requires std::convertible_to<C, Bool>
  IfChain& elif_(C&& cond, F&& body, std::source_location l = std::source_location::current()) {
    const Bool c = detail::bound_cond(std::forward<C>(cond));
    detail::BranchTrace b(chain_, &c, detail::Where::here(l));
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
template <class C, std::invocable F>
  requires std::convertible_to<C, Bool>
IfChain if_(C&& cond, F&& body, std::source_location l = std::source_location::current()) {
  const Bool c = detail::bound_cond(std::forward<C>(cond));
  detail::BranchTrace b(c, detail::Where::here(l));
  body();
  b.finish();
  return IfChain(b.chain());
}

}  // namespace kiln
