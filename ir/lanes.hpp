// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SPMD lanes: a parfor's innermost loop run W iterations at a time, one per lane of a vector, as ISPC and
// GPUs run such code. Each lane computes exactly what its scalar iteration computes, in the same order, so
// sums inside the body stay in order and the result is bitwise the scalar one; only independent iterations
// (which a parfor's are) run side by side.
//
// It pays where LLVM's loop vectorizer cannot help: a body holding a sequential loop whose iterations carry
// a float value (an in-order sum, a recurrence such as x = x * a + b), which the vectorizer may not reorder,
// so the inner loop runs one element at a time and the parfor loop around it is never vectorized. A body
// without one is left to the vectorizer, which does better on plain element streams.
//
// The analysis says which values differ between lanes ("varying", as opposed to "uniform") and which
// integer values step by a constant from lane to lane ("linear": lane k's value is lane 0's plus k * stride),
// which makes an access at a linear subscript of stride 1 one contiguous vector load or store. The rule lives
// here, in ir/, so that the report (passes/plan_lanes.cpp) and the CPU backend (codegen/llvm/emit_lanes.cpp)
// apply the same one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "ir/analysis.hpp"
#include "ir/stmt.hpp"

namespace kiln::ir {

struct LanePlan {
  Var index;              ///< the innermost index, which the lanes split
  bool wanted = false;    ///< the body has a loop carrying a float value in order (see above)
  bool eligible = false;  ///< wanted, and every statement of the body can run in lanes
  std::string reason;     ///< why it runs in lanes, or why it cannot (empty when not wanted)
  VarSet varying;         ///< variables whose values may differ between lanes
  int float_bits = 0;     ///< the widest float type in the body (32 or 64), which sets the lane count
  /// Its loops walk across rows, each lane group touching a contiguous piece of a new row on every trip (a
  /// scan down the columns of a matrix): the CPU backend runs such bodies kWalkingVectors vectors of lanes at
  /// a time, so that each visit to a row covers whole cache lines and more sequential chains overlap.
  bool walks = false;
  /// Variables assigned once (lets) and their values, through which linear subscripts are followed.
  LetValues lets;
};

/// Vectors of lanes per group where a plan walks (see LanePlan::walks): 4 made a scan down 4472 columns run as
/// fast as a hand loop sweeping rows of 512 columns (1 vector: 1.9x slower; 8 or 16: within 15% of 4 on the
/// 2-core VM, and their running values alone would fill AVX2's 16 registers).
inline constexpr unsigned kWalkingVectors = 4;

/// The plan for the innermost dimension of `p`.
LanePlan plan_lanes(const ParforStmt& p);

/// True if `e` may differ between lanes under `plan`.
bool varies(const LanePlan& plan, const Expr& e);

/// The step of integer `e` from one lane to the next: 0 when uniform, s when lane k holds lane 0's value
/// plus k * s (sums, differences and constant multiples of the index and uniform values, through lets);
/// nullopt when neither is known.
std::optional<std::int64_t> lane_stride(const LanePlan& plan, const Expr& e);

}  // namespace kiln::ir
