"""Reference ids for text.WordPiece on the IMDB reviews (kept out of CI).

    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_tokenizer.py vocab OUT/vocab.txt
        trains a 30,000-token WordPiece vocabulary (tokenizers' BertWordPieceTokenizer,
        lower-cased, accents stripped) on the 25,000 IMDB training reviews
    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_tokenizer.py ids OUT/vocab.txt OUT/ids.tsv
        writes, for each of the 25,000 IMDB test reviews (in the archive's order),
        "path<TAB>ids" from transformers' BertTokenizer (the tokenizers backend,
        BertTokenizerFast) and, as a second column, BertTokenizerLegacy's (the
        pure-Python one): all ids with [CLS] and [SEP], no truncation
    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_tokenizer.py truncated OUT/vocab.txt OUT/truncated.tsv
        writes, for each test review, BertTokenizer's ids truncated to 128, and the
        ids and token types of the pair (review, next review in the archive's
        order) truncated longest-first to 200
    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_tokenizer.py cases VOCAB IN.json OUT.json
        records the ids of each string of the JSON list IN.json (single, and pairs
        of consecutive strings, at several max lengths) for text's committed test:
        bench/bert_tokenizer.py cases text/testdata/wordpiece/vocab.txt \
            text/testdata/wordpiece/sentences.json text/testdata/wordpiece/cases.json

The archive is ../shared/data/imdb/aclImdb_train_test.tar.gz (override with IMDB=path).
text's TestIMDB (PLUMB_WORDPIECE_IMDB=OUT) compares Plumb's ids with both.
"""

import json
import os
import sys
import tarfile

# bench/kernels.py would shadow the `kernels` package that transformers imports.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

IMDB = os.environ.get("IMDB", os.path.join(_here, "..", "..", "shared", "data", "imdb", "aclImdb_train_test.tar.gz"))


def reviews(split):
    with tarfile.open(IMDB, "r:gz") as tar:
        for m in tar:
            parts = m.name.split("/")
            if m.isfile() and len(parts) == 4 and parts[1] == split and parts[2] in ("pos", "neg") and parts[3].endswith(".txt"):
                yield m.name, tar.extractfile(m).read().decode("utf-8")


def train_vocab(out):
    from tokenizers import BertWordPieceTokenizer
    tok = BertWordPieceTokenizer(lowercase=True, strip_accents=True, clean_text=True, handle_chinese_chars=True)
    tok.train_from_iterator((text for _, text in reviews("train")), vocab_size=30000, min_frequency=2,
                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    tok.save_model(os.path.dirname(out) or ".")


def tokenizers(vocab):
    from transformers import BertTokenizer
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy
    return BertTokenizer(vocab=vocab), BertTokenizerLegacy(vocab_file=vocab)


def ids(vocab, out):
    fast, slow = tokenizers(vocab)
    with open(out, "w") as f:
        for name, text in reviews("test"):
            a = fast(text)["input_ids"]
            b = slow(text)["input_ids"]
            f.write("%s\t%s\t%s\n" % (name, " ".join(map(str, a)), " ".join(map(str, b))))


def ids_truncated(vocab, out):
    from transformers import BertTokenizer
    fast = BertTokenizer(vocab=vocab)
    reviews_ = list(reviews("test"))
    with open(out, "w") as f:
        for i, (name, text) in enumerate(reviews_):
            a = fast(text, truncation=True, max_length=128)
            pair = reviews_[(i + 1) % len(reviews_)][1]
            b = fast(text, pair, truncation="longest_first", max_length=200)
            f.write("%s\t%s\t%s\t%s\n" % (name, " ".join(map(str, a["input_ids"])), " ".join(map(str, b["input_ids"])),
                                         " ".join(map(str, b["token_type_ids"]))))


def cases(vocab, src, out):
    fast, slow = tokenizers(vocab)
    lines = json.load(open(src, encoding="utf-8"))
    recs = []
    for i, line in enumerate(lines):
        for max_len in (0, 8):
            kw = dict(truncation=True, max_length=max_len) if max_len else {}
            e = fast(line, **kw)
            recs.append(dict(a=line, max_length=max_len, ids=e["input_ids"], types=e["token_type_ids"],
                             tokens=fast.convert_ids_to_tokens(e["input_ids"]),
                             legacy=slow(line, **kw)["input_ids"]))
        if i + 1 < len(lines):
            for max_len in (0, 9, 12):
                kw = dict(truncation="longest_first", max_length=max_len) if max_len else {}
                e = fast(line, lines[i + 1], **kw)
                recs.append(dict(a=line, b=lines[i + 1], max_length=max_len, ids=e["input_ids"], types=e["token_type_ids"],
                                 tokens=fast.convert_ids_to_tokens(e["input_ids"]),
                                 legacy=slow(line, lines[i + 1], **kw)["input_ids"]))
    with open(out, "w", encoding="utf-8") as f:
        json.dump(recs, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "vocab":
        train_vocab(sys.argv[2])
    elif cmd == "ids":
        ids(sys.argv[2], sys.argv[3])
    elif cmd == "truncated":
        ids_truncated(sys.argv[2], sys.argv[3])
    elif cmd == "cases":
        cases(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
