// The blocks the Tensor front end still stores values in when it builds the graph: a Winograd
// convolution's input channels (tensor/winograd.hpp; schedule/blocks.hpp says the widths). Every
// other layout is chosen later, by the schedule's layout pass, for the Target the plan is prepared
// for (schedule/channel_blocks.hpp, concat_blocks.hpp, column_blocks.hpp).
#pragma once

#include <cstdint>

#include "lathe/tensor.hpp"
#include "schedule/blocks.hpp"

namespace lathe::detail {

/// The blocks of the Target a graph built now is planned for: the default device's under a
/// prepare's default options (runtime's default_planning_target, with LATHE_TARGET_SHAPE). The
/// layouts Tensor ops pick read them when they are called; a plan prepared for another shape runs
/// them unchanged (correct, perhaps slower).
Blocks build_blocks();

/// `t` stored with its axis `axis` split into (n/B, B): the B elements of a block innermost in
/// memory, the block index at position `outer_at` among the other axes; viewed in t's shape with
/// that axis split (n/B, B), so a kernel indexes blocks and lanes without dividing a merged index
/// back into them. A vector kernel then loads a block of B along `axis` from one run of memory.
/// For a constant `t` (a model's weight) the copy is made once, at prepare.
Tensor stored_in_split_blocks(const Tensor& t, int64_t axis, int64_t block, int64_t outer_at);

}  // namespace lathe::detail
