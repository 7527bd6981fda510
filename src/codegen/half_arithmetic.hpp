// 16-bit float arithmetic as float arithmetic, rounded after every operation.
//
// Kernels store float16 and bfloat16 values as 16-bit integers and compute in float, whatever the
// CPU supports (see the C renderer's conversions). A half-precision operation is rewritten as the
// float operation on widened operands, followed by a CAST back to its 16-bit type, so every result
// is rounded where the graph says it is: answers do not depend on which operations share a kernel,
// and for + - * / and sqrt they equal native half arithmetic (float has more than twice the bits).
// Operations that only pick one of their inputs (max, where, negation) need no rounding.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

/// `ast` with each rounding float16/bfloat16 operation made explicit as described above.
UOpPtr round_half_arithmetic(const UOpPtr& ast);

}  // namespace lathe
