"""The PaddlePaddle book's chapter-3 models (resnet_cifar10 depth 32 and
vgg_bn_drop) in PyTorch on the CPU, for side-by-side comparison with
`plumb train cifar10`: the same layers, paddings and biases, Keras-default
initialisers (Glorot-uniform kernels, zero biases) and the book's batch
norm (Paddle's momentum 0.9, PyTorch's 0.1, epsilon 1e-5), per-channel normalisation from the
training images, Adam 1e-3 with Keras' epsilon 1e-7, batch 128, shuffled
every epoch, test accuracy after each epoch.

    CUDA_VISIBLE_DEVICES= .venv/bin/python bench/torch_cifar.py --model resnet32 \\
        --data /work/shared/data --format bin --epochs 1 --log /tmp/runs/torch-resnet32
    .venv/bin/python bench/torch_cifar.py --model resnet32 --speed 5   # samples/s of a training step

See bench/cifar_data.py for the data options.
"""
import argparse
import os
import time

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
import torch
from torch import nn

import cifar_data


def bn(ch, dims=2):
    return (nn.BatchNorm2d if dims == 2 else nn.BatchNorm1d)(ch, eps=1e-5, momentum=0.1)


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, k, stride, pad, bias):
        super().__init__(nn.Conv2d(cin, cout, k, stride, pad, bias=bias), bn(cout))


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = ConvBN(cin, cout, 3, stride, 1, False)
        self.b = ConvBN(cout, cout, 3, 1, 1, True)
        self.short = ConvBN(cin, cout, 1, stride, 0, False) if cin != cout else nn.Identity()

    def forward(self, x):
        return torch.relu(self.b(torch.relu(self.a(x))) + self.short(x))


def resnet(depth=32, width=16, classes=10):
    n = (depth - 2) // 6
    mods = [ConvBN(3, width, 3, 1, 1, False), nn.ReLU()]
    ch = width
    for s, stride in enumerate([1, 2, 2]):
        out = width << s
        for i in range(n):
            mods.append(Block(ch, out, stride if i == 0 else 1))
            ch = out
    return nn.Sequential(*mods, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(ch, classes))


def vgg(width=64, classes=10):
    mods, cin = [], 3
    for g, convs in enumerate([2, 2, 3, 3, 3]):
        out = width << min(g, 3)
        for i in range(convs):
            mods += [nn.Conv2d(cin, out, 3, 1, 1), bn(out), nn.ReLU()]
            if i < convs - 1:
                mods.append(nn.Dropout(0.3 if g == 0 else 0.4))
            cin = out
        mods.append(nn.MaxPool2d(2))
    h = 8 * width
    mods += [nn.Flatten(), nn.Dropout(0.5), nn.Linear(cin, h), bn(h, 1), nn.ReLU(), nn.Dropout(0.5),
             nn.Linear(h, h), nn.Linear(h, classes)]
    return nn.Sequential(*mods)


def keras_init(model):
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


def evaluate(model, x, y, batch=500):
    model.eval()
    correct, loss = 0, 0.0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out = model(x[i:i + batch])
            loss += nn.functional.cross_entropy(out, y[i:i + batch], reduction="sum").item()
            correct += (out.argmax(1) == y[i:i + batch]).sum().item()
    model.train()
    return correct / len(x), loss / len(x)


def main():
    p = argparse.ArgumentParser()
    cifar_data.add_args(p)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(a.seed)
    model = resnet() if a.model == "resnet32" else vgg()
    keras_init(model)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, eps=1e-7)
    lossf = nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    if a.speed:
        g = torch.Generator().manual_seed(a.seed)
        x, y = torch.randn(a.batch, 3, 32, 32, generator=g), torch.randint(0, 10, (a.batch,), generator=g)
        cifar_data.speed("pytorch", a.model, a.speed, a.batch, lambda: step(x, y))
        return
    (xt, yt), (xv, yv) = cifar_data.load(a.data, a.format)
    if a.limit:
        xt, yt = xt[:a.limit], yt[:a.limit]
    if a.test_limit:
        xv, yv = xv[:a.test_limit], yv[:a.test_limit]
    xt, xv = cifar_data.normalise(xt, xv)
    xt, yt, xv, yv = map(torch.from_numpy, (xt, yt, xv, yv))
    log = cifar_data.run_log(a, "pytorch", len(xt), len(xv))
    print(f"training {a.model} on {len(xt)} images ({a.format}), testing on {len(xv)}", flush=True)
    g = torch.Generator().manual_seed(a.seed)
    steps = examples = 0
    for epoch in range(1, a.epochs + 1):
        perm, t0, seen, total = torch.randperm(len(xt), generator=g), time.time(), 0, 0.0
        for i in range(0, len(xt), a.batch):
            idx = perm[i:i + a.batch]
            total += step(xt[idx], yt[idx]) * len(idx)
            seen += len(idx)
            steps += 1
            examples += len(idx)
            if a.log_every > 0 and steps % a.log_every == 0:
                log.write(kind="step", epoch=epoch, step=steps, examples=examples, loss=total / seen,
                          samples_per_sec=seen / (time.time() - t0), lr=a.lr)
        rate = seen / (time.time() - t0)
        acc, vloss = evaluate(model, xv, yv)
        print(f"epoch {epoch}: train loss {total / seen:.4f}, test loss {vloss:.4f}, test accuracy {100 * acc:.2f}% "
              f"({rate:.1f} samples/s)", flush=True)
        log.write(kind="epoch", epoch=epoch, step=steps, examples=examples, loss=total / seen,
                  metrics={"accuracy": acc, "loss": vloss}, samples_per_sec=rate, lr=a.lr)


if __name__ == "__main__":
    main()
