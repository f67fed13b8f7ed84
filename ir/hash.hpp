// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Strong hashing: BLAKE2b (RFC 7693) and the structural hash of a Function built on it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "ir/stmt.hpp"

namespace kiln::ir {

struct Hash128 {
  std::uint64_t lo = 0, hi = 0;
  std::string hex() const;  ///< 32 lowercase hex digits
  friend bool operator==(const Hash128&, const Hash128&) = default;
};

/// Streaming BLAKE2b (RFC 7693, unkeyed) with a digest of 16..64 bytes: libsodium's crypto_generichash_blake2b,
/// which picks the host's fastest implementation (the cache key hashes every traced kernel's canonical IR, a fresh
/// process's first call included).
class Blake2b {
 public:
  explicit Blake2b(int digest_bytes = 16);
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// Adds a length-prefixed field, so that ("ab","c") and ("a","bc") hash differently.
  void field(std::string_view s);
  std::array<std::uint8_t, 64> finish();  ///< the first digest_bytes bytes are the digest
  Hash128 finish128();

 private:
  alignas(64) unsigned char state_[384];  ///< a crypto_generichash_blake2b_state (hash.cpp checks the size)
  int out_;
};

Hash128 hash128(std::string_view data);

/// A hash of the canonical text of `f`: equal for functions that differ only in variable names, kernel
/// name and source locations; different (with overwhelming probability) for any other change.
Hash128 structural_hash(const Function& f);

}  // namespace kiln::ir
