// Labels: names a front end gives graph nodes (an ONNX node's name, a layer's) so a kernel can say
// what it computes. A side table, as tinygrad's metadata is: nodes stay immutable and hash-consed,
// and a label lives as long as its node (entries of freed nodes are dropped as the table grows).
#pragma once

#include <string>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// Adds `label` to `node`'s labels (once; a node two front-end operations produced has both).
void add_label(const UOpPtr& node, const std::string& label);
/// `node`, given `labels` where it has none yet: a node a pass makes is labelled as the one it
/// stands for, and a node another made first (hash-consed to the same) keeps its own.
UOpPtr labelled_as(UOpPtr node, const std::vector<std::string>& labels);
/// The node's labels, in the order they were added; empty for a node without any.
std::vector<std::string> labels_of(const UOp& node);
/// Whether any node was ever labelled (lets the scheduler skip the lookups).
bool any_labels();

}  // namespace lathe
