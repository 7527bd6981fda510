// Replacing nodes in a graph: every occurrence of a key of `map` under `root` becomes its value.
#pragma once

#include <unordered_map>

#include "lathe/uop.hpp"

namespace lathe {

using Substitution = std::unordered_map<const UOp*, UOpPtr>;

UOpPtr substitute(const UOpPtr& root, const Substitution& map);

}  // namespace lathe
