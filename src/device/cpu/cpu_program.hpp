// A CPU kernel as an executable Program: a function `void name(void** bufs, const long long* vals)`
// however it was made (a shared object loaded with dlopen, code from the LLVM JIT), run on the
// calling thread or split across the thread pool by core id.
#pragma once

#include <functional>
#include <memory>

#include "lathe/program.hpp"

namespace lathe {

using CpuKernelFn = void (*)(void**, const long long*);

/// The Program that calls `fn`; `release` frees what holds its code when the Program dies.
/// `num_vals` is the number of values the kernel takes; when `threaded`, the last of them is the
/// core id and a launch runs global[0] cores on the thread pool. `one_launch_at_a_time` serialises
/// launches (a kernel whose scratch memory is shared by its cores).
std::unique_ptr<Program> make_cpu_program(CpuKernelFn fn, std::function<void()> release, size_t num_vals, bool threaded,
                                          bool one_launch_at_a_time);

}  // namespace lathe
