#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The suite against its hand-written references and Numba (bench/peers/run_suite_peers.py) on a machine without
# LLVM development files or network: the GPU machine's 16 cores. libkiln comes prebuilt (tools/static_dist.sh:
# LLVM linked in; its archive is ~11 MB, so it fits a device call's 64 MiB with the source tree), kiln-suite and
# its C++/OpenMP references are compiled here (bench/build_prebuilt.sh: this machine's g++, -march=native for
# the references), and Numba is the machine's own (/opt/torch/.venv there, else PYTHON or python3).
#   OUT=DIR bash bench/peers/run_suite_peers_prebuilt.sh KILN_DIST [run_suite_peers.py args: --threads 16 --aa ...]
# KILN_DIST is libkiln's directory (build-static/dist) or tools/static_dist.sh's archive of it
# (build-static/kiln-dist.tar.xz). DIR (default /tmp/kiln-suite-peers) receives suite_peers.md/.csv, the raw
# per-run outputs, build.log, smoke.txt and SOURCE (the commit the carried libkiln was built from).
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=${1:?usage: run_suite_peers_prebuilt.sh KILN_DIST [run_suite_peers.py args]}
shift
OUT=${OUT:-/tmp/kiln-suite-peers}
mkdir -p "$OUT"
t0=$(date +%s)
if [ -f "$dist" ]; then  # the archive: dist/{libkiln.so.0, libsodium.so.23, include/nlohmann, SOURCE}
  rm -rf /tmp/kiln-dist && mkdir -p /tmp/kiln-dist
  tar -xJf "$dist" -C /tmp/kiln-dist
  dist=/tmp/kiln-dist/dist
fi
libdir=$(cd "$dist" && pwd)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cp "$libdir/SOURCE" "$OUT/SOURCE" 2>/dev/null ||
  echo "unknown (a dist made before static_dist.sh recorded it)" >"$OUT/SOURCE"
echo "run_suite_peers_prebuilt: libkiln built from $(head -1 "$OUT/SOURCE")" >&2
build=${KILN_PREBUILT_BUILD:-/tmp/kiln-suite-prebuilt}
bash bench/build_prebuilt.sh "$libdir" "$build" kiln-suite >"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log" >&2; exit 1; }
echo "run_suite_peers_prebuilt: kiln-suite built in $(( $(date +%s) - t0 )) s" >&2
# Every kernel once at a tiny size, results checked: a library that does not load or a wrong result shows here,
# before the timed runs.
"$build/bench/kiln-suite" --smoke >"$OUT/smoke.txt" 2>&1 || { cat "$OUT/smoke.txt" >&2; exit 1; }

[ -d /opt/torch/.venv/bin ] && export PATH="/opt/torch/.venv/bin:$PATH"
py=${PYTHON:-python3}
python3 bench/peers/run_suite_peers.py --build "$build" --python "$py" --out "$OUT" "$@"
echo "run_suite_peers_prebuilt: $(( $(date +%s) - t0 )) s in all" >&2
