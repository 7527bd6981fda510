#!/usr/bin/env bash
# What scripts/make-test-models.py needs to (re)generate the whole-model ONNX tests: PyTorch and
# numpy from Debian (the exporter: torch.onnx.export; torchvision for the large CNNs) and node with ONNX Runtime's node binding
# (the reference outputs: scripts/ort-reference.js). onnxruntime-node goes into build/ort (git-ignored;
# ORT_DIR=... to put it elsewhere, then ORT_NODE_MODULES=$ORT_DIR/node_modules for the scripts).
# Its post-install script is skipped: it only downloads GPU extras, and the CPU build ships in the package.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ort_dir=${ORT_DIR:-$root/build/ort}
ort_version=${ORT_VERSION:-1.30.0}
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends python3-torch python3-torchvision python3-numpy time  # time: /usr/bin/time -v measures peak memory
# Debian's nodejs + npm, unless node and npm are already there: NodeSource's nodejs package bundles
# npm and conflicts with Debian's npm package.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends nodejs npm
fi
mkdir -p "$ort_dir"
npm install --prefix "$ort_dir" --ignore-scripts --no-audit --no-fund "onnxruntime-node@$ort_version"
node -e "const o = require('$ort_dir/node_modules/onnxruntime-node'); console.log('onnxruntime-node', o.env.versions ? o.env.versions.common : '', 'in $ort_dir')"
