#!/usr/bin/env python3
"""Runs an ONNX model with lathe on random inputs and prints its outputs' shapes and a timing.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/run_model.py MODEL.onnx [--size batch=4] [--runs 10]
"""
import argparse
import time

import numpy as np

import lathe


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--size", action="append", default=[], help="NAME=N: the size of a named dimension (default 1)")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    sizes = dict((k, int(v)) for k, v in (s.split("=", 1) for s in args.size))
    sess = lathe.InferenceSession(args.model)
    rng = np.random.default_rng(0)
    feed = {}
    for arg in sess.get_inputs():
        shape = [d if isinstance(d, int) else sizes.get(d, 1) if isinstance(d, str) else 1 for d in arg.shape]
        if arg.dtype.kind == "f":
            feed[arg.name] = rng.standard_normal(shape).astype(arg.dtype)
        elif arg.dtype.kind == "b":
            feed[arg.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            feed[arg.name] = rng.integers(0, 10, shape).astype(arg.dtype)
    start = time.perf_counter()
    outs = sess.run(None, feed)  # the first run compiles
    first = time.perf_counter() - start
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        outs = sess.run(None, feed)
        times.append(time.perf_counter() - start)
    for arg, out in zip(sess.get_outputs(), outs):
        print(f"{arg.name}: {out.dtype} {list(out.shape)}")
    print(f"first run (compiles) {first * 1e3:.1f} ms; median of {args.runs} runs {np.median(times) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
