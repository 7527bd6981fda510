#!/usr/bin/env python3
"""The Tensor API from Python: a small MLP built lazily, realized, prepared once and run at several
batch sizes without compiling again, and its result handed to torch without a copy.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/tensor_basics.py
"""
import numpy as np

import lathe
from lathe import Tensor, Variable


def main():
    rng = np.random.default_rng(0)
    w1 = Tensor(rng.standard_normal((16, 32)).astype(np.float32) * 0.1)
    w2 = Tensor(rng.standard_normal((32, 4)).astype(np.float32) * 0.1)
    images = rng.standard_normal((64, 16)).astype(np.float32)

    # Lazy: nothing runs until numpy().
    x = Tensor.from_numpy(images)  # borrows the array's memory
    probs = ((x @ w1).relu() @ w2).softmax(-1)
    print("probabilities of the first two rows:\n", probs[:2].numpy())

    # A plan for every batch size up to 64: compiled once, run at each.
    batch = Variable("batch", 1, 64)
    rows = x.shrink([(0, batch.bind(8)), None])
    plan = ((rows @ w1).relu() @ w2).softmax(-1).prepare()
    for size in (1, 8, 64):
        plan.execute({"batch": size})
        print(f"batch {size}: output {plan.numpy().shape}, rows sum to {plan.numpy().sum(1).round(4)[:3]}")
    for k in plan.execute({"batch": 64}, profile=True):
        print(f"  {k.name}: {k.ms:.3f} ms, {k.gflops:.2f} GFLOP/s")

    try:
        import torch
    except ImportError:
        return
    t = torch.from_dlpack(probs.realize())  # lathe's buffer, seen by torch
    print("argmax by torch:", t.argmax(-1)[:8].tolist(), "by lathe:", probs.argmax(-1)[:8].tolist())


if __name__ == "__main__":
    main()
