"""Run logs in Plumb's format (package runlog): JSON lines in DIR/log.jsonl,
a "run" record, then "step" and "epoch" records. The Keras and PyTorch
recipes in bench/ write them so that `plumb compare`, `plumb plot` and
`plumb kpi` read their runs beside Plumb's.
"""
import json
import os
import resource
import time


def rss():
    """Resident set size now and at its peak, in bytes (Linux)."""
    now = peak = 0
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    now = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) * 1024
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return now, peak


class RunLog:
    def __init__(self, directory, framework, model, config):
        os.makedirs(directory, exist_ok=True)
        self.f = open(os.path.join(directory, "log.jsonl"), "w")
        self.began = time.perf_counter()
        self.write(kind="run", framework=framework, model=model, config=config)

    def write(self, **record):
        record.setdefault("wall_s", time.perf_counter() - self.began)
        now, peak = rss()
        record.setdefault("rss_bytes", now)
        record.setdefault("peak_rss_bytes", peak)
        self.f.write(json.dumps(record) + "\n")
        self.f.flush()

    def close(self):
        self.f.close()


def model_name(model, limit, epochs, batch):
    """The recipe's name, as plumb train mnist names it."""
    name = "mnist-" + model
    if limit > 0:
        name += f"-limit{limit}"
    if epochs != 1:
        name += f"-epochs{epochs}"
    if batch != 64:
        name += f"-batch{batch}"
    return name


def load_mnist(directory, limit):
    """MNIST from the IDX files (gzip) in directory, pixels scaled to [0, 1]
    as Plumb's loader does, images [N, 1, 28, 28]."""
    import gzip

    import numpy as np

    def idx(name, offset):
        with gzip.open(os.path.join(directory, name)) as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)

    x_train = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28).astype("float32") / 255
    y_train = idx("train-labels-idx1-ubyte.gz", 8).astype("int64")
    x_test = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28).astype("float32") / 255
    y_test = idx("t10k-labels-idx1-ubyte.gz", 8).astype("int64")
    if limit > 0:
        x_train, y_train = x_train[:limit], y_train[:limit]
    return x_train, y_train, x_test, y_test


def add_args(p):
    p.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=0, help="train on the first N images only")
    p.add_argument("--data", default="data/mnist/embedded")
    p.add_argument("--log", required=True, help="run directory to write")
    p.add_argument("--log-every", type=int, default=50)


def order(seed, epoch, n):
    """The training order of an epoch: shared by the Keras and PyTorch
    recipes (numpy's generator; Plumb's Go generator gives another)."""
    import numpy as np

    return np.random.default_rng([seed, epoch]).permutation(n)
