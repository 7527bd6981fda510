// Evaluates an expression of constants, variables and ALU ops: the reference semantics for the
// symbolic simplifier's tests and how symbolic launch sizes become numbers at dispatch.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

using VarValues = std::unordered_map<std::string, int64_t>;

/// The value of `root`. DEFINE_VARs take their value from `vars` by name (a BIND's bound value
/// when absent). Throws Error naming the node for an unknown leaf, a missing variable, or an
/// undefined operation such as division by zero.
ConstValue evaluate(const UOpPtr& root, const VarValues& vars = {});
int64_t evaluate_int(const UOpPtr& root, const VarValues& vars = {});

/// The variables `root` needs a value for: its DEFINE_VARs not under a BIND (a size no binding
/// gives, as one a host step decides), each once, in the order they are first reached.
std::vector<VarArg> free_variables(const UOpPtr& root);

}  // namespace lathe
