#!/usr/bin/env python3
"""One model's time per block, lathe beside ONNX Runtime, from each one's own profile in one run.

    /usr/bin/python3 bench/per_block.py build/zoo/resnext50_32x4d            # 2 threads, 20 runs
    /usr/bin/python3 bench/per_block.py --avx2 --depth 3 build/zoo/resnet50  # both held to AVX2

ONNX Runtime's profile (`node scripts/ort-reference.js --time RUNS --profile`) gives each node's
time per run; `lathe bench --profile` gives each kernel's, with the ONNX nodes it computes. Both
are summed by block: the first --depth parts of the node's name (`/layer3/layer3.1` at depth 2;
ONNX Runtime names a node it fused by the output it writes, which lies in the same block). ONNX
Runtime's layout conversions (Reorder*, named by no block) are summed as one row, as are nodes
without a path. Outside blocks the two may name the same work differently: a stem's convolution
fused with its ReLU is `/relu` in ONNX Runtime and `/conv1` in lathe (its first node). Each side's figure per node or kernel is the median over the runs; the rows are
sorted by how much longer lathe takes. --avx2 is bench/onnx_models.py's: lathe at 8 lanes for
x86-64-v3, ONNX Runtime on its AVX2 kernels (bench/avx2_only.c).
"""
import argparse
import collections
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from compare import HELD, hold_to_avx2  # noqa: E402
from onnx_models import avx2_preload, clean_env, lathe_feeds, preloaded  # noqa: E402


def block(name, depth):
    """The block a node belongs to: the first `depth` parts of its path."""
    if name.startswith("Reorder"):
        return "(ONNX Runtime's layout conversions)"
    if not name.startswith("/"):
        return "(other)"
    parts = name.split("/")[1:]
    return "/" + "/".join(parts[:depth]) if len(parts) > depth else "/" + parts[0]


def ort_blocks(case, a, env, scratch):
    prefix = os.path.join(scratch, "ort")
    subprocess.run(["node", os.path.join(ROOT, "scripts/ort-reference.js"), "--time", str(a.runs), "--threads", str(a.threads),
                    "--profile", prefix, case], check=True, capture_output=True, env=env)
    (trace,) = glob.glob(prefix + "*.json")
    per_node = collections.defaultdict(list)
    for e in json.load(open(trace)):
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[e["name"][: -len("_kernel_time")]].append(e["dur"])
    out = collections.Counter()
    for node, durs in per_node.items():
        out[block(re.sub(r"_token_\d+$", "", node), a.depth)] += statistics.median(durs)
    return out


def lathe_blocks(case, a, env):
    res = subprocess.run([a.lathe, "bench", os.path.join(case, "model.onnx"), "--threads", str(a.threads), "--iters", str(a.runs),
                          "--profile"] + lathe_feeds(case), check=True, capture_output=True, text=True, env=env)
    out = collections.Counter()
    for line in res.stdout.splitlines():
        # "  KERNEL  US  SHARE  GFLOP/s  GB/s  ACTIONS  /first/node (Op), ...": the kernel's first node
        m = re.match(r"\s+([rE]_\S+)\s+([\d.]+)\s", line)
        node = re.search(r"\s(/\S+) \(", line)
        if m:
            out[block(node.group(1), a.depth) if node else "(other)"] += float(m.group(2))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", help="a case folder: model.onnx and test_data_set_0")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--depth", type=int, default=2, help="the parts of a node's name that name its block")
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build/tools/lathe"))
    ap.add_argument("--avx2", action="store_true", help="hold lathe and ONNX Runtime to AVX2 (bench/onnx_models.py's --avx2)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lathe-per-block-") as scratch:
        held_ort = {}
        if a.avx2:
            hold_to_avx2()
            held_ort = preloaded(avx2_preload(scratch))
        ort = ort_blocks(a.case, a, dict(os.environ, **held_ort), scratch)
        lathe = lathe_blocks(a.case, a, dict(clean_env(), **HELD["lathe"]))
    print(f"# {os.path.basename(a.case)}, {a.threads} threads, medians of {a.runs} runs per node or kernel, in us" +
          ("; both held to AVX2" if a.avx2 else ""))
    print("| block | ONNX Runtime | lathe | lathe - ORT | lathe / ORT |\n|---|---|---|---|---|")
    for k in sorted(set(ort) | set(lathe), key=lambda k: lathe[k] - ort[k], reverse=True):
        ratio = f"{lathe[k] / ort[k]:.2f}" if ort[k] else "-"
        print(f"| {k} | {ort[k]:.0f} | {lathe[k]:.0f} | {lathe[k] - ort[k]:+.0f} | {ratio} |")
    total_o, total_l = sum(ort.values()), sum(lathe.values())
    print(f"| total | {total_o:.0f} | {total_l:.0f} | {total_l - total_o:+.0f} | {total_l / total_o:.2f} |")


if __name__ == "__main__":
    main()
