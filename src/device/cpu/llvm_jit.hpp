// The CPU's in-process backend: LLVM IR (codegen/render_llvm.hpp) -> optimised by O2's function
// passes for the target CPU -> a relocatable object (CompiledSpec::bytes, kept in the disk cache like the C
// backend's shared objects) -> linked into the process by LLVM's ORC JIT (LLJIT). No temporary
// files and no subprocess. Only built with LLVM (-DLATHE_LLVM=ON, the default).
#pragma once

#include <memory>
#include <string>

#include "device/backend.hpp"
#include "lathe/program.hpp"

namespace lathe {

class LlvmCompiler final : public Compiler {
 public:
  /// The process-wide compiler, building for LATHE_CPU_TARGET (an LLVM CPU name; default: this machine).
  static const LlvmCompiler& get();

  /// Builds for the CPU `target` ("native": this machine, with every feature it has). Throws
  /// CompileError when LLVM does not know the target.
  explicit LlvmCompiler(const std::string& target);

  /// LLVM's version, the optimisation settings, the CPU and a hash of its features.
  const std::string& identity() const override { return identity_; }

  /// Compiles `spec.src` (LLVM IR text) into an object file (CompiledSpec::bytes). Throws
  /// CompileError with LLVM's diagnostic when the IR does not parse or verify.
  CompiledSpec compile(const ProgramSpec& spec) const override;

  /// The same pipeline's assembly for `spec`, as LLVM prints it (a comment marks each spill and
  /// reload, and each innermost loop's header).
  std::string assembly(const ProgramSpec& spec) const override;

  Target target() const override { return target_; }

  /// Throws Error naming the features LLVM finds this machine lacks for the target CPU.
  void check_runs_here() const override;

 private:
  std::string cpu_;
  std::string features_;
  std::string identity_;
  Target target_;
  std::string cannot_run_;  // why its code cannot run here (empty: it can)
};

/// Links a compiled object into the process with the JIT and returns its kernel as a Program; the
/// code is freed with the Program. `num_vals`, `threaded` and `one_launch_at_a_time` as for
/// make_cpu_program.
std::unique_ptr<Program> load_llvm_program(const CompiledSpec& compiled, size_t num_vals, bool threaded, bool one_launch_at_a_time);

}  // namespace lathe
