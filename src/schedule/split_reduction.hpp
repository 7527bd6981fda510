// A large reduction into few outputs, in two kernels.
//
// A reduction of many elements into few outputs cannot be split across threads by its output
// loop. It is computed in two kernels instead: partial results over P slices of the reduced
// elements (threaded over P, P the largest divisor of the reduced count in 16..1024), then the
// reduction of the partials. Without such a divisor it stays one kernel.
#pragma once

#include <optional>
#include <unordered_map>
#include <utility>

#include "lathe/uop.hpp"
#include "schedule/shape.hpp"

namespace lathe {

/// Whether `u` is a reduction of at least 65 536 elements into at most 32 outputs, all sizes known.
bool wants_split(const UOpPtr& u, const std::unordered_map<const UOp*, Shape>& shapes,
                 const std::unordered_map<const UOp*, SymDims>& sym_shapes);

/// Reduction `u` (shape S) as reshape(reduce_P(partials)), where partials reduces the input, its
/// reduced axes moved last and folded to (P, R/P), over the R/P part: {partials, replacement},
/// each new node's shape added to `shapes`; nothing when the reduced size has no such divisor.
std::optional<std::pair<UOpPtr, UOpPtr>> split_reduction(const UOpPtr& u, std::unordered_map<const UOp*, Shape>& shapes);

}  // namespace lathe
