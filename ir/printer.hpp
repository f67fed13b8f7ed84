// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The stable text form of the IR. Golden tests and the cache key depend on it: change it deliberately.
#pragma once

#include <string>

#include "ir/stmt.hpp"

namespace kiln::ir {

struct PrintOptions {
  /// Names every variable by its order of definition (v0, v1, ...) and omits origins, so two functions
  /// that differ only in names or source locations print the same. This is the text the cache hashes.
  bool canonical = false;
};

std::string to_string(const Function& f, const PrintOptions& opts = {});
std::string to_string(const Stmt& s);
std::string to_string(const Expr& e);
/// A constant's literal: `3`, `3i32`, `true`, `0.5`, `0.5f`, `nan`, `-inf`.
std::string literal(const ConstExpr& c);

}  // namespace kiln::ir
