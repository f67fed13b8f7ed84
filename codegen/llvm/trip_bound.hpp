// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A constant upper bound on a loop's trip count, proved from kiln IR that LLVM no longer sees.
//
// A stencil's border loops (lower_stencils, partition_loops) run at most the halo's width, e.g.
// `j in 0 .. min(max(0, lo), n)` with `let lo = min(2, n)`, or `j in max(min(n, hi), ..) .. n` with
// `let hi = max(lo, n - 2)`. In a parfor chunk those bounds arrive as loads from the chunk's context, so
// LLVM cannot bound the trip count and vectorizes each such loop: a main vector loop, a vector epilogue
// and a scalar remainder, of which only the remainder ever runs. On conv2d that code was two of its three
// vectorized loops and about half its code-generation time. With the bound known, the emitter tells LLVM
// what LLVM decides itself for a loop whose maximum trip count it can see (no vectorization below its tiny
// trip-count threshold).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/stmt.hpp"

namespace kiln::codegen::cpu::detail {

/// The definitions of the function's scalar variables that are never assigned after their `let`: a use of
/// one of them may be read as its initializer.
class LetDefinitions {
 public:
  explicit LetDefinitions(const ir::Function& f);
  /// The initializer of `v`, or null if `v` is not such a variable.
  const ir::ExprNode* init(const ir::VarNode* v) const;
  /// True for a scalar assigned after its declaration (or a reduction variable) and an array binding that is
  /// rebound: two reads of it may see different values.
  bool changes(const ir::VarNode* v) const;

 private:
  std::unordered_map<const ir::VarNode*, const ir::ExprNode*> init_;
  std::unordered_set<const ir::VarNode*> changing_;
};

/// An upper bound on `end - begin` (the trip count of `for i in begin .. end`) that holds for every value of
/// the variables and extents involved, or nullopt when none is found. Only ever used to skip work that
/// cannot pay off, never to change what the code computes.
std::optional<std::int64_t> max_trip_count(const ir::Expr& begin, const ir::Expr& end, const LetDefinitions& lets);

}  // namespace kiln::codegen::cpu::detail
