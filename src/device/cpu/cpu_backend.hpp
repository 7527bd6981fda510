// The CPU's backends: "clang", C source compiled by a C compiler subprocess (CCompiler) into a
// shared object loaded with dlopen.
#pragma once

#include <vector>

#include "device/backend.hpp"

namespace lathe {

/// The CPU backends, for the registry to add before its first lookup.
std::vector<Backend> cpu_backends();

}  // namespace lathe
