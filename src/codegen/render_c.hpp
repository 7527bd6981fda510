// The C renderer: a linearized kernel spelled as one C function,
//   void <name>(void** bufs, const long long* vals)
// with buffers as `restrict` pointers in slot order and variables (then the launch indices it
// reads) from vals. CUDA C (codegen/render_cuda.hpp) is spelled by the same code, as a dialect.
#pragma once

#include "codegen/renderer.hpp"

namespace lathe {

/// The languages of the C family lathe renders.
enum class CDialect { C, Cuda };

/// `program` spelled in `dialect`: C as above; CUDA C as render_cuda.hpp says.
std::string render_c_family(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig, CDialect dialect);

class CRenderer final : public Renderer {
 public:
  std::string language() const override { return "C"; }
  std::string render(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig) const override;
};

}  // namespace lathe
