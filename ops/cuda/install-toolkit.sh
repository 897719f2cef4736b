#!/bin/sh
# install-toolkit.sh installs nvcc (Debian's nvidia-cuda-toolkit, CUDA 11.8 on
# bookworm), which `go generate ./ops/cuda` needs to rebuild the PTX from the
# .cu sources. Building and testing the Go code needs no toolkit: the PTX is
# committed and embedded. Run as root on Debian 12; it takes about 90 s.
#
# The toolkit lives in Debian's non-free component, so the script adds
# `contrib non-free` to every deb822 source that lists only `main`
# (/etc/apt/sources.list.d/debian.sources) or to the one-line
# /etc/apt/sources.list, then installs. Running it twice changes nothing.
#
# With the argument `headers` it installs only what compiling the `cuda`
# build needs (cuda.h and the libcuda link stub, no nvcc): CI uses that to
# vet and build the CUDA test binary, which it never runs.
set -eu

mode=${1:-toolkit}
if [ "$mode" = headers ] && [ -f /usr/include/cuda.h ] && [ -e /usr/lib/x86_64-linux-gnu/stubs/libcuda.so ]; then
	exit 0
fi
if [ "$mode" = toolkit ] && command -v nvcc >/dev/null 2>&1; then
	nvcc --version | tail -n 2
	exit 0
fi

if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	sed -i -E '/^Components:/{/non-free([^-]|$)/!s/^Components:.*$/Components: main contrib non-free/}' \
		/etc/apt/sources.list.d/debian.sources
fi
if [ -f /etc/apt/sources.list ]; then
	sed -i -E '/^deb /{/non-free([^-]|$)/!s/ main$/ main contrib non-free/}' /etc/apt/sources.list
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
if [ "$mode" = headers ]; then
	apt-get install -y --no-install-recommends nvidia-cuda-dev libcuda1
	exit 0
fi
apt-get install -y --no-install-recommends nvidia-cuda-toolkit
nvcc --version | tail -n 2
