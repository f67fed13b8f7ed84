// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LSD radix sort, 8-bit digits, on ir/sort_keys.hpp's codes. One row is cut into one contiguous chunk per
// thread; each pass counts its digit per chunk, turns the counts into the chunk's first slot per digit
// (digit-major, chunk-minor: a digit's elements from earlier chunks come first, which is what keeps the sort
// stable) and scatters every chunk in order. Passes whose digit is the same for every key are skipped (the
// first read counts all digits at once). Keys that do not come back from their codes (-0.0 shares +0.0's
// code; NaN payloads) are sorted with their positions and gathered; argsort always carries positions, as
// 32-bit integers when the row allows. Many short rows run a row per thread instead. The result of a stable
// sort is unique, so it is the same for any number of threads.
#include "runtime/sort.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <new>
#include <numeric>
#include <vector>

#include "ir/sort_keys.hpp"
#include "runtime/parallel.hpp"

namespace kiln::runtime {
namespace {

using ir::sort::SortKey;

constexpr int kRadix = 256;
/// Fewest elements per thread for a row sorted by several threads (below it, barriers cost more than they save).
constexpr std::int64_t kMinPerThread = 1 << 16;
/// Rows up to this long are sorted by comparison (a radix pass's 256 counters cost more than the row).
constexpr std::int64_t kSmallRow = 64;

void sync(int threads) {
  if (threads > 1) {
#pragma omp barrier
  }
}

/// Runs f on one thread of the team, the others waiting at its end.
template <class F>
void once(int threads, F&& f) {
  if (threads == 1) return f();
#pragma omp single
  f();
}

/// Scratch of one row sort: two code buffers, two buffers of the positions that travel with the codes, and a
/// copy of the caller's positions (the payload the sort permutes).
template <class U, class I>
struct Scratch {
  std::unique_ptr<U[]> code[2];
  std::unique_ptr<I[]> pos[2];
  std::unique_ptr<std::int64_t[]> payload;
  std::int64_t capacity = 0;
  void reserve(std::int64_t n) {
    if (n <= capacity) return;
    for (auto& c : code) c.reset(new U[static_cast<size_t>(n)]);
    for (auto& p : pos) p.reset(new I[static_cast<size_t>(n)]);
    payload.reset(new std::int64_t[static_cast<size_t>(n)]);
    capacity = n;
  }
};

template <class T, class I>
class RowSort {
  using K = SortKey<T>;
  using U = typename K::Code;
  static constexpr int kPasses = sizeof(U);

 public:
  RowSort(T* x, std::int64_t* out_pos, std::int64_t n, Scratch<U, I>& s, int threads)
      : x_(x), out_(out_pos), n_(n), threads_(threads), counts_(static_cast<size_t>(threads)),
        hist_(static_cast<size_t>(threads)), exact_(static_cast<size_t>(threads)) {
    code_[0] = s.code[0].get();
    code_[1] = s.code[1].get();
    pos_[0] = s.pos[0].get();
    pos_[1] = s.pos[1].get();
    payload_ = s.payload.get();
  }

  /// The team that runs it, at most the threads it was made for.
  void set_threads(int threads) { threads_ = threads; }

  /// Run by each thread t of a team of threads_ (or by one thread alone).
  void run(int t) {
    const std::int64_t lo = n_ * t / threads_, hi = n_ * (t + 1) / threads_;
    encode(t, lo, hi);
    sync(threads_);
    once(threads_, [&] { plan(); });
    if (carry_ && !out_)
      for (std::int64_t i = lo; i < hi; ++i) pos_[0][i] = static_cast<I>(i);
    int cur = 0;
    for (size_t k = 0; k < passes_.size(); ++k) {
      const int p = passes_[k];
      auto& h = hist_[static_cast<size_t>(t)];
      if (k == 0) {
        std::copy_n(counts_[static_cast<size_t>(t)].begin() + p * kRadix, kRadix, h.begin());
      } else {
        h.fill(0);
        for (std::int64_t i = lo; i < hi; ++i) ++h[digit(code_[cur][i], p)];
      }
      sync(threads_);
      once(threads_, [&] { offsets(); });
      if (carry_) scatter<true>(cur, p, lo, hi, h);
      else scatter<false>(cur, p, lo, hi, h);
      sync(threads_);
      cur ^= 1;
    }
    finish(cur, lo, hi);
  }

 private:
  T* x_;
  std::int64_t* out_;
  std::int64_t n_;
  int threads_;
  U* code_[2];
  I* pos_[2];
  std::int64_t* payload_;
  std::vector<std::array<std::int64_t, kRadix * kPasses>> counts_;  // per thread: every pass's digits
  std::vector<std::array<std::int64_t, kRadix>> hist_;              // per thread: this pass's digits, then slots
  std::vector<char> exact_;
  std::vector<int> passes_;
  bool carry_ = false;  // positions travel with the codes
  bool exact_all_ = true;

  static int digit(U c, int p) { return static_cast<int>((c >> (8 * p)) & (kRadix - 1)); }

  void encode(int t, std::int64_t lo, std::int64_t hi) {
    auto& c = counts_[static_cast<size_t>(t)];
    c.fill(0);
    bool exact = true;
    U* code = code_[0];
    for (std::int64_t i = lo; i < hi; ++i) {
      const T v = x_[i];
      const U u = K::encode(v);
      code[i] = u;
      exact &= ir::sort::code_is_value(v);
      for (int p = 0; p < kPasses; ++p) ++c[static_cast<size_t>(p * kRadix + digit(u, p))];
    }
    if (out_)
      for (std::int64_t i = lo; i < hi; ++i) {
        pos_[0][i] = static_cast<I>(i);
        payload_[i] = out_[i];
      }
    exact_[static_cast<size_t>(t)] = exact;
  }

  /// The passes that move anything, and whether positions must travel.
  void plan() {
    for (int p = 0; p < kPasses; ++p) {
      bool trivial = false;
      for (int d = 0; d < kRadix && !trivial; ++d) {
        std::int64_t total = 0;
        for (int t = 0; t < threads_; ++t) total += counts_[static_cast<size_t>(t)][static_cast<size_t>(p * kRadix + d)];
        trivial = total == n_;
      }
      if (!trivial) passes_.push_back(p);
    }
    for (int t = 0; t < threads_; ++t) exact_all_ = exact_all_ && exact_[static_cast<size_t>(t)];
    carry_ = out_ || !exact_all_;
  }

  /// Counts to first slots: digit-major, chunk-minor.
  void offsets() {
    std::int64_t running = 0;
    for (int d = 0; d < kRadix; ++d)
      for (int t = 0; t < threads_; ++t) {
        auto& h = hist_[static_cast<size_t>(t)];
        const std::int64_t c = h[static_cast<size_t>(d)];
        h[static_cast<size_t>(d)] = running;
        running += c;
      }
  }

  template <bool Carry>
  void scatter(int cur, int p, std::int64_t lo, std::int64_t hi, std::array<std::int64_t, kRadix>& slot) {
    const U* from = code_[cur];
    U* to = code_[cur ^ 1];
    const I* pfrom = pos_[cur];
    I* pto = pos_[cur ^ 1];
    for (std::int64_t i = lo; i < hi; ++i) {
      const U c = from[i];
      const std::int64_t o = slot[static_cast<size_t>(digit(c, p))]++;
      to[o] = c;
      if constexpr (Carry) pto[o] = pfrom[i];
    }
  }

  /// Keys back into x (decoded, or gathered from the original row through the positions); the payload permuted.
  void finish(int cur, std::int64_t lo, std::int64_t hi) {
    if (out_)
      for (std::int64_t k = lo; k < hi; ++k) out_[k] = payload_[pos_[cur][k]];
    if (exact_all_) {
      for (std::int64_t k = lo; k < hi; ++k) x_[k] = ir::sort::decode<T>(code_[cur][k]);
      return;
    }
    // The other code buffer has the keys' size (a code is as wide as its key): the gathered row goes there
    // first, as x is still being read.
    T* gathered = reinterpret_cast<T*>(code_[cur ^ 1]);
    for (std::int64_t k = lo; k < hi; ++k) gathered[k] = x_[pos_[cur][k]];
    sync(threads_);
    std::memcpy(x_ + lo, gathered + lo, static_cast<size_t>(hi - lo) * sizeof(T));
  }
};

/// A short row by comparison, with the same order.
template <class T>
void small_row(T* x, std::int64_t* out, std::int64_t n) {
  std::array<std::int64_t, kSmallRow> order, payload;
  std::array<T, kSmallRow> row;
  std::iota(order.begin(), order.begin() + n, std::int64_t{0});
  std::stable_sort(order.begin(), order.begin() + n,
                   [x](std::int64_t a, std::int64_t b) { return SortKey<T>::less(x[a], x[b]); });
  std::copy_n(x, n, row.begin());
  for (std::int64_t k = 0; k < n; ++k) x[k] = row[static_cast<size_t>(order[static_cast<size_t>(k)])];
  if (!out) return;
  std::copy_n(out, n, payload.begin());
  for (std::int64_t k = 0; k < n; ++k) out[k] = payload[static_cast<size_t>(order[static_cast<size_t>(k)])];
}

template <class T, class I>
void sort_rows(T* keys, std::int64_t* positions, std::int64_t rows, std::int64_t n) {
  using U = typename SortKey<T>::Code;
  const int team = omp_in_parallel() ? 1 : std::max(1, num_threads());
  if (n <= kSmallRow) {
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1 && rows * n >= kMinPerThread)
    for (std::int64_t r = 0; r < rows; ++r) small_row(keys + r * n, positions ? positions + r * n : nullptr, n);
    return;
  }
  const int per_row = static_cast<int>(std::min<std::int64_t>(team, std::max<std::int64_t>(1, n / kMinPerThread)));
  if (rows == 1 || per_row * 2 > team) {
    // Rows one after another, each by the team.
    Scratch<U, I> s;
    s.reserve(n);
    for (std::int64_t r = 0; r < rows; ++r) {
      T* x = keys + r * n;
      std::int64_t* out = positions ? positions + r * n : nullptr;
      if (per_row == 1) {
        RowSort<T, I>(x, out, n, s, 1).run(0);
        continue;
      }
      RowSort<T, I> job(x, out, n, s, per_row);
#pragma omp parallel num_threads(per_row)
      {
        // The team OpenMP grants may be smaller: every thread of it takes a chunk.
#pragma omp single
        job.set_threads(omp_get_num_threads());
        job.run(omp_get_thread_num());
      }
    }
    return;
  }
  // Many rows: a row per thread, each with scratch of its own.
  bool failed = false;
#pragma omp parallel num_threads(team)
  {
    Scratch<U, I> s;
    try {
      s.reserve(n);
    } catch (const std::bad_alloc&) {
#pragma omp atomic write
      failed = true;
    }
#pragma omp barrier
    if (!failed) {
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t r = 0; r < rows; ++r)
        RowSort<T, I>(keys + r * n, positions ? positions + r * n : nullptr, n, s, 1).run(0);
    }
  }
  if (failed) throw std::bad_alloc();
}

template <class T>
void sort_typed(void* keys, std::int64_t* positions, std::int64_t rows, std::int64_t n) {
  if (n <= static_cast<std::int64_t>(UINT32_MAX)) sort_rows<T, std::uint32_t>(static_cast<T*>(keys), positions, rows, n);
  else sort_rows<T, std::uint64_t>(static_cast<T*>(keys), positions, rows, n);
}

}  // namespace
}  // namespace kiln::runtime

std::int32_t kiln_rt_sort(kiln::KernelStatus* status, std::int32_t dtype, void* keys, std::int64_t* positions,
                          std::int64_t rows, std::int64_t n, const char* name) noexcept {
  using namespace kiln::runtime;
  if (rows <= 0 || n <= 0) return 0;
  try {
    switch (static_cast<kiln::DType>(dtype)) {
      case kiln::DType::Bool: sort_typed<bool>(keys, positions, rows, n); break;
      case kiln::DType::I32: sort_typed<std::int32_t>(keys, positions, rows, n); break;
      case kiln::DType::I64: sort_typed<std::int64_t>(keys, positions, rows, n); break;
      case kiln::DType::F32: sort_typed<float>(keys, positions, rows, n); break;
      case kiln::DType::F64: sort_typed<double>(keys, positions, rows, n); break;
      case kiln::DType::U8: sort_typed<std::uint8_t>(keys, positions, rows, n); break;
      case kiln::DType::U16: sort_typed<std::uint16_t>(keys, positions, rows, n); break;
      case kiln::DType::U32: sort_typed<std::uint32_t>(keys, positions, rows, n); break;
      case kiln::DType::U64: sort_typed<std::uint64_t>(keys, positions, rows, n); break;
      case kiln::DType::I8: sort_typed<std::int8_t>(keys, positions, rows, n); break;
      case kiln::DType::I16: sort_typed<std::int16_t>(keys, positions, rows, n); break;
      case kiln::DType::F16: sort_typed<kiln::half>(keys, positions, rows, n); break;
      case kiln::DType::BF16: sort_typed<kiln::bfloat16>(keys, positions, rows, n); break;
    }
  } catch (const std::bad_alloc&) {
    const std::int64_t values[] = {rows, n};
    std::string message = "out of memory for the scratch buffers sorting the {} rows of {} elements of ";
    message += name ? name : "an array";
    kiln_rt_fail(status, kiln::kOutOfMemory, message.c_str(), values, 2);
    return kiln::kOutOfMemory;
  }
  return 0;
}
