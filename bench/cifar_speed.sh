#!/bin/sh
# Side-by-side training speed of the book's CIFAR-10 models: Plumb
# (BenchmarkCIFARTrainStep), Keras on TensorFlow and PyTorch, each a fresh
# process timing STEPS training steps (forward, backward, Adam update) of
# batch 128 float32 after two warm-up steps, 2 threads everywhere. The
# three alternate for ROUNDS rounds and each keeps its best round, because
# the machine is shared. Samples per CPU-second (user + system time of all
# the process's threads over the timed steps) are reported too: on a
# loaded machine a process with more threads takes a larger share of the
# cores, so wall-clock rates compare the schedulers as much as the code.
# Peak RSS (GNU time's maximum resident set) is the process's over the
# whole run, including the framework's runtime.
#
#   sh bench/cifar_speed.sh [MODEL] [ROUNDS] [STEPS]    # defaults: resnet32 3 5
#
# Needs the virtualenv of bench/requirements.txt at .venv (or $PYTHON).
set -eu
model=${1:-resnet32}
rounds=${2:-3}
steps=${3:-5}
py=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" ./bench
export CUDA_VISIBLE_DEVICES= GOMAXPROCS=2 TF_CPP_MIN_LOG_LEVEL=3
for r in $(seq "$rounds"); do
	/usr/bin/time -f '%M' -o "$tmp/rss" "$tmp/bench.test" -test.run xxx -test.bench "CIFARTrainStep/$model\$" \
		-test.benchtime "${steps}x" >"$tmp/out" 2>&1
	awk -v rss="$(cat "$tmp/rss")" '/samples\/s/ { for (i = 1; i < NF; i++) { if ($(i+1) == "samples/s") w = $i; if ($(i+1) == "samples/cpu-s") c = $i }
		print "plumb", w, rss, c }' "$tmp/out" >>"$tmp/all"
	for fw in keras torch; do
		/usr/bin/time -f '%M' -o "$tmp/rss" "$py" "bench/${fw}_cifar.py" --model "$model" --speed "$steps" >"$tmp/out" 2>/dev/null
		"$py" -c 'import json, sys; d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(sys.argv[2], d["samples_per_sec"], sys.argv[3], d["samples_per_cpu_sec"])' \
			"$tmp/out" "$fw" "$(cat "$tmp/rss")" >>"$tmp/all"
	done
	echo "round $r: $(tail -3 "$tmp/all" | awk '{ printf "%s %.1f/s %.1f/cpu-s  ", $1, $2, $4 }')  load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "$model, batch 128, float32, 2 threads, best of $rounds rounds of $steps steps:"
awk '{ if (!($1 in best) || $2 > best[$1]) best[$1] = $2; if ($4 > cpu[$1]) cpu[$1] = $4; if ($3 > rss[$1]) rss[$1] = $3 }
	END { for (f in best) printf "  %-6s %8.1f samples/s (Plumb %.2fx)  %8.1f samples/cpu-s (Plumb %.2fx)  peak RSS %6.0f MiB\n",
		f, best[f], best["plumb"] / best[f], cpu[f], cpu["plumb"] / cpu[f], rss[f] / 1024 }' "$tmp/all" | sort
