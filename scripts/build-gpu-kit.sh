#!/usr/bin/env bash
# Builds, on a Debian 12 machine, what scripts/gpu-check.sh runs on a GPU machine that has none of
# Debian's libraries: lathe without LLVM (the CPU references there come from its C compiler
# backend), the tensor and device tests and the benchmarks, stripped, with the shared libraries
# they need but the C library's (protobuf, ONNX's classes, Google Benchmark, GCC's C++ runtime),
# in gpu-kit/.
# The GPU machine gets the working tree and gpu-kit/, and runs scripts/gpu-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# The programs find the kit's libraries beside them ($ORIGIN/../lib, a RUNPATH), so nothing they
# start (the C compiler, compute-sanitizer) inherits a library path meant for them.
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_LLVM=OFF -DLATHE_BUILD_TESTS=ON -DLATHE_BUILD_BENCH=ON \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ '-DCMAKE_BUILD_RPATH=$ORIGIN/../lib'
cmake --build build-gpu -j "$(nproc)" --target lathe_cli tensor_tests device_tests lathe_bench

rm -rf gpu-kit
mkdir -p gpu-kit/bin gpu-kit/lib
for f in build-gpu/tools/lathe build-gpu/tests/tensor_tests build-gpu/tests/device_tests build-gpu/bench/lathe_bench; do
  strip -o "gpu-kit/bin/$(basename "$f")" "$f"
done
# Every shared library they load but the C library's own (the GPU machine has those).
ldd gpu-kit/bin/* | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" gpu-kit/lib/; done
du -sh gpu-kit
