// Splitting a CPU kernel across threads. The optimizer's THREAD action marks the outermost output
// loop (AxisKind::Thread, with a thread count); here that loop over n runs in `threads` chunks of
// ceil(n / threads): its index becomes core_id * chunk + i, with core_id the launch index
// SPECIAL("core_id") over [0, threads) and i a loop over this core's part of the chunk.
//
// The GROUP action marks a reduction's loop (AxisKind::Group, with a thread count). Here each core
// reduces its chunk of that loop, for every output, into its row of a scratch array that lives
// with the kernel (DEFINE_LOCAL: a static array on the CPU), then counts itself in (BARRIER: an
// atomic count of arrivals, true for the last of a launch; a GPU block's BARRIER is where its
// threads meet, split_group_in_block). Only the last core combines the rows
// and stores the kernel's outputs: its loads of the scratch and its stores are gated on that
// arrival, so nothing waits and cores run in any order (or one after another). A launch uses
// the scratch alone: the backend runs launches of such a kernel one at a time.
#pragma once

#include "ir/axis.hpp"
#include "lathe/uop.hpp"

namespace lathe {

/// What thread `core` of `n` takes of a loop over [0, `end`): [start, start + mine), in chunks of
/// ceil(end / n) (the last threads may get less, or nothing). CPU cores and a GPU's threads alike.
struct Chunk {
  UOpPtr start, mine;
};
Chunk chunk_of(const UOpPtr& end, const UOpPtr& core, int64_t n);

/// The thread count of `ast`'s Thread or Group loop, else of the core id it reads; 1 without either.
int threads_of(const UOpPtr& ast);

/// A loop over [0, n) split across `threads` cores: `loop` (on `axis`) runs over this core's
/// chunk, `position` is the index in [0, n) it stands for.
struct CoreShare {
  UOpPtr position, loop;
};
CoreShare share_of_core(const UOpPtr& n, int64_t threads, int64_t axis);

/// `ast` with its Thread loop split across its cores (unchanged without one).
UOpPtr split_for_threads(const UOpPtr& ast);

/// `ast` with its Group loop's reduction split across its cores (unchanged without one).
UOpPtr split_group(const UOpPtr& ast);

/// `ast` with its Group loop's reduction split across the threads of a GPU block (unchanged
/// without one): thread `lane` (a launch index over the group's thread count) reduces every n-th
/// position from its own, so neighbouring threads read neighbouring elements; its partials go to
/// the block's shared memory (DEFINE_LOCAL). They are combined in two rounds, each after a
/// barrier (a BARRIER on block_sync(), ir/axis.hpp, whose value is the thread's index in the
/// block; on a GPU, __syncthreads()): the first L threads (L the smallest power of two with
/// L * L >= n) each gather every L-th row into their own, then the block's first thread combines
/// those L rows and stores the outputs.
UOpPtr split_group_in_block(const UOpPtr& ast, const UOpPtr& lane);

/// The kernel's first loop of `kind` (a Thread or Group loop), or null.
UOpPtr loop_of_kind(const UOpPtr& ast, AxisKind kind);

/// Whether a kernel keeps state between the cores of a launch (a grouped reduction's scratch).
bool has_shared_scratch(const UOpPtr& ast);

}  // namespace lathe
