#!/usr/bin/env bash
# Installs what is missing, builds kiln (Release) and runs the demo: every example program, each printing
# its result, the plain C++ reference and timings, and failing on a mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
status=0
for ex in pi saxpy dot; do
  echo "== $ex"
  ./build/examples/$ex || status=1
done
exit $status
