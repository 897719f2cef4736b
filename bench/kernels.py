"""kernels.py times issue 20's workloads, forward and backward in float32, in
TensorFlow or PyTorch at a fixed thread count, with the shapes of Plumb's
Go benchmarks (bench/kernels.sh runs both and prints the ratios):

  lstm       batch 32, 100 steps, 128 inputs, 256 units (graph's BenchmarkLSTMFused)
  gru        the same, reset gate after the recurrent product (BenchmarkGRUFused/reset_after=true)
  attention  batch 8, 8 heads, 1024 steps, depth 64, no mask (ops' BenchmarkAttention/flash/T1024);
             PyTorch's scaled_dot_product_attention, TensorFlow's softmax(QKᵀ/8)V
  conv       the 31 convolutions of ResNet-32 at batch 128 (ops' BenchmarkConv2DResNet32):
             TensorFlow NHWC, PyTorch channels-last
TensorFlow's steps return the losses too: else its graph optimizer prunes
what only the loss needs (the forward convolutions, attention's w·v).

It prints one line per workload: name, framework, threads, best milliseconds
per step over ROUNDS timed steps after two warm-up steps, for conv the
GFLOP/s counted as the Go benchmark counts them, and with --each every timed
step's milliseconds (bench/kernels_lstm.sh takes their median).

  python bench/kernels.py tf|torch --threads N [--rounds R] [--only lstm,gru,attention,conv] [--each]
"""
import argparse
import os
import sys
import time

B, T, IN, H = 32, 100, 128, 256
AB, AH, AT, AD = 8, 8, 1024, 64
CONV_BATCH = 128
# (repeat, in channels, size, out channels, stride), as ops' benchmark lists them.
RESNET32 = [(1, 3, 32, 16, 1), (10, 16, 32, 16, 1), (1, 16, 32, 32, 2), (9, 32, 16, 32, 1), (1, 32, 16, 64, 2), (9, 64, 8, 64, 1)]


def conv_flops():
    total = 0.0
    for times, c, h, o, stride in RESNET32:
        oh = h // stride
        passes = 2 if c == 3 else 3  # the stem computes no input gradient
        total += times * passes * 2 * CONV_BATCH * o * oh * oh * c * 9
    return total


def step_ms(step, rounds):
    """Milliseconds of each of ROUNDS timed steps, after two warm-up steps."""
    step()
    step()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        step()
        times.append(1e3 * (time.perf_counter() - t))
    return times


def torch_steps(threads):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    torch.manual_seed(1)
    steps = {}
    for name, cls in (("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU)):
        net = cls(IN, H, batch_first=True)
        x = torch.randn(B, T, IN, requires_grad=True)

        def rnn(net=net, x=x):
            out, _ = net(x)
            out.sum().backward()

        steps[name] = rnn
    q, k, v = (torch.randn(AB, AH, AT, AD, requires_grad=True) for _ in range(3))

    def attention():
        F.scaled_dot_product_attention(q, k, v).sum().backward()

    steps["attention"] = attention
    layers = []
    for times, c, h, o, stride in RESNET32:
        x = torch.randn(CONV_BATCH, c, h, h).contiguous(memory_format=torch.channels_last).requires_grad_(c != 3)
        for _ in range(times):
            conv = torch.nn.Conv2d(c, o, 3, stride=stride, padding=1).to(memory_format=torch.channels_last)
            layers.append((conv, x))

    def conv():
        for layer, x in layers:
            layer(x).sum().backward()

    steps["conv"] = conv
    return steps


def tf_steps(threads):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.random.set_seed(1)
    steps = {}
    for name, layer in (("lstm", tf.keras.layers.LSTM(H, return_sequences=True)),
                        ("gru", tf.keras.layers.GRU(H, return_sequences=True, reset_after=True))):
        x = tf.Variable(tf.random.normal([B, T, IN]))
        layer.build(x.shape)

        @tf.function
        def rnn(layer=layer, x=x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(layer(x))
            return tape.gradient(loss, [x] + layer.trainable_variables), loss

        steps[name] = rnn
    q, k, v = (tf.Variable(tf.random.normal([AB, AH, AT, AD])) for _ in range(3))

    @tf.function
    def attention():
        with tf.GradientTape() as tape:
            w = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / 8.0)
            loss = tf.reduce_sum(tf.matmul(w, v))
        return tape.gradient(loss, [q, k, v]), loss  # the loss too, or TF prunes the w·v product

    steps["attention"] = attention
    layers = []
    for times, c, h, o, stride in RESNET32:
        x = tf.Variable(tf.random.normal([CONV_BATCH, h, h, c]))
        for _ in range(times):
            w = tf.Variable(tf.random.normal([3, 3, c, o]) * 0.1)
            layers.append((x, w, stride, c != 3))

    @tf.function
    def conv():
        grads, losses = [], []
        for x, w, stride, dx in layers:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.nn.conv2d(x, w, stride, "SAME"))
            grads.append(tape.gradient(loss, [x, w] if dx else [w]))
            losses.append(loss)
        return grads, losses

    steps["conv"] = conv
    return steps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("framework", choices=["tf", "torch"])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default="lstm,gru,attention,conv")
    p.add_argument("--each", action="store_true", help="print every timed step's milliseconds after the best")
    a = p.parse_args()
    steps = (tf_steps if a.framework == "tf" else torch_steps)(a.threads)
    for name in a.only.split(","):
        times = step_ms(steps[name], a.rounds)
        ms = min(times)
        extra = f" {conv_flops() / (ms / 1e3) / 1e9:.2f}GFLOP/s" if name == "conv" else ""
        if a.each:
            extra += " " + " ".join(f"{t:.2f}" for t in times)
        print(f"{name} {a.framework} {a.threads} {ms:.2f}{extra}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
