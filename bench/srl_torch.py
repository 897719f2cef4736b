"""The PaddlePaddle book's SRL model (db_lstm + CRF) in PyTorch, with the
recipe of `plumb train srl` (models/srl): CoNLL-05 test.wsj, a word
dictionary built from it, 10% of the propositions held out, SGD 0.01 with
the CRF's parameters at 1e-3 of it, batch 10; chunk P/R/F1 (IOB, verb
excluded, Paddle's chunk_eval rules) on the held-out part after each
epoch. Writes a Plumb run log (bench/runlog.py).

    CUDA_VISIBLE_DEVICES= python bench/srl_torch.py --data ../shared/data --log out/srl/pytorch

PyTorch's nn.LSTM has tanh candidate and cell activations only, so the
book's LSTM (relu candidate, sigmoid cell, peepholes) is a cell stepped
in Python, as Keras would need a custom cell. The held-out split is drawn
by numpy, so it is not Plumb's split (same size, another draw).
"""
import argparse
import collections
import gzip
import os
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runlog import RunLog  # noqa: E402


def find(data, *parts):
    for base in (data, os.path.join(data, "conll05")):
        p = os.path.join(base, *parts)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(os.path.join(data, *parts))


def read_conll05(data):
    """Examples (words, predicate lemma, IOB labels) of test.wsj, one per
    predicate, read as Paddle's conll05 corpus_reader reads them."""
    rel = "conll05st-release/test.wsj/{0}/test.wsj.{0}.gz"
    words = gzip.open(find(data, rel.format("words")), "rt").read().split("\n")
    props = gzip.open(find(data, rel.format("props")), "rt").read().split("\n")
    out, sent, rows = [], [], []
    for w, p in zip(words, props):
        w, p = w.strip(), p.split()
        if not w:
            if sent:
                lemmas = [r[0] for r in rows if r[0] != "-"]
                for k, lemma in enumerate(lemmas):
                    labels, cur = [], None
                    for r in rows:
                        tag = r[1 + k]
                        if tag.startswith("("):
                            cur = tag[1:tag.index("*")]
                            labels.append("B-" + cur)
                        else:
                            labels.append("I-" + cur if cur else "O")
                        if tag.endswith(")"):
                            cur = None
                    out.append((sent, lemma, labels))
            sent, rows = [], []
            continue
        sent.append(w)
        rows.append(p)
    return out


def dicts(data, examples):
    verbs = {w: i for i, w in enumerate(open(find(data, "paddle_dicts/verbDict.txt")).read().split())}
    tags = []
    for line in open(find(data, "paddle_dicts/targetDict.txt")):
        line = line.strip()
        if line[:2] in ("B-", "I-") and "B-" + line[2:] not in tags:
            tags += ["B-" + line[2:], "I-" + line[2:]]
    labels = {t: i for i, t in enumerate(tags + ["O"])}
    counts = collections.Counter(w for ex in examples for w in ex[0])
    order = sorted((w for w in counts if w not in ("bos", "eos", "<unk>")), key=lambda w: (-counts[w], w.encode()))
    words = {w: i for i, w in enumerate(["bos", "eos"] + order + ["<unk>"])}
    return words, verbs, labels


def features(ex, words, verbs, labels):
    sent, lemma, tags = ex
    n, v = len(sent), tags.index("B-V")
    wid = [words.get(w, words["<unk>"]) for w in sent]
    mark = [0] * n
    ctx = []
    for off in (-2, -1, 0, 1, 2):
        j = v + off
        w = "bos" if j < 0 else "eos" if j >= n else sent[j]
        if 0 <= j < n:
            mark[j] = 1
        ctx.append(words.get(w, words["<unk>"]))
    return wid, ctx, verbs[lemma], mark, [labels[t] for t in tags]


class BookLSTM(nn.Module):
    """Paddle's dynamic_lstm with relu candidate, sigmoid gates and cell
    output, peepholes; gate order i, f, c, o; an input kernel as Plumb's."""

    def __init__(self, inp, units):
        super().__init__()
        self.w = nn.Linear(inp, 4 * units)
        self.u = nn.Linear(units, 4 * units, bias=False)
        self.p = nn.Parameter(torch.zeros(3 * units))
        self.units = units

    def forward(self, x, mask, reverse):
        # x [B, T, in] padded, mask [B, T]; reverse runs each sequence from its end
        b, t, _ = x.shape
        h = x.new_zeros(b, self.units)
        c = x.new_zeros(b, self.units)
        z_all = self.w(x)
        hs = [None] * t
        pi, pf, po = self.p.chunk(3)
        steps = range(t - 1, -1, -1) if reverse else range(t)
        for s in steps:
            z = z_all[:, s] + self.u(h)
            zi, zf, zg, zo = z.chunk(4, dim=1)
            i = torch.sigmoid(zi + pi * c)
            f = torch.sigmoid(zf + pf * c)
            cn = f * c + i * torch.relu(zg)
            o = torch.sigmoid(zo + po * cn)
            hn = o * torch.sigmoid(cn)
            m = mask[:, s : s + 1]
            h, c = m * hn + (1 - m) * h, m * cn + (1 - m) * c
            hs[s] = hn
        return torch.stack(hs, 1)


class CRF(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.trans = nn.Parameter(nn.init.xavier_uniform_(torch.empty(k, k)))
        self.start = nn.Parameter(torch.zeros(k))
        self.stop = nn.Parameter(torch.zeros(k))

    def nll(self, em, tags, lengths):
        b, t, k = em.shape
        ar = torch.arange(b)
        alpha = self.start + em[:, 0]
        score = self.start[tags[:, 0]] + em[ar, 0, tags[:, 0]]
        for s in range(1, t):
            live = (s < lengths).unsqueeze(1)
            nxt = torch.logsumexp(alpha.unsqueeze(2) + self.trans, 1) + em[:, s]
            alpha = torch.where(live, nxt, alpha)
            step = self.trans[tags[:, s - 1], tags[:, s]] + em[ar, s, tags[:, s]]
            score = score + torch.where(live.squeeze(1), step, torch.zeros_like(step))
        last = tags[ar, lengths - 1]
        return torch.logsumexp(alpha + self.stop, 1) - (score + self.stop[last])

    def decode(self, em, lengths):
        paths = []
        for q in range(em.shape[0]):
            e = em[q, : lengths[q]]
            d, back = self.start + e[0], []
            for s in range(1, len(e)):
                cand = d.unsqueeze(1) + self.trans
                d, arg = cand.max(0)
                d = d + e[s]
                back.append(arg)
            best = [int((d + self.stop).argmax())]
            for arg in reversed(back):
                best.append(int(arg[best[-1]]))
            paths.append(best[::-1])
        return paths


class DBLSTM(nn.Module):
    def __init__(self, nwords, nverbs, nlabels, word_dim=32, mark_dim=5, hidden=512, depth=8):
        super().__init__()
        self.word = nn.Embedding(nwords, word_dim)
        self.verb = nn.Embedding(nverbs, word_dim)
        self.mark = nn.Embedding(2, mark_dim)
        self.inp = nn.ModuleList([nn.Linear(word_dim, hidden) for _ in range(7)] + [nn.Linear(mark_dim, hidden)])
        self.mix = nn.ModuleList([nn.ModuleList([nn.Linear(hidden, hidden), nn.Linear(hidden // 4, hidden)]) for _ in range(depth - 1)])
        self.lstm = nn.ModuleList([BookLSTM(hidden, hidden // 4) for _ in range(depth)])
        self.out = nn.ModuleList([nn.Linear(hidden, nlabels), nn.Linear(hidden // 4, nlabels)])
        self.crf = CRF(nlabels)

    def emissions(self, word, ctx, verb, mark, mask):
        t = word.shape[1]
        embs = [self.word(word)] + [self.word(ctx[:, j]).unsqueeze(1).expand(-1, t, -1) for j in range(5)]
        embs += [self.verb(verb).unsqueeze(1).expand(-1, t, -1), self.mark(mark)]
        mix = sum(torch.tanh(l(e)) for l, e in zip(self.inp, embs))
        out = None
        for i, lstm in enumerate(self.lstm):
            if i > 0:
                a, b = self.mix[i - 1]
                mix = torch.tanh(a(mix)) + torch.tanh(b(out))
            out = lstm(mix, mask, i % 2 == 1)
        return torch.tanh(self.out[0](mix)) + torch.tanh(self.out[1](out))


def batchify(exs):
    t = max(len(e[0]) for e in exs)
    word = torch.zeros(len(exs), t, dtype=torch.long)
    mark = torch.zeros(len(exs), t, dtype=torch.long)
    label = torch.zeros(len(exs), t, dtype=torch.long)
    mask = torch.zeros(len(exs), t)
    for q, (w, _, _, m, l) in enumerate(exs):
        n = len(w)
        word[q, :n], mark[q, :n], label[q, :n], mask[q, :n] = torch.tensor(w), torch.tensor(m), torch.tensor(l), 1
    ctx = torch.tensor([e[1] for e in exs])
    verb = torch.tensor([e[2] for e in exs])
    lengths = torch.tensor([len(e[0]) for e in exs])
    return word, ctx, verb, mark, mask, label, lengths


def chunks(tags, o_id):
    """Paddle chunk_eval's IOB chunks (begin, end, type): ids 2k (B) and
    2k+1 (I) of type k, o_id is O; an I that cannot continue begins one."""
    out, cur = [], None
    for i, t in enumerate(tags + [o_id]):
        typ, pos = (None, None) if t == o_id else divmod(t, 2)
        if cur and (t == o_id or pos == 0 or typ != cur[2]):
            out.append((cur[0], i - 1, cur[2]))
            cur = None
        if t != o_id and cur is None:
            cur = (i, None, typ)
    return out


def evaluate(model, exs, o_id, verb_type, batch=100):
    model.eval()
    inferred = labeled = correct = 0
    cost = 0.0
    with torch.no_grad():
        for s in range(0, len(exs), batch):
            word, ctx, verb, mark, mask, label, lengths = batchify(exs[s : s + batch])
            em = model.emissions(word, ctx, verb, mark, mask)
            cost += float(model.crf.nll(em, label, lengths).sum())
            for q, path in enumerate(model.crf.decode(em, lengths)):
                gold = label[q, : lengths[q]].tolist()
                pc = {c for c in chunks(path, o_id) if c[2] != verb_type}
                lc = {c for c in chunks(gold, o_id) if c[2] != verb_type}
                inferred, labeled, correct = inferred + len(pc), labeled + len(lc), correct + len(pc & lc)
    model.train()
    p = correct / inferred if inferred else 0.0
    r = correct / labeled if labeled else 0.0
    f = 2 * p * r / (p + r) if correct else 0.0
    return p, r, f, cost / len(exs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("PLUMB_DATA", "../shared/data"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--crf-lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--heldout", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--log", required=True)
    ap.add_argument("--log-every", type=int, default=50)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    raw = read_conll05(a.data)
    words, verbs, labels = dicts(a.data, raw)
    exs = [features(e, words, verbs, labels) for e in raw]
    perm = np.random.default_rng(a.seed).permutation(len(exs))
    nval = int(round(a.heldout * len(exs)))
    val = [exs[i] for i in perm[:nval]]
    train = [exs[i] for i in perm[nval:]]
    if a.limit > 0:
        train = train[: a.limit]
    model = DBLSTM(len(words), len(verbs), len(labels))
    crf = list(model.crf.parameters())
    rest = [p for n, p in model.named_parameters() if not n.startswith("crf.")]
    opt = torch.optim.SGD([{"params": rest}, {"params": crf, "lr": a.lr * a.crf_lr}], lr=a.lr)
    o_id, verb_type = labels["O"], labels["B-V"] // 2
    log = RunLog(a.log, "pytorch", "srl" + (f"-limit{a.limit}" if a.limit else ""),
                 {"batch": a.batch, "lr": a.lr, "crf_lr": a.crf_lr, "seed": a.seed, "train_size": len(train), "threads": a.threads})
    print(f"training db_lstm on {len(train)} propositions, holding out {len(val)} ({len(words)} words)", flush=True)
    step, seen = 0, 0
    for epoch in range(1, a.epochs + 1):
        order = np.random.default_rng([a.seed, epoch]).permutation(len(train))
        began, total, n, run, rn = time.perf_counter(), 0.0, 0, 0.0, 0
        for s in range(0, len(train), a.batch):
            bt = [train[i] for i in order[s : s + a.batch]]
            word, ctx, verb, mark, mask, label, lengths = batchify(bt)
            loss = model.crf.nll(model.emissions(word, ctx, verb, mark, mask), label, lengths).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            step, seen = step + 1, seen + len(bt)
            total, n, run, rn = total + float(loss) * len(bt), n + len(bt), run + float(loss), rn + 1
            rate = n / (time.perf_counter() - began)
            if step % a.log_every == 0:
                print(f"epoch {epoch} step {step}: cost {run / rn:.4f} (mean of the last {rn} batches), {rate:.1f} sequences/s", flush=True)
                log.write(kind="step", epoch=epoch, step=step, examples=seen, loss=total / n, samples_per_sec=rate, lr=a.lr)
                run, rn = 0.0, 0
        p, r, f, vcost = evaluate(model, val, o_id, verb_type)
        print(f"epoch {epoch}/{a.epochs}: train cost {total / n:.4f}, held-out cost {vcost:.4f}, chunk precision {p:.4f} recall {r:.4f} F1 {f:.4f} ({rate:.1f} sequences/s)", flush=True)
        log.write(kind="epoch", epoch=epoch, step=step, examples=seen, loss=total / n, samples_per_sec=rate,
                  metrics={"precision": p, "recall": r, "f1": f, "loss": vcost})
    log.close()


if __name__ == "__main__":
    main()
