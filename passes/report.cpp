#include "passes/report.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "passes/loop_analysis.hpp"

namespace kiln::passes {
namespace {

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

std::string group_label(const std::vector<int>& ids) {
  std::string s;
  for (int id : ids) s += (s.empty() ? "#" : "+#") + std::to_string(id);
  return s;
}

/// The origins of a group's parfors, each once.
std::string group_origin(const std::vector<int>& ids, const ParforGraph& g) {
  std::vector<std::string> seen;
  std::string s;
  for (int id : ids) {
    const std::string& o = g.before.at(static_cast<size_t>(id - 1)).origin;
    bool dup = false;
    for (const auto& x : seen) dup |= x == o;
    if (dup) continue;
    seen.push_back(o);
    s += (s.empty() ? "" : loops::kOriginSeparator) + o;
  }
  return s;
}

void section(std::string& out, const PipelineReport& r, Topic t) {
  std::string items;
  for (const auto& n : r.notes)
    if (n.topic == t) items += "  " + n.text + "\n";
  if (!items.empty()) out += std::string(title(t)) + ":\n" + items;
}

/// Notes without a topic, one section per pass, titled by the pass (a "<pass>: " the text starts with is
/// dropped as redundant).
void other_sections(std::string& out, const PipelineReport& r) {
  std::vector<std::string> passes;
  for (const auto& n : r.notes)
    if (n.topic == Topic::other && std::find(passes.begin(), passes.end(), n.pass) == passes.end()) passes.push_back(n.pass);
  for (const auto& p : passes) {
    out += (p.empty() ? std::string("other") : p) + ":\n";
    const std::string prefix = p + ": ";
    for (const auto& n : r.notes)
      if (n.topic == Topic::other && n.pass == p)
        out += "  " + (n.text.rfind(prefix, 0) == 0 ? n.text.substr(prefix.size()) : n.text) + "\n";
  }
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

}  // namespace

std::string report_text(const PipelineReport& r) {
  std::string out = "passes:";
  for (const auto& t : r.timings) out += " " + t.pass + " " + std::to_string(static_cast<long>(t.us)) + " us;";
  out += "\n";
  section(out, r, Topic::reductions);
  section(out, r, Topic::collapse);
  const ParforGraph& g = r.parfors;
  if (!g.before.empty()) {
    out += "parfors before fusion: " + std::to_string(g.before.size()) + "\n";
    for (const auto& n : g.before)
      out += "  " + group_label({n.id}) + " " + n.origin + "  over " + n.space +
             (n.reductions.empty() ? "" : "  reduces " + n.reductions) + "\n";
  }
  section(out, r, Topic::fusion);
  if (!g.before.empty()) {
    out += "parfors after fusion: " + std::to_string(g.after.size()) + "\n";
    for (const auto& ids : g.after) out += "  " + group_label(ids) + " " + group_origin(ids, g) + "\n";
  }
  section(out, r, Topic::hoisting);
  section(out, r, Topic::allocations);
  other_sections(out, r);
  return out;
}

std::string parfor_dot(const std::string& kernel, const ParforGraph& g) {
  std::string out = "digraph " + dot_quoted(kernel) + " {\n";
  out += "  label=" + dot_quoted("kernel " + kernel + ": parfors after fusion (clusters) and their dataflow") + ";\n";
  out += "  node [shape=box, fontname=\"monospace\"];\n";
  auto node = [&](int id, const std::string& indent) {
    const auto& n = g.before.at(static_cast<size_t>(id - 1));
    std::string text = group_label({id});  // (not "#" + to_string: GCC 12 warns falsely, -Wrestrict)
    text += " " + n.origin + "\n" + n.space;
    out += indent + "p" + std::to_string(id) + " [label=" + dot_quoted(text) + "];\n";
  };
  std::vector<bool> placed(g.before.size() + 1, false);
  int cluster = 0;
  for (const auto& ids : g.after) {
    if (ids.size() < 2) continue;
    out += "  subgraph cluster_" + std::to_string(cluster++) + " {\n";
    out += "    label=" + dot_quoted("fused " + group_label(ids)) + ";\n    style=rounded;\n";
    for (int id : ids) {
      node(id, "    ");
      placed[static_cast<size_t>(id)] = true;
    }
    out += "  }\n";
  }
  for (const auto& n : g.before)
    if (!placed[static_cast<size_t>(n.id)]) node(n.id, "  ");
  for (const auto& e : g.edges)
    out += "  p" + std::to_string(e.from) + " -> p" + std::to_string(e.to) + " [label=" + dot_quoted(e.var) +
           (e.scalar ? ", style=dashed" : "") + "];\n";
  return out + "}\n";
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
  if (!os) std::fprintf(stderr, "kiln: KILN_DUMP_DOT: cannot write %s\n", path.string().c_str());
}

}  // namespace kiln::passes
