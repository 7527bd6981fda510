// The intern table must not keep a long-running process's graphs alive.
#include <gtest/gtest.h>
#include <malloc.h>

#include <vector>

#include "lathe/uop.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LATHE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LATHE_ASAN 1
#endif
#ifdef LATHE_ASAN
#include <sanitizer/allocator_interface.h>
#endif

namespace lathe {
namespace {

size_t heap_in_use() {
#ifdef LATHE_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

UOpPtr chain(int n) {
  UOpPtr acc = UOp::variable("mem", 0, 10);
  // 2 nodes per step; constants no other test makes, so none is an interned node that an earlier
  // test in the same process left alive (the counts below would be short by it).
  for (int i = 0; i < n; ++i) acc = acc + UOp::index_const(int64_t{1} << 40 | i);
  return acc;
}

TEST(UOpMemory, MillionNodeGraphIsFreedWhenDropped) {
  size_t nodes_before = live_uop_count();
  size_t heap_before = heap_in_use();
  {
    UOpPtr root = chain(500000);
    EXPECT_GE(live_uop_count(), nodes_before + 1000000);
    EXPECT_GT(heap_in_use(), heap_before + 100u * 1000000u);  // the graph really lived on the heap
  }
  EXPECT_EQ(live_uop_count(), nodes_before);
  // Allow for allocator bookkeeping, not for the graph (which took well over 100 MB).
  EXPECT_LT(heap_in_use(), heap_before + 8u * 1024 * 1024);
}

TEST(UOpMemory, DroppingADeepChainDoesNotOverflowTheStack) {
  size_t before = live_uop_count();
  { UOpPtr root = chain(300000); }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOpMemory, SharedSubgraphSurvivesWhileReferenced) {
  UOpPtr keep = UOp::variable("kept", 0, 10) + 1;
  size_t before = live_uop_count();
  { UOpPtr user = keep * 7; }
  EXPECT_EQ(live_uop_count(), before);
  EXPECT_EQ(keep->src(0)->arg_as<VarArg>().name, "kept");
  EXPECT_EQ(UOp::variable("kept", 0, 10) + 1, keep);
}

// Nodes come and go by the hundred thousand while others stay: every node made again while an
// equal one lives is that node, a released one is made fresh, and the table gives its room back.
TEST(UOpMemory, InterningSurvivesChurn) {
  size_t before = live_uop_count();
  std::vector<UOpPtr> kept;
  for (int i = 0; i < 20000; ++i) kept.push_back(UOp::variable("kept", 0, 1 << 20) * (i + 1));
  for (int round = 0; round < 5; ++round) {
    std::vector<UOpPtr> passing;
    for (int i = 0; i < 100000; ++i) passing.push_back(UOp::variable("passing", 0, 1 << 20) + (round * 100000 + i));
    for (int i = 0; i < 20000; i += 97) EXPECT_EQ(UOp::variable("kept", 0, 1 << 20) * (i + 1), kept[i]);
    for (int i = 0; i < 100000; i += 101) EXPECT_EQ(UOp::variable("passing", 0, 1 << 20) + (round * 100000 + i), passing[i]);
    size_t id = passing[5]->id();
    passing.clear();  // every passing node released
    EXPECT_NE((UOp::variable("passing", 0, 1 << 20) + (round * 100000 + 5))->id(), id) << "a released node is not revived";
  }
  for (int i = 0; i < 20000; i += 89) EXPECT_EQ(UOp::variable("kept", 0, 1 << 20) * (i + 1), kept[i]);
  kept.clear();
  EXPECT_EQ(live_uop_count(), before);
}

}  // namespace
}  // namespace lathe
