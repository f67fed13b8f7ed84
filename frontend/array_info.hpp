// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the frontend knows about an array beyond its IR variable: the extents of temporaries and views as
// expressions (so that equal shapes are recognised while tracing), a view's index map onto its base array,
// and a label naming it in messages and parfor origins.
#pragma once

#include <string>
#include <vector>

#include "frontend/trace_context.hpp"
#include "ir/stmt.hpp"
#include "kiln/array.hpp"

namespace kiln::detail {

struct ArrayInfo {
  /// One per dimension of the array (or view); valid wherever the handle is.
  std::vector<ir::Expr> extents;
  /// A view: for each dimension of the base array, the base index is `start + step * index[dim]`, or just
  /// `start` when dim is -1 (an integer index). Empty: the array itself (indices pass through).
  struct Axis {
    ir::Expr start, step;
    int dim = -1;
  };
  std::vector<Axis> axes;
  std::string label;  ///< "a", "a[1:-1]", "exp(a - b)"
};

/// The extents of `a`: a parameter's extent that this signature fixes at 1 is the constant 1, so that
/// broadcasting can be decided while tracing.
std::vector<ir::Expr> extents_of(const ArrayHandle& a);
/// The indices into `a.var` of the element at `index` (one per dimension of `a`).
std::vector<ir::Expr> base_indices(const ArrayHandle& a, const std::vector<ir::Expr>& index);
/// The indices into `a.var` of the element `a(indices[0], ..., indices[n - 1])` (a TraceError for the wrong
/// count); what the index values read is added to `flags`.
std::vector<ir::Expr> read_indices(TraceContext& ctx, const ArrayHandle& a, const Int* const* indices, int n,
                                   Node& flags);
bool is_view(const ArrayHandle& a);
/// How `a` is named in messages: its variable, or the expression or view it came from.
std::string label_of(const ArrayHandle& a);
/// A handle for a whole new array `var` (made in the current scope) with known extents.
ArrayHandle new_handle(TraceContext& ctx, const ir::Var& var, std::vector<ir::Expr> extents, std::string label);

/// Loop index variables i, j, k, l for a space of `rank` dimensions.
std::vector<ir::Var> space_indices(TraceContext& ctx, int rank);
std::vector<ir::Expr> refs(const std::vector<ir::Var>& vars);

/// `expr` as a value that keeps its meaning: reads of memory or of mutable variables are first copied
/// into a new variable (named `name`) at the current point of the trace.
ir::Expr stable(TraceContext& ctx, const Node& n, const char* name);

/// How many times the trace has written into `array` so far (element stores and maps into it): a value
/// computed from the array is still current while this has not changed.
std::uint64_t write_count(const TraceContext& ctx, const ir::VarNode* array);
void note_write(const TraceContext& ctx, const ir::VarNode* array);
/// Changes whenever the counts start over: counts taken under another generation mean nothing.
std::uint64_t write_generation(const TraceContext& ctx);

/// Emits the run-time checks that a new array `array` of `shape` (made at `w`) follows kiln::array_size's
/// rule: a ShapeError naming the array and its extents for a negative extent or a size beyond
/// kMaxArrayBytes. Emitted before the statement that makes the array, they stay where fusion removes the
/// allocation (`sum(zeros<double>(n, m))` then refuses n = -1 instead of summing nothing, and m = 2^62
/// instead of looping for ever). Nothing is emitted for constant extents that pass.
void check_new_array(TraceContext& ctx, const ir::Var& array, const std::vector<ir::Expr>& shape, const Where& w);

/// "at f.cpp:12" or "" when unknown.
std::string at(const Where& w);
/// A shape as a message template: "({}, {})" with one placeholder per extent (the values come at run time).
std::string shape_holes(size_t rank);

}  // namespace kiln::detail
