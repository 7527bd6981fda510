// Splitting a CPU kernel across threads. The outermost output loop over n runs in `threads`
// chunks of ceil(n / threads): its index becomes core_id * chunk + i, with core_id the launch
// index SPECIAL("core_id") over [0, threads) and i a loop over this core's part of the chunk.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

/// How many threads a kernel over `ast` should use with `max_threads` cores: one unless its
/// counted work pays for waking the pool and its outermost output loop can be split.
int choose_threads(const UOpPtr& ast, int max_threads);

/// `ast` with its outermost output loop split across `threads` cores (unchanged for 1).
UOpPtr split_for_threads(const UOpPtr& ast, int threads);

}  // namespace lathe
