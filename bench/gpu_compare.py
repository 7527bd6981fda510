#!/usr/bin/env python3
"""lathe on an NVIDIA GPU beside PyTorch (eager) and ONNX Runtime (its CUDA execution provider) on
the same GPU, in one run, printing one table: matmul in float32 and float16 at 4096x4096, a 3x3
convolution (8x64x56x56, 64 filters), a softmax over 4096x4096 rows, and ResNet-18 from ONNX at
batch 1 and 32. Every time is a median over timed runs after a warm-up, each run waited for
(torch.cuda.synchronize for PyTorch, synchronize_outputs for ONNX Runtime; lathe's execute()
returns when the GPU is done).

    python3 bench/gpu_compare.py --lathe KIT/bin/lathe --lathe-bench KIT/bin/lathe_bench
    python3 bench/gpu_compare.py ... --device EMU --quick     # the flow, without a GPU (small sizes)

scripts/gpu-check.sh runs it. A peer missing on the machine (no ONNX Runtime, no GPU for PyTorch,
an ONNX export that fails) is reported as missing with why, never invented.
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name in the table, lathe_bench's benchmark (at full size), and the PyTorch workload
MICRO = [
    ("matmul f32 4096", "BM_GpuMatmul/4096/32/real_time", ("matmul", 4096, "float32")),
    ("matmul f16 4096", "BM_GpuMatmul/4096/16/real_time", ("matmul", 4096, "float16")),
    ("conv3x3 8x64x56x56", "BM_Conv3x3/real_time", ("conv", 8, 64, 56)),
    ("softmax 4096x4096", "BM_Softmax4096/real_time", ("softmax", 4096)),
]


def lathe_env(args):
    env = dict(os.environ, LATHE_DEVICE=args.device)
    if args.lib:
        env["LD_LIBRARY_PATH"] = args.lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def lathe_micro(args):
    """lathe_bench's medians in ms (or why not), by benchmark name: one process per benchmark, so
    one that fails leaves the others."""
    out = {}
    for _, bench, _ in MICRO:
        name = bench.replace("/real_time", "")
        if args.quick and not name.startswith("BM_Softmax"):
            continue
        cmd = [args.lathe_bench, "--benchmark_format=json", "--benchmark_filter=^%s(/|$)" % name, "--benchmark_min_time=0.5",
               "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true"]
        try:
            p = subprocess.run(cmd, env=lathe_env(args), capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            out[bench] = "lathe_bench took over 60 s"
            continue
        if p.returncode != 0:
            out[bench] = "lathe_bench failed: " + (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
            continue
        try:
            results = json.loads(p.stdout)["benchmarks"]
        except (ValueError, KeyError) as e:
            out[bench] = "lathe_bench's output did not parse: %s" % e
            continue
        for b in results:
            if b.get("error_occurred"):
                out[bench] = "error: " + b.get("error_message", "?")
            elif b.get("aggregate_name") == "median":
                out[b["run_name"]] = b["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
    return out


def median_ms(fn, sync, runs, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def torch_micro(torch, dev, quick, runs):
    """PyTorch eager's medians in ms, keyed like MICRO's names."""
    import torch.nn.functional as F
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    out = {}
    g = torch.Generator().manual_seed(1)
    for name, _, work in MICRO:
        if quick and not name.startswith("softmax"):
            continue
        if work[0] == "matmul":
            n, dt = work[1], getattr(torch, work[2])
            if dev == "cpu" and dt == torch.float16:
                out[name] = "no float16 matmul on the CPU"
                continue
            a = torch.rand(n, n, generator=g).to(dev, dt)
            b = torch.rand(n, n, generator=g).to(dev, dt)
            out[name] = median_ms(lambda: a @ b, sync, runs)
        elif work[0] == "conv":
            batch, c, hw = work[1:]
            x = torch.rand(batch, c, hw, hw, generator=g).to(dev)
            w = torch.rand(c, c, 3, 3, generator=g).to(dev)
            bias = torch.rand(c, generator=g).to(dev)
            out[name] = median_ms(lambda: F.conv2d(x, w, bias, padding=1), sync, runs)
        else:
            n = work[1]
            x = torch.rand(n, n, generator=g).to(dev)
            out[name] = median_ms(lambda: torch.softmax(x, 1), sync, runs)
    return out


def resnet18(torch):
    """ResNet-18's layout (scripts/make-test-models.py's ResNet), seeded, in eval mode."""
    spec = importlib.util.spec_from_file_location("make_test_models", os.path.join(ROOT, "scripts", "make-test-models.py"))
    mtm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mtm)
    torch.manual_seed(21)
    model = mtm.ResNet([64, 128, 256, 512], [2, 2, 2, 2], 1000, stem_kernel=7, stem_stride=2)
    mtm.randomize_batchnorm(model, 121)
    return model.eval()


def export(torch, model, x, path):
    """Writes `model` at input `x` to `path` as ONNX; returns None or why it could not."""
    errors = []
    for kwargs in ({"dynamo": False}, {}):  # the TorchScript exporter where this PyTorch still has it
        try:
            torch.onnx.export(model, (x,), path, input_names=["image"], output_names=["logits"], opset_version=17, **kwargs)
            return None
        except Exception as e:  # noqa: BLE001 - any failure is reported, not raised
            errors.append("%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    return "; ".join(errors)


def lathe_model_ms(args, path, iters):
    p = subprocess.run([args.lathe, "bench", path, "--json", "--iters", str(iters), "--device", args.device],
                       env=lathe_env(args), capture_output=True, text=True, timeout=90)
    if p.returncode != 0:
        return "error: " + (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return json.loads(p.stdout)["median_ms"]


def ort_model_ms(path, x, runs):
    try:
        import onnxruntime as ort
    except ImportError as e:
        return "no onnxruntime (%s)" % e
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return "ONNX Runtime has no CUDA provider (%s)" % ", ".join(ort.get_available_providers())
    sess = ort.InferenceSession(path, providers=["CUDAExecutionProvider"])
    if sess.get_providers()[0] != "CUDAExecutionProvider":  # it falls back to the CPU quietly (no cuDNN, ...)
        return "ONNX Runtime's CUDA provider did not load (it runs on %s)" % sess.get_providers()[0]
    io = sess.io_binding()  # input and output stay on the GPU, as lathe's do
    io.bind_ortvalue_input("image", ort.OrtValue.ortvalue_from_numpy(x, "cuda", 0))
    io.bind_output("logits", "cuda")
    return median_ms(lambda: sess.run_with_iobinding(io), io.synchronize_outputs, runs)


def guarded(fn, *args):
    """fn(*args), or why it failed: one peer's failure leaves the rest of the table."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - reported in the table's notes
        return "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0])


def fmt(v):
    return "%.3f" % v if isinstance(v, float) else "-"


def ratio(a, b):
    return "%.2fx" % (a / b) if isinstance(a, float) and isinstance(b, float) and b > 0 else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build", "tools", "lathe"))
    ap.add_argument("--lathe-bench", default=os.path.join(ROOT, "build", "bench", "lathe_bench"))
    ap.add_argument("--lib", help="a folder of shared libraries lathe's programs need (put first on LD_LIBRARY_PATH for them only)")
    ap.add_argument("--device", default="CUDA", help="lathe's device: CUDA[:n], or EMU for a run without a GPU")
    ap.add_argument("--quick", action="store_true", help="the softmax and ResNet-18 at batch 1 only")
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()

    notes = []
    header = "%-22s %10s %10s %10s %10s %10s" % ("workload (ms)", "lathe", "PyTorch", "ORT", "vs PyTorch", "vs ORT")
    print(header, flush=True)

    def row(name, l, t, o):  # printed as soon as it is measured: a run cut short keeps what it had
        print("%-22s %10s %10s %10s %10s %10s" % (name, fmt(l), fmt(t), fmt(o), ratio(l, t), ratio(l, o)), flush=True)
        for who, v in (("lathe", l), ("PyTorch", t), ("ORT", o)):
            if isinstance(v, str) and v != "-":
                notes.append("%s, %s: %s" % (name, who, v))

    lathe = guarded(lathe_micro, args)
    if isinstance(lathe, str):
        notes.append("lathe's workloads failed: " + lathe)
        lathe = {}
    try:
        import torch
    except ImportError as e:
        torch = None
        notes.append("no PyTorch (%s)" % e)
    dev = "cuda" if torch is not None and torch.cuda.is_available() else "cpu"
    if torch is not None:
        notes.append("PyTorch %s on %s" % (torch.__version__, torch.cuda.get_device_name(0) if dev == "cuda" else "the CPU (no GPU)"))
    peers = guarded(torch_micro, torch, dev, args.quick, args.runs) if torch is not None else {}
    if isinstance(peers, str):
        notes.append("PyTorch's workloads failed: " + peers)
        peers = {}
    for name, bench, _ in MICRO:
        if args.quick and not name.startswith("softmax"):
            continue
        row(name, lathe.get(bench, "-"), peers.get(name, "-"), "-")

    if torch is not None:
        model = resnet18(torch)
        with tempfile.TemporaryDirectory() as tmp:
            for batch in ([1] if args.quick else [1, 32]):
                x = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(31))
                path = os.path.join(tmp, "resnet18_b%d.onnx" % batch)
                why = export(torch, model, x, path)
                name = "resnet18 b%d (ONNX)" % batch
                if why:
                    notes.append("%s: the export failed: %s" % (name, why))
                    row(name, "-", "-", "-")
                    continue
                m = model.to(dev)
                xd = x.to(dev)
                sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
                with torch.no_grad():
                    eager = guarded(median_ms, lambda: m(xd), sync, args.runs)
                ort_ms = guarded(ort_model_ms, path, x.numpy(), args.runs) if dev == "cuda" else "no GPU"
                row(name, guarded(lathe_model_ms, args, path, args.runs), eager, ort_ms)
                model = model.to("cpu")

    for n in notes:
        print("note:", n)
    print("lathe %s on %s; ratios are lathe's time over the peer's (below 1: lathe is faster)" % (args.device, dev))


if __name__ == "__main__":
    sys.exit(main())
