#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The JIT-peers table (issue 20, bench/peers/run_jit_peers.py) on a machine without LLVM development files or
# network: the GPU machine's 16 cores. libkiln comes prebuilt (tools/static_dist.sh: LLVM linked in), kiln-bench,
# kiln-suite and their hand-written C++/OpenMP references are compiled here (bench/build_prebuilt.sh: this
# machine's g++, -march=native for the references), and the peers come from what the device call carried in
# .whl-peers/ (bench/peers/install_carried.sh; a call carries 64 MiB, so libkiln and one or two peers a call:
# docs/performance.md, "JIT peers", says which). Numba is the machine's own.
#   OUT=DIR bash bench/peers/run_jit_peers_prebuilt.sh KILN_DIST [run_jit_peers.py args: --threads 16 --peers ...]
# KILN_DIST is libkiln's directory (build-static/dist) or tools/static_dist.sh's archive of it
# (build-static/kiln-dist.tar.xz). DIR (default /tmp/kiln-peers) receives NAME.md/.csv/.png, NAME.log and raw/.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=${1:?usage: run_jit_peers_prebuilt.sh KILN_DIST [run_jit_peers.py args]}
shift
OUT=${OUT:-/tmp/kiln-peers}
mkdir -p "$OUT"
if [ -f "$dist" ]; then  # the archive: dist/{libkiln.so.0, libsodium.so.23, include/nlohmann}
  mkdir -p /tmp/kiln-dist
  tar -xJf "$dist" -C /tmp/kiln-dist
  dist=/tmp/kiln-dist/dist
fi
libdir=$(cd "$dist" && pwd)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
build=${KILN_PREBUILT_BUILD:-/tmp/kiln-jit-peers-build}
t0=$(date +%s)
bash bench/build_prebuilt.sh "$libdir" "$build" kiln-bench kiln-suite
echo "run_jit_peers_prebuilt: kiln-bench and kiln-suite built in $(( $(date +%s) - t0 )) s" >&2

# The Python with the machine's Numba (the GPU machine keeps it in /opt/torch/.venv), or PYTHON.
[ -d /opt/torch/.venv/bin ] && export PATH="/opt/torch/.venv/bin:$PATH"
py=${PYTHON:-python3}
source bench/peers/install_carried.sh
"$py" - <<'PY' >&2
import importlib, importlib.metadata
for m in ("numpy", "numba", "halide", "drjit", "taichi", "devito"):
    try:
        importlib.import_module(m)
        print(f"run_jit_peers_prebuilt: {m} {importlib.metadata.version(m)}")
    except Exception as e:  # a peer this call did not carry: its column is left out
        print(f"run_jit_peers_prebuilt: {m} absent ({type(e).__name__})")
PY
"$py" bench/peers/run_jit_peers.py --build "$build" --python "$py" --out "$OUT" --name jit_peers16 "$@" \
  2> >(tee -a "$OUT/run_jit_peers.log" >&2)
echo "run_jit_peers_prebuilt: $(( $(date +%s) - t0 )) s in all" >&2
