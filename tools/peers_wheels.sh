#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fetches, here, what the GPU machine needs to run the JIT peers of issue 20 (it has Python 3.12, NumPy 2.5,
# SymPy, CuPy and Numba, and no network): the cp312 wheels of the versions tools/peers_setup.sh pins and
# their dependencies missing there, into .whl-peers/ (ignored by git through .git/info/exclude).
#
# Halide's wheel (69 MB) is over the 64 MiB a device call carries, so it travels as halide-jit.tar.xz: the
# same package with only what JIT compilation imports (the Python module, libHalide.so, the Adams2019 plugin;
# no headers, static libraries, tools or other autoschedulers), unpacked into the --target directory.
#
# Taichi's wheel (56 MB) likewise travels as taichi-slim.tar.xz: the package without its C API library
# (_lib/c_api, 55 MB unpacked: the C/C++ embedding API, which Python does not load) and its headers, so that it fits
# a call next to libkiln (the 16-core CPU table: bench/peers/run_jit_peers_prebuilt.sh).
#
# One device call cannot carry all of them: the steps and what each carries are printed at the end and are
# those of docs/performance.md ("JIT peers"): bash bench/peers/run_gpu.sh installs whatever of them it finds.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.whl-peers
mkdir -p "$dir"
grep -qx '/.whl-peers/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info && echo '/.whl-peers/' >>.git/info/exclude; }
fetch() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$dir" "$@"
}
fetch drjit==1.5.0 dill==0.4.1 devito==4.8.23 pytools==2026.1.1 anytree==2.13.0 \
  platformdirs==4.14.8 siphash24==1.9
# cgen and codepy publish source distributions only: pure Python, so pip builds the same wheel for any Python.
python3 -m pip wheel -q --no-deps -w "$dir" cgen==2025.1 codepy==2023.1
if [ ! -s "$dir/halide-jit.tar.xz" ]; then
  tmp=$(mktemp -d)
  fetch -d "$tmp" halide==21.0.0
  (cd "$tmp" && unzip -q halide-*.whl &&
   tar -cJf halide-jit.tar.xz halide/__init__.py halide/_generator_helpers.py halide/imageio.py \
     halide/halide_.cpython-312-x86_64-linux-gnu.so halide/lib64/libHalide.so \
     halide/lib64/libautoschedule_adams2019.so halide-21.0.0.dist-info)
  mv "$tmp/halide-jit.tar.xz" "$dir/"
  rm -rf "$tmp"
fi
if [ ! -s "$dir/taichi-slim.tar.xz" ]; then
  tmp=$(mktemp -d)
  fetch -d "$tmp" taichi==1.7.4
  (cd "$tmp" && unzip -q taichi-*.whl && rm -rf taichi/_lib/c_api taichi-1.7.4.data &&
   tar -cf - taichi taichi-1.7.4.dist-info | xz -T0 -6 >taichi-slim.tar.xz)
  mv "$tmp/taichi-slim.tar.xz" "$dir/"
  rm -rf "$tmp"
fi
size() { du -cb "$@" | tail -1 | awk '{printf "%.1f MB", $1 / 1e6}'; }
echo "peers_wheels: $(size "$dir"/*) in $dir"
echo "  GPU, Dr.Jit + Taichi:   $(size "$dir"/drjit-*.whl "$dir"/taichi-slim.tar.xz "$dir"/dill-*.whl)"
echo "  GPU, Halide:            $(size "$dir"/halide-jit.tar.xz)"
echo "  CPU (16 cores), Devito: $(size "$dir"/devito-*.whl "$dir"/{pytools,anytree,platformdirs,siphash24,cgen,codepy}-*.whl)"
