#!/bin/sh
# Side-by-side speed of ONNX Runtime (CPU provider, default graph
# optimisations, intra_op_num_threads = T) and Plumb's ONNX importer
# (GOMAXPROCS = T) on the models bench/onnx_compare.py exported: ResNet-50,
# MobileNetV2 and EfficientNet-B0 at batch 1 and 16 (issue 33's speed bar
# asks for ResNet-50 at 1 and 16 and MobileNetV2 at 1), at 1 and 2
# threads. Rounds are interleaved (every case and thread count per round,
# the runtimes rotating which goes first), each invocation one untimed
# warm-up Run then RUNS timed ones; the table gives the best and the
# median of all timed Runs per row and ORT's time over Plumb's (above 1.0:
# Plumb faster). With BASE set to a git revision, that revision's
# importer is built too (in a temporary worktree) and timed in the same
# rounds as "base", for before/after figures. CASES overrides the list
# ("model:batch ..."). Outside CI:
#
#	CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/onnx_compare.py --out DIR   # once
#	[BASE=REV] sh bench/onnx_speed.sh DIR [ROUNDS [RUNS]]
#
# PYTHON names the interpreter with onnxruntime (default /work/venv/bin/python).
set -eu
dir=${1:?usage: onnx_speed.sh DIR [ROUNDS [RUNS]]}
rounds=${2:-3}
runs=${3:-3}
py=${PYTHON:-/work/venv/bin/python}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
bin=$tmp/onnxcompare
base=""
cleanup() {
	if [ -n "$base" ]; then git -C "$here" worktree remove --force "$tmp/base-tree" >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$here" && go build -o "$bin" ./bench/cmd/onnxcompare)
if [ -n "${BASE:-}" ]; then
	base=$tmp/onnxcompare-base
	git -C "$here" worktree add --detach "$tmp/base-tree" "$BASE" >/dev/null 2>&1
	(cd "$tmp/base-tree" && go build -o "$base" ./bench/cmd/onnxcompare)
fi
log=$tmp/times
cases=${CASES:-"resnet50_opset17:1 resnet50_opset17:16 mobilenet_v2_opset17:1 mobilenet_v2_opset17:16 efficientnet_b0_opset17:1 efficientnet_b0_opset17:16"}
r=1
while [ "$r" -le "$rounds" ]; do
	for t in 1 2; do
		for c in $cases; do
			m=${c%%:*} b=${c##*:}
			ort() { CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=$t "$py" "$here/bench/onnx_speed.py" "$dir/$m.json" "$b" "$t" "$runs"; }
			plumb() { GOMAXPROCS=$t "$bin" -bench "$dir/$m.json" -batch "$b" -runs "$runs"; }
			before() { if [ -n "$base" ]; then GOMAXPROCS=$t "$base" -bench "$dir/$m.json" -batch "$b" -runs "$runs" | sed 's/^plumb /base /'; fi; }
			case $((r % 3)) in
			1) ort; plumb; before ;;
			2) plumb; before; ort ;;
			0) before; ort; plumb ;;
			esac
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
base = any(k[3] == "base" for k in t)
head = "| model | batch | threads | ORT best / median ms |"
if base:
    head += " base best / median ms | ORT/base (median) |"
print(head + " Plumb best / median ms | ORT/Plumb (median) | ORT/Plumb (best) |")
print("|---" * (head.count("|") + 2) + "|")
for (model, batch, threads) in sorted({k[:3] for k in t}, key=lambda k: (k[2], k[0], k[1])):
    o, p, b = (t[(model, batch, threads, who)] for who in ("ort", "plumb", "base"))
    if not o or not p:
        continue
    mo, mp = statistics.median(o), statistics.median(p)
    row = "| %s | %d | %d | %.1f / %.1f |" % (model, batch, threads, min(o), mo)
    if base:
        mb = statistics.median(b) if b else float("nan")
        row += " %.1f / %.1f | %.2fx |" % (min(b) if b else float("nan"), mb, mo / mb)
    print(row + " %.1f / %.1f | %.2fx | %.2fx |" % (min(p), mp, mo / mp, min(o) / min(p)))
PY
