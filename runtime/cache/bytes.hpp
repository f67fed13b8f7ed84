// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Little-endian, length-prefixed encoding shared by the entry format and the payloads stored in it. Readers
// are bounds-checked: a short or malformed buffer makes them fail, never read past the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::cache {

class ByteWriter {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void raw(std::string_view s) { out_.append(s); }
  /// A u64 length followed by the bytes.
  void str(std::string_view s) {
    u64(s.size());
    raw(s);
  }
  std::string& bytes() { return out_; }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

/// Reads what ByteWriter wrote. After any read past the end, ok() is false and every read returns zero or
/// empty, so callers check once at the end.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(get(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  std::string_view raw(std::uint64_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return {};
    }
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string_view str() { return raw(u64()); }
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  std::size_t position() const { return pos_; }

 private:
  std::uint64_t get(int n) {
    const std::string_view s = raw(static_cast<std::uint64_t>(n));
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < s.size(); ++i) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(s[i])) << (8 * i);
    return v;
  }
  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace kiln::cache
