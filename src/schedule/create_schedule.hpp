// The scheduler: turns a tensor graph into an ordered list of kernels and buffer views.
//
// It decides which nodes are stored to buffers (realize points: the outputs, BUFFERs,
// CONTIGUOUS, reductions whose result is read again across the axis they reduced or from more
// than one place, and large reductions into few outputs, which split into threaded partials and
// a final reduce), then lowers each stored node to a kernel AST: a SINK of one STORE whose value
// reads its inputs through index arithmetic over loop RANGEs. Movement ops become that index
// arithmetic; elementwise chains and the reductions they feed fuse into one kernel. A stored node
// that is only a contiguous reshape or shrink of another buffer becomes a view of it instead, and
// where each value lives is decided in one pass (schedule/buffer_assignment).
#pragma once

#include <vector>

#include "schedule/schedule.hpp"

namespace lathe {

/// Schedules the computation of `outputs` (tensor-graph nodes).
Schedule create_schedule(const std::vector<UOpPtr>& outputs);

}  // namespace lathe
