#!/usr/bin/env bash
# Side-by-side training speed of chapters 7 and 8 (SRL, translation) in
# Plumb, PyTorch and Keras: each framework trains one short epoch of the
# same recipe on the real data, the frameworks one after another within a
# round, ROUNDS rounds; prints each epoch's rate (sequences/s for SRL,
# target words/s for translation) and the process's peak RSS from its run
# log. Read the best of the rounds. Outside CI.
#
#   bash bench/chapter_speed.sh srl|translate [ROUNDS] [THREADS]
#   PLUMB_DATA=DIR PY=.venv/bin/python LIMIT=1000 bash bench/chapter_speed.sh srl 3 2
set -euo pipefail
model=${1:?usage: chapter_speed.sh srl|translate [ROUNDS] [THREADS]}
rounds=${2:-3}
threads=${3:-2}
py=${PY:-/work/main/.venv/bin/python}
data=${PLUMB_DATA:-/work/shared/data}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/plumb" ./cmd/plumb
case $model in
srl) limit=${LIMIT:-1000} extra=() ;;
translate) limit=${LIMIT:-3200} extra=(--eval-limit 20) ;;
*) echo "chapter_speed.sh: unknown model $model (want srl or translate)" >&2; exit 2 ;;
esac
report() { # framework round log-dir
	"$py" - "$1" "$2" "$3/log.jsonl" <<'EOF'
import json, sys
fw, rnd, path = sys.argv[1:]
recs = [json.loads(l) for l in open(path)]
ep = [r for r in recs if r["kind"] == "epoch"]
if not ep:
    sys.exit(f"round {rnd} {fw}: no epoch record in {path}")
peak = max(r.get("peak_rss_bytes", 0) for r in recs) / 2**20
print(f"round {rnd} {fw:7s} {ep[0]['samples_per_sec']:9.1f}/s  peak RSS {peak:6.0f} MiB")
EOF
}
for r in $(seq "$rounds"); do
	GOMAXPROCS=$threads "$tmp/plumb" train "$model" --data "$data" --limit "$limit" "${extra[@]}" --log "$tmp/plumb-$r" >/dev/null 2>&1
	report plumb "$r" "$tmp/plumb-$r"
	CUDA_VISIBLE_DEVICES= OMP_WAIT_POLICY=PASSIVE "$py" "bench/${model}_torch.py" --data "$data" --limit "$limit" "${extra[@]}" --threads "$threads" --log "$tmp/torch-$r" >/dev/null 2>&1
	report pytorch "$r" "$tmp/torch-$r"
	"$py" "bench/${model}_keras.py" --data "$data" --limit "$limit" "${extra[@]}" --threads "$threads" --log "$tmp/keras-$r" >/dev/null 2>&1
	report keras "$r" "$tmp/keras-$r"
done
