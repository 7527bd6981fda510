// Reductions as accumulators: the device-level form every renderer spells.
//
// REDUCE(op, x, r1..rn) becomes a register (a vector register for a vector value):
//
//   reg = DEFINE_REG(identity, ranges around the reduction...)  declared and set where it starts
//   STORE(INDEX(reg, 0), op(LOAD(INDEX(reg, 0), rn), x))           inside its loops
//   end = END(that store, r1..rn)                                   its loops close here
//   LOAD(INDEX(reg, 0), end)                                        its value, after the loops
//
// The extra sources order things: the load inside the loops depends on the innermost range, the
// one after them on the END. 16-bit floats accumulate in float and are rounded once, after.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

UOpPtr lower_reductions(const UOpPtr& ast);

/// A tensor-core reduction's accumulators as its multiply-add's C: where the 4 accumulators
/// of one WMMA(a, b, 0) each take `acc_i + GEP(wmma, i)` (opt/tensor_core, lowered above), the
/// WMMA reads them (WMMA(a, b, [acc_0..acc_3])) and each stores its element: one mma a step, no
/// adds after it.
UOpPtr fold_accumulators_into_wmma(const UOpPtr& ast);

}  // namespace lathe
