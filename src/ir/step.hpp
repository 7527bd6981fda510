// How an index expression moves along a loop: whether it varies with a RANGE at all, and by how
// much it steps when the RANGE steps by one. The optimizer judges contiguity with it, the vector
// pass finds its lanes with it.
#pragma once

#include <optional>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// Whether `u`'s value changes with the loop `r`: it reads `r` other than inside a reduction
/// over `r` (whose result is the same for every position of `r`).
bool varies_with(const UOpPtr& u, const UOp* r);

/// How far `x` moves when the loop `r` steps by one: 0 when it does not vary with `r` (or `r`
/// runs at most once), nothing when the step is not the same across `r`'s range.
std::optional<int64_t> step_along(const UOpPtr& x, const UOpPtr& r);

/// How far `x` moves from the second to the third position of the loop `r`, each loop of
/// `ranges` other than `r` at its second: the step inside the loops, away from the clamps at a
/// padded loop's edges that leave step_along with no answer. 0 for a loop of fewer than three
/// positions; nothing where that difference is no constant.
std::optional<int64_t> step_inside(const UOpPtr& x, const UOpPtr& r, const std::vector<UOpPtr>& ranges);

/// The terms an integer expression (an index, an offset) sums: the operands of its ADDs,
/// flattened, in order (`a + (b + 3)`: a, b, 3).
std::vector<UOpPtr> index_terms(const UOpPtr& x);

}  // namespace lathe
