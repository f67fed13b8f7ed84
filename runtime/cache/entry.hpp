// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One cache entry: the format of a file in the cache directory.
//
//   offset  size  field
//   0       8     magic "KILNKCE\0"
//   8       4     format version (kFormatVersion)
//   12      4     number of sections
//   16      16    key digest (Key::lo then Key::hi, little-endian)
//   32      8     body size B
//   40      B     sections, each: u16 kind, u16 name size N, u32 zero, u64 data size D, N name bytes, D bytes
//   40+B    32    seal: BLAKE2b-256 keyed with the cache directory's secret (secret.hpp), of bytes [0, 40+B)
//
// All integers are little-endian. Magic and version stay at these offsets in every future version, so any
// reader can tell a foreign version from corruption. Section kinds: payload (named blobs: "object" for CPU,
// "ptx"/"cubin" for CUDA, "kiln.variant" for the frontend), the canonical IR (compared on load) and
// metadata (named text fields).
//
// Version 2 replaced version 1's unkeyed BLAKE2b-128 checksum by the keyed seal: anyone could recompute a
// checksum over changed object code; only the holder of the secret can compute a seal (libsodium's
// crypto_generichash, compared in constant time).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/hash.hpp"
#include "runtime/cache/secret.hpp"

namespace kiln::cache {

inline constexpr std::uint32_t kFormatVersion = 2;
inline constexpr std::string_view kMagic{"KILNKCE\0", 8};
inline constexpr std::size_t kHeaderSize = 40;
inline constexpr std::size_t kSealSize = 32;
/// No entry is larger: writers do not store one (docs/cache.md), and readers refuse a larger file by its size
/// before reading any of it.
inline constexpr std::uint64_t kMaxEntryBytes = 64ull << 20;

struct Blob {
  std::string name;
  std::string data;
};

/// Descriptive fields; only `target` is used by the cache itself (statistics per target).
struct Metadata {
  std::string kernel;              ///< the kernel's name (informative: the key ignores names)
  std::string target;              ///< "cpu", "cuda"
  std::string target_description;  ///< as hashed into the key
  std::string kiln;                ///< kiln_identity() of the writer
  std::int64_t created = 0;        ///< seconds since the epoch; last use is the file's mtime
};

struct Entry {
  ir::Hash128 key;
  std::vector<Blob> payloads;
  std::string canonical_ir;
  Metadata meta;

  /// The payload named `name`, or nullptr.
  const Blob* payload(std::string_view name) const;
};

/// The entry file of `e`, sealed with `secret`.
std::string encode(const Entry& e, const Secret& secret);

enum class DecodeStatus {
  ok,
  truncated,        ///< shorter than its header says (or than a header)
  not_an_entry,     ///< wrong magic
  foreign_version,  ///< another format version
  bad_seal,         ///< not sealed with this secret: changed after it was written, or another cache's entry
  malformed,        ///< sealed but sections inconsistent (a writer bug), or longer than its header says
};

std::string_view describe(DecodeStatus s);

struct Decoded {
  DecodeStatus status = DecodeStatus::malformed;
  std::uint32_t version = 0;  ///< the file's format version, when it has a header
  Entry entry;                ///< filled when status is ok
};

/// What the first kHeaderSize bytes (or fewer, of a shorter file) of a file of `file_size` bytes say, before
/// any more is read: not_an_entry, foreign_version, truncated or malformed (the body size disagrees with the
/// file size), else ok. `version` and the entry's key are filled when there is a whole header.
Decoded check_header(std::string_view header, std::uint64_t file_size);

/// Checks and parses a whole file: the header, the seal under `secret`, then the sections. Never throws on
/// bad input.
Decoded decode(std::string_view bytes, const Secret& secret);

}  // namespace kiln::cache
