#!/bin/sh
# steady.sh measures the spread of Plumb's benchmarks (issue 40, item 1):
# for ROUNDS interleaved rounds, each workload at 1 and 2 threads runs in
# a fresh process for BLOCKS blocks of at least BLOCKTIME each (a block:
# as many iterations as fill BLOCKTIME, timed as one), and every block's
# time per iteration is kept; then it prints, per workload and thread
# count, the best, median and p90 block and the spread median/best − 1 as
# a markdown table (bench/cmd/steady). The machine may be shared: quote
# the load it logs beside the table.
#
#   sh bench/steady.sh [ROUNDS] [BLOCKS] [WORKLOADS] [THREADS]
#   sh bench/steady.sh 3 10 "sgemm mlp cnn lstm conv" "1 2"   # the defaults
#
# BLOCKTIME (default 0.5s) sets the block time. PyTorch's side is not timed
# here: bench/kernels.py times single steps, not blocks.
set -eu
rounds=${1:-3}
blocks=${2:-10}
workloads=${3:-sgemm mlp cnn lstm conv}
threads=${4:-1 2}
blocktime=${BLOCKTIME:-0.5s}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
go build -o "$tmp/steady" ./bench/cmd/steady
for w in $workloads; do
	case $w in
	sgemm) pkg=internal/gemm ;;
	mlp | cnn) pkg=bench ;;
	lstm) pkg=graph ;;
	conv) pkg=ops ;;
	*) echo "steady.sh: unknown workload $w, want sgemm, mlp, cnn, lstm or conv" >&2; exit 2 ;;
	esac
	bin=$tmp/$(basename "$pkg").test
	[ -e "$bin" ] || go test -c -o "$bin" "./$pkg"
done
log=$tmp/log
for r in $(seq "$rounds"); do
	for n in $threads; do
		for w in $workloads; do
			"$tmp/steady" run -bins "$tmp" -workload "$w" -threads "$n" -blocks "$blocks" -blocktime "$blocktime" >>"$log"
		done
	done
	echo "round $r done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "ms per iteration over $rounds rounds of $blocks blocks of at least $blocktime (log: $log)"
"$tmp/steady" table <"$log"
