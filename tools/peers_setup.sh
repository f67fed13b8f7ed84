#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Creates .venv-peers with the peer systems kiln is compared against on the CPU (Numba, NumPy, Halide,
# Dr.Jit, Taichi, Devito) and, when a GPU is present and CuPy installs, CuPy. Idempotent: a second run only checks the versions.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${KILN_PEERS_VENV:-.venv-peers}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" 2>/dev/null || { apt-get install -y python3-venv >/dev/null && python3 -m venv "$venv"; }
fi
# Pinned so that published numbers can be reproduced. Numba 0.61.2 is the release with the prange,
# stencil and cache=True behaviour the issue discusses, and supports this Python (3.11); SciPy provides
# the BLAS that Numba's np.dot calls (logistic regression).
# matplotlib draws the plot of docs/perf.
"$venv/bin/pip" install --quiet --disable-pip-version-check "numba==0.61.2" "numpy<2.3" "scipy==1.15.3" "matplotlib==3.10.3"
# The JIT-compiled kernel languages of issue 20 (bench/peers/peer_*.py), the releases current in Nov 2026 that
# install on Python 3.11 and NumPy 2.2: Halide's JIT and its autoscheduler plugins, Dr.Jit's LLVM and CUDA
# backends, Taichi's CPU and CUDA backends, Devito (which compiles its C with the system's gcc and OpenMP).
"$venv/bin/pip" install --quiet --disable-pip-version-check "halide==21.0.0" "drjit==1.5.0" "taichi==1.7.4" \
  "devito==4.8.23" "numpy<2.3"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "cupy-cuda13x" || echo "peers: CuPy did not install" >&2
fi
"$venv/bin/python" - <<'PY'
import importlib.metadata as md
print("peers: " + ", ".join(f"{p} {md.version(p)}" for p in ("numba", "numpy", "halide", "drjit", "taichi", "devito")))
PY
