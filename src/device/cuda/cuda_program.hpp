// A CUDA kernel on a GPU: its CUBIN loaded as a module (cuModuleLoadData) on the device the spec
// names, launched with cuLaunchKernel over the spec's grid and blocks on the default stream (so
// the copies after it wait for it), its parameters the buffers' device addresses and then the
// kernel's variables, as the CUDA renderer declares them. Timed with a pair of events.
#pragma once

#include <memory>

#include "lathe/program.hpp"

namespace lathe {

/// Loads `compiled` (CompiledSpec::bytes: a CUBIN or PTX) for `spec`; throws Error naming the
/// kernel and the driver's error where it cannot (no GPU, an architecture the GPU is not).
std::unique_ptr<Program> load_cuda_program(const CompiledSpec& compiled, const ProgramSpec& spec);

}  // namespace lathe
