#!/bin/sh
# Side-by-side speed of ONNX Runtime (CPU provider, default graph
# optimisations, intra_op_num_threads = T) and Plumb's ONNX importer
# (GOMAXPROCS = T) on the models bench/onnx_compare.py exported, issue 33's
# speed bar: ResNet-50 at batch 1 and 16 and MobileNetV2 at batch 1, at 1
# and 2 threads. Rounds are interleaved (every case and thread count per
# round, the two runtimes alternating which goes first), each invocation
# one untimed warm-up Run then RUNS timed ones; the table gives the best
# and the median of all timed Runs per row and ORT's time over Plumb's
# (above 1.0: Plumb faster). Outside CI:
#
#	CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/onnx_compare.py --out DIR   # once
#	sh bench/onnx_speed.sh DIR [ROUNDS [RUNS]]
#
# PYTHON names the interpreter with onnxruntime (default /work/venv/bin/python).
set -eu
dir=${1:?usage: onnx_speed.sh DIR [ROUNDS [RUNS]]}
rounds=${2:-3}
runs=${3:-3}
py=${PYTHON:-/work/venv/bin/python}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)/onnxcompare
trap 'rm -rf "$(dirname "$bin")"' EXIT
(cd "$here" && go build -o "$bin" ./bench/cmd/onnxcompare)
log=$(dirname "$bin")/times
cases="resnet50_opset17:1 resnet50_opset17:16 mobilenet_v2_opset17:1"
r=1
while [ "$r" -le "$rounds" ]; do
	for t in 1 2; do
		for c in $cases; do
			m=${c%%:*} b=${c##*:}
			ort() { CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=$t "$py" "$here/bench/onnx_speed.py" "$dir/$m.json" "$b" "$t" "$runs"; }
			plumb() { GOMAXPROCS=$t "$bin" -bench "$dir/$m.json" -batch "$b" -runs "$runs"; }
			if [ $((r % 2)) -eq 1 ]; then ort; plumb; else plumb; ort; fi
		done
	done | tee -a "$log"
	r=$((r + 1))
done
echo
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $rounds rounds x $runs runs"
"$py" - "$log" <<'PY'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    head, ms = line.split(" ms: ")
    who, model, _, batch, _, threads = head.split()
    t[(model, int(batch), int(threads), who)] += [float(v) for v in ms.split()]
print("| model | batch | threads | ORT best / median ms | Plumb best / median ms | ORT/Plumb (median) |")
print("|---|---|---|---|---|---|")
for (model, batch, threads) in sorted({k[:3] for k in t}, key=lambda k: (k[2], k[0], k[1])):
    o, p = t[(model, batch, threads, "ort")], t[(model, batch, threads, "plumb")]
    if not o or not p:
        continue
    mo, mp = statistics.median(o), statistics.median(p)
    print("| %s | %d | %d | %.1f / %.1f | %.1f / %.1f | %.2fx |" % (model, batch, threads, min(o), mo, min(p), mp, mo / mp))
PY
