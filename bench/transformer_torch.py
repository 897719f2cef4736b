"""The Transformer translation chapter in PyTorch, with the recipe of
`plumb train transformer` (models/transformer) on the data Plumb prepared:
the BPE, the encoded pairs and the training batches that
`plumb train transformer --export DIR` writes (vocab.txt, merges.txt,
train/val/test.ids, test.ref, batches.txt), so both frameworks train on
the same subwords in the same batches (each epoch's batch order is drawn
by numpy here, by Go's generator in Plumb).

The model is nn.Transformer (3 layers, d_model 256, 8 heads, ffn 1024,
dropout 0.1, pre-norm with a final layer norm on each stack, as Plumb's
with PreNorm), one embedding N(0, d^-1/2) shared by source, target and
output projection (Press and Wolf 2017; Vaswani et al. 2017 section 3.4),
scaled by sqrt(d) plus sinusoidal positions; label-smoothed cross-entropy
(0.1) over the real target positions; Adam (0.9, 0.98, 1e-9) under Noam's
schedule scaled to peak --lr after --warmup steps; gradients clipped to
global norm 1. After each epoch: validation cross-entropy per target token
(unsmoothed) and BLEU-4 (sacreBLEU, on the detokenised words against
test.ref) of beam search (4) ranked by GNMT's length penalty
((5+|Y|)/6)^alpha (Wu et al. 2016, eq. 14), as package decode's
BeamSearchBatch ranks (the top 2k extensions of a source's live
hypotheses; an end among the first k finishes one; a source stops at k
finished). nn.Transformer has no key/value cache, so each step runs the
decoder over the whole prefix. Writes a Plumb run log (bench/runlog.py).

    plumb train transformer --data ../shared/data --epochs 1 --warmup 100 --export out/bpe --log out/transformer/plumb
    CUDA_VISIBLE_DEVICES= python bench/transformer_torch.py --export out/bpe --epochs 1 --warmup 100 --log out/transformer/pytorch
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import sacrebleu
import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runlog import RunLog  # noqa: E402
from meter import Meter  # noqa: E402

PAD, BOS, EOS = 0, 1, 2  # text.BPE's special ids
END = "</w>"


def read_ids(path):
    pairs = []
    with open(path) as f:
        for line in f:
            s, t = line.rstrip("\n").split("\t")
            pairs.append(([int(x) for x in s.split()], [int(x) for x in t.split()]))
    return pairs


def load(directory):
    with open(os.path.join(directory, "vocab.txt")) as f:
        vocab = [line.rstrip("\n") for line in f]
    with open(os.path.join(directory, "batches.txt")) as f:
        groups = [[int(x) for x in line.split()] for line in f]
    with open(os.path.join(directory, "test.ref")) as f:
        refs = [line.rstrip("\n") for line in f]
    d = {k: read_ids(os.path.join(directory, k + ".ids")) for k in ("train", "val", "test")}
    return vocab, groups, d["train"], d["val"], d["test"], refs


def detokenize(ids, vocab):
    """text.BPE.Decode: subwords joined, a word ending at each </w>."""
    words, cur = [], ""
    for i in ids:
        t = vocab[i]
        if t in ("<pad>", "<s>", "</s>"):
            continue
        if t.endswith(END):
            words.append(cur + t[: -len(END)])
            cur = ""
        else:
            cur += t
    if cur:
        words.append(cur)
    return " ".join(words)


def sinusoids(max_len, d):
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(0, d, 2, dtype=torch.float64)
    angle = pos / torch.pow(10000.0, i / d)
    pe = torch.zeros(max_len, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe.float()


class Translator(nn.Module):
    def __init__(self, vocab, d=256, heads=8, ff=1024, layers=3, dropout=0.1, max_len=128):
        super().__init__()
        self.d = d
        self.emb = nn.Embedding(vocab, d)
        nn.init.normal_(self.emb.weight, 0, d**-0.5)
        self.register_buffer("pe", sinusoids(max_len, d))
        self.net = nn.Transformer(d, heads, layers, layers, ff, dropout, batch_first=True, norm_first=True)
        self.bias = nn.Parameter(torch.zeros(vocab))

    def embed(self, ids):
        return self.emb(ids) * math.sqrt(self.d) + self.pe[: ids.shape[1]]

    def encode(self, src, src_pad):
        return self.net.encoder(self.embed(src), src_key_padding_mask=src_pad)

    def decode(self, tgt, memory, src_pad):
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], dtype=torch.bool)
        y = self.net.decoder(self.embed(tgt), memory, tgt_mask=causal, memory_key_padding_mask=src_pad, tgt_is_causal=True)
        return y

    def logits(self, y):
        return F.linear(y, self.emb.weight, self.bias)


def pad(seqs):
    n = max(len(s) for s in seqs)
    out = np.full((len(seqs), n), PAD, dtype=np.int64)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return torch.from_numpy(out)


def padding(lengths, n):
    """The key padding mask: True past each row's length."""
    return torch.arange(n).unsqueeze(0) >= torch.tensor(lengths).unsqueeze(1)


def batch_loss(model, pairs, eps):
    """Model.Loss: the sources with the end mark, the targets behind the
    start mark, the loss over the real target positions."""
    src = pad([s + [EOS] for s, _ in pairs])
    tin = pad([[BOS] + t for _, t in pairs])
    tout = pad([t + [EOS] for _, t in pairs])
    src_pad = padding([len(s) + 1 for s, _ in pairs], src.shape[1])
    y = model.decode(tin, model.encode(src, src_pad), src_pad)
    real = ~padding([len(t) + 1 for _, t in pairs], tout.shape[1])
    logits = model.logits(y[real])
    return F.cross_entropy(logits, tout[real], label_smoothing=eps), int(real.sum())


@torch.no_grad()
def beam(model, srcs, k, alpha, max_len):
    """decode.BeamSearchBatch with GNMT's length penalty, recomputing the
    decoder over each prefix."""
    src = pad([s + [EOS] for s in srcs])
    src_pad = padding([len(s) + 1 for s in srcs], src.shape[1])
    memory = model.encode(src, src_pad)
    limit = min(max_len, 2 * src.shape[1] + 10, model.pe.shape[0])
    alive = [[([], 0.0)] for _ in srcs]  # (tokens, logprob)
    done = [[] for _ in srcs]
    stopped = [False] * len(srcs)
    for _ in range(limit):
        rows, owners = [], []
        for s, hyps in enumerate(alive):
            if hyps and not stopped[s]:
                for h in hyps:
                    rows.append([BOS] + h[0])
                    owners.append(s)
        if not rows:
            break
        idx = torch.tensor(owners)
        y = model.decode(torch.tensor(rows), memory[idx], src_pad[idx])
        lp = torch.log_softmax(model.logits(y[:, -1]).double(), -1)
        base = 0
        for s, hyps in enumerate(alive):
            if not hyps or stopped[s]:
                continue
            n = len(hyps)
            cand = lp[base : base + n] + torch.tensor([h[1] for h in hyps], dtype=torch.float64).unsqueeze(1)
            top = torch.topk(cand.reshape(-1), min(2 * k, cand.numel()))
            live = []
            for r, (score, flat) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
                parent, tok = divmod(flat, lp.shape[1])
                toks = hyps[parent][0] + [tok]
                if tok == EOS and r < k:
                    done[s].append((toks, score, True))
                elif tok != EOS and len(live) < k:
                    live.append((toks, score))
            base += n
            alive[s] = live
            if len(done[s]) >= k:
                stopped[s] = True
    out = []
    for s in range(len(srcs)):
        hyps = done[s] + [(t, p, False) for t, p in alive[s]]
        best = max(hyps, key=lambda h: h[1] / ((5 + len(h[0])) / 6) ** alpha)
        out.append([t for t in best[0] if t != EOS])
    return out


def bleu(model, test, refs, vocab, a):
    model.eval()
    hyps = []
    for s in range(0, len(test), 64):
        for ids in beam(model, [p[0] for p in test[s : s + 64]], a.beam, a.alpha, a.decode_len):
            hyps.append(detokenize(ids, vocab))
    model.train()
    return sacrebleu.corpus_bleu(hyps, [refs]).score


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--export", required=True, help="the folder plumb train transformer --export wrote")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    ap.add_argument("--warmup", type=int, default=800)
    ap.add_argument("--smoothing", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--alpha", type=float, default=0.6)
    ap.add_argument("--decode-len", type=int, default=100)
    ap.add_argument("--test-limit", type=int, default=0, help="BLEU on the first N test2016 sentences (0: all)")
    ap.add_argument("--budget-min", type=float, default=0, help="end training after this many minutes and evaluate (0: no limit)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--log", required=True)
    ap.add_argument("--log-every", type=int, default=10)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    vocab, groups, train, val, test, refs = load(a.export)
    if a.test_limit:
        test, refs = test[: a.test_limit], refs[: a.test_limit]
    model = Translator(len(vocab))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.98), eps=1e-9)
    noam = lambda step: min((step + 1) ** -0.5, (step + 1) * a.warmup**-1.5) * math.sqrt(a.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, noam)
    log = RunLog(a.log, "pytorch", "transformer" + (f"-epochs{a.epochs}" if a.epochs != 30 else ""),
                 {"batch_tokens": "batches.txt", "batches": len(groups), "lr": a.lr, "warmup": a.warmup, "seed": a.seed,
                  "smoothing": a.smoothing, "clip_norm": a.clip, "vocab": len(vocab), "train_size": len(train), "threads": a.threads})
    print(f"training on {len(train)} pairs in {len(groups)} batches (shared BPE vocabulary {len(vocab)}; "
          f"{sum(p.numel() for p in model.parameters())} parameters; {a.threads} threads)", flush=True)
    meter = Meter(log, a.log_every, a.lr, "loss", "target tokens")
    deadline = time.perf_counter() + a.budget_min * 60 if a.budget_min > 0 else math.inf
    for epoch in range(1, a.epochs + 1):
        meter.start(epoch)
        for g in np.random.default_rng([a.seed, epoch]).permutation(len(groups)):
            if time.perf_counter() > deadline:
                print(f"the budget of {a.budget_min:g} minutes is spent after {meter.step} steps", flush=True)
                break
            loss, n = batch_loss(model, [train[j] for j in groups[g]], a.smoothing)
            opt.zero_grad()
            loss.backward()
            if a.clip > 0:
                nn.utils.clip_grad_norm_(model.parameters(), a.clip)
            opt.step()
            sched.step()
            meter.lr = sched.get_last_lr()[0]
            meter.add(loss.item(), n)
        began = time.perf_counter()
        model.eval()
        with torch.no_grad():
            vl = vn = 0.0
            for s in range(0, len(val), 100):
                l, n = batch_loss(model, val[s : s + 100], 0.0)
                vl, vn = vl + float(l) * n, vn + n
        model.train()
        score = bleu(model, test, refs, vocab, a)
        meter.end(a.epochs, {"val_loss": vl / vn, "bleu": score},
                  f"val loss {vl / vn:.4f}, test2016 BLEU {score:.2f} on {len(test)} sentences (beam {a.beam}, alpha {a.alpha}; eval {time.perf_counter() - began:.0f}s)")
        if time.perf_counter() > deadline:
            break
    log.close()


if __name__ == "__main__":
    main()
