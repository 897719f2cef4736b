#!/bin/sh
# build.sh builds a fake libcuda.so.1 in $OUT (default /tmp/fakecuda) so the
# real cuda test binary runs on a machine without a GPU, as CI does through
# `ops/cuda/devicecheck.sh emulate`. The library answers the driver calls
# ops/cuda makes on host memory and runs every kernel of ops/cuda/kernels
# by compiling its .cu source as C++ against emu.h: each CUDA thread is a
# ucontext fiber of one OS thread, blocks run one at a time (so __shared__
# is static), __syncthreads, __syncwarp and the warp shuffles are barriers
# at which fibers yield, and wmma is mocked (mma_mock.h), so the TF32
# kernel's tiling is checked but not the hardware fragment layout.
#
#   sh build.sh REPO BIN    # REPO: the checkout; BIN: the cuda test binary,
#                           # whose other cu* imports become stubs that fail
#   LD_LIBRARY_PATH=/tmp/fakecuda BIN -test.run 'TestLSTM|TestAttention'
#
# What it checks: each kernel's arithmetic, indexing, launch geometry and
# barrier placement against the CPU ops. What it cannot: timing, real
# memory races between blocks, the PTX actually shipped (it compiles the
# .cu source), and hardware fragment layouts. It is slow (one core, a
# context switch per barrier): tests only, never the benchmarks.
set -eu
REPO=$(cd "${1:?usage: build.sh REPO [BIN]}" && pwd)
BIN=${2:-}
OUT=${OUT:-/tmp/fakecuda}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
cp "$HERE"/emu.h "$HERE"/mma_mock.h "$HERE"/reg.h "$HERE"/fake.cpp "$OUT"/
cd "$OUT"
K="$REPO/ops/cuda/kernels"
python3 - "$K" <<'PY'
import re, glob, os, sys
k = sys.argv[1]
for cu in sorted(glob.glob(k + '/*.cu')):
    base = os.path.basename(cu)[:-3]
    ptx = cu[:-3] + '.ptx'
    if not os.path.exists(ptx):
        continue
    names = re.findall(r'^\.visible \.entry (\w+)\(', open(ptx).read(), re.M)
    with open(f'tu_{base}.cpp', 'w') as f:
        f.write('#include "emu.h"\n#include "mma_mock.h"\n#define _MMA_H_\n')
        f.write(f'#include "{cu}"\n#include "reg.h"\n')
        f.write('static Registrar reg_%s({%s});\n' % (base, ', '.join(f'{{"{n}", make(&{n})}}' for n in names)))
PY
if [ -n "$BIN" ]; then
	nm -D "$BIN" | awk '$1=="U" && $2 ~ /^cu/ {print $2}' > syms.txt
	python3 - <<'PY'
import re
impl = set(re.findall(r'^int (\w+)\(', open('fake.cpp').read(), re.M))
with open('stubs.cpp', 'w') as f:
    f.write('#include <cstdio>\nextern "C" {\n')
    for s in open('syms.txt').read().split():
        if s not in impl:
            f.write(f'int {s}() {{ fprintf(stderr, "fakecuda: {s} not implemented\\n"); return 801; }}\n')
    f.write('}\n')
PY
fi
rm -f ./*.o
for f in tu_*.cpp fake.cpp stubs.cpp; do
	g++ -std=c++20 -O1 -fPIC -w -I"$K" -c "$f" -o "${f%.cpp}.o"
done
g++ -shared -o libcuda.so.1 ./*.o -Wl,-soname,libcuda.so.1
echo "built $OUT/libcuda.so.1"
