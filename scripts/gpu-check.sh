#!/usr/bin/env bash
# The checks that need an NVIDIA GPU (issue 42), in one run of at most 8 minutes ending in one
# table. Run from the repository root on the GPU machine, after scripts/build-gpu-kit.sh made
# gpu-kit/ on a Debian machine and both were copied there:
#   1. the tensor suite on CUDA, in parallel shards: every answer against its CPU reference;
#   2. the project's models on CUDA against ONNX Runtime's outputs (lathe test-onnx);
#   3. compute-sanitizer's memcheck over a few tensor tests on CUDA;
#   4. bench/gpu_compare.py: lathe beside PyTorch eager and ONNX Runtime on the same GPU.
# Logs go to gpu-check-out/. LATHE_GPU_CHECK_DEVICE=EMU runs the same flow on the GPU emulator
# (a dry run on a machine without a GPU; the sanitizer step is skipped there).
set -uo pipefail
cd "$(dirname "$0")/.."

KIT=${KIT:-gpu-kit}
OUT=${OUT:-gpu-check-out}
DEVICE=${LATHE_GPU_CHECK_DEVICE:-CUDA}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export LATHE_CACHE_DIR="$PWD/$OUT/cache"
if [[ ! -x "$KIT/bin/lathe" ]]; then echo "gpu-check: no $KIT/bin/lathe (run scripts/build-gpu-kit.sh first)"; exit 2; fi
with_kit() { LD_LIBRARY_PATH="$KIT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
now() { date +%s; }
rows=()
row() { rows+=("$(printf '%-34s %-8s %6ss  %s' "$1" "$2" "$3" "$4")"); }

command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
LATHE_DEVICE=$DEVICE with_kit "$KIT/bin/lathe" info 2>&1 | head -20

# 1. The tensor suite on the device, in shards (one process each, up to 8 at once).
t0=$(now)
shards=$(( $(nproc) < 8 ? $(nproc) : 8 ))
for ((i = 0; i < shards; ++i)); do
  (GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i LATHE_DEVICE=$DEVICE LATHE_VERIFY=1 LATHE_CPU_COMPILER=clang \
     timeout 240 env LD_LIBRARY_PATH="$KIT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$KIT/bin/tensor_tests" --gtest_brief=1 \
     > "$OUT/tensor_tests.$i.log" 2>&1; echo $? > "$OUT/tensor_tests.$i.rc") &
done
wait
failed=0
for ((i = 0; i < shards; ++i)); do [[ "$(cat "$OUT/tensor_tests.$i.rc")" == 0 ]] || failed=$((failed + 1)); done
passed=$(cat "$OUT"/tensor_tests.*.log | grep -c '^\[       OK \]' || true)
fails=$(cat "$OUT"/tensor_tests.*.log | grep '^\[  FAILED  \] [A-Za-z]' | grep -v 'listed below' | sort -u | head -5 | sed 's/.*\] //' | tr '\n' ' ')
row "tensor suite on $DEVICE" "$([[ $failed == 0 ]] && echo PASS || echo FAIL)" $(( $(now) - t0 )) \
  "$shards shards, $passed tests passed${fails:+; failed: $fails}"

# 2. The project's models against ONNX Runtime's outputs.
t0=$(now)
timeout 120 env LD_LIBRARY_PATH="$KIT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$KIT/bin/lathe" test-onnx tests/onnx/models --device "$DEVICE" \
  > "$OUT/models.log" 2>&1
rc=$?
row "models on $DEVICE (test-onnx)" "$([[ $rc == 0 ]] && echo PASS || echo FAIL)" $(( $(now) - t0 )) "$(tail -1 "$OUT/models.log")"

# 3. compute-sanitizer's memcheck: out-of-bounds and misaligned accesses, launch errors.
t0=$(now)
if [[ "$DEVICE" == CUDA* ]] && command -v compute-sanitizer > /dev/null; then
  LATHE_DEVICE=$DEVICE LATHE_CPU_COMPILER=clang timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
    env LD_LIBRARY_PATH="$KIT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$KIT/bin/tensor_tests" --gtest_brief=1 \
    --gtest_filter='ReduceSum.*:NnConv2d.*:NnSoftmax.*:NnMatmul.*:Float16.*' > "$OUT/sanitizer.log" 2>&1
  rc=$?
  row "compute-sanitizer memcheck" "$([[ $rc == 0 ]] && echo PASS || echo FAIL)" $(( $(now) - t0 )) "$(grep -m1 'ERROR SUMMARY' "$OUT/sanitizer.log")"
else
  row "compute-sanitizer memcheck" "SKIP" 0 "not on a GPU, or no compute-sanitizer"
fi

# 4. lathe beside PyTorch and ONNX Runtime on the same GPU.
t0=$(now)
quick=(); [[ "$DEVICE" == CUDA* ]] || quick=(--quick)
timeout 200 "$PYTHON" bench/gpu_compare.py --lathe "$KIT/bin/lathe" --lathe-bench "$KIT/bin/lathe_bench" --lib "$KIT/lib" \
  --device "$DEVICE" "${quick[@]}" > "$OUT/bench.log" 2>&1
rc=$?
row "benchmark beside PyTorch/ORT" "$([[ $rc == 0 ]] && echo DONE || echo FAIL)" $(( $(now) - t0 )) "table below"

echo
printf '%-34s %-8s %7s  %s\n' "check" "result" "time" "detail"
printf '%s\n' "${rows[@]}"
echo
cat "$OUT/bench.log"
