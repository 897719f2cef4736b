"""Multi30k for the translation recipes in bench/ (translate_torch.py,
translate_keras.py), prepared as `plumb train translate` prepares it:
lower-cased 13a tokens, dictionaries of the training words seen at least
twice with <s>, <e>, <unk> first, batches bucketed by source length.
"""
import collections
import gzip
import os

import numpy as np
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

BOS, EOS, UNK = 0, 1, 2
tok13a = Tokenizer13a()


def tokenize(line):
    return tok13a(line.rstrip("\n")).lower().split()


def read(data, split):
    base = os.path.join(data, "multi30k") if os.path.isdir(os.path.join(data, "multi30k")) else data
    side = lambda lang: [tokenize(l) for l in gzip.open(os.path.join(base, f"{split}.{lang}.gz"), "rt", encoding="utf-8")]
    return list(zip(side("en"), side("de")))


def vocab(sents, min_count):
    counts = collections.Counter(w for s in sents for w in s)
    words = sorted((w for w, c in counts.items() if c >= min_count and w not in ("<s>", "<e>", "<unk>")),
                   key=lambda w: (-counts[w], w.encode()))
    return {w: i for i, w in enumerate(["<s>", "<e>", "<unk>"] + words)}


def encode(words, v):
    return [BOS] + [v.get(w, UNK) for w in words] + [EOS]


def load(data, limit, eval_limit):
    """Training pairs (ids), validation pairs (ids), test2016 pairs (tokens)
    and the dictionaries."""
    train, val, test = read(data, "train"), read(data, "val"), read(data, "test_2016_flickr")
    src_v, trg_v = vocab([p[0] for p in train], 2), vocab([p[1] for p in train], 2)
    if limit > 0:
        train = train[:limit]
    if eval_limit > 0:
        test = test[:eval_limit]
    ids = lambda pairs: [(encode(s, src_v), encode(t, trg_v)) for s, t in pairs]
    return ids(train), ids(val), test, src_v, trg_v


def batches(data, batch, seed, epoch):
    """An epoch's batches of indices: a permutation of seed and epoch cut
    into windows of 50 batches, each sorted by source length and cut into
    batches, the batches shuffled."""
    order = np.random.default_rng([seed, epoch]).permutation(len(data))
    windows = [sorted(order[i : i + 50 * batch], key=lambda j: len(data[j][0])) for i in range(0, len(order), 50 * batch)]
    out = [w[i : i + batch] for w in windows for i in range(0, len(w), batch)]
    np.random.default_rng([seed, epoch, 1]).shuffle(out)
    return out


def pad(seqs, value):
    t = max(len(s) for s in seqs)
    return np.array([s + [value] * (t - len(s)) for s in seqs], np.int64)


def teacher(bt):
    """Sources padded with <e>, decoder inputs (<s> w...) padded with <s>,
    next words (w... <e>) padded with -1 (ignored), source lengths, and
    the number of target words."""
    src = [s for s, _ in bt]
    return (pad(src, EOS), pad([t[:-1] for _, t in bt], BOS), pad([t[1:] for _, t in bt], -1),
            np.array([len(s) for s in src]), sum(len(t) - 1 for _, t in bt))


def add_args(ap):
    ap.add_argument("--data", default=os.environ.get("PLUMB_DATA", "../shared/data"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--eval-limit", type=int, default=0)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--dropout", type=float, default=0.3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--log", required=True)
    ap.add_argument("--log-every", type=int, default=50)
