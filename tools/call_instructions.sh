#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Instructions per CUDA call on the host, counted without a GPU: kiln-bench-gpu-calls on the stand-in driver
# (tests/fake_cuda_driver.cpp) under callgrind, which dumps each row's loop of --calls calls on its own. The
# count does not depend on the machine's load; the hand rows are the stand-in driver's own share. Each row runs
# in 3 rounds and the fewest instructions are reported: a round can include work left over from before it (the
# first hand row once counted 1349 and 2122 where its other rounds counted 175-179).
#   tools/call_instructions.sh [BUILD_DIR] [CALLS]   (needs valgrind; default: build, 200 calls)
set -euo pipefail
build=${1:-build}
calls=${2:-200}
bench="$build/bench/gpu/kiln-bench-gpu-calls"
fake="$build/tests/libkiln_fake_cuda.so"
[[ -x "$bench" && -f "$fake" ]] || { echo "build kiln-bench-gpu-calls and kiln_fake_cuda in $build first" >&2; exit 1; }
export KILN_CUDA_DRIVER="$fake" KILN_CACHE_DIR="${KILN_CACHE_DIR:-$build/test-kernel-cache}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p" "$bench" --n 4096 --reps 3 --calls "$calls" >/dev/null 2>"$tmp/log" ||
  { cat "$tmp/log" >&2; exit 1; }
# Each dump names its row ("Trigger: Client Request: <row>") and totals its instructions ("summary: <Ir>").
for f in "$tmp"/cg.*.[0-9]*; do
  row=$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")
  ir=$(sed -n 's/^summary: //p' "$f")
  [[ -n "$row" ]] && printf '%s\t%d\n' "$row" $(( ir / calls ))
done | sort -t$'\t' -k1,1 -k2,2n | awk -F'\t' '!seen[$1]++ { printf "%-20s %8d instructions per call\n", $1, $2 }'
