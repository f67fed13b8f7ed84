// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernel arguments for the tests and kiln-fuzz: host arrays in any layout (with gaps that must come back untouched),
// scalars, random contents, and the record of one run.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/stmt.hpp"
#include "kiln/abi.hpp"

namespace kiln::test_support {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- host arrays with arbitrary layouts -----------------------------------------------------------------

enum class Layout : std::uint8_t {
  RowMajor,
  ColumnMajor,  ///< transposed: the first axis has stride 1
  Padded,       ///< row-major with stride 2 along the last axis and a gap after every row
  Reversed,     ///< row-major with a negative stride on the first axis
  RowGaps,      ///< unit stride along the last axis, a gap after every row (allowed for unit_stride parameters)
};

/// An array of any element type in storage that may be larger than its elements (the gaps hold a known pattern that
/// must never be written). Copies are deep, so every run gets its own inputs.
class TestArray {
 public:
  TestArray(DType t, std::vector<std::int64_t> shape, Layout layout = Layout::RowMajor);
  TestArray(const TestArray& o);
  TestArray& operator=(const TestArray& o);

  DType elem() const { return elem_; }
  ArrayDesc& desc() { return desc_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::int64_t size() const;
  /// The address of the element with row-major number `linear`.
  void* element(std::int64_t linear) const;
  template <class T>
  T get(std::int64_t linear) const {
    T v;
    std::memcpy(&v, element(linear), sizeof v);
    return v;
  }
  template <class T>
  void set(std::int64_t linear, T v) {
    std::memcpy(element(linear), &v, sizeof v);
  }
  template <class T>
  void fill(const std::function<T(std::int64_t)>& f) {
    for (std::int64_t i = 0; i < size(); ++i) set<T>(i, f(i));
  }
  /// Sets element i to v converted to the element type.
  void set_number(std::int64_t i, double v);
  /// The storage bytes outside the elements: they must come back as they went in.
  std::vector<unsigned char> gap_bytes() const;

 private:
  DType elem_;
  std::vector<std::int64_t> shape_;
  ArrayDesc desc_;
  std::vector<std::uint64_t> storage_;
  std::int64_t offset_ = 0;  ///< bytes from the storage's start to element 0
};

template <class T>
TestArray array_of(const std::vector<T>& values) {
  TestArray a(dtype_of<T>(), {static_cast<std::int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) a.set<T>(static_cast<std::int64_t>(i), values[i]);
  return a;
}

// ---- kernel arguments -----------------------------------------------------------------------------------

/// One kernel argument: a scalar of some type, or an array.
struct Arg {
  DType type;
  ScalarSlot scalar{};
  std::optional<TestArray> array;
};
using Args = std::vector<Arg>;

template <class T>
Arg scalar_arg(T v) {
  Arg a{dtype_of<T>(), {}, std::nullopt};
  std::memcpy(&a.scalar, &v, sizeof v);
  return a;
}
inline Arg array_arg(TestArray a) { return Arg{a.elem(), {}, std::move(a)}; }

/// The kernel ABI's argument vector: the address of each array's descriptor or of each scalar.
std::vector<void*> pointers(Args& args);

/// What one run left behind: the arguments (possibly written), the result, and the status of a failed run.
struct Outcome {
  Args args;
  ScalarSlot result{};
  ArrayDesc result_array{};
  std::int32_t status = 0;
  std::string message;
  Outcome() = default;
  Outcome(const Outcome&) = delete;
  ~Outcome();
};

/// A run of `f` about to start: the outcome it will fill (holding its own copy of the inputs, since kernels write
/// them), the argument vector into that copy, and where the result goes.
struct Run {
  std::unique_ptr<Outcome> outcome;
  std::vector<void*> argv;  ///< one entry a parameter, then `extra` (for backends that read argv[nparams])
  void* result;
};
Run start_run(const ir::Function& f, const Args& inputs, void* extra = nullptr);

// ---- random inputs --------------------------------------------------------------------------------------
// Each test binary owns its generator (and seed), so its inputs are the same from run to run.

double uniform(std::mt19937_64& rng, double lo, double hi);
std::int64_t uniform_int(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi);
/// Elements drawn uniformly between lo and hi (integers: whole numbers from lo to hi; bool: either value).
TestArray random_array(std::mt19937_64& rng, DType t, std::vector<std::int64_t> shape, Layout layout, double lo, double hi);

/// Edge values of each type, used for cross products of operands.
template <class T>
std::vector<T> edge_values() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_floating_point_v<T>) {
    return {T(kNaN), -T(kNaN), T(kInf), -T(kInf), T(0), -T(0), T(1), T(-1), T(0.5), T(-0.5), T(1.5), T(-2.5),
            T(3), T(-3), T(7.25), L::max(), L::lowest(), L::min(), L::denorm_min(), T(1e-30)};
  } else {
    return {T(0), T(1), T(-1), T(2), T(-2), T(7), T(-7), T(31), T(32), T(33), T(63), T(64), T(65), L::max(), L::min(),
            T(L::min() + 1), T(1000), T(-1000)};
  }
}

}  // namespace kiln::test_support
