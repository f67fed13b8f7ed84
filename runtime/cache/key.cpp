// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/key.hpp"

#include <elf.h>
#include <link.h>

#include <cstring>

#include "kiln/config.hpp"
#include "runtime/cache/entry.hpp"

namespace kiln::cache {
namespace {

struct BuildIdSearch {
  const void* address;  // a function of libkiln: selects the module to read
  std::string hex;
};

int find_build_id(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  const auto addr = reinterpret_cast<ElfW(Addr)>(search->address);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum && !contains; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    contains = ph.p_type == PT_LOAD && addr >= info->dlpi_addr + ph.p_vaddr &&
               addr < info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
  }
  if (!contains) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    // Notes are 4-byte aligned records: namesz, descsz, type, name, desc.
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const char* name = p + sizeof note;
      const char* desc = name + ((note.n_namesz + 3) & ~3u);
      const char* next = desc + ((note.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char* digits = "0123456789abcdef";
        for (unsigned j = 0; j < note.n_descsz; ++j) {
          const auto b = static_cast<unsigned char>(desc[j]);
          search->hex.push_back(digits[b >> 4]);
          search->hex.push_back(digits[b & 15]);
        }
        return 1;
      }
      p = next;
    }
  }
  return 1;
}

}  // namespace

const std::string& kiln_identity() {
  static const std::string identity = [] {
    BuildIdSearch search{reinterpret_cast<const void*>(&find_build_id), {}};
    dl_iterate_phdr(find_build_id, &search);
    return std::string(KILN_VERSION) + (search.hex.empty() ? "" : "+" + search.hex);
  }();
  return identity;
}

Key make_key(const KeyInputs& in) {
  ir::Blake2b h(16);
  h.field("kiln kernel cache key");
  h.field(std::to_string(kFormatVersion));
  h.field(kiln_identity());
  h.field(in.target);
  h.field(in.target_description);
  h.field(in.codegen_options);
  h.field(in.llvm_version);
  h.field(in.nvrtc_version);
  h.field(in.canonical_ir);
  return h.finish128();
}

bool parse_key(std::string_view hex, Key& out) {
  if (hex.size() != 32) return false;
  Key k;
  for (int i = 0; i < 16; ++i) {
    unsigned byte = 0;
    for (int j = 0; j < 2; ++j) {
      const char c = hex[2 * i + j];
      unsigned d;
      if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
      else return false;
      byte = byte * 16 + d;
    }
    (i < 8 ? k.lo : k.hi) |= static_cast<std::uint64_t>(byte) << (8 * (i % 8));
  }
  out = k;
  return true;
}

}  // namespace kiln::cache
