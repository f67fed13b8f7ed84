// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/scan_rows.hpp"

#include <limits>
#include <vector>

#include "ir/ops.hpp"
#include "ir/semantics.hpp"

namespace kiln::ir {

template <class T>
T scan_identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Mul: return T(1);
    case ReduceOp::Min:
      if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
      else return std::numeric_limits<T>::max();
    case ReduceOp::Max:
      if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
      else return std::numeric_limits<T>::lowest();
    default: return T(0);
  }
}

namespace {

constexpr std::int64_t kB = sem::kScanBlock;

/// One row of n elements: block totals, their folds in groups of kB, the groups' chain, then every block
/// from its first element combined with its carry, as ir/semantics.hpp says.
template <class S, class T, class R>
void scan_row(const S* x, R* y, std::int64_t n, BinaryOp op, bool exclusive, T id, std::vector<T>& fold,
              std::vector<T>& chain) {
  auto f = [op](T a, T b) { return sem::binary<T>(op, a, b); };
  auto in = [x](std::int64_t i) { return sem::cast<T, S>(x[i]); };
  const std::int64_t blocks = (n + kB - 1) / kB, carried = blocks > 0 ? blocks - 1 : 0;
  fold.resize(static_cast<size_t>(carried));
  chain.resize(static_cast<size_t>((carried + kB - 1) / kB));
  for (std::int64_t j = 0; j < carried; ++j) {  // fold[j]: the group's fold up to total(j)
    T total = in(j * kB);
    for (std::int64_t k = 1; k < kB; ++k) total = f(total, in(j * kB + k));
    fold[static_cast<size_t>(j)] = j % kB == 0 ? total : f(fold[static_cast<size_t>(j - 1)], total);
    if (j % kB == kB - 1 || j + 1 == carried) {
      const std::int64_t g = j / kB;
      chain[static_cast<size_t>(g)] = g == 0 ? fold[static_cast<size_t>(j)] : f(chain[static_cast<size_t>(g - 1)], fold[static_cast<size_t>(j)]);
    }
  }
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t lo = b * kB, len = std::min(kB, n - lo);
    T carry = id;
    if (b > 0) {
      const std::int64_t j = b - 1, g = j / kB;
      carry = g == 0 ? fold[static_cast<size_t>(j)] : f(chain[static_cast<size_t>(g - 1)], fold[static_cast<size_t>(j)]);
    }
    auto with = [&](T v) { return b == 0 ? v : f(carry, v); };
    T acc = in(lo);
    if (exclusive) {
      y[lo] = sem::cast<R, T>(carry);
      for (std::int64_t k = 1; k < len; ++k) {
        y[lo + k] = sem::cast<R, T>(with(acc));
        acc = f(acc, in(lo + k));
      }
    } else {
      y[lo] = sem::cast<R, T>(with(acc));
      for (std::int64_t k = 1; k < len; ++k) {
        acc = f(acc, in(lo + k));
        y[lo + k] = sem::cast<R, T>(with(acc));
      }
    }
  }
}

}  // namespace

void scan_rows(DType from, DType t, DType to, ReduceOp op, bool exclusive, const ArrayDesc& source,
               const ArrayDesc& out, int rank) {
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= source.shape[d];
  const std::int64_t n = source.shape[rank - 1];
  if (rows <= 0 || n <= 0) return;
  sem::with_type(from, [&](auto s0) {
    sem::with_type(t, [&](auto t0) {
      sem::with_type(to, [&](auto r0) {
        using S = decltype(s0);
        using T = decltype(t0);
        using R = decltype(r0);
        // Only the pairs make_scan admits (ir::scan_stmt_types) are instantiated.
        constexpr bool number = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
        constexpr bool in_ok = std::is_same_v<S, T> || std::is_same_v<S, bool> ||
                               (std::is_integral_v<S> && std::is_integral_v<T> && sizeof(T) > sizeof(S) &&
                                (std::is_signed_v<T> || std::is_unsigned_v<S>));
        constexpr bool out_ok = std::is_same_v<R, T> || (std::is_same_v<R, bool> && std::is_same_v<T, std::int32_t>);
        if constexpr (!number || sem::is_half_v<S> || sem::is_half_v<R> || !in_ok || !out_ok) {
          return;  // never: make_scan admits these types only
        } else {
          std::vector<T> fold, chain;
          const T id = scan_identity<T>(op);
          for (std::int64_t r = 0; r < rows; ++r)
            scan_row<S, T, R>(static_cast<const S*>(source.data) + r * n, static_cast<R*>(out.data) + r * n, n,
                              combiner(op), exclusive, id, fold, chain);
        }
      });
    });
  });
}

std::function<void(Frame&)> host_scan(const ScanStmt& x, HostScope& scope) {
  const int source = scope.array(x.source.get()), out = scope.array(x.out.get());
  const DType from = x.source->type.elem, t = x.type, to = x.out->type.elem;
  const ReduceOp op = x.op;
  const bool exclusive = x.exclusive;
  const int rank = x.source->type.rank;
  return [=](Frame& fr) {
    scan_rows(from, t, to, op, exclusive, fr.arrays[static_cast<size_t>(source)], fr.arrays[static_cast<size_t>(out)],
              rank);
  };
}

std::function<void(Frame&)> Machine::scan(const ScanStmt& x, HostScope& scope) const { return host_scan(x, scope); }

template std::int8_t scan_identity<std::int8_t>(ReduceOp);
template std::int16_t scan_identity<std::int16_t>(ReduceOp);
template std::int32_t scan_identity<std::int32_t>(ReduceOp);
template std::int64_t scan_identity<std::int64_t>(ReduceOp);
template std::uint8_t scan_identity<std::uint8_t>(ReduceOp);
template std::uint16_t scan_identity<std::uint16_t>(ReduceOp);
template std::uint32_t scan_identity<std::uint32_t>(ReduceOp);
template std::uint64_t scan_identity<std::uint64_t>(ReduceOp);
template float scan_identity<float>(ReduceOp);
template double scan_identity<double>(ReduceOp);

}  // namespace kiln::ir
