// The GPU emulator: a device ("EMU") that runs the kernels a GPU would run, on the CPU. Kernels
// are planned for a GPU's Target (device/cuda/gpu_target: sm_80 unless LATHE_CUDA_ARCH says) and
// lowered onto its grid and blocks like CUDA's, then spelled by the CPU backend with the launch
// indices as values: the emulator calls the kernel once per thread of every block, the blocks
// and each block's threads in reverse order (a kernel that relies on threads running in order
// fails). A kernel whose threads meet (a block's barrier, a warp's tensor-core multiply-add: it
// reads the launch value "sync") runs each block's threads as fibers instead, thread 0 first,
// each up to the next meeting (device/cuda/block_threads), so a missing barrier fails. Its buffers are host memory the host may not touch directly (as a GPU's: only kernels and
// copies reach them), so the tensor, runtime and ONNX suites run on it unchanged, compare with the
// CPU, and fail wherever lathe would read a GPU's memory as the host's. With LATHE_EMU_NVRTC=1 each kernel is also spelled in CUDA C and
// compiled by NVRTC for sm_80 and sm_90; a compile error or a spill fails the kernel's build.
#pragma once

#include "device/backend.hpp"

namespace lathe {

/// The emulator's backend (device "EMU", compiler "cpu").
Backend gpu_emulator_backend();

}  // namespace lathe
