"""The book's chapters 4-6 in Keras 3 on TensorFlow 2.21 (CPU), with
Plumb's recipes; see bench/book_torch.py for the recipes, which this
script follows layer for layer: Glorot-uniform kernels, zero biases,
embeddings uniform in +-0.05 (Keras' defaults), Adagrad with the
accumulator from 0 and epsilon 1e-6, L2 8e-4 on every word2vec parameter
(as a penalty 4e-4*|w|^2, whose gradient is Fluid's 8e-4*w), padded and
masked reviews and titles. Keras' LSTM has its own input kernel (see
book_torch.py). Threads: --threads for both of TF's pools.

    /work/main/.venv/bin/python bench/book_keras.py word2vec --data /work/shared/data --log runs/w2v-tf
"""
import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
import tensorflow as tf
from keras import ops as K

import book_data
from book_torch import RECIPES, batches, by_length, speed_batch
from meter import run_epochs
from runlog import RunLog

L = tf.keras.layers


def word2vec(vocab):
    reg = tf.keras.regularizers.L2(4e-4)
    ctx = tf.keras.Input((4,), dtype="int64")
    e = L.Embedding(vocab, 32, embeddings_regularizer=reg)(ctx)
    h = L.Dense(256, activation="sigmoid", kernel_regularizer=reg, bias_regularizer=reg)(L.Reshape((128,))(e))
    return tf.keras.Model(ctx, L.Dense(vocab, kernel_regularizer=reg, bias_regularizer=reg)(h))


def recommender(s):
    ins = {k: tf.keras.Input((), dtype="int64", name=k) for k in ("user", "gender", "age", "job", "movie")}
    for k in ("genres", "title"):
        ins[k] = tf.keras.Input((None,), dtype="int64", name=k)
        ins[k + "_mask"] = tf.keras.Input((None,), dtype="float32", name=k + "_mask")
    dims = {"user": (s["users"], 32), "gender": (2, 16), "age": (7, 16), "job": (s["jobs"], 16), "movie": (s["movies"], 32)}
    f = {k: L.Dense(d)(L.Embedding(n, d)(ins[k])) for k, (n, d) in dims.items()}
    user = L.Dense(200, activation="tanh")(L.Concatenate()([f["user"], f["gender"], f["age"], f["job"]]))
    gm = K.expand_dims(ins["genres_mask"], -1)
    genres = K.sum(L.Embedding(s["genres"], 32)(ins["genres"]) * gm, 1)
    tm = K.expand_dims(ins["title_mask"], -1)
    conv = L.Conv1D(32, 3, padding="same", activation="tanh")(L.Embedding(s["titles"], 32)(ins["title"]) * tm)
    title = K.sum(conv * tm, 1)
    movie = L.Dense(200, activation="tanh")(L.Concatenate()([f["movie"], genres, title]))
    cos = K.sum(user * movie, 1) / K.sqrt(K.sum(user * user, 1) * K.sum(movie * movie, 1))
    return tf.keras.Model(ins, 5 * cos)


def text_cnn(vocab):
    x, m = tf.keras.Input((None,), dtype="int64"), tf.keras.Input((None,), dtype="float32")
    e = L.Embedding(vocab, 128)(x) * K.expand_dims(m, -1)
    neg = K.expand_dims((1 - m) * -1e30, -1)
    pooled = []
    for w, pads in ((3, (1, 1)), (4, (2, 1))):
        y = L.Conv1D(128, w, activation="tanh")(L.ZeroPadding1D(pads)(e))
        pooled.append(K.max(y + neg, 1))
    return tf.keras.Model([x, m], L.Dense(2)(L.Concatenate()(pooled)))


def stacked_lstm(vocab):
    x, m = tf.keras.Input((None,), dtype="int64"), tf.keras.Input((None,), dtype="float32")
    mask = K.greater(m, 0)
    h = L.Embedding(vocab, 128)(x)
    for i in range(3):
        f = L.Dense(512)(h)
        y = L.LSTM(128, return_sequences=True, go_backwards=(i == 1))(f, mask=mask)
        if i == 1:  # go_backwards returns the steps in the order it ran them, last first (as Keras' Bidirectional flips them back)
            y = K.flip(y, 1)
        h = L.Concatenate()([f, y])
    neg = K.expand_dims((1 - m) * -1e30, -1)
    return tf.keras.Model([x, m], L.Dense(2)(L.Concatenate()([K.max(f + neg, 1), K.max(y + neg, 1)])))


def call(net, x, training):
    """Calls net on the input tuple x: one input as it is, several as a list."""
    return net(x[0] if len(x) == 1 else list(x), training=training)


def speed(a):
    """Times --speed training steps after 3 warm-up steps (book_torch.speed)."""
    vocab, (x, y), words = speed_batch(a.chapter, np.random.default_rng(1))
    if a.chapter == "word2vec":
        net, lr = word2vec(vocab), 3e-3
        inputs = (tf.constant(x),)
    else:
        net, lr = (text_cnn(vocab) if a.chapter == "cnn" else stacked_lstm(vocab)), 2e-3
        xp, m = book_data.pad(x)
        inputs = (tf.constant(xp), tf.constant(m))
    opt = tf.keras.optimizers.Adagrad(lr, initial_accumulator_value=0.0, epsilon=1e-6)
    t = tf.constant(y)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(t, call(net, inputs, True), from_logits=True))
            total = loss + tf.add_n(net.losses) if net.losses else loss
        opt.apply_gradients(zip(tape.gradient(total, net.trainable_variables), net.trainable_variables))
        return loss

    for i in range(3 + a.speed):
        if i == 3:
            start = time.perf_counter()
        float(step())
    dur = time.perf_counter() - start
    n = len(y) * a.speed
    print(f"tensorflow {a.chapter} speed: {n / dur:.1f} samples/s, {words * a.speed / dur:.0f} words/s, {a.speed} steps in {dur:.2f} s, "
          f"threads {a.threads}, peak rss {book_data.peak_rss_mib():.0f} MiB", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("chapter", choices=sorted(RECIPES))
    p.add_argument("--epochs", type=int)
    p.add_argument("--batch", type=int)
    p.add_argument("--lr", type=float)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--test-limit", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--data", default=os.environ.get("PLUMB_DATA", "/work/shared/data"))
    p.add_argument("--log")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--speed", type=int, default=0, help="only time N steps on random data of the recipe's shapes (word2vec, cnn, lstm)")
    p.add_argument("--bucket", type=int, default=0, help="cnn, lstm: sort each run of N batches by review length (0: plain shuffle)")
    a = p.parse_args()
    epochs, batch, lr = RECIPES[a.chapter]
    a.epochs, a.batch, a.lr = a.epochs or epochs, a.batch or batch, a.lr or lr
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(a.threads)
    tf.keras.utils.set_random_seed(a.seed)
    if a.speed:
        return speed(a)
    if not a.log:
        p.error("--log DIR is required for a training run")

    if a.chapter == "word2vec":
        vocab, d = book_data.ptb(a.data)
        net = word2vec(vocab)
        opt = tf.keras.optimizers.Adagrad(a.lr, initial_accumulator_value=0.0, epsilon=1e-6)
        train_n = len(d["train"][1])
        feed = lambda s, idx: ((tf.constant(d[s][0][idx]),), tf.constant(d[s][1][idx]))
        loss_fn = lambda y, out: tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, out, from_logits=True))

        def evaluate():
            out = {}
            for s in ("valid", "test"):
                n = len(d[s][1])
                tot = sum(float(loss_fn(*reversed(eval_batch(s, np.arange(i, min(i + 1000, n)))))) * (min(i + 1000, n) - i)
                          for i in range(0, n, 1000))
                out[s + "_cost"] = tot / n
            return out
        name = "word2vec"
    elif a.chapter == "recommender":
        sizes, d = book_data.movielens(a.data)
        net = recommender(sizes)
        opt = tf.keras.optimizers.SGD(a.lr)
        train_n = len(d["train"]["target"])

        def feed(s, idx):
            b = {k: tf.constant(d[s][k][idx]) for k in ("user", "gender", "age", "job", "movie")}
            for k in ("genres", "title"):
                x, m = book_data.pad([d[s][k][i] for i in idx])
                b[k], b[k + "_mask"] = tf.constant(x), tf.constant(m)
            return (b,), tf.constant(d[s]["target"][idx])
        loss_fn = lambda y, out: tf.reduce_mean(tf.square(out - y))

        def evaluate():
            n = len(d["test"]["target"])
            tot = sum(float(loss_fn(*reversed(eval_batch("test", np.arange(i, min(i + 1000, n)))))) * (min(i + 1000, n) - i)
                      for i in range(0, n, 1000))
            return {"mse": tot / n, "rmse_stars": (tot / n) ** 0.5 / 2}
        name = "recommender"
    else:
        vocab, d = book_data.imdb(a.data)
        net = text_cnn(vocab) if a.chapter == "cnn" else stacked_lstm(vocab)
        opt = tf.keras.optimizers.Adagrad(a.lr, initial_accumulator_value=0.0, epsilon=1e-6)
        rng = np.random.default_rng(a.seed)
        for s, lim in (("train", a.limit), ("test", a.test_limit)):
            if lim:
                keep = rng.permutation(len(d[s][1]))[:lim]
                d[s] = ([d[s][0][i] for i in keep], d[s][1][keep])
        train_n = len(d["train"][1])

        def feed(s, idx):
            x, m = book_data.pad([d[s][0][i] for i in idx])
            return (tf.constant(x), tf.constant(m)), tf.constant(d[s][1][idx])
        loss_fn = lambda y, out: tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, out, from_logits=True))

        def evaluate():
            n, correct, tot = len(d["test"][1]), 0, 0.0
            order = by_length(d["test"][0])
            for i in range(0, n, a.batch):  # padded batches of the training size bound the memory of the longest reviews
                out, y = eval_batch("test", order[i:i + a.batch])
                tot += float(loss_fn(y, out)) * len(y)
                correct += int(tf.reduce_sum(tf.cast(tf.argmax(out, 1) == y, tf.int32)))
            return {"accuracy": correct / n, "loss": tot / n}
        name = "sentiment-" + a.chapter

    def eval_batch(s, idx):
        x, y = feed(s, idx)
        return call(net, x, False), y

    @tf.function(reduce_retracing=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, call(net, x, True))
            total = loss + tf.add_n(net.losses) if net.losses else loss
        opt.apply_gradients(zip(tape.gradient(total, net.trainable_variables), net.trainable_variables))
        return loss

    if a.limit:
        train_n = min(train_n, a.limit)
        name += f"-limit{a.limit}"
    bucket = ([len(q) for q in d["train"][0]], a.bucket) if a.chapter in ("cnn", "lstm") and a.bucket else ()
    if bucket:
        name += f"-bucket{a.bucket}"
    log = RunLog(a.log, "tensorflow", name, dict(chapter=a.chapter, epochs=a.epochs, batch=a.batch, lr=a.lr, seed=a.seed,
                                                   train_size=train_n, tensorflow=tf.__version__, threads=a.threads))
    run_epochs(log, "tensorflow", name, a.epochs, a.lr, a.log_every, lambda epoch: batches(train_n, a.batch, a.seed, epoch, *bucket),
               lambda idx: float(train_step(*feed("train", idx))), evaluate)


if __name__ == "__main__":
    main()
