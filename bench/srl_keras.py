"""The PaddlePaddle book's SRL model (db_lstm + CRF) in Keras 3 on
TensorFlow, with the recipe of `plumb train srl` and bench/srl_torch.py
(see there); the data and chunk scoring are bench/srl_data.py's. Keras'
LSTM uses one activation for the candidate and the cell output, so the
book's LSTM (relu candidate, sigmoid cell, peepholes) is a custom cell
under keras.layers.RNN; the CRF is written out (TF has none built in),
its forward algorithm folded over the steps, so the training step and the
scoring each run as one tf.function traced once for every batch shape.

    python bench/srl_keras.py --data ../shared/data --log out/srl/tensorflow
"""
import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srl_data import add_args, chunks, load, prf, run  # noqa: E402


class BookLSTMCell(keras.layers.Layer):
    """Gate order i, f, c, o; relu candidate, sigmoid gates and cell
    output, peepholes; an input kernel, as Plumb's."""

    def __init__(self, units, **kw):
        super().__init__(**kw)
        self.units = units
        self.state_size = [units, units]
        self.output_size = units

    def build(self, input_shape):
        u = self.units
        self.w = self.add_weight(shape=(input_shape[-1], 4 * u), initializer="glorot_uniform")
        self.u = self.add_weight(shape=(u, 4 * u), initializer="orthogonal")
        self.b = self.add_weight(shape=(4 * u,), initializer="zeros")
        self.p = self.add_weight(shape=(3 * u,), initializer="zeros")

    def call(self, x, states):
        h, c = states
        z = tf.matmul(x, self.w) + tf.matmul(h, self.u) + self.b
        zi, zf, zg, zo = tf.split(z, 4, axis=1)
        pi, pf, po = tf.split(self.p, 3)
        i = tf.sigmoid(zi + pi * c)
        f = tf.sigmoid(zf + pf * c)
        cn = f * c + i * tf.nn.relu(zg)
        o = tf.sigmoid(zo + po * cn)
        hn = o * tf.sigmoid(cn)
        return hn, [hn, cn]


class DBLSTM(keras.Model):
    def __init__(self, nwords, nverbs, nlabels, word_dim=32, mark_dim=5, hidden=512, depth=8):
        super().__init__()
        self.word = keras.layers.Embedding(nwords, word_dim, embeddings_initializer="glorot_uniform")
        self.verb = keras.layers.Embedding(nverbs, word_dim, embeddings_initializer="glorot_uniform")
        self.mark = keras.layers.Embedding(2, mark_dim, embeddings_initializer="glorot_uniform")
        self.inp = [keras.layers.Dense(hidden, activation="tanh") for _ in range(8)]
        self.mix = [(keras.layers.Dense(hidden, activation="tanh"), keras.layers.Dense(hidden, activation="tanh")) for _ in range(depth - 1)]
        self.lstm = [keras.layers.RNN(BookLSTMCell(hidden // 4), return_sequences=True, go_backwards=(i % 2 == 1)) for i in range(depth)]
        self.out = (keras.layers.Dense(nlabels, activation="tanh"), keras.layers.Dense(nlabels, activation="tanh"))
        k = nlabels
        self.trans = self.add_weight(shape=(k, k), initializer="glorot_uniform", name="crf_transitions")
        self.start = self.add_weight(shape=(k,), initializer="zeros", name="crf_start")
        self.stop = self.add_weight(shape=(k,), initializer="zeros", name="crf_stop")

    def emissions(self, word, ctx, verb, mark, mask):
        t = tf.shape(word)[1]
        tile = lambda e: tf.tile(e[:, None, :], [1, t, 1])
        embs = [self.word(word)] + [tile(self.word(ctx[:, j])) for j in range(5)] + [tile(self.verb(verb)), self.mark(mark)]
        mix = tf.add_n([l(e) for l, e in zip(self.inp, embs)])
        out = None
        for i, lstm in enumerate(self.lstm):
            if i > 0:
                a, b = self.mix[i - 1]
                mix = a(mix) + b(out)
            out = lstm(mix, mask=mask)
            if i % 2 == 1:  # go_backwards returns the steps in the order it ran them: reversed
                out = tf.reverse(out, [1])
        return self.out[0](mix) + self.out[1](out)

    def nll(self, em, tags, lengths):
        """Negative log-likelihood per sequence: the forward algorithm folded
        over the steps (tf.foldl, so one trace serves every length), minus the
        gold path's score."""
        t = tf.shape(em)[1]
        live = tf.sequence_mask(lengths, t)
        emt, livet = tf.transpose(em, [1, 0, 2]), tf.transpose(live)

        def forward(alpha, x):
            e, on = x
            return tf.where(on[:, None], tf.reduce_logsumexp(alpha[:, :, None] + self.trans, 1) + e, alpha)

        alpha = tf.foldl(forward, (emt[1:], livet[1:]), initializer=self.start + emt[0])
        on = tf.cast(live, em.dtype)
        emit = tf.reduce_sum(tf.gather(em, tags, batch_dims=2) * on, 1)
        moves = tf.reduce_sum(tf.gather_nd(self.trans, tf.stack([tags[:, :-1], tags[:, 1:]], -1)) * on[:, 1:], 1)
        last = tf.gather(tags, lengths - 1, batch_dims=1)
        score = tf.gather(self.start, tags[:, 0]) + emit + moves + tf.gather(self.stop, last)
        return tf.reduce_logsumexp(alpha + self.stop, 1) - score


# The batch as batchify gives it: word, ctx, verb, mark, mask, label, lengths.
SIGNATURE = [tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None, 5], tf.int32), tf.TensorSpec([None], tf.int32),
             tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None, None], tf.bool), tf.TensorSpec([None, None], tf.int32),
             tf.TensorSpec([None], tf.int32)]


def viterbi(e, trans, start, stop):
    d, back = start + e[0], []
    for s in range(1, len(e)):
        cand = d[:, None] + trans
        back.append(cand.argmax(0))
        d = cand.max(0) + e[s]
    best = [int((d + stop).argmax())]
    for arg in reversed(back):
        best.append(int(arg[best[-1]]))
    return best[::-1]


def batchify(exs):
    t = max(len(e[0]) for e in exs)
    word, mark, label = (np.zeros((len(exs), t), np.int32) for _ in range(3))
    for q, (w, _, _, m, l) in enumerate(exs):
        word[q, : len(w)], mark[q, : len(w)], label[q, : len(w)] = w, m, l
    lengths = np.array([len(e[0]) for e in exs], np.int32)
    mask = np.arange(t)[None, :] < lengths[:, None]
    return word, np.array([e[1] for e in exs], np.int32), np.array([e[2] for e in exs], np.int32), mark, mask, label, lengths


def evaluate(model, exs, o_id, verb_type, batch=100):
    inferred = labeled = correct = 0
    cost = 0.0
    tr, st, sp = model.trans.numpy(), model.start.numpy(), model.stop.numpy()
    for s in range(0, len(exs), batch):
        word, ctx, verb, mark, mask, label, lengths = batchify(exs[s : s + batch])
        em, nll = model.scored(word, ctx, verb, mark, mask, label, lengths)
        cost += float(tf.reduce_sum(nll))
        em = em.numpy()
        for q in range(len(lengths)):
            path = viterbi(em[q, : lengths[q]], tr, st, sp)
            gold = label[q, : lengths[q]].tolist()
            pc = {c for c in chunks(path, o_id) if c[2] != verb_type}
            lc = {c for c in chunks(gold, o_id) if c[2] != verb_type}
            inferred, labeled, correct = inferred + len(pc), labeled + len(lc), correct + len(pc & lc)
    return (*prf(inferred, labeled, correct), cost / len(exs))


def main():
    ap = argparse.ArgumentParser()
    add_args(ap)
    a = ap.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(a.threads)
    keras.utils.set_random_seed(a.seed)
    train, val, words, verbs, labels = load(a.data, a.heldout, a.seed, a.limit)
    model = DBLSTM(len(words), len(verbs), len(labels))
    model.emissions(*batchify(train[:1])[:5])  # build
    crf_vars = [model.trans, model.start, model.stop]
    rest = [v for v in model.trainable_variables if all(v is not c for c in crf_vars)]
    opt, opt_crf = keras.optimizers.SGD(a.lr), keras.optimizers.SGD(a.lr * a.crf_lr)

    @tf.function(input_signature=SIGNATURE)
    def train_step(word, ctx, verb, mark, mask, label, lengths):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model.nll(model.emissions(word, ctx, verb, mark, mask), label, lengths))
        grads = tape.gradient(loss, rest + crf_vars)
        opt.apply_gradients(zip(grads[: len(rest)], rest))
        opt_crf.apply_gradients(zip(grads[len(rest) :], crf_vars))
        return loss

    @tf.function(input_signature=SIGNATURE)
    def scored(word, ctx, verb, mark, mask, label, lengths):
        em = model.emissions(word, ctx, verb, mark, mask)
        return em, model.nll(em, label, lengths)

    model.scored = scored

    def step(bt):
        return float(train_step(*batchify(bt)))
    run(a, "tensorflow", train, val, words, labels, step, lambda val, o_id, verb_type: evaluate(model, val, o_id, verb_type))


if __name__ == "__main__":
    main()
