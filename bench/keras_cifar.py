"""The PaddlePaddle book's chapter-3 models (resnet_cifar10 depth 32 and
vgg_bn_drop) in Keras 3 on TensorFlow 2.21, for side-by-side comparison with
`plumb train cifar10`: the same layers, paddings, biases, Keras-default
initialisers and the book's batch norm (Paddle's momentum 0.9, epsilon
1e-5), per-channel
normalisation from the training images, Adam 1e-3, batch 128, shuffled
every epoch, test accuracy after each epoch. Channels last (TensorFlow's
CPU convolutions want NHWC).

    CUDA_VISIBLE_DEVICES= .venv/bin/python bench/keras_cifar.py --model resnet32 \\
        --data /work/shared/data --format bin --epochs 1 --log /tmp/runs/keras-resnet32
    .venv/bin/python bench/keras_cifar.py --model resnet32 --speed 5   # samples/s of a training step

See bench/cifar_data.py for the data options.
"""
import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
import tensorflow as tf
import keras
from keras import layers

import cifar_data


def conv_bn(x, ch, k, stride, pad, bias, act):
    """The book's conv_bn_layer: symmetric zero padding, conv, batch norm."""
    if pad:
        x = layers.ZeroPadding2D(pad)(x)
    x = layers.Conv2D(ch, k, strides=stride, use_bias=bias)(x)
    x = layers.BatchNormalization(momentum=0.9, epsilon=1e-5)(x)
    return layers.ReLU()(x) if act else x


def resnet(depth=32, width=16, classes=10):
    n = (depth - 2) // 6
    inp = keras.Input((32, 32, 3))
    x = conv_bn(inp, width, 3, 1, 1, False, True)
    ch = width
    for s, stride in enumerate([1, 2, 2]):
        out = width << s
        for i in range(n):
            st = stride if i == 0 else 1
            y = conv_bn(x, out, 3, st, 1, False, True)
            y = conv_bn(y, out, 3, 1, 1, True, False)
            short = conv_bn(x, out, 1, st, 0, False, False) if ch != out else x
            x = layers.ReLU()(layers.Add()([y, short]))
            ch = out
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, layers.Dense(classes)(x))


def vgg(width=64, classes=10):
    inp = keras.Input((32, 32, 3))
    x = inp
    for g, convs in enumerate([2, 2, 3, 3, 3]):
        out = width << min(g, 3)
        for i in range(convs):
            x = layers.ZeroPadding2D(1)(x)
            x = layers.Conv2D(out, 3)(x)
            x = layers.ReLU()(layers.BatchNormalization(momentum=0.9, epsilon=1e-5)(x))
            if i < convs - 1:
                x = layers.Dropout(0.3 if g == 0 else 0.4)(x)
        x = layers.MaxPooling2D(2)(x)
    x = layers.Dropout(0.5)(layers.Flatten()(x))
    x = layers.Dense(8 * width)(x)
    x = layers.Dropout(0.5)(layers.ReLU()(layers.BatchNormalization(momentum=0.9, epsilon=1e-5)(x)))
    x = layers.Dense(8 * width)(x)
    return keras.Model(inp, layers.Dense(classes)(x))


class Log(keras.callbacks.Callback):
    def __init__(self, log, every, batch, n_train):
        super().__init__()
        self.log, self.every, self.batch, self.n_train = log, every, batch, n_train
        self.step, self.examples = 0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.t0, self.seen, self.epoch = time.time(), 0, epoch + 1

    def on_train_batch_end(self, b, logs=None):
        n = min(self.batch, self.n_train - self.seen)
        self.seen += n
        self.step += 1
        self.examples += n
        if self.every > 0 and self.step % self.every == 0:
            self.log.write(kind="step", epoch=self.epoch, step=self.step, examples=self.examples, loss=float(logs["loss"]),
                           samples_per_sec=self.seen / (time.time() - self.t0), lr=1e-3)

    def on_epoch_end(self, epoch, logs=None):
        rate = self.seen / self.train_seconds
        print(f"epoch {epoch + 1}: train loss {logs['loss']:.4f}, test loss {logs['val_loss']:.4f}, "
              f"test accuracy {100 * logs['val_accuracy']:.2f}% ({rate:.1f} samples/s)", flush=True)
        self.log.write(kind="epoch", epoch=epoch + 1, step=self.step, examples=self.examples, loss=float(logs["loss"]),
                       metrics={"accuracy": float(logs["val_accuracy"]), "loss": float(logs["val_loss"])},
                       samples_per_sec=rate, lr=1e-3)

    def on_test_begin(self, logs=None):
        self.train_seconds = time.time() - self.t0


def main():
    p = argparse.ArgumentParser()
    cifar_data.add_args(p)
    a = p.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    keras.utils.set_random_seed(a.seed)
    model = resnet() if a.model == "resnet32" else vgg()
    model.compile(optimizer=keras.optimizers.Adam(a.lr),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    if a.speed:
        rng = np.random.default_rng(a.seed)
        x = rng.standard_normal((a.batch, 32, 32, 3), np.float32)
        y = rng.integers(0, 10, a.batch)
        cifar_data.speed("tensorflow", a.model, a.speed, a.batch, lambda: model.train_on_batch(x, y))
        return
    (xt, yt), (xv, yv) = cifar_data.load(a.data, a.format)
    if a.limit:
        xt, yt = xt[:a.limit], yt[:a.limit]
    if a.test_limit:
        xv, yv = xv[:a.test_limit], yv[:a.test_limit]
    xt, xv = cifar_data.normalise(xt, xv)
    xt, xv = xt.transpose(0, 2, 3, 1), xv.transpose(0, 2, 3, 1)
    log = cifar_data.run_log(a, "tensorflow", len(xt), len(xv))
    print(f"training {a.model} on {len(xt)} images ({a.format}), testing on {len(xv)}", flush=True)
    model.fit(xt, yt, batch_size=a.batch, epochs=a.epochs, shuffle=True, validation_data=(xv, yv),
              validation_batch_size=500, verbose=0, callbacks=[Log(log, a.log_every, a.batch, len(xt))])


if __name__ == "__main__":
    main()
