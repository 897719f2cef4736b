"""The PaddlePaddle book's machine translation model in PyTorch, with the
recipe of `plumb train translate` (models/translate): Multi30k en-de,
lower-cased 13a tokens, dictionaries of training words seen twice (<s>,
<e>, <unk> first), a bidirectional GRU encoder, a GRU decoder with
Bahdanau attention booted from the reverse encoder's final state, the
output projection once over all decoder steps, Adam 1e-3 with gradients
clipped to norm 5, dropout 0.3 on both embeddings and on the decoder
states fed to the projection, batch 64 bucketed by source length; BLEU-4 (sacreBLEU)
on test2016 with batched beam search (width 4, scores averaged over
length) after each epoch. Writes a Plumb run log (bench/runlog.py).

    CUDA_VISIBLE_DEVICES= python bench/translate_torch.py --data ../shared/data --log out/translate/pytorch
"""
import argparse
import os
import sys

import sacrebleu
import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runlog import RunLog  # noqa: E402
from meter import Meter  # noqa: E402
from translate_data import BOS, EOS, add_args, batches, encode, load, pad, teacher  # noqa: E402

class Seq2Seq(nn.Module):
    def __init__(self, nsrc, ntrg, emb=256, hidden=256, attn=256, dropout=0.3):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.src_emb = nn.Embedding(nsrc, emb)
        self.encoder = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.boot = nn.Linear(hidden, hidden)
        self.trg_emb = nn.Embedding(ntrg, emb)
        self.wq = nn.Linear(hidden, attn, bias=False)
        self.wm = nn.Linear(2 * hidden, attn, bias=False)
        self.v = nn.Linear(attn, 1, bias=False)
        self.cell = nn.GRUCell(emb + 2 * hidden, hidden)
        self.out = nn.Linear(hidden, ntrg)

    def encode(self, src, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.drop(self.src_emb(src)), lengths, batch_first=True, enforce_sorted=False)
        enc, h = self.encoder(packed)
        enc, _ = nn.utils.rnn.pad_packed_sequence(enc, batch_first=True)
        mask = torch.arange(enc.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
        return torch.tanh(self.boot(h[1])), enc, self.wm(enc), mask

    def step(self, prev, h, enc, keys, mask):
        score = self.v(torch.tanh(self.wq(h).unsqueeze(1) + keys)).squeeze(2)
        weights = torch.softmax(score.masked_fill(~mask, float("-inf")), 1)
        ctx = torch.bmm(weights.unsqueeze(1), enc).squeeze(1)
        return self.cell(torch.cat([self.drop(self.trg_emb(prev)), ctx], 1), h)

    def loss(self, src, slen, trg, nxt):
        h, enc, keys, mask = self.encode(src, slen)
        hs = []
        for t in range(trg.shape[1]):
            h = self.step(trg[:, t], h, enc, keys, mask)
            hs.append(h)
        logits = self.out(self.drop(torch.stack(hs, 1).reshape(-1, h.shape[1])))
        return F.cross_entropy(logits, nxt.reshape(-1), ignore_index=-1)

    @torch.no_grad()
    def beam(self, src, slen, k=4, max_len=50):
        """Batched beam search: every source's k hypotheses in one batch;
        finished hypotheses ranked by mean log-probability per token."""
        b = src.shape[0]
        h, enc, keys, mask = self.encode(src, slen)
        rep = lambda x: x.repeat_interleave(k, 0)
        h, enc, keys, mask = rep(h), rep(enc), rep(keys), rep(mask)
        scores = torch.full((b, k), float("-inf"))
        scores[:, 0] = 0
        prev = torch.full((b * k,), BOS, dtype=torch.long)
        toks = torch.zeros(b * k, 0, dtype=torch.long)
        done = [[] for _ in range(b)]
        for t in range(max_len):
            h = self.step(prev, h, enc, keys, mask)
            lp = torch.log_softmax(self.out(h), 1)
            v = lp.shape[1]
            cand = (scores.reshape(-1, 1) + lp).reshape(b, k * v)
            top, idx = cand.topk(2 * k, 1)
            parents, words = idx // v, idx % v
            new_scores = torch.full((b, k), float("-inf"))
            sel = torch.zeros(b, k, dtype=torch.long)
            nw = torch.full((b, k), EOS, dtype=torch.long)
            for q in range(b):
                live = 0
                for r in range(2 * k):
                    if len(done[q]) >= k or live == k or top[q, r] == float("-inf"):
                        break
                    par, w = int(parents[q, r]), int(words[q, r])
                    if w == EOS:
                        if r < k:
                            seq = toks[q * k + par].tolist() + [w]
                            done[q].append((float(top[q, r]) / len(seq), seq))
                        continue
                    new_scores[q, live], sel[q, live], nw[q, live] = top[q, r], q * k + par, w
                    live += 1
            if all(len(d) >= k for d in done) or torch.isinf(new_scores).all():
                break
            sel = sel.reshape(-1)
            h, toks, prev, scores = h[sel], torch.cat([toks[sel], nw.reshape(-1, 1)], 1), nw.reshape(-1), new_scores
        out = []
        for q in range(b):
            cands = list(done[q])
            if len(cands) < k:
                for j in range(k):
                    if not torch.isinf(scores[q, j]):
                        seq = toks[q * k + j].tolist()
                        cands.append((float(scores[q, j]) / max(len(seq), 1), seq))
            best = max(cands, key=lambda c: c[0])[1] if cands else []
            out.append([w for w in best if w != EOS])
        return out


def bleu(model, pairs, src_v, inv_trg, batch=64, beam=4):
    hyps = []
    for s in range(0, len(pairs), batch):
        src = [encode(p[0], src_v) for p in pairs[s : s + batch]]
        for ids in model.beam(torch.from_numpy(pad(src, EOS)), torch.tensor([len(x) for x in src]), k=beam):
            hyps.append(" ".join(inv_trg[i] for i in ids))
    return sacrebleu.corpus_bleu(hyps, [[" ".join(p[1]) for p in pairs]]).score


def loss_of(model, bt):
    src, trg, nxt, slen, n = teacher(bt)
    return model.loss(torch.from_numpy(src), torch.from_numpy(slen), torch.from_numpy(trg), torch.from_numpy(nxt)), n


def main():
    ap = argparse.ArgumentParser()
    add_args(ap)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    data, val, test, src_v, trg_v = load(a.data, a.limit, a.eval_limit)
    inv_trg = {i: w for w, i in trg_v.items()}
    model = Seq2Seq(len(src_v), len(trg_v), dropout=a.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    log = RunLog(a.log, "pytorch", "translate" + (f"-limit{a.limit}" if a.limit else ""),
                 {"batch": a.batch, "lr": a.lr, "seed": a.seed, "dropout": a.dropout, "train_size": len(data), "threads": a.threads})
    print(f"training on {len(data)} pairs (vocabularies {len(src_v)} en, {len(trg_v)} de)", flush=True)
    meter = Meter(log, a.log_every, a.lr, "loss", "target words")
    for epoch in range(1, a.epochs + 1):
        meter.start(epoch)
        for idx in batches(data, a.batch, a.seed, epoch):
            loss, n = loss_of(model, [data[j] for j in idx])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5)
            opt.step()
            meter.add(float(loss), n)
        model.eval()
        with torch.no_grad():
            vl = vw = 0.0
            for s in range(0, len(val), 100):
                l, n = loss_of(model, val[s : s + 100])
                vl, vw = vl + float(l) * n, vw + n
            score = bleu(model, test, src_v, inv_trg, beam=a.beam)
        model.train()
        meter.end(a.epochs, {"val_loss": vl / vw, "bleu": score}, f"val loss {vl / vw:.4f}, test2016 BLEU {score:.2f} (beam {a.beam})")
    log.close()


if __name__ == "__main__":
    main()
