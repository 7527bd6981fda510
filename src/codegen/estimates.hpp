// A kernel's work, counted from its linearized program: every operation times the trip counts of
// the loops around it (symbolic when a loop's size is). ALU operations that compute an address or
// a gate are index operations; the rest are the kernel's `ops`. Loads and stores of buffers count
// their bytes at every execution (`lds`); `mem` counts each buffer's bytes at most once. Registers
// (accumulators) are not memory.
#pragma once

#include <vector>

#include "lathe/program.hpp"

namespace lathe {

Estimates count_work(const std::vector<UOpPtr>& program);

}  // namespace lathe
