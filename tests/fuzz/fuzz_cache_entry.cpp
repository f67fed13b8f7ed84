// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the cache-entry reader (runtime/cache/entry.cpp) on arbitrary bytes. Entry files are
// untrusted input: another kiln version, a crashed writer or another user may have left anything in the
// directory.
//
// The first input byte picks the mode. Raw: the bytes are a whole file. Sealed: the rest is a file whose body
// size and seal the harness fixes up first (keyed BLAKE2b under a fixed secret), because random bytes never
// carry a valid seal and the section parser behind it would otherwise stay unexplored. Either way
// check_header() must agree with decode() on what the header says, decode() must not crash, throw, hang or
// allocate more than the input justifies (libFuzzer's -rss_limit_mb/-malloc_limit_mb), and an entry it accepts
// must survive encode() and decode() unchanged.
#include <sodium.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "runtime/cache/entry.hpp"

namespace {

using namespace kiln::cache;

const Secret& fuzz_secret() {
  static const Secret s = [] {
    Secret out;
    for (std::size_t i = 0; i < out.bytes.size(); ++i) out.bytes[i] = static_cast<unsigned char>(i * 7 + 1);
    return out;
  }();
  return s;
}

std::string seal(std::string file) {
  if (file.size() < kHeaderSize) return file;
  const std::uint64_t body = file.size() - kHeaderSize;
  for (int k = 0; k < 8; ++k) file[32 + static_cast<std::size_t>(k)] = static_cast<char>((body >> (8 * k)) & 0xFF);
  unsigned char mac[kSealSize];
  crypto_generichash(mac, sizeof mac, reinterpret_cast<const unsigned char*>(file.data()), file.size(),
                     fuzz_secret().bytes.data(), fuzz_secret().bytes.size());
  file.append(reinterpret_cast<const char*>(mac), kSealSize);
  return file;
}

bool same(const Entry& a, const Entry& b) {
  if (a.key.lo != b.key.lo || a.key.hi != b.key.hi || a.canonical_ir != b.canonical_ir || a.payloads.size() != b.payloads.size())
    return false;
  for (std::size_t i = 0; i < a.payloads.size(); ++i)
    if (a.payloads[i].name != b.payloads[i].name || a.payloads[i].data != b.payloads[i].data) return false;
  return a.meta.kernel == b.meta.kernel && a.meta.target == b.meta.target &&
         a.meta.target_description == b.meta.target_description && a.meta.kiln == b.meta.kiln && a.meta.created == b.meta.created;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string file(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) file = seal(std::move(file));
  const Decoded header = check_header(std::string_view(file).substr(0, kHeaderSize), file.size());
  const Decoded d = decode(file, fuzz_secret());
  // The loader reads the body only after check_header said ok: decode must never accept what it refused.
  if (header.status != DecodeStatus::ok && d.status != header.status) std::abort();
  if (d.status != DecodeStatus::ok) return 0;
  const Decoded again = decode(encode(d.entry, fuzz_secret()), fuzz_secret());
  if (again.status != DecodeStatus::ok || !same(d.entry, again.entry)) std::abort();  // the round trip lost something
  return 0;
}
