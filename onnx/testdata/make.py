"""Writes the tiny ONNX models onnx's Go tests load, and the seed corpus of
FuzzDecode. Run from the repository root with onnx==1.22.0 and numpy:

    /work/venv/bin/python onnx/testdata/make.py

Uses onnx's helper API only (no torch), with a fixed seed, so the files are
the same on every run. values.json holds every initializer of the valid
models (name, dims, flat values) for the Go tests to compare against.
"""

import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(33)
values = {}


def init(model, name, arr):
    t = numpy_helper.from_array(arr, name)
    values.setdefault(model, {})[name] = {
        "dims": list(arr.shape),
        "values": [float(v) if arr.dtype.kind == "f" else int(v) for v in arr.reshape(-1)],
    }
    return t


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def save(model, name, **kw):
    onnx.checker.check_model(model)
    onnx.save_model(model, os.path.join(HERE, name), **kw)


def mlp_graph(model, batch):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])
    inits = [
        init(model, "W1", f32(4, 8)),
        init(model, "b1", f32(8)),
        init(model, "W2", f32(8, 3)),
        init(model, "b2", f32(3)),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "W1", "b1"], ["h"], name="fc1", alpha=1.0, beta=1.0, transB=0),
        helper.make_node("Relu", ["h"], ["r"], name="relu1"),
        helper.make_node("Gemm", ["r", "W2", "b2"], ["y"], name="fc2"),
    ]
    return helper.make_graph(nodes, "mlp", [x], [y], inits)


def main():
    # A 2-layer MLP, opset 17.
    m = helper.make_model(mlp_graph("mlp", 2), opset_imports=[helper.make_opsetid("", 17)], producer_name="plumb-testdata")
    save(m, "mlp.onnx")

    # Conv + BatchNormalization + Relu + GlobalAveragePool, opset 13, with a
    # float64 and an int32 initializer riding along (a Constant-free Reshape).
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    inits = [
        init("convbn", "conv.W", f32(4, 3, 3, 3)),
        init("convbn", "conv.b", f32(4)),
        init("convbn", "bn.scale", f32(4)),
        init("convbn", "bn.bias", f32(4)),
        init("convbn", "bn.mean", f32(4)),
        init("convbn", "bn.var", np.abs(f32(4)) + 0.5),
        init("convbn", "shape", np.array([1, 4], dtype=np.int64)),
        init("convbn", "unused.f64", rng.standard_normal(3)),
        init("convbn", "unused.i32", np.array([7, -2], dtype=np.int32)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv.W", "conv.b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["n"], name="bn", epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
        helper.make_node("Reshape", ["p", "shape"], ["y"], name="flatten"),
    ]
    m = helper.make_model(helper.make_graph(nodes, "convbn", [x], [y], inits), opset_imports=[helper.make_opsetid("", 13)])
    save(m, "convbn.onnx")

    # The MLP with its weights in external.bin beside it.
    # onnx appends to an existing data file, so start from none.
    if os.path.exists(os.path.join(HERE, "external.bin")):
        os.remove(os.path.join(HERE, "external.bin"))
    m = helper.make_model(mlp_graph("external", 2), opset_imports=[helper.make_opsetid("", 17)])
    save(m, "external.onnx", save_as_external_data=True, all_tensors_to_one_file=True, location="external.bin", size_threshold=0)

    # The MLP with a symbolic batch dimension, opset 21.
    m = helper.make_model(mlp_graph("symbolic", "batch"), opset_imports=[helper.make_opsetid("", 21)])
    save(m, "symbolic.onnx")

    # Opset 9: outside 11..21.
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "old",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = 4
    save(m, "opset9.onnx")

    # A float16 input, output and initializer, which the reader widens to
    # float32.
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "h"], ["y"])], "half",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2])],
        [numpy_helper.from_array(np.array([1, 2], dtype=np.float16), "h")])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "float16.onnx")

    with open(os.path.join(HERE, "values.json"), "w") as f:
        json.dump(values, f, indent=1, sort_keys=True)
        f.write("\n")

    # FuzzDecode's seeds: the valid models and corrupted copies.
    fuzz = os.path.join(HERE, "fuzz", "FuzzDecode")
    os.makedirs(fuzz, exist_ok=True)
    seeds = {}
    for name in ["mlp", "convbn", "symbolic", "opset9", "float16"]:
        with open(os.path.join(HERE, name + ".onnx"), "rb") as f:
            seeds[name] = f.read()
    mlp = seeds["mlp"]
    seeds["mlp-truncated"] = mlp[: len(mlp) // 2]
    seeds["mlp-flipped"] = bytes(b ^ 0x5A if i % 97 == 3 else b for i, b in enumerate(mlp))
    m = onnx.load_from_string(mlp)
    m.graph.initializer[0].dims[0] = 1 << 40
    seeds["mlp-hugedims"] = m.SerializeToString()
    m = onnx.load_from_string(mlp)
    t = m.graph.initializer[1]
    t.data_location = TensorProto.EXTERNAL
    t.ClearField("raw_data")
    for k, v in [("location", "../escape.bin"), ("offset", "0"), ("length", "32")]:
        e = t.external_data.add()
        e.key, e.value = k, v
    seeds["mlp-escape"] = m.SerializeToString()
    for name, data in seeds.items():
        lit = "".join("\\x%02x" % b for b in data)
        with open(os.path.join(fuzz, name), "w") as f:
            f.write('go test fuzz v1\n[]byte("%s")\n' % lit)


if __name__ == "__main__":
    main()
