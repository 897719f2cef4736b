#!/usr/bin/env bash
# gemm.sh times OpenBLAS (bench/openblas), Plumb's internal/gemm and gonum
# on the same shapes and prints GFLOP/s with the ratios Plumb/OpenBLAS and
# Plumb/gonum, plus the load average before and after, since the machine
# is shared. The three are timed in turn for several rounds and each keeps
# its best round per shape, so that a burst of load from another process
# during one side's turn does not decide the ratio.
# Usage: bench/gemm.sh [seconds-per-shape [rounds]]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-1}
rounds=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/gemm.test" ./internal/gemm
echo "load before: $(cat /proc/loadavg)"
for r in $(seq "$rounds"); do
	bench/openblas/run.sh "$secs" >>"$tmp/openblas"
	(cd "$tmp" && ./gemm.test -test.run '^$' -test.bench '^Benchmark(Gonum)?[SD]gemm$' -test.benchtime "${secs}s") >>"$tmp/go"
done
echo "load after:  $(cat /proc/loadavg)"
head -1 "$tmp/openblas"
echo "best of $rounds rounds, ${secs}s per shape and round"
# Benchmark lines: BenchmarkSgemm/<shape>-<procs> N ns/op G GFLOP/s
awk '
function keep(arr, key, v) { if (!(key in arr) || v + 0 > arr[key] + 0) arr[key] = v }
FNR == NR && /^OpenBLAS/ { split($1, f, "/"); keep(ob, f[2] "/" f[3], $2); next }
FNR == NR { next }
/GFLOP\/s/ {
	split($1, f, "/"); sub(/-[0-9]+$/, "", f[2])
	kind = tolower(f[1]); sub(/^benchmark/, "", kind)
	g = $(NF-1)
	if (kind ~ /^gonum/) { sub(/^gonum/, "", kind); keep(gon, kind "/" f[2], g) }
	else { if (!((kind "/" f[2]) in pl)) order[++n] = kind "/" f[2]; keep(pl, kind "/" f[2], g) }
}
END {
	printf "%-26s %9s %9s %9s %9s %9s\n", "shape", "Plumb", "gonum", "OpenBLAS", "/OpenBLAS", "/gonum"
	for (i = 1; i <= n; i++) {
		k = order[i]
		printf "%-26s %9.1f %9.1f %9.1f %9.2f %9.1f\n", k, pl[k], gon[k], ob[k], pl[k] / ob[k], pl[k] / gon[k]
	}
}' "$tmp/openblas" "$tmp/go"
