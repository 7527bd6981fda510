#!/usr/bin/env python3
"""Whole ONNX models: lathe's latency beside ONNX Runtime's, measured in the same run.

    bash scripts/install-model-deps.sh                                   # PyTorch, node, onnxruntime-node
    /usr/bin/python3 scripts/make-test-models.py --large                 # ResNet-18, transformer, LSTM -> build/models
    /usr/bin/python3 bench/onnx_models.py [--threads 2] [--runs 10] [DIR...]  # default: tests/onnx/models, build/models
    /usr/bin/python3 bench/onnx_models.py --baseline OLD/build/tools/lathe      # and an older lathe, same run

For each case folder (model.onnx + test_data_set_0 inputs) it runs `lathe bench --json` (the
prepared plan on the folder's inputs) and `node scripts/ort-reference.js --time` (ONNX Runtime
on the same inputs, same thread count), and prints median latencies, the ratio lathe / ORT
(below 1: lathe is faster) and the GFLOP lathe's plan executes (its kernels' counted work). With
--baseline, another lathe binary (an earlier commit's build) is measured in the same run beside
it. The VM's speed drifts: compare ratios from one run.
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
    ap.add_argument("--baseline", help="another lathe binary to measure beside --lathe (e.g. an earlier commit's build)")
    a = ap.parse_args()
    env = dict(os.environ, LATHE_THREADS=str(a.threads))
    base_cols = f" {'base ms':>10} {'base/ORT':>9} {'base kern':>9}" if a.baseline else ""
    print(f"{'model':24} {'lathe ms':>10} {'ORT ms':>10} {'lathe/ORT':>10} {'kernels':>8} {'GFLOP':>8}{base_cols}")

    def run_lathe(binary, model, feeds):
        out = subprocess.run([binary, "bench", model, "--iters", str(a.runs), "--json"] + feeds,
                             capture_output=True, text=True, env=env)
        if out.returncode != 0:
            return None, out.stderr.strip()[:80]
        return json.loads(out.stdout.strip().splitlines()[-1]), None

    for case in cases(a.dirs):
        name = os.path.basename(case)
        # The same inputs ONNX Runtime gets (the folder's first data set), by position.
        names = model_input_names(case)
        data = os.path.join(case, "test_data_set_0")
        feeds = [f"--input={n}={os.path.join(data, f'input_{i}.pb')}" for i, n in enumerate(names)
                 if os.path.exists(os.path.join(data, f"input_{i}.pb"))]
        model = os.path.join(case, "model.onnx")
        lathe, err = run_lathe(a.lathe, model, feeds)
        if lathe is None:
            print(f"{name:24} lathe failed: {err}")
            continue
        ort = subprocess.run(["node", os.path.join(ROOT, "scripts/ort-reference.js"), "--time", str(a.runs), "--threads",
                              str(a.threads), case], capture_output=True, text=True)
        ort_ms = json.loads(ort.stdout.strip().splitlines()[-1])["median_ms"] if ort.returncode == 0 else None
        ratio = f"{lathe['median_ms'] / ort_ms:10.2f}" if ort_ms else f"{'n/a':>10}"
        ort_s = f"{ort_ms:10.3f}" if ort_ms else f"{'n/a':>10}"
        gflop = f"{lathe['gflop']:8.3f}" if "gflop" in lathe else f"{'n/a':>8}"
        extra = ""
        if a.baseline:
            base, err = run_lathe(a.baseline, model, feeds)
            if base is None:
                extra = f" baseline failed: {err}"
            else:
                bratio = f"{base['median_ms'] / ort_ms:9.2f}" if ort_ms else f"{'n/a':>9}"
                extra = f" {base['median_ms']:10.3f} {bratio} {base['kernels']:9d}"
        print(f"{name:24} {lathe['median_ms']:10.3f} {ort_s} {ratio} {lathe['kernels']:8d} {gflop}{extra}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
