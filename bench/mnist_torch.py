"""The book's MNIST CNN (and MLP) in PyTorch, on the CPU, writing a Plumb
run log, for `bash bench/compare.sh mnist`. The recipe is Plumb's
(models/mnist) and the Keras script's: Glorot-uniform kernels and zero
biases (PyTorch's defaults differ), batch norm with Keras' momentum and
epsilon (PyTorch momentum 0.01 is Keras' 0.99), softmax cross-entropy on
logits, Adam 1e-3 (epsilon 1e-7 as Keras), batch 64, the Keras script's
data order.

    CUDA_VISIBLE_DEVICES= /work/main/.venv/bin/python bench/mnist_torch.py --log runs/torch [--model mlp]
"""
import argparse
import os
import time

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
import torch
from torch import nn

from runlog import RunLog, add_args, load_mnist, model_name, order


def build(name):
    if name == "mlp":
        net = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    else:
        net = nn.Sequential(
            nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2), nn.BatchNorm2d(20, eps=1e-3, momentum=0.01),
            nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(800, 10),
        )
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    return net


def evaluate(net, x, y):
    net.eval()
    correct, loss = 0, 0.0
    with torch.no_grad():
        for i in range(0, len(x), 500):
            xb, yb = torch.from_numpy(x[i:i + 500]), torch.from_numpy(y[i:i + 500])
            logits = net(xb)
            loss += nn.functional.cross_entropy(logits, yb, reduction="sum").item()
            correct += (logits.argmax(1) == yb).sum().item()
    net.train()
    return correct / len(x), loss / len(x)


def main():
    p = argparse.ArgumentParser()
    add_args(p)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    x_train, y_train, x_test, y_test = load_mnist(a.data, a.limit)
    net = build(a.model)
    opt = torch.optim.Adam(net.parameters(), lr=a.lr, eps=1e-7)
    log = RunLog(a.log, "pytorch", model_name(a.model, a.limit, a.epochs, a.batch),
                 dict(model=a.model, epochs=a.epochs, batch=a.batch, lr=a.lr, seed=a.seed, train_size=len(x_train),
                      test_size=len(x_test), torch=torch.__version__, threads=torch.get_num_threads(), optimizer="adam"))
    step, seen = 0, 0
    for epoch in range(1, a.epochs + 1):
        perm = order(a.seed, epoch, len(x_train))
        xs, ys = torch.from_numpy(x_train[perm]), torch.from_numpy(y_train[perm])
        start = time.perf_counter()
        loss_sum, done = 0.0, 0
        for i in range(0, len(xs), a.batch):
            xb, yb = xs[i:i + a.batch], ys[i:i + a.batch]
            loss = nn.functional.cross_entropy(net(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            n = len(xb)
            loss_sum += loss.item() * n
            done += n
            if step % a.log_every == 0 or done == len(xs):  # and the epoch's last, as Plumb's
                log.write(kind="step", epoch=epoch, step=step, examples=seen + done, loss=loss_sum / done,
                          samples_per_sec=done / (time.perf_counter() - start), lr=a.lr)
        dur = time.perf_counter() - start
        seen += done
        acc, test_loss = evaluate(net, x_test, y_test)
        log.write(kind="epoch", epoch=epoch, step=step, examples=seen, loss=loss_sum / done,
                  metrics={"accuracy": acc, "loss": test_loss}, samples_per_sec=done / dur, lr=a.lr)
        print(f"pytorch {a.model} epoch {epoch}: test accuracy {100 * acc:.2f}%, {done / dur:.0f} samples/s")
    log.close()


if __name__ == "__main__":
    main()
