// A GPU block's threads, run on one CPU thread as the emulator's kernels need them where threads
// meet. Each thread of the block is a fiber (a stack of its own) that runs until it finishes or
// calls the block's sync hook: at the block's barrier (kind 0) it waits until every thread of the
// block that has not finished is there; at a warp's matrix multiply-add (kinds 1 and 2) it waits
// until the 32 threads of its warp (threads 32w .. 32w + 31 in the block's linear order, x
// fastest) are there, then each gets its part of the product. Threads run in order, thread 0
// first, each to the next point where threads meet: a kernel that reads what another thread
// writes without a barrier between them reads it before it is written (thread 0 combining the
// block's partials without waiting reads none of them), so a missing barrier fails its test.
//
// The matrix multiply-add is the m16n8k16 one of NVIDIA's tensor cores (PTX `mma.sync`, row-major
// A, column-major B), D = A B + C over a 16x16 A, a 16x8 B and a 16x8 C, each lane holding its
// fragment elements (codegen/tensor_cores has the layout): `a` 8 values, `b` 4, `cd` 4 (C in, D
// out), all floats (the 16-bit inputs converted exactly); kind 1 is float16 inputs, kind 2
// bfloat16. The products are exact in float and summed in float, in k order.
#pragma once

#include <cstdint>
#include <functional>

namespace lathe {

/// The hook a kernel calls through its "sync" value: returns, for the barrier, the thread's index
/// in the block (x fastest, as CUDA numbers them); 0 after a matrix multiply-add.
using SyncHook = long long (*)(long long kind, const float* a, const float* b, float* cd);

/// The kinds of meeting a SyncHook is called for.
enum SyncKind : long long { kBlockBarrier = 0, kMmaFloat16 = 1, kMmaBfloat16 = 2 };

/// The hook run_block_threads's threads call.
SyncHook block_sync_hook();

/// Runs `threads` threads of one block, thread t calling `body(t)` on a fiber of its own, meeting
/// where they call block_sync_hook(). Throws Error (after the block's threads are abandoned) when
/// they cannot all meet: a barrier some threads of the block left the kernel without reaching, a
/// warp whose threads wait at different points, or a block whose thread count is not a whole
/// number of warps at a warp's multiply-add. Each thread has a 256 KB stack (a fault past it);
/// a thread may not start another block (InternalError).
void run_block_threads(int64_t threads, const std::function<void(int64_t)>& body);

}  // namespace lathe
