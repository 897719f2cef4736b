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
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srl_data import add_args, chunks, load, prf, run  # noqa: E402


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
    return (*prf(inferred, labeled, correct), cost / len(exs))


def main():
    ap = argparse.ArgumentParser()
    add_args(ap)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    train, val, words, verbs, labels = load(a.data, a.heldout, a.seed, a.limit)
    model = DBLSTM(len(words), len(verbs), len(labels))
    crf = list(model.crf.parameters())
    rest = [p for n, p in model.named_parameters() if not n.startswith("crf.")]
    opt = torch.optim.SGD([{"params": rest}, {"params": crf, "lr": a.lr * a.crf_lr}], lr=a.lr)

    def step(bt):
        word, ctx, verb, mark, mask, label, lengths = batchify(bt)
        loss = model.crf.nll(model.emissions(word, ctx, verb, mark, mask), label, lengths).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return float(loss)
    run(a, "pytorch", train, val, words, labels, step, lambda val, o_id, verb_type: evaluate(model, val, o_id, verb_type))


if __name__ == "__main__":
    main()
