// The backends of NVIDIA GPUs: CUDA (kernels in CUDA C, compiled by NVRTC for the GPU's
// architecture) and the GPU emulator EMU (device/cuda/emulator.hpp), which runs the same GPU-shaped
// kernels on the CPU.
#pragma once

#include <vector>

#include "device/backend.hpp"

namespace lathe {

/// CUDA/nvrtc and EMU/cpu.
std::vector<Backend> cuda_backends();

}  // namespace lathe
