// Evaluates an expression of constants, variables and ALU ops: the reference semantics for the
// symbolic simplifier's tests and how symbolic launch sizes become numbers at dispatch.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "lathe/uop.hpp"

namespace lathe {

using VarValues = std::unordered_map<std::string, int64_t>;

/// Gives values to leaves evaluate() does not know (RANGE, SPECIAL, ...); nullopt: unknown.
using LeafFn = std::function<std::optional<ConstValue>(const UOp&)>;

/// The value of `root`. DEFINE_VARs take their value from `vars` by name (a BIND's bound value
/// when absent). Throws Error naming the node for an unknown leaf, a missing variable, or an
/// undefined operation such as division by zero.
ConstValue evaluate(const UOpPtr& root, const VarValues& vars = {}, const LeafFn& leaf = {});
int64_t evaluate_int(const UOpPtr& root, const VarValues& vars = {}, const LeafFn& leaf = {});

}  // namespace lathe
