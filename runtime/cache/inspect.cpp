#include "runtime/cache/inspect.hpp"

#include <fstream>
#include <sstream>

#include "runtime/cache/key.hpp"

namespace kiln::cache {

Inspection inspect(const DirFile& f) {
  Inspection out;
  std::ifstream in(f.path, std::ios::binary);
  std::ostringstream bytes;
  if (!in || !(bytes << in.rdbuf())) {
    out.problem = "unreadable";
    return out;
  }
  Decoded d = decode(bytes.view());
  if (d.status != DecodeStatus::ok) {
    out.problem = std::string(describe(d.status));
    if (d.status == DecodeStatus::foreign_version) out.problem += " (" + std::to_string(d.version) + ")";
    return out;
  }
  Key named;
  if (!parse_key(std::string_view(f.name).substr(0, 32), named) || named != d.entry.key) {
    out.problem = "its header's key " + d.entry.key.hex() + " differs from its file name";
    return out;
  }
  bool code = false;
  for (const Blob& b : d.entry.payloads) code = code || (b.name != "kiln.variant" && !b.data.empty());
  if (!code || d.entry.canonical_ir.empty()) {
    out.problem = "no code or no canonical IR";
    return out;
  }
  out.ok = true;
  out.entry = std::move(d.entry);
  return out;
}

}  // namespace kiln::cache
