#!/usr/bin/env bash
# Runs a book model in Plumb, TensorFlow (Keras) and PyTorch, one after the
# other on the same data, seed and batch size, each writing a run log; then
# prints the three side by side (markdown), draws their curves into one PNG
# and checks Plumb's run against bench/kpi.json. Exits non-zero when a KPI
# fails.
#
#   bash bench/compare.sh mnist [cnn|mlp] [extra plumb/python flags, e.g. --limit 4000]
#   bash bench/compare.sh cifar10 [resnet32|vgg] [--format bin|jpeg] [--limit N] [--epochs N]
#
# Python: $PYTHON, else .venv/bin/python (pip install -r bench/requirements.txt).
# Output: bench/out/<set>-<model>/{plumb,tensorflow,pytorch}/log.jsonl and
# bench/out/<set>-<model>/compare.png. Not part of CI, which checks Plumb's
# cheap KPI only (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
mnist) model=${2:-cnn} ;;
cifar10) model=${2:-resnet32} ;;
*)
	echo "usage: bash bench/compare.sh mnist [cnn|mlp] [--limit N] [--epochs N]" >&2
	echo "       bash bench/compare.sh cifar10 [resnet32|vgg] [--format bin|jpeg] [--limit N] [--epochs N]  (data: --data DIR or PLUMB_DATA)" >&2
	exit 2
	;;
esac
set=$1
shift $(( $# >= 2 ? 2 : 1 ))
py=${PYTHON:-.venv/bin/python}
out=bench/out/$set-$model
mkdir -p "$out"

bin=bench/out/plumb
go build -o "$bin" ./cmd/plumb
echo "== Plumb"
rm -f "$out/plumb/log.jsonl" # a fresh run refuses a directory holding an earlier run's log
"$bin" train "$set" --model "$model" --log "$out/plumb" "$@"
keras=bench/mnist_keras.py torch=bench/mnist_torch.py
if [ "$set" = cifar10 ]; then
	keras=bench/keras_cifar.py torch=bench/torch_cifar.py
fi
echo "== TensorFlow (Keras)"
"$py" "$keras" --model "$model" --log "$out/tensorflow" "$@"
echo "== PyTorch"
CUDA_VISIBLE_DEVICES= "$py" "$torch" --model "$model" --log "$out/pytorch" "$@"

echo
"$bin" plot "$out/plumb" "$out/tensorflow" "$out/pytorch" -o "$out/compare.png"
echo
echo "== side by side, and Plumb's KPIs (bench/kpi.json)"
"$bin" kpi --file bench/kpi.json "$out/plumb" "$out/tensorflow" "$out/pytorch"
