// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/hash.hpp"

#include <cstring>

#include "ir/printer.hpp"

namespace kiln::ir {
namespace {

constexpr std::uint64_t kIV[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
                                  0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
                                  0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};

constexpr std::uint8_t kSigma[10][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0}};

inline std::uint64_t rotr(std::uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

inline std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

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

Blake2b::Blake2b(int digest_bytes) : out_(digest_bytes) {
  std::memcpy(h_, kIV, sizeof h_);
  h_[0] ^= 0x01010000ULL ^ static_cast<std::uint64_t>(out_);
}

void Blake2b::compress(bool last) {
  std::uint64_t v[16], m[16];
  for (int i = 0; i < 16; ++i) m[i] = load64(buf_ + 8 * i);
  for (int i = 0; i < 8; ++i) {
    v[i] = h_[i];
    v[i + 8] = kIV[i];
  }
  v[12] ^= t_[0];
  v[13] ^= t_[1];
  if (last) v[14] = ~v[14];
  auto g = [&](int a, int b, int c, int d, std::uint64_t x, std::uint64_t y) {
    v[a] = v[a] + v[b] + x;
    v[d] = rotr(v[d] ^ v[a], 32);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 24);
    v[a] = v[a] + v[b] + y;
    v[d] = rotr(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 63);
  };
  for (int r = 0; r < 12; ++r) {
    const std::uint8_t* s = kSigma[r % 10];
    g(0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; ++i) h_[i] ^= v[i] ^ v[i + 8];
}

void Blake2b::update(const void* data, size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (n > 0) {
    if (fill_ == sizeof buf_) {  // compress only when more input follows: the last block is special
      t_[0] += sizeof buf_;
      if (t_[0] < sizeof buf_) ++t_[1];
      compress(false);
      fill_ = 0;
    }
    const size_t take = std::min(n, sizeof buf_ - fill_);
    std::memcpy(buf_ + fill_, p, take);
    fill_ += take;
    p += take;
    n -= take;
  }
}

void Blake2b::field(std::string_view s) {
  const std::uint64_t n = s.size();
  update(&n, sizeof n);
  update(s);
}

std::array<std::uint8_t, 64> Blake2b::finish() {
  t_[0] += fill_;
  if (t_[0] < fill_) ++t_[1];
  std::memset(buf_ + fill_, 0, sizeof buf_ - fill_);
  compress(true);
  std::array<std::uint8_t, 64> out{};
  for (int i = 0; i < 64; ++i) out[i] = static_cast<std::uint8_t>(h_[i / 8] >> (8 * (i % 8)));
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
