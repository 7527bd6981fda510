// The CUDA renderer: a linearized kernel, lowered for a GPU's grid (codegen/launch_grid), spelled
// as one CUDA C kernel for NVRTC,
//   extern "C" __global__ void __launch_bounds__(threads per block, 1) <name>(buffers..., variables...)
// with buffers as `__restrict__` pointers in slot order, then the variables by value; launch
// indices are blockIdx and threadIdx. The launch bound's second number (one block a
// multiprocessor at least) lets ptxas give a thread the registers it needs rather than spill to
// reach an occupancy it guesses (a kernel of 64-thread blocks got 48 registers and spilled).
// Loops are unrolled by 4 at most (`#pragma unroll 4`): the optimizer unrolls what it means to
// (UPCAST, UNROLL), and ptxas, left alone, unrolled every constant loop of Swin-T's relative-bias
// gather (18 loops of 9 to 49 trips) into 255 registers and 32 bytes of spills; by 4, 54 registers. Values are scalars (the GPU Target's widest vector is 1);
// 16-bit floats are stored as their bits and computed in float, as in C.
#pragma once

#include "codegen/render_c.hpp"

namespace lathe {

class CudaRenderer final : public Renderer {
 public:
  std::string language() const override { return "CUDA C"; }
  std::string render(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig) const override {
    return render_c_family(name, program, sig, CDialect::Cuda);
  }
};

}  // namespace lathe
