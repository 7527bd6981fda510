// A GPU block's threads as the emulator runs them where they meet (device/cuda/block_threads):
// a barrier holds every thread until all are there, and without it the first thread reads what the
// others have not written yet; a warp's multiply-add gives each lane its part of A B + C in the
// m16n8k16 fragment layout; blocks that cannot meet are refused with an Error.
#include "device/cuda/block_threads.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "lathe/error.hpp"

namespace lathe {
namespace {

// Each thread writes its partial, waits at the barrier where `wait` says so, then the block's
// first thread (the barrier's value is the thread's index) adds all of them.
float block_sum(int64_t threads, bool wait) {
  std::vector<float> partial(static_cast<size_t>(threads), 0.0f);
  float total = -1;
  SyncHook sync = block_sync_hook();
  run_block_threads(threads, [&](int64_t t) {
    partial[t] = static_cast<float>(t + 1);
    bool first = (wait ? sync(kBlockBarrier, nullptr, nullptr, nullptr) : t) == 0;
    if (!first) return;
    total = 0;
    for (float p : partial) total += p;
  });
  return total;
}

TEST(BlockThreads, ABarrierHoldsEveryThreadUntilAllAreThere) {
  for (int64_t n : {1, 2, 31, 256}) EXPECT_EQ(block_sum(n, true), static_cast<float>(n * (n + 1) / 2)) << n;
}

TEST(BlockThreads, WithoutTheBarrierTheFirstThreadReadsBeforeTheOthersWrite) {
  EXPECT_EQ(block_sum(64, false), 1.0f) << "thread 0 runs first: only its own partial is there";
}

TEST(BlockThreads, EachThreadKeepsItsValuesAcrossMeetings) {
  std::vector<int64_t> seen(96, -1);
  SyncHook sync = block_sync_hook();
  run_block_threads(96, [&](int64_t t) {
    int64_t mine = t * 7;  // on the thread's own stack, across three barriers
    for (int i = 0; i < 3; ++i) EXPECT_EQ(sync(kBlockBarrier, nullptr, nullptr, nullptr), t) << "a barrier's value is the thread's index";
    seen[t] = mine;
  });
  for (int64_t t = 0; t < 96; ++t) EXPECT_EQ(seen[t], t * 7);
}

// The m16n8k16 layout: lane (g = lane / 4, q = lane % 4) holds A's rows g and g + 8 at columns
// 2q, 2q + 1 and those + 8; B's column g at rows 2q, 2q + 1 and those + 8; C's rows g and g + 8
// at columns 2q, 2q + 1.
TEST(BlockThreads, AWarpsMultiplyAddGivesEachLaneItsPartOfTheProduct) {
  float A[16][16], B[16][8], C[16][8];
  for (int m = 0; m < 16; ++m)
    for (int k = 0; k < 16; ++k) A[m][k] = static_cast<float>((m * 3 + k * 5) % 7) - 3;
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) B[k][n] = static_cast<float>((k * 2 + n * 3) % 5) * 0.5f;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) C[m][n] = static_cast<float>(m - n);
  for (int64_t warps : {1, 3}) {
    std::vector<float> got(static_cast<size_t>(warps) * 32 * 4);
    SyncHook sync = block_sync_hook();
    run_block_threads(warps * 32, [&](int64_t t) {
      int lane = static_cast<int>(t % 32), g = lane / 4, q = lane % 4;
      float a[8], b[4], cd[4];
      for (int i = 0; i < 8; ++i) a[i] = A[g + 8 * ((i >> 1) & 1)][2 * q + (i & 1) + 8 * (i >> 2)] * static_cast<float>(t / 32 + 1);
      for (int i = 0; i < 4; ++i) b[i] = B[2 * q + (i & 1) + 8 * (i >> 1)][g];
      for (int i = 0; i < 4; ++i) cd[i] = C[g + 8 * (i >> 1)][2 * q + (i & 1)];
      sync(kMmaFloat16, a, b, cd);
      for (int i = 0; i < 4; ++i) got[t * 4 + i] = cd[i];
    });
    for (int64_t t = 0; t < warps * 32; ++t) {
      int lane = static_cast<int>(t % 32), g = lane / 4, q = lane % 4;
      for (int i = 0; i < 4; ++i) {
        int m = g + 8 * (i >> 1), n = 2 * q + (i & 1);
        float want = C[m][n];
        for (int k = 0; k < 16; ++k) want += A[m][k] * static_cast<float>(t / 32 + 1) * B[k][n];
        EXPECT_EQ(got[t * 4 + i], want) << "thread " << t << " element " << i;
      }
    }
  }
}

TEST(BlockThreads, BlocksThatCannotMeetAreRefused) {
  SyncHook sync = block_sync_hook();
  float a[8] = {}, b[4] = {}, cd[4] = {};
  // a multiply-add in a block that is not whole warps
  EXPECT_THROW(run_block_threads(48, [&](int64_t) { sync(kMmaFloat16, a, b, cd); }), Error);
  // threads that leave while others wait at the barrier
  EXPECT_THROW(run_block_threads(8, [&](int64_t t) {
                 if (t % 2) sync(kBlockBarrier, nullptr, nullptr, nullptr);
               }),
               Error);
  // lanes of one warp at a multiply-add, the others at a barrier
  EXPECT_THROW(run_block_threads(32, [&](int64_t t) { sync(t < 16 ? kMmaFloat16 : kBlockBarrier, a, b, cd); }), Error);
  // what a thread throws reaches the caller
  EXPECT_THROW(run_block_threads(4, [](int64_t t) {
                 if (t == 2) throw Error("thread 2 failed");
               }),
               Error);
  EXPECT_EQ(block_sum(5, true), 15.0f) << "and the next block runs";
}

}  // namespace
}  // namespace lathe
