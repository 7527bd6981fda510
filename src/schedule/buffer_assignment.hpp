// Where each stored value lives: one pass over the schedule.
//
// Every node the schedule stores has a buffer of its own unless its value can live in another's
// memory, which saves a kernel that would only copy it:
//   - a view: a contiguous reshape or shrink of a stored node needs no kernel at all;
//   - a padded interior (schedule/padded_in_place): a producer writes straight into the buffer of
//     its PAD, whose own kernel only fills the border;
//   - a concatenation run (schedule/concat_in_place): each part writes its run of the joined
//     buffer, and the joining kernel is dropped.
// The choices and which wins where two could apply are made here, in two steps: views and padded
// interiors before the kernels are lowered (a kernel that writes or reads a padded interior
// indexes the PAD's buffer), concatenations after (they are recognized on the joining kernel).
// The result is Schedule::placements; the runtime allocates a buffer for every other stored node
// and makes each placed one a view of its base.
#pragma once

#include <unordered_map>
#include <vector>

#include "schedule/schedule.hpp"

namespace lathe {

/// The views and padded interiors among the stored nodes of `order` (a topological order of the
/// graph, its SINK left out; `realized` marks the stored nodes, `outputs` those the caller reads).
/// A view that is a padded interior's producer whole (its layout copy) is no longer stored: it is
/// unmarked in `realized`, and its readers read the producer where it is written.
std::unordered_map<const UOp*, Placement> place_before_lowering(const std::vector<UOpPtr>& order,
                                                                const std::vector<UOpPtr>& outputs,
                                                                const Schedule& sched,
                                                                std::unordered_map<const UOp*, bool>& realized);

/// The concatenations among sched's kernels whose parts can write their runs in place: each part
/// is placed in the joined buffer, and the joining kernel is removed from sched.items.
void place_concatenations(Schedule& sched);

}  // namespace lathe
