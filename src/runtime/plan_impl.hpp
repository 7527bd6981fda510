// The inside of an ExecutionPlan, shared by the plan's methods and the builder that fills it.
#pragma once

#include <atomic>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "device/device_memory.hpp"
#include "lathe/plan.hpp"

namespace lathe {

struct ExecutionPlan::Impl {
  DeviceSpec device;
  DeviceMemory* wait_on = nullptr;             // a device whose launches return early (not host-visible): waited for after each run
  std::vector<Buffer> buffers;
  std::vector<PreparedOp> ops;                 // in an order that respects every dependency
  std::vector<LaunchSize> launch;              // per op: the evaluated global size of kernels
  std::vector<size_t> outputs;                 // buffer indices, in output order
  std::vector<size_t> intermediates;           // buffer indices only kernels of this plan touch
  std::vector<uint64_t> buffer_ast_ids;        // per buffer: the graph node it holds
  std::unordered_map<uint64_t, size_t> ast_to_buffer;
  std::unordered_map<std::string, int64_t> var_values;  // current binding of every variable
  mutable std::atomic<bool> needs_pointers{false};      // set when buffers were released
  std::vector<size_t> executed;                // indices of the ops execute() runs, in order
  std::vector<size_t> folded;                  // indices of the kernels on constants only, run at prepare
  std::unordered_set<size_t> feeds_folded;     // buffers the folded kernels read or write
  mutable std::atomic<bool> constants_stale{false};     // set when such a buffer was handed out to write
  Buffer arena;                                // the memory the intermediates are views of (memory_plan.hpp)
  MemoryStats memory;
  std::vector<std::vector<size_t>> poison_after;  // per op: intermediates dead after it (empty unless LATHE_POISON)
  std::unordered_map<size_t, std::vector<size_t>> refresh_after;  // a host step's op -> the kernels that read a size it sets

  /// What swap_buffers may exchange, made at its first call: per buffer, whether it may move (no
  /// constant, view, view's base, arena intermediate, or what folding read or wrote), whether
  /// each run writes it, and the (op, argument) of every kernel that holds it.
  struct SwapTable {
    std::vector<bool> movable, written;
    std::vector<std::vector<std::pair<size_t, size_t>>> uses;
  };
  std::optional<SwapTable> swaps;

  // A GPU plan of kernels alone runs as one recorded submission (a CUDA Graph) once a run
  // launches the same addresses and values (its variables' among them, which size its grids) as one of the last
  // two; a recording is kept for each of the two (a loop's carried values swapped each iteration
  // alternate between two, as do two sizes a plan with variables is run at). Profiled, traced
  // and DEBUG runs launch each kernel.
  struct Recorded {
    std::vector<uintptr_t> args;           // every executed kernel's addresses and values
    std::unique_ptr<Recording> recording;  // null: launched once with these, not recorded yet
  };
  static constexpr size_t kKeptRecordings = 2;
  mutable std::vector<Recorded> recordings;   // the latest first
  mutable std::vector<uintptr_t> launched_args;  // this run's, kept between runs: no allocation once its size is reached
  mutable std::optional<bool> recordable;                  // decided at the first run
  mutable bool replayed_last = false;                      // what the last run did
  /// Replays (or records and replays) the executed kernels; false when this run must launch them.
  bool replayed() const;
  void build_swap_table();
  /// Recomputes every kernel's raw buffer pointers (allocating released buffers again).
  void refresh_pointers();
  /// Re-evaluates every kernel's launch size and positional values from var_values.
  void refresh_values();
  /// The same for the kernel at ops[i].
  void refresh_kernel(size_t i);
  /// Runs the folded kernels again if a buffer they touch was handed out for writing, then the
  /// others.
  void run(std::vector<KernelProfile>* profile) const;
  /// Runs the ops at `which` (indices into ops), in order.
  void run_ops(const std::vector<size_t>& which, std::vector<KernelProfile>* profile) const;
  /// The caller may write `buffer` (or, all_handed_out, any buffer): what was folded from it is
  /// computed again at the next run.
  void handed_out(size_t buffer);
  void all_handed_out();
};

}  // namespace lathe
