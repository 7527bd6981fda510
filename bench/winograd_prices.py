#!/usr/bin/env python3
"""Times 3x3 convolutions by each method lathe has for them (the direct one, Winograd's F(2x2, 3x3)
and F(4x4, 3x3), forced by LATHE_WINOGRAD=0/2/4) and names the one its prices choose (LATHE_WINOGRAD=1),
on the layer shapes the prices were fitted to (src/tensor/winograd.hpp): whether the choice is the
fastest method on this CPU, and by how much it misses where it is not.

    /usr/bin/python3 bench/winograd_prices.py --threads 2 --rounds 2          # this CPU's widest vectors
    /usr/bin/python3 bench/winograd_prices.py --threads 2 --rounds 2 --avx2   # held to 8 lanes (x86-64-v3)
    /usr/bin/python3 bench/winograd_prices.py --shape 8/64/64/56              # one shape: batch/in/out/size

Each shape is one ONNX model (Conv 3x3, padding 1, constant weight and bias, then Relu) written
with Debian's torch into a temporary folder, timed by `lathe bench --json` (median of --iters runs)
into an empty kernel cache; the methods alternate within each round and each keeps its best median
over the rounds (the VM's speed drifts over minutes). The chosen method is told by its plan's FLOPs
(`lathe bench`'s gflop), not timed again. A method that cannot compute a shape (channels not in
whole vector blocks) times as the direct one.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The shapes of the 2026-11-30 fit (bench/RESULTS.md): batch / input channels / output channels / size.
SHAPES = ["1/64/64/56", "1/128/128/28", "1/256/256/14", "1/512/512/7", "8/64/64/56", "8/128/128/28", "8/256/256/14",
          "8/512/512/7", "1/64/64/112", "1/64/64/224", "1/64/32/224", "1/128/128/64", "2/256/256/28"]
METHODS = {"direct": "0", "F(2x2)": "2", "F(4x4)": "4"}


def write_model(folder, batch, cin, cout, size):
    try:
        import torch
    except ImportError:
        sys.exit("this script writes its models with Debian's torch: run it with /usr/bin/python3 "
                 "(bash scripts/install-model-deps.sh installs python3-torch)")
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(cin, cout, 3, padding=1)
    model = torch.nn.Sequential(conv, torch.nn.ReLU()).eval()
    path = os.path.join(folder, f"conv_{batch}_{cin}_{cout}_{size}.onnx")
    with torch.no_grad():
        torch.onnx.export(model, torch.randn(batch, cin, size, size), path, input_names=["image"], output_names=["out"],
                          opset_version=13)
    return path


def bench(lathe, model, setting, threads, iters, env):
    """`lathe bench --json`'s median (ms) and the plan's GFLOP, which tell the methods apart."""
    with tempfile.TemporaryDirectory(prefix="lathe-winograd-") as cache:
        run_env = dict(env, LATHE_WINOGRAD=setting, LATHE_CACHE_DIR=cache)
        out = subprocess.run([lathe, "bench", model, "--threads", str(threads), "--iters", str(iters), "--json"], env=run_env,
                             check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return r["median_ms"], r["gflop"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build", "tools", "lathe"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--shape", action="append", help="batch/in/out/size (default: the fit's thirteen)")
    ap.add_argument("--avx2", action="store_true", help="lathe compiled for x86-64-v3 and planned for 8 lanes")
    a = ap.parse_args()
    env = dict(os.environ)
    if a.avx2:
        env.update(LATHE_CPU_TARGET="x86-64-v3", LATHE_TARGET_SHAPE=os.environ.get("LATHE_TARGET_SHAPE", "8"))
    shapes = []
    for text in a.shape or SHAPES:
        try:
            batch, cin, cout, size = (int(v) for v in text.split("/"))
        except ValueError:
            sys.exit(f"--shape '{text}' is not batch/in/out/size (four whole numbers, e.g. 8/64/64/56)")
        if min(batch, cin, cout, size) < 1:
            sys.exit(f"--shape '{text}': every size must be at least 1")
        shapes.append((batch, cin, cout, size))
    if not os.access(a.lathe, os.X_OK):
        sys.exit(f"{a.lathe} is not an executable lathe (build it: cmake --build build --target lathe)")
    lanes = env.get("LATHE_TARGET_SHAPE", "the host's")
    print(f"# {a.threads} threads, lanes: {lanes}, best median of {a.iters} runs over {a.rounds} rounds, ms", flush=True)
    print("| batch / in / out / size | direct | F(2x2) | F(4x4) | chosen | fastest | chosen / fastest |")
    print("|---|---|---|---|---|---|---|")
    misses = []
    with tempfile.TemporaryDirectory(prefix="lathe-winograd-models-") as folder:
        for batch, cin, cout, size in shapes:
            model = write_model(folder, batch, cin, cout, size)
            best, gflop = {}, {}
            for r in range(a.rounds):
                order = list(METHODS.items())
                for name, setting in (order if r % 2 == 0 else order[::-1]):
                    ms, gflop[name] = bench(a.lathe, model, setting, a.threads, a.iters, env)
                    best[name] = min(best.get(name, ms), ms)
            # The method the prices choose (LATHE_WINOGRAD=1) is the one whose plan does as many FLOPs.
            _, chosen_gflop = bench(a.lathe, model, "1", a.threads, 1, env)
            chosen = min(METHODS, key=lambda m: abs(gflop[m] - chosen_gflop))
            fastest = min(METHODS, key=lambda m: best[m])
            ratio = best[chosen] / best[fastest]
            if ratio > 1.05:
                misses.append(f"{batch}/{cin}/{cout}/{size} ({chosen}, {ratio:.2f}x the {fastest}'s time)")
            print(f"| {batch}/{cin}/{cout}/{size} | {best['direct']:.3f} | {best['F(2x2)']:.3f} | {best['F(4x4)']:.3f} | "
                  f"{chosen} | {fastest} | {ratio:.2f} |", flush=True)
    print(f"# chosen more than 5% slower than the fastest: {'; '.join(misses) if misses else 'none'}")


if __name__ == "__main__":
    main()
