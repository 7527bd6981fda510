// ExecutionPlan: prepare once, execute many. A plan owns its buffers and prepared operations;
// execute() runs them in dependency order, allocating and compiling nothing (the exceptions: the
// first run after release_*_buffers allocates the released memory again, and a host step,
// lathe/host_step.hpp, may allocate host memory while it runs).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "lathe/kernel.hpp"
#include "lathe/target.hpp"

namespace lathe {

/// Settings of one prepare(); a field left unset takes its default from the environment, so tests
/// and programs can build plans with different settings in one process.
struct PrepareOptions {
  std::optional<bool> optimize{};  // kernel optimizations (default: on, off with NOOPT=1)
  std::optional<int> threads{};    // the most threads one kernel uses (default: LATHE_THREADS, else the cores)
  std::string compiler{};          // the device's backend by name (default: LATHE_CPU_COMPILER, else its first: "llvm" on CPU where built with LLVM, else "clang")
  std::optional<bool> verify{};    // check each kernel's graph between codegen steps (default: LATHE_VERIFY; on in a debug build unless LATHE_VERIFY=0)
  std::optional<int> beam{};       // BEAM search width: actions chosen by timing, stored on disk (default: BEAM, else 0: off)
  std::optional<bool> share_memory{};  // intermediates share one arena by lifetime (default: on, off with LATHE_ARENA=0)
  std::optional<bool> poison{};    // fill each intermediate with 0xFF after its last use (default: LATHE_POISON=1, else off)
  std::optional<TargetShape> shape{};  // the machine the optimizer plans for (default: LATHE_TARGET_SHAPE, else the CPU compiled for)
};

/// A variable a kernel reads, with the bounds its values must stay in.
struct RuntimeVar {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;
};

/// One CachedKernel bound into a plan.
struct PreparedKernel {
  uint64_t id = 0;                                  // from the kernel's AST
  UOpPtr ast;
  std::shared_ptr<CachedKernel> kernel;             // shared with the kernel cache
  DeviceSpec device;
  std::vector<size_t> buffer_indices;               // into ExecutionPlan::buffers, kernel argument order
  std::vector<size_t> output_indices;               // positions within buffer_indices that are written
  std::vector<int64_t> vals;                        // positional variable values (order: kernel->var_names)
  std::unordered_map<std::string, int64_t> fixedvars;  // bound by the schedule; never overridden
  std::vector<uint64_t> dependencies;               // ids of ops that must finish first
  std::vector<uintptr_t> buffer_ptrs;               // raw addresses, computed once at prepare
  std::vector<BufferId> buffer_ids;
  std::vector<RuntimeVar> runtime_vars;             // every variable the AST reads, with bounds
  WorkCount work;                                   // kernel->estimates at the current variable values
  bool constant = false;                            // reads only constants: runs at prepare, not in execute()
  std::vector<std::string> labels;                  // what it computes: labels of the tensors fused into it (ONNX nodes)
};

struct PreparedCopy {
  uint64_t id = 0;
  size_t src = 0;  // buffer indices
  size_t dst = 0;
  std::vector<uint64_t> dependencies;
};

struct PreparedBufferView {
  uint64_t id = 0;
  size_t base = 0;  // buffer indices
  size_t view = 0;
  size_t offset_bytes = 0;  // where the view starts in its base
  std::vector<uint64_t> dependencies;
};

/// A host step (lathe/host_step.hpp) bound into a plan: it runs on the host when execute()
/// reaches it and sets the variables of the sizes it decides.
struct PreparedCustom {
  uint64_t id = 0;
  std::string name;
  std::vector<size_t> buffer_indices;  // its outputs (every one of the step's), then its inputs
  size_t num_outputs = 0;
  /// Runs the step on the buffers (in buffer_indices' order) at the variables' current values,
  /// and sets the variables in `sets`.
  std::function<void(std::vector<Buffer>&, std::unordered_map<std::string, int64_t>& vars)> fn;
  std::vector<uint64_t> dependencies;
  std::vector<RuntimeVar> runtime_vars;  // the variables its inputs' and outputs' shapes read
  std::vector<RuntimeVar> sets;          // the sizes each run decides
};

using PreparedOp = std::variant<PreparedKernel, PreparedCopy, PreparedBufferView, PreparedCustom>;

struct KernelProfile {
  std::shared_ptr<CachedKernel> kernel;
  std::string device;
  size_t num_buffers = 0;
  std::chrono::nanoseconds elapsed{0};
  WorkCount work;  // what the run did, from the kernel's estimates
  const PreparedKernel* prepared = nullptr;  // the plan's kernel that ran (labels, actions); valid while the plan lives
  double gflops() const { return elapsed.count() ? static_cast<double>(work.ops) / static_cast<double>(elapsed.count()) : 0.0; }
  double gbps() const { return elapsed.count() ? static_cast<double>(work.mem) / static_cast<double>(elapsed.count()) : 0.0; }
};

/// Where a plan's memory goes, in bytes. Intermediates (what only the plan's kernels touch) share
/// one arena by lifetime; the arena is near the peak live set, not their sum.
struct MemoryStats {
  size_t arena_bytes = 0;         // the memory the intermediates share (their sum when sharing is off)
  size_t intermediate_bytes = 0;  // what they would take with a buffer each (64-byte aligned)
  size_t peak_live_bytes = 0;     // the most intermediate bytes alive at one step (no arena can be smaller)
  size_t constant_bytes = 0;      // weights and what the plan folded from them at prepare
  size_t io_bytes = 0;            // inputs and outputs
};

class ExecutionPlan {
 public:
  ExecutionPlan();
  ~ExecutionPlan();
  ExecutionPlan(ExecutionPlan&&) noexcept;
  ExecutionPlan& operator=(ExecutionPlan&&) noexcept;

  /// The first (or only) output, or null for a plan without outputs.
  const Buffer* output_buffer() const;
  const Buffer* output_buffer_at(size_t position) const;
  std::vector<const Buffer*> output_buffers() const;
  size_t num_outputs() const;
  /// The buffer of a graph node (an input tensor's uop_id(), an output, an intermediate).
  const Buffer* buffer(uint64_t ast_id) const;
  Buffer* buffer_mut_by_id(uint64_t ast_id);
  const DeviceSpec& device() const;
  const std::vector<Buffer>& buffers() const;
  std::vector<Buffer>& buffers_mut();
  Buffer* buffer_at_mut(size_t index);
  std::vector<const PreparedKernel*> prepared_kernels() const;
  const std::vector<PreparedOp>& prepared_ops() const;
  std::vector<std::reference_wrapper<const CachedKernel>> kernels() const;

  void execute() const;
  std::vector<KernelProfile> execute_profiled() const;
  /// Rebinds variables (by name) and runs. Each value is checked against its variable's
  /// [min, max]; an unknown name, a value out of bounds or a size a host step decides throws
  /// Error before anything runs.
  void execute_with_vars(const std::vector<std::pair<std::string, int64_t>>& var_vals);
  std::vector<KernelProfile> execute_with_vars_profiled(const std::vector<std::pair<std::string, int64_t>>& var_vals);

  /// Every variable's value: as bound, and for the sizes a host step decides, as the last run set
  /// them (a plan output's shape at that run is its symbolic shape at these values).
  const std::unordered_map<std::string, int64_t>& variable_values() const;

  /// The work of one execute() at the current variable values: the kernels' estimates summed.
  WorkCount estimated_work() const;
  /// The plan's memory: arena, what it replaced, constants, inputs and outputs.
  const MemoryStats& memory_stats() const;

  size_t output_buffer_idx() const;
  /// Exchanges the memory of buffers `a` and `b` (indices into buffers()), as a loop hands its
  /// carried values from its outputs to its inputs without copying them: the next run reads and
  /// writes each where the other was. Returns false, changing nothing, where the two differ in
  /// dtype or size, either is a view, a view's base, an intermediate in the arena, a constant, or
  /// read by what the plan folded at prepare, or neither is written by the plan's run.
  bool swap_buffers(size_t a, size_t b);
  /// Whether the last execute() replayed its launches as one recorded submission (a CUDA Graph:
  /// a GPU plan of kernels alone, once a run launches the same addresses and values as one of the
  /// last two; LATHE_CUDA_GRAPH=0 turns it off) rather than launching each kernel.
  bool replayed_last_run() const;
  const std::unordered_map<uint64_t, size_t>& ast_to_buffer_map() const;
  /// Frees the memory of intermediate buffers and reports each one's AST id to `remove_fn`.
  void release_intermediate_buffers(const std::function<void(uint64_t)>& remove_fn) const;
  /// Same for every buffer, outputs included.
  void release_all_buffers(const std::function<void(uint64_t)>& remove_fn) const;

  struct Impl;

 private:
  friend class PlanBuilder;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lathe
