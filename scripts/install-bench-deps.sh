#!/usr/bin/env bash
# What bench/compare.py needs beyond the build: the peers it measures lathe against (numpy and
# PyTorch from Debian, on OpenBLAS as the anchors measured them), gcc for the STREAM probe, and wrk
# (bench/serve.py's load generator).
set -euo pipefail
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends python3-numpy python3-torch python3-threadpoolctl libopenblas0-pthread gcc wrk
