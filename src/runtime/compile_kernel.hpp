// A kernel AST to a CachedKernel: the device's backend (device/backend.hpp) renders, compiles and
// loads it through the codegen pipeline (codegen/pipeline.hpp), once per process for each
// (AST, device, backend, settings): the process-wide kernel cache.
#pragma once

#include <exception>
#include <functional>
#include <memory>

#include "codegen/pipeline.hpp"
#include "lathe/kernel.hpp"
#include "lathe/plan.hpp"
#include "runtime/planning_target.hpp"

namespace lathe {

/// The codegen settings `options` asks for, its unset fields from the environment: the target is
/// `device` (the backend's) with the threads and the shape `options` (else LATHE_THREADS and
/// LATHE_TARGET_SHAPE) ask for.
KernelOptions kernel_options(const PrepareOptions& options, const Target& device = {});

/// The kernel of `ast` for `device`, with `opts` as its actions when given (else the heuristics').
std::shared_ptr<CachedKernel> compile_kernel(const UOpPtr& ast, const DeviceSpec& device, const PrepareOptions& options = {},
                                             const std::optional<std::vector<Opt>>& opts = std::nullopt);

/// One kernel to compile: an AST and, when given, the actions to apply (else the heuristics').
struct KernelRequest {
  UOpPtr ast;
  std::optional<std::vector<Opt>> opts;
};

/// Compiles every request at once across the thread pool and returns the kernels in order.
/// `done(n)` is called (under a lock) as each finishes, n counting them. A failure is rethrown
/// once all are done (the first in order), unless `errors` is given: then its slot holds the
/// failure and the kernel is null.
std::vector<std::shared_ptr<CachedKernel>> compile_kernels(const std::vector<KernelRequest>& requests, const DeviceSpec& device,
                                                           const PrepareOptions& options,
                                                           const std::function<void(size_t done)>& done = {},
                                                           std::vector<std::exception_ptr>* errors = nullptr);

/// The arguments of `kernel`, compiled from `bound.ast` (perhaps with other actions), on the
/// buffers and variable values `bound` has in its plan: made once, launched as often as wanted.
struct BoundLaunch {
  const CachedKernel* kernel = nullptr;
  std::vector<void*> buffers;
  std::vector<int64_t> vals;  // in kernel->var_names order (core_id 0: the program sets it)
  LaunchSize global{};
  void operator()() const { kernel->program->execute(buffers.data(), vals.data(), global, std::nullopt); }
  /// Runs it and returns the device's time (a GPU's events; Program::execute_timed).
  std::chrono::nanoseconds timed() const { return kernel->program->execute_timed(buffers.data(), vals.data(), global, std::nullopt); }
};
BoundLaunch bind_launch(const CachedKernel& kernel, const PreparedKernel& bound);

/// Binds and runs `kernel` once on `bound`'s buffers and values.
void launch_on(const CachedKernel& kernel, const PreparedKernel& bound);

}  // namespace lathe
