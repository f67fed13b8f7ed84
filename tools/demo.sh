#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs what is missing, builds libkiln and three example programs (Release; not the tests, benchmarks or
# tools) and runs them: pi, saxpy and dot, each checked against plain C++ (a mismatch fails the demo), with
#   - the first call's time in a new process with an empty kernel cache (the kernel is compiled), and in a
#     second process with the same cache (the kernel is loaded from disk);
#   - the steady-state speed against a serial C++ loop and a hand-written OpenMP loop of the same work.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# The options are given explicitly: build/ may have been configured by tools/test.sh (everything on).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_EXAMPLES=ON -DKILN_BUILD_TESTS=OFF \
      -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_TOOLS=OFF
cmake --build build --target pi saxpy dot

# A kernel cache of the demo's own, empty at the start, so that the first process really compiles (and the
# user's cache is left alone).
cache=$(mktemp -d "${TMPDIR:-/tmp}/kiln-demo-cache.XXXXXX")
trap 'rm -rf "$cache"' EXIT
export KILN_CACHE=on KILN_CACHE_DIR="$cache"

status=0
compiled=0
loaded=0
count() {  # adds up each run's "<name> cache: C compiled, L loaded from disk (dir)" line
  local c=0 l=0
  read -r c l < <(sed -n 's/.* cache: \([0-9]*\) compiled, \([0-9]*\) loaded from disk.*/\1 \2/p' <<<"$1") || true
  compiled=$((compiled + ${c:-0}))
  loaded=$((loaded + ${l:-0}))
}
for ex in pi saxpy dot; do
  echo "== $ex: a new process, empty kernel cache"
  out=$(./build/examples/"$ex") || status=1
  echo "$out"
  count "$out"
  echo "== $ex again: a second process, the same cache (a small size: only its first call is of interest)"
  if again=$(./build/examples/"$ex" 1000 --reps 1); then
    grep ' first call ' <<<"$again" || echo "$again"
  else
    echo "$again"
    status=1
  fi
  count "$again"
done
echo "== kernels: $compiled compiled, $loaded loaded from the disk cache"
[ $status -eq 0 ] || echo "== FAILED: a result did not match its reference, or a program failed (see above)"
exit $status
