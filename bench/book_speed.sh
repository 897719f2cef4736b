#!/usr/bin/env bash
# Side-by-side training speed of the book chapters' models (word2vec, text
# CNN, stacked LSTM) in Plumb, PyTorch and TensorFlow on the same random
# batches of the recipes' shapes, 2 threads each, interleaved for ROUNDS
# rounds; read the best of each. Outside CI.
#
#   bash bench/book_speed.sh [ROUNDS] [PY]      (PY: /work/main/.venv/bin/python)
#   MODELS="word2vec cnn" bash bench/book_speed.sh 2
#
# PyTorch runs with OMP_WAIT_POLICY=PASSIVE: with OpenMP's default spinning
# it ran word2vec 100-200x slower on a shared, oversubscribed machine.
set -euo pipefail
rounds=${1:-3}
py=${2:-/work/main/.venv/bin/python}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
go test -c -o "$tmp/w2v.test" ./models/word2vec
go test -c -o "$tmp/sent.test" ./models/sentiment
declare -A steps=([word2vec]=50 [cnn]=10 [lstm]=2)
for r in $(seq "$rounds"); do
	for m in ${MODELS:-word2vec cnn lstm}; do
		n=${steps[$m]}
		if [ "$m" = word2vec ]; then
			GOMAXPROCS=2 "$tmp/w2v.test" -test.run xxx -test.bench TrainStep -test.benchtime "${n}x" | grep -o '[0-9.]* peak-rss-MiB.*samples/s' | sed "s/^/round $r plumb $m speed: /" || true
		else
			GOMAXPROCS=2 "$tmp/sent.test" -test.run xxx -test.bench "TrainStep/$m\$" -test.benchtime "${n}x" | grep -o '[0-9.]* peak-rss-MiB.*words/s' | sed "s/^/round $r plumb $m speed: /" || true
		fi
		(cd bench && CUDA_VISIBLE_DEVICES= OMP_WAIT_POLICY=PASSIVE "$py" book_torch.py "$m" --speed "$n" --threads 2 2>/dev/null | sed "s/^/round $r /") || true
		(cd bench && "$py" book_keras.py "$m" --speed "$n" --threads 2 2>/dev/null | grep speed | sed "s/^/round $r /") || true
	done
done
rm -rf "$tmp"
