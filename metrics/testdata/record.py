"""Records the goldens of metrics' tests: BLEU from sacreBLEU (corpus_bleu,
default settings: 13a tokenizer, exp smoothing, no lowercasing) and chunk
precision, recall and F1 from seqeval (default conlleval-style mode).

    /path/to/.venv/bin/python metrics/testdata/record.py   # from the repository root

Versions: bench/requirements.txt (sacrebleu 2.4.3, seqeval 1.2.2).
"""
import json
import os
import random

import sacrebleu
import seqeval
from seqeval.metrics import f1_score, precision_score, recall_score

HERE = os.path.dirname(os.path.abspath(__file__))

BLEU_CASES = [
    {
        "name": "news",
        "hyps": [
            "the cat sat on the mat .",
            "there is a dog in the garden , barking loudly .",
            "the U.S. economy grew by 3.5 % in 2019 , officials said .",
            "he paid $ 1,000.50 for the e-mail service ( monthly ) .",
            "we will meet at 10:30 tomorrow morning",
            "she said &quot; no &quot; and left the room .",
            "prices rose 5-6 percent in the year-on-year comparison .",
            "a quick brown fox jumps over the lazy dog",
        ],
        "refs": [[
            "the cat is sitting on the mat .",
            "a dog is barking loudly in the garden .",
            "the U.S. economy grew 3.5 % in 2019 , officials said .",
            "he paid $ 1,000.50 for the monthly e-mail service .",
            "we meet at 10:30 tomorrow morning .",
            "she said &quot; no &quot; and walked out of the room .",
            "prices rose 5-6 percent year-on-year .",
            "the quick brown fox jumped over the lazy dog",
        ]],
    },
    {
        "name": "two references",
        "hyps": [
            "it is a guide to action which ensures that the military always obeys the commands of the party",
            "he read the book because he was interested in world history",
        ],
        "refs": [
            [
                "it is a guide to action that ensures that the military will forever heed party commands",
                "he was interested in world history because he read the book",
            ],
            [
                "it is the guiding principle which guarantees the military forces always being under the command of the party",
                "he read the book because he was interested in world history",
            ],
        ],
    },
    {
        "name": "no four-gram matches",
        "hyps": ["one two three five four", "alpha beta delta gamma"],
        "refs": [["one two three four five", "alpha beta gamma delta"]],
    },
    {
        "name": "short hypotheses",
        "hyps": ["the cat", "a dog barks ."],
        "refs": [["the cat sat on the mat .", "a dog barks loudly at night ."]],
    },
    {
        "name": "identical",
        "hyps": ["to be or not to be , that is the question ."],
        "refs": [["to be or not to be , that is the question ."]],
    },
    {
        "name": "nothing in common",
        "hyps": ["xyz uvw"],
        "refs": [["abc def ghi"]],
    },
]


def bleu_goldens():
    out = []
    for c in BLEU_CASES:
        b = sacrebleu.corpus_bleu(c["hyps"], c["refs"])
        out.append(dict(c, score=b.score, counts=b.counts, totals=b.totals, sys_len=b.sys_len, ref_len=b.ref_len))
    return out


def random_tags(rng, n, types, scheme):
    tags = []
    for _ in range(n):
        r = rng.random()
        if r < 0.35:
            tags.append("O")
        else:
            letters = "BI" if scheme == "IOB" else "BIES"
            tags.append(rng.choice(letters) + "-" + rng.choice(types))
    return tags


def perturb(rng, tags, types, scheme):
    out = list(tags)
    for i in range(len(out)):
        if rng.random() < 0.15:
            out[i] = random_tags(rng, 1, types, scheme)[0]
    return out


def chunk_goldens():
    rng = random.Random(15)
    types = ["PER", "LOC", "ORG"]
    out = []
    for scheme in ["IOB", "IOBES"]:
        labels = [random_tags(rng, rng.randint(1, 30), types, scheme) for _ in range(40)]
        preds = [perturb(rng, t, types, scheme) for t in labels]
        out.append(dict(
            name="random " + scheme, scheme=scheme, types=types, labels=labels, preds=preds,
            precision=precision_score(labels, preds), recall=recall_score(labels, preds), f1=f1_score(labels, preds),
        ))
    return out


def main():
    golden = {
        "sacrebleu": sacrebleu.__version__,
        "seqeval": getattr(seqeval, "__version__", "1.2.2"),
        "bleu": bleu_goldens(),
        "chunk": chunk_goldens(),
    }
    with open(os.path.join(HERE, "goldens.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
