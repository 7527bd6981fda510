// The CPU backend: C source -> shared object (clang, or cc as a fallback, as a subprocess) ->
// a loaded Program. Compiled objects are kept on disk under LATHE_CACHE_DIR, keyed by the
// source and the compiler's identity; a corrupt entry is detected and rebuilt.
#pragma once

#include <memory>
#include <string>

#include "device/backend.hpp"
#include "lathe/program.hpp"

namespace lathe {

class CCompiler final : public Compiler {
 public:
  /// The process-wide compiler: LATHE_CC, else clang, else cc, building for LATHE_CPU_TARGET.
  static const CCompiler& get();

  /// The compiler at `path` (a program name or path) building for the CPU `cpu` (a -march
  /// name on x86, a -mcpu name elsewhere; "native": this machine). Throws Error for a target that
  /// is not a plain name and CompileError when the compiler does not run or rejects the target.
  CCompiler(std::string path, std::string cpu);

  /// The compiler's path, version and flags, and a hash of the CPU features its target resolves
  /// to on this machine: part of every kernel cache key (in memory and on disk).
  const std::string& identity() const override { return identity_; }

  /// The CPU the kernels are built for: LATHE_CPU_TARGET (a -march/-mcpu name), else "native".
  const std::string& cpu() const { return cpu_; }

  /// Compiles `spec.src` into a shared object (CompiledSpec::bytes). Throws CompileError with the
  /// compiler's output when it fails.
  CompiledSpec compile(const ProgramSpec& spec) const override;

  /// From the target's predefined macros: AVX-512 64-byte vectors (32 registers), AVX 32 bytes
  /// (16), else 16 bytes (NEON: 32 registers).
  Target target() const override { return target_; }

  /// Throws Error naming the features the target's predefined macros have and this machine's
  /// (the compiler's -march=native) do not.
  void check_runs_here() const override;

 private:
  std::vector<uint8_t> build(const ProgramSpec& spec) const;  // one compiler run, no cache

  Target target_;
  std::string path_;
  std::string cpu_;
  std::string flags_;
  std::string identity_;
  std::string cannot_run_;  // why its code cannot run here (empty: it can)
};

/// Loads a compiled shared object as an executable Program. `num_vals` is the number of
/// variables the kernel takes; when `threaded`, the last of them is the core id.
std::unique_ptr<Program> load_cpu_program(const CompiledSpec& compiled, size_t num_vals, bool threaded, bool one_launch_at_a_time = false);

}  // namespace lathe
