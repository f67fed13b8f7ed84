#include <cstdio>
#include <cstdlib>
#include <string>

#include "codegen/backend.hpp"
#include "kiln/config.hpp"
#include "kiln/options.hpp"
#include "kiln/runtime.hpp"
#include "runtime/parallel.hpp"

namespace kiln {

std::string_view name_of(Target t) {
  switch (t) {
    case Target::cpu: return "cpu";
    case Target::cuda: return "cuda";
    case Target::interpreter: return "interpreter";
  }
  return "?";
}

Target default_target() {
  static const Target target = [] {
    const Target fallback = KILN_HAVE_LLVM ? Target::cpu : Target::interpreter;
    const char* v = std::getenv("KILN_TARGET");
    if (!v || !*v) return fallback;
    const std::string s = v;
    if (s == "cpu") return Target::cpu;
    if (s == "cuda") return Target::cuda;
    if (s == "interpreter") return Target::interpreter;
    std::fprintf(stderr, "kiln: warning: ignoring KILN_TARGET=%s (expected cpu, cuda or interpreter)\n", v);
    return fallback;
  }();
  return target;
}

namespace {
bool env_flag_once(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  const std::string s = v;
  if (s == "0") return false;
  if (s == "1") return true;
  std::fprintf(stderr, "kiln: warning: ignoring %s=%s (expected 0 or 1)\n", name, v);
  return false;
}
}  // namespace

bool default_boundscheck() {
  static const bool on = env_flag_once("KILN_BOUNDSCHECK");
  return on;
}

bool default_check() {
  static const bool on = env_flag_once("KILN_CHECK");
  return on;
}

int num_threads() { return runtime::num_threads(); }
void set_num_threads(int n) { runtime::set_num_threads(n); }
bool has_cpu_backend() { return KILN_HAVE_LLVM; }

}  // namespace kiln
