// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tools/test_support/buffers.hpp"

#include <algorithm>
#include <cstdlib>

#include "ir/semantics.hpp"

namespace kiln::test_support {

TestArray::TestArray(DType t, std::vector<std::int64_t> shape, Layout layout) : elem_(t), shape_(std::move(shape)) {
  const int rank = static_cast<int>(shape_.size());
  std::int64_t dense = 1, padded = layout == Layout::Padded ? 2 : 1;
  for (int k = rank; k-- > 0;) {
    const std::int64_t extent = shape_[static_cast<std::size_t>(k)];
    desc_.shape[k] = extent;
    if (layout == Layout::Padded || layout == Layout::RowGaps) {
      desc_.strides[k] = padded;
      padded *= extent + 1;
    } else {
      desc_.strides[k] = dense;
    }
    dense *= extent;
  }
  if (layout == Layout::ColumnMajor) {
    std::int64_t s = 1;
    for (int k = 0; k < rank; ++k) desc_.strides[k] = s, s *= shape_[static_cast<std::size_t>(k)];
  }
  if (layout == Layout::Reversed && rank > 0) desc_.strides[0] = -desc_.strides[0];
  // The extreme offsets decide the storage size and where element 0 sits in it.
  std::int64_t lo = 0, hi = 0;
  for (int k = 0; k < rank; ++k) {
    const std::int64_t reach = (std::max<std::int64_t>(shape_[static_cast<std::size_t>(k)], 1) - 1) * desc_.strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  const std::size_t bytes = static_cast<std::size_t>(hi - lo + 2) * static_cast<std::size_t>(size_of(t));
  storage_.assign((bytes + 7) / 8, 0xA5A5A5A5A5A5A5A5ULL);  // the known pattern in the gaps
  offset_ = -lo * size_of(t);
  desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
}

TestArray::TestArray(const TestArray& o) : elem_(o.elem_), shape_(o.shape_), desc_(o.desc_), storage_(o.storage_), offset_(o.offset_) {
  desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
}

TestArray& TestArray::operator=(const TestArray& o) {
  elem_ = o.elem_;
  shape_ = o.shape_;
  desc_ = o.desc_;
  storage_ = o.storage_;
  offset_ = o.offset_;
  desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
  return *this;
}

std::int64_t TestArray::size() const {
  std::int64_t n = 1;
  for (auto s : shape_) n *= s;
  return n;
}

void* TestArray::element(std::int64_t linear) const {
  std::int64_t offset = 0;
  for (std::size_t k = shape_.size(); k-- > 0;) {
    offset += (linear % shape_[k]) * desc_.strides[k];
    linear /= shape_[k];
  }
  return static_cast<char*>(desc_.data) + offset * size_of(elem_);
}

void TestArray::set_number(std::int64_t i, double v) {
  ir::sem::with_type(elem_, [&](auto t) { set<decltype(t)>(i, static_cast<decltype(t)>(v)); });
}

std::vector<unsigned char> TestArray::gap_bytes() const {
  const auto* base = reinterpret_cast<const unsigned char*>(storage_.data());
  std::vector<unsigned char> bytes(base, base + storage_.size() * sizeof(std::uint64_t));
  for (std::int64_t i = 0; i < size(); ++i) {
    const auto off = static_cast<const unsigned char*>(element(i)) - base;
    std::memset(bytes.data() + off, 0, static_cast<std::size_t>(size_of(elem_)));
  }
  return bytes;
}

std::vector<void*> pointers(Args& args) {
  std::vector<void*> p;
  for (auto& a : args) p.push_back(a.array ? static_cast<void*>(&a.array->desc()) : static_cast<void*>(&a.scalar));
  return p;
}

Outcome::~Outcome() { std::free(result_array.data); }

Run start_run(const ir::Function& f, const Args& inputs, void* extra) {
  Run run{std::make_unique<Outcome>(), {}, nullptr};
  Outcome& out = *run.outcome;
  out.args = inputs;
  run.argv = pointers(out.args);
  run.argv.push_back(extra);
  run.result = f.returns_array() ? static_cast<void*>(&out.result_array) : static_cast<void*>(&out.result);
  return run;
}

double uniform(std::mt19937_64& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
std::int64_t uniform_int(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

TestArray random_array(std::mt19937_64& rng, DType t, std::vector<std::int64_t> shape, Layout layout, double lo, double hi) {
  TestArray a(t, std::move(shape), layout);
  const std::int64_t n = a.size();
  ir::sem::with_type(t, [&](auto x) {
    using T = decltype(x);
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>) a.set<T>(i, uniform_int(rng, 0, 1) == 1);
      else if constexpr (std::is_integral_v<T>)
        a.set<T>(i, static_cast<T>(uniform_int(rng, static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi))));
      else a.set<T>(i, static_cast<T>(uniform(rng, lo, hi)));
    }
  });
  return a;
}

}  // namespace kiln::test_support
