"""Checks that ONNX Runtime's Cast to FLOAT16 and BFLOAT16 gives the bit
patterns onnx/run's tests expect (onnx/half_test.go, onnx/run/cast_test.go:
ties to even, subnormals, overflow to infinity, NaN). Outside CI:

    /work/venv/bin/python bench/onnx_cast_check.py

It builds a FLOAT -> FLOAT16/BFLOAT16 -> FLOAT Cast model at opset 21,
runs it in onnxruntime's CPU provider and compares the 16-bit patterns
with the table below, worked out by hand; exits 1 on a difference.
"""

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

# value, float16 bits, bfloat16 bits (as in TestNarrowHandChecked)
CASES = [
    (1 + 2**-11, 0x3C00, 0x3F80),
    (1 + 3 * 2**-11, 0x3C02, 0x3F80),
    (1 + 2**-8, 0x3C04, 0x3F80),
    (1 + 3 * 2**-8, 0x3C0C, 0x3F82),
    (2**-25, 0x0000, 0x3300),
    (3 * 2**-26, 0x0001, 0x3340),
    (2**-14, 0x0400, 0x3880),
    (1023.5 * 2**-24, 0x0400, 0x3880),
    (65504, 0x7BFF, 0x4780),
    (65519.99, 0x7BFF, 0x4780),
    (65520, 0x7C00, 0x4780),
    (-1e6, 0xFC00, 0xC974),
    (0.1, 0x2E66, 0x3DCD),
    (1 / 3, 0x3555, 0x3EAB),
    (float("inf"), 0x7C00, 0x7F80),
    (float("-inf"), 0xFC00, 0xFF80),
    (float("nan"), 0x7E00, 0x7FC0),
    (-0.0, 0x8000, 0x8000),
    (2**-130, 0x0000, 0x0008),
    (2**-134, 0x0000, 0x0000),
    (3 * 2**-135, 0x0000, 0x0001),
    (float(np.finfo(np.float32).max), 0x7C00, 0x7F80),
]


def cast_bits(x, to):
    g = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=to), helper.make_node("Cast", ["y"], ["z"], to=TensorProto.FLOAT)],
        "cast", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [len(x)])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    z = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    if to == TensorProto.BFLOAT16:
        return [int(b) for b in z.view(np.uint32) >> 16]
    return [int(b) for b in z.astype(np.float16).view(np.uint16)]


def main():
    x = np.array([c[0] for c in CASES], dtype=np.float32)
    bad = 0
    for to, col, name in [(TensorProto.FLOAT16, 1, "float16"), (TensorProto.BFLOAT16, 2, "bfloat16")]:
        for c, got in zip(CASES, cast_bits(x, to)):
            if got != c[col]:
                bad += 1
                print(f"{name}: {c[0]!r}: onnxruntime {got:#06x}, expected {c[col]:#06x}")
    print(f"onnxruntime {ort.__version__}: {2 * len(CASES) - bad} of {2 * len(CASES)} patterns as expected")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
