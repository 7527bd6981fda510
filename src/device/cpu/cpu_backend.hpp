// The CPU's backends: "llvm", LLVM IR compiled in process by LLVM's JIT (LlvmCompiler; only in a
// build with LLVM, where it is the default), and "clang", C source compiled by a C compiler
// subprocess (CCompiler) into a shared object loaded with dlopen.
#pragma once

#include <vector>

#include "device/backend.hpp"

namespace lathe {

/// The CPU backends, the default first, for the registry to add before its first lookup.
std::vector<Backend> cpu_backends();

}  // namespace lathe
