#include "passes/pipeline.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "passes/array_analysis.hpp"
#include "passes/detect_reductions.hpp"
#include "passes/lower_array_ops.hpp"
#include "passes/simplify.hpp"

namespace kiln::passes {

const std::vector<Pass>& pipeline() {
  static const std::vector<Pass> passes = {
      {"detect_reductions", detect_reductions},  // prange scalar writes -> reductions, or TraceError
      {"lower_array_ops", lower_array_ops},  // array-level statements -> parfors over their index spaces
      {"array_analysis", array_analysis},    // equal extents made syntactically equal; shape checks proven
      {"simplify", simplify},                    // fold constants, propagate copies, CSE, remove dead code
  };
  return passes;
}

namespace {

bool dump_enabled() {
  const char* v = std::getenv("KILN_DUMP_IR");
  return v && *v && std::strcmp(v, "0") != 0;
}

void dump(const char* stage, const ir::Function& f) {
  std::fprintf(stderr, "=== kiln: %s: IR after %s ===\n%s", f.name.c_str(), stage, ir::to_string(f).c_str());
}

}  // namespace

ir::Function run_pipeline(const ir::Function& traced, PipelineReport* report) {
  const bool dumping = dump_enabled();
  if (dumping) dump("trace", traced);
  PassContext ctx;
  ir::Function f = traced;
  for (const Pass& p : pipeline()) {
    const auto t0 = std::chrono::steady_clock::now();
    f = p.run(f, ctx);
    ir::verify_or_throw(f, std::string("after pass ") + p.name);
    const auto t1 = std::chrono::steady_clock::now();
    if (report) report->timings.push_back({p.name, std::chrono::duration<double, std::micro>(t1 - t0).count()});
    if (dumping) dump(p.name, f);
  }
  if (report) report->notes = std::move(ctx.notes);
  return f;
}

ir::Function run_pass(const std::string& name, const ir::Function& f, PassContext& ctx) {
  for (const Pass& p : pipeline())
    if (name == p.name) return p.run(f, ctx);
  throw std::out_of_range("no pass named " + name);
}

}  // namespace kiln::passes
