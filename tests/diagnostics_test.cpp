// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The diagnostics report as people read it: nested parfors indented under the parfor holding them (before and
// after fusion) and drawn inside it in the Graphviz file, and the annotated source listing (each line of the
// kernel beside the parfors it became and what fusion made of them), checked against this file's own line
// numbers; also the listing's one-line fallback when the kernel's source cannot be read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "error_test_util.hpp"
#include "frontend/source_listing.hpp"
#include "kiln/kiln.hpp"
#include "passes/report.hpp"

namespace {

using namespace kiln;

Options interp() {
  Options o;
  o.target = Target::interpreter;
  return o;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// An item of a report section: how far it is indented and its text.
struct Item {
  std::size_t indent;
  std::string text;
  friend bool operator==(const Item&, const Item&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Item& i) { return os << i.indent << ":" << i.text; }
};

/// The items of the report section whose title line starts with `title` (the indented lines after it).
std::vector<Item> section(const std::string& report, const std::string& title) {
  std::vector<Item> out;
  bool in = false;
  for (const std::string& l : lines_of(report)) {
    if (!in) {
      in = l.starts_with(title);
      continue;
    }
    if (l.empty() || l[0] != ' ') break;
    const std::size_t indent = l.find_first_not_of(' ');
    out.push_back({indent, l.substr(indent)});
  }
  return out;
}

/// The listing's line `line` ("  123 | code  // notes"): its code and its notes ("" when none).
struct ListedLine {
  std::string code, notes;
  bool found = false;
};

ListedLine listed(const std::string& report, int line) {
  bool in = false;
  for (const std::string& l : lines_of(report)) {
    if (!in) {
      in = l.starts_with("source listing:");
      continue;
    }
    if (l.empty() || l[0] != ' ') break;
    const std::size_t bar = l.find(" | ");
    if (bar == std::string::npos || std::stoi(l.substr(0, bar)) != line) continue;
    std::string rest = l.substr(bar + 3);
    const std::size_t notes = rest.find("  // #");
    if (notes == std::string::npos) return {rest, "", true};
    std::string code = rest.substr(0, notes);
    code.erase(code.find_last_not_of(' ') + 1);
    return {code, rest.substr(notes + 5), true};
  }
  return {};
}

std::string this_file() {
  const std::string f = __FILE__;
  return f.substr(f.find_last_of('/') + 1);
}

/// Where each node of a Graphviz file is: the clusters around it, outermost first ("p3" -> {0, 1}), and each
/// cluster's label. Fails the test on a brace that closes nothing.
struct DotLayout {
  std::map<std::string, std::vector<int>> clusters_of;
  std::map<int, std::string> label;
};

DotLayout layout_of(const std::string& dot) {
  DotLayout out;
  std::vector<int> open;
  bool in_graph = false;
  for (const std::string& raw : lines_of(dot)) {
    const std::string l = raw.substr(raw.find_first_not_of(' '));
    if (l.starts_with("digraph ")) {
      in_graph = true;
    } else if (l.starts_with("subgraph cluster_")) {
      open.push_back(std::stoi(l.substr(17)));
    } else if (l == "}") {
      if (!open.empty()) open.pop_back();
      else if (in_graph) in_graph = false;
      else ADD_FAILURE() << "a brace closes nothing in\n" << dot;
    } else if (l.starts_with("label=") && !open.empty()) {
      out.label[open.back()] = l.substr(7, l.size() - 9);  // label="...";
    } else if (l[0] == 'p' && l.find(" [label=") != std::string::npos && l.find(" -> ") == std::string::npos) {
      out.clusters_of[l.substr(0, l.find(' '))] = open;
    }
  }
  EXPECT_TRUE(open.empty() && !in_graph) << "unbalanced braces in\n" << dot;
  return out;
}

/// The kernel of the NestedParfors tests: a row loop whose body holds a row reduction, next to an axis
/// reduction lowered to nested parfors; the outer loops fuse, and so do the loops nested in them. Its axis
/// sum is on line kNestedFirstLine, the row loop on the next, the loop nested in it two lines further.
constexpr int kNestedFirstLine = __LINE__ + 3;
auto nested_kernel(const char* name) {
  return jit(name, [](Array<double, 2> a, Array<double> sums, Array<double> row_sums) {
    sums(kiln::all) = kiln::sum(a * 2.0, 1);
    prange(a.shape(0), [&](Int i) {
      Double s = 0.0;
      prange(a.shape(1), [&](Int j) { s += a(i, j); });
      row_sums[i] = s;
    });
  }, interp());
}

/// Runs nested_kernel and checks its results.
void run_nested(auto& k) {
  NDArray<double> a({3, 4});
  for (int x = 0; x < 12; ++x) a[x] = x;
  std::vector<double> sums(3), row_sums(3);
  k(a, sums, row_sums);
  EXPECT_EQ(sums, (std::vector<double>{12, 44, 76}));
  EXPECT_EQ(row_sums, (std::vector<double>{6, 22, 38}));
}

TEST(NestedParfors, IndentedUnderTheParforHoldingThemBeforeAndAfterFusion) {
  auto k = nested_kernel("nested_rows");
  run_nested(k);
  const std::string d = k.diagnostics();
  const std::string at = " at " + this_file() + ":";
  const std::string axis = "sum(a * 2.0, 1)" + at + std::to_string(kNestedFirstLine);
  const std::string rows = "prange" + at + std::to_string(kNestedFirstLine + 1);
  const std::string in_rows = "prange" + at + std::to_string(kNestedFirstLine + 3);
  const std::vector<Item> before = section(d, "parfors before fusion: 6");
  ASSERT_EQ(before.size(), 6u) << d;
  const std::vector<std::pair<std::size_t, std::string>> want_before = {
      {2, "#1 a * 2.0  over"}, {2, "#2 " + axis + "  over (i in"}, {4, "#3 " + axis + "  over (j in"},
      {2, "#4 sums[:] = "},    {2, "#5 " + rows + "  over (i in"}, {4, "#6 " + in_rows + "  over (j in"}};
  for (std::size_t k = 0; k < before.size(); ++k) {
    EXPECT_EQ(before[k].indent, want_before[k].first) << before[k] << "\n" << d;
    EXPECT_TRUE(before[k].text.starts_with(want_before[k].second)) << before[k] << "\nwant " << want_before[k].second;
  }
  EXPECT_EQ(section(d, "parfors after fusion: 3"),
            (std::vector<Item>{{2, "#1 a * 2.0"},
                               {2, "#2+#4+#5 " + axis + " | sums[:] = sum(a * 2.0, 1) | " + rows},
                               {4, "#3+#6 " + axis + " | " + in_rows}}))
      << d;
}

TEST(NestedParfors, DrawnInsideTheParforHoldingThemInTheDotFile) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kiln-diag-dot-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto k = nested_kernel("nested_dot");
  ::setenv("KILN_DUMP_DOT", dir.c_str(), 1);
  run_nested(k);
  ::unsetenv("KILN_DUMP_DOT");
  std::ifstream in(dir / "nested_dot.dot");
  ASSERT_TRUE(in.good()) << "no " << (dir / "nested_dot.dot");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string dot = ss.str();
  const DotLayout g = layout_of(dot);
  ASSERT_EQ(g.clusters_of.size(), 6u) << dot;
  // #1 stands alone; #2+#4+#5 is a cluster holding the cluster of #3+#6, the parfors nested in it.
  EXPECT_TRUE(g.clusters_of.at("p1").empty()) << dot;
  const std::vector<int> outer = g.clusters_of.at("p2");
  ASSERT_EQ(outer.size(), 1u) << dot;
  EXPECT_EQ(g.clusters_of.at("p4"), outer);
  EXPECT_EQ(g.clusters_of.at("p5"), outer);
  const std::vector<int> inner = g.clusters_of.at("p3");
  ASSERT_EQ(inner.size(), 2u) << dot;
  EXPECT_EQ(inner[0], outer[0]);
  EXPECT_EQ(g.clusters_of.at("p6"), inner);
  EXPECT_EQ(g.label.at(outer[0]), "fused #2+#4+#5 and the parfors nested in it");
  EXPECT_EQ(g.label.at(inner[1]), "fused #3+#6");
  // Graphviz itself accepts it, where it is installed.
  if (std::system("command -v dot > /dev/null 2>&1") == 0) {
    const std::string cmd = "dot -Tsvg '" + (dir / "nested_dot.dot").string() + "' -o '" + (dir / "nested_dot.svg").string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << dot;
  }
  std::filesystem::remove_all(dir);
}

TEST(NestedParfors, DotOfAGraphWithFusedAndNestedParfors) {
  passes::ParforGraph g;
  g.before = {{.id = 1, .parent = 0, .origin = "prange at k.cpp:3", .space = "(i in 0 .. n)"},
              {.id = 2, .parent = 1, .origin = "prange at k.cpp:5", .space = "(j in 0 .. m)"},
              {.id = 3, .parent = 0, .origin = "prange at k.cpp:8", .space = "(i in 0 .. n)"},
              {.id = 4, .parent = 3, .origin = "sum at k.cpp:9", .space = "(j in 0 .. m)"},
              {.id = 5, .parent = 0, .origin = "copy", .space = "(i in 0 .. n)"},
              {.id = 6, .parent = 5, .origin = "max at k.cpp:11", .space = "(j in 0 .. m)"}};
  g.after = {{{1, 3}, -1}, {{2, 4}, 0}, {{5}, -1}, {{6}, 2}};
  g.edges = {{1, 3, "t", false}, {2, 4, "s", true}};
  EXPECT_EQ(passes::parfor_dot("k", g),
            "digraph \"k\" {\n"
            "  label=\"kernel k: parfors after fusion (clusters, nested parfors inside the parfor holding them) and their "
            "dataflow\";\n"
            "  node [shape=box, fontname=\"monospace\"];\n"
            "  subgraph cluster_0 {\n"
            "    label=\"fused #1+#3 and the parfors nested in it\";\n"
            "    style=rounded;\n"
            "    p1 [label=\"#1 prange at k.cpp:3\\n(i in 0 .. n)\"];\n"
            "    p3 [label=\"#3 prange at k.cpp:8\\n(i in 0 .. n)\"];\n"
            "    subgraph cluster_1 {\n"
            "      label=\"fused #2+#4\";\n"
            "      style=rounded;\n"
            "      p2 [label=\"#2 prange at k.cpp:5\\n(j in 0 .. m)\"];\n"
            "      p4 [label=\"#4 sum at k.cpp:9\\n(j in 0 .. m)\"];\n"
            "    }\n"
            "  }\n"
            "  subgraph cluster_2 {\n"
            "    label=\"#5 and the parfors nested in it\";\n"
            "    style=rounded;\n"
            "    p5 [label=\"#5 copy\\n(i in 0 .. n)\"];\n"
            "    p6 [label=\"#6 max at k.cpp:11\\n(j in 0 .. m)\"];\n"
            "  }\n"
            "  p1 -> p3 [label=\"t\"];\n"
            "  p2 -> p4 [label=\"s\", style=dashed];\n"
            "}\n");
  passes::PipelineReport r;
  r.parfors = g;
  const std::string text = passes::report_text(r);
  EXPECT_CONTAINS(text,
                  "parfors before fusion: 6\n"
                  "  #1 prange at k.cpp:3  over (i in 0 .. n)\n"
                  "    #2 prange at k.cpp:5  over (j in 0 .. m)\n"
                  "  #3 prange at k.cpp:8  over (i in 0 .. n)\n"
                  "    #4 sum at k.cpp:9  over (j in 0 .. m)\n"
                  "  #5 copy  over (i in 0 .. n)\n"
                  "    #6 max at k.cpp:11  over (j in 0 .. m)\n"
                  "parfors after fusion: 4\n"
                  "  #1+#3 prange at k.cpp:3 | prange at k.cpp:8\n"
                  "    #2+#4 prange at k.cpp:5 | sum at k.cpp:9\n"
                  "  #5 copy\n"
                  "    #6 max at k.cpp:11\n");
}

TEST(SourceListing, EachLineBesideTheParforsItBecameAndWhereFusionPutThem) {
  const int top = __LINE__;
  auto k = jit("listed", [](Array<double, 2> a, Array<double> out, Array<double> scaled) {
    prange(out.shape(0), [&](Int i) {
      Double s = 0.0;
      prange(a.shape(1), [&](Int j) { s += a(i, j); });
      out[i] = s;
    });
    Double m = kiln::max(out);
    prange(out.shape(0), [&](Int i) { scaled[i] = out[i] / m; });
  }, interp());
  NDArray<double> a({2, 3});
  for (int x = 0; x < 6; ++x) a[x] = x;
  std::vector<double> out(2), scaled(2);
  k(a, out, scaled);
  EXPECT_EQ(scaled, (std::vector<double>{0.25, 1.0}));
  const std::string d = k.diagnostics();
  const std::string head = "source listing: " + this_file() + " lines " + std::to_string(top + 1) + "-" + std::to_string(top + 8) + ", as traced";
  EXPECT_CONTAINS(d, head);
  // Every line of the kernel, with the text it has in this file.
  const std::vector<std::string> source = {
      "  auto k = jit(\"listed\", [](Array<double, 2> a, Array<double> out, Array<double> scaled) {",
      "    prange(out.shape(0), [&](Int i) {",
      "      Double s = 0.0;",
      "      prange(a.shape(1), [&](Int j) { s += a(i, j); });",
      "      out[i] = s;",
      "    });",
      "    Double m = kiln::max(out);",
      "    prange(out.shape(0), [&](Int i) { scaled[i] = out[i] / m; });"};
  for (int k = 0; k < 8; ++k) {
    const ListedLine l = listed(d, top + 1 + k);
    ASSERT_TRUE(l.found) << "no line " << top + 1 + k << " in\n" << d;
    EXPECT_EQ(l.code, source[static_cast<std::size_t>(k)]);
  }
  EXPECT_FALSE(listed(d, top).found) << d;
  EXPECT_FALSE(listed(d, top + 9).found) << d;
  // The row loop and the max fuse (the max reads out[i] where the row loop wrote it); the row sum stays
  // nested; the scaling uses the finished max, so it stays a loop of its own.
  EXPECT_EQ(listed(d, top + 1).notes, "");
  EXPECT_EQ(listed(d, top + 2).notes, "#1 prange -> fused into #1+#3");
  EXPECT_EQ(listed(d, top + 3).notes, "");
  EXPECT_EQ(listed(d, top + 4).notes, "#2 prange -> nested in #1+#3");
  EXPECT_EQ(listed(d, top + 7).notes, "#3 max(out) -> fused into #1+#3");
  EXPECT_EQ(listed(d, top + 8).notes, "#4 prange -> own loop");
  EXPECT_EQ(d.find("not on these lines"), std::string::npos) << d;
}

TEST(SourceListing, RecordedFromTheJitCallToTheLastTracedLineOfItsFileAtMost200Lines) {
  using kiln::detail::Where;
  std::vector<std::string> file;
  std::ifstream in(__FILE__);
  for (std::string l; std::getline(in, l);) file.push_back(l);
  ASSERT_GT(file.size(), 300u);
  kiln::detail::TraceContext ctx("long", {}, {});
  const Where jit_call{__FILE__, 10, 3};
  ctx.note_line(Where{__FILE__, 14, 5});
  ctx.note_line(Where{"elsewhere/helpers.hpp", 900, 1});  // another file's lines do not extend the listing
  kiln::detail::SourceListing s = kiln::detail::record_source_listing(ctx, jit_call);
  EXPECT_EQ(s.file, this_file());
  EXPECT_EQ(s.first, 10u);
  EXPECT_EQ(s.lines, std::vector<std::string>(file.begin() + 9, file.begin() + 14));
  EXPECT_FALSE(s.cut);
  // A value made before the call (a lambda written above it) starts the listing there.
  ctx.note_line(Where{__FILE__, 8, 1});
  EXPECT_EQ(kiln::detail::record_source_listing(ctx, jit_call).first, 8u);
  // Past kMaxListedLines the listing is cut, and says so.
  ctx.note_line(Where{__FILE__, 300, 1});
  s = kiln::detail::record_source_listing(ctx, jit_call);
  EXPECT_EQ(s.first, 8u);
  EXPECT_EQ(s.lines.size(), kiln::detail::kMaxListedLines);
  EXPECT_TRUE(s.cut);
  EXPECT_CONTAINS(kiln::detail::source_listing_text(s, {}), " lines 8-207 (cut at 200 lines), as traced");
}

TEST(SourceListing, TextOfAListingWithFusedNestedAndUnplacedParfors) {
  kiln::detail::SourceListing s;
  s.file = "k.cpp";
  s.first = 10;
  s.lines = {"auto k = kiln::jit(\"k\", [](Array<double, 2> a) {", "  prange(n, [&](Int i) {", "", "    sum(row);"};
  s.locations = {"k.cpp:11", "k.cpp:13", "helpers.hpp:3"};
  passes::ParforGraph g;
  g.before = {{.id = 1, .parent = 0, .origin = "prange at k.cpp:11", .origins = {"prange at k.cpp:11"}},
              {.id = 2, .parent = 1, .origin = "sum(row) at k.cpp:13 | exp at helpers.hpp:3",
               .origins = {"sum(row) at k.cpp:13", "exp at helpers.hpp:3"}},
              {.id = 3, .parent = 1, .origin = "exp at helpers.hpp:3", .origins = {"exp at helpers.hpp:3"}},
              {.id = 4, .parent = 0, .origin = "copy of returned array t", .origins = {"copy of returned array t"}},
              {.id = 5, .parent = 0, .origin = "prange at k.cpp:11", .origins = {"prange at k.cpp:11"}}};
  g.after = {{{1, 4}, -1}, {{2, 3}, 0}};
  // The notes start two columns after the longest line; a line without notes has no trailing spaces.
  EXPECT_EQ(kiln::detail::source_listing_text(s, g),
            "source listing: k.cpp lines 10-13, as traced; beside a line, the parfors its ops became and where each is "
            "after fusion\n"
            "  10 | auto k = kiln::jit(\"k\", [](Array<double, 2> a) {\n"
            "  11 |   prange(n, [&](Int i) {                        "
            "  // #1 prange -> fused into #1+#4; #5 prange -> removed by fusion\n"
            "  12 |\n"
            "  13 |     sum(row);                                   "
            "  // #2 sum(row) -> fused into #2+#3, nested in #1+#4\n"
            "  not on these lines: #3 exp at helpers.hpp:3 -> fused into #2+#3, nested in #1+#4\n"
            "  not on these lines: #4 copy of returned array t -> fused into #1+#4\n");
}

}  // namespace

// Last in the file: the #line below renames the file for everything after it.
namespace {

TEST(SourceListing, UnavailableSourceIsOneLineSayingWhy) {
#line 9000 "no/such/dir/kernel_elsewhere.cpp"
  auto k = kiln::jit("elsewhere", [](kiln::Array<double> a) {
    kiln::prange(a.shape(0), [&](kiln::Int i) { a[i] = a[i] + 1.0; });
  }, interp());
  std::vector<double> a = {1, 2};
  k(a);
  EXPECT_EQ(a, (std::vector<double>{2, 3}));
  const std::string d = k.diagnostics();
  const std::vector<std::string> lines = lines_of(d);
  const auto it = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("source listing"); });
  ASSERT_NE(it, lines.end()) << d;
  EXPECT_EQ(*it, "source listing: not available: no/such/dir/kernel_elsewhere.cpp cannot be read (moved, or built elsewhere?)");
  EXPECT_TRUE(std::next(it)->starts_with("compile: ")) << d;  // one line, then the next section
}

}  // namespace
