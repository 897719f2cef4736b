"""Times ONNX Runtime on a model bench/onnx_compare.py exported, for
bench/onnx_speed.sh's side-by-side with Plumb (bench/cmd/onnxcompare
-bench, which takes the same inputs): the manifest's batch-1 inputs
repeated to the batch, an InferenceSession on the CPU provider with the
default graph optimisations (ORT_ENABLE_ALL) and intra_op_num_threads set
to the thread count (inter_op 1, sequential execution), one untimed
warm-up run, then the timed runs, printed as one line

    ort MODEL batch B threads T ms: t1 t2 ...

Usage: python bench/onnx_speed.py MANIFEST.json BATCH THREADS RUNS
"""

import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    path, batch, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    d = os.path.dirname(path)
    m = json.load(open(path))
    case = next(c for c in m["cases"] if c["batch"] == 1)
    feeds = {}
    for name, a in case["inputs"].items():
        x = np.fromfile(os.path.join(d, os.path.basename(a["file"])), dtype=a["dtype"]).reshape(a["dims"])
        feeds[name] = np.ascontiguousarray(np.repeat(x, batch, axis=0))
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(os.path.join(d, m["model"]), so, providers=["CPUExecutionProvider"])
    sess.run(None, feeds)
    ms = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run(None, feeds)
        ms.append("%.2f" % ((time.perf_counter() - t) * 1000))
    print("ort %s batch %d threads %d ms: %s" % (m["model"][: -len(".onnx")], batch, threads, " ".join(ms)))


if __name__ == "__main__":
    main()
