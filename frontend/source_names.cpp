// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/source_names.hpp"
#include "frontend/trace_context.hpp"

#include <link.h>

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace kiln::detail {
namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

namespace {

/// The binary (executable or shared object) whose loaded segments hold `code`; the executable when `code` is
/// null or lies in none of them.
std::string binary_holding(const void* code) {
  struct Search {
    std::uintptr_t address;
    std::string path;
    bool found = false;
  } search{reinterpret_cast<std::uintptr_t>(code), {}, false};
  if (code)
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
          auto& s = *static_cast<Search*>(data);
          for (int k = 0; k < info->dlpi_phnum; ++k) {
            const ElfW(Phdr)& ph = info->dlpi_phdr[k];
            const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
            if (ph.p_type == PT_LOAD && s.address >= begin && s.address < begin + ph.p_memsz) {
              s.path = info->dlpi_name ? info->dlpi_name : "";
              s.found = true;
              return 1;
            }
          }
          return 0;
        },
        &search);
  // The executable's entry has an empty name; /proc/self/exe names it wherever it was started from.
  return search.found && !search.path.empty() ? search.path : "/proc/self/exe";
}

struct SourceFile {
  std::vector<std::string> lines;
  std::string unreadable;  ///< why the file could not be read, or ""
};

/// Whether `file` can be the source `binary` was built from: a file modified after the binary was written
/// has been edited since (its lines no longer match the positions compiled into the program), so it is
/// not. "" if it can, else why not.
std::string stale_reason(const std::string& file, const std::string& binary) {
  std::error_code e1, e2;
  const auto source_time = std::filesystem::last_write_time(file, e1);
  const auto binary_time = std::filesystem::last_write_time(binary, e2);
  if (e1 || e2 || source_time <= binary_time) return "";  // an unknown binary time cannot prove the source stale
  return fmt::format("{} was modified after {} was built", file, binary == "/proc/self/exe" ? "the program" : binary);
}

/// The lines of `file` (without their '\n'), false if it cannot be read. C stdio rather than an ifstream: a
/// process's first ifstream sets up iostreams' locale machinery, ~0.1-0.15 ms measured on the 2-core VM against
/// ~0.01 ms for a second one, and a stencil's first call reads its source for the parameters' names.
bool read_lines(const char* file, std::vector<std::string>& lines) {
  std::FILE* f = std::fopen(file, "rb");
  if (!f) return false;
  std::string text;
  char buf[8192];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  if (!ok) return false;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    lines.emplace_back(text, at, end - at);
    at = end + 1;
  }
  return true;
}

struct SourceFiles {
  std::mutex mutex;
  std::map<std::string, SourceFile> files;
  std::map<std::pair<std::string, std::string>, std::string> stale;  ///< (file, binary) -> stale_reason
};

/// Never destroyed: a kernel may be traced while the process exits (docs/architecture.md, "Exit").
SourceFiles& source_files() {
  static SourceFiles& files = *new SourceFiles;
  return files;
}

const void* traced_code() {
  const TraceContext* ctx = TraceContext::current();
  return ctx ? ctx->code : nullptr;
}

}  // namespace

const std::vector<std::string>* source_lines(const char* file, const void* code, std::string* why_not) {
  if (!file || !*file) {
    if (why_not) *why_not = "the compiler recorded no source file";
    return nullptr;
  }
  SourceFiles& all = source_files();
  const std::string binary = binary_holding(code ? code : traced_code());
  std::lock_guard lock(all.mutex);
  auto [it, fresh] = all.files.try_emplace(file);
  if (fresh) {
    if (!read_lines(file, it->second.lines) || it->second.lines.empty())
      it->second.unreadable = fmt::format("{} cannot be read (moved, or built elsewhere?)", file);
  }
  auto [verdict, unjudged] = all.stale.try_emplace({file, binary});
  if (unjudged) verdict->second = stale_reason(file, binary);
  const std::string& reason = !it->second.unreadable.empty() ? it->second.unreadable : verdict->second;
  if (why_not) *why_not = reason;
  return reason.empty() ? &it->second.lines : nullptr;
}

namespace {

/// The identifier ending just before position `end` (skipping spaces), or "".
std::string ident_before(const std::string& s, size_t end) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  size_t begin = end;
  while (begin > 0 && is_ident_char(s[begin - 1])) --begin;
  if (begin == end || std::isdigit(static_cast<unsigned char>(s[begin]))) return "";
  return s.substr(begin, end - begin);
}

bool is_keyword(const std::string& w) {
  static const char* const kw[] = {"return", "auto", "const", "constexpr", "if", "else", "for", "while", "new"};
  for (const char* k : kw)
    if (w == k) return true;
  return false;
}

}  // namespace

std::string Where::str() const {
  if (!file || !*file) return "";
  std::string f = file;
  if (const size_t slash = f.find_last_of('/'); slash != std::string::npos) f = f.substr(slash + 1);
  std::string text = f + ":" + std::to_string(line);
  if (TraceContext* ctx = TraceContext::current()) ctx->note_location(text);
  return text;
}

std::string declared_name(const Where& where) {
  // Copies made inside kiln's own headers have no user-visible name.
  if (!where.file || std::string_view(where.file).find("include/kiln/") != std::string_view::npos) return "";
  const auto* lines = source_lines(where.file);
  if (!lines || where.line == 0 || where.line > lines->size()) return "";
  const std::string& s = (*lines)[where.line - 1];
  // The location points at (or just after) the initializer: `Type name = init`, `Type name{init}`,
  // `Type name(init)`. Walk back to the nearest '=', '{' or '(' and take the identifier before it, if
  // that identifier itself follows a type-like token.
  size_t pos = std::min<size_t>(where.column > 0 ? where.column - 1 : 0, s.size());
  while (pos > 0) {
    const char c = s[pos - 1];
    if (c == '=' || c == '{' || c == '(') {
      if (c == '=' && pos >= 2 && std::string("=!<>+-*/%&|^").find(s[pos - 2]) != std::string::npos) return "";
      const std::string name = ident_before(s, pos - 1);
      if (name.empty() || is_keyword(name)) return "";
      size_t before = pos - 1;
      while (before > 0 && std::isspace(static_cast<unsigned char>(s[before - 1]))) --before;
      before -= std::min(before, name.size());
      while (before > 0 && std::isspace(static_cast<unsigned char>(s[before - 1]))) --before;
      if (before == 0) return "";
      const char prev = s[before - 1];
      if (is_ident_char(prev) || prev == '>' || prev == ',' || prev == '&') return name;
      return "";
    }
    if (c == ';' || c == ')' || c == '}') return "";
    --pos;
  }
  return "";
}

std::vector<std::string> lambda_param_names(const Where& where, size_t arity, const void* code) {
  const auto* lines = source_lines(where.file, code);
  if (!lines || where.line == 0 || where.line > lines->size()) return {};
  // Join a few lines from the call on, find the lambda's `](`...`)`, split at top-level commas and take
  // each parameter's last identifier.
  std::string text;
  for (size_t l = where.line - 1; l < lines->size() && l < where.line + 8; ++l) text += (*lines)[l] + "\n";
  const size_t bracket = text.find("](");
  if (bracket == std::string::npos) return {};
  std::vector<std::string> names;
  int depth = 0;
  size_t start = bracket + 2;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0) --depth;
    else if ((c == ',' && depth == 0) || (c == ')' && depth == 0)) {
      // The declarator is the last identifier, if something type-like precedes it (`Int n`, `Array<T> a`,
      // `const Int& n`); a parameter that is only a type (`Int`, `kiln::Int`) has no name.
      const std::string name = ident_before(text, i);
      size_t before = i;
      while (before > start && std::isspace(static_cast<unsigned char>(text[before - 1]))) --before;
      before -= std::min(before - start, name.size());
      while (before > start && std::isspace(static_cast<unsigned char>(text[before - 1]))) --before;
      const char prev = before > start ? text[before - 1] : '\0';
      const bool named = !name.empty() && prev != '\0' && prev != ':' && (is_ident_char(prev) || prev == '>' || prev == '&' || prev == '*');
      names.push_back(named ? name : std::string());
      if (c == ')') break;
      start = i + 1;
    }
  }
  if (names.size() != arity) return {};
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k].empty()) names[k] = "arg" + std::to_string(k);
  return names;
}

}  // namespace kiln::detail
