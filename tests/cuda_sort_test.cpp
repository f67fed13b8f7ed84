// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::sort and kiln::argsort on the CUDA target (issue #19). Without a GPU: the radix kernels of every key type
// compile through NVRTC without a warning, and a sorting kernel offloads its maps while the sort stays host code
// whose program compiles. With one: the device sort against the interpreter and std::stable_sort for every key
// type, sizes 0, 1, primes, tile edges and a million, NaN, zeros and infinities, duplicates and rows; keys whose
// digits vary in some bytes only (skipped passes, the buffers' every order) and float rows of zeros and NaNs.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "codegen/cuda/device_machine.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/sort_kernels.hpp"
#include "cuda_rows.hpp"
#include "frontend/settings.hpp"
#include "ir/printer.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/module.hpp"
#include "tests/sort_test_util.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using namespace kiln::sorttest;

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

TEST(CudaSortCodegen, RadixKernelsCompileWithoutWarningsForEveryKeyType) {
  require_nvrtc();
  for (DType t : {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64}) {  // the others: element_types_cuda_test
    const cu::Binary b = cu::compile_source(cu::sort_source(t), "kiln_sort", "sm_90", {}, false);
    EXPECT_EQ(b.log.find("warning"), std::string::npos) << name_of(t) << ":\n" << b.log;
    for (const std::string& e : cu::sort_entries())
      EXPECT_NE(b.ptx.find(".entry " + e), std::string::npos) << name_of(t) << ": no entry " << e;
  }
}

// KILN_CUDA_SORT_ITEMS changes the tile (256 threads times the keys per thread): the smallest, odd counts and the
// largest compile (16, the default, is compiled above); above 16 an argsort's tile of positions outgrows static
// shared memory, so the kernels' shared memory is dynamic and sized by sort_shared (each kernel static_asserts
// that its struct fits). A count outside 4..32 is a ValueError naming the setting.
TEST(CudaSortCodegen, KeysPerThreadCompileAndAreChecked) {
  require_nvrtc();
  for (const auto& [items, t] : {std::pair{4, DType::I32}, std::pair{9, DType::F64}, std::pair{23, DType::I32},
                                 std::pair{32, DType::F64}, std::pair{32, DType::Bool}}) {
    const cu::Binary b = cu::compile_source(cu::sort_source(t, items), "kiln_sort", "sm_90", {}, false);
    EXPECT_EQ(b.log.find("warning"), std::string::npos) << name_of(t) << " items " << items << ":\n" << b.log;
    EXPECT_NE(b.ptx.find(".entry kiln_sort_pass"), std::string::npos) << name_of(t) << " items " << items;
  }
  for (int items : {3, 33}) {
    try {
      (void)cu::sort_source(DType::F32, items);
      ADD_FAILURE() << items << " keys per thread were accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("KILN_CUDA_SORT_ITEMS"), std::string::npos) << e.what();
    }
  }
}

// KILN_CUDA_SORT_MATCH: the digit passes find equal digits by votes (0), by __match_any_sync (1) or half the
// items each way (2, the default, compiled above); another value is a ValueError naming the setting.
TEST(CudaSortCodegen, EachWayOfMatchingDigitsCompilesAndOthersAreChecked) {
  require_nvrtc();
  for (int match : {0, 1, 2})
    for (DType t : {DType::I32, DType::F64}) {
      const cu::Binary b = cu::compile_source(cu::sort_source(t, cu::kSortItems, match), "kiln_sort", "sm_90", {}, false);
      EXPECT_EQ(b.log.find("warning"), std::string::npos) << name_of(t) << " match " << match << ":\n" << b.log;
      // The keys' digit pass itself matches (the small sort matches with __match_any_sync in any case).
      const std::size_t at = b.ptx.find(".entry kiln_sort_pass(");
      ASSERT_NE(at, std::string::npos) << name_of(t) << " match " << match;
      const std::string pass = b.ptx.substr(at, b.ptx.find(".entry", at + 1) - at);
      if (match != 0) {
        EXPECT_NE(pass.find("match.any"), std::string::npos) << name_of(t) << " match " << match;
      }
    }
  try {
    (void)cu::sort_source(DType::I32, cu::kSortItems, 3);
    ADD_FAILURE() << "match 3 was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("KILN_CUDA_SORT_MATCH"), std::string::npos) << e.what();
  }
}

TEST(CudaSortCodegen, TheSortStaysHostCodeBetweenLaunches) {
  require_nvrtc();
  const ir::Function f = cudatest::rows::lower_for_cuda(
      "sorted", [](Array<double, 2> x) { return std::tuple{kiln::sort(x * 2.0), kiln::argsort(x)}; }, {"x"}, 2);
  const std::string text = ir::to_string(f);
  EXPECT_NE(text.find("sort rows of"), std::string::npos) << text;
  EXPECT_NE(text.find("launch kernel 0"), std::string::npos) << text;
  const cu::Program prog = cu::emit_program(f, kiln::detail::cuda_options().emit);
  const cu::Binary b = cu::compile_source(prog.source(), f.name, "sm_90", {});
  EXPECT_EQ(b.log.find("warning"), std::string::npos) << b.log;
}

bool gpu_present() { return kiln::cuda::available(); }

/// Sort and argsort of `v` in shape `shape` on the GPU, bit for bit against the interpreter and std::stable_sort.
template <class T, int Rank>
void check_against_interpreter(const std::vector<std::int64_t>& shape, const std::vector<T>& v, const std::string& what) {
  auto body = [](Array<T, Rank> x) { return std::tuple{kiln::sort(x), kiln::argsort(x)}; };
  auto gpu = jit("sort_gpu", body, Options().on(Target::cuda));
  auto ref = jit("sort_ref", body, Options().on(Target::interpreter));
  NDArray<T> in(shape);
  std::copy(v.begin(), v.end(), in.data());
  auto [s, p] = gpu(in);
  auto [rs, rp] = ref(in);
  expect_sorted(in, s, p, what);
  ASSERT_EQ(std::memcmp(s.data(), rs.data(), v.size() * sizeof(T)), 0) << what;
  ASSERT_EQ(std::memcmp(p.data(), rp.data(), v.size() * 8), 0) << what;
}

template <class T, int Rank>
void against_interpreter(const std::vector<std::vector<std::int64_t>>& shapes, const char* type_name) {
  auto body = [](Array<T, Rank> x) { return std::tuple{kiln::sort(x), kiln::argsort(x)}; };
  auto gpu = jit("sort_gpu", body, Options().on(Target::cuda));
  auto ref = jit("sort_ref", body, Options().on(Target::interpreter));
  for (const auto& shape : shapes)
    for (int distinct : {3, 1 << 20}) {
      std::int64_t size = 1;
      for (auto e : shape) size *= e;
      NDArray<T> in(shape);
      const auto v = keys<T>(size, static_cast<std::uint64_t>(size + distinct), distinct);
      std::copy(v.begin(), v.end(), in.data());
      auto [s, p] = gpu(in);
      auto [rs, rp] = ref(in);
      const std::string what = std::string(type_name) + " size " + std::to_string(size);
      expect_sorted(in, s, p, what);
      ASSERT_EQ(std::memcmp(s.data(), rs.data(), static_cast<size_t>(size) * sizeof(T)), 0) << what;
      ASSERT_EQ(std::memcmp(p.data(), rp.data(), static_cast<size_t>(size) * 8), 0) << what;
    }
}

const std::vector<std::vector<std::int64_t>> kSizes1 = {{0}, {1}, {2}, {7}, {255}, {256}, {257}, {4095}, {4096}, {4097},
                                                      {65537}, {1'000'003}};
const std::vector<std::vector<std::int64_t>> kRows = {{0, 7}, {7, 0}, {5, 1}, {3, 13}, {300, 1009}, {2, 70001},
                                                     {37, 4096}, {37, 4097}, {3, 12289}};

TEST(CudaSortGpu, EveryKeyTypeMatchesTheInterpreter) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  against_interpreter<bool, 1>(kSizes1, "bool");
  against_interpreter<std::int32_t, 1>(kSizes1, "i32");
  against_interpreter<std::int64_t, 1>(kSizes1, "i64");
  against_interpreter<float, 1>(kSizes1, "f32");
  against_interpreter<double, 1>(kSizes1, "f64");
  against_interpreter<std::int8_t, 1>(kSizes1, "i8");
  against_interpreter<std::uint8_t, 1>(kSizes1, "u8");
  against_interpreter<std::int16_t, 1>(kSizes1, "i16");
  against_interpreter<std::uint16_t, 1>(kSizes1, "u16");
  against_interpreter<std::uint32_t, 1>(kSizes1, "u32");
  against_interpreter<std::uint64_t, 1>(kSizes1, "u64");
}

// Each key type's own tile (sort_items: keys per thread by key type, or KILN_CUDA_SORT_ITEMS): a row one short of
// it, filling it (the last sorted in shared memory), one over it and three tiles and one (the first sorted by the
// digit passes, with a last tile of one key), two tiles exactly (every tile of the digit passes full: the form
// without bounds checks alone) and rows of them.
template <class T>
void at_the_tile_edges(DType t, const char* type_name) {
  const std::int64_t tile = 256 * std::int64_t{cu::sort_items(t, kiln::detail::cuda_options().sort_items)};
  against_interpreter<T, 1>({{tile - 1}, {tile}, {tile + 1}, {2 * tile}, {3 * tile + 1}}, type_name);
  against_interpreter<T, 2>({{3, tile}, {3, tile + 1}, {3, 2 * tile}}, type_name);
}

TEST(CudaSortGpu, EveryKeyTypeMatchesTheInterpreterAtItsTileEdges) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  at_the_tile_edges<bool>(DType::Bool, "bool");
  at_the_tile_edges<std::int32_t>(DType::I32, "i32");
  at_the_tile_edges<std::int64_t>(DType::I64, "i64");
  at_the_tile_edges<float>(DType::F32, "f32");
  at_the_tile_edges<double>(DType::F64, "f64");
  at_the_tile_edges<std::uint8_t>(DType::U8, "u8");
  at_the_tile_edges<std::int16_t>(DType::I16, "i16");
  at_the_tile_edges<std::uint32_t>(DType::U32, "u32");
  at_the_tile_edges<std::uint64_t>(DType::U64, "u64");
}

// A row of 2^31 keys or more: its slots no longer fit an int, so the digit passes write through 64-bit slots
// (shorter rows use 32-bit ones). u16 keys over their whole range, two passes: the first writes codes, the
// second keys. Checked against a counting sort (for keys alone a stable sort's result is the sorted multiset).
TEST(CudaSortGpu, RowsOf2To31KeysOrMoreUseWideSlots) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  const std::int64_t n = (std::int64_t{1} << 31) + 4099;  // a partial last tile too
  // The keys, the result, a code buffer and 2 KiB of look-back words per tile of 4096: about 14 GB.
  const std::size_t memory = kiln::gpu::device(0).info().memory_bytes;
  if (memory < (std::size_t{24} << 30)) GTEST_SKIP() << "needs a device of 24 GB, this one has " << (memory >> 20) << " MB";
  std::vector<std::uint16_t> h(static_cast<size_t>(n));
  std::vector<std::int64_t> count(65536, 0);
  std::mt19937_64 g(31);
  for (std::size_t i = 0; i < h.size(); i += 4) {
    const std::uint64_t r = g();
    for (std::size_t j = 0; j < 4 && i + j < h.size(); ++j) {
      h[i + j] = static_cast<std::uint16_t>(r >> (16 * j));
      ++count[h[i + j]];
    }
  }
  DeviceArray<std::uint16_t> x({n}), out({n});
  x.copy_from(h);
  h.clear();
  h.shrink_to_fit();
  auto k = jit("sort_wide", [](Array<std::uint16_t> a, Array<std::uint16_t> o) { o(kiln::all) = kiln::sort(a); },
               Options().on(Target::cuda));
  k(x, out);
  const std::vector<std::uint16_t> s = out.to_host().to_vector();
  ASSERT_EQ(static_cast<std::int64_t>(s.size()), n);
  std::size_t at = 0;
  for (int v = 0; v < 65536; ++v)
    for (std::int64_t c = 0; c < count[static_cast<size_t>(v)]; ++c, ++at)
      if (s[at] != v) FAIL() << "element " << at << " is " << s[at] << ", want " << v;
}

TEST(CudaSortGpu, RowsAlongTheLastAxisMatchTheInterpreter) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  against_interpreter<double, 2>(kRows, "f64 rows");
  against_interpreter<std::int32_t, 2>(kRows, "i32 rows");
  against_interpreter<float, 3>({{2, 3, 17}, {4, 1, 5000}}, "f32 rank 3");
}

// i64 keys whose bytes vary only in `bytes` (a few values each, so equal keys abound): the other bytes' passes
// are skipped, and the active ones go through the buffers in every order (one pass: written back by the copy
// kernel; none: the keys stay). Rows of one tile (sorted in shared memory) and of many (the digit passes).
TEST(CudaSortGpu, SkippedPassesMatchTheInterpreter) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  const std::vector<std::vector<int>> patterns = {{}, {0}, {1}, {7}, {0, 2}, {3, 5, 6}, {1, 2, 3, 4}, {0, 1, 2, 3, 4, 5, 6, 7}};
  for (const auto& bytes : patterns)
    for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{{3000}, {70001}, {3, 20011}}) {
      std::int64_t size = 1;
      for (auto e : shape) size *= e;
      std::mt19937_64 g(static_cast<std::uint64_t>(size) + bytes.size());
      std::vector<std::int64_t> v(static_cast<size_t>(size), std::int64_t{0x0102030405060708});
      for (auto& x : v)
        for (int b : bytes) {
          const auto digit = static_cast<std::uint64_t>(g() % 5 * 60);
          x = static_cast<std::int64_t>((static_cast<std::uint64_t>(x) & ~(0xffull << (8 * b))) | digit << (8 * b));
        }
      std::string what = "i64 bytes {";
      for (int b : bytes) what += std::to_string(b) + " ";
      what += "} size " + std::to_string(size);
      if (shape.size() == 1) check_against_interpreter<std::int64_t, 1>(shape, v, what);
      else check_against_interpreter<std::int64_t, 2>(shape, v, what);
    }
}

// Float rows where a key does not come back from its code: -0.0 among +0.0 and NaNs of several payloads and
// signs, with and without other keys (all passes skipped when every key is a zero, or every key a NaN; one
// pass for zeros among the smallest subnormals), in rows of one tile and of many: each zero and NaN keeps its
// bits, in input order.
template <class T>
void zeros_and_nans(const char* type_name) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  U bits;
  std::memcpy(&bits, &nan, sizeof bits);
  bits |= 3;
  T payload;
  std::memcpy(&payload, &bits, sizeof bits);
  // The last kind's codes differ in their lowest byte only: one active pass, whose row the finishing kernel
  // copies back around the zeros it puts back.
  const T tiny = std::numeric_limits<T>::denorm_min();
  const std::vector<std::vector<T>> kinds = {{T(0), T(-0.0)}, {nan, -nan, payload}, {T(0), T(-0.0), nan, -nan, payload},
                                             {T(0), T(-0.0), nan, payload, T(-1.5), T(2), -std::numeric_limits<T>::infinity()},
                                             {T(0), T(-0.0), tiny, T(2) * tiny}};
  for (std::size_t kind = 0; kind < kinds.size(); ++kind)
    for (std::int64_t size : {4001, 50021}) {
      std::mt19937_64 g(static_cast<std::uint64_t>(size) * 7 + kind);
      std::vector<T> v(static_cast<size_t>(size));
      for (auto& x : v) x = kinds[kind][g() % kinds[kind].size()];
      check_against_interpreter<T, 1>({size}, v, std::string(type_name) + " zeros/NaNs kind " + std::to_string(kind) +
                                                     " size " + std::to_string(size));
      check_against_interpreter<T, 2>({2, size / 2}, std::vector<T>(v.begin(), v.begin() + size / 2 * 2),
                                      std::string(type_name) + " zeros/NaNs rows kind " + std::to_string(kind));
    }
}

TEST(CudaSortGpu, ZerosAndNaNsKeepTheirBitsAndOrder) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  zeros_and_nans<float>("f32");
  zeros_and_nans<double>("f64");
}

// Rows already in order, reversed, and of one key repeated: whole tiles share a digit in every pass (the
// tile's counts pile onto one digit, its ranks are one run), at sizes of many tiles (the look-back walks
// windows of earlier tiles).
TEST(CudaSortGpu, SortedReversedAndConstantRowsMatchTheInterpreter) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  for (std::int64_t n : {std::int64_t{70001}, std::int64_t{300007}}) {
    std::vector<std::int32_t> up(static_cast<size_t>(n)), down(static_cast<size_t>(n)), same(static_cast<size_t>(n), -7);
    std::vector<double> fup(static_cast<size_t>(n)), fdown(static_cast<size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      up[static_cast<size_t>(i)] = static_cast<std::int32_t>(i * 3 - n);
      down[static_cast<size_t>(i)] = static_cast<std::int32_t>(n - i * 3);
      fup[static_cast<size_t>(i)] = static_cast<double>(i) * 0.5 - 1000.0;
      fdown[static_cast<size_t>(i)] = 1000.0 - static_cast<double>(i) * 0.25;
    }
    const std::string size = " size " + std::to_string(n);
    check_against_interpreter<std::int32_t, 1>({n}, up, "i32 ascending" + size);
    check_against_interpreter<std::int32_t, 1>({n}, down, "i32 descending" + size);
    check_against_interpreter<std::int32_t, 1>({n}, same, "i32 constant" + size);
    check_against_interpreter<double, 1>({n}, fup, "f64 ascending" + size);
    check_against_interpreter<double, 1>({n}, fdown, "f64 descending" + size);
  }
}

// A sort's payload is argsort's positions, which the counting read finds to be the rows' indices, so the
// passes' sorted indices are the answer. Any other payload (the frontend makes none, but a SortStmt permutes
// whatever it holds) comes out permuted with the keys all the same: its tiles are set aside and each position is
// taken through its sorted index. Through sort_on_device itself, i64 rows of three tiles and more whose keys
// take every pass (row 0, 3), one pass (row 1: the finishing kernel brings it back) or none (row 2: all equal), with
// payloads that are the indices except in one tile (row 0), nowhere (rows 1, 2) and everywhere (row 3).
TEST(CudaSortGpu, PayloadsOtherThanTheIndicesArePermutedWithTheKeys) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  gpu::Device& dev = gpu::device(0);
  dev.bind();  // the module and the launches below need its context current on this thread
  const cu::CudaOptions o = kiln::detail::cuda_options();
  const int items = cu::sort_items(DType::I64, o.sort_items, dev.info().shared_per_block_optin);
  const int match = cu::sort_match(DType::I64, o.sort_match);
  const std::int64_t tile = 256 * std::int64_t{items}, n = 3 * tile + 17, rows = 4;
  std::mt19937_64 g(19);
  std::vector<std::int64_t> k(static_cast<size_t>(rows * n)), p(k.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto at = static_cast<size_t>(r * n + i);
      k[at] = r == 0 ? static_cast<std::int64_t>(g()) : r == 1 ? static_cast<std::int64_t>(g() % 7)
                     : r == 2 ? 5 : static_cast<std::int64_t>(g() % 1000) - 500;
      p[at] = (r == 0 && i / tile != 1) || r == 3 ? i : static_cast<std::int64_t>(g() >> 1);
    }
  std::vector<std::int64_t> want_k(k.size()), want_p(k.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<std::int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), r * n);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return k[static_cast<size_t>(a)] < k[static_cast<size_t>(b)]; });
    for (std::int64_t i = 0; i < n; ++i) {
      want_k[static_cast<size_t>(r * n + i)] = k[static_cast<size_t>(order[static_cast<size_t>(i)])];
      want_p[static_cast<size_t>(r * n + i)] = p[static_cast<size_t>(order[static_cast<size_t>(i)])];
    }
  }
  DeviceArray<std::int64_t> dk({rows * n}), dp({rows * n});
  dk.copy_from(k);
  dp.copy_from(p);
  const cu::Binary b = cu::compile_source(cu::sort_source(DType::I64, items, match), "kiln_sort", dev.info().arch(), {}, false);
  const gpu::Module module(dev, b.arch, b.cubin, b.ptx, cu::sort_entries());
  KernelStatus status{};
  const std::string label = "the payload test's sort";
  {
    cu::CallState call(dev, module, cu::CallNeeds(cu::Program{}), &status);
    cu::sort_on_device(call, DType::I64, reinterpret_cast<std::uint64_t>(dk.data()), reinterpret_cast<std::uint64_t>(dp.data()),
                       rows, n, items, match, "keys", label);
    gpu::check(gpu::driver().cuStreamSynchronize(call.stream), "the payload test's sort");
  }
  EXPECT_EQ(dk.to_vector(), want_k);
  const std::vector<std::int64_t> got = dp.to_vector();
  for (std::int64_t r = 0; r < rows; ++r)
    EXPECT_TRUE(std::equal(got.begin() + r * n, got.begin() + (r + 1) * n, want_p.begin() + r * n)) << "payload of row " << r;
}

// Results assigned into 1-d parameters: the sort works in the destination itself (no copy of the sorted keys
// or positions), bit for bit the interpreter's answer.
TEST(CudaSortGpu, SortsIntoParametersMatchTheInterpreter) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  auto body = [](Array<double, 1> x, Array<double, 1> out, Array<std::int64_t, 1> order) {
    out(kiln::all) = kiln::sort(x);
    order(kiln::all) = kiln::argsort(x);
  };
  auto gpu = jit("sort_into_gpu", body, Options().on(Target::cuda));
  auto ref = jit("sort_into_ref", body, Options().on(Target::interpreter));
  for (std::int64_t n : {std::int64_t{4000}, std::int64_t{1'000'003}}) {
    NDArray<double> in({n}), s({n}), rs({n});
    NDArray<std::int64_t> p({n}), rp({n});
    const auto v = keys<double>(n, static_cast<std::uint64_t>(n), 1 << 20);
    std::copy(v.begin(), v.end(), in.data());
    gpu(in, s, p);
    ref(in, rs, rp);
    const std::string what = "into parameters, size " + std::to_string(n);
    expect_sorted(in, s, p, what);
    ASSERT_EQ(std::memcmp(s.data(), rs.data(), static_cast<size_t>(n) * sizeof(double)), 0) << what;
    ASSERT_EQ(std::memcmp(p.data(), rp.data(), static_cast<size_t>(n) * 8), 0) << what;
  }
  EXPECT_NE(gpu.diagnostics().find("wrote sort straight into "), std::string::npos) << gpu.diagnostics();
  // Each sort's tile and the reason for it (sort_items_reason) are in the diagnostics.
  const cu::CudaOptions o = kiln::detail::cuda_options();
  EXPECT_NE(gpu.diagnostics().find(cu::sort_items_reason(DType::F64, o.sort_items, o.sort_match)), std::string::npos)
      << gpu.diagnostics();
  EXPECT_EQ(gpu.diagnostics().find("written from their digit counts"), std::string::npos) << gpu.diagnostics();
  EXPECT_NE(gpu.diagnostics().find("as 32-bit row indices"), std::string::npos) << gpu.diagnostics();  // the argsort
  // One-byte integer keys alone are written from their counts (sort_fills), and the diagnostics say so; their
  // argsort is not (it carries positions), nor are wider keys.
  auto bytes = jit("sort_bytes_gpu", [](Array<std::uint8_t, 1> x) { return std::tuple{kiln::sort(x), kiln::argsort(x)}; },
                   Options().on(Target::cuda));
  NDArray<std::uint8_t> in8({3});
  in8.data()[0] = 9, in8.data()[1] = 2, in8.data()[2] = 9;
  auto [sorted8, order8] = bytes(in8);
  EXPECT_EQ(sorted8.data()[0], 2);
  EXPECT_NE(bytes.diagnostics().find("written from their digit counts"), std::string::npos) << bytes.diagnostics();
  EXPECT_TRUE(cu::sort_fills(DType::U8, false) && cu::sort_fills(DType::I8, false) && cu::sort_fills(DType::Bool, false));
  EXPECT_FALSE(cu::sort_fills(DType::U8, true) || cu::sort_fills(DType::I16, false) || cu::sort_fills(DType::F16, false));
}

}  // namespace
}  // namespace kiln
