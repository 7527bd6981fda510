// The LLVM IR renderer: a linearized kernel spelled as LLVM IR text, for the in-process JIT
// (device/cpu/llvm_jit.hpp). The module defines the same entry point as the C renderer,
//   void <name>(ptr bufs, ptr vals)
// which loads the buffers and values and calls the kernel's body, an always-inlined function
// whose buffer arguments are `noalias` and aligned to their element (what `restrict` says in C).
// Arithmetic matches the C backend's flags: floats with `reassoc nsz contract` (clang's
// -fassociative-math -fno-signed-zeros -ffp-contract=fast), integers wrapping (-fwrapv), integer
// types narrower than 32 bits divided and shifted as C promotes them. 16-bit floats are stored as
// i16 and converted as the C prelude does (round to nearest even; float64 through round-to-odd).
// The module names no target: the compiler sets the triple and data layout of the CPU it builds for.
#pragma once

#include "codegen/renderer.hpp"

namespace lathe {

class LlvmRenderer final : public Renderer {
 public:
  std::string language() const override { return "LLVM IR"; }
  std::string render(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig) const override;
};

}  // namespace lathe
