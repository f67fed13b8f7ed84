// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/extent_classes.hpp"

#include <algorithm>

#include "ir/analysis.hpp"

namespace kiln::passes::extents {

using namespace kiln::ir;

int Classes::atom(const Expr& e) {
  for (size_t a = 1; a < atoms_.size(); ++a)
    if (equal(atoms_[a], e)) return static_cast<int>(a);
  const int a = add(e);
  if (const auto* d = dyn<DimExpr>(e)) {
    lower_[static_cast<size_t>(a)] = 0;  // extents are never negative
    if (d->array->type.unit_dim(d->axis)) unite({a, 0}, {0, 1});  // the signature fixes it at 1
  }
  return a;
}

Lin Classes::root(Lin l) {
  const size_t a = static_cast<size_t>(l.atom);
  if (parent_[a] == l.atom) return l;
  const Lin r = root({parent_[a], offset_[a]});
  parent_[a] = r.atom;
  offset_[a] = r.k;
  return {r.atom, r.k + l.k};
}

bool Classes::same(Lin a, Lin b) {
  const Lin ra = root(a), rb = root(b);
  return ra.atom == rb.atom && ra.k == rb.k;
}

std::optional<std::int64_t> Classes::exact(Lin l) {
  const Lin r = root(l);
  if (r.atom == 0) return r.k;
  return std::nullopt;
}

std::optional<std::int64_t> Classes::lower(Lin l) {
  const Lin r = root(l);
  if (r.atom == 0) return r.k;
  const auto& lb = lower_[static_cast<size_t>(r.atom)];
  if (!lb) return std::nullopt;
  return *lb + r.k;
}

void Classes::at_least(Lin l, std::int64_t c) {
  const Lin r = root(l);
  if (r.atom == 0) return;
  auto& lb = lower_[static_cast<size_t>(r.atom)];
  lb = std::max(lb.value_or(c - r.k), c - r.k);
}

bool Classes::unite(Lin a, Lin b) {
  Lin ra = root(a), rb = root(b);
  if (ra.atom == rb.atom) return ra.k == rb.k;
  if (rb.atom == 0 || (ra.atom != 0 && rb.atom < ra.atom)) std::swap(ra, rb);  // the constant, or the older, roots
  // value(ra.atom) + ra.k == value(rb.atom) + rb.k: hang rb.atom below ra.atom.
  const size_t child = static_cast<size_t>(rb.atom);
  parent_[child] = ra.atom;
  offset_[child] = ra.k - rb.k;
  if (const auto lb = lower_[child]) at_least({ra.atom, ra.k - rb.k}, *lb);
  return true;
}

std::vector<std::pair<int, std::int64_t>> Classes::members(Lin l) {
  const Lin r = root(l);
  std::vector<std::pair<int, std::int64_t>> out;
  for (int a = 0; a < size(); ++a) {
    const Lin ra = root({a, 0});
    if (ra.atom == r.atom) out.emplace_back(a, r.k - ra.k);
  }
  return out;
}

int Classes::add(const Expr& e) {
  const int a = static_cast<int>(atoms_.size());
  atoms_.push_back(e);
  parent_.push_back(a);
  offset_.push_back(0);
  lower_.push_back(std::nullopt);
  return a;
}

}  // namespace kiln::passes::extents
