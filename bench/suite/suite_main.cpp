// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-suite: times every kernel of the public suite in kiln and in its hand-written C++/OpenMP reference, in
// this process, interleaved, and prints medians, the ratio kiln / reference and, with --aa, the A/A ratio (the
// reference timed against itself in the same repetitions: the noise band of the machine at hand).
//   kiln-suite [--threads T] [--reps R] [--filter a,b] [--aa] [--csv FILE] [--smoke]
// --smoke runs each kernel once at a tiny size and checks its result (the ctest entry).
// A result that differs from the reference's beyond the kernel's tolerance makes the exit status 1.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "suite.hpp"

namespace suite {

std::vector<Kernel>& kernels() {
  static std::vector<Kernel> all;
  return all;
}

bool add(Kernel k) {
  kernels().push_back(std::move(k));
  return true;
}

}  // namespace suite

namespace {

struct Result {
  std::string name, origin, shape;
  double kiln_s = 0, ref_s = 0, aa_s = 0;
  double others = -1;  ///< the share of the machine's CPU time others took while the row ran (-1: unknown)
  std::string error;
};

/// CPU time counters of the machine and of this process, in clock ticks (Linux /proc; zeros elsewhere).
struct CpuTicks {
  long long busy = 0, total = 0, self = 0;
};

/// The machine is shared: other processes, and on a VM the hypervisor (steal time), take CPU time that this
/// process's threads wait for at every barrier. What they took while a row ran says whether its timings can
/// be trusted (the A/A ratio says how much they moved).
CpuTicks cpu_ticks() {
  CpuTicks t;
  if (std::FILE* f = std::fopen("/proc/stat", "r")) {
    long long v[8] = {};  // user nice system idle iowait irq softirq steal
    if (std::fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                    &v[7]) == 8) {
      t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
      t.total = t.busy + v[3] + v[4];
    }
    std::fclose(f);
  }
  if (std::FILE* f = std::fopen("/proc/self/stat", "r")) {
    char buf[1024];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    // Fields after the command name (which may hold spaces) start past the last ')': utime and stime are the
    // 12th and 13th of them.
    if (const char* p = std::strrchr(buf, ')')) {
      long long utime = 0, stime = 0;
      if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &utime, &stime) == 2)
        t.self = utime + stime;
    }
    std::fclose(f);
  }
  return t;
}

double time_once(const std::function<void()>& f) {
  const double t0 = suite::now_s();
  f();
  return suite::now_s() - t0;
}

/// Times one kernel: two warm-up calls of each side (the first compiles), then `reps` repetitions in which
/// kiln, the reference and (with `aa`) the reference again run in an order that rotates, so drift is
/// shared. Afterwards each side runs once more from equal inputs and the results are compared.
Result run(const suite::Kernel& k, int reps, bool aa, bool smoke) {
  Result r;
  r.name = k.name;
  r.origin = k.origin;
  try {
    suite::Case c = k.make(smoke);
    r.shape = c.shape;
    if (!smoke) {
      const CpuTicks t0 = cpu_ticks();
      for (int w = 0; w < 2; ++w) {
        c.kiln();
        c.ref();
      }
      std::vector<double> tk, tr, ta;
      const int sides = aa ? 3 : 2;
      for (int i = 0; i < reps; ++i) {
        for (int s = 0; s < sides; ++s) {
          switch ((i + s) % sides) {
            case 0: tk.push_back(time_once(c.kiln)); break;
            case 1: tr.push_back(time_once(c.ref)); break;
            default: ta.push_back(time_once(c.ref)); break;
          }
        }
      }
      r.kiln_s = suite::median(tk);
      r.ref_s = suite::median(tr);
      r.aa_s = suite::median(ta);
      const CpuTicks t1 = cpu_ticks();
      if (t1.total > t0.total)
        r.others = std::max(0.0, static_cast<double>((t1.busy - t0.busy) - (t1.self - t0.self)) /
                                     static_cast<double>(t1.total - t0.total));
    }
    if (c.reset) c.reset();
    c.kiln();
    c.ref();
    r.error = c.check();
  } catch (const std::exception& e) {
    r.error = std::string("exception: ") + e.what();
  }
  return r;
}

bool selected(const std::string& name, const std::string& filter) {
  if (filter.empty()) return true;
  std::stringstream ss(filter);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty() && name.find(item) != std::string::npos) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool aa = false, smoke = false;
  std::string filter, csv_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--threads" && i + 1 < argc) kiln::set_num_threads(std::atoi(argv[++i]));
    else if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (a == "--csv" && i + 1 < argc) csv_path = argv[++i];
    else if (a == "--aa") aa = true;
    else if (a == "--smoke") smoke = true;
    else {
      std::fprintf(stderr, "usage: kiln-suite [--threads T] [--reps R] [--filter a,b] [--aa] [--csv FILE] [--smoke]\n");
      return 2;
    }
  }
  std::FILE* csv = nullptr;
  if (!csv_path.empty()) {
    csv = std::fopen(csv_path.c_str(), "w");
    if (!csv) {
      std::fprintf(stderr, "kiln-suite: cannot write %s\n", csv_path.c_str());
      return 2;
    }
    std::fprintf(csv, "kernel,origin,kiln_ms,ref_ms,ratio,aa_ratio,others_cpu,threads,reps,status\n");
  }
  if (smoke)
    std::printf("%-16s %-9s %s  (smoke: one call each at a tiny size, results checked)\n", "kernel", "origin", "result");
  else
    std::printf("%-16s %-9s %10s %10s %7s %7s %7s  %s  (threads %d, median of %d; others: CPU share other processes "
                "took meanwhile)\n",
                "kernel", "origin", "kiln ms", "ref ms", "ratio", "A/A", "others", "size", kiln::num_threads(), reps);
  int status = 0, count = 0;
  for (const auto& k : suite::kernels()) {
    if (!selected(k.name, filter)) continue;
    ++count;
    const Result r = run(k, reps, aa, smoke);
    if (!r.error.empty()) status = 1;
    const char* verdict = r.error.empty() ? "ok" : "MISMATCH";
    if (smoke) {
      std::printf("%-16s %-9s %s%s%s\n", r.name.c_str(), r.origin.c_str(), verdict, r.error.empty() ? "" : ": ",
                  r.error.c_str());
    } else {
      char aa_text[16] = "-";
      if (aa) std::snprintf(aa_text, sizeof aa_text, "%.3f", r.aa_s / r.ref_s);
      char others_text[16] = "-";
      if (r.others >= 0) std::snprintf(others_text, sizeof others_text, "%.0f%%", r.others * 100);
      std::printf("%-16s %-9s %10.3f %10.3f %7.3f %7s %7s  %s%s%s\n", r.name.c_str(), r.origin.c_str(), r.kiln_s * 1e3,
                  r.ref_s * 1e3, r.kiln_s / r.ref_s, aa_text, others_text, r.shape.c_str(),
                  r.error.empty() ? "" : "  MISMATCH: ", r.error.c_str());
    }
    std::fflush(stdout);
    if (csv) {
      std::string err = r.error;
      for (char& ch : err)
        if (ch == ',' || ch == '\n' || ch == '"') ch = ' ';
      std::fprintf(csv, "%s,%s,%.4f,%.4f,%.4f,%s,%s,%d,%d,%s\n", r.name.c_str(), r.origin.c_str(), r.kiln_s * 1e3,
                   r.ref_s * 1e3, smoke ? 0.0 : r.kiln_s / r.ref_s,
                   aa && !smoke ? std::to_string(r.aa_s / r.ref_s).c_str() : "",
                   r.others >= 0 ? std::to_string(r.others).c_str() : "", kiln::num_threads(), reps,
                   r.error.empty() ? "ok" : ("mismatch: " + err).c_str());
    }
  }
  if (csv) std::fclose(csv);
  if (count == 0) {
    std::fprintf(stderr, "kiln-suite: no kernel matches --filter %s\n", filter.c_str());
    return 2;
  }
  return status;
}
