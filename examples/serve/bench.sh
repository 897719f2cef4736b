#!/bin/sh
# The serving figures of docs/benchmarks.md ("Serving"), on fresh
# (seeded, untrained) models, server and clients in one process on
# loopback:
#   1. the MNIST CNN under 64 clients for 30 s with dynamic batching;
#   2. dynamic batching (max batch 64) against batch-1 serving, at 1, 8
#      and 64 clients, interleaved round by round, for the MNIST CNN
#      (PNG requests) and the sentiment text CNN;
#   3. batch-1 serving with two workers at 64 clients;
#   4. the MNIST CNN on eval tapes against compiled plans (--engine), max
#      batch 64, at 1, 8 and 64 clients, alternating round by round.
# Steps 1-3 run the default --engine, plan. ROUNDS (default 3) and DUR (default 10s) set the rounds and each run's
# length; IMDB names the reviews the sentiment vocabulary is built from.
set -e
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-10s}
IMDB=${IMDB:-../shared/data/imdb}
bin=$(mktemp -d)/serve
vocab=$(dirname "$bin")/vocab.txt
go build -o "$bin" ./examples/serve
"$bin" --loadgen --fresh --digit none --sentiment cnn --imdb "$IMDB" --write-vocab "$vocab" \
	--endpoint sentiment --clients 1 --batches 1 --duration 1s --warmup 0s >/dev/null
uptime
"$bin" --loadgen --fresh --digit cnn --clients 64 --batches 64 --duration 30s
uptime
"$bin" --loadgen --fresh --digit cnn --clients 1,8,64 --batches 64,1 --rounds "$ROUNDS" --duration "$DUR"
uptime
"$bin" --loadgen --fresh --digit none --sentiment cnn --vocab "$vocab" --endpoint sentiment \
	--clients 1,8,64 --batches 64,1 --rounds "$ROUNDS" --duration "$DUR"
uptime
"$bin" --loadgen --fresh --digit cnn --clients 64 --batches 1 --workers 2 --rounds "$ROUNDS" --duration "$DUR"
"$bin" --loadgen --fresh --digit none --sentiment cnn --vocab "$vocab" --endpoint sentiment \
	--clients 64 --batches 1 --workers 2 --rounds "$ROUNDS" --duration "$DUR"
uptime
for round in $(seq "$ROUNDS"); do
	for engine in tape plan; do
		echo "round $round: --engine $engine"
		"$bin" --loadgen --fresh --digit cnn --engine "$engine" --clients 1,8,64 --batches 64 --duration "$DUR"
	done
done
uptime
