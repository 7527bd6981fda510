// The upcast optimization: register tiling for reductions.
//
// A reduction kernel whose innermost output axis is read contiguously inside the reduction (the
// columns of B in A @ B, the output pixels of a convolution) computes a tile of outputs at once:
// that axis is split into (outer, upcast) with a short upcast loop run innermost, so one pass
// over the reduction feeds a row of accumulators the C compiler keeps in vector registers. A
// second output axis is upcast too when some input does not depend on it, so its loads are
// reused across the tile.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

/// `ast` with its reduction upcast, or `ast` itself when the kernel does not qualify.
UOpPtr apply_upcast(const UOpPtr& ast);

}  // namespace lathe
