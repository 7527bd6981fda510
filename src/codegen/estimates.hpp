// A kernel's work, counted from its linearized instructions: every operation times the trip
// counts of the loops around it (symbolic when a loop's size is). ALU operations that compute a
// load's or store's address or gate are index operations; the rest are the kernel's `ops`.
// Loads and stores count their bytes at every execution (`lds`); `mem` counts each buffer's
// bytes at most once.
#pragma once

#include <vector>

#include "codegen/linearize.hpp"
#include "lathe/program.hpp"

namespace lathe {

Estimates count_work(const std::vector<Instr>& instrs);

}  // namespace lathe
