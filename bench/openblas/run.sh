#!/usr/bin/env bash
# run.sh builds gemm.c against Debian's OpenBLAS (installing libopenblas-dev
# if missing) and prints GFLOP/s per shape. Usage: run.sh [seconds-per-shape]
#
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are set on some machines here and
# would force a kernel or blocking; they are unset for this run only, so
# OpenBLAS picks its own kernel for this CPU (named on the first line).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -e /usr/include/x86_64-linux-gnu/cblas.h ] && [ ! -e /usr/include/cblas.h ]; then
	apt-get update && apt-get install -y libopenblas-dev
fi
out=${TMPDIR:-/tmp}/plumb-openblas-gemm
cc -O2 -o "$out" gemm.c -lopenblas
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$out" "${1:-1}"
