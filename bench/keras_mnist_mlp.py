"""The book's MNIST MLP in Keras, for side-by-side comparison with
`plumb train mnist --model mlp`: 784-128-64-10 with relu, Adam 1e-3, batch 64,
pixels scaled to [0, 1], test accuracy after each epoch.

Run from the repository root with the parity virtualenv
(parity/record/requirements.txt pins TensorFlow):

    .venv/bin/python bench/keras_mnist_mlp.py --epochs 2 --seeds 1 2 3 4

It reads the MNIST IDX files embedded in data/mnist/embedded, or --data DIR.
"""
import argparse
import gzip
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf


def idx(path, offset):
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/mnist/embedded")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--seeds", type=int, nargs="+", default=[1])
    a = p.parse_args()
    f = lambda name: os.path.join(a.data, name)
    x_train = idx(f("train-images-idx3-ubyte.gz"), 16).reshape(-1, 784).astype("float32") / 255
    y_train = idx(f("train-labels-idx1-ubyte.gz"), 8).astype("int64")
    x_test = idx(f("t10k-images-idx3-ubyte.gz"), 16).reshape(-1, 784).astype("float32") / 255
    y_test = idx(f("t10k-labels-idx1-ubyte.gz"), 8).astype("int64")
    for seed in a.seeds:
        tf.keras.utils.set_random_seed(seed)
        model = tf.keras.Sequential([
            tf.keras.Input((784,)),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        h = model.fit(x_train, y_train, batch_size=64, epochs=a.epochs,
                      validation_data=(x_test, y_test), verbose=0)
        accs = " / ".join(f"{100 * v:.2f}%" for v in h.history["val_accuracy"])
        print(f"seed {seed}: test accuracy per epoch {accs}")


if __name__ == "__main__":
    main()
