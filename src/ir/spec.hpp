// The spec checker: validates a graph's well-formedness (arity, dtypes that agree, sources and
// arguments of the right kinds) and reports the offending node.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

/// Throws SpecError naming the first malformed node under `root` (sources are checked before
/// their users) and what is wrong with it, followed by the graph up to that node.
void verify(const UOpPtr& root);

/// What is wrong with one node, or empty when it is well-formed.
std::string check_node(const UOp& u);

}  // namespace lathe
