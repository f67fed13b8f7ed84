// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The per-user secret that seals cache entries: 32 random bytes in "<cache dir>/secret", mode 0600, created with
// the first entry. Whoever cannot read it cannot produce an entry that kiln accepts (docs/cache.md, "Trust").
#pragma once

#include <array>
#include <string>

namespace kiln::cache {

inline constexpr std::size_t kSecretSize = 32;
inline constexpr const char* kSecretName = "secret";

struct Secret {
  std::array<unsigned char, kSecretSize> bytes{};
};

struct SecretResult {
  bool ok = false;
  Secret secret;          ///< when ok
  bool missing = false;   ///< there is none yet
  int error = 0;          ///< errno of a failed read or creation
  std::string problem;    ///< why the file there may not be used (owner, mode, size, a link...)
};

/// Reads the secret of the cache directory open as `dirfd`, with the ownership and mode rules of entries and no
/// access at all for group and others (trust.hpp).
SecretResult read_secret(int dirfd);

/// Reads the secret, creating it first when there is none: random bytes written to a private temporary file
/// (O_EXCL | O_NOFOLLOW, 0600), synced, then linked into place, so that racing processes agree on one secret
/// and a reader never sees a partial one.
SecretResult read_or_create_secret(int dirfd);

}  // namespace kiln::cache
