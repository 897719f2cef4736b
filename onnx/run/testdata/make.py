"""Writes the small ONNX models onnx/run's Go tests run, each with the
outputs ONNX Runtime gives for fixed inputs at batch 1 and batch 8.
Run from the repository root with /work/venv (onnx 1.22.0, onnxruntime
1.31.1, numpy; torch 2.15.0 for the exported models), outside CI:

    CUDA_VISIBLE_DEVICES= /work/venv/bin/python onnx/run/testdata/make.py

Hand-built graphs use onnx.helper; the torch models are exported with
torch.onnx.export at opset 17 (the TorchScript exporter, dynamo=False)
and at the exporter's defaults. Every random draw has a fixed seed, so a
rerun writes the same weights, inputs and outputs (ONNX Runtime's outputs
may differ in the last bits between versions); the dynamo exports'
.onnx bytes may differ in names between runs, their .json does not. <name>.json holds, per batch,
the inputs and ORT's outputs as dims and flat values.
"""

import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(1733)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def init(name, arr):
    return numpy_helper.from_array(arr, name)


def vi(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def model(nodes, name, inputs, outputs, inits, opset, ir=8, check=True):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="plumb-testdata")
    m.ir_version = ir
    if check:  # onnx 1.22's checker refuses ops deprecated since (GroupNormalization-18)
        onnx.checker.check_model(m, full_check=True)
    return m


def record(name, m_bytes, make_inputs, batches=(1, 8)):
    """Saves the model and ORT's outputs for make_inputs(batch)."""
    path = os.path.join(HERE, name + ".onnx")
    with open(path, "wb") as f:
        f.write(m_bytes)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    cases = []
    for b in batches:
        feeds = make_inputs(b)
        outs = sess.run(None, feeds)
        cases.append({
            "batch": b,
            "inputs": {k: enc(v) for k, v in feeds.items()},
            "outputs": {o.name: enc(v) for o, v in zip(sess.get_outputs(), outs)},
        })
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump({"model": name + ".onnx", "cases": cases}, f)
        f.write("\n")
    print(name, os.path.getsize(path), "bytes")


def enc(a):
    a = np.asarray(a)
    kind = {"f": "float", "i": "int", "b": "bool"}[a.dtype.kind]
    vals = a.reshape(-1).tolist()
    if kind == "float":
        vals = [float(np.float32(v)) if a.dtype == np.float32 else float(v) for v in vals]
    if kind == "bool":
        vals = [int(v) for v in vals]
    return {"dtype": str(a.dtype), "dims": list(a.shape), "values": vals}


def mlp():
    nodes = [
        helper.make_node("Gemm", ["x", "W1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "W2", "b2"], ["z"], name="fc2", alpha=0.5, beta=2.0),
        helper.make_node("Softmax", ["z"], ["y"], name="softmax", axis=-1),
    ]
    inits = [init("W1", f32(16, 12)), init("b1", f32(16)), init("W2", f32(16, 5)), init("b2", f32(5))]
    m = model(nodes, "mlp", [vi("x", TensorProto.FLOAT, ["batch", 12])], [vi("y", TensorProto.FLOAT, ["batch", 5])], inits, 13)
    record("mlp", m.SerializeToString(), lambda b: {"x": f32(b, 12)})


def cnn():
    nodes = [
        helper.make_node("Conv", ["x", "c1.W", "c1.b"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn.s", "bn.b", "bn.m", "bn.v"], ["n1"], name="bn1", epsilon=1e-3),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "c2.W"], ["c2"], name="conv2_dw", kernel_shape=[3, 3], group=8, strides=[2, 2], auto_pad="SAME_UPPER"),
        helper.make_node("Clip", ["c2", "zero", "six"], ["r2"], name="relu6"),
        helper.make_node("AveragePool", ["r2"], ["p2"], name="avg", kernel_shape=[2, 2], strides=[1, 1], ceil_mode=1, pads=[0, 0, 1, 1]),
        helper.make_node("GlobalAveragePool", ["p2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.W", "fc.b"], ["y"], name="fc", transB=1),
    ]
    inits = [
        init("c1.W", f32(8, 3, 3, 3, scale=0.5)), init("c1.b", f32(8)),
        init("bn.s", f32(8)), init("bn.b", f32(8)), init("bn.m", f32(8)), init("bn.v", np.abs(f32(8)) + 0.5),
        init("c2.W", f32(8, 1, 3, 3)),
        init("zero", np.array(0, np.float32)), init("six", np.array(6, np.float32)),
        init("fc.W", f32(4, 8)), init("fc.b", f32(4)),
    ]
    m = model(nodes, "cnn", [vi("x", TensorProto.FLOAT, ["N", 3, 11, 11])], [vi("y", TensorProto.FLOAT, ["N", 4])], inits, 17)
    record("cnn", m.SerializeToString(), lambda b: {"x": f32(b, 3, 11, 11)})


def textcnn():
    vocab, emb, seq = 20, 6, 7
    nodes = [
        helper.make_node("Gather", ["emb", "ids"], ["e"], name="embedding"),
        helper.make_node("Transpose", ["e"], ["et"], name="to_ncw", perm=[0, 2, 1]),
        helper.make_node("Conv", ["et", "conv.W", "conv.b"], ["c"], name="conv1d", kernel_shape=[3], pads=[1, 1]),
        helper.make_node("Tanh", ["c"], ["t"], name="tanh"),
        helper.make_node("ReduceMax", ["t"], ["m"], name="maxpool_time", axes=[2], keepdims=0),
        helper.make_node("MatMul", ["m", "fc.W"], ["z"], name="fc"),
        helper.make_node("Add", ["z", "fc.b"], ["y"], name="bias"),
    ]
    inits = [init("emb", f32(vocab, emb)), init("conv.W", f32(5, emb, 3, scale=0.5)), init("conv.b", f32(5)),
             init("fc.W", f32(5, 3)), init("fc.b", f32(3))]
    m = model(nodes, "textcnn", [vi("ids", TensorProto.INT64, ["batch", seq])], [vi("y", TensorProto.FLOAT, ["batch", 3])], inits, 13)
    record("textcnn", m.SerializeToString(), lambda b: {"ids": rng.integers(-vocab, vocab, size=(b, seq)).astype(np.int64)})


def shapes():
    """Shape arithmetic around a symbolic batch: most of it folds, what
    touches the batch runs at run time."""
    i64 = lambda *v: np.array(v, np.int64)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero_s"], ["n"], name="batch_dim"),         # symbolic
        helper.make_node("Shape", ["x"], ["tail"], name="shape_tail", start=-2),      # [6 4], folds
        helper.make_node("Gather", ["tail", "zero_s"], ["c"], name="chan_dim"),       # 6, folds
        helper.make_node("Mul", ["c", "four_s"], ["feat"], name="features"),          # 24, folds
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsq_batch"),
        helper.make_node("Unsqueeze", ["feat", "axes0"], ["f1"], name="unsq_feat"),
        helper.make_node("Concat", ["n1", "f1"], ["flat_shape"], name="concat_shape", axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"], name="flatten"),    # [batch, 24]
        helper.make_node("Range", ["zero_s", "feat", "one_s"], ["r"], name="range"),  # 0..23, folds
        helper.make_node("Cast", ["r"], ["rf"], name="cast_range", to=TensorProto.FLOAT),
        helper.make_node("Div", ["feat", "two_s"], ["half"], name="half"),             # 12, folds
        helper.make_node("Less", ["r", "half"], ["lower"], name="lower_half"),
        helper.make_node("Expand", ["lower", "flat_shape"], ["mask"], name="expand_mask"),
        helper.make_node("Mul", ["flat", "rf"], ["scaled"], name="scale"),
        helper.make_node("Where", ["mask", "scaled", "flat"], ["w"], name="where"),
        helper.make_node("ConstantOfShape", ["flat_shape"], ["ones"], name="ones", value=numpy_helper.from_array(np.array([0.5], np.float32))),
        helper.make_node("Add", ["w", "ones"], ["wo"], name="add_ones"),
        helper.make_node("Slice", ["wo", "starts", "ends", "axes1", "steps"], ["sl"], name="slice"),  # [batch, 12]
        helper.make_node("Shape", ["sl"], ["s2"], name="shape2"),
        helper.make_node("Slice", ["s2", "one", "two"], ["last"], name="last_dim"),  # [12], folds
        helper.make_node("Sub", ["n1", "one"], ["nm1"], name="batch_minus_1"),       # run time
        helper.make_node("Add", ["nm1", "one"], ["n2"], name="batch_again"),
        helper.make_node("Concat", ["n2", "last", "one"], ["s3"], name="concat_shape3", axis=0),
        helper.make_node("Reshape", ["sl", "s3"], ["sl3"], name="reshape3"),          # [batch, 12, 1]
        helper.make_node("Squeeze", ["sl3", "axes2"], ["y"], name="squeeze"),
        helper.make_node("Constant", [], ["k"], name="const", value=numpy_helper.from_array(np.array([3], np.int64))),
        helper.make_node("ConstantOfShape", ["k"], ["kz"], name="zeros_k", value=numpy_helper.from_array(np.array([2], np.int64))),
        helper.make_node("Equal", ["kz", "two"], ["eq"], name="equal"),
        helper.make_node("Cast", ["eq"], ["count"], name="count", to=TensorProto.INT64),
    ]
    inits = [
        init("one", i64(1)), init("two", i64(2)),
        init("axes0", i64(0)), init("axes1", i64(1)), init("axes2", i64(2)),
        init("zero_s", np.array(0, np.int64)), init("one_s", np.array(1, np.int64)),
        init("two_s", np.array(2, np.int64)), init("four_s", np.array(4, np.int64)),
        init("starts", i64(-2)), init("ends", i64(-1 << 62)), init("steps", i64(-2)),
    ]
    m = model(nodes, "shapes", [vi("x", TensorProto.FLOAT, ["batch", 6, 4])],
              [vi("y", TensorProto.FLOAT, ["batch", 12]), vi("count", TensorProto.INT64, [3])], inits, 17)
    record("shapes", m.SerializeToString(), lambda b: {"x": f32(b, 6, 4)})


def extras():
    """Split, Pad, Tile, Sum and the composed reductions, at opset 13 (axes
    and split as attributes or inputs as that opset has them) and 18
    (num_outputs, Pad's axes, reduction axes as inputs)."""
    i64 = lambda *v: np.array(v, np.int64)
    nodes13 = [
        helper.make_node("Split", ["x", "split"], ["a", "b"], name="split", axis=1),
        helper.make_node("Pad", ["a", "pads", "pv"], ["ap"], name="pad_const"),
        helper.make_node("Pad", ["b", "pads"], ["bp"], name="pad_reflect", mode="reflect"),
        helper.make_node("Tile", ["bp", "reps"], ["bt"], name="tile"),
        helper.make_node("Slice", ["bt", "s0", "s1", "s2"], ["bs"], name="crop"),  # [batch, 5, 7]
        helper.make_node("Sum", ["ap", "bs", "ap"], ["s"], name="sum3"),
        helper.make_node("ReduceSumSquare", ["s"], ["r1"], name="sumsq", axes=[2], keepdims=0),
        helper.make_node("ReduceL2", ["s"], ["r2"], name="l2", axes=[1, 2], keepdims=1),
        helper.make_node("ReduceLogSumExp", ["s"], ["r3"], name="lse", axes=[-1], keepdims=0),
        helper.make_node("Pad", ["x", "crop"], ["edge"], name="pad_edge_crop", mode="edge"),
    ]
    inits = [init("split", i64(2, 3)), init("pads", i64(0, 1, 2, 0, 2, 1)), init("pv", np.array(0.5, np.float32)),
             init("reps", i64(1, 1, 2)), init("s0", i64(0, 0)), init("s1", i64(5, 7)), init("s2", i64(1, 2)),
             init("crop", i64(0, -1, 1, 0, 2, -1))]
    m = model(nodes13, "extras13", [vi("x", TensorProto.FLOAT, ["batch", 5, 4])],
              [vi("r1", TensorProto.FLOAT, ["batch", 5]), vi("r2", TensorProto.FLOAT, ["batch", 1, 1]),
               vi("r3", TensorProto.FLOAT, ["batch", 5]), vi("edge", TensorProto.FLOAT, ["batch", 6, 4])], inits, 13)
    record("extras13", m.SerializeToString(), lambda b: {"x": f32(b, 5, 4)})

    nodes18 = [
        helper.make_node("Split", ["x"], ["a", "b", "c"], name="split3", axis=-1, num_outputs=3),
        helper.make_node("Pad", ["a", "pads", "", "axes"], ["ap"], name="pad_wrap", mode="wrap"),
        helper.make_node("Pad", ["c", "pads", "", "axes"], ["cp"], name="pad_reflect", mode="reflect"),
        helper.make_node("Concat", ["ap", "b", "cp"], ["cat"], name="cat", axis=-1),
        helper.make_node("ReduceL2", ["cat", "rax"], ["y"], name="l2", keepdims=0),
        helper.make_node("ReduceLogSumExp", ["cat", "rax"], ["z"], name="lse"),
    ]
    inits = [init("pads", i64(1, 1)), init("axes", i64(-1)), init("rax", i64(1))]
    m = model(nodes18, "extras18", [vi("x", TensorProto.FLOAT, ["batch", 3, 8])],
              [vi("y", TensorProto.FLOAT, ["batch", 12]), vi("z", TensorProto.FLOAT, ["batch", 1, 12])], inits, 18)
    record("extras18", m.SerializeToString(), lambda b: {"x": f32(b, 3, 8)})


def ndops():
    """The N-D ops at opset 17: MatMul with broadcast batch dims, a 1-D
    operand and two run-time operands; Where on a computed BOOL with a
    broadcast branch; GatherElements with negative indices; ScatterND
    replacing and adding (repeated coordinates); InstanceNormalization.
    GroupNormalization at opset 18 (per-group scale and bias) and 21 (per
    channel). Its own generator, so it can be rerun alone."""
    r = np.random.default_rng(3301)
    g32 = lambda *s: r.standard_normal(s).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w3"], ["mm_b"], name="mm_bcast"),  # [b,3,4,5]x[3,5,6]
        helper.make_node("MatMul", ["v4", "x"], ["mm_v"], name="mm_vec"),  # [4]x[b,3,4,5] -> [b,3,5]
        helper.make_node("Transpose", ["x"], ["xt"], name="xt", perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["x", "xt"], ["mm_r"], name="mm_runtime"),  # [b,3,4,4]
        helper.make_node("Greater", ["mm_b", "zero"], ["pos"], name="pos"),
        helper.make_node("Where", ["pos", "mm_b", "alt"], ["wh"], name="where"),
        helper.make_node("GatherElements", ["x", "gi"], ["ge"], name="gather_el", axis=2),
        helper.make_node("GatherElements", ["x", "gl"], ["ge2"], name="gather_el_last", axis=-1),
        helper.make_node("ScatterND", ["x", "si", "u"], ["sc"], name="scatter"),
        helper.make_node("ScatterND", ["x", "sa", "ua"], ["sca"], name="scatter_add", reduction="add"),
        helper.make_node("InstanceNormalization", ["x", "isc", "ibi"], ["inorm"], name="inorm", epsilon=1e-3),
    ]
    inits = [init("w3", g32(3, 5, 6)), init("v4", g32(4)), init("zero", np.array(0, np.float32)),
             init("alt", g32(6)), init("gl", r.integers(-5, 5, size=(1, 3, 4, 2)).astype(np.int64)),
             init("isc", g32(3)), init("ibi", g32(3))]
    m = model(nodes, "nd17", [vi("x", TensorProto.FLOAT, ["batch", 3, 4, 5]), vi("gi", TensorProto.INT64, ["batch", 3, 2, 5]),
                              vi("si", TensorProto.INT64, ["batch", 2, 2]), vi("u", TensorProto.FLOAT, ["batch", 2, 4, 5]),
                              vi("sa", TensorProto.INT64, ["batch", 3, 3]), vi("ua", TensorProto.FLOAT, ["batch", 3, 5])],
              [vi("mm_v", TensorProto.FLOAT, ["batch", 3, 5]), vi("mm_r", TensorProto.FLOAT, ["batch", 3, 4, 4]),
               vi("wh", TensorProto.FLOAT, ["batch", 3, 4, 6]), vi("ge", TensorProto.FLOAT, ["batch", 3, 2, 5]),
               vi("ge2", TensorProto.FLOAT, [1, 3, 4, 2]), vi("sc", TensorProto.FLOAT, ["batch", 3, 4, 5]),
               vi("sca", TensorProto.FLOAT, ["batch", 3, 4, 5]), vi("inorm", TensorProto.FLOAT, ["batch", 3, 4, 5])], inits, 17)

    def feeds17(b):
        si = np.zeros((b, 2, 2), np.int64)
        for i in range(b):  # distinct (sample, channel) pairs: ScatterND none leaves repeats undefined
            si[i, :, 0] = i
            si[i, :, 1] = r.permutation(3)[:2]
        sa = np.stack([np.full((b, 3), 0), r.integers(0, 3, size=(b, 3)), r.integers(-4, 4, size=(b, 3))], -1).astype(np.int64)
        sa[:, :, 0] = np.arange(b)[:, None]
        sa[:, 1] = sa[:, 0]  # a repeated coordinate adds twice
        return {"x": g32(b, 3, 4, 5), "gi": r.integers(-4, 4, size=(b, 3, 2, 5)).astype(np.int64),
                "si": si, "u": g32(b, 2, 4, 5), "sa": sa, "ua": g32(b, 3, 5)}
    record("nd17", m.SerializeToString(), feeds17)

    for opset, c in ((18, 3), (21, 6)):
        nodes = [helper.make_node("GroupNormalization", ["x", "gs", "gb"], ["y"], name="gnorm", num_groups=3, epsilon=1e-4)]
        m = model(nodes, "gn%d" % opset, [vi("x", TensorProto.FLOAT, ["batch", 6, 3, 4])],
                  [vi("y", TensorProto.FLOAT, ["batch", 6, 3, 4])], [init("gs", g32(c)), init("gb", g32(c))], opset,
                  ir=10 if opset >= 21 else 8, check=opset >= 21)
        record("groupnorm%d" % opset, m.SerializeToString(), lambda b: {"x": g32(b, 6, 3, 4) * 2 + 0.5})

    # CumSum (float: exclusive, reverse; int64: position ids from a mask)
    # and GatherND (batch_dims 0 with a constant, 1 with a run-time indices).
    i64 = lambda *v: np.array(v, np.int64)
    nodes = [
        helper.make_node("CumSum", ["x", "ax1"], ["cs"], name="cumsum"),
        helper.make_node("CumSum", ["x", "axm1"], ["cse"], name="cumsum_excl_rev", exclusive=1, reverse=1),
        helper.make_node("CumSum", ["mask", "ax1"], ["pos"], name="cumsum_int"),
        helper.make_node("GatherND", ["x", "gc"], ["g0"], name="gather_nd"),
        helper.make_node("GatherND", ["x", "gb"], ["g1"], name="gather_nd_batch", batch_dims=1),
    ]
    inits = [init("ax1", np.array(1, np.int64)), init("axm1", np.array(-1, np.int32)),
             init("gc", i64([0, 1], [0, -1], [0, 2]).reshape(3, 2))]
    m = model(nodes, "nd13", [vi("x", TensorProto.FLOAT, ["batch", 4, 5]), vi("mask", TensorProto.INT64, ["batch", 6]),
                              vi("gb", TensorProto.INT64, ["batch", 3, 1])],
              [vi("cs", TensorProto.FLOAT, ["batch", 4, 5]), vi("cse", TensorProto.FLOAT, ["batch", 4, 5]),
               vi("pos", TensorProto.INT64, ["batch", 6]), vi("g0", TensorProto.FLOAT, [3, 5]),
               vi("g1", TensorProto.FLOAT, ["batch", 3, 5])], inits, 13)
    record("nd13", m.SerializeToString(), lambda b: {
        "x": g32(b, 4, 5), "mask": (r.random((b, 6)) < 0.7).astype(np.int64),
        "gb": r.integers(-4, 4, size=(b, 3, 1)).astype(np.int64)})


def hf_models():
    """Tiny randomly initialised Hugging Face BertModel (TorchScript
    exporter, opset 17) and GPT2Model (the exporter's defaults), 1 layer,
    width 32, 2 heads, vocabulary 64, with input_ids and attention_mask of
    dynamic batch and sequence (the mask pads the tail of odd rows); the
    output is last_hidden_state. bench/onnx_compare.py runs larger ones."""
    try:
        import torch
    except ImportError:
        print("torch is not installed: skipping the transformers models", file=sys.stderr)
        return
    import io
    import torch.nn as nn
    import transformers as tr

    class Wrap(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    def pair(b, seq=8):
        g = torch.Generator().manual_seed(200 + b)
        ids = torch.randint(0, 64, (b, seq), generator=g)
        mask = torch.ones(b, seq, dtype=torch.int64)
        mask[1::2, seq - 3:] = 0
        return {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}

    torch.manual_seed(23)
    bert = tr.BertModel(tr.BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                      intermediate_size=64, max_position_embeddings=32), add_pooling_layer=False)
    gpt2 = tr.GPT2Model(tr.GPT2Config(vocab_size=64, n_embd=32, n_layer=1, n_head=2, n_positions=32,
                                      bos_token_id=0, eos_token_id=0, use_cache=False))
    names = ["input_ids", "attention_mask"]
    for name, mod, dynamo in (("hf_bert_opset17", bert, False), ("hf_gpt2_default", gpt2, True)):
        mod = Wrap(mod).eval()
        ex = tuple(torch.from_numpy(v) for v in pair(2).values())
        with torch.no_grad():
            if dynamo:
                dims = {0: torch.export.Dim("batch", min=1, max=64), 1: torch.export.Dim("seq", min=2, max=32)}
                blob = torch.onnx.export(mod, ex, input_names=names, output_names=["y"],
                                         dynamic_shapes=(dims, dims)).model_proto.SerializeToString()
            else:
                buf = io.BytesIO()
                axes = {n: {0: "batch", 1: "seq"} for n in names + ["y"]}
                torch.onnx.export(mod, ex, buf, opset_version=17, dynamo=False, input_names=names, output_names=["y"],
                                  dynamic_axes=axes)
                blob = buf.getvalue()
        m = onnx.load_from_string(blob)
        for n in m.graph.node:  # the exporter's stack traces: most of the file, none of the model
            n.doc_string = ""
            del n.metadata_props[:]
        record(name, m.SerializeToString(), pair)


def rnns():
    T, In, H = 5, 4, 3
    lstm = [
        helper.make_node("LSTM", ["x", "W", "R", "B", "lens", "h0", "c0", "P"], ["Y", "Yh", "Yc"], name="bilstm",
                         hidden_size=H, direction="bidirectional"),
    ]
    inits = [init("W", f32(2, 4 * H, In, scale=0.5)), init("R", f32(2, 4 * H, H, scale=0.5)),
             init("B", f32(2, 8 * H, scale=0.5)), init("P", f32(2, 3 * H, scale=0.5))]
    m = model(lstm, "lstm", [vi("x", TensorProto.FLOAT, [T, "batch", In]), vi("lens", TensorProto.INT32, ["batch"]),
                             vi("h0", TensorProto.FLOAT, [2, "batch", H]), vi("c0", TensorProto.FLOAT, [2, "batch", H])],
              [vi("Y", TensorProto.FLOAT, [T, 2, "batch", H]), vi("Yh", TensorProto.FLOAT, [2, "batch", H]),
               vi("Yc", TensorProto.FLOAT, [2, "batch", H])], inits, 14)
    record("lstm", m.SerializeToString(), lambda b: {
        "x": f32(T, b, In), "lens": rng.integers(0, T + 1, size=b).astype(np.int32) if b > 1 else np.array([T], np.int32),
        "h0": f32(2, b, H), "c0": f32(2, b, H)})

    for lbr in (0, 1):
        gru = [helper.make_node("GRU", ["x", "W", "R", "B", "", "h0"], ["Y", "Yh"], name="gru", hidden_size=H,
                                direction="reverse" if lbr == 0 else "forward", linear_before_reset=lbr)]
        inits = [init("W", f32(1, 3 * H, In, scale=0.5)), init("R", f32(1, 3 * H, H, scale=0.5)), init("B", f32(1, 6 * H, scale=0.5))]
        xdims, hdims, ydims = [T, "batch", In], [1, "batch", H], [T, 1, "batch", H]
        m = model(gru, "gru", [vi("x", TensorProto.FLOAT, xdims), vi("h0", TensorProto.FLOAT, hdims)],
                  [vi("Y", TensorProto.FLOAT, ydims), vi("Yh", TensorProto.FLOAT, hdims)], inits, 14)
        record("gru_lbr%d" % lbr, m.SerializeToString(), lambda b: {"x": f32(T, b, In), "h0": f32(1, b, H)})


def torch_models():
    try:
        import torch
    except ImportError:
        print("torch is not installed: skipping the exported models", file=sys.stderr)
        return
    import io
    import torch.nn as nn
    torch.manual_seed(17)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(10, 16), nn.GELU(), nn.Linear(16, 16), nn.Tanh(), nn.LayerNorm(16), nn.Linear(16, 4))

        def forward(self, x):
            return self.net(x)

    class TextCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(30, 8)
            self.convs = nn.ModuleList([nn.Conv1d(8, 6, k, padding=k // 2) for k in (3, 5)])
            self.fc = nn.Linear(12, 3)

        def forward(self, ids):
            e = self.emb(ids).transpose(1, 2)
            h = [torch.relu(c(e)).amax(dim=2) for c in self.convs]
            return self.fc(torch.cat(h, dim=1))

    class RNNClassifier(nn.Module):
        def __init__(self, cell):
            super().__init__()
            self.emb = nn.Embedding(30, 8)
            self.rnn = cell(8, 10, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(20, 3)

        def forward(self, ids):
            out, _ = self.rnn(self.emb(ids))
            return self.fc(out[:, -1, :])

    models = {
        "torch_mlp": (MLP(), lambda b: torch.randn(b, 10)),
        "torch_textcnn": (TextCNN(), lambda b: torch.randint(0, 30, (b, 9))),
        "torch_lstm": (RNNClassifier(nn.LSTM), lambda b: torch.randint(0, 30, (b, 7))),
        "torch_gru": (RNNClassifier(nn.GRU), lambda b: torch.randint(0, 30, (b, 7))),
    }
    for name, (mod, make) in models.items():
        mod.eval()
        example = make(2)
        inname = "x" if name == "torch_mlp" else "ids"
        for tag, kw in [("opset17", dict(opset_version=17, dynamo=False)), ("default", dict())]:
            buf = io.BytesIO()
            try:
                if kw.get("dynamo") is False:
                    torch.onnx.export(mod, (example,), buf, input_names=[inname], output_names=["y"],
                                      dynamic_axes={inname: {0: "batch"}, "y": {0: "batch"}}, **kw)
                else:
                    batch = torch.export.Dim("batch", min=1, max=64)
                    prog = torch.onnx.export(mod, (example,), input_names=[inname], output_names=["y"],
                                             dynamic_shapes=({0: batch},), **kw)
                    prog.save(buf := os.path.join(HERE, "_tmp.onnx"))
                    mb = onnx.load(buf)
                    os.remove(buf)
                    buf = io.BytesIO(mb.SerializeToString())
            except Exception as e:  # report and go on: the Go test covers what exported
                print(name, tag, "export failed:", e, file=sys.stderr)
                continue
            g = torch.Generator().manual_seed(5)

            def feeds(b, make=make, inname=inname):
                torch.manual_seed(100 + b)
                return {inname: make(b).numpy()}
            record(name + "_" + tag, buf.getvalue(), feeds)


if __name__ == "__main__":
    if len(sys.argv) > 1:  # only the named makers, e.g. make.py ndops
        for name in sys.argv[1:]:
            globals()[name]()
        sys.exit(0)
    mlp()
    cnn()
    textcnn()
    shapes()
    rnns()
    extras()
    torch_models()
    ndops()
    hf_models()
