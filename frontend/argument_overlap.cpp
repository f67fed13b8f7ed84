// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/argument_overlap.hpp"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "ir/messages.hpp"
#include "kiln/error.hpp"

namespace kiln::detail {
namespace {

/// The bytes [lo, hi) an array argument's elements may occupy (strides of any sign); lo == hi when empty.
struct ByteRange {
  std::uintptr_t lo, hi;
  bool overlaps(const ByteRange& o) const { return lo < hi && o.lo < o.hi && lo < o.hi && o.lo < hi; }
};

ByteRange byte_range(const ArgValue& a) {
  const auto size = static_cast<std::int64_t>(size_of(a.dtype));
  std::int64_t lo = 0, hi = size;
  for (int d = 0; d < a.rank; ++d) {
    const std::int64_t n = a.array.shape[d];
    if (n <= 0) return {0, 0};
    const std::int64_t reach = (n - 1) * a.array.strides[d] * size;
    (reach < 0 ? lo : hi) += reach;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(a.array.data);
  return {base + static_cast<std::uintptr_t>(lo), base + static_cast<std::uintptr_t>(hi)};
}

bool same_view(const ArgValue& a, const ArgValue& b) {
  if (a.array.data != b.array.data || a.rank != b.rank || a.dtype != b.dtype) return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.array.shape[d] != b.array.shape[d] || (a.array.shape[d] > 1 && a.array.strides[d] != b.array.strides[d]))
      return false;
  return true;
}

/// Copies `a`'s elements into new row-major memory and points `a` at it.
void copy_to_new_buffer(ArgValue& a, OverlapCopies& copies) {
  const std::size_t size = static_cast<std::size_t>(size_of(a.dtype));
  std::size_t count = 1;
  for (int d = 0; d < a.rank; ++d) count *= static_cast<std::size_t>(a.array.shape[d]);
  void* mem = allocate_array_memory(count * size);
  if (!mem) throw std::bad_alloc();
  copies.buffers.emplace_back(mem, &std::free);
  auto* out = static_cast<char*>(mem);
  const auto* in = static_cast<const char*>(a.array.data);
  const int r = a.rank;
  const std::int64_t inner = a.array.shape[r - 1], inner_stride = a.array.strides[r - 1];
  std::int64_t idx[kMaxRank] = {};
  for (std::size_t done = 0; done < count; done += static_cast<std::size_t>(inner)) {
    std::int64_t offset = 0;
    for (int d = 0; d < r - 1; ++d) offset += idx[d] * a.array.strides[d];
    const char* row = in + offset * static_cast<std::int64_t>(size);
    if (inner_stride == 1) {
      std::memcpy(out, row, static_cast<std::size_t>(inner) * size);
      out += static_cast<std::size_t>(inner) * size;
    } else {
      for (std::int64_t k = 0; k < inner; ++k, out += size)
        std::memcpy(out, row + k * inner_stride * static_cast<std::int64_t>(size), size);
    }
    for (int d = r - 2; d >= 0; --d) {  // next row
      if (++idx[d] < a.array.shape[d]) break;
      idx[d] = 0;
    }
  }
  std::int64_t stride = 1;
  for (int d = r - 1; d >= 0; --d) {
    a.array.strides[d] = stride;
    stride *= a.array.shape[d];
  }
  a.array.data = mem;
}

}  // namespace

std::uint32_t separate_overlapping_arguments(const std::string& kernel, const ir::ArgumentAccess& access, ArgValue* args,
                                             std::size_t nargs, const std::vector<std::string>& arg_names,
                                             OverlapCopies& copies) {
  // Called on every call of a kernel that writes an array: the common case (nothing overlaps) stays a few
  // comparisons per pair, with no strings built.
  ByteRange range[ir::ArgumentAccess::kMaxParams];
  std::uint32_t arrays = 0;
  for (std::size_t i = 0; i < nargs; ++i)
    if (args[i].is_array) {
      range[i] = byte_range(args[i]);
      arrays |= 1u << i;
    }
  std::uint32_t copy = 0, shared = 0;
  std::string why;
  auto name = [&](std::size_t i) {
    return ir::argument_text(i, i < arg_names.size() ? arg_names[i] : fmt::format("arg{}", i));
  };
  for (std::uint32_t ws = access.stored & arrays; ws; ws &= ws - 1) {
    const auto w = static_cast<std::size_t>(__builtin_ctz(ws));
    for (std::uint32_t rs = arrays & ~(1u << w); rs; rs &= rs - 1) {
      const auto r = static_cast<std::size_t>(__builtin_ctz(rs));
      if (!range[w].overlaps(range[r])) continue;
      if ((access.stored >> r) & 1u)
        throw AliasError(fmt::format("kernel '{}': {} and {} share memory, and the kernel writes both: pass distinct arrays",
                                     kernel, name(w), name(r)));
      if (!((access.loaded >> r) & 1u) || ((access.before[w] >> r) & 1u) ||
          (((access.same_view[w] >> r) & 1u) && same_view(args[w], args[r]))) {
        shared |= (1u << w) | (1u << r);  // unobservable, but shared
        continue;
      }
      if (args[r].on_device || args[w].on_device)
        throw AliasError(fmt::format("kernel '{}': {} shares GPU memory with {}, which the kernel writes while reading {} "
                                     "at other elements: pass a distinct kiln::DeviceArray holding a copy of its data",
                                     kernel, name(r), name(w), name(r)));
      if (!((copy >> r) & 1u))
        why += fmt::format("{}{} overlaps {}, which the kernel writes while reading it", why.empty() ? "" : "; ", name(r),
                           name(w));
      copy |= 1u << r;
    }
  }
  if (!copy) return shared;
  std::size_t bytes = 0;
  for (std::size_t r = 0; r < nargs; ++r)
    if ((copy >> r) & 1u) {
      bytes += static_cast<std::size_t>(range[r].hi - range[r].lo);
      copy_to_new_buffer(args[r], copies);
    }
  copies.note = fmt::format("copied before the call ({} bytes), so that the answer is the one distinct arrays give: {}",
                            bytes, why);
  return shared & ~copy;  // a copied argument is new memory: it shares nothing now
}

}  // namespace kiln::detail
