// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tests that need a process of their own (environment variables read once per process, exit-time behaviour):
// the test binary runs itself with a filter and an environment, and the parent checks what the child printed.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln_tests {

struct ChildRun {
  int status = -1;  ///< exit status, or -1 when the child was killed by a signal or could not start
  std::string out;  ///< its stdout and stderr
};

/// Runs this test binary again as `env <env> <self> --gtest_filter=<filter>`. `env` is shell text
/// ("KILN_CHECK=1 'KILN_LLVM_OPTIONS=-a -b'").
inline ChildRun run_this_binary(const std::string& env, const std::string& filter) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return {-1, "no /proc/self/exe"};
  exe[n] = 0;
  const std::string cmd = "env " + env + " '" + exe + "' '--gtest_filter=" + filter + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  ChildRun c;
  char buf[4096];
  while (std::size_t got = std::fread(buf, 1, sizeof buf, p)) c.out.append(buf, got);
  const int status = pclose(p);
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

/// The targets a CPU test runs on: the interpreter, and the CPU where this kiln has LLVM.
inline std::vector<kiln::Target> host_targets() {
  std::vector<kiln::Target> t{kiln::Target::interpreter};
  if (kiln::has_cpu_backend()) t.push_back(kiln::Target::cpu);
  return t;
}

}  // namespace kiln_tests
