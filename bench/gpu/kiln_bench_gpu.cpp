// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu: kiln's CUDA target against hand-written CUDA of the same work, in one process, on device
// arrays (no host transfers in the timed region). Both are timed with CUDA events on the same stream,
// interleaved, medians reported; GB/s count the bytes each algorithm must move, and the device-to-device
// copy of a large buffer measured in the same run is the ceiling.
//   kiln-bench-gpu [--reps R] [--n N] [--side S] [--side3 S] [--filter a,b,...] [--cupy FILE] [--small]
// `--filter contraction` times a matrix product at skinny, short, small and large shapes (contraction_rows.cpp);
// `--filter products` the product at two suite shapes, f64 and f32, exact and fast_math.
// The public kernel suite's rows (suite_rows.cpp) run when the filter names them: `suite` for all 20, or a
// kernel's name (gemm, row-stats, ...); --cupy adds CuPy's times (bench/gpu/cupy_suite.py's output), --small
// runs them at sizes of a few milliseconds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numbers>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/gpu/kiln_kernels.hpp"
#include "bench/gpu/reference.hpp"
#include "bench/gpu/scan_rows.hpp"
#include "bench/gpu/suite_rows.hpp"
#include "bench/gpu/random_rows.hpp"
#include "bench/gpu/contraction_rows.hpp"
#include "bench/measure.hpp"
#include "ir/sort_keys.hpp"
#include "kiln/cache.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace {

using kiln::DeviceArray;
namespace gpu = kiln::gpu;

bool g_profile = false;  // --profile

using bench::median;

double now_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/// Times work queued on the device's stream with a pair of CUDA events.
class EventTimer {
 public:
  explicit EventTimer(gpu::Device& dev) : dev_(dev) {
    gpu::check(gpu::driver().cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    gpu::check(gpu::driver().cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  double ms(const std::function<void()>& work) {
    gpu::check(gpu::driver().cuEventRecord(start_, dev_.stream()), "cuEventRecord");
    work();
    gpu::check(gpu::driver().cuEventRecord(stop_, dev_.stream()), "cuEventRecord");
    gpu::check(gpu::driver().cuEventSynchronize(stop_), "cuEventSynchronize");
    float t = 0;
    gpu::check(gpu::driver().cuEventElapsedTime(&t, start_, stop_), "cuEventElapsedTime");
    return t;
  }

 private:
  gpu::Device& dev_;
  CUevent start_ = nullptr, stop_ = nullptr;
};

struct Row {
  Row(std::string n, double b, std::string t = "") : name(std::move(n)), bytes(b), target(std::move(t)) {}
  std::string name;
  double bytes = 0;  ///< minimum traffic of one run (0: compute-bound)
  double kiln_ms = 0, hand_ms = 0, exact_ms = 0;  ///< exact: the reference compiled with --fmad=false
  double compile_ms = 0, nvrtc_ms = 0, disk_ms = 0;  ///< disk: a fresh kernel's first call loading from the disk cache
  std::string check;
  std::string target;  ///< "stream" (>= 85 % of the copy ceiling), "reduce" (>= 75 %), or "" (none)
};

struct Options {
  int reps = 20;
  long long n = 1ll << 27;
  long long side = 16384;
  long long side3 = 512;  ///< the 3-d stencils' cube
  std::string filter;
  std::string cupy_file;  ///< bench/gpu/cupy_suite.py's output for the suite rows
  bool small = false;     ///< the suite rows at small sizes
  bool profile = false;  ///< only the timed runs (for ncu): no cold compiles, no launch-overhead loops
  bool selected(const std::string& name) const {
    if (filter.empty()) return true;
    std::stringstream ss(filter);
    for (std::string item; std::getline(ss, item, ',');)
      if (item == name) return true;
    return false;
  }
};

/// Fills x with reproducible values in [lo, hi) on the device (an integer hash of the index).
void fill(DeviceArray<float>& x, float lo, float hi, long long seed) {
  static auto k = kiln::jit("bench_fill", [](kiln::Array<float> x, kiln::Float lo, kiln::Float hi, kiln::Int seed) {
    kiln::prange(x.shape(0), [&](kiln::Int i) {
      kiln::Int h = (i + seed) * 0x1E3779B97F4A7C15LL;
      h = h ^ (h >> 29);
      h = h * 0x3F58476D1CE4E5B9LL;
      h = h ^ (h >> 32);
      x[i] = lo + (hi - lo) * (kiln::to_float(h & 0xFFFFFF) * (1.0f / 16777216.0f));
    });
  }, kiln::Options().on(kiln::Target::cuda));
  k(x, lo, hi, seed);
}

/// kiln::atomic_add at data-dependent bins (docs/atomics.md): the histogram row's kernel.
const auto hist_atomic = [](kiln::Array<float> x, kiln::Array<std::int32_t> hist) {
  const auto bins = kiln::to_float(hist.shape(0));
  kiln::prange(x.shape(0), [&](kiln::Int i) { kiln::atomic_add(hist[kiln::to_int(x[i] * bins)], 1); });
};

/// Median event times of kiln and the two references, interleaved (rotating which goes first).
void time_rows(EventTimer& t, int reps, const std::function<void()>& kiln_run, const std::function<void(const benchgpu::Reference&)>& hand_run,
               const benchgpu::Reference& hand, const benchgpu::Reference& exact, Row& row) {
  const std::function<void()> runs[3] = {kiln_run, [&] { hand_run(hand); }, [&] { hand_run(exact); }};
  for (int w = 0; w < 2; ++w)
    for (const auto& f : runs) f();
  std::vector<double> times[3];
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < 3; ++k) times[(r + k) % 3].push_back(t.ms(runs[(r + k) % 3]));
  row.kiln_ms = median(times[0]);
  row.hand_ms = median(times[1]);
  row.exact_ms = median(times[2]);
}

/// A fresh kernel's first call on a tiny input with the disk cache off, and the code generation time
/// (emission + NVRTC) it reports; then the first call of a fresh kernel object whose code is in the disk
/// cache (a private directory; stored by one object, loaded by the next once the first is gone).
template <class F, class Call>
void cold_compile(Row& row, const F& lambda, const char* name, Call&& call) {
  if (g_profile) return;
  const kiln::CacheSettings before = kiln::cache_settings();
  kiln::set_cache_settings({kiln::CacheMode::off, before.directory, before.max_bytes});
  std::vector<double> total, nvrtc;
  for (int r = 0; r < 3; ++r) {
    auto k = kiln::jit(name, lambda, kiln::Options().on(kiln::Target::cuda));
    const double t0 = now_ms();
    call(k);
    total.push_back(now_ms() - t0);
    const std::string d = k.diagnostics();
    const auto at = d.find("codegen ");
    if (at != std::string::npos) nvrtc.push_back(std::atof(d.c_str() + at + 8));
  }
  row.compile_ms = median(total);
  row.nvrtc_ms = median(nvrtc);
  char dir[] = "/tmp/kiln-bench-gpu-cache-XXXXXX";
  if (mkdtemp(dir)) {
    kiln::set_cache_settings({kiln::CacheMode::on, dir, 1ull << 30});
    {
      auto k = kiln::jit(name, lambda, kiln::Options().on(kiln::Target::cuda));
      call(k);
      kiln::cache_flush();
    }
    auto k = kiln::jit(name, lambda, kiln::Options().on(kiln::Target::cuda));
    const double t0 = now_ms();
    call(k);
    row.disk_ms = now_ms() - t0;
    if (kiln::compile_history().back().cache != kiln::CacheSource::disk) row.disk_ms = -1;  // shown as such
    std::system(("rm -rf '" + std::string(dir) + "'").c_str());
  }
  kiln::set_cache_settings(before);
}

/// The largest difference relative to the reference's largest magnitude (kiln rounds every operation as
/// written; the reference is compiled with contraction into FMAs, so values near zero differ relatively).
std::string relative_check(const std::vector<float>& a, const std::vector<float>& b, double tol) {
  double scale = 0, worst = 0;
  for (float v : b) scale = std::max(scale, std::fabs(static_cast<double>(v)));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]) / std::max(scale, 1e-30);
    if (!(d <= worst)) worst = d;  // NaN stays
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s (%.1e)", worst <= tol ? "ok" : "MISMATCH", worst);
  return buf;
}

/// Sort keys of type T as bench/gpu/cub_primitives.cu makes them for CUB: floats uniform in [-1, 1) (f16 and
/// bf16 rounded from f32), integers over the type's whole range (a radix sort's passes run faster on keys whose
/// high bytes are nearly all equal, so a narrow range would flatter it).
template <class T>
std::vector<T> sort_keys(long long n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<T> v(static_cast<size_t>(n));
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    std::uniform_real_distribution<T> d(-1, 1);
    for (auto& x : v) x = d(g);
  } else if constexpr (std::is_same_v<T, kiln::half> || std::is_same_v<T, kiln::bfloat16>) {
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto& x : v) x = T(d(g));
  } else {
    for (auto& x : v) x = static_cast<T>(g());
  }
  return v;
}

/// Whether `order` is the stable sort of `h` in kiln's order (ir/sort_keys.hpp), that is std::stable_sort's result:
/// a permutation of the positions under which no key is less than the one before it, and equal keys keep their
/// positions increasing. A stable sort's result is unique, so this checks it exactly, in one pass.
template <class T>
bool is_stable_order(const std::vector<T>& h, const std::vector<std::int64_t>& order) {
  using Key = kiln::ir::sort::SortKey<T>;
  const auto n = static_cast<std::int64_t>(h.size());
  if (static_cast<std::int64_t>(order.size()) != n) return false;
  std::vector<char> seen(h.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t o = order[static_cast<size_t>(i)];
    if (o < 0 || o >= n || seen[static_cast<size_t>(o)]) return false;
    seen[static_cast<size_t>(o)] = 1;
    if (i == 0) continue;
    const std::int64_t p = order[static_cast<size_t>(i - 1)];
    const T& a = h[static_cast<size_t>(p)];
    const T& b = h[static_cast<size_t>(o)];
    if (Key::less(b, a) || (!Key::less(a, b) && p > o)) return false;
  }
  return true;
}

/// kiln::sort and kiln::argsort of 10^7 keys of type T into device arrays, median of `reps` each (the rows
/// `opt` selects). Checked bit for bit: the argsort's positions by is_stable_order (std::stable_sort's unique
/// answer, checked in one pass), the sort's keys against the input gathered through those checked positions.
template <class T>
void sort_rows_of(EventTimer& timer, int reps, const char* name, bool sort, bool argsort) {
  const long long n = 10'000'000;
  const std::vector<T> h = sort_keys<T>(n, 1);
  DeviceArray<T> x({n}), out({n});
  DeviceArray<std::int64_t> order_out({n});
  x.copy_from(h);
  const kiln::Options on_gpu = kiln::Options().on(kiln::Target::cuda);
  auto ks = kiln::jit("sort_" + std::string(name), [](kiln::Array<T> a, kiln::Array<T> o) { o(kiln::all) = kiln::sort(a); }, on_gpu);
  auto ka = kiln::jit("argsort_" + std::string(name),
                      [](kiln::Array<T> a, kiln::Array<std::int64_t> o) { o(kiln::all) = kiln::argsort(a); }, on_gpu);
  auto time = [&](const std::function<void()>& f) {
    f(), f();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) t.push_back(timer.ms(f));
    return median(t);
  };
  auto print = [&](const char* kind, double ms, bool ok) {
    const std::string row = std::string(kind) + name;
    std::printf("  %-12s %9.3f ms %7.2f Gkeys/s  %s\n", row.c_str(), ms, static_cast<double>(n) / ms / 1e6, ok ? "ok" : "MISMATCH");
  };
  // The positions are needed to check the sort too: an argsort runs (untimed when its row is not selected).
  const double argsort_ms = argsort ? time([&] { ka(x, order_out); }) : (ka(x, order_out), 0.0);
  const std::vector<std::int64_t> order = order_out.to_host().to_vector();
  const bool order_ok = is_stable_order(h, order);
  if (argsort) print("argsort_", argsort_ms, order_ok);
  if (!sort) return;
  const double sort_ms = time([&] { ks(x, out); });
  std::vector<T> sorted(static_cast<size_t>(n));
  for (size_t i = 0; i < sorted.size() && order_ok; ++i) sorted[i] = h[static_cast<size_t>(order[i])];
  const std::vector<T> got = out.to_host().to_vector();
  print("sort_", sort_ms, order_ok && std::memcmp(got.data(), sorted.data(), sorted.size() * sizeof(T)) == 0);
}

/// kiln::sort and kiln::argsort of 10^7 keys of every numeric key type; the same rows for CUB:
/// bench/gpu/cub_primitives.cu (same key distributions), CuPy: bench/gpu/cupy_sort.py. `--filter sort` runs them
/// all, `--filter sort_i32,argsort_f64` the rows it names.
void sort_rows(EventTimer& timer, const Options& opt) {
  bool header = false;
  auto rows = [&]<class T>(const char* name) {
    const bool sort = opt.selected("sort") || opt.selected(std::string("sort_") + name);
    const bool argsort = opt.selected("sort") || opt.selected(std::string("argsort_") + name);
    if (!sort && !argsort) return;
    if (!header) std::printf("\nsorts of 10000000 keys (compare with bench/gpu/cub_primitives.cu, CUB's radix sort):\n");
    header = true;
    sort_rows_of<T>(timer, opt.reps, name, sort, argsort);
  };
  rows.operator()<double>("f64");
  rows.operator()<float>("f32");
  rows.operator()<kiln::half>("f16");
  rows.operator()<kiln::bfloat16>("bf16");
  rows.operator()<std::int64_t>("i64");
  rows.operator()<std::int32_t>("i32");
  rows.operator()<std::int16_t>("i16");
  rows.operator()<std::int8_t>("i8");
  rows.operator()<std::uint64_t>("u64");
  rows.operator()<std::uint32_t>("u32");
  rows.operator()<std::uint16_t>("u16");
  rows.operator()<std::uint8_t>("u8");
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) opt.reps = std::max(5, std::atoi(argv[++i]));
    else if (a == "--n" && i + 1 < argc) opt.n = std::atoll(argv[++i]);
    else if (a == "--side" && i + 1 < argc) opt.side = std::atoll(argv[++i]);
    else if (a == "--side3" && i + 1 < argc) opt.side3 = std::max(3ll, std::atoll(argv[++i]));
    else if (a == "--filter" && i + 1 < argc) opt.filter = argv[++i];
    else if (a == "--profile") opt.profile = true, opt.reps = 3;
    else if (a == "--cupy" && i + 1 < argc) opt.cupy_file = argv[++i];
    else if (a == "--small") opt.small = true;
    else {
      std::fprintf(stderr, "usage: kiln-bench-gpu [--reps R] [--n N] [--side S] [--side3 S] [--filter a,b] [--profile] [--cupy FILE] [--small]\n");
      return 2;
    }
  }
  g_profile = opt.profile;
  if (!kiln::cuda::available()) {
    std::printf("kiln-bench-gpu: skipped: %s\n", kiln::cuda::unavailable_reason().c_str());
    return 0;
  }
  gpu::Device& dev = gpu::device(kiln::cuda::current_device());
  dev.bind();
  const gpu::DeviceInfo& info = dev.info();
  std::printf("device: %s (%s, %d SMs, %.0f GiB); n = %lld floats, jacobi %lld^2, median of %d\n", info.name.c_str(), info.arch().c_str(),
              info.sm_count, static_cast<double>(info.memory_bytes) / (1 << 30), opt.n, opt.side, opt.reps);
  // NVRTC 12.9+ keeps what it compiled in the driver's compute cache (~/.nv/ComputeCache, across processes): a
  // source compiled before costs its C++ front end only (20-45 ms on the H100 where compiling took 116-745 ms).
  // A cold column is a compile only with CUDA_CACHE_DISABLE=1, or where the source differs from the warm-up's.
  const char* nvrtc_cache = std::getenv("CUDA_CACHE_DISABLE");
  const bool nvrtc_cache_on = !nvrtc_cache || std::strcmp(nvrtc_cache, "1") != 0;
  std::printf("cold compiles: kiln's disk cache off; NVRTC's compute cache %s\n",
              nvrtc_cache_on ? "on (a source compiled before costs its front end only; CUDA_CACHE_DISABLE=1 to time compiles)"
                             : "off (CUDA_CACHE_DISABLE=1)");
  const benchgpu::Reference ref(dev, true), exact(dev, false);
  EventTimer timer(dev);
  const long long n = opt.n;
  const double nb = static_cast<double>(n) * sizeof(float);

  // The ceiling: a device-to-device copy of a large buffer, bytes read plus bytes written.
  double ceiling_gbps = 0;
  {
    DeviceArray<float> src({1ll << 28}), dst({1ll << 28});
    fill(src, -1, 1, 1);
    const double bytes = 2.0 * static_cast<double>(src.bytes());
    std::vector<double> t;
    for (int r = 0; r < opt.reps + 2; ++r)
      t.push_back(timer.ms([&] {
        gpu::check(gpu::driver().cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst.data()), reinterpret_cast<CUdeviceptr>(src.data()),
                                                   src.bytes(), dev.stream()),
                   "cuMemcpyDtoDAsync");
      }));
    t.erase(t.begin(), t.begin() + 2);
    ceiling_gbps = bytes / (median(t) * 1e6);
    std::printf("copy ceiling (cuMemcpyDtoD of %.0f MiB, read + write): %.0f GB/s\n", static_cast<double>(src.bytes()) / (1 << 20), ceiling_gbps);
  }

  std::vector<Row> rows;
  if (opt.selected("fused_abc")) {
    Row row("fused a*b+c", 4 * nb, "stream");
    DeviceArray<float> a({n}), b({n}), c({n}), out({n}), out_ref({n});
    fill(a, -1, 1, 1), fill(b, -1, 1, 2), fill(c, -1, 1, 3);
    auto k = kiln::jit("fused_abc", benchgpu::fused_abc, kiln::Options().on(kiln::Target::cuda));
    time_rows(timer, opt.reps, [&] { k(a, b, c, out); }, [&](const benchgpu::Reference& h) { h.fused(a.data(), b.data(), c.data(), out_ref.data(), n); }, ref, exact, row);
    row.check = relative_check(out.to_vector(), out_ref.to_vector(), 1e-6);
    DeviceArray<float> t1({1}), t2({1}), t3({1}), t4({1});
    cold_compile(row, benchgpu::fused_abc, "fused_abc", [&](auto& kk) { kk(t1, t2, t3, t4); });
    rows.push_back(row);
  }
  if (opt.selected("dot")) {
    Row row("dot", 2 * nb, "reduce");
    DeviceArray<float> x({n}), y({n});
    fill(x, -1, 1, 4), fill(y, -1, 1, 5);
    auto k = kiln::jit("dot", benchgpu::dot, kiln::Options().on(kiln::Target::cuda));
    float got = 0, want = 0;
    time_rows(timer, opt.reps, [&] { got = k(x, y); }, [&](const benchgpu::Reference& h) { want = h.dot(x.data(), y.data(), n); }, ref, exact, row);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s (%.6g vs %.6g)", std::fabs(got - want) <= 1e-3 * std::sqrt(static_cast<double>(n)) ? "ok" : "MISMATCH", got, want);
    row.check = buf;
    DeviceArray<float> t1({1}), t2({1});
    cold_compile(row, benchgpu::dot, "dot", [&](auto& kk) { kk(t1, t2); });
    rows.push_back(row);
  }
  if (opt.selected("pi")) {
    Row row("pi (2e8 terms)", 0);
    const long long terms = 200'000'000;
    auto k = kiln::jit("pi", benchgpu::pi, kiln::Options().on(kiln::Target::cuda));
    double got = 0, want = 0;
    time_rows(timer, opt.reps, [&] { got = k(terms); }, [&](const benchgpu::Reference& h) { want = h.pi(terms); }, ref, exact, row);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s (%.15f)", std::fabs(got - want) < 1e-12 && std::fabs(got - std::numbers::pi) < 1e-9 ? "ok" : "MISMATCH", got);
    row.check = buf;
    cold_compile(row, benchgpu::pi, "pi", [&](auto& kk) { kk(10); });
    rows.push_back(row);
  }
  if (opt.selected("softmax")) {
    Row row("softmax (3 passes)", 4 * nb, "reduce");
    DeviceArray<float> x({n}), out({n}), out_ref({n});
    fill(x, -8, 8, 6);
    auto k = kiln::jit("softmax", benchgpu::softmax, kiln::Options().on(kiln::Target::cuda));
    time_rows(timer, opt.reps, [&] { k(x, out); }, [&](const benchgpu::Reference& h) { h.softmax(x.data(), out_ref.data(), n); }, ref, exact, row);
    row.check = relative_check(out.to_vector(), out_ref.to_vector(), 1e-3);
    DeviceArray<float> t1({4}), t2({4});
    cold_compile(row, benchgpu::softmax, "softmax", [&](auto& kk) { kk(t1, t2); });
    rows.push_back(row);
  }
  if (opt.selected("smooth1d")) {
    Row row("smooth1d", 2 * nb, "stream");
    DeviceArray<float> x({n}), out({n}), out_ref({n});
    fill(x, -1, 1, 7);
    auto k = kiln::jit("smooth1d", benchgpu::smooth1d, kiln::Options().on(kiln::Target::cuda));
    time_rows(timer, opt.reps, [&] { k(x, out); }, [&](const benchgpu::Reference& h) { h.smooth1d(x.data(), out_ref.data(), n); }, ref, exact, row);
    row.check = relative_check(out.to_vector(), out_ref.to_vector(), 1e-5);
    DeviceArray<float> t1({4}), t2({4});
    cold_compile(row, benchgpu::smooth1d, "smooth1d", [&](auto& kk) { kk(t1, t2); });
    rows.push_back(row);
  }
  if (opt.selected("jacobi2d")) {
    const long long s = opt.side;
    Row row("jacobi2d " + std::to_string(s) + "^2", 2.0 * static_cast<double>(s) * static_cast<double>(s) * sizeof(float), "stream");
    DeviceArray<float> a({s, s}), out({s, s}), out_ref({s, s});
    DeviceArray<float> flat({s * s});
    fill(flat, 0, 1, 8);
    a.copy_from(flat);
    const auto zero = std::vector<float>(static_cast<std::size_t>(s * s), 0.0f);
    out.copy_from(zero), out_ref.copy_from(zero);
    auto k = kiln::jit("jacobi2d", benchgpu::jacobi2d, kiln::Options().on(kiln::Target::cuda));
    time_rows(timer, opt.reps, [&] { k(a, out); },
              [&](const benchgpu::Reference& h) { h.jacobi2d(a.data(), out_ref.data(), static_cast<int>(s), static_cast<int>(s)); }, ref, exact,
              row);
    row.check = relative_check(out.to_vector(), out_ref.to_vector(), 1e-6);
    DeviceArray<float> t1({3, 3}), t2({3, 3});
    cold_compile(row, benchgpu::jacobi2d, "jacobi2d", [&](auto& kk) { kk(t1, t2); });
    rows.push_back(row);
  }
  if (opt.selected("wave2d")) {
    // A time loop in one kernel: 30 leapfrog steps of a 2-d wave (a 5-point stencil each) on (side/4)^2
    // floats, the buffers rotated by kiln::swap; each step reads two buffers and writes a third.
    const long long s = std::max(8LL, opt.side / 4);
    const int steps = 30;
    Row row("wave2d " + std::to_string(s) + "^2 x " + std::to_string(steps) + " steps",
            3.0 * steps * static_cast<double>(s) * static_cast<double>(s) * sizeof(float), "stream");
    DeviceArray<float> flat({s * s});
    DeviceArray<float> p({s, s}), c({s, s}), x({s, s}), pr({s, s}), cr({s, s}), xr({s, s});
    fill(flat, -1, 1, 9), p.copy_from(flat), pr.copy_from(flat);
    fill(flat, -1, 1, 10), c.copy_from(flat), cr.copy_from(flat), x.copy_from(flat), xr.copy_from(flat);
    auto k = kiln::jit("wave2d", benchgpu::wave2d, kiln::Options().on(kiln::Target::cuda));
    // Every run advances the state: the check compares one kiln run with one reference run from equal states.
    time_rows(timer, opt.reps, [&] { k(p, c, x, std::int64_t{steps}); },
              [&](const benchgpu::Reference& h) { h.wave2d(pr.data(), cr.data(), xr.data(), static_cast<int>(s), static_cast<int>(s), steps); },
              ref, exact, row);
    fill(flat, -1, 1, 9), p.copy_from(flat), pr.copy_from(flat);
    fill(flat, -1, 1, 10), c.copy_from(flat), cr.copy_from(flat), x.copy_from(flat), xr.copy_from(flat);
    k(p, c, x, std::int64_t{steps});
    exact.wave2d(pr.data(), cr.data(), xr.data(), static_cast<int>(s), static_cast<int>(s), steps);
    exact.synchronize();
    row.check = relative_check(c.to_vector(), cr.to_vector(), 1e-6);
    DeviceArray<float> t1({4, 4}), t2({4, 4}), t3({4, 4});
    cold_compile(row, benchgpu::wave2d, "wave2d", [&](auto& kk) { kk(t1, t2, t3, std::int64_t{3}); });
    rows.push_back(row);
  }
  if (opt.selected("black_scholes")) {
    Row row("black_scholes", 5 * nb, "stream");
    DeviceArray<float> s({n}), kk({n}), t({n}), call({n}), put({n}), call_ref({n}), put_ref({n});
    fill(s, 10, 100, 9), fill(kk, 10, 100, 10), fill(t, 0.1f, 2, 11);
    auto k = kiln::jit("black_scholes", benchgpu::black_scholes, kiln::Options().on(kiln::Target::cuda));
    const float r = 0.02f, v = 0.3f;
    time_rows(timer, opt.reps, [&] { k(s, kk, t, call, put, r, v); },
              [&](const benchgpu::Reference& h) { h.black_scholes(s.data(), kk.data(), t.data(), call_ref.data(), put_ref.data(), n, r, v); },
              ref, exact, row);
    row.check = relative_check(call.to_vector(), call_ref.to_vector(), 1e-3);
    DeviceArray<float> t1({1}), t2({1}), t3({1}), t4({1}), t5({1});
    cold_compile(row, benchgpu::black_scholes, "black_scholes", [&](auto& kb) { kb(t1, t2, t3, t4, t5, r, v); });
    rows.push_back(row);
  }

  // 3-d stencils with a nearest border (issue 16): kiln::stencil and the same as a prange with clamped
  // indices, against a plain hand kernel (one element per thread, clamped reads); CuPy's
  // cupyx.scipy.ndimage.correlate of the same weights: bench/gpu/cupy_stencil3d.py.
  struct Stencil3d {
    const char* name;
    int points;
    bool clamped;
  };
  for (const Stencil3d& st : {Stencil3d{"star7", 7, false}, Stencil3d{"star7_clamped", 7, true}, Stencil3d{"cube27", 27, false},
                              Stencil3d{"cube27_clamped", 27, true}}) {
    if (!opt.selected(st.name) && !opt.selected("stencil3d")) continue;
    const long long s3 = opt.side3;
    Row row(std::string(st.name) + " " + std::to_string(s3) + "^3", 2.0 * static_cast<double>(s3 * s3 * s3) * sizeof(float), "stream");
    DeviceArray<float> flat({s3 * s3 * s3}), a({s3, s3, s3}), out({s3, s3, s3}), out_ref({s3, s3, s3});
    fill(flat, 0, 1, 30 + st.points);
    a.copy_from(flat);
    auto run = [&](const auto& lambda) {
      auto k = kiln::jit(st.name, lambda, kiln::Options().on(kiln::Target::cuda));
      time_rows(timer, opt.reps, [&] { k(a, out); },
                [&](const benchgpu::Reference& h) { h.stencil3d(st.points, a.data(), out_ref.data(), static_cast<int>(s3), static_cast<int>(s3), static_cast<int>(s3)); },
                ref, exact, row);
      row.check = relative_check(out.to_vector(), out_ref.to_vector(), 1e-5);
      DeviceArray<float> t1({5, 7, 9}), t2({5, 7, 9});
      cold_compile(row, lambda, st.name, [&](auto& kk) { kk(t1, t2); });
    };
    if (st.points == 7 && st.clamped) run(benchgpu::star7_clamped);
    else if (st.points == 7) run(benchgpu::star7_stencil);
    else if (st.clamped) run(benchgpu::cube27_clamped);
    else run(benchgpu::cube27_stencil);
    rows.push_back(row);
  }

  if (opt.selected("row_stats")) {
    // Per-row statistics: each row reduced by a group of threads (cooperative rows); the minimum traffic
    // is one read of x and the three results.
    const long long rs = 4000, cs = 5000;
    Row row("row mean/var/std 4000x5000", static_cast<double>(rs * cs + 3 * rs) * sizeof(float), "reduce");
    DeviceArray<float> flat({rs * cs}), x({rs, cs});
    fill(flat, -1, 1, 12);
    x.copy_from(flat);
    DeviceArray<float> m({rs}), v({rs}), sd({rs}), m_ref({rs}), v_ref({rs}), sd_ref({rs});
    auto k = kiln::jit("row_stats", benchgpu::row_stats, kiln::Options().on(kiln::Target::cuda));
    time_rows(timer, opt.reps, [&] { k(x, m, v, sd); },
              [&](const benchgpu::Reference& h) { h.row_stats(x.data(), m_ref.data(), v_ref.data(), sd_ref.data(), static_cast<int>(rs), static_cast<int>(cs)); },
              ref, exact, row);
    row.check = relative_check(v.to_vector(), v_ref.to_vector(), 1e-5) + " " + relative_check(sd.to_vector(), sd_ref.to_vector(), 1e-5) + " " +
                relative_check(m.to_vector(), m_ref.to_vector(), 1e-3);
    DeviceArray<float> t1({3, 5}), t2({3}), t3({3}), t4({3});
    cold_compile(row, benchgpu::row_stats, "row_stats", [&](auto& kk) { kk(t1, t2, t3, t4); });
    rows.push_back(row);
  }

  if (opt.selected("nbody")) {
    // Compute-bound: all pairs of 65 536 bodies, 20 flops each (a division and a square root among them); the
    // hand kernel stages bodies in shared memory, and so does kiln (a tiled loop, codegen/cuda/emit_tiled.cpp).
    const long long nb_bodies = 65536;
    Row row("nbody 65536 (all pairs)", 0);
    DeviceArray<float> x({nb_bodies}), y({nb_bodies}), z({nb_bodies}), m({nb_bodies});
    fill(x, -1, 1, 21), fill(y, -1, 1, 22), fill(z, -1, 1, 23), fill(m, 0.5f, 1, 24);
    DeviceArray<float> ax({nb_bodies}), ay({nb_bodies}), az({nb_bodies}), rx({nb_bodies}), ry({nb_bodies}), rz({nb_bodies});
    auto k = kiln::jit("nbody", benchgpu::nbody, kiln::Options().on(kiln::Target::cuda));
    time_rows(timer, std::max(3, opt.reps / 4), [&] { k(ax, ay, az, x, y, z, m, benchgpu::kNbodyEps2); },
              [&](const benchgpu::Reference& h) { h.nbody(x.data(), y.data(), z.data(), m.data(), rx.data(), ry.data(), rz.data(), static_cast<int>(nb_bodies)); },
              ref, exact, row);
    // Against the exact reference (--fmad=false, kiln's rounding): the same sums in the same order.
    exact.nbody(x.data(), y.data(), z.data(), m.data(), rx.data(), ry.data(), rz.data(), static_cast<int>(nb_bodies));
    exact.synchronize();
    row.check = relative_check(ax.to_vector(), rx.to_vector(), 1e-6) + " " + relative_check(az.to_vector(), rz.to_vector(), 1e-6);
    DeviceArray<float> t1({3}), t2({3}), t3({3}), t4({3}), t5({3}), t6({3}), t7({3});
    cold_compile(row, benchgpu::nbody, "nbody", [&](auto& kk) { kk(t1, t2, t3, t4, t5, t6, t7, benchgpu::kNbodyEps2); });
    rows.push_back(row);
  }

  if (opt.selected("hist_atomic")) {
    // A histogram by atomics (kiln::atomic_add at data-dependent bins) against the same by hand: one global
    // atomicAdd per element into 256 int32 bins. Both start from zero and run equally often: exact counts.
    const int bins = 256;
    Row row("histogram atomics 256", nb);
    DeviceArray<float> x({n});
    fill(x, 0, 1, 13);
    const auto zero = std::vector<std::int32_t>(bins, 0);
    DeviceArray<std::int32_t> hist({bins}), hist_ref({bins});
    hist.copy_from(zero), hist_ref.copy_from(zero);
    auto k = kiln::jit("hist_atomic", hist_atomic, kiln::Options().on(kiln::Target::cuda));
    time_rows(timer, opt.reps, [&] { k(x, hist); },
              [&](const benchgpu::Reference& h) { h.histogram_atomic(x.data(), n, hist_ref.data(), bins); }, ref, exact, row);
    // The hand kernel ran twice per kiln run (hand and hand=): halve its counts.
    const std::vector<std::int32_t> got = hist.to_vector(), want = hist_ref.to_vector();
    bool same = true;
    long long total = 0;
    for (int b = 0; b < bins; ++b) same = same && 2 * static_cast<long long>(got[b]) == want[b], total += got[b];
    row.check = same && total % n == 0 ? "ok" : "MISMATCH";
    DeviceArray<float> t1({1});
    fill(t1, 0, 1, 14);
    DeviceArray<std::int32_t> t2({4});
    cold_compile(row, hist_atomic, "hist_atomic", [&](auto& kk) { kk(t1, t2); });
    rows.push_back(row);
  }

  // Sorts (issue 19): kiln::sort and kiln::argsort of 10^7 keys into device arrays. No hand-written reference
  // here: bench/gpu/cupy_sort.py times CuPy (CUB's radix sort) on the same keys for the comparison.
  sort_rows(timer, opt);

  // Random numbers (issue 19): kiln::random against hand-written CUDA Philox of the same numbers.
  if (!opt.filter.empty() && opt.selected("contraction"))  // only when named: not part of the default rows
    benchgpu::contraction_rows([&](const std::function<void()>& f) { return timer.ms(f); }, opt.reps);
  if (!opt.filter.empty() && opt.selected("products"))  // only when named: exact and fast_math products, f64 and f32
    benchgpu::product_rows([&](const std::function<void()>& f) { return timer.ms(f); }, opt.reps);
  if (opt.selected("random")) benchgpu::random_rows(dev, [&](const std::function<void()>& f) { return timer.ms(f); }, opt.reps, n);

  // Prefix sums (issue 19): kiln::cumsum against hand-written CUDA scans (CuPy's: bench/gpu/cupy_cumsum.py).
  if (opt.selected("cumsum"))
    benchgpu::scan_rows(dev, [&](const std::function<void()>& f) { return timer.ms(f); }, opt.reps, n, opt.side / 2);
  if (!opt.filter.empty() && opt.selected("cumsum_floats"))  // only when named: the 1-d f64 and f32 sums alone
    benchgpu::scan_float_rows([&](const std::function<void()>& f) { return timer.ms(f); }, opt.reps, n);
  if (!opt.filter.empty() && opt.selected("cumsum_axis0"))  // only when named: the matrix along axis 0 alone
    benchgpu::scan_rows(dev, [&](const std::function<void()>& f) { return timer.ms(f); }, opt.reps, n, opt.side / 2, true);

  // The public kernel suite (issue 16): only when the filter names it or one of its kernels.
  int suite_mismatches = 0;
  if (!opt.filter.empty()) {
    benchgpu::SuiteOptions so;
    so.reps = opt.reps;
    so.selected = [&](const std::string& name) { return opt.selected("suite") || opt.selected(name); };
    so.profile = opt.profile;
    so.ceiling_gbps = ceiling_gbps;
    so.cupy_file = opt.cupy_file;
    so.small = opt.small;
    suite_mismatches = benchgpu::suite_rows(so);
  }

  // Launch overhead: a whole call (launch + synchronize) on a tiny input, a launch inside a host time loop,
  // and the same for hand-written launches of an empty kernel.
  double call_us = 0, hand_call_us = 0, loop_launch_us = 0, hand_launch_us = 0;
  if (!opt.profile) {
    auto saxpy = kiln::jit("tiny", [](kiln::Float a, kiln::Array<float> x) { kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = a * x[i]; }); },
                           kiln::Options().on(kiln::Target::cuda));
    auto steps = kiln::jit("steps", [](kiln::Array<float> x, kiln::Int count) {
      kiln::range(count, [&](kiln::Int) { kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = x[i] * 0.5f; }); });
    }, kiln::Options().on(kiln::Target::cuda));
    DeviceArray<float> x({1});
    saxpy(1.0f, x);
    steps(x, 10);
    const int calls = 1000;
    std::vector<double> a, b, c, d;
    for (int r = 0; r < 7; ++r) {
      double t0 = now_ms();
      for (int i = 0; i < calls; ++i) saxpy(1.0f, x);
      a.push_back((now_ms() - t0) * 1e3 / calls);
      t0 = now_ms();
      for (int i = 0; i < calls; ++i) ref.empty(), ref.synchronize();
      b.push_back((now_ms() - t0) * 1e3 / calls);
      t0 = now_ms();
      steps(x, calls);
      c.push_back((now_ms() - t0) * 1e3 / calls);
      t0 = now_ms();
      for (int i = 0; i < calls; ++i) ref.empty();
      ref.synchronize();
      d.push_back((now_ms() - t0) * 1e3 / calls);
    }
    call_us = median(a), hand_call_us = median(b), loop_launch_us = median(c), hand_launch_us = median(d);
  }

  std::printf("\n%-22s %9s %9s %9s %9s %9s %7s %7s %7s %8s %8s %8s  %s\n", "row", "kiln ms", "hand ms", "hand= ms", "kiln GB/s",
              "hand GB/s", "%ceil", "ratio", "ratio=", "cold ms", "nvrtc ms", "disk ms", "check");
  int misses = 0;
  for (const Row& r : rows) {
    const double gk = r.bytes > 0 ? r.bytes / (r.kiln_ms * 1e6) : 0, gh = r.bytes > 0 ? r.bytes / (r.hand_ms * 1e6) : 0;
    const double pct = ceiling_gbps > 0 ? 100 * gk / ceiling_gbps : 0, ratio = r.kiln_ms / r.hand_ms;
    std::string verdict;
    const double need = r.target == "stream" ? 85 : r.target == "reduce" ? 75 : 0;
    if (need > 0 && pct < need) verdict += " below " + std::to_string(static_cast<int>(need)) + "%";
    if (ratio > 1.10) verdict += " ratio>1.10";
    if (!verdict.empty() || r.check.rfind("ok", 0) != 0) ++misses;
    // Compute-bound rows (no bytes) have no bandwidth columns.
    char bw[64] = "        -         -       -";
    if (r.bytes > 0) std::snprintf(bw, sizeof bw, "%9.0f %9.0f %6.1f%%", gk, gh, pct);
    std::printf("%-22s %9.3f %9.3f %9.3f %s %7.3f %7.3f %8.1f %8.1f %8.2f  %s%s\n", r.name.c_str(), r.kiln_ms, r.hand_ms, r.exact_ms, bw, ratio,
                r.kiln_ms / r.exact_ms, r.compile_ms, r.nvrtc_ms, r.disk_ms, r.check.c_str(), verdict.empty() ? "" : ("  MISS:" + verdict).c_str());
  }
  std::printf("\nhand= is the hand-written CUDA compiled with --fmad=false (kiln's rounding); ratio= is kiln over it\n");
  std::printf("copy ceiling %.0f GB/s; reference module compiled in %.1f ms (NVRTC)\n", ceiling_gbps, ref.compile_ms());
  std::printf("launch overhead: kiln call (launch + sync) %.1f us, hand launch + sync %.1f us; "
              "kiln launch in a host time loop %.2f us, hand back-to-back launch %.2f us\n",
              call_us, hand_call_us, loop_launch_us, hand_launch_us);
  std::printf("targets: streaming >= 85%% of the copy ceiling, dot/softmax >= 75%%, ratio <= 1.10: %s\n",
              misses ? (std::to_string(misses) + " row(s) miss").c_str() : "all met");
  // A result that differs from the hand-written kernel's fails the run (as kiln-suite's do on the CPU).
  return suite_mismatches ? 1 : 0;
}
