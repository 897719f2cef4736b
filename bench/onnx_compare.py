"""Exports the models of issue 33's coverage list with random weights and
a fixed seed, and records ONNX Runtime's outputs for fixed inputs, for
bench/cmd/onnxcompare to run through Plumb and compare. Outside CI:

    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/onnx_compare.py [--out DIR] [--only NAME ...]
    go run ./bench/cmd/onnxcompare DIR

Models: torchvision ResNet-18, ResNet-50, MobileNetV2, EfficientNet-B0
(weights=None, torch.manual_seed(0), batch norm statistics calibrated on
random batches; see calibrate), and small sequence classifiers
(embedding + bidirectional LSTM or GRU + linear, and a text CNN), and
small randomly initialised Hugging Face transformers models, a BertModel
and a GPT2Model (2 layers, width 64, 4 heads, vocabulary 1000; inputs
input_ids and attention_mask with dynamic batch and sequence axes, the
mask padding the tail of every other row; output last_hidden_state as y).
Each is
exported twice: at opset 17 with the TorchScript exporter (dynamo=False,
dynamic_axes on the batch) and with the exporter's defaults (dynamo, a
torch.export.Dim batch). For each, DIR/<name>.onnx and DIR/<name>.json,
which lists per batch (1 and 8) the input and ORT's output as raw
little-endian files beside it (<name>.b<batch>.<tensor>.bin). A model whose
export or ORT run fails is listed in DIR/failures.json with the error.
"""

import argparse
import io
import json
import os
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
import torchvision


class SeqClassifier(nn.Module):
    def __init__(self, cell, vocab=1000, emb=64, hidden=128, classes=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = cell(emb, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, ids):
        out, _ = self.rnn(self.emb(ids))
        return self.fc(out[:, -1, :])


class TextCNN(nn.Module):
    def __init__(self, vocab=1000, emb=64, filters=32, classes=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.convs = nn.ModuleList([nn.Conv1d(emb, filters, k, padding=k // 2) for k in (3, 4, 5)])
        self.fc = nn.Linear(3 * filters, classes)

    def forward(self, ids):
        e = self.emb(ids).transpose(1, 2)
        return self.fc(torch.cat([torch.relu(c(e)).amax(dim=2) for c in self.convs], dim=1))


def image(b):
    return torch.randn(b, 3, 224, 224)


def tokens(b):
    return torch.randint(0, 1000, (b, 32))


class HFModel(nn.Module):
    """A transformers model returning only last_hidden_state, so the export
    has one output."""

    def __init__(self, kind):
        super().__init__()
        # bench/kernels.py, beside this script, would shadow the kernels
        # package transformers imports.
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import transformers as tr
        if kind == "bert":
            cfg = tr.BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                intermediate_size=128, max_position_embeddings=128)
            self.m = tr.BertModel(cfg, add_pooling_layer=False)
        else:
            cfg = tr.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128,
                                bos_token_id=0, eos_token_id=0)
            self.m = tr.GPT2Model(cfg)
        self.m.config.use_cache = False

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def text_pair(b, seq=16):
    """input_ids and an attention mask whose odd rows pad their last quarter."""
    ids = torch.randint(0, 1000, (b, seq))
    mask = torch.ones(b, seq, dtype=torch.int64)
    mask[1::2, seq - seq // 4:] = 0
    return {"input_ids": ids, "attention_mask": mask}


MODELS = {
    "lstm_classifier": (lambda: SeqClassifier(nn.LSTM), tokens),
    "gru_classifier": (lambda: SeqClassifier(nn.GRU), tokens),
    "text_cnn": (lambda: TextCNN(), tokens),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), image),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), image),
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), image),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), image),
    "bert": (lambda: HFModel("bert"), text_pair),
    "gpt2": (lambda: HFModel("gpt2"), text_pair),
}


def calibrate(mod, inputs):
    """Sets every batch norm's running statistics to those of a few random
    batches (cumulative averages, seeded) and puts mod in eval mode. With
    the initial statistics (mean 0, variance 1) a randomly initialised
    network's activations shrink layer by layer (MobileNetV2's logits come
    out near 1e-9), which would make any comparison pass; calibrated, the
    logits are of order one."""
    bns = [m for m in mod.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if bns:
        for m in bns:
            m.reset_running_stats()
            m.momentum = None
        mod.train()
        with torch.no_grad():
            for _ in range(3):
                mod(inputs(8))
    mod.eval()


def export(mod, example, dynamo):
    """example maps input names to tensors; the batch axis is dynamic, and
    for several inputs (the text pairs) the sequence axis too."""
    names = list(example)
    args = tuple(example.values())
    seq = len(names) > 1
    if not dynamo:
        buf = io.BytesIO()
        axes = {n: ({0: "batch", 1: "seq"} if seq else {0: "batch"}) for n in names}
        axes["y"] = {0: "batch", 1: "seq"} if seq else {0: "batch"}
        torch.onnx.export(mod, args, buf, opset_version=17, dynamo=False, input_names=names, output_names=["y"],
                          dynamic_axes=axes)
        return buf.getvalue()
    batch = torch.export.Dim("batch", min=1, max=64)
    dims = {0: batch}
    if seq:
        dims[1] = torch.export.Dim("seq", min=2, max=128)
    prog = torch.onnx.export(mod, args, input_names=names, output_names=["y"], dynamic_shapes=tuple(dims for _ in names))
    return prog.model_proto.SerializeToString()


def feeds(inputs, b):
    """inputs(b) as a dict of name to numpy array."""
    x = inputs(b)
    if isinstance(x, dict):
        return {k: v.numpy() for k, v in x.items()}
    return {"ids" if inputs is tokens else "x": x.numpy()}


def save(path, a):
    a = np.ascontiguousarray(a)
    a.astype(a.dtype.newbyteorder("<")).tofile(path)
    return {"dtype": str(a.dtype), "dims": list(a.shape), "file": os.path.basename(path)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/onnx_compare")
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failures = {}
    for base, (make, inputs) in MODELS.items():
        if args.only and base not in args.only:
            continue
        for tag, dynamo in [("opset17", False), ("default", True)]:
            name = f"{base}_{tag}"
            try:
                torch.manual_seed(0)
                mod = make()
                calibrate(mod, inputs)
                with torch.no_grad():
                    example = {k: torch.from_numpy(v) for k, v in feeds(inputs, 2).items()}
                    blob = export(mod, example, dynamo)
                path = os.path.join(args.out, name + ".onnx")
                with open(path, "wb") as f:
                    f.write(blob)
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = 2
                sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
                cases = []
                for b in (1, 8):
                    torch.manual_seed(1000 + b)
                    xs = feeds(inputs, b)
                    y = sess.run(None, xs)[0]
                    cases.append({"batch": b,
                                  "inputs": {k: save(os.path.join(args.out, f"{name}.b{b}.{k}.bin"), v) for k, v in xs.items()},
                                  "outputs": {"y": save(os.path.join(args.out, f"{name}.b{b}.y.bin"), y)}})
                with open(os.path.join(args.out, name + ".json"), "w") as f:
                    json.dump({"model": name + ".onnx", "opset": onnx.load(path, load_external_data=False).opset_import[0].version, "cases": cases}, f, indent=1)
                print(name, "exported", flush=True)
            except Exception as e:  # recorded, and the next model goes on
                failures[name] = "".join(traceback.format_exception_only(type(e), e)).strip()[-2000:]
                print(name, "FAILED:", failures[name][:300], file=sys.stderr, flush=True)
    with open(os.path.join(args.out, "failures.json"), "w") as f:
        json.dump(failures, f, indent=1)


if __name__ == "__main__":
    main()
