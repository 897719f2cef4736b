#!/bin/sh
# generate.sh compiles every kernels/*.cu to PTX for compute_70, which the
# driver JIT-compiles for newer GPUs. `go generate ./ops/cuda` runs it from
# ops/cuda; it needs nvcc (install-toolkit.sh).
set -eu
cd "$(dirname "$0")"
for f in *.cu; do
	nvcc -ptx -arch=compute_70 -O3 -lineinfo -o "${f%.cu}.ptx" "$f"
done
