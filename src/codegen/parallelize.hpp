// Splitting a CPU kernel across threads. The optimizer's THREAD action marks the outermost output
// loop (AxisKind::Thread, with a thread count); here that loop over n runs in `threads` chunks of
// ceil(n / threads): its index becomes core_id * chunk + i, with core_id the launch index
// SPECIAL("core_id") over [0, threads) and i a loop over this core's part of the chunk.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

/// The thread count of `ast`'s Thread loop; 1 without one.
int threads_of(const UOpPtr& ast);

/// `ast` with its Thread loop split across its cores (unchanged without one).
UOpPtr split_for_threads(const UOpPtr& ast);

}  // namespace lathe
