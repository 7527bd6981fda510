// Value bounds of integer-valued nodes, computed once when a node is made (from its sources'
// bounds, so in constant time). The symbolic simplifier decides comparisons and folds `/` and
// `%` with them.
#pragma once

#include <vector>

#include "lathe/uop.hpp"

namespace lathe::detail {

/// The range of `dtype`'s values as int64 (unsigned 64-bit clamps at INT64_MAX; non-integer
/// types give the whole int64 range, meaning unknown).
Bounds dtype_bounds(DType dtype);

/// Bounds of the node {op, dtype, src, arg}, given its sources' bounds.
Bounds compute_bounds(Ops op, DType dtype, const std::vector<UOpPtr>& src, const Arg& arg);

}  // namespace lathe::detail
