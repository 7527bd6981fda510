// CachedKernel and the process-wide kernel cache: a compiled, executable kernel shared by every
// plan that needs it. Concurrent requests for one key compile once.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lathe/program.hpp"

namespace lathe {

struct CachedKernel {
  std::unique_ptr<Program> program;       // the compiled, executable program
  std::string device;                     // "CPU", "CUDA:0", ...
  std::string code;                       // generated source (debugging, profiling)
  std::string entry_point;
  std::vector<std::string> var_names;     // order of the positional `vals`
  std::vector<size_t> globals;            // buffer slots in argument order
  std::vector<size_t> outs;               // slots written by STORE
  std::vector<size_t> ins;                // slots read by LOAD
  bool host_parallel_safe = true;         // may run concurrently with other kernels
  std::array<UOpPtr, 3> global_size;      // symbolic launch size, evaluated at dispatch
  std::optional<std::array<UOpPtr, 3>> local_size;  // none: direct global-id execution
  Estimates estimates;                    // the work one execution does (see ProgramSpec)
  std::string opts;                       // the optimizer's actions (see ProgramSpec)
  double codegen_ms = 0;                  // building it in this process: the codegen pipeline, or reading its stored program
  double compile_ms = 0;                  // and the backend (compile or disk cache, load); a kernel shared through the
                                          // kernel cache keeps the times of the plan that built it
};

/// What identifies a kernel: the AST's structural hash plus device and compiler identity.
struct KernelKey {
  uint64_t ast_hash = 0;
  std::string device;
  std::string compiler;
  friend bool operator==(const KernelKey&, const KernelKey&) = default;
};

/// The cached kernel for `key` (which names `device`), compiling it with `compile_fn` on first
/// request. Requests that race for one key wait for a single compile. A failed compile throws to
/// the request that ran it and is not cached; requests that were waiting then compile again.
std::shared_ptr<CachedKernel> get_or_compile_kernel(const KernelKey& key, const std::string& device,
                                                    const std::function<std::shared_ptr<CachedKernel>()>& compile_fn);

struct KernelCacheStats {
  size_t entries = 0;   // kernels in the cache
  size_t compiles = 0;  // compile_fn calls that succeeded
  size_t hits = 0;      // requests served from the cache
};
KernelCacheStats kernel_cache_stats();
/// Drops every cached kernel (plans keep the kernels they hold).
void clear_kernel_cache();

}  // namespace lathe
