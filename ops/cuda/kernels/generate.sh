#!/bin/sh
# generate.sh compiles every kernels/*.cu to PTX for compute_70 (the
# *_sm80.cu files, tensor-core kernels, for compute_80), which the driver
# JIT-compiles for newer GPUs. `go generate ./ops/cuda` runs it from
# ops/cuda; it needs nvcc (install-toolkit.sh).
set -eu
cd "$(dirname "$0")"
for f in *.cu; do
	arch=compute_70
	case $f in *_sm80.cu) arch=compute_80 ;; esac
	nvcc -ptx -arch=$arch -O3 -lineinfo -o "${f%.cu}.ptx" "$f"
done
