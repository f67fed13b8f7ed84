// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libkiln's calls of its own functions are bound inside it when it is linked (-Bsymbolic-functions), not
// through its PLT: a lazily bound PLT slot costs a symbol lookup over every loaded library the first time it is
// called, and a fresh process's first kernel called ~470 of them (callgrind: 12 % of its instructions).
#include <gtest/gtest.h>

#if defined(__linux__) && defined(__x86_64__)
#include <dlfcn.h>
#include <elf.h>
#endif

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <kiln/cache.hpp>

namespace {

#if defined(__linux__) && defined(__x86_64__)

std::vector<char> read_file(const char* path) {
  std::vector<char> bytes;
  if (std::FILE* f = std::fopen(path, "rb")) {
    char buf[1 << 16];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
  }
  return bytes;
}

/// The names of the functions `lib` defines and still calls through a PLT slot of its own.
std::vector<std::string> self_plt_calls(const std::vector<char>& lib) {
  std::vector<std::string> out;
  auto at = [&](std::size_t offset, std::size_t size) {
    if (offset > lib.size() || size > lib.size() - offset) throw std::runtime_error("truncated ELF file");
    return lib.data() + offset;
  };
  Elf64_Ehdr eh;
  std::memcpy(&eh, at(0, sizeof eh), sizeof eh);
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), at(eh.e_shoff, sizeof(Elf64_Shdr) * eh.e_shnum), sizeof(Elf64_Shdr) * eh.e_shnum);
  for (const Elf64_Shdr& rela : sections) {
    if (rela.sh_type != SHT_RELA || rela.sh_link >= sections.size()) continue;
    const Elf64_Shdr& symtab = sections[rela.sh_link];
    if (symtab.sh_type != SHT_DYNSYM || symtab.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    for (std::size_t r = 0; r < rela.sh_size / sizeof(Elf64_Rela); ++r) {
      Elf64_Rela rel;
      std::memcpy(&rel, at(rela.sh_offset + r * sizeof rel, sizeof rel), sizeof rel);
      if (ELF64_R_TYPE(rel.r_info) != R_X86_64_JUMP_SLOT) continue;
      Elf64_Sym sym;
      std::memcpy(&sym, at(symtab.sh_offset + ELF64_R_SYM(rel.r_info) * sizeof sym, sizeof sym), sizeof sym);
      if (sym.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym.st_info) != STT_FUNC) continue;
      out.emplace_back(at(strtab.sh_offset + sym.st_name, 1));
    }
  }
  return out;
}

TEST(LibraryBinding, OwnFunctionsAreCalledDirectly) {
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&kiln::compile_history), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  const std::vector<char> lib = read_file(info.dli_fname);
  ASSERT_GT(lib.size(), sizeof(Elf64_Ehdr)) << info.dli_fname;
  ASSERT_EQ(std::memcmp(lib.data(), ELFMAG, SELFMAG), 0) << info.dli_fname;
  const std::vector<std::string> calls = self_plt_calls(lib);
  std::string some;
  for (std::size_t i = 0; i < calls.size() && i < 5; ++i) some += "\n  " + calls[i];
  EXPECT_TRUE(calls.empty()) << info.dli_fname << " calls " << calls.size()
                             << " of its own functions through its PLT (linked without -Bsymbolic-functions?), e.g."
                             << some;
}

#else

TEST(LibraryBinding, OwnFunctionsAreCalledDirectly) { GTEST_SKIP() << "checks an x86-64 ELF shared library"; }

#endif

}  // namespace
