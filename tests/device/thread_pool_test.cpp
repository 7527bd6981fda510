// The kernel thread pool: every index runs exactly once, for jobs launched back to back (workers
// that are still spinning from the last job join the next one), nested calls and two callers at
// once (one of them runs inline).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "device/thread_pool.hpp"

namespace lathe::detail {
namespace {

// Runs parallel_for(n) and checks every index ran exactly once.
void expect_each_index_once(size_t n) {
  std::vector<std::atomic<int>> hits(n);
  parallel_for(n, [&](size_t i) { hits[i].fetch_add(1, std::memory_order_relaxed); });
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
}

TEST(ThreadPool, EveryIndexRunsOnce) {
  for (size_t n : {0, 1, 2, 3, 7, 64, 1001}) expect_each_index_once(n);
}

TEST(ThreadPool, JobsBackToBack) {
  // Small jobs one after another: a worker spinning after one job joins the next or finds it gone.
  std::atomic<size_t> total{0};
  for (int round = 0; round < 20000; ++round)
    parallel_for(static_cast<size_t>(2 + round % 5), [&](size_t i) { total.fetch_add(i + 1, std::memory_order_relaxed); });
  size_t want = 0;
  for (int round = 0; round < 20000; ++round) {
    size_t n = static_cast<size_t>(2 + round % 5);
    want += n * (n + 1) / 2;
  }
  EXPECT_EQ(total.load(), want);
}

TEST(ThreadPool, NestedCallRunsInline) {
  std::atomic<size_t> inner{0}, elsewhere{0};
  parallel_for(4, [&](size_t) {
    std::thread::id outer = std::this_thread::get_id();
    parallel_for(8, [&](size_t) {
      inner.fetch_add(1);
      elsewhere.fetch_add(std::this_thread::get_id() != outer);
    });
  });
  EXPECT_EQ(inner.load(), 32u);
  EXPECT_EQ(elsewhere.load(), 0u) << "a nested call runs on the thread that made it";
}

TEST(ThreadPool, TwoCallersAtOnce) {
  std::atomic<size_t> a{0}, b{0};
  std::thread other([&] {
    for (int r = 0; r < 2000; ++r) parallel_for(16, [&](size_t) { a.fetch_add(1, std::memory_order_relaxed); });
  });
  for (int r = 0; r < 2000; ++r) parallel_for(16, [&](size_t) { b.fetch_add(1, std::memory_order_relaxed); });
  other.join();
  EXPECT_EQ(a.load(), 2000u * 16);
  EXPECT_EQ(b.load(), 2000u * 16);
}

}  // namespace
}  // namespace lathe::detail
