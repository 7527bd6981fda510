// Replacing nodes in a graph: every occurrence of a key of `map` under `root` becomes its value.
#pragma once

#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

using Substitution = std::unordered_map<const UOp*, UOpPtr>;

UOpPtr substitute(const UOpPtr& root, const Substitution& map);

/// Each reduction's loop list with every loop that is a key of `with` replaced, in its place, by
/// the loops of its value (none: the loop leaves the list). Only the lists change: where the loop
/// is read as an index, substitute() replaces it.
using LoopLists = std::unordered_map<const UOp*, std::vector<UOpPtr>>;
UOpPtr relist_reductions(const UOpPtr& root, const LoopLists& with);

}  // namespace lathe
