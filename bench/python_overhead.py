#!/usr/bin/env python3
"""What lathe's Python binding adds to a run: InferenceSession.run from Python beside the same
model timed by `lathe bench` (C++, no Python) and by ONNX Runtime (node), in the same run.

    cmake --build build                                                  # builds build/python/lathe
    bash scripts/install-model-deps.sh && /usr/bin/python3 scripts/make-test-models.py --large
    /usr/bin/python3 bench/python_overhead.py [--threads 2] [--runs 200] [CASE_DIR...]
        # default: a tiny model (tests/onnx/models/mlp_dynamic_batch) and a large one (build/models/resnet18)

For each case folder (model.onnx + test_data_set_0) it times, in interleaved rounds (each side
keeping its best median, as the VM's speed drifts): `lathe bench --json` on the folder's inputs;
lathe.InferenceSession.run on the same arrays from this interpreter (inputs converted, outputs
returned as numpy arrays, every call timed with perf_counter); and `node scripts/ort-reference.js
--time`. The overhead column is the Python median minus lathe bench's: what the binding costs a
run (should be microseconds, whatever the model's size).
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from onnx_models import clean_env, last_json  # noqa: E402

import lathe  # noqa: E402


def inputs_of(case):
    files = sorted(glob.glob(os.path.join(case, "test_data_set_0", "input_*.pb")))
    return dict(lathe.load_tensor_pb(f) for f in files), files


def lathe_bench(binary, case, files, names, threads, runs):
    feeds = [f"--input={n}={f}" for n, f in zip(names, files)]
    out = subprocess.run([binary, "bench", os.path.join(case, "model.onnx"), "--iters", str(runs), "--json", "--threads", str(threads)] + feeds,
                         capture_output=True, text=True, env=clean_env())
    return last_json(out.stdout)["median_ms"] if out.returncode == 0 else None


def ort_node(case, threads, runs):
    modules = os.path.abspath(os.environ.get("ORT_NODE_MODULES", os.path.join(ROOT, "build/ort/node_modules")))
    out = subprocess.run(["node", os.path.join(ROOT, "scripts/ort-reference.js"), "--time", str(runs), "--threads", str(threads), case],
                         capture_output=True, text=True, env=dict(os.environ, NODE_PATH=modules))
    return last_json(out.stdout)["median_ms"] if out.returncode == 0 else None


def python_run(sess, feed, runs):
    sess.run(None, feed)  # the first run prepares (compiles) for these sizes
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sess.run(None, feed)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=[os.path.join(ROOT, "tests/onnx/models/mlp_dynamic_batch"), os.path.join(ROOT, "build/models/resnet18")])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=200, help="timed runs per side and round (a model over 5 ms gets 20)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build/tools/lathe"))
    a = ap.parse_args()
    for k in set(os.environ) - set(clean_env()):  # BEAM, NOOPT, a trace ...: not for this process's lathe either
        del os.environ[k]
    print(f"# lathe {lathe.__version__}, {a.threads} threads, medians in ms (best of {a.rounds} interleaved rounds)")
    print(f"{'model':22} {'lathe bench':>11} {'Python run':>10} {'overhead us':>11} {'ORT (node)':>10} {'Python/ORT':>10}")
    for case in a.cases:
        name = os.path.basename(case.rstrip("/"))
        if not os.path.exists(os.path.join(case, "model.onnx")):
            print(f"{name:22} missing (scripts/make-test-models.py --large makes build/models)")
            continue
        feed, files = inputs_of(case)
        sess = lathe.InferenceSession(os.path.join(case, "model.onnx"), threads=a.threads)
        probe = python_run(sess, feed, 3)
        runs = a.runs if probe < 5 else max(20, a.runs // 10)
        bench, py, ort = [], [], []
        for _ in range(a.rounds):
            bench.append(lathe_bench(a.lathe, case, files, list(feed), a.threads, runs))
            py.append(python_run(sess, feed, runs))
            ort.append(ort_node(case, a.threads, runs))
        best = lambda xs: min((x for x in xs if x is not None), default=None)  # noqa: E731
        b, p, o = best(bench), best(py), best(ort)
        fmt = lambda x, w: f"{x:{w}.3f}" if x is not None else f"{'n/a':>{w}}"  # noqa: E731
        over = f"{(p - b) * 1e3:11.1f}" if b is not None else f"{'n/a':>11}"
        ratio = f"{p / o:10.2f}" if o else f"{'n/a':>10}"
        print(f"{name:22} {fmt(b, 11)} {fmt(p, 10)} {over} {fmt(o, 10)} {ratio}")


if __name__ == "__main__":
    main()
