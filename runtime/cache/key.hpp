// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cache key: a 128-bit BLAKE2b of everything that determines the compiled code, and nothing else (no
// scalar argument values, no kernel or variable names, no source locations).
#pragma once

#include <string>
#include <string_view>

#include "ir/hash.hpp"

namespace kiln::cache {

using Key = ir::Hash128;

struct KeyInputs {
  std::string_view canonical_ir;        ///< ir::to_string(traced, {.canonical = true}): before passes
  std::string_view target;              ///< "cpu", "cuda"
  std::string_view target_description;  ///< CPU: triple;cpu;features[;libmvec]. GPU: sm arch and device limits
  std::string_view codegen_options;     ///< every option that changes the generated code, as text
  std::string_view llvm_version;        ///< "" where LLVM does not generate the code
  std::string_view nvrtc_version;       ///< "" for CPU entries
};

/// The key of a kernel. Also hashes the entry format version and this kiln's identity (kiln_identity()).
Key make_key(const KeyInputs& in);

/// KILN_VERSION plus the GNU build-id of the loaded libkiln when it has one, so that any rebuild of kiln with
/// changed passes or code generation (the version number alone would not change) starts from fresh entries.
const std::string& kiln_identity();

/// Parses 32 hex digits (as Key::hex() writes them).
bool parse_key(std::string_view hex, Key& out);

}  // namespace kiln::cache
