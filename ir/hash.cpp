// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/hash.hpp"

#include <sodium.h>

#include <stdexcept>
#include <string>

#include "ir/printer.hpp"

namespace kiln::ir {

std::string Hash128::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string s(32, '0');
  for (int i = 0; i < 16; ++i) {
    const std::uint64_t w = i < 8 ? lo : hi;
    const unsigned byte = static_cast<unsigned>(w >> (8 * (i % 8))) & 0xff;
    s[2 * i] = digits[byte >> 4];
    s[2 * i + 1] = digits[byte & 15];
  }
  return s;
}

namespace {

static_assert(sizeof(crypto_generichash_blake2b_state) <= 384 && alignof(crypto_generichash_blake2b_state) <= 64);

crypto_generichash_blake2b_state* state(unsigned char* bytes) {
  return reinterpret_cast<crypto_generichash_blake2b_state*>(bytes);
}

}  // namespace

Blake2b::Blake2b(int digest_bytes) : out_(digest_bytes) {
  static const bool initialized = sodium_init() >= 0;  // picks the fastest implementation; idempotent
  (void)initialized;
  if (digest_bytes < static_cast<int>(crypto_generichash_blake2b_BYTES_MIN) ||
      digest_bytes > static_cast<int>(crypto_generichash_blake2b_BYTES_MAX))
    throw std::invalid_argument("BLAKE2b digest of " + std::to_string(digest_bytes) + " bytes (16..64)");
  crypto_generichash_blake2b_init(state(state_), nullptr, 0, static_cast<size_t>(out_));
}

void Blake2b::update(const void* data, size_t n) {
  crypto_generichash_blake2b_update(state(state_), static_cast<const unsigned char*>(data), n);
}

void Blake2b::field(std::string_view s) {
  const std::uint64_t n = s.size();
  update(&n, sizeof n);
  update(s);
}

std::array<std::uint8_t, 64> Blake2b::finish() {
  std::array<std::uint8_t, 64> out{};
  crypto_generichash_blake2b_final(state(state_), out.data(), static_cast<size_t>(out_));
  return out;
}

Hash128 Blake2b::finish128() {
  const auto d = finish();
  Hash128 h;
  for (int i = 7; i >= 0; --i) h.lo = (h.lo << 8) | d[i];
  for (int i = 15; i >= 8; --i) h.hi = (h.hi << 8) | d[i];
  return h;
}

Hash128 hash128(std::string_view data) {
  Blake2b b(16);
  b.update(data);
  return b.finish128();
}

Hash128 structural_hash(const Function& f) { return hash128(to_string(f, PrintOptions{.canonical = true})); }

}  // namespace kiln::ir
