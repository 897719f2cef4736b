#!/usr/bin/env bash
# gemm.sh times OpenBLAS (bench/openblas), Plumb's internal/gemm and gonum
# on the same shapes in one go and prints GFLOP/s with the ratios
# Plumb/OpenBLAS and Plumb/gonum, plus the load average before and after,
# since the machine is shared. Usage: bench/gemm.sh [seconds-per-shape]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(cat /proc/loadavg)"
bench/openblas/run.sh "$secs" >"$tmp/openblas"
go test -run '^$' -bench '^Benchmark(Gonum)?[SD]gemm$' -benchtime "${secs}s" ./internal/gemm >"$tmp/go"
echo "load after:  $(cat /proc/loadavg)"
head -1 "$tmp/openblas"
# Benchmark lines: BenchmarkSgemm/<shape>-<procs> N ns/op G GFLOP/s
awk '
FNR == NR && /^OpenBLAS/ { split($1, f, "/"); ob[f[2] "/" f[3]] = $2; next }
/GFLOP\/s/ {
	split($1, f, "/"); sub(/-[0-9]+$/, "", f[2])
	kind = tolower(f[1]); sub(/^benchmark/, "", kind)
	g = $(NF-1)
	if (kind ~ /^gonum/) { sub(/^gonum/, "", kind); gon[kind "/" f[2]] = g } else { pl[kind "/" f[2]] = g; order[++n] = kind "/" f[2] }
}
END {
	printf "%-26s %9s %9s %9s %9s %9s\n", "shape", "Plumb", "gonum", "OpenBLAS", "/OpenBLAS", "/gonum"
	for (i = 1; i <= n; i++) {
		k = order[i]
		printf "%-26s %9.1f %9.1f %9.1f %9.2f %9.1f\n", k, pl[k], gon[k], ob[k], pl[k] / ob[k], pl[k] / gon[k]
	}
}' "$tmp/openblas" "$tmp/go"
