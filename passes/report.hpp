// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the passes did, for people: the sectioned diagnostics text of kernel.diagnostics() and
// KILN_DIAGNOSTICS, and the Graphviz file of KILN_DUMP_DOT.
#pragma once

#include <string>
#include <vector>

#include "passes/pass.hpp"

namespace kiln::passes {

struct PassTiming {
  std::string pass;
  double us = 0;
};

/// What one run of the pipeline did (passes/pipeline.hpp fills it).
struct PipelineReport {
  std::vector<PassTiming> timings;
  std::vector<Note> notes;  ///< every pass's decisions, in order, with their pass and report section
  ParforGraph parfors;      ///< the parfors entering fusion and the fusion groups (fuse_parfors)
};

/// The pass timings line ("passes: <pass> <us> us; ...") followed by one section per topic with notes
/// (reductions found, nested parfors, parfors before fusion, fusion attempts, parfors after fusion,
/// hoisted code, allocations, then the other notes by pass), each a title line and indented items. In the
/// two parfor lists a nested parfor is indented two more spaces than the parfor holding it, right under it.
std::string report_text(const PipelineReport& report);

/// The parfor graph in Graphviz syntax: one node per parfor entering fusion (its number, origin and
/// space), an edge per array (solid) or reduction result (dashed) flowing between them, and one cluster
/// per parfor after fusion that holds several: a fusion group of two or more, or a parfor with parfors
/// nested in its body, whose clusters or nodes are drawn inside its own.
std::string parfor_dot(const std::string& kernel, const ParforGraph& graph);

/// Writes parfor_dot to `dir`/<kernel>.dot (creating dir); on failure prints a warning to stderr.
void write_parfor_dot(const std::string& dir, const std::string& kernel, const ParforGraph& graph);

}  // namespace kiln::passes
