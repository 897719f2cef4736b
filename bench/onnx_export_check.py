"""Runs the ONNX models Plumb exported (onnx/export) in ONNX Runtime and
compares them with Plumb's own outputs. Outside CI:

    mkdir -p /tmp/onnx_export
    PLUMB_ONNX_EXPORT_DIR=/tmp/onnx_export go test ./onnx/export -run TestBookModelsRoundTrip -count=1
    /work/venv/bin/python bench/onnx_export_check.py /tmp/onnx_export

(Without -run, the test's single-op cases, TestOpsRoundTrip, are written
too, as op_<case>.onnx.)

The Go test writes, per book model (the MNIST MLP and CNN, ResNet-32, the
sentiment text CNN and stacked LSTM, the translation encoder's initial
decoder state, the word2vec N-gram model, the recommender, the SRL
model's emissions, and with the variable set the CIFAR VGG, which CI
skips),
DIR/<name>.onnx and DIR/<name>.json:
for batches 1, 2 and 5, the ONNX inputs (the text models' padded word ids
and their lengths) and Plumb's eval-tape output. This script checks each
file with onnx's checker (full_check, which runs shape inference), runs it
in onnxruntime's CPU provider and prints the largest absolute difference
per model and batch; it exits 1 when one is above --tol (1e-5, the
export bar of issue 33).
"""

import argparse
import glob
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort


def array(t):
    dtype = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32}[t["dtype"]]
    return np.asarray(t["values"], dtype=dtype).reshape(t["shape"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "*.json")))
    if not files:
        sys.exit(f"no <model>.json in {args.dir}; run the Go test with PLUMB_ONNX_EXPORT_DIR first")
    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}")
    worst = 0.0
    for f in files:
        rec = json.load(open(f))
        path = os.path.join(args.dir, rec["model"])
        model = onnx.load(path)
        onnx.checker.check_model(model, full_check=True)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        out = sess.get_outputs()[0].name
        diffs = []
        for case in rec["cases"]:
            feeds = {k: array(v) for k, v in case["inputs"].items()}
            got = sess.run([out], feeds)[0]
            want = array(case["want"])
            if got.shape != want.shape:
                sys.exit(f"{rec['model']}: output shape {got.shape}, Plumb's {want.shape}")
            d = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
            diffs.append((feeds[sess.get_inputs()[0].name].shape[0], d))
            worst = max(worst, d)
        print(f"{rec['model']:<24} opset {model.opset_import[0].version} ir {model.ir_version}  " +
              "  ".join(f"batch {b}: {d:.3g}" for b, d in diffs))
    print(f"largest difference {worst:.3g} (tolerance {args.tol:g})")
    sys.exit(1 if worst > args.tol else 0)


if __name__ == "__main__":
    main()
