// Memory planning: a plan's intermediate buffers share one arena by lifetime. Each intermediate
// lives from the first to the last operation of execute() that touches it (through itself or a
// view of it); two buffers whose lifetimes are disjoint may take the same bytes. Offsets are
// chosen greedily, largest buffer first, each at the lowest offset that overlaps no placed buffer
// alive at the same time (TFLite's "greedy by size", near the peak live set in practice).
#pragma once

#include <cstddef>
#include <vector>

#include "lathe/plan.hpp"

namespace lathe {

/// One buffer to place: its size and the steps it lives over (inclusive).
struct Lifetime {
  size_t bytes = 0;
  size_t first = 0;
  size_t last = 0;
};

/// Byte offsets for `buffers`, each aligned to `alignment`, such that two buffers whose lifetimes
/// intersect never overlap. `arena_bytes` receives the size the offsets need.
std::vector<size_t> place_by_lifetime(const std::vector<Lifetime>& buffers, size_t alignment, size_t& arena_bytes);

/// Leaves what the folded kernels touch out of impl.intermediates, then moves the intermediates
/// into one arena buffer by their lifetimes over impl.executed, rebuilds the views of them, and
/// fills impl.memory. With `share` false each
/// intermediate keeps its own memory (the stats still say what sharing would take). With `poison`
/// the plan fills each intermediate with 0xFF bytes after its last use in every execute().
void plan_memory(ExecutionPlan::Impl& impl, bool share, bool poison);

/// Whether intermediates share an arena (default: yes; LATHE_ARENA=0 turns it off) and whether
/// dead ones are poisoned (default: no; LATHE_POISON=1), from the options or the environment.
bool arena_enabled(const PrepareOptions& options);
bool poison_enabled(const PrepareOptions& options);

}  // namespace lathe
