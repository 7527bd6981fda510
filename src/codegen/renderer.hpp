// A Renderer spells a linearized kernel in one language: kernel AST -> source, through the
// codegen pipeline (pipeline.hpp), which decides everything a second language would otherwise
// have to repeat (loops, accumulators, launch indices, 16-bit float casts, transcendentals).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// A kernel's arguments, in the order the runtime passes them: every kernel is called as
/// `name(void** bufs, const long long* vals)`.
struct KernelSignature {
  struct Buffer {
    size_t slot;    // bufs[slot]
    DType dtype;    // its elements
    bool written;   // stored to (else only read)
  };
  std::vector<Buffer> buffers;    // by slot
  std::vector<std::string> vars;  // vals[i]: the variables by name, then the launch indices it reads (kLaunchIndices's order)
  int64_t threads_per_block = 0;  // a GPU kernel's block (its launch bound); 0: not launched on a grid
  /// Whether its threads meet (it reads "sync": a GPU block's barrier, a warp's multiply-add).
  bool threads_meet() const { return std::find(vars.begin(), vars.end(), "sync") != vars.end(); }
};

class Renderer {
 public:
  virtual ~Renderer() = default;
  /// A short name for the language ("C"), for debugging output.
  virtual std::string language() const = 0;
  /// The source of kernel `name`: `program` is the linearized kernel (linearize.hpp).
  virtual std::string render(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig) const = 0;
};

/// `lowered` (a ProgramSpec::ast: the kernel after every codegen step) linearized and spelled by
/// `renderer` (codegen/pipeline.cpp): how the GPU emulator checks that the CUDA renderer spells
/// the kernel it runs with a CPU renderer.
std::string render_lowered(const std::string& name, const UOpPtr& lowered, const Renderer& renderer, int64_t threads_per_block = 0);

}  // namespace lathe
