#!/usr/bin/env python3
"""Which kernels of a model spill vector registers, and how much of the model's time they take.

Runs `lathe bench MODEL --profile` once with DEBUG=6, which prints each kernel's machine code as
the LLVM backend builds it (its assembly marks each spill and reload, and each innermost loop's
header). Counts the vector spills and reloads per kernel: in an innermost loop (the hot loop of a
register tile), in any loop, and in all. Prints the kernels that spill in a loop beside their
median time from the same run's profile.

    /usr/bin/python3 bench/spills.py build/models/resnet18/model.onnx --shape 8

--shape 8 plans for an AVX2 CPU (8 float lanes, 16 registers) and builds for x86-64-v3, so the
machine code is what such a CPU would run; --shape 16 plans for AVX-512 (x86-64-v4), which lathe
builds only on a CPU that can run it. DEBUG=6 prints every level below it too (each kernel's graph
after every codegen step): kernel times are per kernel and unaffected, the compile is slower.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_models import clean_env  # noqa: E402

CPUS = {"4": "x86-64-v2", "8": "x86-64-v3", "16": "x86-64-v4"}
LABEL = re.compile(r"^\.?L?(BB\d+_\d+):|^# %bb\.\d+:")
IN_LOOP = re.compile(r"in Loop: Header=(BB\d+_\d+) Depth=(\d+)")
VECTOR = re.compile(r"[xyz]mm\d|\bv\d+\b|\bq\d+\b")


def count_spills(asm):
    """(innermost, in a loop, all) vector spills and reloads of one kernel's assembly."""
    inner = looped = total = 0
    headers = set()
    in_inner = in_loop = False
    block = None
    for line in asm.splitlines():
        m = LABEL.match(line)
        if m:
            block = m.group(1)
            h = IN_LOOP.search(line)
            in_loop = bool(h)
            in_inner = bool(h and h.group(1) in headers)
            continue
        stripped = line.strip()
        if stripped.startswith("#") or stripped.startswith("//"):
            if "Inner Loop Header" in stripped and block:
                headers.add(block)
                in_inner = in_loop = True
            elif "Loop Header" in stripped:
                in_loop = True
            h = IN_LOOP.search(stripped)
            if h:
                in_loop = True
                in_inner = in_inner or h.group(1) in headers
            continue
        if ("Spill" in line or "Reload" in line) and VECTOR.search(line):
            total += 1
            looped += in_loop
            inner += in_inner
    return inner, looped, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--shape", default="", help="LATHE_TARGET_SHAPE lanes: 4, 8 or 16 (default: this CPU's)")
    ap.add_argument("--lathe", default=os.path.join(os.path.dirname(__file__), "..", "build", "tools", "lathe"))
    ap.add_argument("--threads", default="2")
    ap.add_argument("--iters", default="10")
    args = ap.parse_args()
    env = dict(clean_env(), DEBUG="6")
    if args.shape:
        if args.shape not in CPUS:
            sys.exit(f"--shape {args.shape}: expected one of {', '.join(CPUS)}")
        env["LATHE_TARGET_SHAPE"] = args.shape
        env["LATHE_CPU_TARGET"] = CPUS[args.shape]
    run = subprocess.run([args.lathe, "bench", args.model, "--compiler", "llvm", "--threads", args.threads, "--iters", args.iters,
                          "--profile"],
                         capture_output=True, text=True, env=env)
    if run.returncode != 0:
        sys.exit(f"lathe bench failed:\n{run.stderr[-2000:]}")
    code = {}
    parts = re.split(r"^lathe: machine code of (\S+)\n", run.stderr, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2]):
        code.setdefault(name, body.split("\nlathe:")[0])
    times, total = {}, 0.0
    for line in run.stdout.splitlines():
        m = re.match(r"^  ([rE]_\S+)\s+([0-9.]+)", line)
        if m:
            times[m.group(1)] = times.get(m.group(1), 0.0) + float(m.group(2))
        m = re.match(r"^  total\s+([0-9.]+)", line)
        if m:
            total = float(m.group(1))
    if not code:
        sys.exit("no machine code printed: is lathe built with LLVM?")

    def time_of(name):
        """The profile's time of kernel `name` (the profile clips a long name to 29 characters and '...')."""
        if name in times:
            return times[name]
        clipped = [t for n, t in times.items() if n.endswith("...") and name.startswith(n[:-3])]
        return sum(clipped)

    rows = [(count_spills(asm), name) for name, asm in code.items()]
    spilling = [r for r in rows if r[0][1] > 0]
    share = sum(time_of(name) for _, name in spilling)
    print(f"{args.model} at shape {args.shape or 'native'}: {len(spilling)} of {len(rows)} kernels spill in a loop, "
          f"{sum(1 for r in rows if r[0][0])} in an innermost loop; they take {share:.0f} of {total:.0f} us "
          f"({100 * share / total if total else 0:.1f}%)")
    print(f"  {'kernel':40} {'innermost':>9} {'in loops':>8} {'all':>5} {'us':>10}")
    for (inner, looped, all_), name in sorted(spilling, key=lambda r: -time_of(r[1])):
        print(f"  {name:40} {inner:9} {looped:8} {all_:5} {time_of(name):10.1f}")


if __name__ == "__main__":
    main()
