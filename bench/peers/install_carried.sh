# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sourced by bench/peers/run_gpu.sh and run_jit_peers_prebuilt.sh on the GPU machine, which has no network: installs
# the peers a device call carried in .whl-peers/ (tools/peers_wheels.sh makes it here: wheels, and the slimmed
# Halide and Taichi packages as .tar.xz) into a site directory of their own and puts it on PYTHONPATH.
#   py=PYTHON; source bench/peers/install_carried.sh
if [ -d .whl-peers ]; then
  peers_site=${PEERS_SITE:-/tmp/peers-site}
  mkdir -p "$peers_site"
  if ls .whl-peers/*.whl >/dev/null 2>&1; then
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$peers_site" .whl-peers/*.whl
  fi
  for archive in .whl-peers/*.tar.xz; do
    [ -f "$archive" ] && tar -xJf "$archive" -C "$peers_site"
  done
  export PYTHONPATH="$peers_site${PYTHONPATH:+:$PYTHONPATH}"
fi
