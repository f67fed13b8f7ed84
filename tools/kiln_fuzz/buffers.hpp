// Kernel arguments for kiln-fuzz: arrays in any layout (with gaps that must come back untouched), scalars, and
// the comparison of two runs' results.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/abi.hpp"
#include "tools/kiln_fuzz/program.hpp"

namespace kiln::fuzz {

class HostArray {
 public:
  HostArray(DType t, const std::vector<std::int64_t>& shape, Layout layout);
  HostArray(const HostArray& o);
  HostArray& operator=(const HostArray& o);

  DType elem() const { return elem_; }
  ArrayDesc& desc() { return desc_; }
  std::int64_t size() const;
  /// The address of the element with row-major number `linear`.
  void* element(std::int64_t linear) const;
  /// The storage bytes outside the elements (a known pattern that nothing may overwrite).
  std::vector<unsigned char> gaps() const;

 private:
  DType elem_;
  std::vector<std::int64_t> shape_;
  ArrayDesc desc_;
  std::vector<std::uint64_t> storage_;
  std::int64_t offset_ = 0;  ///< bytes from the storage's start to element 0
};

/// One set of kernel arguments (deep-copied for every run, since kernels write them).
struct Args {
  std::vector<std::optional<HostArray>> arrays;  ///< per parameter; empty for scalars
  std::vector<ScalarSlot> scalars;               ///< per parameter
  std::vector<void*> pointers();
};

/// What one run left behind.
struct Outcome {
  Args args;
  ScalarSlot result{};
  ArrayDesc result_array{};
  std::string error;  ///< an exception's text or the kernel's failure status; empty on success
  Outcome() = default;
  Outcome(const Outcome&) = delete;
  ~Outcome();
};

/// Random arguments for `p` (from `seed`): small values, integers, and the edge values of each type.
Args make_args(const Program& p, std::uint64_t seed);

/// A description of the first differences between a reference run and another one, or "" if they agree within
/// the program's precision (exact, or a few ulps where it says so).
std::string compare(const Program& p, const Outcome& ref, const Outcome& got);

}  // namespace kiln::fuzz
