// The C renderer: a linearized kernel spelled as one C function,
//   void <name>(void** bufs, const long long* vals)
// with buffers as `restrict` pointers in slot order and variables (then the core id) from vals.
#pragma once

#include "codegen/renderer.hpp"

namespace lathe {

class CRenderer final : public Renderer {
 public:
  std::string language() const override { return "C"; }
  std::string render(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig) const override;
};

}  // namespace lathe
