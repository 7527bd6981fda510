// Gates as loop bounds: a reduction loop runs only where its gates hold.
//
// A convolution that reads its input through zero padding gates each input load on the tap being
// inside the image: for output row y and kernel row ky, `0 <= y + ky - p < H`. Where the gate is
// false the load gives 0, the product is 0 and the iteration adds nothing. When every reduction
// over a loop r is its identity unless a bound `r + rest < c` (or `r + rest >= c`) holds, and `rest`
// does not change inside the reductions' loops, the loop runs over exactly the iterations where
// the bound holds,
//
//   lo = max(0, c_lower - rest),  hi = min(N, c_upper - rest),  r = lo + r',  r' in [0, hi - lo)
//
// and the bound leaves every gate it appeared in. The loads it gated read unconditionally; a
// padded convolution then needs no padded copy of its input and no per-load test for its rows.
// "Identity unless" is followed through what keeps it: for a sum, a gated load is 0 where its gate
// is false and a product is 0 where either factor is; for any reduction, WHERE(c, x, identity).
// Sums of values keep only the bounds every term has. Results do not change: the iterations left
// out added the identity (a product with a non-finite weight aside, as under fast math).
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

UOpPtr gates_as_loop_bounds(const UOpPtr& ast);

}  // namespace lathe
