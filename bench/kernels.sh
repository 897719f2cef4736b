#!/bin/sh
# kernels.sh runs issue 20's workloads side by side: Plumb's Go benchmarks
# (the fused LSTM and GRU, flash attention, ResNet-32's 31 convolutions),
# then the same shapes in TensorFlow and PyTorch (bench/kernels.py), at 1
# and at 2 threads, for ROUNDS interleaved rounds, and prints each one's
# best time per step and the speed ratio (>1: Plumb faster) against each
# framework. The machine may be shared: read the rounds' spread in the
# log it keeps.
#
#   sh bench/kernels.sh [ROUNDS]     # needs .venv (bench/requirements.txt)
set -eu
rounds=${1:-3}
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
go test -c -o "$tmp/graph.test" ./graph
go test -c -o "$tmp/ops.test" ./ops
log=$tmp/log
export CUDA_VISIBLE_DEVICES=
for r in $(seq "$rounds"); do
	for n in 1 2; do
		# Lines: workload framework threads ms
		(cd graph && "$tmp/graph.test" -test.run xxx -test.bench 'LSTMFused$|GRUFused/reset_after=true' -test.benchtime 5x -test.cpu "$n") |
			awk -v n="$n" '/^BenchmarkLSTMFused/ {print "lstm plumb", n, $3/1e6} /^BenchmarkGRUFused/ {print "gru plumb", n, $3/1e6}' >>"$log"
		(cd ops && "$tmp/ops.test" -test.run xxx -test.bench 'Attention/flash/T1024$' -test.benchtime 2x -test.cpu "$n") |
			awk -v n="$n" '/^BenchmarkAttention/ {print "attention plumb", n, $3/1e6}' >>"$log"
		# The conv benchmark also times an SGEMM in its loop: its time comes from its conv GFLOP/s.
		flops=$("$py" -c 'import sys; sys.path.insert(0, "bench"); import kernels; print(kernels.conv_flops())')
		(cd ops && "$tmp/ops.test" -test.run xxx -test.bench 'Conv2DResNet32$' -test.benchtime 2x -test.cpu "$n") |
			awk -v n="$n" -v f="$flops" '/^BenchmarkConv2DResNet32/ {print "conv plumb", n, f / ($5 * 1e9) * 1e3}' >>"$log"
		for fw in tf torch; do
			"$py" bench/kernels.py "$fw" --threads "$n" --rounds 3 2>/dev/null | awk '{print $1, $2, $3, $4}' >>"$log"
		done
	done
	echo "round $r done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "best ms per step over $rounds rounds (log: $log); ratio = framework ms / Plumb ms"
awk '{k = $1 " " $3; if (!((k, $2) in best) || $4 < best[k, $2]) best[k, $2] = $4; keys[k] = 1}
END {
	printf "%-10s %7s %10s %10s %10s %8s %8s\n", "workload", "threads", "plumb", "tf", "torch", "vs tf", "vs torch"
	n = split("lstm gru attention conv", w, " ")
	for (i = 1; i <= n; i++) for (t = 1; t <= 2; t++) {
		k = w[i] " " t
		if (!(k in keys)) continue
		p = best[k, "plumb"]; a = best[k, "tf"]; b = best[k, "torch"]
		printf "%-10s %7d %10.1f %10.1f %10.1f %7.2fx %7.2fx\n", w[i], t, p, a, b, a / p, b / p
	}
}' "$log"
