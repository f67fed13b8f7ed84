// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/entry.hpp"

#include <sodium.h>

#include <cstdlib>

#include "runtime/cache/bytes.hpp"

namespace kiln::cache {
namespace {

enum SectionKind : std::uint16_t { kPayload = 1, kCanonicalIr = 2, kMetadata = 3 };

void section(ByteWriter& w, SectionKind kind, std::string_view name, std::string_view data) {
  w.u16(kind);
  w.u16(static_cast<std::uint16_t>(name.size()));
  w.u32(0);
  w.u64(data.size());
  w.raw(name);
  w.raw(data);
}

std::string encode_metadata(const Metadata& m) {
  ByteWriter w;
  auto field = [&](std::string_view name, std::string_view value) {
    w.str(name);
    w.str(value);
  };
  field("kernel", m.kernel);
  field("target", m.target);
  field("target_description", m.target_description);
  field("kiln", m.kiln);
  field("created", std::to_string(m.created));
  return std::move(w.bytes());
}

bool decode_metadata(std::string_view data, Metadata& m) {
  ByteReader r(data);
  while (r.ok() && !r.at_end()) {
    const std::string_view name = r.str();
    const std::string_view value = r.str();
    if (!r.ok()) return false;
    if (name == "kernel") m.kernel = value;
    else if (name == "target") m.target = value;
    else if (name == "target_description") m.target_description = value;
    else if (name == "kiln") m.kiln = value;
    else if (name == "created") m.created = std::strtoll(std::string(value).c_str(), nullptr, 10);
    // Unknown fields are skipped: a later writer of the same format version may add informative ones.
  }
  return r.ok();
}

/// The seal of `bytes` under `secret`: keyed BLAKE2b-256 (libsodium).
std::array<unsigned char, kSealSize> seal(std::string_view bytes, const Secret& secret) {
  static_assert(kSealSize == crypto_generichash_BYTES && kSecretSize == crypto_generichash_KEYBYTES);
  static const bool initialized = sodium_init() >= 0;  // picks the fastest implementation; idempotent
  (void)initialized;
  std::array<unsigned char, kSealSize> out;
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                     secret.bytes.data(), secret.bytes.size());
  return out;
}

}  // namespace

const Blob* Entry::payload(std::string_view name) const {
  for (const Blob& b : payloads)
    if (b.name == name) return &b;
  return nullptr;
}

std::string encode(const Entry& e, const Secret& secret) {
  ByteWriter body;
  for (const Blob& b : e.payloads) section(body, kPayload, b.name, b.data);
  section(body, kCanonicalIr, "", e.canonical_ir);
  section(body, kMetadata, "", encode_metadata(e.meta));

  ByteWriter w;
  w.raw(kMagic);
  w.u32(kFormatVersion);
  w.u32(static_cast<std::uint32_t>(e.payloads.size() + 2));
  w.u64(e.key.lo);
  w.u64(e.key.hi);
  w.u64(body.bytes().size());
  w.raw(body.bytes());
  const auto s = seal(w.bytes(), secret);
  w.raw(std::string_view(reinterpret_cast<const char*>(s.data()), s.size()));
  return std::move(w.bytes());
}

std::string_view describe(DecodeStatus s) {
  switch (s) {
    case DecodeStatus::ok: return "ok";
    case DecodeStatus::truncated: return "truncated";
    case DecodeStatus::not_an_entry: return "not a kiln cache entry";
    case DecodeStatus::foreign_version: return "written by another entry format version";
    case DecodeStatus::bad_seal: return "its seal does not match this cache's secret (changed after it was written, or written by another user or cache)";
    case DecodeStatus::malformed: return "malformed";
  }
  return "?";
}

Decoded check_header(std::string_view header, std::uint64_t file_size) {
  Decoded out;
  out.status = DecodeStatus::truncated;
  if (header.size() < kMagic.size()) return out;
  if (header.substr(0, kMagic.size()) != kMagic) {
    out.status = DecodeStatus::not_an_entry;
    return out;
  }
  ByteReader r(header.substr(0, kHeaderSize));
  r.raw(kMagic.size());
  out.version = r.u32();
  r.u32();  // sections
  out.entry.key.lo = r.u64();
  out.entry.key.hi = r.u64();
  const std::uint64_t body_size = r.u64();
  if (!r.ok()) return out;
  if (out.version != kFormatVersion) {
    out.status = DecodeStatus::foreign_version;
    return out;
  }
  const std::uint64_t available = file_size - kHeaderSize;  // file_size >= kHeaderSize: the header was read
  if (body_size > available || available - body_size < kSealSize) return out;
  // Trailing bytes: not what any writer produces.
  out.status = available - body_size > kSealSize ? DecodeStatus::malformed : DecodeStatus::ok;
  return out;
}

Decoded decode(std::string_view bytes, const Secret& secret) {
  Decoded out = check_header(bytes, bytes.size());
  if (out.status != DecodeStatus::ok) {
    out.entry = Entry{};
    return out;
  }
  out.status = DecodeStatus::malformed;
  Entry& e = out.entry;
  ByteReader header(bytes.substr(kMagic.size() + 4));
  const std::uint32_t sections = header.u32();
  header.raw(16);
  const std::uint64_t body_size = header.u64();
  const auto expected = seal(bytes.substr(0, kHeaderSize + body_size), secret);
  if (crypto_verify_32(expected.data(), reinterpret_cast<const unsigned char*>(bytes.data() + kHeaderSize + body_size)) != 0) {
    out.status = DecodeStatus::bad_seal;
    e = Entry{};
    return out;
  }
  ByteReader r(bytes.substr(kHeaderSize, body_size));
  bool have_ir = false, have_meta = false;
  for (std::uint32_t i = 0; i < sections && r.ok(); ++i) {
    const std::uint16_t kind = r.u16();
    const std::uint16_t name_size = r.u16();
    r.u32();
    const std::uint64_t size = r.u64();
    const std::string_view name = r.raw(name_size);
    const std::string_view data = r.raw(size);
    if (!r.ok()) break;
    if (kind == kPayload) {
      e.payloads.push_back(Blob{std::string(name), std::string(data)});
    } else if (kind == kCanonicalIr) {
      e.canonical_ir = data;
      have_ir = true;
    } else if (kind == kMetadata) {
      have_meta = decode_metadata(data, e.meta);
    }
  }
  out.status = r.ok() && r.at_end() && have_ir && have_meta ? DecodeStatus::ok : DecodeStatus::malformed;
  if (out.status != DecodeStatus::ok) out.entry = Entry{};
  return out;
}

}  // namespace kiln::cache
