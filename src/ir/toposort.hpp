// Orders a graph so every node comes after its sources. Iterative: graphs of any depth.
#pragma once

#include <functional>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// Nodes reachable from `root`, sources before users, `root` last. When `enter` is given, the
/// sources of a node for which it returns false are not visited (the node itself is listed).
std::vector<UOpPtr> toposort(const UOpPtr& root, const std::function<bool(const UOp&)>& enter = {});

}  // namespace lathe
