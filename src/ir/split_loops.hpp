// A loop read as a quotient and a remainder is two loops.
//
// A kernel gets one loop per axis of the tensor it stores. Where that axis joins two axes of what
// it reads, the addresses read the loop o only as `o / n` and `o % n`: a grouped convolution's
// output channels (group o / 8, channel in the group o % 8) index its input by group and its
// weight by both. Written as two loops q (size / n) and r (n), `o = q * n + r`, those divisions
// fold away, and the optimizer sees a loop the input does not read (a register row that reuses
// the input) and one the weight reads contiguously (a vector axis).
//
// A loop (output or reduction, of static size) is split by a divisor n of its size when the
// simplified kernel then divides less often by anything reading q or r than it did by anything
// reading o. The outer loop keeps o's axis, the inner takes the next one (later axes move up one),
// so the nest is as before. The inverse of ir/merge_loops, which leaves such a pair apart.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

UOpPtr split_divided_loops(const UOpPtr& ast);

}  // namespace lathe
