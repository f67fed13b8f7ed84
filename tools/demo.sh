#!/usr/bin/env bash
# Installs what is missing, builds kiln (Release) and runs the demo: every example program, each printing
# its result, the plain C++ reference and timings, and failing on a mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
status=0
compiled=0
loaded=0
for ex in pi saxpy dot; do
  echo "== $ex"
  out=$(./build/examples/$ex) || status=1
  echo "$out"
  # Each example reports "<name> cache: C compiled, L loaded from disk (dir)".
  c=0 l=0
  read -r c l < <(sed -n 's/.* cache: \([0-9]*\) compiled, \([0-9]*\) loaded from disk.*/\1 \2/p' <<<"$out") || true
  compiled=$((compiled + ${c:-0}))
  loaded=$((loaded + ${l:-0}))
done
echo "== kernels: $compiled compiled, $loaded loaded from the disk cache"
exit $status
