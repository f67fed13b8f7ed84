// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/inspect.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "runtime/cache/entry_file.hpp"
#include "runtime/cache/key.hpp"

namespace kiln::cache {

Inspector::Inspector(const std::string& dir) {
  Opened d = open_cache_directory(dir, /*create=*/false);
  if (!d.problem.empty()) {
    problem_ = fmt::format("kiln does not use {}: {}", dir, d.problem);
    return;
  }
  if (!d.fd) {
    missing_ = d.error == ENOENT;
    if (!missing_) problem_ = fmt::format("cannot open {}: {}", dir, std::strerror(d.error));
    return;
  }
  dir_ = std::move(d.fd);
  const SecretResult s = read_secret(dir_.get());
  if (s.ok) secret_ = s.secret;
  else if (!s.problem.empty())
    problem_ = fmt::format("kiln does not use {}: its secret {}: {}", dir, kSecretName, s.problem);
  else if (s.missing) secret_problem_ = "the directory has no secret, so no entry can be authenticated";
  else secret_problem_ = fmt::format("cannot read the directory's secret: {}", std::strerror(s.error));
}

Inspection Inspector::inspect(const DirFile& f) const {
  Inspection out;
  if (!problem_.empty()) {
    out.problem = problem_;
    return out;
  }
  if (!secret_) {
    out.problem = secret_problem_;
    return out;
  }
  EntryFile file = read_entry_file(dir_.get(), f.name, *secret_);
  if (file.status != FileStatus::ok) {
    out.problem = file.status == FileStatus::missing ? "gone" : file.problem;
    return out;
  }
  Entry& e = file.decoded.entry;
  Key named;
  if (!parse_key(std::string_view(f.name).substr(0, 32), named) || named != e.key) {
    out.problem = fmt::format("its header's key {} differs from its file name", e.key.hex());
    return out;
  }
  bool code = false;
  for (const Blob& b : e.payloads) code = code || (b.name != "kiln.variant" && !b.data.empty());
  if (!code || e.canonical_ir.empty()) {
    out.problem = "no code or no canonical IR";
    return out;
  }
  out.ok = true;
  out.entry = std::move(e);
  return out;
}

}  // namespace kiln::cache
