// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench: every registered row runs kiln and its hand-written reference in this process, interleaved,
// and prints medians, the ratio, GB/s, the cold compile time and the dispatch overhead.
//   kiln-bench [--json] [--n N] [--reps R] [--filter NAME[,NAME...]] [--threads T] [--first-call] [--aa]
//   [--offset B] [--boundscheck]
// --offset B starts the streaming rows' arrays B bytes (a multiple of 8) past a 64-byte boundary.
// --aa is an A/A run: the reference is timed against itself in kiln's place, so the ratios show the
// harness's own noise and bias on this machine (they should be 1 within the noise).
// --boundscheck times each row's kiln kernel against the same kernel compiled in bounds-checked mode
// (Options::boundscheck), interleaved, and prints the cost of the mode as the ratio checked / unchecked.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include <kiln/kiln.hpp>
#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace bench {

namespace {
long long g_n = 20'000'000;
std::optional<bool> g_boundscheck;  ///< Options::boundscheck of the kernels rows make now (unset: kiln's default)
}
bool g_aa = false;
int g_offset = 0;

std::vector<Case (*)()>& makers() {
  static std::vector<Case (*)()> all;
  return all;
}

std::vector<Case> make_cases() {
  std::vector<Case> made;
  for (auto make : makers()) made.push_back(make());
  return made;
}

std::vector<Case>& cases() {
  static std::vector<Case> all = make_cases();
  return all;
}

/// The rows made with their kernels in bounds-checked mode or not (for --boundscheck).
std::vector<Case> cases_with_boundscheck(bool on) {
  g_boundscheck = on;
  std::vector<Case> made = make_cases();
  g_boundscheck.reset();
  return made;
}

kiln::Options kernel_options() {
  kiln::Options o;
  if (g_boundscheck) o.boundscheck = *g_boundscheck;
  return o;
}
void add(Case (*make)()) { makers().push_back(make); }
long long problem_size() { return g_n; }
int data_offset() { return g_offset; }

Vector random_vector(std::size_t n, unsigned seed, double lo, double hi) {
  Vector v(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace bench

namespace {

struct Row {
  std::string name;
  double kiln_s, ref_s, gbps, compile_ms, dispatch_ns;
  std::string error;
  std::string extra;
};

Row run(bench::Case& c, int reps) {
  Row r{c.name, 0, 0, 0, 0, 0, {}, {}};
  c.setup();
  for (int w = 0; w < 2; ++w) {  // warm-up: compiles, faults pages in, wakes the thread team
    c.kiln();
    c.ref();
  }
  const std::function<void()>& kiln_side = bench::g_aa ? c.ref : c.kiln;  // --aa: the reference twice
  std::vector<double> tk, tr;
  for (int i = 0; i < reps; ++i) {  // interleaved, alternating which goes first, to share drift fairly
    auto time = [](const std::function<void()>& f) {
      const double t0 = bench::now_s();
      f();
      return bench::now_s() - t0;
    };
    if (i % 2 == 0) {
      tk.push_back(time(kiln_side));
      tr.push_back(time(c.ref));
    } else {
      tr.push_back(time(c.ref));
      tk.push_back(time(kiln_side));
    }
  }
  r.kiln_s = bench::median(tk);
  r.ref_s = bench::median(tr);
  r.gbps = c.bytes > 0 ? c.bytes / r.kiln_s / 1e9 : 0;
  if (c.verify) c.verify();
  if (c.check) r.error = c.check();
  if (c.extra) r.extra = c.extra();
  if (c.teardown) c.teardown();

  // A cold compile: with the disk cache off, and a fresh kernel object each time (the in-memory table
  // is per kernel), so trace, passes, LLVM and link all run.
  std::vector<double> compile;
  const kiln::CacheSettings saved = kiln::cache_settings();
  kiln::CacheSettings off = saved;
  off.mode = kiln::CacheMode::off;
  kiln::set_cache_settings(off);
  for (int i = 0; i < 5; ++i) {
    const double t0 = bench::now_s();
    c.cold_compile();
    compile.push_back((bench::now_s() - t0) * 1e3);
  }
  kiln::set_cache_settings(saved);
  r.compile_ms = bench::median(compile);

  std::vector<double> dispatch;
  const int calls = 20000;
  for (int i = 0; i < 200; ++i) c.empty_call();
  for (int b = 0; b < 7; ++b) {
    const double t0 = bench::now_s();
    for (int i = 0; i < calls; ++i) c.empty_call();
    dispatch.push_back((bench::now_s() - t0) * 1e9 / calls);
  }
  r.dispatch_ns = bench::median(dispatch);
  return r;
}

/// --boundscheck: one row's kiln kernel without (`plain`) and with (`checked`) the mode, interleaved as run()
/// does. The checked kernel's result is compared with the reference.
struct CheckedRow {
  std::string name;
  double plain_s, checked_s;
  std::string error;
};

CheckedRow run_checked(bench::Case& plain, bench::Case& checked, int reps) {
  CheckedRow r{plain.name, 0, 0, {}};
  plain.setup();
  checked.setup();
  for (int w = 0; w < 2; ++w) {
    plain.kiln();
    checked.kiln();
  }
  std::vector<double> tp, tc;
  auto time = [](const std::function<void()>& f) {
    const double t0 = bench::now_s();
    f();
    return bench::now_s() - t0;
  };
  for (int i = 0; i < reps; ++i) {
    if (i % 2 == 0) {
      tp.push_back(time(plain.kiln));
      tc.push_back(time(checked.kiln));
    } else {
      tc.push_back(time(checked.kiln));
      tp.push_back(time(plain.kiln));
    }
  }
  r.plain_s = bench::median(tp);
  r.checked_s = bench::median(tc);
  if (plain.teardown) plain.teardown();
  // The checked kernel's result against the reference, each run once from fresh inputs (rows without
  // `verify` compare their last runs, and some count how often each side ran).
  checked.setup();
  if (checked.verify) {
    checked.verify();
  } else {
    checked.kiln();
    checked.ref();
  }
  if (checked.check) r.error = checked.check();
  if (checked.teardown) checked.teardown();
  return r;
}

bool selected(const std::string& name, const std::string& filter) {
  if (filter.empty()) return true;
  std::stringstream ss(filter);
  for (std::string item; std::getline(ss, item, ',');)
    if (item == name) return true;
  return false;
}

/// One JSON line: `row` plus a case's own members (`extra`, JSON members without braces) and its mismatch
/// message, if any. nlohmann::json escapes the strings (error messages hold quotes) and writes NaN as null.
void print_json(nlohmann::ordered_json row, const std::string& extra = "", const std::string& error = "") {
  if (!extra.empty()) {
    const nlohmann::ordered_json members = nlohmann::ordered_json::parse("{" + extra + "}");
    for (const auto& [key, value] : members.items()) row[key] = value;
  }
  if (!error.empty()) row["error"] = error;
  std::printf("%s\n", row.dump().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, first_call = false, boundscheck = false;
  int reps = 7;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--n" && i + 1 < argc) bench::g_n = std::atoll(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::max(5, std::atoi(argv[++i]));
    else if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (a == "--threads" && i + 1 < argc) kiln::set_num_threads(std::atoi(argv[++i]));
    else if (a == "--first-call") first_call = true;
    else if (a == "--aa") bench::g_aa = true;
    else if (a == "--boundscheck") boundscheck = true;
    else if (a == "--offset" && i + 1 < argc) bench::g_offset = std::clamp(std::atoi(argv[++i]) / 8 * 8, 0, 56);
    else {
      std::fprintf(stderr,
                   "usage: kiln-bench [--json] [--n N] [--reps R>=5] [--filter a,b] [--threads T] [--first-call] [--aa] [--offset B] [--boundscheck]\n");
      return 2;
    }
  }
  // The first call of each row's kernel in this process, with the disk cache as the environment sets it:
  // run twice in fresh processes on one KILN_CACHE_DIR, it gives the compile and the warm-cache load latency
  // that a user's program sees (bench/peers/run_cpu.py).
  if (first_call) {
    for (auto& c : bench::cases()) {
      if (!selected(c.name, filter) || !c.cold_compile) continue;
      const double t0 = bench::now_s();
      c.cold_compile();
      print_json({{"name", c.name}, {"first_call_s", bench::now_s() - t0}});
    }
    return 0;
  }
  if (boundscheck) {
    std::vector<bench::Case> plain = bench::cases_with_boundscheck(false), checked = bench::cases_with_boundscheck(true);
    if (!json)
      std::printf("%-20s %12s %12s %7s  (threads %d, n %lld, median of %d; ratio = checked / unchecked)\n", "row",
                  "kiln ms", "checked ms", "ratio", kiln::num_threads(), bench::g_n, reps);
    int status = 0;
    for (std::size_t i = 0; i < plain.size(); ++i) {
      if (!selected(plain[i].name, filter)) continue;
      const CheckedRow r = run_checked(plain[i], checked[i], reps);
      if (!r.error.empty()) status = 1;
      if (json)
        print_json({{"name", r.name}, {"kiln_s", r.plain_s}, {"checked_s", r.checked_s},
                    {"ratio", r.checked_s / r.plain_s}, {"threads", kiln::num_threads()}, {"n", bench::g_n}},
                   "", r.error);
      else
        std::printf("%-20s %12.3f %12.3f %7.3f%s%s\n", r.name.c_str(), r.plain_s * 1e3, r.checked_s * 1e3,
                    r.checked_s / r.plain_s, r.error.empty() ? "" : "  RESULT MISMATCH: ", r.error.c_str());
      std::fflush(stdout);
    }
    return status;
  }
  if (!json)
    std::printf("%-20s %12s %12s %7s %8s %11s %12s  (threads %d, n %lld, median of %d)\n", "row", "kiln ms", "ref ms",
                "ratio", "GB/s", "compile ms", "dispatch ns", kiln::num_threads(), bench::g_n, reps);
  int status = 0;
  for (auto& c : bench::cases()) {
    if (!selected(c.name, filter)) continue;
    const Row r = run(c, reps);
    if (!r.error.empty()) status = 1;
    if (json) {
      print_json({{"name", r.name}, {"kiln_s", r.kiln_s}, {"ref_s", r.ref_s}, {"ratio", r.kiln_s / r.ref_s},
                  {"GBps", r.gbps}, {"compile_ms", r.compile_ms}, {"dispatch_ns", r.dispatch_ns},
                  {"threads", kiln::num_threads()}, {"n", bench::g_n}},
                 r.extra, r.error);
    } else {
      std::printf("%-20s %12.3f %12.3f %7.3f %8.2f %11.2f %12.1f%s%s%s%s\n", r.name.c_str(), r.kiln_s * 1e3,
                  r.ref_s * 1e3, r.kiln_s / r.ref_s, r.gbps, r.compile_ms, r.dispatch_ns, r.extra.empty() ? "" : "  ",
                  r.extra.c_str(), r.error.empty() ? "" : "  RESULT MISMATCH: ", r.error.c_str());
    }
    std::fflush(stdout);
  }
  return status;
}
