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

#include "lathe/target.hpp"
#include "schedule/constants.hpp"
#include "schedule/schedule.hpp"

namespace lathe {

/// What a schedule is planned for: the machine its kernels run on (the plan's Target: the layouts
/// values are stored in follow from its vector lanes) and which BUFFER nodes hold constants (a
/// copy of one in another layout is made once, at prepare). runtime/planning_target makes it.
struct ScheduleContext {
  Target target;
  IsConstantBuffer constant;
};

/// Schedules the computation of `outputs` (tensor-graph nodes) for `context`.
Schedule create_schedule(const std::vector<UOpPtr>& outputs, const ScheduleContext& context);

}  // namespace lathe
