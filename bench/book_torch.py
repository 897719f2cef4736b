"""The book's chapters 4-6 in PyTorch on the CPU, with Plumb's recipes
(models/word2vec, models/recommender, models/sentiment), writing Plumb run
logs for `plumb compare` / `plumb plot`:

- word2vec: 4 context words through one 32-wide table, concatenated, fc 256
  sigmoid, fc to the dictionary, softmax cross-entropy; Adagrad 3e-3
  (accumulator from 0, eps 1e-6) with L2 8e-4 on every parameter; batch 100.
- recommender: user tower (id 32, gender/age/job 16, each through its own fc;
  fc 200 tanh) and movie tower (id 32 through fc, genres summed, title
  through a window-3 conv of 32 filters with tanh, summed; fc 200 tanh);
  5*cosine against 2*stars-5, mean square error; SGD 0.2, batch 256.
- cnn: embedding 128, convolutions of windows 3 (steps -1..1) and 4 (-2..1)
  with 128 filters, tanh, max over each review, fc 2; Adagrad 2e-3, batch 128.
- lstm: embedding 128, fc 512 -> LSTM 128, then fc 512 over [fc, LSTM] ->
  LSTM twice more, the second backwards; max over time of the last fc and
  LSTM, fc 2. PyTorch's LSTM has its own input kernel, so each LSTM here
  also multiplies its fc output by a [512, 4*128] kernel that Plumb's
  (Paddle's dynamic_lstm) does not have.

Kernels are Glorot-uniform and biases zero (Plumb's and Fluid's defaults),
embeddings uniform in +-0.05. Reviews and titles are padded per batch and
masked; the order of each epoch is numpy's permutation of (seed, epoch).

    CUDA_VISIBLE_DEVICES= /work/main/.venv/bin/python bench/book_torch.py word2vec --data /work/shared/data --log runs/w2v-torch
"""
import argparse
import os
import time

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

import book_data
from meter import run_epochs
from runlog import RunLog

RECIPES = {  # epochs, batch, lr
    "word2vec": (3, 100, 3e-3),
    "recommender": (5, 256, 0.2),
    "cnn": (1, 128, 2e-3),
    "lstm": (1, 128, 2e-3),
}


def init(module):
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv1d)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.uniform_(m.weight, -0.05, 0.05)
        elif isinstance(m, nn.LSTM):
            for name, p in m.named_parameters():
                if "weight_ih" in name:
                    nn.init.xavier_uniform_(p)
                elif "weight_hh" in name:
                    nn.init.orthogonal_(p)
                else:
                    nn.init.zeros_(p)
                    if "bias_ih" in name:
                        p.data[p.shape[0] // 4:p.shape[0] // 2] = 1  # forget gate, as Keras and Plumb
    return module


class Word2Vec(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.emb, self.hidden, self.out = nn.Embedding(vocab, 32), nn.Linear(128, 256), nn.Linear(256, vocab)

    def forward(self, ctx):
        return self.out(torch.sigmoid(self.hidden(self.emb(ctx).reshape(len(ctx), -1))))


class Recommender(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(s["users"], 32), nn.Embedding(2, 16), nn.Embedding(7, 16), nn.Embedding(s["jobs"], 16),
                                   nn.Embedding(s["movies"], 32)])
        self.fcs = nn.ModuleList([nn.Linear(32, 32), nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(32, 32)])
        self.genres, self.title = nn.Embedding(s["genres"], 32), nn.Embedding(s["titles"], 32)
        self.conv = nn.Conv1d(32, 32, 3, padding=1)
        self.user_fc, self.movie_fc = nn.Linear(80, 200), nn.Linear(96, 200)

    def forward(self, b):
        f = [fc(emb(b[k])) for emb, fc, k in zip(self.embs, self.fcs, ("user", "gender", "age", "job", "movie"))]
        user = torch.tanh(self.user_fc(torch.cat(f[:4], 1)))
        genres = (self.genres(b["genres"]) * b["genres_mask"][..., None]).sum(1)
        t = self.title(b["title"]) * b["title_mask"][..., None]
        conv = torch.tanh(self.conv(t.transpose(1, 2))).transpose(1, 2)
        title = (conv * b["title_mask"][..., None]).sum(1)
        movie = torch.tanh(self.movie_fc(torch.cat([f[4], genres, title], 1)))
        return 5 * F.cosine_similarity(user, movie, dim=1, eps=1e-12)


class TextCNN(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, 128)
        self.conv3, self.conv4 = nn.Conv1d(128, 128, 3), nn.Conv1d(128, 128, 4)
        self.out = nn.Linear(256, 2)

    def forward(self, x, mask):
        e = (self.emb(x) * mask[..., None]).transpose(1, 2)
        neg = (1 - mask) * -1e30
        pooled = []
        for conv, (left, right) in ((self.conv3, (1, 1)), (self.conv4, (2, 1))):
            y = torch.tanh(conv(F.pad(e, (left, right))))
            pooled.append((y + neg[:, None, :]).amax(2))
        return self.out(torch.cat(pooled, 1))


class StackedLSTM(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, 128)
        self.fcs = nn.ModuleList([nn.Linear(128, 512), nn.Linear(640, 512), nn.Linear(640, 512)])
        self.lstms = nn.ModuleList([nn.LSTM(512, 128, batch_first=True) for _ in range(3)])
        self.out = nn.Linear(640, 2)

    def forward(self, x, mask):
        lengths = mask.sum(1).long().clamp(min=1)
        t = x.shape[1]
        # rev[b, i] = index of step i of sequence b read backwards within its length
        ar = torch.arange(t)[None, :]
        rev = torch.where(ar < lengths[:, None], lengths[:, None] - 1 - ar, ar)
        h = self.emb(x)
        for i, (fc, lstm) in enumerate(zip(self.fcs, self.lstms)):
            f = fc(h)
            inp = torch.gather(f, 1, rev[..., None].expand_as(f)) if i == 1 else f
            # Every review's words come first in each LSTM's reading order
            # (the backward layer reads the reversed review), so padding
            # never reaches a word's output and the padded batch runs through
            # the fused LSTM unpacked. Packed, PyTorch's CPU backward zero-fills
            # a full-size gradient per step: 20x slower.
            y, _ = lstm(inp)
            if i == 1:
                y = torch.gather(y, 1, rev[..., None].expand_as(y))
            h = torch.cat([f, y], 2)
        neg = ((1 - mask) * -1e30)[..., None]
        return self.out(torch.cat([(f + neg).amax(1), (y + neg).amax(1)], 1))


def speed_batch(chapter, rng):
    """Random data of the recipe's shapes, as the Go benchmarks time: a
    batch of 100 5-grams over 2,073 words, or 128 reviews of 100-359 words
    over 5,147 (BenchmarkTrainStep in models/word2vec and models/sentiment)."""
    if chapter == "word2vec":
        return 2073, (rng.integers(0, 2073, (100, 4)), rng.integers(0, 2073, 100)), 100
    seqs = [rng.integers(0, 5147, rng.integers(100, 360)) for _ in range(128)]
    return 5147, (seqs, np.arange(128) % 2), sum(len(q) for q in seqs)


def speed(a):
    """Times --speed training steps after 3 warm-up steps; prints samples/s
    and words/s (words: the reviews' words, or one per 5-gram)."""
    vocab, (x, y), words = speed_batch(a.chapter, np.random.default_rng(1))
    if a.chapter == "word2vec":
        net = init(Word2Vec(vocab))
        opt = torch.optim.Adagrad(net.parameters(), lr=3e-3, eps=1e-6, weight_decay=8e-4)
        c, t = torch.from_numpy(x), torch.from_numpy(y)
        step_loss = lambda: F.cross_entropy(net(c), t)
    else:
        net = init(TextCNN(vocab) if a.chapter == "cnn" else StackedLSTM(vocab))
        opt = torch.optim.Adagrad(net.parameters(), lr=2e-3, eps=1e-6)
        xp, m = book_data.pad(x)
        xp, m, t = torch.from_numpy(xp), torch.from_numpy(m), torch.from_numpy(y)
        step_loss = lambda: F.cross_entropy(net(xp, m), t)
    for i in range(3 + a.speed):
        if i == 3:
            start = time.perf_counter()
        loss = step_loss()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    dur = time.perf_counter() - start
    n = len(y) * a.speed
    print(f"pytorch {a.chapter} speed: {n / dur:.1f} samples/s, {words * a.speed / dur:.0f} words/s, {a.speed} steps in {dur:.2f} s, "
          f"threads {torch.get_num_threads()}, peak rss {book_data.peak_rss_mib():.0f} MiB", flush=True)


def batches(n, size, seed, epoch, lengths=None, window=0):
    """The rows of each step of an epoch: numpy's permutation of (seed,
    epoch) cut into batches. With lengths and window > 0, each run of window
    batches of that permutation is sorted by length before it is cut and the
    batches are then shuffled, so a padded batch holds reviews of similar
    length (Plumb runs unpadded and needs no buckets)."""
    rng = np.random.default_rng([seed, epoch])
    perm = rng.permutation(n)
    if lengths is None or window <= 0:
        return [perm[i:i + size] for i in range(0, n, size)]
    span = size * window
    perm = np.concatenate([sorted(perm[i:i + span], key=lambda j: lengths[j]) for i in range(0, n, span)])
    out = [perm[i:i + size] for i in range(0, n, size)]
    return [out[i] for i in rng.permutation(len(out))]


def by_length(seqs):
    """Indices of seqs, shortest first: evaluation walks the test set in this
    order so its padded batches waste little (the sums do not depend on it)."""
    return np.argsort([len(q) for q in seqs], kind="stable")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("chapter", choices=sorted(RECIPES))
    p.add_argument("--epochs", type=int)
    p.add_argument("--batch", type=int)
    p.add_argument("--lr", type=float)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=0, help="train on N examples only (a seeded random draw)")
    p.add_argument("--test-limit", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--data", default=os.environ.get("PLUMB_DATA", "/work/shared/data"))
    p.add_argument("--log")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--speed", type=int, default=0, help="only time N steps on random data of the recipe's shapes (word2vec, cnn, lstm)")
    p.add_argument("--bucket", type=int, default=0, help="cnn, lstm: sort each run of N batches by review length (0: plain shuffle)")
    a = p.parse_args()
    epochs, batch, lr = RECIPES[a.chapter]
    a.epochs, a.batch, a.lr = a.epochs or epochs, a.batch or batch, a.lr or lr
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    if a.speed:
        return speed(a)
    if not a.log:
        p.error("--log DIR is required for a training run")

    if a.chapter == "word2vec":
        vocab, d = book_data.ptb(a.data)
        net = init(Word2Vec(vocab))
        opt = torch.optim.Adagrad(net.parameters(), lr=a.lr, eps=1e-6, weight_decay=8e-4)
        train_n = len(d["train"][1])
        tensors = {s: (torch.from_numpy(c), torch.from_numpy(y)) for s, (c, y) in d.items()}

        def loss_of(idx, split="train"):
            c, y = tensors[split]
            return F.cross_entropy(net(c[idx]), y[idx])

        def evaluate():
            with torch.no_grad():
                out = {}
                for s in ("valid", "test"):
                    n = len(tensors[s][1])
                    tot = sum(F.cross_entropy(net(tensors[s][0][i:i + 1000]), tensors[s][1][i:i + 1000], reduction="sum").item()
                              for i in range(0, n, 1000))
                    out[s + "_cost"] = tot / n
                return out
        name = "word2vec"
    elif a.chapter == "recommender":
        sizes, d = book_data.movielens(a.data)
        net = init(Recommender(sizes))
        opt = torch.optim.SGD(net.parameters(), lr=a.lr)
        train_n = len(d["train"]["target"])

        def feed(split, idx):
            s = d[split]
            b = {k: torch.from_numpy(s[k][idx]) for k in ("user", "gender", "age", "job", "movie", "target")}
            for k in ("genres", "title"):
                x, m = book_data.pad([s[k][i] for i in idx])
                b[k], b[k + "_mask"] = torch.from_numpy(x), torch.from_numpy(m)
            return b

        def loss_of(idx, split="train"):
            b = feed(split, idx)
            return F.mse_loss(net(b), b["target"])

        def evaluate():
            with torch.no_grad():
                n = len(d["test"]["target"])
                tot = sum(loss_of(np.arange(i, min(i + 1000, n)), "test").item() * (min(i + 1000, n) - i) for i in range(0, n, 1000))
                return {"mse": tot / n, "rmse_stars": (tot / n) ** 0.5 / 2}
        name = "recommender"
    else:
        vocab, d = book_data.imdb(a.data)
        net = init(TextCNN(vocab) if a.chapter == "cnn" else StackedLSTM(vocab))
        opt = torch.optim.Adagrad(net.parameters(), lr=a.lr, eps=1e-6)
        rng = np.random.default_rng(a.seed)
        for s, lim in (("train", a.limit), ("test", a.test_limit)):
            if lim:
                keep = rng.permutation(len(d[s][1]))[:lim]
                d[s] = ([d[s][0][i] for i in keep], d[s][1][keep])
        train_n = len(d["train"][1])
        lengths = [len(q) for q in d["train"][0]]

        def logits(split, idx):
            x, m = book_data.pad([d[split][0][i] for i in idx])
            return net(torch.from_numpy(x), torch.from_numpy(m))

        def loss_of(idx, split="train"):
            return F.cross_entropy(logits(split, idx), torch.from_numpy(d[split][1][idx]))

        def evaluate():
            with torch.no_grad():
                n, correct, tot = len(d["test"][1]), 0, 0.0
                order = by_length(d["test"][0])
                for i in range(0, n, 500):
                    idx = order[i:i + 500]
                    lg, y = logits("test", idx), torch.from_numpy(d["test"][1][idx])
                    tot += F.cross_entropy(lg, y, reduction="sum").item()
                    correct += (lg.argmax(1) == y).sum().item()
                return {"accuracy": correct / n, "loss": tot / n}
        name = "sentiment-" + a.chapter

    if a.limit and a.chapter in ("word2vec", "recommender"):
        train_n = min(train_n, a.limit)
        name += f"-limit{a.limit}"
    elif a.limit:
        name += f"-limit{a.limit}"
    bucket = (lengths, a.bucket) if a.chapter in ("cnn", "lstm") and a.bucket else ()
    if bucket:
        name += f"-bucket{a.bucket}"
    log = RunLog(a.log, "pytorch", name, dict(chapter=a.chapter, epochs=a.epochs, batch=a.batch, lr=a.lr, seed=a.seed,
                                                train_size=train_n, torch=torch.__version__, threads=torch.get_num_threads()))
    def step(idx):
        loss = loss_of(idx)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()
    run_epochs(log, "pytorch", name, a.epochs, a.lr, a.log_every, lambda epoch: batches(train_n, a.batch, a.seed, epoch, *bucket), step, evaluate)


if __name__ == "__main__":
    main()
