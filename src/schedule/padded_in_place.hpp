// A padded copy written in place.
//
// A kernel that only pads what another kernel stored copies it into a larger buffer with a
// border of one constant (a convolution's zero padding, read by a kernel that wants no gates).
// Instead, the producer's kernel writes its value straight into the padded buffer's interior,
// and the padded buffer's own kernel only fills it with the pad value, before the producer
// writes. That fill reads nothing, so the plan runs it once, at prepare (runtime/plan_builder),
// and every execute() writes only the interior: the border stays as filled. The producer's other
// readers (a residual sum) read it there too.
//
// Taken where the producer is a computed node the schedule stores, neither it nor the PAD is an
// output, both have static shapes, and the pad value is a constant; a producer padded twice is
// written into the first PAD. A PAD of a layout copy (a Winograd input in channel blocks, padded
// in them) takes the node the copy is a view of, which the kernel computing the value stores in
// the copy's layout (schedule/reader_layout): that kernel writes the padded buffer's interior,
// and the copy's readers read it there (schedule/buffer_assignment dissolves the copy).
// These are candidates: schedule/buffer_assignment also leaves out a producer whose reduction is
// split in two kernels and one that a view reads in its own layout.
#pragma once

#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"
#include "schedule/shape.hpp"

namespace lathe {

/// The stored nodes of `order` (a topological order of the graph, its SINK left out) whose
/// values are written into the buffer of a PAD of them: producer -> that PAD.
/// `realized` marks the stored nodes, `outputs` the nodes the caller reads.
std::unordered_map<const UOp*, UOpPtr> padded_in_place(const std::vector<UOpPtr>& order,
                                                       const std::vector<UOpPtr>& outputs,
                                                       const std::unordered_map<const UOp*, SymDims>& sym_shapes,
                                                       const std::unordered_map<const UOp*, bool>& realized);

}  // namespace lathe
