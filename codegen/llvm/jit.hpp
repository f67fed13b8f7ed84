// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The process-wide ORC LLJIT that kernels are linked into.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/backend.hpp"

namespace kiln::codegen::cpu::detail {

/// Links objects together exporting `kiln_entry` into a JITDylib of their own, removed from the JIT when
/// the returned kernel's keepalive is dropped. Thread-safe. Throws CompileError if linking fails.
CompiledKernel jit_load(const std::vector<const std::string*>& objects, std::string_view debug_name);

}  // namespace kiln::codegen::cpu::detail
