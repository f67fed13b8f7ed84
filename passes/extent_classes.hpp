// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Equivalence classes of i64 extents up to a constant offset, with a lower bound per class: the facts
// array_analysis learns as it walks a kernel (passes/array_analysis.hpp says which).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/expr.hpp"

namespace kiln::passes::extents {

/// An extent in canonical form: value(atom) + k. Atom 0 is the constant 0, so {0, k} is the constant k.
struct Lin {
  int atom;
  std::int64_t k;
};

inline Lin shifted(Lin l, std::int64_t d) { return {l.atom, l.k + d}; }

/// Union-find over atoms with offsets: value(x) == value(parent[x]) + offset[x]; each class root carries a
/// lower bound of its value. Copyable: a scope takes a snapshot and restores it when its facts expire.
class Classes {
 public:
  Classes() { add(nullptr); }

  /// The atom for `e` (structurally equal expressions share one).
  int atom(const ir::Expr& e);
  const ir::Expr& expr(int a) const { return atoms_[static_cast<size_t>(a)]; }
  int size() const { return static_cast<int>(atoms_.size()); }

  /// l in terms of its class root.
  Lin root(Lin l);

  bool same(Lin a, Lin b);
  std::optional<std::int64_t> exact(Lin l);
  std::optional<std::int64_t> lower(Lin l);
  void at_least(Lin l, std::int64_t c);

  /// Records value(a) == value(b). Returns false when the classes already say otherwise.
  bool unite(Lin a, Lin b);

  /// The members of l's class as (atom, offset such that value(l) == value(atom) + offset).
  std::vector<std::pair<int, std::int64_t>> members(Lin l);

 private:
  std::vector<ir::Expr> atoms_;
  std::vector<int> parent_;
  std::vector<std::int64_t> offset_;
  std::vector<std::optional<std::int64_t>> lower_;

  int add(const ir::Expr& e);
};

}  // namespace kiln::passes::extents
