#!/bin/sh
# dist.sh measures data-parallel training of the MNIST CNN with one core
# per process (GOMAXPROCS=1): 1 process against 2 under mpirun, for
# ROUNDS alternating rounds (the machine may be shared: compare each
# round's pair, and read the spread). Each run trains one epoch on the
# first LIMIT digits at BATCH examples per process; a second pair of runs
# measures the training time to test accuracy 0.6 (measured every 10 steps
# on 1000 test digits, that time left out). It prints the lines that
# carry the figures. Needs Open MPI (dist/install-mpi.sh).
#
#   sh bench/dist.sh [ROUNDS] [LIMIT] [BATCH]
set -eu
rounds=${1:-2}
limit=${2:-12800}
batch=${3:-64}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/plumb
go build -tags mpi -o "$bin" ./cmd/plumb
mpirun="mpirun --allow-run-as-root --oversubscribe --bind-to none"
common="train mnist --limit $limit --batch $batch --epochs 1"
show() { grep -E "data-parallel|^epoch|>=|peak" | sed "s/^/  $1: /"; }
for r in $(seq "$rounds"); do
	echo "round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
	GOMAXPROCS=1 "$bin" $common --dist 2>/dev/null | show "1 process "
	GOMAXPROCS=1 $mpirun -np 2 -x GOMAXPROCS "$bin" $common 2>/dev/null | show "2 processes"
done
echo "time to test accuracy 0.6, load $(cut -d' ' -f1-3 /proc/loadavg)"
GOMAXPROCS=1 "$bin" $common --dist --eval-every 10 2>/dev/null | show "1 process "
GOMAXPROCS=1 $mpirun -np 2 -x GOMAXPROCS "$bin" $common --eval-every 10 2>/dev/null | show "2 processes"
