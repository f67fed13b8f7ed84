// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "passes/loop_analysis.hpp"

namespace kiln::passes {
namespace {

using Out = std::back_insert_iterator<std::string>;

const char* title(Topic t) {
  switch (t) {
    case Topic::reductions: return "reductions found";
    case Topic::collapse: return "nested parfors";
    case Topic::fusion: return "fusion";
    case Topic::hoisting: return "hoisted";
    case Topic::allocations: return "allocations";
    case Topic::other: break;  // titled by pass (other_sections)
  }
  return "other";
}

/// "#2+#3"
std::string group_label(const std::vector<int>& ids) { return fmt::format("#{}", fmt::join(ids, "+#")); }

/// The origins of a group's parfors, each once.
std::string group_origin(const std::vector<int>& ids, const ParforGraph& g) {
  std::vector<std::string> seen;
  for (int id : ids) {
    const std::string& o = g.before.at(static_cast<size_t>(id - 1)).origin;
    if (std::find(seen.begin(), seen.end(), o) == seen.end()) seen.push_back(o);
  }
  return fmt::format("{}", fmt::join(seen, loops::kOriginSeparator));
}

/// How deep each item of a pre-order list is nested, given each item's parent (an index into the list, or
/// -1 at the top level).
template <class ParentOf>
std::vector<int> depths(std::size_t n, ParentOf parent_of) {
  std::vector<int> depth(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const int p = parent_of(k);
    if (p >= 0 && static_cast<std::size_t>(p) < k) depth[k] = depth[static_cast<std::size_t>(p)] + 1;
  }
  return depth;
}

/// Two spaces per level, under the section's own two.
std::string indent(int depth) { return std::string(2 + 2 * static_cast<std::size_t>(depth), ' '); }

void section(Out out, const PipelineReport& r, Topic t) {
  bool titled = false;
  for (const auto& n : r.notes) {
    if (n.topic != t) continue;
    if (!titled) fmt::format_to(out, "{}:\n", title(t));
    titled = true;
    fmt::format_to(out, "  {}\n", n.text);
  }
}

/// Notes without a topic, one section per pass, titled by the pass (a "<pass>: " the text starts with is
/// dropped as redundant).
void other_sections(Out out, const PipelineReport& r) {
  std::vector<std::string> passes;
  for (const auto& n : r.notes)
    if (n.topic == Topic::other && std::find(passes.begin(), passes.end(), n.pass) == passes.end()) passes.push_back(n.pass);
  for (const auto& p : passes) {
    fmt::format_to(out, "{}:\n", p.empty() ? std::string("other") : p);
    const std::string prefix = p + ": ";
    for (const auto& n : r.notes)
      if (n.topic == Topic::other && n.pass == p)
        fmt::format_to(out, "  {}\n", n.text.starts_with(prefix) ? std::string_view(n.text).substr(prefix.size()) : n.text);
  }
}

/// The parfors entering fusion, each nested parfor indented under the parfor holding it.
void parfors_before(Out out, const ParforGraph& g) {
  fmt::format_to(out, "parfors before fusion: {}\n", g.before.size());
  const std::vector<int> depth = depths(g.before.size(), [&](std::size_t k) { return g.before[k].parent - 1; });
  for (std::size_t k = 0; k < g.before.size(); ++k) {
    const auto& n = g.before[k];
    fmt::format_to(out, "{}#{} {}  over {}", indent(depth[k]), n.id, n.origin, n.space);
    if (!n.reductions.empty()) fmt::format_to(out, "  reduces {}", n.reductions);
    fmt::format_to(out, "\n");
  }
}

/// The parfors after fusion, nested ones indented under the parfor holding them.
void parfors_after(Out out, const ParforGraph& g) {
  fmt::format_to(out, "parfors after fusion: {}\n", g.after.size());
  const std::vector<int> depth = depths(g.after.size(), [&](std::size_t k) { return g.after[k].parent; });
  for (std::size_t k = 0; k < g.after.size(); ++k)
    fmt::format_to(out, "{}{} {}\n", indent(depth[k]), group_label(g.after[k].ids), group_origin(g.after[k].ids, g));
}

std::string dot_quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '\n') {
      q += "\\n";  // a line break in a label
      continue;
    }
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

/// The Graphviz body of the parfors after fusion: a cluster per group that holds more than one parfor, either
/// fused ones or nested ones; a nested group is drawn inside the cluster of the group holding it.
class DotGroups {
 public:
  DotGroups(const ParforGraph& g, Out out) : g_(g), out_(out), children_(g.after.size()) {
    for (std::size_t k = 0; k < g.after.size(); ++k)
      if (const int p = g.after[k].parent; p >= 0 && static_cast<std::size_t>(p) < k) children_[static_cast<size_t>(p)].push_back(k);
  }

  void write() {
    std::vector<bool> placed(g_.before.size() + 1, false);
    for (std::size_t k = 0; k < g_.after.size(); ++k)
      if (g_.after[k].parent < 0 || static_cast<std::size_t>(g_.after[k].parent) >= k) group(k, 1, placed);
    for (const auto& n : g_.before)  // parfors no group holds (fusion removed them)
      if (!placed[static_cast<size_t>(n.id)]) node(n.id, 1);
  }

 private:
  const ParforGraph& g_;
  Out out_;
  std::vector<std::vector<std::size_t>> children_;  ///< per group, the groups nested in it
  int clusters_ = 0;

  void node(int id, int depth) {
    const auto& n = g_.before.at(static_cast<size_t>(id - 1));
    fmt::format_to(out_, "{:{}}p{} [label={}];\n", "", 2 * depth, id, dot_quoted(fmt::format("#{} {}\n{}", id, n.origin, n.space)));
  }

  void group(std::size_t k, int depth, std::vector<bool>& placed) {
    const auto& ids = g_.after[k].ids;
    const bool cluster = ids.size() > 1 || !children_[k].empty();
    if (cluster) {
      const std::string label = ids.size() > 1 ? "fused " + group_label(ids) : group_label(ids);
      fmt::format_to(out_, "{:{}}subgraph cluster_{} {{\n", "", 2 * depth, clusters_++);
      fmt::format_to(out_, "{:{}}label={};\n{:{}}style=rounded;\n", "", 2 * depth + 2,
                     dot_quoted(children_[k].empty() ? label : label + " and the parfors nested in it"), "", 2 * depth + 2);
    }
    const int inner = cluster ? depth + 1 : depth;
    for (int id : ids) {
      node(id, inner);
      placed[static_cast<size_t>(id)] = true;
    }
    for (std::size_t c : children_[k]) group(c, inner, placed);
    if (cluster) fmt::format_to(out_, "{:{}}}}\n", "", 2 * depth);
  }
};

}  // namespace

std::string report_text(const PipelineReport& r) {
  std::string text;
  const Out out(text);
  fmt::format_to(out, "passes:");
  for (const auto& t : r.timings) fmt::format_to(out, " {} {} us;", t.pass, static_cast<long>(t.us));
  fmt::format_to(out, "\n");
  section(out, r, Topic::reductions);
  section(out, r, Topic::collapse);
  if (!r.parfors.before.empty()) parfors_before(out, r.parfors);
  section(out, r, Topic::fusion);
  if (!r.parfors.before.empty()) parfors_after(out, r.parfors);
  section(out, r, Topic::hoisting);
  section(out, r, Topic::allocations);
  other_sections(out, r);
  return text;
}

std::string parfor_dot(const std::string& kernel, const ParforGraph& g) {
  std::string text;
  const Out out(text);
  fmt::format_to(out, "digraph {} {{\n", dot_quoted(kernel));
  fmt::format_to(out, "  label={};\n",
                 dot_quoted(fmt::format("kernel {}: parfors after fusion (clusters, nested parfors inside the parfor "
                                        "holding them) and their dataflow",
                                        kernel)));
  fmt::format_to(out, "  node [shape=box, fontname=\"monospace\"];\n");
  DotGroups(g, out).write();
  for (const auto& e : g.edges)
    fmt::format_to(out, "  p{} -> p{} [label={}{}];\n", e.from, e.to, dot_quoted(e.var), e.scalar ? ", style=dashed" : "");
  fmt::format_to(out, "}}\n");
  return text;
}

void write_parfor_dot(const std::string& dir, const std::string& kernel, const ParforGraph& graph) {
  std::string file;
  for (char c : kernel) file += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ? c : '_';
  if (file.empty() || file[0] == '.') file = "kernel" + file;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path path = std::filesystem::path(dir) / (file + ".dot");
  std::ofstream os(path, std::ios::binary);
  os << parfor_dot(kernel, graph);
  os.close();
  if (!os) fmt::print(stderr, "kiln: KILN_DUMP_DOT: cannot write {}\n", path.string());
}

}  // namespace kiln::passes
