#!/bin/sh
# dist_align.sh trains MODEL (cnn or mlp) for EPOCHS passes on all 60,000
# digits with 1 process at batch 80 and with 2 processes (mpirun) at
# batch 40 each, with the same seed, and compares them step by step (the
# loss over all ranks of each step) and by test accuracy after each epoch.
# Runs go to DIR. Needs Open MPI (dist/install-mpi.sh).
#
# DTYPE float64 trains in double precision, where round-off no longer
# steers the two runs apart. Both runs take the GEMM path PLUMB_GEMM names
# (avx2 unless set), so that they differ only in how the batch is split:
# unpinned, each process picks its path by timing, and two paths round
# differently.
#
#   sh bench/dist_align.sh [MODEL] [EPOCHS] [DIR] [SEED] [DTYPE]
set -eu
model=${1:-cnn}
epochs=${2:-5}
dir=${3:-$(mktemp -d)}
seed=${4:-1}
dtype=${5:-float32}
export PLUMB_GEMM=${PLUMB_GEMM:-avx2}
cd "$(dirname "$0")/.."
mkdir -p "$dir"
go build -tags mpi -o "$dir/plumb" ./cmd/plumb
run="train mnist --model $model --epochs $epochs --seed $seed --dtype $dtype"
GOMAXPROCS=1 "$dir/plumb" $run --dist --batch 80 --loss-trace "$dir/one.trace" >"$dir/one.log" 2>/dev/null
GOMAXPROCS=1 mpirun --allow-run-as-root --oversubscribe -x GOMAXPROCS -x PLUMB_GEMM -np 2 "$dir/plumb" $run --batch 40 \
	--loss-trace "$dir/two.trace" >"$dir/two.log" 2>/dev/null
compare_traces() {
	awk 'NR == FNR { a[FNR] = $3; next }
	{ d = $3 - a[FNR]; if (d < 0) d = -d; r = d / (a[FNR] < 0 ? -a[FNR] : a[FNR]);
	  e[$1] = (d > e[$1] ? d : e[$1]); s[$1] += d; c[$1]++; if (r > mr) mr = r }
	END { for (k in e) printf "epoch %s: %d steps, |loss difference| max %.3g, mean %.3g\n", k, c[k], e[k], s[k] / c[k]
	      printf "largest relative difference %.3g\n", mr }' "$1" "$2" | sort
}
echo "1 process at batch 80 against 2 processes at batch 40 ($model, $dtype, $epochs epochs, seed $seed), step by step:"
compare_traces "$dir/one.trace" "$dir/two.trace"
grep -h "^epoch .*test accuracy" "$dir/one.log" | sed 's/^/  1 process:   /'
grep -h "^epoch .*test accuracy" "$dir/two.log" | sed 's/^/  2 processes: /'
