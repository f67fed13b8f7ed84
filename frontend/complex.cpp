// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What complex numbers refuse (kiln/complex.hpp): the one place their TypeErrors are raised while tracing.
#include <string>

#include "frontend/trace_context.hpp"
#include "kiln/complex.hpp"

namespace kiln::detail {

void refuse_complex(const char* operation, const char* fix, Where where) {
  const TraceContext& ctx = TraceContext::active(operation);
  ctx.fail_type(std::string(operation) + ": " + fix, where);
}

}  // namespace kiln::detail
