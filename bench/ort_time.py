#!/usr/bin/env python3
"""ONNX Runtime's latency through its Python package, for machines that have `onnxruntime` for
Python but no node (a GPU server's image, say): the same measurement and the same JSON line as
`node scripts/ort-reference.js --time RUNS --threads T CASE_DIR`, which bench/onnx_models.py reads.

    python3 bench/ort_time.py --time 10 --threads 2 build/models/resnet18

The session runs on the CPU provider with all graph optimisations (ONNX Runtime's default),
T intra-op threads and one inter-op thread, on the case's first data set; three warm-up runs,
then RUNS timed ones."""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from onnx_pb import read_tensor_proto  # noqa: E402


def feeds(case):
    """The first data set's inputs by name, in the order input_0.pb, input_1.pb, ..."""
    data, out, i = os.path.join(case, "test_data_set_0"), {}, 0
    while os.path.exists(os.path.join(data, f"input_{i}.pb")):
        with open(os.path.join(data, f"input_{i}.pb"), "rb") as f:
            name, arr = read_tensor_proto(f.read())
        out[name] = arr
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--time", type=int, required=True, help="timed runs")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime for Python is not installed for " + sys.executable, file=sys.stderr)
        return 2
    for case in a.cases:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = a.threads
        opts.inter_op_num_threads = 1
        t0 = time.perf_counter()
        sess = ort.InferenceSession(os.path.join(case, "model.onnx"), opts, providers=["CPUExecutionProvider"])
        load_ms = (time.perf_counter() - t0) * 1e3
        x = feeds(case)
        for _ in range(3):
            sess.run(None, x)
        times = []
        for _ in range(a.time):
            t0 = time.perf_counter()
            sess.run(None, x)
            times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        print(json.dumps({"model": os.path.basename(case.rstrip("/")), "threads": a.threads, "min_ms": times[0],
                          "median_ms": times[len(times) // 2], "max_ms": times[-1], "load_ms": load_ms}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
