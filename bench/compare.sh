#!/usr/bin/env bash
# Runs a book model in Plumb, TensorFlow (Keras) and PyTorch, one after the
# other on the same data, seed and batch size, each writing a run log; then
# prints the three side by side (markdown), draws their curves into one PNG
# and checks Plumb's run against bench/kpi.json. Exits non-zero when a KPI
# fails.
#
#   bash bench/compare.sh mnist [cnn|mlp] [extra plumb/python flags, e.g. --limit 4000]
#
# Python: $PYTHON, else .venv/bin/python (pip install -r bench/requirements.txt).
# Output: bench/out/<model>/{plumb,tensorflow,pytorch}/log.jsonl and
# bench/out/<model>/compare.png. Not part of CI, which checks Plumb's
# cheap KPI only (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" != mnist ]; then
	echo "usage: bash bench/compare.sh mnist [cnn|mlp] [--limit N] [--epochs N]" >&2
	exit 2
fi
model=${2:-cnn}
shift $(( $# >= 2 ? 2 : 1 ))
py=${PYTHON:-.venv/bin/python}
out=bench/out/mnist-$model
mkdir -p "$out"

bin=bench/out/plumb
go build -o "$bin" ./cmd/plumb
echo "== Plumb"
"$bin" train mnist --model "$model" --log "$out/plumb" "$@"
echo "== TensorFlow (Keras)"
"$py" bench/mnist_keras.py --model "$model" --log "$out/tensorflow" "$@"
echo "== PyTorch"
CUDA_VISIBLE_DEVICES= "$py" bench/mnist_torch.py --model "$model" --log "$out/pytorch" "$@"

echo
"$bin" plot "$out/plumb" "$out/tensorflow" "$out/pytorch" -o "$out/compare.png"
echo
echo "== side by side, and Plumb's KPIs (bench/kpi.json)"
"$bin" kpi --file bench/kpi.json "$out/plumb" "$out/tensorflow" "$out/pytorch"
