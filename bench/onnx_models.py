#!/usr/bin/env python3
"""Whole ONNX models: lathe's latency beside ONNX Runtime's, measured in the same run.

    bash scripts/install-model-deps.sh                                   # PyTorch, node, onnxruntime-node
    /usr/bin/python3 scripts/make-test-models.py --large                 # ResNet-18, transformer, LSTM -> build/models
    /usr/bin/python3 bench/onnx_models.py [--threads 1,2] [--runs 10] [DIR...]  # default: tests/onnx/models, build/models
    /usr/bin/python3 bench/onnx_models.py --baseline OLD/build/tools/lathe      # and an older lathe, same run
    /usr/bin/python3 bench/onnx_models.py --ort-python python3   # ORT from that Python's onnxruntime (no node)
    /usr/bin/python3 bench/onnx_models.py --prepare-budget 5000 build/zoo build/detectors  # exit 1 if a first prepare takes longer
    /usr/bin/python3 bench/onnx_models.py --avx2 build/zoo                # as on an AVX2-only CPU: both sides held to AVX2

For each case folder (model.onnx + test_data_set_0 inputs) and thread count it runs a first
prepare (`lathe bench --json` into an empty kernel cache: load + build + prepare, beside ORT's
session creation), then `lathe bench --json` from that cache and `node scripts/ort-reference.js
--time` (ONNX Runtime on the same inputs, same thread count) in interleaved rounds, each side
keeping its best median (the VM's speed drifts up to 2x within minutes), each process under
/usr/bin/time -v. It prints median latencies, the ratio lathe / ORT (below 1: lathe is faster),
lathe's GFLOP/s (its plan's counted work) and its share of the machine's FMA peak measured in the
same run (the anchors' peak.c, as bench/compare.py), first-prepare times, each process's peak
resident memory (lathe's own VmHWM, since /usr/bin/time -v also counts the C compiler it asks for
its identity; ORT's includes node with onnxruntime-node loaded, printed in the header) and
lathe's intermediate arena. With --baseline, another lathe binary (an earlier commit's build) is
measured in the same rounds beside it. BEAM, NOOPT and lathe's debug variables are cleared.

--avx2 measures both sides as an AVX2-only CPU (8 float lanes, 16 vector registers) would run them,
on an x86-64 CPU with AVX-512: lathe compiles for x86-64-v3 and plans for 8 lanes
(LATHE_CPU_TARGET, and LATHE_TARGET_SHAPE unless set), ONNX Runtime runs with bench/avx2_only.c
preloaded (CPUID answers without AVX-512, so MLAS chooses its AVX2 kernels; it needs the CPU's
cpuid_fault, and the run stops where that is missing rather than time ORT at AVX-512; on a CPU
without AVX-512 ONNX Runtime runs as it is), and the FMA probe is compiled for x86-64-v3. Caches
and clocks stay this CPU's: a real AVX2 machine checks the result.
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
sys.path.insert(0, os.path.join(ROOT, "bench"))
from compare import HELD, fma_peak, hold_to_avx2  # noqa: E402


def clean_env():
    """The environment without the settings that would choose lathe's actions or memory (BEAM,
    NOOPT, a trace, poisoning, the arena): a developer's shell must not change what is measured
    (the test suite clears them too)."""
    return {k: v for k, v in os.environ.items() if k not in ("BEAM", "NOOPT", "LATHE_TRACE", "LATHE_POISON", "LATHE_ARENA")}


def cases(dirs):
    for d in dirs:
        if os.path.exists(os.path.join(d, "model.onnx")):
            yield d
        elif os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if os.path.exists(os.path.join(d, name, "model.onnx")):
                    yield os.path.join(d, name)


def has_avx512():
    """Whether this CPU reports AVX-512F (/proc/cpuinfo's flags)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512f" in line for line in f)
    except OSError:
        return True  # unknown: hold ONNX Runtime anyway


def avx2_preload(directory):
    """bench/avx2_only.c built into `directory`, checked to hold a process to AVX2: its path; None
    where the CPU has no AVX-512 (ONNX Runtime runs its AVX2 kernels as it is); or exits naming why
    it cannot hold it."""
    if not has_avx512():
        return None
    lib = os.path.join(directory, "avx2_only.so")
    try:
        build = subprocess.run(["gcc", "-O2", "-shared", "-fPIC", os.path.join(ROOT, "bench/avx2_only.c"), "-o", lib, "-ldl"],
                               capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit("--avx2: gcc is needed to build bench/avx2_only.c (bash scripts/install-bench-deps.sh)")
    check = subprocess.run(["true"], env=dict(os.environ, LD_PRELOAD=lib), capture_output=True, text=True) \
        if build.returncode == 0 else build
    if check.returncode != 0:
        sys.exit("--avx2: ONNX Runtime cannot be held to AVX2 here: " + (check.stderr.strip() or f"exit {check.returncode}"))
    return lib


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


def lathe_feeds(case):
    """`lathe bench`'s --input options for the same inputs ONNX Runtime gets: the case folder's
    first data set, by position (an input the data set has no file for is left to lathe)."""
    data = os.path.join(case, "test_data_set_0")
    named = [(n, os.path.join(data, f"input_{i}.pb")) for i, n in enumerate(model_input_names(case))]
    return [f"--input={n}={f}" for n, f in named if os.path.exists(f)]


def preloaded(lib):
    """The environment that adds `lib` (None: nothing) to this process's LD_PRELOAD."""
    return {"LD_PRELOAD": " ".join(p for p in (lib, os.environ.get("LD_PRELOAD")) if p)} if lib else {}


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
    ap.add_argument("--rounds", type=int, default=2, help="interleaved lathe/ORT rounds; each side keeps its best median")
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build/tools/lathe"))
    ap.add_argument("--anchors", default=os.path.join(ROOT, "..", "shared", "anchors"))
    ap.add_argument("--warm-cache", action="store_true",
                    help="use lathe's kernel cache as it is (default: an empty one per model, so prepare is a first prepare)")
    ap.add_argument("--baseline", help="another lathe binary to measure beside --lathe (e.g. an earlier commit's build)")
    ap.add_argument("--prepare-budget", type=float, metavar="MS",
                    help="exit 1 naming every model whose first prepare (load, build, compile into an empty cache) took longer")
    ap.add_argument("--ort-python", metavar="PYTHON",
                    help="time ONNX Runtime with this Python's onnxruntime package (bench/ort_time.py) instead of node's")
    ap.add_argument("--avx2", action="store_true", help="hold lathe, ONNX Runtime and the FMA probe to AVX2 (see the top of this file)")
    a = ap.parse_args()
    held_ort, preload = {}, None
    if a.avx2:
        scratch = tempfile.TemporaryDirectory(prefix="lathe-bench-")  # lives as long as main()
        hold_to_avx2()
        preload = avx2_preload(scratch.name)
        held_ort = preloaded(preload)
    threads = [int(t) for t in a.threads.split(",")]
    # The machine's limit, measured in this run: FMA peak per thread count (bench/compare.py's).
    peaks = {t: fma_peak(a.anchors, t) for t in threads}
    if a.ort_python:
        _, _, rc, ort_idle_mb = timed([a.ort_python, "-c", "import onnxruntime"])
        idle = "python with onnxruntime imported and nothing run"
    else:
        modules = os.path.abspath(os.environ.get("ORT_NODE_MODULES", os.path.join(ROOT, "build/ort/node_modules")))
        _, _, rc, ort_idle_mb = timed(["node", "-e", "require('onnxruntime-node')"], dict(os.environ, NODE_PATH=modules))
        idle = "node with onnxruntime-node loaded and nothing run"
    ort_idle_mb = ort_idle_mb if rc == 0 else None
    if a.avx2:
        ort_held = "ONNX Runtime with bench/avx2_only.c preloaded (CPUID without AVX-512)" if preload else \
            "ONNX Runtime as it is (this CPU has no AVX-512)"
        print("# held to AVX2 on this CPU: lathe " + " ".join(f"{k}={v}" for k, v in HELD["lathe"].items()) + "; " + ort_held +
              "; FMA probe -march=x86-64-v3")
    print("# FMA peak (GFLOP/s): " + ", ".join(f"{t} threads {p:.0f}" if p else f"{t} threads n/a" for t, p in peaks.items()) +
          (f"; {idle}: {ort_idle_mb:.0f} MB" if ort_idle_mb else ""))
    base_cols = f" {'base ms':>9} {'base/ORT':>8}" if a.baseline else ""
    print(f"{'model':22} {'thr':>3} {'lathe ms':>9} {'ORT ms':>9} {'lathe/ORT':>9} {'GFLOP/s':>8} {'% peak':>6} {'prep ms':>8} "
          f"{'ORT prep':>8} {'peak MB':>8} {'ORT MB':>7} {'arena MB':>8} {'kernels':>7}{base_cols}")

    clean = dict(clean_env(), **HELD["lathe"])

    def first_prepare(binary, model, feeds, t, cache):
        """Load, build and prepare into an empty kernel cache: what ORT's session creation does."""
        env = dict(clean, LATHE_THREADS=str(t))
        if cache:
            env["LATHE_CACHE_DIR"] = cache
        out, err, rc, _ = timed([binary, "bench", model, "--iters", "1", "--json"] + feeds, env)
        if rc != 0:
            return None, err.strip().splitlines()[-1][:80] if err.strip() else f"exit {rc}"
        r = last_json(out)
        return r.get("load_ms", 0) + r["compile_ms"], None

    def timed_lathe(binary, model, feeds, t, cache):
        """The timed run from the cache the first prepare filled: its peak memory is the process's
        own (VmHWM; /usr/bin/time -v would add the C compiler it asks for its identity)."""
        env = dict(clean, LATHE_THREADS=str(t))
        if cache:
            env["LATHE_CACHE_DIR"] = cache
        out, err, rc, peak = timed([binary, "bench", model, "--iters", str(a.runs), "--json"] + feeds, env)
        if rc != 0:
            return None
        r = last_json(out)
        r["peak_mb"] = r.get("peak_rss_mb", peak)
        return r

    def timed_ort(case, t):
        ort = [a.ort_python, os.path.join(ROOT, "bench/ort_time.py")] if a.ort_python else \
            ["node", os.path.join(ROOT, "scripts/ort-reference.js")]
        out, _, rc, peak = timed(ort + ["--time", str(a.runs), "--threads", str(t), case], dict(os.environ, **held_ort))
        if rc != 0:
            return None
        r = last_json(out)
        r["peak_mb"] = peak
        return r

    def best(runs):
        runs = [r for r in runs if r]
        return min(runs, key=lambda r: r["median_ms"]) if runs else None

    na = "n/a"
    over_budget = []  # models whose first prepare took longer than --prepare-budget
    for case in cases(a.dirs):
        name = os.path.basename(case)
        feeds = lathe_feeds(case)
        model = os.path.join(case, "model.onnx")
        for t in threads:
            with tempfile.TemporaryDirectory(prefix="lathe-cache-") as tmp:
                cache = None if a.warm_cache else tmp
                base_cache = None if a.warm_cache else os.path.join(tmp, "baseline")
                prep, err = first_prepare(a.lathe, model, feeds, t, cache)
                if prep is None:
                    print(f"{name:22} {t:3d} lathe failed: {err}")
                    over_budget.append(f"{name} (failed)")
                    continue
                if a.prepare_budget and not a.warm_cache and prep > a.prepare_budget:
                    over_budget.append(f"{name} ({prep:.0f} ms at {t} threads)")
                if a.baseline:
                    first_prepare(a.baseline, model, feeds, t, base_cache)
                # Interleaved rounds: the VM's speed drifts, so each side keeps its best median.
                lathe_runs, ort_runs, base_runs = [], [], []
                for _ in range(a.rounds):
                    lathe_runs.append(timed_lathe(a.lathe, model, feeds, t, cache))
                    ort_runs.append(timed_ort(case, t))
                    if a.baseline:
                        base_runs.append(timed_lathe(a.baseline, model, feeds, t, base_cache))
            lathe, ort, base = best(lathe_runs), best(ort_runs), best(base_runs)
            if lathe is None:
                print(f"{name:22} {t:3d} lathe failed in a timed run")
                continue
            ort_ms = ort["median_ms"] if ort else None
            ratio = f"{lathe['median_ms'] / ort_ms:9.2f}" if ort_ms else f"{na:>9}"
            ort_s = f"{ort_ms:9.3f}" if ort_ms else f"{na:>9}"
            rate = lathe.get("gflop", 0) / (lathe["median_ms"] / 1e3) if lathe["median_ms"] else 0
            of_peak = f"{100 * rate / peaks[t]:5.1f}%" if peaks.get(t) else f"{na:>6}"
            ort_prep = f"{ort['load_ms']:8.1f}" if ort and "load_ms" in ort else f"{na:>8}"
            ort_mb = f"{ort['peak_mb']:7.1f}" if ort and ort.get("peak_mb") else f"{na:>7}"
            peak = f"{lathe['peak_mb']:8.1f}" if lathe["peak_mb"] else f"{na:>8}"
            arena = f"{lathe['arena_bytes'] / 1e6:8.2f}" if "arena_bytes" in lathe else f"{na:>8}"
            extra = ""
            if a.baseline:
                if base is None:
                    extra = " baseline failed"
                else:
                    bratio = f"{base['median_ms'] / ort_ms:8.2f}" if ort_ms else f"{na:>8}"
                    extra = f" {base['median_ms']:9.3f} {bratio}"
            print(f"{name:22} {t:3d} {lathe['median_ms']:9.3f} {ort_s} {ratio} {rate:8.1f} {of_peak} {prep:8.1f} {ort_prep} "
                  f"{peak} {ort_mb} {arena} {lathe['kernels']:7d}{extra}")
            sys.stdout.flush()
    if a.prepare_budget:
        if over_budget:
            print(f"# over the first-prepare budget of {a.prepare_budget:.0f} ms: {', '.join(over_budget)}")
            sys.exit(1)
        print(f"# every model's first prepare within {a.prepare_budget:.0f} ms")


if __name__ == "__main__":
    main()
