"""Data of the book chapters 4-6 for the Keras and PyTorch recipes
(bench/book_keras.py, bench/book_torch.py), read as Plumb reads it
(package data, models/word2vec, models/recommender, models/sentiment):
the same dictionaries, examples and test split.

- PTB: dictionary of the words seen more than 50 times in train and valid
  (counting one <s> and one <e> per sentence), by descending count then
  word, <unk> last; 5-grams of each sentence framed as <s> words <e>.
- IMDB: Paddle's tokenisation (trailing line breaks dropped, ASCII
  punctuation deleted, lower case, split on whitespace); dictionary of the
  words seen more than 150 times in train and test, <unk> last; label 0
  positive, 1 negative.
- MovieLens 100K: titles without "(year)", lower-cased words, dictionary by
  descending count then word, <unk> last; age groups of 1M's codes; the
  test set is every tenth rating in file order; target 2*stars - 5.
"""
import collections
import gzip
import io
import os
import re
import string
import tarfile

import numpy as np


def _vocab(counts, min_count, specials=()):
    words = [w for w, c in counts.items() if c >= min_count and w not in specials and w != "<unk>"]
    words.sort(key=lambda w: (-counts[w], w.encode()))
    words.append("<unk>")
    return {w: i for i, w in enumerate(words)}


def _ptb_file(root, split):
    for sub in ("", "ptb/"):
        for ext in ("", ".gz"):
            p = os.path.join(root, sub + "ptb." + split + ".txt" + ext)
            if os.path.exists(p):
                data = open(p, "rb").read()
                return (gzip.decompress(data) if ext else data).decode()
    raise FileNotFoundError(f"ptb.{split}.txt under {root}")


def ptb(root, n=5):
    """(vocab size, {split: (context int64 [M, n-1], next int64 [M])})."""
    sents = {s: [line.split() for line in _ptb_file(root, s).splitlines()] for s in ("train", "valid", "test")}
    counts = collections.Counter()
    for s in ("train", "valid"):
        for words in sents[s]:
            counts.update(words)
            counts.update(["<s>", "<e>"])
    vocab = _vocab(counts, 51)
    unk = vocab["<unk>"]
    out = {}
    for s, ss in sents.items():
        grams = []
        for words in ss:
            ids = [vocab.get(w, unk) for w in ["<s>"] + words + ["<e>"]]
            grams.extend(ids[i:i + n] for i in range(len(ids) - n + 1))
        g = np.asarray(grams, dtype=np.int64)
        out[s] = (g[:, :n - 1], g[:, n - 1])
    return len(vocab), out


_punct = re.compile("[" + re.escape(string.punctuation) + "]")


def tokenize(text):
    return _punct.sub("", text.rstrip("\r\n")).lower().split()


def imdb_texts(root):
    """{split: [(words, label)]} of the reviews in root's archive, each
    split positive reviews (label 0) first, then negative (1), each by file
    name, the words through tokenize."""
    path = root
    for cand in ("aclImdb_train_test.tar.gz", "aclImdb_v1.tar.gz", "imdb/aclImdb_train_test.tar.gz", "imdb/aclImdb_v1.tar.gz"):
        if os.path.exists(os.path.join(root, cand)):
            path = os.path.join(root, cand)
            break
    pat = re.compile(r"aclImdb/(train|test)/(pos|neg)/(\d+)_(\d+)\.txt$")
    reviews = {("train", "pos"): [], ("train", "neg"): [], ("test", "pos"): [], ("test", "neg"): []}
    with tarfile.open(path) as tf:
        for m in tf:
            g = pat.search(m.name)
            if g and m.isfile():
                text = tf.extractfile(m).read().decode("latin-1")
                reviews[(g.group(1), g.group(2))].append((os.path.basename(m.name), tokenize(text)))
    out = {}
    for split in ("train", "test"):
        out[split] = [(toks, label) for label, pol in ((0, "pos"), (1, "neg"))
                      for _, toks in sorted(reviews[(split, pol)], key=lambda r: r[0].encode())]
    return out


def imdb(root):
    """(vocab size, {split: (list of int64 arrays, labels int64 [N])}), each
    split positive reviews first, then negative, each by file name."""
    texts = imdb_texts(root)
    counts = collections.Counter()
    for items in texts.values():
        for toks, _ in items:
            counts.update(toks)
    vocab = _vocab(counts, 151)
    unk = vocab["<unk>"]
    out = {}
    for split, items in texts.items():
        seqs = [np.asarray([vocab.get(t, unk) for t in toks], dtype=np.int64) for toks, _ in items]
        out[split] = (seqs, np.asarray([label for _, label in items], dtype=np.int64))
    return len(vocab), out


_age_codes = [1, 18, 25, 35, 45, 50, 56]
_title_year = re.compile(r"^(.*)\((\d+)\)$")


def movielens(root):
    """(sizes dict, {split: dict of fields}) for MovieLens 100K: dense int64
    user, gender, age, job, movie; genres and title as lists of int64
    arrays; target float32 = 2*stars - 5."""
    path = os.path.join(root, "ml-100k.tar.gz")
    if not os.path.exists(path):
        path = os.path.join(root, "movielens", "ml-100k.tar.gz")
    files = {}
    with tarfile.open(path) as tf:
        for m in tf:
            base = os.path.basename(m.name)
            if m.isfile() and base in ("u.data", "u.user", "u.item", "u.genre", "u.occupation"):
                files[base] = tf.extractfile(m).read().decode("latin-1")
    genres = [line.split("|")[0] for line in files["u.genre"].splitlines() if line.strip()]
    jobs = [line.strip() for line in files["u.occupation"].splitlines() if line.strip()]
    users = {}
    for line in files["u.user"].splitlines():
        if not line.strip():
            continue
        uid, age, gender, job, _ = line.split("|")
        group = max(i for i, c in enumerate(_age_codes) if int(age) >= c) if int(age) >= 1 else 0
        users[int(uid)] = (int(gender == "F"), group, jobs.index(job))
    movies = {}
    for line in files["u.item"].splitlines():
        if not line.strip():
            continue
        f = line.split("|")
        title = f[1].strip()
        m = _title_year.match(title)
        if m:
            title = m.group(1).strip()
        movies[int(f[0])] = (title.lower().split(), [g for g, flag in enumerate(f[5:]) if flag.strip() == "1"])
    counts = collections.Counter()
    for words, _ in movies.values():
        counts.update(words)
    titles = _vocab(counts, 0)
    ratings = [line.split("\t") for line in files["u.data"].splitlines() if line.strip()]
    split = {"train": collections.defaultdict(list), "test": collections.defaultdict(list)}
    for i, (u, m, score, _) in enumerate(ratings):
        d = split["test" if i % 10 == 9 else "train"]
        u, m = int(u), int(m)
        g, a, j = users[u]
        words, gs = movies[m]
        d["user"].append(u), d["gender"].append(g), d["age"].append(a), d["job"].append(j), d["movie"].append(m)
        d["genres"].append(np.asarray(gs, dtype=np.int64))
        d["title"].append(np.asarray([titles[w] for w in words], dtype=np.int64))
        d["target"].append(2 * float(score) - 5)
    out = {}
    for s, d in split.items():
        o = {k: np.asarray(d[k], dtype=np.int64) for k in ("user", "gender", "age", "job", "movie")}
        o["genres"], o["title"] = d["genres"], d["title"]
        o["target"] = np.asarray(d["target"], dtype=np.float32)
        out[s] = o
    sizes = dict(users=max(users) + 1, genders=2, ages=7, jobs=max(len(jobs), max(j for _, _, j in users.values()) + 1),
                 movies=max(movies) + 1, genres=len(genres), titles=len(titles))
    return sizes, out


def pad(seqs, min_len=1):
    """Pads int64 sequences into [B, T] (T the longest, at least min_len)
    with 0 and returns it with the float32 mask [B, T]."""
    t = max(min_len, max((len(s) for s in seqs), default=0))
    x = np.zeros((len(seqs), t), dtype=np.int64)
    m = np.zeros((len(seqs), t), dtype=np.float32)
    for i, s in enumerate(seqs):
        x[i, :len(s)] = s
        m[i, :len(s)] = 1
    return x, m


def peak_rss_mib():
    """The process's peak resident set size in MiB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0
