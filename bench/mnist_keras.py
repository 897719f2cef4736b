"""The book's MNIST CNN (and MLP) in Keras 3 on TensorFlow 2.21, writing a
Plumb run log, for `bash bench/compare.sh mnist`. The recipe is Plumb's
(models/mnist): conv 5×5×20 relu, max pool 2, batch norm, conv 5×5×50 relu,
max pool 2, dense 10 (VALID convolutions, Glorot-uniform kernels, zero
biases; batch norm momentum 0.99, epsilon 1e-3), softmax cross-entropy on
logits, Adam 1e-3, batch 64, test accuracy after each epoch.

    /work/main/.venv/bin/python bench/mnist_keras.py --log runs/tf [--model mlp] [--epochs N] [--limit N]
"""
import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow as tf

from runlog import RunLog, add_args, load_mnist, model_name, order


def build(name):
    L = tf.keras.layers
    if name == "mlp":
        layers = [L.Flatten(), L.Dense(128, activation="relu"), L.Dense(64, activation="relu"), L.Dense(10)]
    else:
        layers = [
            L.Permute((2, 3, 1)),  # NCHW in, NHWC for Keras' CPU convolutions
            L.Conv2D(20, 5, activation="relu"), L.MaxPooling2D(2), L.BatchNormalization(),
            L.Conv2D(50, 5, activation="relu"), L.MaxPooling2D(2),
            L.Permute((3, 1, 2)), L.Flatten(), L.Dense(10),  # flatten in NCHW order, as Plumb
        ]
    return tf.keras.Sequential([tf.keras.Input((1, 28, 28))] + layers)


class StepLog(tf.keras.callbacks.Callback):
    def __init__(self, log, epoch, every, batch, seen):
        super().__init__()
        self.log, self.epoch, self.every, self.batch, self.seen = log, epoch, every, batch, seen
        self.start = time.perf_counter()
        self.steps = 0

    def on_train_batch_end(self, b, logs=None):
        self.steps += 1
        step = int(self.model.optimizer.iterations.numpy())
        examples = self.seen + self.steps * self.batch
        if step % self.every == 0 or self.steps == self.params.get("steps"):  # and the epoch's last, as Plumb's
            rate = self.steps * self.batch / (time.perf_counter() - self.start)
            self.log.write(kind="step", epoch=self.epoch, step=step, examples=examples,
                           loss=float(logs["loss"]), samples_per_sec=rate,
                           lr=float(self.model.optimizer.learning_rate.numpy()))


def main():
    p = argparse.ArgumentParser()
    add_args(p)
    a = p.parse_args()
    tf.keras.utils.set_random_seed(a.seed)
    x_train, y_train, x_test, y_test = load_mnist(a.data, a.limit)
    model = build(a.model)
    model.compile(optimizer=tf.keras.optimizers.Adam(a.lr),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    log = RunLog(a.log, "tensorflow", model_name(a.model, a.limit, a.epochs, a.batch),
                 dict(model=a.model, epochs=a.epochs, batch=a.batch, lr=a.lr, seed=a.seed, train_size=len(x_train),
                      test_size=len(x_test), tensorflow=tf.__version__, keras=tf.keras.__version__, optimizer="adam"))
    seen = 0
    for epoch in range(1, a.epochs + 1):
        perm = order(a.seed, epoch, len(x_train))
        cb = StepLog(log, epoch, a.log_every, a.batch, seen)
        start = time.perf_counter()
        h = model.fit(x_train[perm], y_train[perm], batch_size=a.batch, epochs=1, shuffle=False, verbose=0, callbacks=[cb])
        dur = time.perf_counter() - start
        seen += len(x_train)
        test_loss, test_acc = model.evaluate(x_test, y_test, batch_size=500, verbose=0)
        step = int(model.optimizer.iterations.numpy())
        log.write(kind="epoch", epoch=epoch, step=step, examples=seen, loss=float(h.history["loss"][-1]),
                  metrics={"accuracy": float(test_acc), "loss": float(test_loss)},
                  samples_per_sec=len(x_train) / dur, lr=a.lr)
        print(f"tensorflow {a.model} epoch {epoch}: test accuracy {100 * test_acc:.2f}%, {len(x_train) / dur:.0f} samples/s")
    log.close()


if __name__ == "__main__":
    main()
