#!/bin/sh
# kernels_lstm.sh times issue 40's LSTM bar side by side: the fused LSTM
# (graph's BenchmarkLSTMFused: batch 32, 100 steps, 128 inputs, 256 units,
# forward+backward, float32) and PyTorch's nn.LSTM of the same shapes
# (bench/kernels.py torch --only lstm), at 1 and 2 threads, in ROUNDS
# interleaved rounds of fresh processes, each timing STEPS single steps
# after its warm-up. It prints, per side and thread count, the best and
# median step over all rounds and the ratio of medians (PyTorch / Plumb;
# above 1 Plumb is faster). BASE=DIR also times DIR's checkout of Plumb
# (a before/after in the same run). The machine may be shared: quote the
# load it logs.
#
#   sh bench/kernels_lstm.sh [ROUNDS] [STEPS]     # needs PYTHON with torch (bench/requirements.txt)
set -eu
rounds=${1:-3}
steps=${2:-8}
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
go test -c -o "$tmp/plumb.test" ./graph
sides=plumb
if [ -n "${BASE:-}" ]; then
	(cd "$BASE" && go test -c -o "$tmp/base.test" ./graph)
	sides="base plumb"
fi
log=$tmp/log
export CUDA_VISIBLE_DEVICES=
for r in $(seq "$rounds"); do
	for n in 1 2; do
		for s in $sides; do
			# One step per benchmark count; the first, cold, is dropped.
			(cd graph && "$tmp/$s.test" -test.run xxx -test.bench 'LSTMFused$' -test.benchtime 1x -test.count "$((steps + 1))" -test.cpu "$n") |
				awk -v s="$s" -v n="$n" '/^BenchmarkLSTMFused/ {if (k++) print s, n, $3 / 1e6}' >>"$log"
		done
		"$py" bench/kernels.py torch --threads "$n" --rounds "$steps" --only lstm --each 2>/dev/null |
			awk '{for (i = 5; i <= NF; i++) print "torch", $3, $i}' >>"$log"
	done
	echo "round $r done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "ms per LSTM step over $rounds rounds of $steps steps (log: $log); ratio = torch median / side median"
for n in 1 2; do
	for s in $sides torch; do
		awk -v s="$s" -v n="$n" '$1 == s && $2 == n {print $3}' "$log" | sort -g >"$tmp/sorted"
		torch=$(awk -v n="$n" '$1 == "torch" && $2 == n {print $3}' "$log" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
		awk -v s="$s" -v n="$n" -v t="$torch" '{a[NR] = $1} END {m = a[int((NR + 1) / 2)]; printf "%-6s %d thread(s): %3d steps, best %7.1f, median %7.1f, torch/median %.2fx\n", s, n, NR, a[1], m, t / m}' "$tmp/sorted"
	done
done
