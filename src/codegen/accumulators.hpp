// Reductions as accumulators: the device-level form every renderer spells.
//
// REDUCE(op, x, r1..rn) becomes a register array with one element per position of the upcast
// loops its value depends on (one element without them):
//
//   reg = DEFINE_REG(identity, ranges around the reduction...)  declared and set where it starts
//   STORE(INDEX(reg, i), op(LOAD(INDEX(reg, i), rn), x))           inside its loops
//   end = END(that store, r1..rn)                                   its loops close here
//   LOAD(INDEX(reg, i), end)                                        its value, after the loops
//
// The extra sources order things: the load inside the loops depends on the innermost range, the
// one after them on the END. 16-bit floats accumulate in float and are rounded once, after.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

UOpPtr lower_reductions(const UOpPtr& ast);

}  // namespace lathe
