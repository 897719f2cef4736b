#!/bin/sh
# dist.sh measures data-parallel training with one core per process
# (GOMAXPROCS=1): 1 process against 2 under mpirun, for ROUNDS alternating
# rounds (the machine may be shared: compare each round's pair, and read
# the spread). Each run trains one epoch on the first LIMIT examples at
# BATCH examples per process. MODEL is
#   mnist      the MNIST CNN on the embedded digits (LIMIT 0: all 60,000);
#              a second pair of runs then measures the training time to
#              test accuracy 0.6 (measured every 10 steps on 1000 test
#              digits, that time left out);
#   sentiment  the book's stacked LSTM on IMDB ($PLUMB_DATA or DATA),
#              LIMIT reviews, tested on 500 of each label.
# It prints the lines that carry the figures. Needs Open MPI
# (dist/install-mpi.sh).
#
#   sh bench/dist.sh [ROUNDS] [LIMIT] [BATCH] [MODEL] [DATA]
set -eu
rounds=${1:-3}
limit=${2:-0}
batch=${3:-64}
model=${4:-mnist}
data=${5:-${PLUMB_DATA:-}}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/plumb
go build -tags mpi -o "$bin" ./cmd/plumb
mpirun="mpirun --allow-run-as-root --bind-to core"
case $model in
mnist) common="train mnist --limit $limit --batch $batch --epochs 1" ;;
sentiment) common="train sentiment --model lstm --limit $limit --test-limit 500 --batch $batch --epochs 1 --data $data" ;;
*)
	echo "dist.sh: MODEL $model: want mnist or sentiment" >&2
	exit 2
	;;
esac
show() { grep -E "data-parallel|^epoch|>=|peak" | sed "s/^/  $1: /"; }
for r in $(seq "$rounds"); do
	echo "round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
	GOMAXPROCS=1 "$bin" $common --dist 2>/dev/null | show "1 process "
	GOMAXPROCS=1 $mpirun -np 2 -x GOMAXPROCS "$bin" $common 2>/dev/null | show "2 processes"
done
[ "$model" = mnist ] || exit 0
echo "time to test accuracy 0.6, load $(cut -d' ' -f1-3 /proc/loadavg)"
GOMAXPROCS=1 "$bin" $common --dist --eval-every 10 2>/dev/null | show "1 process "
GOMAXPROCS=1 $mpirun -np 2 -x GOMAXPROCS "$bin" $common --eval-every 10 2>/dev/null | show "2 processes"
