// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Atomic read-modify-write on array elements (ir::AtomicStmt, kiln/atomic.hpp): the operations, which element
// types each accepts (the one per-type rule, asked by the frontend, the verifier and the backends), and what
// each does to the element, defined once here for the interpreter; the backends must agree.
//
// The rules, which docs/atomics.md explains for users:
// - Atomicity: each atomic is one indivisible step with respect to every other atomic on the same element, on
//   every target. It is how iterations of a parfor may update one element concurrently; a plain load or store
//   of an element that another iteration updates atomically in the same parfor is a race, as in C++.
// - Memory order: relaxed (C++ memory_order_relaxed, LLVM `monotonic`, CUDA's atomicAdd & co. at device scope).
//   All atomics on one element take effect in one total order, but they order no other memory access. The end
//   of the parfor (and of the call) is where their results become visible to what follows. That is all the
//   uses kiln defines need (counters, histograms, minima, claims, slot allocation); a stronger order costs
//   fences on GPUs and would buy nothing, since a kiln iteration cannot wait for another one.
// - Arithmetic: kiln's own (ir/semantics.hpp): integers wrap, float add/sub round as IEEE does, float min/max
//   propagate NaN and order -0 below +0 (NumPy's minimum/maximum).
// - Compare-exchange compares bit patterns (as C++'s compare_exchange does): for floats a NaN matches only
//   the same NaN bits and -0 does not match +0.
// - Determinism: the final contents are independent of the order for integer add/sub/min/max and for float
//   min/max; float add/sub round in the order the updates happen, which varies from run to run on parallel
//   targets, so kiln's bitwise-reproducibility promise does not cover them (the diagnostics say so; kiln's
//   array reductions `h[k] += x` are the reproducible alternative). Exchange and compare-exchange pick a
//   winner by the order too; the values returned (the old values) depend on the order for every operation.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "ir/semantics.hpp"
#include "ir/stmt.hpp"

namespace kiln::ir {

std::string_view name_of(AtomicOp op);  ///< "atomic_add", ..., "atomic_compare_exchange"
std::optional<AtomicOp> parse_atomic(std::string_view s);

/// The per-type rule: whether `op` may update elements of type `t`. Every operation takes i32, i64, f32 and
/// f64; bool takes none (its one-byte elements have no atomic on the GPU: use an i32 flag, atomic_max(f, 1)
/// to set it, atomic_exchange to claim).
bool atomic_allowed(AtomicOp op, DType t);
/// The sentence saying which element types `op` accepts, for error messages.
std::string atomic_types_text(AtomicOp op);

/// True if the order of atomics `op` on an element of type `t` changes the array's final contents: float
/// add/sub (rounding), exchange and compare-exchange (which update wins). Integer add/sub/min/max and float
/// min/max give the same contents in any order.
bool order_dependent(AtomicOp op, DType t);

/// True if `s` holds an atomic on `array` (any array when null). Passes ask it where an atomic is not one more
/// store: it reads the element too, its update is no value to forward, and its element is shared by
/// iterations.
bool has_atomic(const Stmt& s, const VarNode* array = nullptr);

/// old = array[indices]; array[indices] = op(old, value) in one step; declares `result` = old.
Stmt make_atomic(Var result, AtomicOp op, Var array, std::vector<Expr> indices, Expr value, Expr expected = nullptr);

namespace sem {

/// Equal bit patterns (compare-exchange's test).
template <class T>
bool same_bits(T a, T b) {
  if constexpr (is_half_v<T>) {
    return a.bits == b.bits;  // not reached: the builder refuses atomics on f16/bf16 (atomic_allowed)
  } else if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    return std::bit_cast<Bits>(a) == std::bit_cast<Bits>(b);
  } else {
    return a == b;
  }
}

/// The value an atomic leaves in an element that held `old`.
template <class T>
T atomic_update(AtomicOp op, T old, T value, T expected) {
  switch (op) {
    case AtomicOp::Add: return binary(BinaryOp::Add, old, value);
    case AtomicOp::Sub: return binary(BinaryOp::Sub, old, value);
    case AtomicOp::Min: return binary(BinaryOp::Min, old, value);
    case AtomicOp::Max: return binary(BinaryOp::Max, old, value);
    case AtomicOp::Exchange: return value;
    case AtomicOp::CompareExchange: return same_bits(old, expected) ? value : old;
  }
  return old;
}

}  // namespace sem
}  // namespace kiln::ir
