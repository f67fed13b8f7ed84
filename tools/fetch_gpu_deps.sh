#!/usr/bin/env bash
# Unpacks libsodium (headers and shared library; the disk cache seals entries with it) into .deps/sodium, for a
# machine without apt such as the GPU machine: run it here, then carry .deps there. cmake
# (cmake/KilnDependencies.cmake) uses .deps/sodium when the system has no libsodium, and tools/gpu_check.sh puts
# its library on LD_LIBRARY_PATH.
#   bash tools/fetch_gpu_deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.deps/sodium
tmp=$(mktemp -d)
chmod 755 "$tmp"  # apt-get download writes as the _apt user when it can
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libsodium-dev libsodium23)
rm -rf "$dest"
mkdir -p "$dest"
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$dest"; done
ls "$dest"/usr/include/sodium.h "$dest"/usr/lib/*/libsodium.so*
