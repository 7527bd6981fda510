#!/usr/bin/env bash
# Installs everything lathe needs to build and test on Debian 12, from Debian's own packages.
# Run as root (or with sudo available). Safe to run again: apt-get skips what is installed.
set -euo pipefail

packages=(
  build-essential   # g++ 12: the default compiler for the library
  clang             # clang 14: second compiler (sanitizer build) and the C kernel compiler at run time
  llvm-19-dev       # LLVM 19: the in-process JIT that compiles CPU kernels (the default backend; -DLATHE_LLVM=OFF builds without)
  cmake ninja-build # the build
  ccache            # keeps rebuilds of the two build directories fast
  libxxhash-dev     # xxHash: the stable structural hash of UOps (used header-only)
  libcli11-dev      # CLI11: argument parsing of the `lathe` command (header-only)
  nlohmann-json3-dev # nlohmann/json: writes Chrome traces (LATHE_TRACE, --trace) and reads them in tests (header-only)
  libonnx-dev libprotobuf-dev protobuf-compiler # the ONNX importer: ONNX's protobuf classes
  libonnx-testdata  # the ONNX backend test suite the importer is checked against
  libgtest-dev libgmock-dev # GoogleTest for the test suite
  libbenchmark-dev  # Google Benchmark for bench/
  python3-dev pybind11-dev # the Python package (python/): Debian's interpreter's headers and pybind11
  python3-numpy python3-pytest # what the Python package exchanges arrays with, and its tests
  libdlpack-dev     # DLPack's header: the Python package's zero-copy exchange with torch, numpy, ...
  python3-torch     # the Python Tensor API's tests compare against PyTorch
  libcpp-httplib-dev pkg-config # cpp-httplib: the HTTP server of `lathe serve` (found through its pkg-config file)
  curl python3-requests python3-yaml # real HTTP clients in `lathe serve`'s tests; the KServe manifest's check
)

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"
