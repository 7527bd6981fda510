#!/usr/bin/env bash
# The checks that need an NVIDIA GPU (issue 42), in one run of at most 8 minutes, printing one
# table (each row as soon as it is known, so a run cut short still shows what it did). Run from
# the repository root on the GPU machine, after scripts/build-gpu-kit.sh made gpu-kit/ on a
# Debian machine and both were copied there:
#   1. the tensor suite on CUDA, in parallel shards: every answer against its CPU reference;
#   2. the project's models on CUDA against ONNX Runtime's outputs (lathe test-onnx);
#   3. the device-memory and NVRTC tests on the GPU; compute-sanitizer's memcheck over a few
#      tensor tests on CUDA;
#   4. bench/gpu_compare.py: lathe beside PyTorch eager and ONNX Runtime on the same GPU.
# Logs go to gpu-check-out/ (or $OUT). LATHE_GPU_CHECK_DEVICE=EMU runs the same flow on the GPU
# emulator: a dry run on a machine without a GPU (the sanitizer is skipped there).
set -uo pipefail
cd "$(dirname "$0")/.."

KIT=${KIT:-gpu-kit}
OUT=${OUT:-gpu-check-out}
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
case "$KIT" in /*) ;; *) KIT="$PWD/$KIT" ;; esac
DEVICE=${LATHE_GPU_CHECK_DEVICE:-CUDA}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export LATHE_CACHE_DIR="$OUT/cache"
if [[ ! -x "$KIT/bin/lathe" ]]; then echo "gpu-check: no $KIT/bin/lathe (run scripts/build-gpu-kit.sh first)"; exit 2; fi
now() { date +%s; }
printf '%-34s %-6s %6s  %s\n' "check" "result" "time" "detail"
row() { printf '%-34s %-6s %5ss  %s\n' "$1" "$2" "$3" "$4"; }
verdict() { [[ $1 == 0 ]] && echo PASS || echo FAIL; }
late() { [[ $1 == 124 ]] && echo "(timed out) "; }

# NVRTC: LATHE_NVRTC, else the toolkit's, else the one PyTorch's wheels bring.
if [[ -z "${LATHE_NVRTC:-}" ]]; then
  for candidate in /usr/local/cuda/lib64/libnvrtc.so /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda/lib64/libnvrtc.so.12 \
    $("$PYTHON" -c 'import glob, os, nvidia; print(" ".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib", "libnvrtc.so*")))))' 2> /dev/null); do
    if [[ -e "$candidate" ]]; then export LATHE_NVRTC="$candidate"; break; fi
  done
fi
echo "NVRTC: ${LATHE_NVRTC:-none found here, lathe searches its own list}"
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
LATHE_DEVICE=$DEVICE timeout 20 "$KIT/bin/lathe" info 2>&1 | grep -E '^(device|target):'

# 1. The tensor suite on the device, in shards (one process each, up to 8 at once).
t0=$(now)
shards=$(( $(nproc) < 8 ? $(nproc) : 8 ))
for ((i = 0; i < shards; ++i)); do
  (GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i LATHE_DEVICE=$DEVICE LATHE_VERIFY=1 LATHE_CPU_COMPILER=clang \
     timeout 130 "$KIT/bin/tensor_tests" --gtest_brief=1 > "$OUT/tensor_tests.$i.log" 2>&1
   echo $? > "$OUT/tensor_tests.$i.rc") &
done
wait
bad=0
for ((i = 0; i < shards; ++i)); do [[ "$(cat "$OUT/tensor_tests.$i.rc")" == 0 ]] || bad=$((bad + 1)); done
passed=$(cat "$OUT"/tensor_tests.*.log | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s += $1} END {print s + 0}')
failed=$(cat "$OUT"/tensor_tests.*.log | grep '^\[  FAILED  \] [A-Za-z]' | sed 's/^\[  FAILED  \] //; s/ (.*//' | sort -u)
nfailed=$(printf '%s' "$failed" | grep -c . || true)
first=$(printf '%s\n' "$failed" | head -4 | tr '\n' ' ')
timedout=""
for ((i = 0; i < shards; ++i)); do [[ "$(cat "$OUT/tensor_tests.$i.rc")" == 124 ]] && timedout=" (a shard timed out)"; done
row "tensor suite on $DEVICE" "$(verdict $bad)" $(( $(now) - t0 )) "$shards shards, $passed passed, $nfailed failed $first$timedout"

# 2. The project's models against ONNX Runtime's outputs.
t0=$(now)
timeout 80 "$KIT/bin/lathe" test-onnx tests/onnx/models --device "$DEVICE" > "$OUT/models.log" 2>&1
rc=$?
row "models on $DEVICE (test-onnx)" "$(verdict $rc)" $(( $(now) - t0 )) "$(late $rc)$(tail -1 "$OUT/models.log")"

# 3. The device's memory and NVRTC through their own tests; compute-sanitizer's memcheck.
t0=$(now)
timeout 40 "$KIT/bin/device_tests" --gtest_brief=1 --gtest_filter='DeviceMemory.*:Nvrtc.*:GpuTarget.*:CudaDevice.*' \
  > "$OUT/device_tests.log" 2>&1
rc=$?
row "device memory and NVRTC tests" "$(verdict $rc)" $(( $(now) - t0 )) "$(late $rc)$(grep -E '^\[  (PASSED|FAILED)  \] [0-9]' "$OUT/device_tests.log" | tr '\n' ' ')"
t0=$(now)
if [[ "$DEVICE" == CUDA* ]] && command -v compute-sanitizer > /dev/null; then
  LATHE_DEVICE=$DEVICE LATHE_CPU_COMPILER=clang timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$KIT/bin/tensor_tests" --gtest_brief=1 --gtest_filter='ReduceSum.*:NnConv2d.*:NnSoftmax.*:NnMatmul.*:Float16.*' > "$OUT/sanitizer.log" 2>&1
  rc=$?
  row "compute-sanitizer memcheck" "$(verdict $rc)" $(( $(now) - t0 )) "$(late $rc)$(grep -m1 'ERROR SUMMARY' "$OUT/sanitizer.log")"
else
  row "compute-sanitizer memcheck" "SKIP" 0 "not on a GPU, or no compute-sanitizer"
fi

# 4. lathe beside PyTorch and ONNX Runtime on the same GPU.
t0=$(now)
quick=()
[[ "$DEVICE" == CUDA* ]] || quick=(--quick)
timeout 140 "$PYTHON" -u bench/gpu_compare.py --lathe "$KIT/bin/lathe" --lathe-bench "$KIT/bin/lathe_bench" \
  --device "$DEVICE" "${quick[@]}" > "$OUT/bench.log" 2>&1
rc=$?
row "benchmark beside PyTorch and ORT" "$([[ $rc == 0 ]] && echo DONE || echo FAIL)" $(( $(now) - t0 )) "$(late $rc)below"
echo
cat "$OUT/bench.log"
