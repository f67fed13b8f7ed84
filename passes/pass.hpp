// What a pass is: a function from IR to IR that records what it decided.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::passes {

/// Shared by the passes of one pipeline run: decisions go to `notes` for kernel.diagnostics().
struct PassContext {
  std::vector<std::string> notes;
  void note(std::string s) { notes.push_back(std::move(s)); }
};

using PassFn = ir::Function (*)(const ir::Function&, PassContext&);

struct Pass {
  const char* name;
  PassFn run;
};

}  // namespace kiln::passes
