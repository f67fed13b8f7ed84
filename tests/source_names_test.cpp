// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Names read from the user's source (frontend/source_names): a file edited after the program was built is
// not read at all, so a name is either the one written at that position or absent, never another line's.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "frontend/source_names.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::detail::Where;

const fs::path& scratch() {
  static const fs::path dir = fs::temp_directory_path() / ("kiln_source_names_" + std::to_string(::getpid()));
  // Removed at exit, with what the tests wrote into it.
  static const struct Remover {
    ~Remover() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remover;
  return dir;
}

/// A fresh file holding `text`, last modified `age` before (negative: after) the test binary was written.
std::string source_file(const std::string& stem, const std::string& text, std::chrono::hours age) {
  fs::create_directories(scratch());
  const fs::path path = scratch() / (stem + ".cpp");
  std::ofstream(path) << text;
  fs::last_write_time(path, fs::last_write_time("/proc/self/exe") - age);
  return path.string();
}

const std::string kDeclaration = "  kiln::Double total = 0.0;\n";
const std::string kJitCall = "  auto k = kiln::jit(\"k\", [](kiln::Int n, kiln::Array<double, 1> a) {\n    return a;\n  });\n";

TEST(SourceNames, ReadsASourceOlderThanTheProgram) {
  const std::string file = source_file("older", kDeclaration + kJitCall, std::chrono::hours(1));
  std::string why = "unset";
  ASSERT_NE(kiln::detail::source_lines(file.c_str(), nullptr, &why), nullptr);
  EXPECT_EQ(why, "");
  // The column of `0.0`, where std::source_location puts a declaration's initializer.
  EXPECT_EQ(kiln::detail::declared_name(Where{file.c_str(), 1, 24}), "total");
  EXPECT_EQ(kiln::detail::lambda_param_names(Where{file.c_str(), 2, 12}, 2), (std::vector<std::string>{"n", "a"}));
}

TEST(SourceNames, IgnoresASourceEditedAfterTheProgramWasBuilt) {
  const std::string file = source_file("edited", kDeclaration + kJitCall, -std::chrono::hours(1));
  std::string why;
  EXPECT_EQ(kiln::detail::source_lines(file.c_str(), nullptr, &why), nullptr);
  EXPECT_NE(why.find("was modified after the program was built"), std::string::npos) << why;
  EXPECT_EQ(kiln::detail::declared_name(Where{file.c_str(), 1, 24}), "");
  EXPECT_TRUE(kiln::detail::lambda_param_names(Where{file.c_str(), 2, 12}, 2).empty());
}

TEST(SourceNames, IgnoresAMovedSource) {
  const std::string file = source_file("moved", kDeclaration, std::chrono::hours(1));
  const std::string moved = file + ".moved";
  fs::rename(file, moved);
  std::string why;
  EXPECT_EQ(kiln::detail::source_lines(file.c_str(), nullptr, &why), nullptr);
  EXPECT_NE(why.find("cannot be read"), std::string::npos) << why;
  EXPECT_EQ(kiln::detail::declared_name(Where{file.c_str(), 1, 24}), "");
}

TEST(SourceNames, JudgesAgainstTheBinaryHoldingTheCode) {
  // An address in libkiln: the verdict is taken against that library's time, not the executable's.
  const void* in_library = reinterpret_cast<const void*>(&kiln::detail::declared_name);
  Dl_info info{};
  ASSERT_NE(dladdr(in_library, &info), 0);
  const fs::path library = info.dli_fname;
  ASSERT_NE(library.filename().string().find("libkiln"), std::string::npos) << library;
  const std::string newer = source_file("newer_than_library", kDeclaration, std::chrono::hours(0));
  fs::last_write_time(newer, fs::last_write_time(library) + std::chrono::hours(1));
  std::string why;
  EXPECT_EQ(kiln::detail::source_lines(newer.c_str(), in_library, &why), nullptr);
  EXPECT_NE(why.find(library.string()), std::string::npos) << why;
  const std::string older = source_file("older_than_library", kDeclaration, std::chrono::hours(0));
  fs::last_write_time(older, fs::last_write_time(library) - std::chrono::hours(1));
  EXPECT_NE(kiln::detail::source_lines(older.c_str(), in_library, &why), nullptr) << why;
}

}  // namespace
