#!/usr/bin/env bash
# Creates .venv-peers with the peer systems kiln is compared against on the CPU (Numba, NumPy) and, when a
# GPU is present and CuPy installs, CuPy. Idempotent: a second run only checks the versions.
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
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "cupy-cuda13x" || echo "peers: CuPy did not install" >&2
fi
"$venv/bin/python" - <<'PY'
import numba, numpy
print(f"peers: numba {numba.__version__}, numpy {numpy.__version__}")
PY
