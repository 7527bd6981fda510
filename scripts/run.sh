#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: installs the dependencies, builds lathe and runs
# the `lathe` command. Extra arguments go to `lathe` (default: `run`, the built-in model).
# Set LATHE_SKIP_DEPS=1 to skip the apt-get step on a machine that already has everything.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${LATHE_SKIP_DEPS:-0}" != 1 ]]; then bash scripts/install-deps.sh; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_BUILD_TESTS=OFF
cmake --build build -j "$(nproc)" --target lathe_cli
if [[ $# -eq 0 ]]; then set -- run; fi
exec build/tools/lathe "$@"
