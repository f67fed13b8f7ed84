// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/source_listing.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <map>

#include "frontend/source_names.hpp"

namespace kiln::detail {
namespace {

/// The file name positions use for `file` (Where::str: the base name).
std::string base_name(const char* file) {
  const std::string f = file ? file : "";
  const std::size_t slash = f.find_last_of('/');
  return slash == std::string::npos ? f : f.substr(slash + 1);
}

/// A source position of the trace, "kernels.cpp:12" (made by Where::str), as its file and line.
struct Position {
  std::string file;
  unsigned line = 0;
};

Position position_of(const std::string& location) {
  const std::size_t colon = location.rfind(':');
  if (colon == std::string::npos) return {};
  unsigned line = 0;
  const char* end = location.data() + location.size();
  if (std::from_chars(location.data() + colon + 1, end, line).ptr != end) return {};
  return {location.substr(0, colon), line};
}

/// One source op of a parfor's origin: what it was and where, if the origin names one of the trace's
/// positions ("sum at kernels.cpp:12" -> "sum", kernels.cpp line 12).
struct OriginPlace {
  std::string what;
  Position where;
};

OriginPlace place_of(const std::string& origin, const std::vector<std::string>& locations) {
  const std::string* named = nullptr;
  for (const std::string& l : locations) {
    const std::string suffix = " at " + l;
    if (origin.ends_with(suffix) && (!named || l.size() > named->size())) named = &l;
  }
  if (!named) return {origin, {}};
  return {origin.substr(0, origin.size() - named->size() - 4), position_of(*named)};
}

std::string label(const std::vector<int>& ids) { return fmt::format("#{}", fmt::join(ids, "+#")); }

/// What became of original parfor `id` after fusion.
std::string fate(const passes::ParforGraph& g, int id) {
  const int k = g.group_of(id);
  if (k < 0) return "removed by fusion";
  const passes::ParforGraph::Group& group = g.after[static_cast<std::size_t>(k)];
  const std::string nested =
      group.parent >= 0 ? "nested in " + label(g.after[static_cast<std::size_t>(group.parent)].ids) : std::string();
  if (group.ids.size() > 1) return "fused into " + label(group.ids) + (nested.empty() ? "" : ", " + nested);
  return nested.empty() ? "own loop" : nested;
}

}  // namespace

SourceListing record_source_listing(const TraceContext& ctx, const Where& kernel) {
  SourceListing out;
  out.locations = ctx.locations();
  out.file = base_name(kernel.file);
  const std::vector<std::string>* lines = source_lines(kernel.file, ctx.code, &out.unavailable);
  if (!lines) {
    if (out.unavailable.empty()) out.unavailable = fmt::format("{} cannot be read", kernel.file ? kernel.file : "the kernel's file");
    return out;
  }
  unsigned first = kernel.line, last = kernel.line;
  if (const auto [lo, hi] = ctx.noted_lines(kernel.file); lo != 0) {
    first = std::min(first, lo);
    last = std::max(last, hi);
  }
  for (const std::string& l : out.locations)
    if (const Position p = position_of(l); p.line != 0 && p.file == out.file) {
      first = std::min(first, p.line);
      last = std::max(last, p.line);
    }
  if (first == 0) first = 1;
  last = std::min<unsigned>(last, static_cast<unsigned>(lines->size()));
  if (last >= first + kMaxListedLines) {
    last = first + kMaxListedLines - 1;
    out.cut = true;
  }
  out.first = first;
  for (unsigned l = first; l <= last; ++l) out.lines.push_back((*lines)[l - 1]);
  if (out.lines.empty()) out.unavailable = fmt::format("{} has no line {}", kernel.file, first);
  return out;
}

std::string source_listing_text(const SourceListing& s, const passes::ParforGraph& g) {
  std::string text;
  auto out = std::back_inserter(text);
  if (s.lines.empty()) {
    fmt::format_to(out, "source listing: not available: {}\n", s.unavailable);
    return text;
  }
  const unsigned last = s.first + static_cast<unsigned>(s.lines.size()) - 1;
  // Per listed line, its parfors ("#3 sum -> fused into #2+#3"); the others after the listing.
  std::map<unsigned, std::vector<std::string>> beside;
  std::vector<std::string> elsewhere;
  for (const auto& n : g.before) {
    bool listed = false;
    for (const std::string& origin : n.origins) {
      const OriginPlace p = place_of(origin, s.locations);
      if (p.where.file != s.file || p.where.line < s.first || p.where.line > last) continue;
      std::vector<std::string>& notes = beside[p.where.line];
      const std::string note = fmt::format("#{} {} -> {}", n.id, p.what, fate(g, n.id));
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
      listed = true;
    }
    if (!listed) elsewhere.push_back(fmt::format("#{} {} -> {}", n.id, n.origins.empty() ? n.origin : fmt::format("{}", fmt::join(n.origins, " | ")), fate(g, n.id)));
  }
  // The notes start in one column, after the listed code (up to 80 columns of it).
  std::size_t width = 0;
  for (const std::string& l : s.lines) width = std::max(width, l.size());
  width = std::min<std::size_t>(width, 80);
  const int digits = static_cast<int>(fmt::formatted_size("{}", last));
  fmt::format_to(out, "source listing: {} lines {}-{}{}, as traced; beside a line, the parfors its ops became and "
                 "where each is after fusion\n", s.file, s.first, last, s.cut ? fmt::format(" (cut at {} lines)", kMaxListedLines) : "");
  for (std::size_t k = 0; k < s.lines.size(); ++k) {
    const unsigned line = s.first + static_cast<unsigned>(k);
    const std::string& code = s.lines[k];
    const auto it = beside.find(line);
    if (it == beside.end()) fmt::format_to(out, "  {:>{}} |{}{}\n", line, digits, code.empty() ? "" : " ", code);
    else fmt::format_to(out, "  {:>{}} | {:<{}}  // {}\n", line, digits, code, width, fmt::join(it->second, "; "));
  }
  for (const std::string& e : elsewhere) fmt::format_to(out, "  not on these lines: {}\n", e);
  return text;
}

}  // namespace kiln::detail
