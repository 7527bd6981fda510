#!/usr/bin/env python3
"""Whole ONNX models: lathe's latency beside ONNX Runtime's, measured in the same run.

    bash scripts/install-model-deps.sh                                   # PyTorch, node, onnxruntime-node
    /usr/bin/python3 scripts/make-test-models.py --large                 # ResNet-18, transformer, LSTM -> build/models
    /usr/bin/python3 bench/onnx_models.py [--threads 1,2] [--runs 10] [DIR...]  # default: tests/onnx/models, build/models
    /usr/bin/python3 bench/onnx_models.py --baseline OLD/build/tools/lathe      # and an older lathe, same run

For each case folder (model.onnx + test_data_set_0 inputs) and thread count it runs `lathe bench
--json` (the prepared plan on the folder's inputs, with an empty kernel cache so its prepare is a
first prepare) and `node scripts/ort-reference.js --time` (ONNX Runtime on the same inputs, same
thread count), each under /usr/bin/time -v, and prints median latencies, the ratio lathe / ORT
(below 1: lathe is faster), first-prepare times (ORT: session creation), each process's peak
resident memory (lathe's own VmHWM in a second run, from the kernel cache the first filled, since
/usr/bin/time -v also counts the C compiler it asks for its identity; ORT's includes node's own
~40 MB) and lathe's intermediate arena. With
--baseline, another lathe binary (an earlier commit's build) is measured in the same run beside
it. The VM's speed drifts: compare ratios from one run.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

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


def peak_rss_mb(stderr):
    """Peak resident memory from /usr/bin/time -v's report (kB), in MB."""
    for line in stderr.splitlines():
        if "Maximum resident set size" in line:
            return int(line.split(":")[1]) / 1024
    return None


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time -v: (stdout, stderr, returncode, peak MB)."""
    out = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, env=env)
    return out.stdout, out.stderr, out.returncode, peak_rss_mb(out.stderr)


def last_json(text):
    lines = text.strip().splitlines()
    return json.loads(lines[-1]) if lines else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*", default=[os.path.join(ROOT, "tests/onnx/models"), os.path.join(ROOT, "build/models")])
    ap.add_argument("--threads", default="1,2", help="thread counts, comma separated (default 1,2)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build/tools/lathe"))
    ap.add_argument("--warm-cache", action="store_true",
                    help="use lathe's kernel cache as it is (default: an empty one per run, so prepare is a first prepare)")
    ap.add_argument("--baseline", help="another lathe binary to measure beside --lathe (e.g. an earlier commit's build)")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    base_cols = f" {'base ms':>9} {'base/ORT':>8}" if a.baseline else ""
    print(f"{'model':22} {'thr':>3} {'lathe ms':>9} {'ORT ms':>9} {'lathe/ORT':>9} {'prep ms':>8} {'ORT prep':>8} "
          f"{'peak MB':>8} {'ORT MB':>7} {'arena MB':>8} {'kernels':>7}{base_cols}")

    def run_lathe(binary, model, feeds, t):
        """A first prepare into an empty kernel cache, then the timed run from that cache: its peak
        memory is the process's own (a first prepare's includes the C compiler it runs)."""
        env = dict(os.environ, LATHE_THREADS=str(t))
        with tempfile.TemporaryDirectory(prefix="lathe-cache-") as cache:
            if not a.warm_cache:
                env["LATHE_CACHE_DIR"] = cache
            first, err, rc, _ = timed([binary, "bench", model, "--iters", "1", "--json"] + feeds, env)
            if rc == 0:
                out, err, rc, peak = timed([binary, "bench", model, "--iters", str(a.runs), "--json"] + feeds, env)
        if rc != 0:
            return None, err.strip().splitlines()[-1][:80] if err.strip() else f"exit {rc}"
        r = last_json(out)
        r["compile_ms"] = last_json(first)["compile_ms"]
        r["peak_mb"] = r.get("peak_rss_mb", peak)  # its own (VmHWM): time -v adds the compiler it ran
        return r, None

    for case in cases(a.dirs):
        name = os.path.basename(case)
        # The same inputs ONNX Runtime gets (the folder's first data set), by position.
        names = model_input_names(case)
        data = os.path.join(case, "test_data_set_0")
        feeds = [f"--input={n}={os.path.join(data, f'input_{i}.pb')}" for i, n in enumerate(names)
                 if os.path.exists(os.path.join(data, f"input_{i}.pb"))]
        model = os.path.join(case, "model.onnx")
        for t in threads:
            lathe, err = run_lathe(a.lathe, model, feeds, t)
            if lathe is None:
                print(f"{name:22} {t:3d} lathe failed: {err}")
                continue
            out, _, rc, ort_peak = timed(["node", os.path.join(ROOT, "scripts/ort-reference.js"), "--time", str(a.runs),
                                          "--threads", str(t), case])
            ort = last_json(out) if rc == 0 else None
            ort_ms = ort["median_ms"] if ort else None
            na = "n/a"
            ratio = f"{lathe['median_ms'] / ort_ms:9.2f}" if ort_ms else f"{na:>9}"
            ort_s = f"{ort_ms:9.3f}" if ort_ms else f"{na:>9}"
            ort_prep = f"{ort['load_ms']:8.1f}" if ort and "load_ms" in ort else f"{na:>8}"
            ort_mb = f"{ort_peak:7.1f}" if ort and ort_peak else f"{na:>7}"
            peak = f"{lathe['peak_mb']:8.1f}" if lathe["peak_mb"] else f"{na:>8}"
            arena = f"{lathe['arena_bytes'] / 1e6:8.2f}" if "arena_bytes" in lathe else f"{na:>8}"
            extra = ""
            if a.baseline:
                base, err = run_lathe(a.baseline, model, feeds, t)
                if base is None:
                    extra = f" baseline failed: {err}"
                else:
                    bratio = f"{base['median_ms'] / ort_ms:8.2f}" if ort_ms else f"{na:>8}"
                    extra = f" {base['median_ms']:9.3f} {bratio}"
            print(f"{name:22} {t:3d} {lathe['median_ms']:9.3f} {ort_s} {ratio} {lathe['compile_ms']:8.1f} {ort_prep} "
                  f"{peak} {ort_mb} {arena} {lathe['kernels']:7d}{extra}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
