// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a pass is: a function from IR to IR that records what it decided.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::passes {

/// The section of the diagnostics report a note belongs to (passes/report.hpp prints them in this order).
enum class Topic : std::uint8_t { reductions, collapse, fusion, hoisting, allocations, other };

/// One decision of a pass: which pass, which section, and the text.
struct Note {
  std::string pass;
  Topic topic;
  std::string text;
};

/// The parfors that reach fusion and what became of them, for the report and the Graphviz dump.
/// Parfors are numbered #1, #2, ... in source order (a pre-order walk of the IR entering fuse_parfors), so a
/// nested parfor comes after the parfor holding it.
struct ParforGraph {
  struct Node {
    int id;
    int parent = 0;      ///< the id of the parfor whose body holds this one, or 0 at the top level
    std::string origin{};  ///< the source op or prange it came from, shortened when it holds many
    /// Each source op or prange it came from, as ir::ParforStmt::origin lists them (passes before fusion,
    /// e.g. fuse_stencils, may have merged several); the frontend places them in the source listing.
    std::vector<std::string> origins{};
    std::string space{};       ///< its index space as text, `(i in 0 .. n)`
    std::string reductions{};  ///< `s (add, identity -0.0), hist[*] (add)`, or empty
  };
  /// A parfor after fusion: the original parfors it contains, and where it is nested.
  struct Group {
    std::vector<int> ids;
    int parent = -1;  ///< the index in `after` of the group whose body holds this one, or -1 at the top level
    friend bool operator==(const Group&, const Group&) = default;
  };
  /// Array or scalar dataflow from the parfor that last wrote `var` to one that reads it.
  struct Edge {
    int from, to;
    std::string var;
    bool scalar;  ///< a reduction result rather than array elements
  };
  std::vector<Node> before;
  std::vector<Edge> edges;
  /// The parfors after fusion in a pre-order walk (a nested group comes after the group holding it).
  std::vector<Group> after;
  /// The group of `after` holding original parfor `id`, or -1 if none does (fusion removed it).
  int group_of(int id) const {
    for (std::size_t g = 0; g < after.size(); ++g)
      for (int x : after[g].ids)
        if (x == id) return static_cast<int>(g);
    return -1;
  }
};

/// Device targets: how many threads keep a GPU busy, the one number the device passes schedule by
/// (PassContext::device_threads): lower_array_ops splits a reduction along a leading axis with fewer outputs into
/// chunks, and spread_loops spreads a loop of a parfor with fewer iterations. About one device's resident threads
/// (an H100 holds 132 x 2048 = 270 336), but fixed rather than read from the device the code runs on: the chunk
/// counts follow it, and with them the bits of those sums, which are then the same on every GPU (docs/gpu.md).
/// KILN_CUDA_DEVICE_THREADS sets another (frontend/settings.cpp; part of the cache key).
inline constexpr std::int64_t kDefaultDeviceThreads = std::int64_t{1} << 18;

/// Shared by the passes of one pipeline run: decisions go to `notes` for kernel.diagnostics().
struct PassContext {
  std::vector<Note> notes;         ///< every note, in order, with its pass and section
  ParforGraph parfors;             ///< filled by fuse_parfors
  std::string pass;                ///< the running pass (set by the pipeline)
  Topic topic = Topic::other;      ///< the section of notes recorded without one (set by the pipeline)
  /// lower_stencils reads every neighbour directly, beyond the arrays' extents, with no border rule: the
  /// arrays are a rank's blocks inside ghost layers the distributed layer fills (kiln::Options::halo_reads).
  bool halo_reads = false;
  /// The target runs parfors as GPU threads (Target::cuda): loops are scheduled for thousands of threads
  /// reading coalesced lines, not for a few cores' caches and vector lanes (lower_array_ops).
  bool device = false;
  /// Device targets: the threads that keep the device busy (kDefaultDeviceThreads, PipelineOptions::device_threads).
  std::int64_t device_threads = kDefaultDeviceThreads;

  void note(std::string s) { note(topic, std::move(s)); }
  void note(Topic t, std::string s) { notes.push_back(Note{pass, t, std::move(s)}); }
};

using PassFn = ir::Function (*)(const ir::Function&, PassContext&);

struct Pass {
  const char* name;
  PassFn run;
  Topic topic = Topic::other;  ///< where its notes without a section of their own go
  bool boundscheck_only = false;  ///< runs only in bounds-checked mode (PipelineOptions::boundscheck)
  bool host_only = false;         ///< runs only for targets whose loops run on the host (not PipelineOptions::target cuda)
  bool device_only = false;       ///< runs only for device targets (PipelineOptions::target cuda)
};

}  // namespace kiln::passes
