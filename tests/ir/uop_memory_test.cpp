// The intern table must not keep a long-running process's graphs alive.
#include <gtest/gtest.h>
#include <malloc.h>

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
  for (int i = 0; i < n; ++i) acc = acc + UOp::index_const(i);  // 2 nodes per step
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

}  // namespace
}  // namespace lathe
