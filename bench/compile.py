#!/usr/bin/env python3
"""Time to first result: what each CPU backend costs to build a plan, and how fast its kernels run.

    /usr/bin/python3 bench/compile.py [--lathe build/tools/lathe] [--runs 300] [--threads 2] [MODEL...]

Default models: the built-in MLP, the test CNN (tests/onnx/models/cnn_resnet), ResNet-18
(build/models/resnet18, from scripts/make-test-models.py --large) and a small transformer
(tests/onnx/models/transformer_encoder). For each model, one run measures in fresh processes
(`lathe bench --json`):
  - the first prepare() with the C backend (clang subprocesses) into an empty disk cache (cold),
  - the first prepare() with the LLVM JIT into an empty disk cache (cold),
  - the first prepare() of a new process with each backend's warm disk cache (compiled objects and
    rendered programs; median of 3 processes), and the model's load (parse, graph) beside it,
  - per-kernel build time of the cold runs: the backend's part (compile + load, median and max)
    and lathe's own code generation beside it,
  - steady-state median latency with each backend (warm caches, interleaved rounds, best of each),
  - kernel time with each backend: the sum of each kernel's median (`--profile`), median of the rounds.
BEAM, NOOPT and lathe's debug variables are cleared.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["", os.path.join(ROOT, "tests/onnx/models/cnn_resnet"), os.path.join(ROOT, "build/models/resnet18"),
                  os.path.join(ROOT, "tests/onnx/models/transformer_encoder")]


def bench(lathe, model, compiler, cache, iters, threads, profile=False):
    env = {k: v for k, v in os.environ.items() if k not in ("BEAM", "NOOPT", "DEBUG", "LATHE_VERIFY", "LATHE_CACHE")}
    env.update(LATHE_CACHE_DIR=cache, LATHE_CPU_COMPILER=compiler, LATHE_THREADS=str(threads))
    cmd = [lathe, "bench", "--json", "--iters", str(iters)] + (["--profile"] if profile else [])
    if model:
        path = os.path.join(model, "model.onnx") if os.path.isdir(model) else model
        cmd.insert(2, path)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    r = json.loads([line for line in p.stdout.splitlines() if line.startswith("{")][-1])
    if profile:  # the profile's total: the sum of each kernel's median time, in microseconds
        r["kernel_us"] = float([line.split()[1] for line in p.stdout.splitlines() if line.split()[:1] == ["total"]][-1])
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", default=DEFAULT_MODELS, help="case folders or .onnx files ('' = built-in MLP)")
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build/tools/lathe"))
    ap.add_argument("--runs", type=int, default=300, help="timed runs per steady-state measurement (a small model runs in tens of microseconds: fewer runs read noise)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved steady-state rounds per backend")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    backends = ["clang", "llvm"]
    print(f"lathe: {a.lathe}; threads {a.threads}; {os.cpu_count()} CPUs")
    rows = []
    for model in a.models:
        if model and not os.path.exists(model):
            print(f"skipped (not found): {model}")
            continue
        name = os.path.basename(model.rstrip("/")) if model else "built-in MLP"
        r = {"model": name}
        caches = {b: tempfile.mkdtemp(prefix=f"lathe-compile-{b}-") for b in backends}
        try:
            for b in backends:
                cold = bench(a.lathe, model, b, caches[b], 1, a.threads)
                warm = [bench(a.lathe, model, b, caches[b], 1, a.threads) for _ in range(3)]
                r[b] = {"cold_ms": cold["compile_ms"], "warm_ms": statistics.median(w["compile_ms"] for w in warm),
                        "load_ms": statistics.median(w["load_ms"] for w in warm),
                        "kernels": f"{cold['kernels']} ({cold.get('distinct_kernels', '?')})",
                        "compile": cold["kernel_compile_ms"], "codegen": cold["kernel_codegen_ms"]}
            for b in backends:
                r[b]["median_ms"] = float("inf")
                r[b]["kernel_us"] = []
            for _ in range(a.rounds):
                for b in backends:
                    r[b]["median_ms"] = min(r[b]["median_ms"], bench(a.lathe, model, b, caches[b], a.runs, a.threads)["median_ms"])
                    r[b]["kernel_us"].append(bench(a.lathe, model, b, caches[b], a.runs, a.threads, profile=True)["kernel_us"])
        finally:
            for c in caches.values():
                shutil.rmtree(c, ignore_errors=True)
        rows.append(r)
        print(f"measured {name}", file=sys.stderr)

    print()
    print("| model | kernels (distinct) | backend | model load ms | first prepare, cold ms | warm disk cache ms (median of 3) "
          "| per-kernel compile+load ms (median / max) | per-kernel codegen ms (median) | steady median ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for b in backends:
            x = r[b]
            comp = x["compile"] or [float("nan")]  # none: printed as nan, never as a time
            gen = x["codegen"] or [float("nan")]
            print(f"| {r['model']} | {x['kernels']} | {b} | {x['load_ms']:.0f} | {x['cold_ms']:.0f} | {x['warm_ms']:.1f} | "
                  f"{statistics.median(comp):.1f} / {max(comp):.1f} | {statistics.median(gen):.1f} | {x['median_ms']:.3f} |")
    print()
    print("| model | cold prepare clang / llvm | steady latency llvm / clang | kernel time llvm / clang (us) |")
    print("|---|---|---|---|")
    for r in rows:
        k = {b: statistics.median(r[b]["kernel_us"]) for b in backends}
        print(f"| {r['model']} | {r['clang']['cold_ms'] / max(r['llvm']['cold_ms'], 1e-9):.1f}x | "
              f"{r['llvm']['median_ms'] / r['clang']['median_ms']:.2f} | "
              f"{k['llvm'] / k['clang']:.2f} ({k['llvm']:.1f} / {k['clang']:.1f}) |")
    print()
    print("Below 1: the JIT is faster. Kernel time is the sum of each kernel's median (`lathe bench --profile`),")
    print("the median of the rounds; a model of a few tens of microseconds has process-to-process modes in")
    print("its end-to-end latency (thread wake-up) that either backend can land in.")


if __name__ == "__main__":
    main()
