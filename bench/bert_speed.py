"""Times transformers' BertModel (bert-base config, random weights) at
sequence length 128, batch 1 and 8, under torch.inference_mode, as
models/bert's BenchmarkForwardBase times Plumb's. Prints the best and the
median of ROUNDS timed calls after 2 warm-up calls.

    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_speed.py [threads] [rounds]
"""

import os
import statistics
import sys
import time

# bench/kernels.py would shadow the `kernels` package that transformers imports.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import torch
from transformers import BertConfig, BertModel


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = BertModel(BertConfig()).eval()
    for batch in (1, 8):
        ids = torch.randint(1, 30522, (batch, 128))
        with torch.inference_mode():
            for _ in range(2):
                model(input_ids=ids)
            times = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                model(input_ids=ids)
                times.append(time.perf_counter() - t0)
        print(f"torch {torch.__version__} threads {threads} batch {batch} seq 128: best {min(times) * 1e3:.1f} ms, "
              f"median {statistics.median(times) * 1e3:.1f} ms over {rounds}", flush=True)


if __name__ == "__main__":
    main()
