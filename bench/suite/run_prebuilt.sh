#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# kiln-suite on a machine without LLVM development files (the GPU machine's 16 cores): libkiln comes prebuilt
# from a KILN_LLVM_STATIC build made elsewhere (tools/static_dist.sh); the suite and its hand-written C++/OpenMP
# references are compiled here by bench/build_prebuilt.sh (this machine's g++, bench/CMakeLists.txt's flags).
# Then run_suite.sh.
#   bash bench/suite/run_prebuilt.sh LIBDIR [run_suite.sh options: --runs R --reps N --threads T --out DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
libdir=$(cd "${1:?usage: run_prebuilt.sh LIBDIR [run_suite.sh options]}" && pwd)
shift
build=${SUITE_BUILD:-/tmp/kiln-suite-prebuilt}
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bash bench/build_prebuilt.sh "$libdir" "$build" kiln-suite
bash bench/suite/run_suite.sh "$build" "$@"
