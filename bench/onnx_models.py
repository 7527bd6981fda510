#!/usr/bin/env python3
"""Whole ONNX models: lathe's latency beside ONNX Runtime's, measured in the same run.

    bash scripts/install-model-deps.sh                                   # PyTorch, node, onnxruntime-node
    /usr/bin/python3 scripts/make-test-models.py --large                 # ResNet-18, transformer, LSTM -> build/models
    /usr/bin/python3 bench/onnx_models.py [--threads 2] [--runs 10] [DIR...]  # default: tests/onnx/models, build/models

For each case folder (model.onnx + test_data_set_0 inputs) it runs `lathe bench --json` (the
prepared plan, random inputs of the model's shapes) and `node scripts/ort-reference.js --time`
(ONNX Runtime on the folder's inputs, same thread count), and prints median latencies and the
ratio lathe / ORT (below 1: lathe is faster). The VM's speed drifts: compare ratios from one run.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from onnx_pb import tensor_name  # noqa: E402


def cases(dirs):
    for d in dirs:
        if os.path.exists(os.path.join(d, "model.onnx")):
            yield d
        elif os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if os.path.exists(os.path.join(d, name, "model.onnx")):
                    yield os.path.join(d, name)


def model_input_names(case):
    """The model's input names in order: the names (field 8) of the first data set's
    TensorProto files, which the backend-test layout sets."""
    names = []
    data = os.path.join(case, "test_data_set_0")
    i = 0
    while os.path.exists(os.path.join(data, f"input_{i}.pb")):
        with open(os.path.join(data, f"input_{i}.pb"), "rb") as f:
            names.append(tensor_name(f.read()))
        i += 1
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*", default=[os.path.join(ROOT, "tests/onnx/models"), os.path.join(ROOT, "build/models")])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build/tools/lathe"))
    a = ap.parse_args()
    env = dict(os.environ, LATHE_THREADS=str(a.threads))
    print(f"{'model':24} {'lathe ms':>10} {'ORT ms':>10} {'lathe/ORT':>10} {'kernels':>8}")
    for case in cases(a.dirs):
        name = os.path.basename(case)
        # The same inputs ONNX Runtime gets (the folder's first data set), by position.
        names = model_input_names(case)
        data = os.path.join(case, "test_data_set_0")
        feeds = [f"--input={n}={os.path.join(data, f'input_{i}.pb')}" for i, n in enumerate(names)
                 if os.path.exists(os.path.join(data, f"input_{i}.pb"))]
        out = subprocess.run([a.lathe, "bench", os.path.join(case, "model.onnx"), "--iters", str(a.runs), "--json"] + feeds,
                             capture_output=True, text=True, env=env)
        if out.returncode != 0:
            print(f"{name:24} lathe failed: {out.stderr.strip()[:80]}")
            continue
        lathe = json.loads(out.stdout.strip().splitlines()[-1])
        ort = subprocess.run(["node", os.path.join(ROOT, "scripts/ort-reference.js"), "--time", str(a.runs), "--threads",
                              str(a.threads), case], capture_output=True, text=True)
        ort_ms = json.loads(ort.stdout.strip().splitlines()[-1])["median_ms"] if ort.returncode == 0 else None
        ratio = f"{lathe['median_ms'] / ort_ms:10.2f}" if ort_ms else f"{'n/a':>10}"
        ort_s = f"{ort_ms:10.3f}" if ort_ms else f"{'n/a':>10}"
        print(f"{name:24} {lathe['median_ms']:10.3f} {ort_s} {ratio} {lathe['kernels']:8d}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
