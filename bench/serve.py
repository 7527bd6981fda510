#!/usr/bin/env python3
"""`lathe serve` under concurrent load: requests/s and p50/p99 latency at 1, 4 and 16 clients
(wrk, keep-alive connections), for each model with and without dynamic batching, beside the
single-stream latency `lathe bench` measures for the same model in the same run.

Each request is one row (axis 0 of a model with a dynamic batch; the model's own shape otherwise),
sent with the binary tensor data extension. A model whose inputs have no dynamic axis 0 is served
without batching only.

  /usr/bin/python3 bench/serve.py [--lathe build/tools/lathe] [--threads 2] [--duration 10]
      [MODEL.onnx ...]   (default: tests/onnx/models/mlp_dynamic_batch, cnn_dynamic_batch, and
                          torchvision's ResNet-18 exported with a dynamic batch, random weights,
                          where torchvision is installed: scripts/install-model-deps.sh)

Needs wrk (scripts/install-bench-deps.sh).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import numpy as np
import requests

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DTYPES = {"FP32": np.float32, "FP64": np.float64, "INT64": np.int64, "INT32": np.int32, "FP16": np.float16}


def single_stream_ms(lathe, model, threads):
    out = subprocess.run([lathe, "bench", model, "--iters", "50", "--json", "--threads", str(threads)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["median_ms"]


def request_body(meta):
    """One request of one row, binary inputs, JSON outputs."""
    inputs, blobs = [], []
    rng = np.random.default_rng(0)
    for i in meta["inputs"]:
        shape = [1 if d < 0 else d for d in i["shape"]]
        x = rng.standard_normal(shape).astype(DTYPES[i["datatype"]])
        inputs.append({"name": i["name"], "shape": shape, "datatype": i["datatype"], "parameters": {"binary_data_size": x.nbytes}})
        blobs.append(x.tobytes())
    header = json.dumps({"inputs": inputs}).encode()
    return header + b"".join(blobs), len(header)


def resnet18_dynamic_batch(folder):
    """torchvision's ResNet-18 (seeded random weights) exported with a dynamic batch axis, so it
    can be served with batching: FOLDER/resnet18/model.onnx."""
    import torch
    import torchvision
    path = os.path.join(folder, "resnet18", "model.onnx")
    os.makedirs(os.path.dirname(path))
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    torch.onnx.export(model, (torch.zeros(1, 3, 224, 224),), path, opset_version=13, input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    return path


def wrk(url, body_file, header_length, clients, duration):
    script = body_file + ".lua"
    with open(script, "w") as f:
        f.write(f'''wrk.method = "POST"
local f = io.open("{body_file}", "rb")
wrk.body = f:read("*all")
f:close()
wrk.headers["Inference-Header-Content-Length"] = "{header_length}"
wrk.headers["Content-Type"] = "application/octet-stream"
''')
    out = subprocess.run(["wrk", "-t", str(min(clients, 4)), "-c", str(clients), "-d", f"{duration}s", "--latency", "-s", script, url],
                         check=True, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def pct(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)", out, re.M)
        return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, pct(50), pct(99), int(errors.group(1)) if errors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build", "tools", "lathe"))
    ap.add_argument("--threads", type=int, default=2, help="kernel threads of the server and of lathe bench")
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--delay-us", type=int, default=500, help="dynamic batching's max_queue_delay_microseconds")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("bench/serve.py needs wrk: scripts/install-bench-deps.sh")
    repo, exports = tempfile.mkdtemp(prefix="lathe-serve-bench-"), tempfile.mkdtemp(prefix="lathe-serve-exports-")
    models = args.models or [os.path.join(ROOT, "tests", "onnx", "models", m, "model.onnx") for m in ["mlp_dynamic_batch", "cnn_dynamic_batch"]]
    if not args.models:
        try:
            models.append(resnet18_dynamic_batch(os.path.join(exports, "exports")))
        except ImportError as e:  # torchvision: scripts/install-model-deps.sh
            print(f"# ResNet-18 left out: {e}")
    clients = [int(c) for c in args.clients.split(",")]
    names = []
    for path in models:
        name = os.path.basename(os.path.dirname(path)) or os.path.splitext(os.path.basename(path))[0]
        for batched in (False, True):
            entry = name + ("_batched" if batched else "")
            os.makedirs(os.path.join(repo, entry, "1"))
            shutil.copy(path, os.path.join(repo, entry, "1", "model.onnx"))
            config = {"max_batch_size": 16}
            if batched:
                config["dynamic_batching"] = {"max_queue_delay_microseconds": args.delay_us}
            with open(os.path.join(repo, entry, "config.json"), "w") as f:
                json.dump(config, f)
            names.append((name, path, entry, batched))
    log = open(os.path.join(repo, "server.log"), "w")
    # A model without a dynamic axis 0 refuses max_batch_size's batching: its batched entry is
    # dropped after a first try (the server names it).
    proc = None
    while True:
        proc = subprocess.Popen([args.lathe, "serve", repo, "--port", "0", "--threads", str(args.threads), "--http-threads", "64",
                                 "--max-queue", "1024"], stdout=subprocess.PIPE, stderr=log, text=True)
        line = proc.stdout.readline()
        if "listening" in line:
            break
        proc.wait()
        with open(log.name) as f:
            text = f.read()
        bad = re.findall(r"model '([^']+)': dynamic_batching needs", text)
        if not bad:
            raise SystemExit("lathe serve did not start:\n" + text)
        shutil.rmtree(os.path.join(repo, bad[-1]))
        names = [n for n in names if n[2] != bad[-1]]
    url = re.search(r"(http://\S+)", line).group(1)
    print(f"# lathe serve, {args.threads} kernel threads, wrk {args.duration} s per row, one row per request, binary tensors;"
          f" dynamic batching: up to 16 rows within {args.delay_us} us")
    print(f"{'model':28} {'batching':8} {'clients':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'lathe bench ms':>14}")
    try:
        for name, path, entry, batched in names:
            meta = requests.get(f"{url}/v2/models/{entry}").json()
            body, header_length = request_body(meta)
            body_file = os.path.join(repo, entry + ".body")
            with open(body_file, "wb") as f:
                f.write(body)
            single = single_stream_ms(args.lathe, path, args.threads)
            for c in clients:
                rps, p50, p99, errors = wrk(f"{url}/v2/models/{entry}/infer", body_file, header_length, c, args.duration)
                print(f"{name:28} {'yes' if batched else 'no':8} {c:>7} {rps:>9.0f} {p50:>8.3f} {p99:>8.3f} {errors:>6} {single:>14.3f}", flush=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        shutil.rmtree(repo, ignore_errors=True)
        shutil.rmtree(exports, ignore_errors=True)


if __name__ == "__main__":
    main()
