// linearize: orders a lowered kernel (reductions already accumulators, see accumulators.hpp) into
// the flat program every renderer spells.
//
// The program lists what is computed at a point, in order: RANGE opens a loop over [0, its end),
// END closes the loop of each RANGE among its sources, and every other entry (ALU ops, CAST,
// BITCAST, LOAD, STORE, DEFINE_REG) computes its value where it stands. Parameters and plain
// values (DEFINE_GLOBAL, DEFINE_VAR, SPECIAL, CONST, INDEX) are not listed: a renderer spells them
// where they are used. Each node is placed in the innermost loop among the RANGEs it depends on,
// so loop-invariant work is computed once outside the loops that do not need it; output loops nest
// by axis; an END's loops open where the END is placed. Upcast loops are gone by now
// (codegen/expand.hpp): every RANGE is an ordinary loop.
#pragma once

#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// The program of `sink` (a SINK of STOREs). Throws InternalError for more than 64 loops.
std::vector<UOpPtr> linearize(const UOpPtr& sink);

/// Whether `op` is spelled where it is used rather than listed in a program.
bool is_inline(Ops op);

}  // namespace lathe
