#!/bin/sh
# install-mpi.sh installs Open MPI (Debian's openmpi-bin and
# libopenmpi-dev: mpirun, libmpi and the ompi-c pkg-config file) for the
# `mpi` build of package dist. It does nothing when mpirun and the
# development files are already there. Run as root on Debian 12; it
# takes about 30 s.
set -eu

if command -v mpirun >/dev/null 2>&1 && pkg-config --exists ompi-c 2>/dev/null; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq openmpi-bin libopenmpi-dev pkg-config >/dev/null
mpirun --version | head -n 1
