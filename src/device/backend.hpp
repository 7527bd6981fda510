// Backends: how a kernel reaches a device. A backend is a Renderer (kernel AST -> ProgramSpec,
// codegen/), a Compiler (ProgramSpec -> CompiledSpec), a loader (CompiledSpec -> Program) and the
// device's memory (device/device_memory: allocation, copies, synchronisation), registered in one
// table by device type and compiler name. The runtime looks backends up and
// names none; lathe's own register themselves on the first lookup.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/renderer.hpp"
#include "device/device_memory.hpp"
#include "lathe/program.hpp"
#include "lathe/target.hpp"

namespace lathe {

class Compiler {
 public:
  virtual ~Compiler() = default;
  /// What the compiled code depends on besides the source (compiler, version, flags, target CPU):
  /// part of every kernel cache key.
  virtual const std::string& identity() const = 0;
  /// Throws CompileError with the compiler's output when it fails.
  virtual CompiledSpec compile(const ProgramSpec& spec) const = 0;
  /// The machine code compile() makes of `spec`, as assembly text (DEBUG=6; the spill audit,
  /// bench/spills.py); empty where the compiler cannot say. Not cached.
  virtual std::string assembly(const ProgramSpec& /*spec*/) const { return {}; }
  /// The machine the code it builds runs on (every stage plans for it; lathe/target.hpp).
  virtual Target target() const { return {}; }
  /// Throws Error naming what this machine lacks when the code it builds cannot run here (built
  /// for a CPU with features this one does not have). Backends call it before loading code,
  /// whether just built or read from the disk cache.
  virtual void check_runs_here() const {}
};

/// Makes the executable Program of a compiled kernel (`spec` is what it was compiled from).
using ProgramLoader = std::function<std::unique_ptr<Program>(const CompiledSpec& compiled, const ProgramSpec& spec)>;

struct Backend {
  std::string device;    // the DeviceSpec::type it serves: "CPU"
  std::string compiler;  // its name among that device's backends: "clang"
  std::function<const Renderer&()> renderer;  // made on first use
  std::function<const Compiler&()> compile;   // made on first use; throws CompileError when unusable
  ProgramLoader load;
  std::function<DeviceMemory&(int index)> memory;  // device `index`'s memory; throws Error naming why it has none
  std::function<std::string(int index)> describe;  // what this process finds of device `index` (a GPU's name, or why it cannot be used); none: its name
};

/// Adds `backend`, replacing one with the same device and compiler name.
void register_backend(Backend backend);

/// The backend for `device` named `compiler` (empty: the one LATHE_<TYPE>_COMPILER names, e.g.
/// LATHE_CPU_COMPILER=clang, else the device's first). Throws Error naming the device's backends
/// when none fits.
const Backend& find_backend(const DeviceSpec& device, const std::string& compiler = "");


}  // namespace lathe
