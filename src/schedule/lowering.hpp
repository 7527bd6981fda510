// Lowering (rangeify): one stored node's value as a kernel AST.
//
// The tensor graph under a stored node becomes index arithmetic over loop RANGEs: one loop per
// output axis, movement ops as index expressions (RESHAPE by division and remainder, PAD as a gate
// and a select), a reduction as REDUCE over loops of its axes, and every node another kernel
// stores (or a BUFFER) read by a LOAD from its buffer slot, in its own layout or in the interior
// of the PAD whose buffer it is written into (Schedule::placements).
#pragma once

#include <unordered_map>
#include <vector>

#include "schedule/schedule.hpp"

namespace lathe {

/// The kernel AST that stores `root`'s value, reading each node of `realized` (other than root)
/// from a buffer (a node placed in a PAD's interior from the PAD's). `bufs` receives the slot order.
UOpPtr lower_kernel(const UOpPtr& root, const Schedule& sched, const std::unordered_map<const UOp*, bool>& realized,
                    std::vector<UOpPtr>& bufs);

/// The kernel that fills the buffer of `pad` (a PAD whose producer writes its interior) with its
/// pad value, reading nothing.
UOpPtr lower_fill(const UOpPtr& pad, const Schedule& sched, const std::unordered_map<const UOp*, bool>& realized,
                  std::vector<UOpPtr>& bufs);

}  // namespace lathe
