// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The compile log: every kernel compilation or load, kept for kiln::compile_history() and printed to
// stderr under KILN_LOG=compile.
#pragma once

#include <string>
#include <string_view>

#include "kiln/cache.hpp"

namespace kiln::cache {

/// Appends `r` to the history and prints it if KILN_LOG names "compile" (or "all"), with `split` (more
/// timings of the record's kind, " name=value..." as the line's other fields) after its load time.
void log_compile(const CompileRecord& r, std::string_view split = {});

/// The one-line form printed by KILN_LOG=compile.
std::string format_record(const CompileRecord& r, std::string_view split = {});

/// True if KILN_LOG names "compile" (or "all").
bool compile_log_enabled();

/// The process's minor page faults so far (getrusage): a compile log's first calls are split by them too, since
/// a fresh process's first kernel touches code and memory for the first time.
long minor_faults();

/// Under KILN_LOG=compile, prints the time of a kernel's first call with a signature: all of it, the part
/// that found or compiled its code (CompileRecord), and the part that ran it.
void log_first_call(std::string_view kernel, double total_us, double compile_us, double run_us, long compile_faults,
                    long run_faults);

}  // namespace kiln::cache
