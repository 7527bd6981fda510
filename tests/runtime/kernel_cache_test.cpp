#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "lathe/lathe.hpp"

namespace lathe {
namespace {

KernelKey unique_key(const char* tag) {
  static std::atomic<uint64_t> n{0};
  return KernelKey{0xabc000 + n.fetch_add(1), "CPU", std::string("test ") + tag};
}

TEST(KernelCache, ConcurrentRequestsForOneKeyCompileOnce) {
  KernelKey key = unique_key("concurrent");
  std::atomic<int> compiles{0};
  auto compile = [&] {
    ++compiles;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // keep the others waiting
    auto k = std::make_shared<CachedKernel>();
    k->entry_point = "shared";
    return k;
  };
  std::vector<std::shared_ptr<CachedKernel>> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] { got[i] = get_or_compile_kernel(key, "CPU", compile); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(compiles.load(), 1);
  for (auto& k : got) EXPECT_EQ(k, got[0]);
}

TEST(KernelCache, StatsCountCompilesAndHits) {
  KernelKey key = unique_key("stats");
  KernelCacheStats before = kernel_cache_stats();
  auto make = [] { return std::make_shared<CachedKernel>(); };
  get_or_compile_kernel(key, "CPU", make);
  get_or_compile_kernel(key, "CPU", make);
  get_or_compile_kernel(key, "CPU", make);
  KernelCacheStats after = kernel_cache_stats();
  EXPECT_EQ(after.compiles, before.compiles + 1);
  EXPECT_EQ(after.hits, before.hits + 2);
  EXPECT_EQ(after.entries, before.entries + 1);
}

TEST(KernelCache, FailedCompileIsNotCachedAndReachesTheCaller) {
  KernelKey key = unique_key("failing");
  EXPECT_THROW(get_or_compile_kernel(key, "CPU", []() -> std::shared_ptr<CachedKernel> { throw CompileError("boom"); }),
               CompileError);
  auto k = get_or_compile_kernel(key, "CPU", [] { return std::make_shared<CachedKernel>(); });
  EXPECT_NE(k, nullptr);
}

TEST(KernelCache, SameComputationOnOtherDataReusesTheKernel) {
  Tensor a = Tensor::rand({33, 7}, 1), b = Tensor::rand({33, 7}, 2);
  (a * 3.0f + 0.25f).realize();
  KernelCacheStats mid = kernel_cache_stats();
  (b * 3.0f + 0.25f).realize();
  EXPECT_EQ(kernel_cache_stats().compiles, mid.compiles);
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

TEST(KernelCache, ClearingDropsEntriesButPlansKeepTheirKernels) {
  Tensor x = Tensor::rand({9, 5}, 4);
  ExecutionPlan plan = (x * 7.0f - 1.0f).prepare();
  clear_kernel_cache();
  EXPECT_EQ(kernel_cache_stats().entries, 0u);
  plan.execute();  // the plan holds its kernel
  std::vector<float> xs = x.to_vector<float>(), got = plan.output_buffer()->to_vector<float>();
  ASSERT_EQ(got.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], xs[i] * 7.0f - 1.0f, 1e-5);
  size_t compiles = kernel_cache_stats().compiles;
  (x * 7.0f - 1.0f).prepare();
  EXPECT_EQ(kernel_cache_stats().compiles, compiles + 1);  // compiled (or loaded from disk) again
}

}  // namespace
}  // namespace lathe
