// A concatenation written in place.
//
// A kernel that only joins stored parts, each a contiguous run of its output in order, copies
// memory: a concatenation along the outermost axis of memory (two convolutions' channels at
// batch 1, in NCHW or in channel blocks: a SqueezeNet fire module). Instead, each part's kernel
// writes its run of the output directly: the part's buffer is a view of the output's at the run's
// offset, and the joining kernel is not run at all.
//
// Recognized on the kernel's AST as the optimizer sees it (adjacent loops merged): one output loop
// m over [0, n), stored at m, whose value is a sum of loads, load k reading buffer k at m - lo_k
// under a gate that holds exactly for m in [lo_k, hi_k), buffer k holding hi_k - lo_k elements of
// the output's type, the runs tiling [0, n) in order. Taken (schedule/buffer_assignment) where
// each part is computed by a kernel of its own and neither a part nor the join is an output or a
// padded copy.
#pragma once

#include <optional>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

struct ConcatPart {
  size_t slot;     // the part's buffer slot in the kernel
  int64_t offset;  // where its run starts in the output, in elements
};

/// The parts of `ast` when it is such a concatenation, in order; nothing otherwise.
std::optional<std::vector<ConcatPart>> concatenated_parts(const UOpPtr& ast);

}  // namespace lathe
