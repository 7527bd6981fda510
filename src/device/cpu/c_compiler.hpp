// The CPU backend: C source -> shared object (clang, or cc as a fallback, as a subprocess) ->
// a loaded Program. Compiled objects are kept on disk under LATHE_CACHE_DIR, keyed by the
// source and the compiler's identity; a corrupt entry is detected and rebuilt.
#pragma once

#include <memory>
#include <string>

#include "lathe/program.hpp"

namespace lathe {

class CCompiler {
 public:
  /// The process-wide compiler: LATHE_CC, else clang, else cc.
  static const CCompiler& get();

  /// The compiler's path, version and flags: part of every kernel cache key.
  const std::string& identity() const { return identity_; }

  /// Compiles `spec.src` into a shared object (CompiledSpec::bytes). Throws CompileError with the
  /// compiler's output when it fails.
  CompiledSpec compile(const ProgramSpec& spec) const;

 private:
  CCompiler();
  std::string path_;
  std::string flags_;
  std::string identity_;
};

/// Loads a compiled shared object as an executable Program. `num_vals` is the number of
/// variables the kernel takes; when `threaded`, the last of them is the core id.
std::unique_ptr<Program> load_cpu_program(const CompiledSpec& compiled, size_t num_vals, bool threaded);

/// The directory of lathe's on-disk caches (LATHE_CACHE_DIR, else $XDG_CACHE_HOME/lathe, else
/// ~/.cache/lathe); empty when none can be used.
std::string cache_dir();

}  // namespace lathe
