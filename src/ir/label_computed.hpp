// Labelling what a front-end operation computed: the nodes between its inputs and its result.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// Labels `root` and every node under it computed from `inputs` (a node with a source among them,
/// or among the nodes so labelled) with each of `labels`, going neither below `inputs` nor into a
/// node already labelled. Constant expressions (a broadcast zero, a shape's symbolic sizes) are
/// shared by every graph that makes the same one: they stay unlabelled, so no kernel names an
/// operation it does not compute.
void label_computed(const UOpPtr& root, const std::unordered_set<const UOp*>& inputs, const std::vector<std::string>& labels);

}  // namespace lathe
