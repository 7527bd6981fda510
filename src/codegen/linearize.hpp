// linearize: orders a kernel AST into a flat list of instructions inside explicit loops.
//
// Each node is placed in the innermost loop among the RANGEs it depends on, so loop-invariant
// work is computed once outside the loops that do not need it. Output ranges nest in axis order;
// a REDUCE opens its own ranges at the point where it is used, accumulating in the innermost.
#pragma once

#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

struct Instr {
  enum class Kind : uint8_t {
    Node,        // compute `u` (an ALU op, LOAD, STORE, ...)
    Open,        // begin the loop over RANGE `u`
    Close,       // end the loop over RANGE `u`
    AccInit,     // declare REDUCE `u`'s accumulator with the identity of its op
    Accumulate,  // fold REDUCE `u`'s source into its accumulator
  };
  Kind kind;
  UOpPtr u;
};

/// RANGE args are {axis} or {axis, kind}; an upcast range is a short loop the optimizer made
/// to be run innermost, its reductions accumulating into arrays indexed by it.
inline constexpr int64_t kRangeUpcast = 1;
bool is_upcast_range(const UOp& r);

/// The instructions of `sink` (a SINK of STOREs). Throws InternalError for a kernel with more
/// than 64 ranges.
std::vector<Instr> linearize(const UOpPtr& sink);

}  // namespace lathe
