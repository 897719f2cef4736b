#!/bin/sh
# devicecheck.sh builds the CUDA test binary and, on a machine with an
# NVIDIA GPU, runs it: every kernel against the CPU reference ops, the
# float32 parity goldens through the GPU path, and the benchmarks (GEMM
# 1024³, softmax 4096×1000, ResNet-32 conv2d stages at batch 128).
#
#   ops/cuda/devicecheck.sh build   # here: needs Go, cuda.h and libcuda.so (stub) to link
#   ops/cuda/devicecheck.sh run     # on the GPU machine: needs only libcuda.so.1 from the driver
#   ops/cuda/devicecheck.sh         # both, on a GPU machine with Go and the headers
#   ops/cuda/devicecheck.sh emulate # here, no GPU: the tests against fakecuda/ (CI runs this)
#
# The binary lands in ops/cuda/ops_cuda.test (ignored by git), so a copy of
# the working tree carries it to the GPU machine; it runs from ops/cuda,
# where the goldens are at ../../parity/testdata. build also makes the
# command line with the GPU trainer, ./plumb at the repository root (also
# ignored); when a copy carries it, run trains the MNIST CNN for one epoch
# with `plumb train mnist --device cuda` and evaluates the checkpoint with
# `plumb eval mnist` on the CPU and on the GPU. Both are built stripped (-s -w), about 33 and
# 26 MB, to fit a device runner's carry limit (carry:
# ["ops/cuda/ops_cuda.test", "plumb"]). The whole run is bounded by TIMEOUT
# seconds (default 420, under the 8 minutes a device slot has).
set -eu

cd "$(dirname "$0")"
bin=./ops_cuda.test
plumb=../../plumb
TIMEOUT=${TIMEOUT:-420}

build() {
	# cu's cgo flags search /usr/lib/x86_64-linux-gnu; Debian's toolkit
	# puts the link-time stub of libcuda in its stubs/ folder.
	CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations" \
		CGO_LDFLAGS="${CGO_LDFLAGS:-} -L/usr/lib/x86_64-linux-gnu/stubs -L/usr/local/cuda/lib64/stubs" \
		go test -c -tags cuda -ldflags='-s -w' -o "$bin" .
	echo "built $bin"
	CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations" \
		CGO_LDFLAGS="${CGO_LDFLAGS:-} -L/usr/lib/x86_64-linux-gnu/stubs -L/usr/local/cuda/lib64/stubs" \
		go build -tags cuda -ldflags='-s -w' -o "$plumb" ../../cmd/plumb
	echo "built $plumb"
}

run() {
	[ -x "$bin" ] || { echo "no $bin: run '$0 build' first" >&2; exit 1; }
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	log=$(mktemp)
	start=$(date +%s)
	status=0
	# Tests: each kernel against ops, then the goldens. -test.failfast
	# stops at the first failure, whose message names the kernel.
	timeout "$((TIMEOUT - 120))" "$bin" -test.v -test.count=1 -test.timeout "$((TIMEOUT - 130))s" >"$log" 2>&1 || status=$?
	grep -E '^(--- FAIL|FAIL|ok|PASS)|cuda tests on|golden cases ran|panic:' "$log" || true
	grep -A8 -- '--- FAIL' "$log" | head -60 || true
	npass=$(grep -c -- '--- PASS' "$log" || true)
	nfail=$(grep -c -- '--- FAIL' "$log" || true)
	nskip=$(grep -c -- '--- SKIP' "$log" || true)
	[ "$npass" -gt 0 ] || head -20 "$log"
	echo "tests: $npass passed, $nfail failed, $nskip skipped (exit $status) in $(($(date +%s) - start))s"
	# The command line: one epoch of the CNN on the GPU, then the saved
	# checkpoint evaluated on the CPU.
	pstatus=0
	left=$((TIMEOUT - ($(date +%s) - start)))
	if [ ! -x "$plumb" ]; then
		echo "no $plumb: train mnist --device cuda skipped"
	elif [ "$left" -gt 150 ]; then
		ck=$(mktemp -d)
		timeout 100 "$plumb" train mnist --device cuda --epochs 1 --save "$ck/cnn.safetensors" >"$log" 2>&1 || pstatus=$?
		grep -E '^(training|on |epoch|saved|plumb:)' "$log" || tail -5 "$log"
		if [ "$pstatus" -eq 0 ]; then
			timeout 40 "$plumb" eval mnist --load "$ck/cnn.safetensors" || pstatus=$?
			timeout 40 "$plumb" eval mnist --load "$ck/cnn.safetensors" --device cuda || pstatus=$?
		fi
		rm -rf "$ck"
		echo "plumb: exit $pstatus"
	else
		echo "train mnist --device cuda skipped: ${left}s left"
	fi
	bstatus=0
	left=$((TIMEOUT - ($(date +%s) - start)))
	if [ "$left" -gt 30 ]; then
		timeout "$((left - 10))" "$bin" -test.run '^$' -test.bench . -test.benchtime 20x >"$log" 2>&1 || bstatus=$?
		grep -E '^Benchmark|FAIL|panic' "$log" || head -20 "$log"
	else
		echo "benchmarks skipped: ${left}s left"
	fi
	echo "devicecheck: tests exit $status, plumb exit $pstatus, benchmarks exit $bstatus, total $(($(date +%s) - start))s"
	rm -f "$log"
	[ "$status" -eq 0 ] && [ "$pstatus" -eq 0 ]
}

# emulate runs the tests (not the benchmarks) here, without a GPU, against
# the fake libcuda.so.1 of fakecuda/, which runs each kernel's .cu source on
# the CPU. CI runs it: every kernel's goldens, and the training steps of
# models/mnist's CNN and of an LSTM classifier with the model on the
# device (model_test.go).
emulate() {
	fake=$(mktemp -d)
	trap 'rm -rf "$fake"' EXIT
	CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations" \
		CGO_LDFLAGS="${CGO_LDFLAGS:-} -L/usr/lib/x86_64-linux-gnu/stubs -L/usr/local/cuda/lib64/stubs" \
		go test -c -tags cuda -o "$fake/ops_cuda.test" .
	OUT="$fake/lib" sh fakecuda/build.sh ../.. "$fake/ops_cuda.test" >/dev/null
	LD_LIBRARY_PATH="$fake/lib" "$fake/ops_cuda.test" -test.count=1 -test.timeout 900s "$@"
}

case "${1:-all}" in
build) build ;;
emulate) shift; emulate "$@" ;;
run) run ;;
all) build && run ;;
*) echo "usage: $0 [build|run|all|emulate [test flags]]" >&2; exit 2 ;;
esac
