// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/sort_rows.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/semantics.hpp"
#include "ir/sort_keys.hpp"

namespace kiln::ir {

void stable_sort_rows(DType t, const ArrayDesc& keys, const ArrayDesc* positions, int rank) {
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= keys.shape[d];
  const std::int64_t n = keys.shape[rank - 1];
  if (rows <= 0 || n <= 0) return;
  sem::with_type(t, [&](auto zero) {
    using T = decltype(zero);
    auto* data = static_cast<T*>(keys.data);
    std::vector<std::int64_t> order(static_cast<size_t>(n));
    std::vector<T> row(static_cast<size_t>(n));
    std::vector<std::int64_t> payload;
    for (std::int64_t r = 0; r < rows; ++r) {
      T* x = data + r * n;
      std::iota(order.begin(), order.end(), std::int64_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [x](std::int64_t a, std::int64_t b) { return sort::SortKey<T>::less(x[a], x[b]); });
      std::copy(x, x + n, row.begin());
      for (std::int64_t k = 0; k < n; ++k) x[k] = row[static_cast<size_t>(order[static_cast<size_t>(k)])];
      if (positions) {
        std::int64_t* p = static_cast<std::int64_t*>(positions->data) + r * n;
        payload.assign(p, p + n);
        for (std::int64_t k = 0; k < n; ++k) p[k] = payload[static_cast<size_t>(order[static_cast<size_t>(k)])];
      }
    }
  });
}

std::function<void(Frame&)> host_sort(const SortStmt& x, HostScope& scope) {
  const int keys = scope.array(x.keys.get()), positions = x.positions ? scope.array(x.positions.get()) : -1;
  const DType t = x.keys->type.elem;
  const int rank = x.keys->type.rank;
  return [keys, positions, t, rank](Frame& fr) {
    stable_sort_rows(t, fr.arrays[static_cast<size_t>(keys)],
                     positions < 0 ? nullptr : &fr.arrays[static_cast<size_t>(positions)], rank);
  };
}

std::function<void(Frame&)> Machine::sort(const SortStmt& x, HostScope& scope) const { return host_sort(x, scope); }

}  // namespace kiln::ir
