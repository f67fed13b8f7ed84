// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Linking kernels' objects into the process (LLVM JITLink, in-process memory).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/backend.hpp"

namespace kiln::codegen::cpu::detail {

/// Links objects together, one of them defining `kiln_entry`, into memory of their own, freed when the
/// returned kernel's keepalive is dropped. Thread-safe. Throws CompileError if linking fails.
CompiledKernel jit_load(const std::vector<const std::string*>& objects, std::string_view debug_name);

}  // namespace kiln::codegen::cpu::detail
