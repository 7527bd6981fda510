// The Target of an NVIDIA GPU, from its architecture (sm_80: A100, sm_90: H100/H200): what the
// optimizer and the code generator plan a GPU kernel for. The emulator (device/cuda/emulator)
// plans for the same Target, so its kernels are the ones a GPU would run.
#pragma once

#include <string>

#include "lathe/target.hpp"

namespace lathe {

/// The Target of compute capability `sm` (80, 86, 89, 90, ...): 16-byte loads a thread, blocks of
/// up to 1024 threads, 48 KB of static shared memory a block, float16/bfloat16 tensor cores
/// (m16n8k16). Throws Error below sm_75, which CUDA 13 no longer builds for.
Target gpu_target(int sm);

/// 80 for "sm_80", "80", "8.0"; throws Error naming `text` for anything else.
int parse_gpu_arch(const std::string& text);

}  // namespace lathe
