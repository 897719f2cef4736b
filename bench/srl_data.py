"""CoNLL-05 for the SRL recipes in bench/ (srl_torch.py, srl_keras.py),
read as Plumb's conll05.Load, conll05.Dataset and metrics.ChunkEval
read and score it: test.wsj's propositions, Paddle's verb and label
dictionaries, a word dictionary built from the set, the eight features,
IOB chunks by Paddle chunk_eval's rules.
"""
import collections
import gzip
import os

import numpy as np

from meter import Meter
from runlog import RunLog


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


def load(data, heldout, seed, limit):
    """Features of test.wsj, split into training and held-out parts by a
    numpy permutation of seed; the dictionaries."""
    raw = read_conll05(data)
    words, verbs, labels = dicts(data, raw)
    exs = [features(e, words, verbs, labels) for e in raw]
    perm = np.random.default_rng(seed).permutation(len(exs))
    nval = int(round(heldout * len(exs)))
    train, val = [exs[i] for i in perm[nval:]], [exs[i] for i in perm[:nval]]
    if limit > 0:
        train = train[:limit]
    return train, val, words, verbs, labels


def run(a, framework, train, val, words, labels, step, evaluate):
    """The recipe's training run, as `plumb train srl` runs it: a.epochs
    passes over train in a seeded order, step(examples) training on a batch
    and returning its mean cost, evaluate(val, o_id, verb_type) returning
    the held-out (precision, recall, F1, cost) after each epoch; printed
    and written to the run log a.log (meter.Meter)."""
    o_id, verb_type = labels["O"], labels["B-V"] // 2
    log = RunLog(a.log, framework, "srl" + (f"-limit{a.limit}" if a.limit else ""),
                 {"batch": a.batch, "lr": a.lr, "crf_lr": a.crf_lr, "seed": a.seed, "train_size": len(train), "threads": a.threads})
    print(f"training db_lstm on {len(train)} propositions, holding out {len(val)} ({len(words)} words)", flush=True)
    meter = Meter(log, a.log_every, a.lr, "cost", "sequences")
    for epoch in range(1, a.epochs + 1):
        order = np.random.default_rng([a.seed, epoch]).permutation(len(train))
        meter.start(epoch)
        for s in range(0, len(train), a.batch):
            bt = [train[i] for i in order[s : s + a.batch]]
            meter.add(step(bt), len(bt))
        p, r, f, vcost = evaluate(val, o_id, verb_type)
        meter.end(a.epochs, {"precision": p, "recall": r, "f1": f, "loss": vcost},
                  f"held-out cost {vcost:.4f}, chunk precision {p:.4f} recall {r:.4f} F1 {f:.4f}")
    log.close()


def prf(inferred, labeled, correct):
    p = correct / inferred if inferred else 0.0
    r = correct / labeled if labeled else 0.0
    return p, r, (2 * p * r / (p + r) if correct else 0.0)


def add_args(ap):
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
