// 16-bit floats as storage only: every operation on them is done in float.
//
// Kernels store float16 and bfloat16 values as 16-bit integers and compute in float, whatever the
// CPU supports (renderers spell the conversions). Every ALU operation with a 16-bit float operand
// or result is rewritten as the float operation on widened operands, its result cast back to its
// 16-bit type where it was one. So each result is rounded where the graph says it is: answers do
// not depend on which operations share a kernel, and for + - * / and sqrt they equal native half
// arithmetic (float has more than twice the bits). Afterwards 16-bit floats appear only in loads,
// stores, casts, bitcasts and constants.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

UOpPtr round_half_arithmetic(const UOpPtr& ast);

/// What a reduction of `d` accumulates in: float (as many lanes) for 16-bit floats, else `d`.
/// Every step that builds an accumulator or combines partial results uses it, so a value is
/// rounded to 16 bits once, when the reduction's result is used.
inline DType accumulator_dtype(DType d) { return is_16bit_float(d) ? dtypes::float32.vec(d.count()) : d; }

}  // namespace lathe
