#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs the dependencies, builds lathe
# and its tests with g++ (warnings are errors) and runs them on both CPU backends (the LLVM JIT
# and the C compiler); then builds again with clang under AddressSanitizer +
# UndefinedBehaviorSanitizer in build-asan/ and runs them there too.
# Set LATHE_SKIP_DEPS=1 to skip the apt-get step on a machine that already has everything.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${LATHE_SKIP_DEPS:-0}" != 1 ]]; then bash scripts/install-deps.sh; fi
jobs=$(nproc)

echo "== g++ build (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_WERROR=ON -DLATHE_BUILD_TESTS=ON \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== clang + ASan/UBSan build (build-asan/)"
# The sanitizers check lathe's own code, so this build runs the suite once, through the default
# CPU backend (the C backend's compiler and loader are still exercised by the device tests), at
# this CPU's target shape, with the optimizer fuzzer over the two small conformance folders (their
# convolutions, matmuls and pools); the g++ build above runs it through both backends, at every
# target shape, and fuzzes every folder and the model zoo (which would add 4 minutes here).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLATHE_SANITIZE=ON -DLATHE_WERROR=ON -DLATHE_BUILD_TESTS=ON \
  -DLATHE_TEST_BACKENDS=llvm -DLATHE_TEST_SHAPES= "-DLATHE_FUZZ_FOLDERS=pytorch-operator;simple" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
cmake --build build-asan -j "$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j "$jobs"
