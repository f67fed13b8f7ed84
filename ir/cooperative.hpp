// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Cooperative rows: a parfor whose iterations ("rows") each reduce over a range of their own — kiln::sum(x, 1),
// mean/var/std along the last axis, a prange over rows with an inner prange reduction — run by a group of
// GPU threads per row instead of one thread per row. With one thread per row, the 32 threads of a warp read
// 32 different rows, each load a row apart (a 4000 x 5000 float matrix: 20 KB apart, one useful word per
// 32-byte sector); with a group per row, the group's threads stride over the row together, every load of a
// warp one contiguous line, and combine their partial results in a fixed tree.
//
// The rule lives here, in ir/, so that the report (passes/offload.cpp) and the CUDA backend
// (codegen/cuda/emit_cooperative.cpp) apply the same one. The group runs the row's own statements in every
// thread (they compute the same values: each one's inputs are the same in every thread), spreads the row's
// nested parfors over its threads, and lets one thread store what the row stores.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::ir {

struct CooperativePlan {
  /// The body reduces over a range of each row: a nested parfor with scalar reductions.
  bool wanted = false;
  /// Wanted, every statement can run in a group, and the reductions read rows contiguously.
  bool eligible = false;
  /// Why it runs cooperatively, or why it cannot (empty when not wanted).
  std::string reason;
  /// The nested parfors whose iterations the group's threads share (those with reductions, and elementwise
  /// ones beside them), in body order.
  std::vector<const ParforStmt*> spread;
  /// The first nested parfor with reductions: its extent, when the host knows it at launch, sizes the group.
  const ParforStmt* first_reduction = nullptr;
};

/// The plan for the rows of `p` (every dimension of `p` is a row dimension; the nested parfors must be 1-d).
CooperativePlan plan_cooperative(const ParforStmt& p);

}  // namespace kiln::ir
