#!/bin/sh
# Issue 34's side-by-side bar: builds plumb, then runs bench/infer_side.py,
# which exports the five models with plumb onnx export, checks each
# PyTorch twin against ONNX Runtime within 1e-4 and times Plumb's plan,
# ONNX Runtime and PyTorch (eager, and torch.compile unless NO_COMPILE is
# set) interleaved, printing the markdown table last. Outside CI:
#
#	sh bench/infer_side.sh DIR [ROUNDS [SECONDS]]
#
# DIR receives the ONNX files and the log (DIR/infer_side.log, which
# tail -f follows); ROUNDS (default 3) interleaved rounds, each timing
# block SECONDS long (default 1). PYTHON names the interpreter with torch
# and onnxruntime (default /work/venv/bin/python); extra infer_side.py
# flags go in ARGS.
set -eu
dir=${1:?usage: infer_side.sh DIR [ROUNDS [SECONDS]]}
rounds=${2:-3}
seconds=${3:-1}
py=${PYTHON:-/work/venv/bin/python}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"
(cd "$here" && go build -o "$dir/plumb" ./cmd/plumb)
compile=--compile
if [ -n "${NO_COMPILE:-}" ]; then compile=""; fi
grep -m1 'model name' /proc/cpuinfo || true
# shellcheck disable=SC2086 # ARGS and compile are lists of flags
CUDA_VISIBLE_DEVICES= "$py" "$here/bench/infer_side.py" --plumb "$dir/plumb" --dir "$dir" \
	--rounds "$rounds" --seconds "$seconds" $compile ${ARGS:-} >"$dir/infer_side.log" 2>&1 || {
	tail -n 40 "$dir/infer_side.log"
	exit 1
}
cat "$dir/infer_side.log"
