#!/bin/sh
# generate.sh compiles every kernels/*.cu to PTX for compute_70 (the
# *_sm80.cu files, tensor-core kernels, for compute_80), which the driver
# JIT-compiles for newer GPUs. `go generate ./ops/cuda` runs it from
# ops/cuda; it needs nvcc (install-toolkit.sh) and does nothing without it.
set -eu
cd "$(dirname "$0")"
# Without nvcc (CI's go generate ./... check, a laptop), keep the committed
# PTX: the .ptx files are generated but built only where nvcc is, so the
# generate-and-diff check needs no CUDA toolkit.
if ! command -v nvcc >/dev/null 2>&1; then
	echo "kernels/generate.sh: no nvcc; keeping the committed PTX" >&2
	exit 0
fi
for f in *.cu; do
	arch=compute_70
	case $f in *_sm80.cu) arch=compute_80 ;; esac
	nvcc -ptx -arch=$arch -O3 -lineinfo -o "${f%.cu}.ptx" "$f"
done
