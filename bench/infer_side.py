#!/usr/bin/env python3
"""Issue 34's side-by-side bar: Plumb's compiled inference plan against
ONNX Runtime and PyTorch on the same weights, in one interleaved run.

For each of issue 34's five models (MNIST CNN, ResNet-32, the sentiment
text CNN and stacked LSTM, the translation encoder), at batch 1 and 64 and
at 1 and 2 threads, one row times:

- Plumb: `plumb bench-infer MODEL --batch B --concurrency 1` in a fresh
  process with GOMAXPROCS=T; its p50 is the median latency of one call of
  the plan (fresh weights from seed 1, inputs of zeros or of word id 1);
- ONNX Runtime: the model `plumb onnx export` wrote from those same
  weights (intra_op_num_threads=T, inter_op_num_threads=1, all graph
  optimisations, sequential execution);
- PyTorch eager under torch.inference_mode(): a twin nn.Module whose
  weights are copied from the exported file's initializers
  (onnx.numpy_helper), checked against ONNX Runtime's output within 1e-4
  on random inputs and random lengths before anything is timed;
- with --compile, torch.compile of the same twin (inductor, dynamic=False).

Each timing is the median call over a block of --seconds (at least 3
calls) after one warm-up call, the same statistic as bench-infer's p50.
The rounds run Plumb, ONNX Runtime and PyTorch one after the other for
each row, then the next row; a row's figure is the best of the rounds'
medians. Plumb runs in a fresh process every time; the Python peers run
in this process, each session and module built once.

The text models take `words` [batch, seq] int64 and `words_lengths`
[batch]: every sentence is --seq-len words long on every side, as
bench-infer's are. The stacked LSTM's exported LSTM nodes carry a
permuted identity input weight (Plumb's LSTM takes its input already
projected by the fc before it): the twin's step loop skips that identity
GEMM, its nn.LSTM variant pays it as ONNX Runtime does, and the torch
columns give the faster of the two and say which.

Run with torch's CPU build or CUDA_VISIBLE_DEVICES= empty; keep it out
of CI. Example (bench/infer_side.sh wraps it):

  python3 bench/infer_side.py --plumb /tmp/plumb --dir /tmp/side --rounds 3
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from onnx import numpy_helper  # noqa: E402

# The five models of issue 34, their kind (for the bar) and input.
MODELS = [
    ("mnist-cnn", "CNN", "image", (1, 28, 28)),
    ("resnet32", "CNN", "image", (3, 32, 32)),
    ("text-cnn", "CNN", "text", None),
    ("text-lstm", "sequence", "text", None),
    ("translate-encoder", "sequence", "text", None),
]
BAR = {"CNN": 1.0, "sequence": 1.5}


class Graph:
    """An exported ONNX file: its nodes in order and its initializers."""

    def __init__(self, path):
        self.model = onnx.load(path)
        self.nodes = list(self.model.graph.node)
        self.init = {t.name: numpy_helper.to_array(t) for t in self.model.graph.initializer}

    def ops(self, op_type):
        return [n for n in self.nodes if n.op_type == op_type]

    def t(self, name):
        return torch.from_numpy(np.array(self.init[name], dtype=np.float32))

    def scalar(self, name):
        return float(self.init[name])

    def consumer(self, node, op_type):
        """The first node of op_type that reads node's first output."""
        for n in self.nodes:
            if n.op_type == op_type and node.output[0] in n.input:
                return n
        raise ValueError(f"no {op_type} reads {node.op_type} {node.output[0]}")


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def conv2d(g, node):
    w = g.t(node.input[1])
    pads = attr(node, "pads", [0, 0, 0, 0])
    assert pads[:2] == pads[2:] and attr(node, "group", 1) == 1, (node.name, pads)
    c = nn.Conv2d(w.shape[1], w.shape[0], tuple(w.shape[2:]), stride=tuple(attr(node, "strides", [1, 1])),
                  padding=tuple(pads[:2]), dilation=tuple(attr(node, "dilations", [1, 1])), bias=len(node.input) > 2)
    c.weight.data.copy_(w)
    if c.bias is not None:
        c.bias.data.copy_(g.t(node.input[2]))
    return c


def batchnorm(g, node):
    scale, bias, mean, var = (g.t(x) for x in node.input[1:5])
    bn = nn.BatchNorm2d(scale.shape[0], eps=attr(node, "epsilon", 1e-5))
    bn.weight.data.copy_(scale)
    bn.bias.data.copy_(bias)
    bn.running_mean.copy_(mean)
    bn.running_var.copy_(var)
    return bn.eval()


def linear(g, node):
    """nn.Linear of an ONNX Gemm (or MatMul + Add) whose weight is [in, out]."""
    assert attr(node, "transB", 0) == 0 and attr(node, "alpha", 1.0) == 1.0 and attr(node, "beta", 1.0) == 1.0
    w = g.t(node.input[1])
    fc = nn.Linear(w.shape[0], w.shape[1])
    fc.weight.data.copy_(w.T)
    fc.bias.data.copy_(g.t(node.input[2]))
    return fc


def matmul_add(g, mm):
    add = g.consumer(mm, "Add")
    w = g.t(mm.input[1])
    fc = nn.Linear(w.shape[0], w.shape[1])
    fc.weight.data.copy_(w.T)
    fc.bias.data.copy_(g.t(add.input[1]))
    return fc


def lengths_mask(words, lengths):
    """[batch, seq]: true where the step is inside its sentence."""
    return torch.arange(words.shape[1])[None, :] < lengths[:, None]


def reverse_within(x, lengths):
    """x [batch, seq, ...] with each sentence's steps reversed inside its
    length (the steps past the end stay where they are): a forward
    recurrence over it is the reverse recurrence of the original."""
    s = x.shape[1]
    t = torch.arange(s)[None, :]
    idx = torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)
    return torch.gather(x, 1, idx.view(idx.shape + (1,) * (x.dim() - 2)).expand_as(x))


class MnistCNN(nn.Module):
    """The book's MNIST CNN (plumb's models/mnist "cnn"): conv 5x5 20,
    relu, max-pool 2, batch norm, conv 5x5 50, relu, max-pool 2, fc 10."""

    def __init__(self, g):
        super().__init__()
        assert [n.op_type for n in g.nodes] == ["Conv", "Relu", "MaxPool", "BatchNormalization", "Conv", "Relu",
                                                "MaxPool", "Reshape", "Gemm"]
        c1, c2 = g.ops("Conv")
        self.conv1, self.conv2 = conv2d(g, c1), conv2d(g, c2)
        self.bn = batchnorm(g, g.ops("BatchNormalization")[0])
        self.fc = linear(g, g.ops("Gemm")[0])

    def forward(self, x):
        x = self.bn(F.max_pool2d(F.relu(self.conv1(x)), 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


class Block(nn.Module):
    """A ResNet basic block (He et al. 2016): conv-bn-relu-conv-bn plus the
    input, or its 1x1 strided projection with batch norm, then relu."""

    def __init__(self, g, c1, c2, proj):
        super().__init__()
        self.conv1, self.bn1 = conv2d(g, c1), batchnorm(g, g.consumer(c1, "BatchNormalization"))
        self.conv2, self.bn2 = conv2d(g, c2), batchnorm(g, g.consumer(c2, "BatchNormalization"))
        self.proj = None
        if proj is not None:
            self.proj = nn.Sequential(conv2d(g, proj), batchnorm(g, g.consumer(proj, "BatchNormalization")))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (x if self.proj is None else self.proj(x)))


class ResNet(nn.Module):
    """ResNet-32 for CIFAR-10 (plumb's models/cifar "resnet32"): input
    normalisation, a 3x3 stem, 3 stages of 5 basic blocks (16, 32, 64
    channels), global average pooling and fc 10."""

    def __init__(self, g):
        super().__init__()
        sub, div = g.ops("Sub")[0], g.ops("Div")[0]
        self.register_buffer("mean", g.t(sub.input[1]))
        self.register_buffer("std", g.t(div.input[1]))
        convs = g.ops("Conv")
        self.stem, self.stem_bn = conv2d(g, convs[0]), batchnorm(g, g.consumer(convs[0], "BatchNormalization"))
        blocks, i = [], 1
        while i < len(convs):
            c1, c2 = convs[i], convs[i + 1]
            proj = convs[i + 2] if i + 2 < len(convs) and convs[i + 2].input[0] == c1.input[0] else None
            blocks.append(Block(g, c1, c2, proj))
            i += 3 if proj is not None else 2
        assert len(blocks) == 15, len(blocks)
        self.blocks = nn.Sequential(*blocks)
        self.fc = linear(g, g.ops("Gemm")[0])

    def forward(self, x):
        x = F.relu(self.stem_bn(self.stem((x - self.mean) / self.std)))
        return self.fc(self.blocks(x).mean((2, 3)))


class TextCNN(nn.Module):
    """The sentiment text CNN (plumb's models/sentiment "cnn"): embedding,
    then per window size a sequence conv (zero padding), max over each
    sentence's steps, bias and tanh; the branches concatenated into fc 2."""

    def __init__(self, g):
        super().__init__()
        self.emb = g.t(g.ops("Gather")[0].input[0])
        self.branches = []
        for conv in g.ops("Conv"):
            where = g.consumer(conv, "Where")
            red = g.consumer(where, "ReduceMax")
            empty = g.consumer(red, "Where")
            add = g.consumer(empty, "Add")
            self.branches.append((g.t(conv.input[1]), tuple(attr(conv, "pads")), g.scalar(where.input[2]),
                                  g.scalar(empty.input[2]), g.t(add.input[1])))
        self.fc = linear(g, g.ops("Gemm")[0])

    def forward(self, words, lengths):
        mask = lengths_mask(words, lengths)
        x = (self.emb[words] * mask[..., None]).transpose(1, 2)
        outs = []
        for w, pads, low, empty, b in self.branches:
            y = F.conv1d(F.pad(x, pads), w).masked_fill(~mask[:, None, :], low).amax(2)
            y = torch.where((lengths > 0)[:, None], y, torch.tensor(empty))
            outs.append(torch.tanh(y + b))
        return self.fc(torch.cat(outs, 1))


def lstm_weights(g, node):
    """An ONNX LSTM's W, R and bias in PyTorch's gate order (i, f, g, o)
    from ONNX's (i, o, f, c)."""
    h = attr(node, "hidden_size")

    def reorder(m):
        i, o, f, c = (m[k * h:(k + 1) * h] for k in range(4))
        return torch.cat([i, f, c, o])

    w, r, b = g.t(node.input[1])[0], g.t(node.input[2])[0], g.t(node.input[3])[0]
    return reorder(w), reorder(r), reorder(b[:4 * h]), reorder(b[4 * h:]), attr(node, "direction", b"forward")


class StackedLSTM(nn.Module):
    """The sentiment stacked LSTM (plumb's models/sentiment "lstm", the
    Paddle book's stacked_lstm_net): fc of the embedding, then three LSTMs
    (forward, reverse, forward), each after an fc of the previous fc and
    LSTM outputs concatenated; max over each sentence of the last fc and
    of the last LSTM, concatenated into fc 2.

    loop=True runs the recurrence as a step loop on the fc output (the
    identity input weight of the exported LSTM skipped); loop=False runs
    nn.LSTM with that input weight, as ONNX Runtime does."""

    def __init__(self, g, loop):
        super().__init__()
        self.loop = loop
        self.emb = g.t(g.ops("Gather")[0].input[0])
        self.fcs = nn.ModuleList(matmul_add(g, mm) for mm in g.ops("MatMul"))
        self.layers = []
        self.lstms = nn.ModuleList()
        for node in g.ops("LSTM"):
            w, r, bw, br, direction = lstm_weights(g, node)
            assert torch.equal(w, torch.eye(w.shape[0])), "the LSTM's input weight is not the identity"
            self.layers.append((r.T.contiguous(), bw + br, direction == b"reverse"))
            m = nn.LSTM(w.shape[1], r.shape[1], batch_first=True)
            m.weight_ih_l0.data.copy_(w)
            m.weight_hh_l0.data.copy_(r)
            m.bias_ih_l0.data.copy_(bw)
            m.bias_hh_l0.data.copy_(br)
            self.lstms.append(m)
        red = g.ops("ReduceMax")[0]
        self.low = g.scalar(g.nodes[[n.output[0] for n in g.nodes].index(red.input[0])].input[2])
        self.empty = g.scalar(g.consumer(red, "Where").input[2])
        self.out = linear(g, g.ops("Gemm")[0])

    def recur(self, k, x, lengths):
        rt, b, reverse = self.layers[k]
        if reverse:
            x = reverse_within(x, lengths)
        if self.loop:
            xg = x + b
            h = x.new_zeros(x.shape[0], rt.shape[0])
            c = torch.zeros_like(h)
            ys = []
            for t in range(x.shape[1]):
                i, f, gg, o = (xg[:, t] + h @ rt).chunk(4, 1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
                h = torch.sigmoid(o) * torch.tanh(c)
                ys.append(h)
            y = torch.stack(ys, 1)
        else:
            y, _ = self.lstms[k](x)
        return reverse_within(y, lengths) if reverse else y

    def pool(self, x, mask, lengths):
        y = x.masked_fill(~mask[..., None], self.low).amax(1)
        return torch.where((lengths > 0)[:, None], y, torch.tensor(self.empty))

    def forward(self, words, lengths):
        mask = lengths_mask(words, lengths)
        p = self.fcs[0](self.emb[words])
        h = self.recur(0, p, lengths)
        for k in (1, 2):
            p = self.fcs[k](torch.cat([p, h], -1))
            h = self.recur(k, p, lengths)
        return self.out(torch.cat([self.pool(p, mask, lengths), self.pool(h, mask, lengths)], -1))


class TranslateEncoder(nn.Module):
    """The translation model's encoder as plumb's infer traces it: the
    decoder's first state, tanh(fc(reverse GRU's state at the first word)),
    of the embedded source sentence (PyTorch's GRU is ONNX's with
    linear_before_reset 1)."""

    def __init__(self, g):
        super().__init__()
        self.emb = g.t(g.ops("Gather")[0].input[0])
        node = g.ops("GRU")[0]
        assert attr(node, "linear_before_reset") == 1 and attr(node, "direction") == b"reverse"
        hs = attr(node, "hidden_size")

        def reorder(m):  # ONNX z, r, h to PyTorch r, z, n
            z, r, n = (m[k * hs:(k + 1) * hs] for k in range(3))
            return torch.cat([r, z, n])

        w, r, b = g.t(node.input[1])[0], g.t(node.input[2])[0], g.t(node.input[3])[0]
        self.gru = nn.GRU(w.shape[1], hs, batch_first=True)
        self.gru.weight_ih_l0.data.copy_(reorder(w))
        self.gru.weight_hh_l0.data.copy_(reorder(r))
        self.gru.bias_ih_l0.data.copy_(reorder(b[:3 * hs]))
        self.gru.bias_hh_l0.data.copy_(reorder(b[3 * hs:]))
        first = [n for n in g.ops("Gather") if n.input[1] in g.init and n is not g.ops("Gather")[0]][0]
        assert int(g.init[first.input[1]]) == 0 and attr(first, "axis") == 1
        self.empty = g.scalar(g.consumer(first, "Where").input[2])
        self.fc = linear(g, g.ops("Gemm")[0])

    def forward(self, words, lengths):
        y, _ = self.gru(reverse_within(self.emb[words], lengths))
        last = y[torch.arange(words.shape[0]), (lengths - 1).clamp(min=0)]
        return torch.tanh(self.fc(torch.where((lengths > 0)[:, None], last, torch.tensor(self.empty))))


def twins(name, g):
    """The twin modules of a model: {variant: module}."""
    if name == "mnist-cnn":
        return {"": MnistCNN(g)}
    if name == "resnet32":
        return {"": ResNet(g)}
    if name == "text-cnn":
        return {"": TextCNN(g)}
    if name == "text-lstm":
        return {"loop": StackedLSTM(g, True), "nn.LSTM": StackedLSTM(g, False)}
    return {"": TranslateEncoder(g)}


def inputs(kind, shape, batch, seq, rng=None):
    """Numpy feeds: zeros / word id 1 at full length (as bench-infer's), or
    random ones (images in [0, 1), ids, lengths 0..seq) when rng is given."""
    if kind == "image":
        x = np.zeros((batch,) + shape, np.float32) if rng is None else rng.random((batch,) + shape, np.float32)
        return {"images": x}
    if rng is None:
        return {"words": np.ones((batch, seq), np.int64), "words_lengths": np.full(batch, seq, np.int64)}
    lengths = rng.integers(1, seq + 1, batch)
    lengths[0] = seq
    if batch > 2:
        lengths[1] = 0
    return {"words": rng.integers(0, 5000, (batch, seq)).astype(np.int64), "words_lengths": lengths.astype(np.int64)}


def torch_args(feed):
    return [torch.from_numpy(v) for v in feed.values()]


def block_ms(fn, seconds, min_calls=3):
    """The median call of fn over a block of seconds, after one warm-up."""
    fn()
    ts = []
    end = time.perf_counter() + seconds
    while len(ts) < min_calls or time.perf_counter() < end:
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def plumb_ms(plumb, name, batch, threads, seq, seconds):
    """bench-infer's p50 of one call, from a fresh process."""
    env = dict(os.environ, GOMAXPROCS=str(threads))
    out = subprocess.run([plumb, "bench-infer", name, "--batch", str(batch), "--concurrency", "1",
                          "--duration", f"{seconds}s", "--seq-len", str(seq)],
                         env=env, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 7 and f[0] == str(batch) and f[1] == "1":
            return float(f[4])
    raise RuntimeError(f"no row for batch {batch} in bench-infer's output:\n{out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plumb", required=True, help="the plumb binary (go build -o FILE ./cmd/plumb)")
    ap.add_argument("--dir", required=True, help="where the exported ONNX files go")
    ap.add_argument("--models", default=",".join(m[0] for m in MODELS))
    ap.add_argument("--batches", default="1,64")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--seq-len", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0, help="each timing block")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile of the twins")
    args = ap.parse_args()
    torch.set_num_interop_threads(1)
    batches = [int(b) for b in args.batches.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    models = [m for m in MODELS if m[0] in args.models.split(",")]
    os.makedirs(args.dir, exist_ok=True)
    print(f"# load average at start: {os.getloadavg()}; torch {torch.__version__}, onnxruntime {ort.__version__}",
          flush=True)

    state = {}
    for name, kind, io, shape in models:
        path = os.path.join(args.dir, name + ".onnx")
        subprocess.run([args.plumb, "onnx", "export", "-o", path, "--seq-len", str(args.seq_len), name],
                       check=True, capture_output=True)
        g = Graph(path)
        tw = {k: m.eval() for k, m in twins(name, g).items()}
        sessions = {}
        for t in threads:
            so = ort.SessionOptions()
            so.intra_op_num_threads = t
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            sessions[t] = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(7)
        for b in sorted(set(batches) | {5}):
            feed = inputs(io, shape, b, args.seq_len, rng)
            want = sessions[threads[0]].run(None, feed)[0]
            for variant, m in tw.items():
                with torch.inference_mode():
                    got = m(*torch_args(feed)).numpy()
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} twin {variant} vs ONNX Runtime at batch {b}")
        print(f"# {name}: twin(s) {list(tw)} match ONNX Runtime within 1e-4", flush=True)
        compiled, compile_note = {}, ""
        if args.compile:
            for b in batches:
                feed = torch_args(inputs(io, shape, b, args.seq_len))
                for variant, m in tw.items():
                    t0 = time.perf_counter()
                    try:
                        c = torch.compile(m, dynamic=False)
                        with torch.inference_mode():
                            c(*feed)
                        compiled[(variant, b)] = c
                        print(f"# {name} b{b} {variant}: torch.compile took {time.perf_counter() - t0:.0f} s",
                              flush=True)
                    except Exception as e:  # reported in the table, not hidden
                        compile_note = f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:80]}"
                        print(f"# {name} b{b} {variant}: {compile_note}", flush=True)
        state[name] = (kind, io, shape, tw, sessions, compiled, compile_note)

    rows = [(n, b, t) for n, *_ in models for b in batches for t in threads]
    best = {}

    def keep(key, v):
        best[key] = min(best.get(key, float("inf")), v)

    for r in range(args.rounds):
        for name, b, t in rows:
            kind, io, shape, tw, sessions, compiled, _ = state[name]
            feed = inputs(io, shape, b, args.seq_len)
            targs = torch_args(feed)
            keep((name, b, t, "plumb"), plumb_ms(args.plumb, name, b, t, args.seq_len, args.seconds))
            keep((name, b, t, "ort"), block_ms(lambda: sessions[t].run(None, feed), args.seconds))
            torch.set_num_threads(t)
            for variant, m in tw.items():
                with torch.inference_mode():
                    keep((name, b, t, "eager", variant), block_ms(lambda: m(*targs), args.seconds))
                if (variant, b) in compiled:
                    with torch.inference_mode():
                        keep((name, b, t, "compile", variant), block_ms(lambda: compiled[(variant, b)](*targs),
                                                                        args.seconds))
            print(f"# round {r + 1} {name} b{b} t{t}: " + ", ".join(
                f"{'/'.join(map(str, k[3:]))} {v:.3f}" for k, v in best.items() if k[:3] == (name, b, t)), flush=True)

    print(f"\n# load average at end: {os.getloadavg()}\n")
    print("| model | batch | threads | Plumb ms | ORT ms | torch eager ms | torch.compile ms | "
          "Plumb vs faster peer | bar | met |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, b, t in rows:
        kind, _, _, tw, _, compiled, note = state[name]

        def fastest(mode):
            got = [(best[k], k[4]) for k in best if k[:4] == (name, b, t, mode)]
            return min(got) if got else None

        p, o = best[(name, b, t, "plumb")], best[(name, b, t, "ort")]
        e, c = fastest("eager"), fastest("compile")
        peer = min([o, e[0]] + ([c[0]] if c else []))
        ratio = peer / p
        fmt = lambda x: f"{x[0]:.3f}" + (f" ({x[1]})" if x[1] else "")  # noqa: E731
        cs = fmt(c) if c else (note or ("not run" if not args.compile else "-"))
        print(f"| {name} | {b} | {t} | {p:.3f} | {o:.3f} | {fmt(e)} | {cs} | {ratio:.2f}x | "
              f"{BAR[kind]:.1f}x ({kind}) | {'met' if ratio >= BAR[kind] else '**missed**'} |")


if __name__ == "__main__":
    sys.exit(main())
