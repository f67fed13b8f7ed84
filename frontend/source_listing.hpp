// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The annotated source listing of the diagnostics report (as Numba's parallel_diagnostics level 4 gives):
// each line of the kernel, read while it is traced, beside the parfors it became and what fusion made of
// them. The text is recorded with the kernel's compiled variant, so a report asked for after the file
// changed still shows the source the kernel was traced from.
#pragma once

#include <string>
#include <vector>

#include "frontend/trace_context.hpp"
#include "passes/pass.hpp"

namespace kiln::detail {

/// Longer kernels are listed up to this many lines; the parfors of later lines are listed after them.
inline constexpr unsigned kMaxListedLines = 200;

/// A kernel's source lines as they were when it was traced.
struct SourceListing {
  std::string file;        ///< the kernel's file as source positions name it ("kernels.cpp"); empty: unknown
  unsigned first = 0;      ///< the line number of lines[0]
  std::vector<std::string> lines;
  bool cut = false;        ///< the kernel runs on past kMaxListedLines
  std::string unavailable;  ///< why there are no lines, when there are none
  /// The trace's source positions ("kernels.cpp:12", ir::Function::locations): the positions that the
  /// parfors' origins ("sum at kernels.cpp:12") name.
  std::vector<std::string> locations;
};

/// Records, at the end of the trace in `ctx`, the lines of the kernel made by the kiln::jit call at `kernel`:
/// from the earlier of that line and the first traced value of its file, to the last line of that file that
/// a traced value or a source position of the trace refers to (at most kMaxListedLines).
SourceListing record_source_listing(const TraceContext& ctx, const Where& kernel);

/// The "source listing" section of the report: each line, numbered, with `// #k <op> -> <after fusion>` beside
/// the lines whose ops became parfors (`-> fused into #2+#3`, `-> own loop`, `-> nested in #1`), then the
/// parfors of no listed line; or one line saying why the source is not available.
std::string source_listing_text(const SourceListing& listing, const passes::ParforGraph& parfors);

}  // namespace kiln::detail
