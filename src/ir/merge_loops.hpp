// Adjacent loops as one loop.
//
// A kernel gets one loop per axis of its output and of its reductions. Two loops where one nests
// directly in the other, whose indices every address and gate reads only as `outer * n + inner`
// (n the inner loop's size), are one loop over both: a concatenation's channels and pixels, an
// image's rows and columns in an elementwise kernel or a 1x1 convolution. A longer loop gives the
// optimizer a vector axis where neither size divides the vector width (54 x 54 pixels: 2916 is
// a multiple of 4 only, 128 x 2916 of 16) and fewer loops to run.
//
// A pair is merged when, with the two indices written as `m / n` and `m % n` over the new loop m,
// the kernel simplified (under its gates too: a concatenation's last part reads `m % 15` where
// `m >= 135`, which is `m - 135`) divides no more often by anything that reads m than it did by anything
// that read the pair: every division folded away. Output loops merge with the next output loop
// in the nest; a reduction's loops with the next loop of every reduction that runs over them.
// Loops of symbolic size stay as they are. The merged loop keeps the outer loop's axis.
#pragma once

#include <set>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

UOpPtr merge_adjacent_loops(const UOpPtr& ast);

/// A static ordinary loop that runs (an empty tensor's loop of 0 would divide by 0).
bool plain_loop(const UOp& range);

/// Whether a REDUCE in `order` (a toposort) runs over `range`: only then do its loop lists change
/// with it (ir/substitute's relist_reductions, a whole graph rewrite).
bool reduction_loop(const std::vector<UOpPtr>& order, const UOp& range);

/// Divisions (IDIV, MOD) in `order` (a toposort) whose operand reads one of `loops`: what merging
/// loops, and splitting them (ir/split_loops), must not increase.
size_t divisions_reading(const std::vector<UOpPtr>& order, const std::set<const UOp*>& loops);

}  // namespace lathe
