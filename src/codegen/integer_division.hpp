// Integer division defined for every divisor.
//
// x86 traps on an integer division by zero (and on the minimum value divided by -1), which would
// kill the process. A kernel divides by a loaded value where a model asks (ONNX Div and Mod on
// integers, as the shape arithmetic of Swin's window padding does), and it also divides where a
// gate has made the divisor 0: both sides of a WHERE are computed, and a gated load reads 0. So an
// integer IDIV or MOD whose divisor may be 0 (or -1, signed) divides by 1 there instead, and its
// result is 0 for a divisor of 0 (as numpy's) and -x (wrapping) and 0 for a divisor of -1.
// Divisors whose range excludes both (constants, loop indices) are left as they are.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

UOpPtr define_integer_division(const UOpPtr& ast);

}  // namespace lathe
