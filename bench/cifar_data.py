"""CIFAR-10 for the Keras and PyTorch versions of the book's chapter-3
models (bench/keras_cifar.py, bench/torch_cifar.py), read from the same
files as `plumb train cifar10`, plus the run-log writer they share.

--format bin reads the binary batches (data_batch_*.bin[.gz] and
test_batch*.bin[.gz]) from DIR or DIR/cifar10/lossless-subset; --format
jpeg reads the JPEG tree cifar10-jpeg/{train,test}/<class>/NNNN.jpg from a
.tar.gz (DIR itself, or the one .tar.gz in DIR/cifar10/jpeg-substitute),
decoded with TensorFlow's decoder (libjpeg-turbo: pixels may differ by a
grey level from Go's decoder). Images are float32 NCHW in [0, 1], labels
int64; both splits come in the readers' order (batch order, or class then
file name for the JPEG tree). Run logs go through bench/runlog.py.
"""
import glob
import gzip
import json
import os
import tarfile
import threading
import time

import numpy as np

import runlog


def _batches(files):
    xs, ys = [], []
    for f in files:
        raw = open(f, "rb").read()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        rec = np.frombuffer(raw, np.uint8).reshape(-1, 3073)
        ys.append(rec[:, 0].astype(np.int64))
        xs.append(rec[:, 1:].reshape(-1, 3, 32, 32).astype(np.float32) / 255)
    return np.concatenate(xs), np.concatenate(ys)


def _bin(d):
    sub = os.path.join(d, "cifar10", "lossless-subset")
    if os.path.isdir(sub):
        d = sub
    pick = lambda pat: sorted(glob.glob(os.path.join(d, pat + ".bin")) + glob.glob(os.path.join(d, pat + ".bin.gz")))
    return _batches(pick("data_batch_*")), _batches(pick("test_batch*"))


def _jpeg(d):
    import tensorflow as tf  # only the decoder

    if os.path.isdir(d):
        d = glob.glob(os.path.join(d, "cifar10", "jpeg-substitute", "*.tar.gz"))[0]
    splits = {"train": [], "test": []}
    with tarfile.open(d) as tar:
        for m in tar:
            parts = m.name.split("/")
            if m.isfile() and len(parts) == 4 and parts[0] == "cifar10-jpeg" and parts[1] in splits:
                splits[parts[1]].append((parts[2], parts[3], tar.extractfile(m).read()))
    out = []
    for split in ("train", "test"):
        items = sorted(splits[split])
        classes = sorted({c for c, _, _ in items})
        x = np.stack([tf.io.decode_jpeg(b, channels=3).numpy() for _, _, b in items])
        y = np.array([classes.index(c) for c, _, _ in items], np.int64)
        out.append((x.transpose(0, 3, 1, 2).astype(np.float32) / 255, y))
    return out[0], out[1]


def load(data, fmt):
    """Returns (x_train, y_train), (x_test, y_test)."""
    data = data or os.environ.get("PLUMB_DATA", "")
    if not data:
        raise SystemExit("cifar10: no data: give --data DIR or set PLUMB_DATA")
    return _bin(data) if fmt == "bin" else _jpeg(data)


def normalise(x_train, x_test):
    """Per-channel normalisation with the training images' mean and
    population standard deviation, as Plumb's cifar.ChannelNorm."""
    mean = x_train.astype(np.float64).mean(axis=(0, 2, 3), keepdims=True)
    std = x_train.astype(np.float64).std(axis=(0, 2, 3), keepdims=True)
    std[std == 0] = 1
    f = lambda x: ((x - mean) / std).astype(np.float32)
    return f(x_train), f(x_test)


def add_args(p):
    p.add_argument("--model", default="resnet32", choices=["resnet32", "vgg"])
    p.add_argument("--data", default="")
    p.add_argument("--format", default="bin", choices=["bin", "jpeg"])
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=0, help="train on the first N images only")
    p.add_argument("--test-limit", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--log", default="", help="run directory for log.jsonl (the format of plumb's runlog)")
    p.add_argument("--log-every", type=int, default=20, help="steps between step records")
    p.add_argument("--speed", type=int, default=0,
                   help="instead of training: time this many training steps on one random batch (after 2 warm-up steps) and print samples/s")


def model_name(a):
    """The recipe's name, as plumb train cifar10 names it (cifarRunModel)."""
    name = "cifar10-" + a.model
    if a.format != "bin":
        name += "-" + a.format
    for key, v, default in (("limit", a.limit, 0), ("testlimit", a.test_limit, 0), ("epochs", a.epochs, 1), ("batch", a.batch, 128)):
        if v != default:
            name += f"-{key}{v}"
    return name


class _NoLog:
    def write(self, **record):
        pass


def run_log(a, framework, n_train, n_test):
    """The run log of --log (Plumb's format, bench/runlog.py); without
    --log, one whose writes do nothing."""
    if not a.log:
        return _NoLog()
    cfg = dict(model=a.model, format=a.format, epochs=a.epochs, batch=a.batch, lr=a.lr, seed=a.seed, augment=False,
               train_size=n_train, test_size=n_test, threads=a.threads, optimizer="adam")
    return runlog.RunLog(a.log, framework, model_name(a), cfg)


def speed(framework, model, steps, batch, step):
    """Times steps calls of step() after two warm-up calls and prints
    samples per second and per CPU-second (all threads of the process)."""
    for _ in range(2):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"framework": framework, "model": model, "steps": steps, "batch": batch,
                      "samples_per_sec": steps * batch / wall, "samples_per_cpu_sec": steps * batch / cpu,
                      "threads": threading.active_count(), "peak_rss_bytes": runlog.rss()[1]}), flush=True)
