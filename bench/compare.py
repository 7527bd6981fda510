#!/usr/bin/env python3
"""Runs lathe's benchmarks beside numpy / PyTorch and the machine's memory bandwidth, all in one
run, and prints one table with ratios.

    cmake -S . -B build -G Ninja -DLATHE_BUILD_BENCH=ON && cmake --build build --target lathe_bench
    bash scripts/install-bench-deps.sh          # python3-numpy, python3-torch (Debian)
    python3 bench/compare.py [--anchors ../shared/anchors] [--threads 2]
    python3 bench/compare.py --baseline OLD/build/bench/lathe_bench   # an earlier build, same run
    python3 bench/compare.py --compiler llvm --baseline-compiler clang   # the JIT beside the C backend
    python3 bench/compare.py --avx2             # as on an AVX2-only CPU: everyone held to AVX2 (below)

The peers come from the shared anchors (bench_numpy_torch.py, stream.c, peak.c) and
bench/torch_extra.py. The machine is a shared VM whose speed drifts (up to 2x within minutes), so
everything is measured in this one run, lathe and the peers in interleaved rounds (--rounds,
default 2; lathe and the baseline swap order every round) with each side's faster median kept,
STREAM before and after; compare ratios, not numbers from another
day. Missing peers are reported as such, never invented. numpy/torch use the OpenBLAS the
environment selects: unset OPENBLAS_CORETYPE to let it use its AVX-512 kernels.

--avx2 measures what an AVX2-only CPU (8 float lanes, 16 vector registers) would get, on any x86-64
CPU with AVX2: lathe compiles for x86-64-v3 and plans for 8 lanes (LATHE_CPU_TARGET, and
LATHE_TARGET_SHAPE unless set), the FMA peak and STREAM probes are compiled for x86-64-v3, OpenBLAS
runs its Haswell kernels (OPENBLAS_CORETYPE) and PyTorch its AVX2 ones (ATEN_CPU_CAPABILITY,
ONEDNN_MAX_CPU_ISA). Caches and clocks stay this CPU's: a real AVX2 machine checks the result.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# lathe benchmark -> the anchor workload (bench_numpy_torch.py's name, or torch_extra.py's) it is
# compared with, and what its rate is a fraction of: "bw" (STREAM add) or "fma" (FMA peak)
WORKLOADS = [
    ("BM_MulAdd16M", "ew a*b+1 16M (out=)", "bw"),
    ("BM_FusedChain16M", "ew relu(a*b+c)*.5 (out=)", "bw"),
    ("BM_Sum16M", "sum 16M", "bw"),
    ("BM_Softmax4096", "softmax 4096x4096", "bw"),
    ("BM_Layernorm4096x1024", "layernorm 4096x1024", "bw"),
    ("BM_Matmul/512", "matmul 512", "fma"),
    ("BM_Matmul/1024", "matmul 1024", "fma"),
    ("BM_Matmul/2048", "matmul 2048", "fma"),
    ("BM_Conv3x3", "conv2d 8x64x56x56 3x3 NCHW", "fma"),
    ("BM_ConvDepthwise3x3", "depthwise 8x64x56x56 3x3", "bw"),
    ("BM_Conv1x1", "conv1x1 8x64x56x56 -> 256", "fma"),
    ("BM_WeightToChannelBlocks", "weight 512x4608 to blocks of 32", "bw"),
    # its GFLOP/s count the whole score matrix's work, as a kernel without the causal half skipped does
    ("BM_CausalAttention/1024", "causal attention 8x1024x64", "fma"),
    ("BM_CausalAttention/4096", "causal attention 8x4096x64", "fma"),
]
EXTRA = ["layernorm 4096x1024", "depthwise 8x64x56x56 3x3", "conv1x1 8x64x56x56 -> 256", "weight 512x4608 to blocks of 32",
         "causal attention 8x1024x64", "causal attention 8x4096x64"]


# Set by --avx2: what each side's environment adds, and the gcc -march of the probes.
HELD = {"lathe": {}, "peers": {}, "march": "native"}


def hold_to_avx2():
    """What --avx2 holds, here and in bench/onnx_models.py: lathe compiled for x86-64-v3 and planned
    for 8 lanes (LATHE_TARGET_SHAPE unless set), numpy/PyTorch on their AVX2 kernels, the probes
    compiled for x86-64-v3."""
    HELD["lathe"] = {"LATHE_CPU_TARGET": "x86-64-v3", "LATHE_TARGET_SHAPE": os.environ.get("LATHE_TARGET_SHAPE", "8")}
    HELD["peers"] = {"OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    HELD["march"] = "x86-64-v3"


def run(cmd, env=None, cwd=None):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, env=env, cwd=cwd, check=True, capture_output=True, text=True).stdout


def lathe_results(binary, threads, compiler=None):
    env = dict(os.environ, LATHE_THREADS=str(threads), **HELD["lathe"])
    if compiler:
        env["LATHE_CPU_COMPILER"] = compiler
    out = run([binary, "--benchmark_format=json", "--benchmark_filter=-BM_Gpu", "--benchmark_min_time=0.3", "--benchmark_repetitions=3",
               "--benchmark_report_aggregates_only=true"], env=env)
    res = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].replace("/real_time", "")
        name = {"BM_Matmul512": "BM_Matmul/512"}.get(name, name)  # its name in builds before the sizes became an argument
        ms = b["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
        res[name] = {"ms": ms, "gbs": b.get("bytes_per_second", 0) / 1e9, "counters": b}
    return res


def anchor_results(anchors, threads, py):
    env = dict(os.environ, **HELD["peers"])
    try:
        subprocess.run([py, "-c", "import numpy, torch"], check=True, capture_output=True)
    except (subprocess.CalledProcessError, FileNotFoundError):
        print("numpy/torch not installed (scripts/install-bench-deps.sh): peers skipped", file=sys.stderr)
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "anchors.json")
        only = ",".join(w[1] for w in WORKLOADS if w[1] not in EXTRA) + ",dispatch add 16"
        run([py, os.path.join(anchors, "bench_numpy_torch.py"), "--threads", str(threads), "--lib", "both", "--reps", "5",
             "--wait-quiet", "2", "--only", only, "--json", js], env=env)
        with open(js) as f:
            data = json.load(f)
        try:
            extra = run([py, os.path.join(ROOT, "bench", "torch_extra.py"), "--threads", str(threads)], env=env)
        except subprocess.CalledProcessError as e:
            print(f"bench/torch_extra.py failed ({e.returncode}): its rows have no torch figure", file=sys.stderr)
            extra = "[]"

    rows = data["results"] if isinstance(data, dict) else data
    res = {}
    for r in rows:
        res[(r["name"], r["lib"])] = r["med_ms"]
    for r in json.loads(extra):
        res[(r["name"], r["lib"])] = r["med_ms"]
    return res


def fma_peak(anchors, threads):
    """The FMA peak (median GFLOP/s over the widest vectors the CPU has) from the anchors' peak.c."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "peak")
        try:
            run(["gcc", "-O2", "-march=" + HELD["march"], "-fopenmp", os.path.join(anchors, "peak.c"), "-o", exe])
            out = run([exe], env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
        except (subprocess.CalledProcessError, FileNotFoundError):
            return None
    best = None
    for line in out.splitlines():
        m = re.match(r"fma\d+_GFLOPs\s+best\s+[\d.]+\s+median\s+([\d.]+)", line)
        if m:
            best = max(best or 0.0, float(m.group(1)))
    return best


def stream_bandwidth(anchors, threads):
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "stream")
        try:
            run(["gcc", "-O3", "-march=" + HELD["march"], "-fopenmp", os.path.join(anchors, "stream.c"), "-o", exe])
        except (subprocess.CalledProcessError, FileNotFoundError):
            return {}
        out = run([exe, str(64 * 1024 * 1024), "5"], env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    bw = {}
    for line in out.splitlines():
        m = re.match(r"(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
        if m:
            bw[m.group(1)] = float(m.group(3))  # median GB/s
    return bw


def fmt(x, unit="ms"):
    return "-" if x is None else (f"{x:.3f} {unit}" if x < 10 else f"{x:.1f} {unit}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--anchors", default=os.path.join(ROOT, "..", "shared", "anchors"))
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bench", "lathe_bench"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="the Python whose numpy and torch are the peers (default: Debian's, /usr/bin/python3)")
    ap.add_argument("--baseline", help="another lathe_bench (an earlier build) measured in the same run")
    ap.add_argument("--compiler", help="lathe's CPU backend (LATHE_CPU_COMPILER: llvm, clang; default: the build's)")
    ap.add_argument("--baseline-compiler", help="measure the baseline (default: this build) with this CPU backend")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (lathe and the baseline swap order each round)")
    ap.add_argument("--avx2", action="store_true", help="hold lathe, the peers and the probes to AVX2 (see the top of this file)")
    args = ap.parse_args()
    if args.avx2:
        hold_to_avx2()
    if args.baseline_compiler and not args.baseline:
        args.baseline = args.binary

    # The VM's speed drifts by up to 2x over minutes: lathe (and the baseline) and the peers are
    # each measured in interleaved rounds, and each side keeps its faster median per workload. The
    # baseline and lathe swap places every round (whichever runs second after the peers ran
    # differently here), so neither side always gets the same slot.
    bw = stream_bandwidth(args.anchors, args.threads)
    peak1 = fma_peak(args.anchors, args.threads)
    lathe_runs, base_runs, peer_runs = [], [], []
    for i in range(args.rounds):
        sides = [(lathe_runs, args.binary, args.compiler)]
        if args.baseline:
            sides.append((base_runs, args.baseline, args.baseline_compiler))
        for runs, binary, compiler in (sides if i % 2 == 0 else sides[::-1]):
            runs.append(lathe_results(binary, args.threads, compiler))
        peer_runs.append(anchor_results(args.anchors, args.threads, args.python))

    def best(results):
        return {k: min((r[k] for r in results if k in r), key=lambda v: v["ms"]) for k in results[0]}

    lathe, base = best(lathe_runs), (best(base_runs) if base_runs else {})
    peers = {k: min(r[k] for r in peer_runs if k in r) for k in peer_runs[0]} if peer_runs[0] else {}
    bw2 = stream_bandwidth(args.anchors, args.threads)  # again after
    add_bw = max(bw.get("add", 0), bw2.get("add", 0)) or None

    peak2 = fma_peak(args.anchors, args.threads)  # again after, as STREAM
    peak = max(peak1 or 0, peak2 or 0) or None

    if args.avx2:
        print("# held to AVX2 on this CPU: lathe " + " ".join(f"{k}={v}" for k, v in HELD["lathe"].items()) + "; peers " +
              " ".join(f"{k}={v}" for k, v in HELD["peers"].items()) + "; probes -march=x86-64-v3")
    print(f"# {args.threads} threads; STREAM add (median GB/s, best of before/after): {add_bw}; "
          f"FMA peak (median GFLOP/s, best of before/after): {peak}")
    extra_head, extra_rule = (" baseline | baseline / lathe |", "---|---|") if args.baseline else ("", "")
    print("| workload | lathe | lathe GB/s or GFLOP/s | % of limit | numpy | torch | lathe vs numpy | lathe vs torch |" + extra_head)
    print("|---|---|---|---|---|---|---|---|" + extra_rule)
    for bench, anchor, limit in WORKLOADS:
        l = lathe.get(bench)
        if not l:
            continue
        n, t = peers.get((anchor, "numpy")), peers.get((anchor, "torch"))
        if limit == "fma":
            rate = l["counters"].get("GFLOPs", 0) or None  # Google Benchmark reports the rate
            rate_s = f"{rate:.0f} GFLOP/s" if rate else "-"
            pct = f"{100 * rate / peak:.0f}% of FMA peak" if rate and peak else "-"
        else:
            rate = l["gbs"] or None
            rate_s = fmt(rate, "GB/s") if rate else "-"
            pct = f"{100 * rate / add_bw:.0f}% of STREAM" if rate and add_bw else "-"
        vs_n = f"{n / l['ms']:.2f}x" if n else "-"
        vs_t = f"{t / l['ms']:.2f}x" if t else "-"
        extra = ""
        if args.baseline:
            b = base.get(bench)
            extra = f" {fmt(b['ms'])} | {b['ms'] / l['ms']:.2f}x |" if b else " - | - |"
        print(f"| {bench} ({anchor}) | {fmt(l['ms'])} | {rate_s} | {pct} | {fmt(n)} | {fmt(t)} | {vs_n} | {vs_t} |{extra}")
    d = lathe.get("BM_Dispatch100Kernels")
    if d and args.baseline and base.get("BM_Dispatch100Kernels"):
        print(f"| dispatch per kernel, baseline | {base['BM_Dispatch100Kernels']['ms'] * 10:.3f} us | | | | | | |")
    if d:
        per_kernel_us = d["ms"] * 1e3 / 100
        n, t = peers.get(("dispatch add 16 (out=)", "numpy")), peers.get(("dispatch add 16 (out=)", "torch"))
        print(f"| dispatch per kernel (plan of 100) | {per_kernel_us:.3f} us | | | "
              f"{fmt(n * 1e3 if n else None, 'us')} | {fmt(t * 1e3 if t else None, 'us')} | "
              f"{(n * 1e3 / per_kernel_us):.1f}x | {(t * 1e3 / per_kernel_us):.1f}x |" if n and t else
              f"| dispatch per kernel (plan of 100) | {per_kernel_us:.3f} us | | | - | - | - | - |")
    print("ratios above 1x mean lathe is faster")


if __name__ == "__main__":
    main()
