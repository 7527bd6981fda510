// What a renderer produces (ProgramSpec), what a compiler produces (CompiledSpec), and the
// executable Program a runtime factory makes of it. The field lists follow the seed documents.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lathe/device.hpp"
#include "lathe/uop.hpp"
#include "lathe/variable.hpp"

namespace lathe {

using LaunchSize = std::array<size_t, 3>;

/// The launch indices a kernel may read, in the order they follow its variables in `vals`: a GPU's
/// block and thread indices per dimension, a CPU kernel's core id, and "sync", where a GPU kernel's
/// threads meet (its block's barrier, a warp's tensor-core multiply-add): the GPU's own hardware,
/// a hook of the emulator's (device/cuda/block_threads) when the CPU runs the kernel. The runtime
/// passes none of them (a CPU program sets the core id; a GPU or its emulator the others).
inline constexpr const char* kLaunchIndices[] = {"gidx0", "gidx1", "gidx2", "lidx0", "lidx1", "lidx2", "core_id", "sync"};
/// Whether `name` is one of kLaunchIndices.
bool is_launch_index(const std::string& name);

/// A kernel's work at given variable values.
struct WorkCount {
  int64_t ops = 0;        // ALU operations on values (what GFLOP/s counts; a MULACC is two)
  int64_t index_ops = 0;  // ALU operations computing addresses and gates
  int64_t lds = 0;        // bytes moved by loads and stores, every execution counted
  int64_t mem = 0;        // bytes of the buffers read or written, each at most once (what GB/s counts)
  WorkCount& operator+=(const WorkCount& o);
};

/// A kernel's work as counted from its code when it is rendered (tinygrad's ProgramSpec
/// estimates): each operation times the trip counts of the loops around it. Index expressions of
/// the kernel's variables when its loop sizes are symbolic, constants otherwise; null: not counted.
struct Estimates {
  UOpPtr ops, index_ops, lds, mem;
  /// The counts at these variable values (each variable the expressions read must be given).
  WorkCount at(const std::unordered_map<std::string, int64_t>& vars = {}) const;
};

/// A rendered kernel: source code plus everything needed to compile and call it.
struct ProgramSpec {
  std::string name;                       // kernel name (debugging, profiling)
  std::string src;                        // generated source (C, LLVM IR, CUDA C, ...)
  DeviceSpec device;
  UOpPtr ast;                             // the kernel AST it was rendered from (cache key)
  std::optional<LaunchSize> global_size;  // GPU grid, or [threads, 1, 1] for threaded CPU kernels
  std::optional<LaunchSize> local_size;   // GPU block
  std::vector<Variable> vars;             // the symbolic variables the kernel reads
  std::vector<std::string> var_names;     // positional order of `vals`: variables, then launch indices (kLaunchIndices)
  std::vector<size_t> globals;            // buffer slots, in argument order
  std::vector<size_t> outs;               // slots written by STORE
  std::vector<size_t> ins;                // slots read by LOAD and not written
  size_t buf_count = 0;                   // number of buffer arguments
  Estimates estimates;                    // the work it does
  std::string opts;                       // the optimizer's actions applied ("UPCAST(1, 16) THREAD(0, 2)"), empty: none
  bool shared_scratch = false;            // its cores share scratch memory (a grouped reduction): one launch at a time

  ProgramSpec() = default;
  ProgramSpec(std::string name, std::string src, DeviceSpec device, UOpPtr ast);
  void add_var(Variable var);
  void set_work_sizes(LaunchSize global, LaunchSize local);
  void set_var_names(std::vector<std::string> names);
  void set_buffer_metadata(std::vector<size_t> globals, std::vector<size_t> outs, std::vector<size_t> ins);
};

/// A compiled kernel: source for JIT backends, bytes (a shared object, PTX, ...) for AOT ones.
struct CompiledSpec {
  std::string name;                  // entry point
  std::optional<std::string> src;    // set for JIT backends
  std::vector<uint8_t> bytes;        // set for AOT backends
  UOpPtr ast;
  std::vector<std::string> var_names;
  std::optional<LaunchSize> global_size;
  std::optional<LaunchSize> local_size;
  size_t buf_count = 0;

  static CompiledSpec from_source(std::string name, std::string src, UOpPtr ast, size_t buf_count);
  static CompiledSpec from_bytes(std::string name, std::vector<uint8_t> bytes, UOpPtr ast);
  static CompiledSpec from_source_with_sizes(std::string name, std::string src, UOpPtr ast,
                                             std::optional<LaunchSize> global_size,
                                             std::optional<LaunchSize> local_size, size_t buf_count);
};

/// An executable kernel. Thread-safe and reentrant: one Program may run on many threads at once.
class Program {
 public:
  virtual ~Program() = default;
  /// Runs the kernel over `global` launch indices (CPU: core ids 0..global[0]-1, passed as the
  /// last of `vals`). `buffers` holds one pointer per buffer argument, `vals` one value per
  /// variable name.
  virtual void execute(void* const* buffers, const int64_t* vals, const LaunchSize& global,
                       const std::optional<LaunchSize>& local) const = 0;
  /// Runs like execute() and returns how long the device took: the host's clock around execute()
  /// unless the backend measures better (a GPU's events: its execute() returns before the kernel ends).
  virtual std::chrono::nanoseconds execute_timed(void* const* buffers, const int64_t* vals, const LaunchSize& global,
                                                 const std::optional<LaunchSize>& local) const;
};

}  // namespace lathe
