"""The PaddlePaddle book's machine translation model in Keras 3 on
TensorFlow, with the recipe of `plumb train translate` and
bench/translate_torch.py (see there); the data is bench/translate_data.py's.
The teacher-forced decoder loop runs in a tf.function over a symbolic
number of steps; the batched beam search runs eagerly.

    python bench/translate_keras.py --data ../shared/data --log out/translate/tensorflow
"""
import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import sacrebleu  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runlog import RunLog  # noqa: E402
from meter import Meter  # noqa: E402
from translate_data import BOS, EOS, add_args, batches, encode, load, pad, teacher  # noqa: E402


class Seq2Seq(keras.Model):
    def __init__(self, nsrc, ntrg, emb=256, hidden=256, attn=256, dropout=0.3):
        super().__init__()
        self.drop = keras.layers.Dropout(dropout)
        self.src_emb = keras.layers.Embedding(nsrc, emb, embeddings_initializer=keras.initializers.RandomNormal(stddev=1.0))
        self.encoder = keras.layers.Bidirectional(keras.layers.GRU(hidden, return_sequences=True, return_state=True, reset_after=True))
        self.boot = keras.layers.Dense(hidden, activation="tanh")
        self.trg_emb = keras.layers.Embedding(ntrg, emb, embeddings_initializer=keras.initializers.RandomNormal(stddev=1.0))
        self.wq = keras.layers.Dense(attn, use_bias=False)
        self.wm = keras.layers.Dense(attn, use_bias=False)
        self.v = keras.layers.Dense(1, use_bias=False)
        self.cell = keras.layers.GRUCell(hidden, reset_after=True)
        self.out = keras.layers.Dense(ntrg)

    def encode(self, src, lengths, training=False):
        mask = tf.sequence_mask(lengths, tf.shape(src)[1])
        enc, _, h_bw = self.encoder(self.drop(self.src_emb(src), training=training), mask=mask)
        return self.boot(h_bw), enc, self.wm(enc), mask

    def step(self, prev, h, enc, keys, mask, training=False):
        score = tf.squeeze(self.v(tf.tanh(self.wq(h)[:, None, :] + keys)), 2)
        weights = tf.nn.softmax(tf.where(mask, score, tf.fill(tf.shape(score), -1e9)), 1)
        ctx = tf.reduce_sum(weights[:, :, None] * enc, 1)
        h, _ = self.cell(tf.concat([self.drop(self.trg_emb(prev), training=training), ctx], 1), [h])
        return h

    def seq_loss(self, src, slen, trg, nxt, training=False):
        h, enc, keys, mask = self.encode(src, slen, training)
        hs = tf.TensorArray(tf.float32, size=tf.shape(trg)[1])
        for t in tf.range(tf.shape(trg)[1]):
            h = self.step(trg[:, t], h, enc, keys, mask, training)
            hs = hs.write(t, h)
        feats = self.drop(tf.reshape(tf.transpose(hs.stack(), [1, 0, 2]), [-1, tf.shape(h)[1]]), training=training)
        labels = tf.reshape(nxt, [-1])
        keep = labels >= 0
        logits = self.out(tf.boolean_mask(feats, keep))
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(tf.boolean_mask(labels, keep), logits))

    def beam(self, src, slen, k=4, max_len=50):
        b = src.shape[0]
        h, enc, keys, mask = self.encode(src, slen)
        rep = lambda x: tf.repeat(x, k, 0)
        h, enc, keys, mask = rep(h), rep(enc), rep(keys), rep(mask)
        scores = np.full((b, k), -np.inf)
        scores[:, 0] = 0
        prev = np.full(b * k, BOS, np.int64)
        toks = np.zeros((b * k, 0), np.int64)
        done = [[] for _ in range(b)]
        for _ in range(max_len):
            h = self.step(prev, h, enc, keys, mask)
            lp = tf.nn.log_softmax(self.out(h), 1).numpy()
            v = lp.shape[1]
            cand = (scores.reshape(-1, 1) + lp).reshape(b, k * v)
            idx = np.argsort(-cand, 1, kind="stable")[:, : 2 * k]
            new_scores, sel, nw = np.full((b, k), -np.inf), np.zeros((b, k), np.int64), np.full((b, k), EOS, np.int64)
            for q in range(b):
                live = 0
                for r in range(2 * k):
                    c = idx[q, r]
                    sc, par, w = cand[q, c], c // v, c % v
                    if len(done[q]) >= k or live == k or sc == -np.inf:
                        break
                    if w == EOS:
                        if r < k:
                            seq = toks[q * k + par].tolist() + [w]
                            done[q].append((sc / len(seq), seq))
                        continue
                    new_scores[q, live], sel[q, live], nw[q, live] = sc, q * k + par, w
                    live += 1
            if all(len(d) >= k for d in done) or np.isinf(new_scores).all():
                break
            sel = sel.reshape(-1)
            h = tf.gather(h, sel)
            toks, prev, scores = np.concatenate([toks[sel], nw.reshape(-1, 1)], 1), nw.reshape(-1), new_scores
        out = []
        for q in range(b):
            cands = list(done[q])
            if len(cands) < k:
                cands += [(scores[q, j] / max(toks.shape[1], 1), toks[q * k + j].tolist()) for j in range(k) if scores[q, j] > -np.inf]
            best = max(cands, key=lambda c: c[0])[1] if cands else []
            out.append([w for w in best if w != EOS])
        return out


def main():
    ap = argparse.ArgumentParser()
    add_args(ap)
    a = ap.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(a.threads)
    keras.utils.set_random_seed(a.seed)
    data, val, test, src_v, trg_v = load(a.data, a.limit, a.eval_limit)
    inv_trg = {i: w for w, i in trg_v.items()}
    model = Seq2Seq(len(src_v), len(trg_v), dropout=a.dropout)
    opt = keras.optimizers.Adam(a.lr, global_clipnorm=5)
    sig = [tf.TensorSpec([None, None], tf.int64), tf.TensorSpec([None], tf.int64), tf.TensorSpec([None, None], tf.int64), tf.TensorSpec([None, None], tf.int64)]

    @tf.function(input_signature=sig)
    def train_step(src, slen, trg, nxt):
        with tf.GradientTape() as tape:
            loss = model.seq_loss(src, slen, trg, nxt, training=True)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    eval_loss = tf.function(lambda src, slen, trg, nxt: model.seq_loss(src, slen, trg, nxt, training=False), input_signature=sig)
    log = RunLog(a.log, "tensorflow", "translate" + (f"-limit{a.limit}" if a.limit else ""),
                 {"batch": a.batch, "lr": a.lr, "seed": a.seed, "dropout": a.dropout, "train_size": len(data), "threads": a.threads})
    print(f"training on {len(data)} pairs (vocabularies {len(src_v)} en, {len(trg_v)} de)", flush=True)
    meter = Meter(log, a.log_every, a.lr, "loss", "target words")
    for epoch in range(1, a.epochs + 1):
        meter.start(epoch)
        for idx in batches(data, a.batch, a.seed, epoch):
            src, trg, nxt, slen, n = teacher([data[j] for j in idx])
            meter.add(float(train_step(src, slen, trg, nxt)), n)
        vl = vw = 0.0
        for s in range(0, len(val), 100):
            src, trg, nxt, slen, n = teacher(val[s : s + 100])
            vl, vw = vl + float(eval_loss(src, slen, trg, nxt)) * n, vw + n
        hyps = []
        for s in range(0, len(test), 64):
            src = [encode(p[0], src_v) for p in test[s : s + 64]]
            for ids in model.beam(pad(src, EOS), np.array([len(x) for x in src]), k=a.beam):
                hyps.append(" ".join(inv_trg[i] for i in ids))
        score = sacrebleu.corpus_bleu(hyps, [[" ".join(p[1]) for p in test]]).score
        meter.end(a.epochs, {"val_loss": vl / vw, "bleu": score}, f"val loss {vl / vw:.4f}, test2016 BLEU {score:.2f} (beam {a.beam})")
    log.close()


if __name__ == "__main__":
    main()
