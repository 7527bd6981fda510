// exp2, log2 and sin in float32 as polynomials in plain arithmetic (Cephes-style range reduction
// and minimax polynomials, branch-free), for targets without fast vectorizable instructions for
// them: a libm call per element keeps a loop from vectorizing. exp2 is within 1 ulp; log2 and sin
// within about 1e-7 absolute. Other dtypes keep the ops (a renderer spells float64 with libm).
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

UOpPtr decompose_transcendentals(const UOpPtr& ast);

}  // namespace lathe
