"""The PyTorch twin of plumb train bert-mlm / bert-classify (issue 36).

transformers' BertForMaskedLM and BertForSequenceClassification with the
chapters' configuration and recipe: the vocabulary Plumb learned (read
from a Plumb checkpoint's metadata, so both tokenize the same), the
reviews as the book's IMDB reader gives them (punctuation deleted,
lower-cased, bench/book_data.py), [CLS] pieces [SEP] cut to --seq-len,
the 80/10/10 masking of 15% of the pieces (DataCollatorForLanguageModeling),
AdamW with weight decay 0.01, warm-up over the first tenth of the steps
and linear decay to 0, gradients clipped to norm 1. It writes a run log
in Plumb's format (bench/runlog.py) for plumb plot and plumb compare.

    CUDA_VISIBLE_DEVICES= .venv/bin/python bench/bert_torch.py mlm --data DIR --vocab-from mlm.safetensors --log runs/bert-mlm-torch
    CUDA_VISIBLE_DEVICES= .venv/bin/python bench/bert_torch.py classify --data DIR --vocab-from mlm.safetensors --pretrained runs/bert-mlm-torch/model --log runs/bert-cls-torch

Held-out reviews: Plumb holds out a seeded 5% of the training reviews for
the masked-token accuracy; this twin draws its own seeded 5%, so the two
held-out sets differ (same size, same distribution).
"""
import argparse
import json
import math
import os
import random
import sys
import time

# bench/kernels.py would shadow the `kernels` package that transformers
# imports: bench/ goes to the end of the path, after transformers is in.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import torch  # noqa: E402
from safetensors import safe_open  # noqa: E402
from transformers import (BertConfig, BertForMaskedLM, BertForSequenceClassification, BertTokenizer,  # noqa: E402
                          DataCollatorForLanguageModeling, get_linear_schedule_with_warmup)

sys.path.append(_here)
import book_data  # noqa: E402
from runlog import RunLog  # noqa: E402


def plumb_vocab(path, out_dir):
    """Writes the vocabulary and config of a Plumb BERT checkpoint as
    vocab.txt in out_dir; returns its path and the chapter's config."""
    with safe_open(path, "pt") as f:
        meta = f.metadata()
    tokens = json.loads(meta["plumb/wordpiece"])
    os.makedirs(out_dir, exist_ok=True)
    vocab = os.path.join(out_dir, "vocab.txt")
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")
    return vocab, json.loads(meta["plumb/config"])


def reviews(root):
    """(train, test) lists of (text, label) with the book reader's words."""
    out = {}
    for split, items in book_data.imdb_texts(root).items():
        out[split] = [(" ".join(toks), label) for toks, label in items]
    return out["train"], out["test"]


def encode(tok, texts, seq_len):
    return tok(texts, truncation=True, max_length=seq_len)["input_ids"]


def batches(n, size, rng):
    order = list(range(n))
    rng.shuffle(order)
    return [order[i:i + size] for i in range(0, n, size)]


def pad(seqs):
    t = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), t, dtype=torch.long)
    mask = torch.zeros(len(seqs), t, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    return ids, mask


def optimizer(model, lr, steps):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return opt, get_linear_schedule_with_warmup(opt, max(1, steps // 10), max(1, steps))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["mlm", "classify"])
    p.add_argument("--data", required=True)
    p.add_argument("--vocab-from", required=True, help="a Plumb bert-mlm checkpoint (its vocabulary and sizes)")
    p.add_argument("--pretrained", default="", help="classify: a directory this script saved in mlm mode")
    p.add_argument("--epochs", type=int, default=0)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=0)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--test-limit", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--log", default="")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    epochs = a.epochs or (10 if a.mode == "mlm" else 3)
    lr = a.lr or (5e-4 if a.mode == "mlm" else 1e-4)

    work = a.log or "/tmp/bert_torch"
    vocab, cc = plumb_vocab(a.vocab_from, os.path.join(work, "tokenizer"))
    tok = BertTokenizer(vocab=vocab)  # transformers 5: the tokenizers backend, lower-casing by default
    b = cc["bert"]
    config = BertConfig(vocab_size=b["vocab_size"], hidden_size=b["hidden_size"], num_hidden_layers=b["num_hidden_layers"],
                        num_attention_heads=b["num_attention_heads"], intermediate_size=b["intermediate_size"],
                        hidden_act=b["hidden_act"], max_position_embeddings=b["max_position_embeddings"],
                        type_vocab_size=b["type_vocab_size"], layer_norm_eps=b["layer_norm_eps"])
    seq_len = cc["seq_len"]

    train, test = reviews(a.data)
    rng.shuffle(train)
    if a.mode == "mlm":
        held = max(1, len(train) // 20)
        test, train = train[:held], train[held:]
    if a.limit:
        train = train[:a.limit]
    if a.test_limit:
        test = rng.sample(test, min(a.test_limit, len(test)))
    train_ids = encode(tok, [t for t, _ in train], seq_len)
    test_ids = encode(tok, [t for t, _ in test], seq_len)
    train_y = torch.tensor([y for _, y in train])
    test_y = torch.tensor([y for _, y in test])

    if a.mode == "mlm":
        model = BertForMaskedLM(config)
        collator = DataCollatorForLanguageModeling(tok, mlm_probability=0.15)
    else:
        model = (BertForSequenceClassification.from_pretrained(a.pretrained, num_labels=2) if a.pretrained
                 else BertForSequenceClassification(config))
    steps = epochs * math.ceil(len(train_ids) / a.batch)
    opt, sched = optimizer(model, lr, steps)
    log = RunLog(a.log, "pytorch", "bert-" + a.mode, dict(batch=a.batch, lr=lr, seed=a.seed, epochs=epochs,
                                                          seq_len=seq_len, vocab=config.vocab_size,
                                                          train_size=len(train_ids))) if a.log else None

    def evaluate():
        model.eval()
        correct = total = 0
        loss_sum = 0.0
        with torch.inference_mode():
            for i in range(0, len(test_ids), a.batch):
                seqs = test_ids[i:i + a.batch]
                if a.mode == "mlm":
                    torch.manual_seed(a.seed + i)  # the same masks every epoch
                    enc = collator([{"input_ids": s} for s in seqs])
                    out = model(input_ids=enc["input_ids"], attention_mask=(enc["input_ids"] != 0).long(), labels=enc["labels"])
                    sel = enc["labels"] != -100
                    pred = out.logits.argmax(-1)
                    n = int(sel.sum())
                    correct += int((pred[sel] == enc["labels"][sel]).sum())
                else:
                    ids, mask = pad(seqs)
                    y = test_y[i:i + a.batch]
                    out = model(input_ids=ids, attention_mask=mask, labels=y)
                    n = len(seqs)
                    correct += int((out.logits.argmax(-1) == y).sum())
                loss_sum += float(out.loss) * n
                total += n
        model.train()
        return correct / max(total, 1), loss_sum / max(total, 1)

    step = seen = 0
    for epoch in range(1, epochs + 1):
        model.train()
        began, loss_sum, done = time.perf_counter(), 0.0, 0
        for idx in batches(len(train_ids), a.batch, rng):
            seqs = [train_ids[i] for i in idx]
            if a.mode == "mlm":
                enc = collator([{"input_ids": s} for s in seqs])
                out = model(input_ids=enc["input_ids"], attention_mask=(enc["input_ids"] != 0).long(), labels=enc["labels"])
            else:
                ids, mask = pad(seqs)
                out = model(input_ids=ids, attention_mask=mask, labels=train_y[idx])
            opt.zero_grad()
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            done += len(idx)
            loss_sum += float(out.loss) * len(idx)
            if log and step % 20 == 0:
                log.write(kind="step", epoch=epoch, step=step, examples=seen + done, loss=loss_sum / done,
                          samples_per_sec=done / (time.perf_counter() - began), lr=sched.get_last_lr()[0])
        secs = time.perf_counter() - began
        seen += done
        acc, loss = evaluate()
        metric = "masked_accuracy" if a.mode == "mlm" else "accuracy"
        print(f"epoch {epoch}/{epochs}: train loss {loss_sum / done:.4f}, {metric} {acc:.4f}, loss {loss:.4f} ({done / secs:.1f} reviews/s)", flush=True)
        if log:
            log.write(kind="epoch", epoch=epoch, step=step, examples=seen, loss=loss_sum / done,
                      metrics={metric: acc, "loss": loss}, samples_per_sec=done / secs, lr=sched.get_last_lr()[0])
    if a.mode == "mlm" and a.log:
        model.save_pretrained(os.path.join(a.log, "model"))
    if log:
        log.close()


if __name__ == "__main__":
    main()
