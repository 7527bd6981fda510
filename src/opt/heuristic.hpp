// The default optimizer: actions (action.hpp) picked from a kernel's shape, deterministically.
//
//   1. the vector axis: the loop along which the accesses in the hot loop are contiguous (an
//      output loop, else a reduction's), split by the most lanes of the target's vector width
//      that divide it (UPCAST on an output loop, UNROLL on a reduction's);
//   2. a register tile for a contraction (a reduction whose body reads an operand along the
//      vector axis): a second vector (UPCAST by 2) and rows (UPCAST of the innermost other
//      output loop the vector operand does not depend on), as many as the registers hold, so
//      each load of the vector operand feeds rows x vectors multiply-adds; a reduction over the
//      vector axis keeps several partial sums instead (UNROLL);
//   3. on a CPU, a kernel without a reduction that reads at least what it stores reads in order:
//      the output loop along which its largest input steps a cache line or less and its store
//      4 KB or more goes innermost of its output loops (SWAP), where that makes few store streams;
//   4. threads: the outermost output loop that splits evenly (moved outermost by SWAP) is
//      split across the target's threads when the kernel's work pays for waking them.
//
// Everything it knows of the machine is the Target's (lathe/target.hpp): lanes, registers,
// caches, threads.
#pragma once

#include <cstdint>
#include <vector>

#include "lathe/target.hpp"
#include "opt/action.hpp"

namespace lathe {

/// Estimated operations from which a kernel is split across cores: below them, waking a second
/// core costs more than it saves.
constexpr int64_t kThreadedOps = int64_t{1} << 18;

/// The actions for `ast` on `target`, in the order they apply (each one fits).
std::vector<Opt> hand_coded_opts(const UOpPtr& ast, const Target& target);


}  // namespace lathe
