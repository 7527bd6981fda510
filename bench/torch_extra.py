#!/usr/bin/env python3
"""PyTorch on the rows of bench/compare.py that the shared anchors do not have: layernorm,
a depthwise 3x3, a 1x1 convolution, a weight laid out in channel blocks and causal attention
(shapes as in bench/lathe_bench.cpp; attention as PyTorch 1.13 models write it, Debian's torch
having no scaled_dot_product_attention). Prints JSON rows {name, lib, med_ms} like the anchors'
bench_numpy_torch.py.

    /usr/bin/python3 bench/torch_extra.py --threads 2
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F


def median_ms(fn, reps=15, min_sample=0.05):
    fn()  # warm-up
    inner = 1
    while True:  # enough calls per sample that one sample lasts min_sample seconds
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        if time.perf_counter() - t0 >= min_sample or inner >= 1 << 16:
            break
        inner *= 2
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) * 1e3 / inner)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(0)
    rows = []
    with torch.inference_mode():
        x = torch.rand(4096, 1024, generator=g)
        rows.append(("layernorm 4096x1024", median_ms(lambda: F.layer_norm(x, (1024,)))))
        img = torch.rand(8, 64, 56, 56, generator=g)
        wd, bd = torch.rand(64, 1, 3, 3, generator=g), torch.rand(64, generator=g)
        rows.append(("depthwise 8x64x56x56 3x3", median_ms(lambda: F.conv2d(img, wd, bd, padding=1, groups=64))))
        w1, b1 = torch.rand(256, 64, 1, 1, generator=g), torch.rand(256, generator=g)
        rows.append(("conv1x1 8x64x56x56 -> 256", median_ms(lambda: F.conv2d(img, w1, b1))))
        wt = torch.rand(512, 4608, generator=g)
        rows.append(("weight 512x4608 to blocks of 32", median_ms(lambda: wt.reshape(16, 32, 4608).permute(0, 2, 1).contiguous())))
        for seq in (1024, 4096):
            q, k, v = (torch.rand(1, 8, seq, 64, generator=g) for _ in range(3))
            future = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)

            def attention():
                scores = torch.matmul(q, k.transpose(-1, -2)) / 8.0
                return torch.matmul(torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1), v)
            rows.append((f"causal attention 8x{seq}x64", median_ms(attention, reps=5)))
    print(json.dumps([{"name": n, "lib": "torch", "med_ms": ms} for n, ms in rows]))


if __name__ == "__main__":
    main()
