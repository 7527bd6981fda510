// Which values are the same on every run of a plan: those made of constants alone (literals and
// the buffers the device marks constant, a model's weights). A copy of one in another layout is
// made once, at prepare, so it pays where a copy made each run would not. And which values depend
// on a variable (a symbolic size or a value bound at run time): their sizes may change per run.
#pragma once

#include <functional>
#include <unordered_map>

#include "lathe/uop.hpp"

namespace lathe {

/// Whether a BUFFER node's buffer holds a constant (the device's registry knows; the schedule
/// is told).
using IsConstantBuffer = std::function<bool(const UOp& buffer)>;

/// Whether `u` is made of constants alone: literals and buffers `constant` accepts, through any
/// op but a variable. `memo` keeps the answers for the nodes walked, for the next question.
bool made_of_constants(const UOpPtr& u, const IsConstantBuffer& constant, std::unordered_map<const UOp*, bool>& memo);

/// Whether a variable (DEFINE_VAR or BIND) is under `u`; `memo` as for made_of_constants.
bool has_variables(const UOpPtr& u, std::unordered_map<const UOp*, bool>& memo);

}  // namespace lathe
