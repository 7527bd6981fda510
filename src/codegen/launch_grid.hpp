// Output loops as a GPU's grid and blocks. On a Target with groups of threads (has_local), up to
// three output loops (ones every store depends on) leave the kernel's loop nest and become launch
// indices: the innermost output loop is dimension x, the next two y and z. A loop over n on
// dimension d runs on G blocks of L threads, thread t = gidx_d * L + lidx_d standing for position
// t; where the threads outnumber the positions, every access of a buffer is gated on t < n, so
// the threads past the end read and write nothing. Where a grid capped by the Target's limits
// (65535 blocks on y and z) has fewer threads than positions, thread t takes the chunk of
// ceil(n / (G * L)) that starts at t * chunk, in a loop of its own over min(chunk, n - start)
// positions. Blocks take up to kThreadsPerBlock threads, x first: x's block is the smallest power
// of two covering the loop, up to all of them. A Local loop (the optimizer's LOCAL(axis, n)) is
// launched before the others and takes a block of its n threads where the Target's blocks hold
// them along the dimension its axis gives it (on NVIDIA GPUs z holds 64 at most; else the default
// block); the other launched loops share what is left. A Local loop the grid does not launch (a
// fourth, one some store does not depend on) stays an ordinary loop. A warp's lanes (a Warp loop,
// opt/tensor_core) are always x, in blocks of exactly 32.
//
// A kernel with a GROUP loop (a reduction the heuristic shares among a block's threads) launches
// its output loops as blocks alone, one position a block, and its group as the block's x threads
// (split_group_in_block: partials in shared memory, a barrier, one thread combining). Output
// loops that stay loops (beyond the three launched) take a row of partials each. Where the group
// cannot be placed (more threads than a block, partials beyond the Target's shared memory, a loop
// left in the threads of a size not known until run time) the GROUP loop is an ordinary loop again.
//
// Loops whose size depends on another loop stay loops in each thread; a size that depends on
// variables is launched for its largest value (the threads past the actual end do nothing).
#pragma once

#include "lathe/program.hpp"
#include "lathe/target.hpp"
#include "lathe/uop.hpp"

namespace lathe {

/// What launch_on_grid made: the kernel, and its grid (blocks per dimension) and block (threads
/// per dimension); on a Target without groups of threads, the kernel as it was.
struct GridLaunch {
  UOpPtr ast;
  LaunchSize global{1, 1, 1};
  LaunchSize local{1, 1, 1};
};

/// The most threads launch_on_grid puts in one block.
constexpr int64_t kThreadsPerBlock = 256;

/// `ast`'s output loops as launch indices on `target`'s grid (unchanged on a Target without groups of threads).
GridLaunch launch_on_grid(const UOpPtr& ast, const Target& target);

}  // namespace lathe
