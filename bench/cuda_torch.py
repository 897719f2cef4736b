"""PyTorch on the GPU at the shapes of ops/cuda's benchmarks, for a
side-by-side comparison with Plumb's CUDA kernels in one session:

    BenchmarkLSTM               torch.nn.LSTM, batch 64, 100 steps, input and
                                hidden 512, forward and backward
    BenchmarkAttention          F.scaled_dot_product_attention, batch 8, 8 heads,
                                1024 queries and keys, head dim 64, no mask:
                                forward, and forward plus backward
    BenchmarkConv2DResNet32     F.conv2d 3x3 SAME, no bias, at batch 128 on the
                                three ResNet-32 (CIFAR-10) stages: forward and
                                the data and filter gradients

Each line gives the time per iteration and GFLOP/s counted as the Go
benchmarks count them (see their doc comments), so the two outputs line up:

    python bench/cuda_torch.py                 # float32 matmuls and convs, as Plumb's default
    python bench/cuda_torch.py --tf32          # let cuBLAS/cuDNN use TF32 tensor cores

It needs PyTorch built with CUDA and an NVIDIA GPU; CI never runs it.
Timing uses CUDA events after warm-up iterations.
"""
import argparse
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("cuda_torch.py: PyTorch is not installed (pip install torch, a CUDA build)")


def timed(step, iters, warmup):
    """Returns the mean seconds per call of step, on the GPU's clock."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        step()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def report(name, seconds, iters, flops):
    print(f"{name:<44} {iters:>6} {seconds * 1e9:>14.0f} ns/op {flops / seconds / 1e9:>10.1f} GFLOP/s")


def lstm(dev, iters, warmup):
    batch, steps, n_in, h = 64, 100, 512, 512
    g = torch.Generator(device=dev).manual_seed(1)
    net = torch.nn.LSTM(n_in, h, batch_first=True).to(dev)
    x = torch.randn(batch, steps, n_in, device=dev, generator=g, requires_grad=True)
    gout = torch.randn(batch, steps, h, device=dev, generator=g)

    def step():
        net.zero_grad(set_to_none=True)
        x.grad = None
        y, _ = net(x)
        y.backward(gout)

    flops = 3 * 2 * batch * steps * 4 * h * (n_in + h)
    report("BenchmarkLSTM", timed(step, iters, warmup), iters, flops)


def attention(dev, iters, warmup):
    batch, heads, t, d = 8, 8, 1024, 64
    g = torch.Generator(device=dev).manual_seed(2)
    q, k, v = (torch.randn(batch, heads, t, d, device=dev, generator=g, requires_grad=True) for _ in range(3))
    gout = torch.randn(batch, heads, t, d, device=dev, generator=g)
    fwd = 4 * batch * heads * t * t * d

    def forward():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v)

    def forward_backward():
        for x in (q, k, v):
            x.grad = None
        F.scaled_dot_product_attention(q, k, v).backward(gout)

    report("BenchmarkAttention/forward", timed(forward, iters, warmup), iters, fwd)
    report("BenchmarkAttention/forward_backward", timed(forward_backward, iters, warmup), iters, 3.5 * fwd)


def conv(dev, iters, warmup):
    for c, hw in ((16, 32), (32, 16), (64, 8)):
        g = torch.Generator(device=dev).manual_seed(3)
        x = torch.randn(128, c, hw, hw, device=dev, generator=g, requires_grad=True)
        w = torch.randn(c, c, 3, 3, device=dev, generator=g, requires_grad=True)

        def step():
            x.grad, w.grad = None, None
            y = F.conv2d(x, w, padding=1)
            y.backward(y.detach())  # the Go benchmark's upstream gradient is y

        flops = 3 * 2 * 128 * c * hw * hw * c * 9
        report(f"BenchmarkConv2DResNet32/c{c}_{hw}x{hw}", timed(step, iters, warmup), iters, flops)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=20, help="timed iterations per benchmark (devicecheck.sh uses 20)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--tf32", action="store_true", help="allow TF32 tensor cores in matmuls and convolutions")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit(f"cuda_torch.py: PyTorch {torch.__version__} sees no CUDA device (CPU-only build or no NVIDIA driver)")
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(dev)}, PyTorch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}, TF32 {'on' if a.tf32 else 'off'}")
    lstm(dev, a.iters, a.warmup)
    attention(dev, a.iters, a.warmup)
    conv(dev, a.iters, a.warmup)


if __name__ == "__main__":
    main()
